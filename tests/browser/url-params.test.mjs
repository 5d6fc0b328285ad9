// www/url-params.js driven by generated query strings (a seeded generator, no browser): nothing
// throws, every result has the documented shape, and a configuration list without separators in
// its names round-trips. TALLMC_FUZZ_CASES sets the count (default 5 000; `make fuzz`: 10⁶).
import test from 'node:test';
import assert from 'node:assert/strict';
import {
  parseCompareConfig, compareConfigText, parseCompareList, parseRef,
  urlSettings, urlFeatures, urlIntercept, urlStandardize, ksdEnabled,
} from '../../www/url-params.js';

const SEED = 0x7a11c0de;
const CASES = Number(process.env.TALLMC_FUZZ_CASES ?? 5000);

/** xorshift32 stream of case i (deterministic). */
function rng(seed, i) {
  let s = (seed ^ Math.imul(i + 1, 0x9e3779b9)) >>> 0 || 1;
  const next = () => {
    s ^= s << 13; s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5; s >>>= 0;
    return s / 2 ** 32;
  };
  const below = (n) => Math.floor(next() * n);
  const pick = (a) => a[below(a.length)];
  return { next, below, pick };
}

const ATOMS = ['nuts', 'hmc-ecs', 'm', '200', 'G', '10', ';', ':', ',', '=', '&', '?', '#', '%', '%3B',
  '%ZZ', '+', ' ', 'set.', 'set.step_size', 'compare', 'ref', 'features', 'intercept', 'standardize',
  'ksd', '0', '1', 'true', 'false', '-1', '1e3', 'NaN', '__proto__', 'constructor', 'é', '😀', '\u0000',
  'x'.repeat(300)];
const KEYS = ['compare', 'ref', 'features', 'intercept', 'standardize', 'ksd', 'set.step_size',
  'set.L', 'set.', 'model', 'sampler', ''];

function text(r, n) {
  let s = '';
  for (let k = r.below(n); k > 0; k--) s += r.pick(ATOMS);
  return s;
}

function query(r) {
  if (r.below(4) === 0) return text(r, 20);
  const parts = [];
  for (let k = r.below(6); k > 0; k--) {
    const key = r.below(5) === 0 ? text(r, 3) : r.pick(KEYS);
    parts.push(`${key}=${text(r, 8)}`);
  }
  return parts.join('&');
}

function checkConfig(c) {
  assert.equal(typeof c.sampler, 'string');
  assert.equal(c.sampler, c.sampler.trim());
  for (const [k, v] of Object.entries(c.settings)) {
    assert.equal(k, k.trim());
    assert.equal(typeof v, 'string');
    assert.equal(v, v.trim());
  }
}

test(`url parameters: ${CASES} generated query strings`, () => {
  const started = Date.now();
  let slowest = 0;
  for (let i = 0; i < CASES; i++) {
    const r = rng(SEED, i);
    const q = query(r);
    const t = Date.now();
    try {
      const params = new URLSearchParams(q);
      const configs = parseCompareList(params.get('compare'));
      configs.forEach(checkConfig);
      const ref = parseRef(params.get('ref'), configs.length);
      assert.ok(Number.isInteger(ref) && ref >= -1 && ref < configs.length);
      for (const [k, v] of urlSettings(params)) {
        assert.equal(typeof k, 'string');
        assert.equal(typeof v, 'string');
      }
      const f = urlFeatures(params);
      assert.ok(f === undefined || (Array.isArray(f) && f.every((x) => x.length > 0 && !x.includes(','))));
      for (const b of [urlIntercept(params), urlStandardize(params)]) assert.ok(b === null || typeof b === 'boolean');
      assert.equal(typeof ksdEnabled(params), 'boolean');
      // Round trip: names and values free of the separators come back unchanged.
      const clean = (s) => s.replace(/[;:,=\s]/g, '').replace(/^(__proto__)$/, 'p');
      const made = [];
      for (let k = 1 + r.below(3); k > 0; k--) {
        const settings = {};
        for (let j = r.below(3); j > 0; j--) {
          const key = clean(text(r, 2)) || 'k';
          const v = clean(text(r, 2)) || 'v';
          if (key !== '__proto__') settings[key] = v;
        }
        made.push({ sampler: clean(text(r, 2)) || 'nuts', settings });
      }
      const back = parseCompareList(made.map(compareConfigText).join(';'));
      assert.deepEqual(back, made);
      assert.deepEqual(parseCompareConfig(compareConfigText(made[0])), made[0]);
    } catch (e) {
      e.message = `case ${i} (seed ${SEED}, query ${JSON.stringify(q.slice(0, 300))}): ${e.message}`;
      throw e;
    }
    slowest = Math.max(slowest, Date.now() - t);
    assert.ok(slowest < 5000, `case ${i} took ${slowest} ms`);
  }
  console.log(`fuzz url-params: seed ${SEED}, ${CASES} cases, 0 failures, ${((Date.now() - started) / 1000).toFixed(1)} s (slowest case ${slowest} ms)`);
});
