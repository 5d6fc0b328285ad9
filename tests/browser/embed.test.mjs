// <tallmc-sampler>: two elements on one page (a built-in data set and a same-origin CSV URL) run
// to completion independently, with no console errors and no request leaving the origin.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setup } from './helpers.mjs';

let env;
before(async () => { env = await setup(); });
after(async () => { await env?.close(); });

/** A small logistic-regression CSV (fixed pseudo-random stream; columns y,x1,x2). */
function logisticCsv(n) {
  let s = 12345;
  const u = () => { s = (1103515245 * s + 12345) % 2147483648; return (s + 0.5) / 2147483648; };
  const z = () => Math.sqrt(-2 * Math.log(u())) * Math.cos(2 * Math.PI * u());
  const rows = ['y,x1,x2'];
  for (let i = 0; i < n; i++) {
    const x1 = z();
    const x2 = z();
    const p = 1 / (1 + Math.exp(-(0.3 + 1.0 * x1 - 0.5 * x2)));
    rows.push(`${u() < p ? 1 : 0},${x1.toFixed(6)},${x2.toFixed(6)}`);
  }
  return `${rows.join('\n')}\n`;
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>two embeds</title>
<link rel="icon" href="data:,"><script type="module" src="/embed.js"></script></head><body>
<tallmc-sampler id="a" model="logistic" sampler="nuts" data="builtin:logistic" n="2000" d="3"
  chains="2" warmup="200" draws="300" seed="1"></tallmc-sampler>
<tallmc-sampler id="b" model="logistic" sampler="mh-minibatch" data="/__test__/small.csv"
  chains="1" warmup="200" draws="400" seed="7" step_size="0.05"></tallmc-sampler>
<tallmc-sampler id="c" model="logistic" sampler="rwmh" data="builtin:logistic" n="2000" d="3"
  chains="2" warmup="100" draws="1000000" seed="2"></tallmc-sampler>
</body></html>`;

test('two <tallmc-sampler> elements run to completion independently', async () => {
  const page = await env.browser.newPage();
  const origin = new URL(env.url).origin;
  const errors = [];
  const foreign = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith('data:') && !u.startsWith('blob:') && new URL(u).origin !== origin) foreign.push(u);
  });
  // The test page and its CSV are served on the same origin as www/ (not files in www/).
  await page.route(`${env.url}__test__/two.html`, (r) => r.fulfill({ contentType: 'text/html', body: PAGE }));
  await page.route(`${env.url}__test__/small.csv`, (r) => r.fulfill({ contentType: 'text/csv', body: logisticCsv(1500) }));
  await page.goto(`${env.url}__test__/two.html`);
  await page.waitForFunction(() => ['a', 'b', 'c'].every((id) => document.getElementById(id).dataset.state === 'idle'), null, { timeout: 30000 });
  // Start all three, then stop c (a practically endless run: 10⁶ draws, below the page's 2 GB
  // limit on a run's draws, which 10⁷ would exceed) while it samples: a and b, each with
  // its own workers, run to the end regardless.
  await page.click('#c >> [data-testid=embed-run]');
  await page.click('#a >> [data-testid=embed-run]');
  await page.click('#b >> [data-testid=embed-run]');
  await page.waitForFunction(() => document.getElementById('c').result === null
    && /sampling/.test(document.getElementById('c').shadowRoot.querySelector('[data-testid=embed-status]').textContent), null, { timeout: 60000, polling: 100 });
  await page.click('#c >> [data-testid=embed-run]'); // now labelled Stop
  await page.waitForFunction(() => document.getElementById('c').dataset.state === 'stopped', null, { timeout: 30000 });
  await page.waitForFunction(() => ['a', 'b'].every((id) => ['done', 'error', 'stopped'].includes(document.getElementById(id).dataset.state)),
    null, { timeout: 120000, polling: 200 });
  const res = await page.evaluate(() => ['a', 'b'].map((id) => {
    const el = document.getElementById(id);
    return { state: el.dataset.state, status: el.shadowRoot.querySelector('[data-testid=embed-status]').textContent, result: el.result };
  }));
  for (const r of res) assert.equal(r.state, 'done', r.status);
  const [a, b] = res.map((r) => r.result);
  assert.equal(a.sampler, 'nuts');
  assert.deepEqual(a.iterations, [500, 500]);
  assert.deepEqual(a.names, ['intercept', 'x1', 'x2']);
  assert.equal(b.sampler, 'mh-minibatch');
  assert.deepEqual(b.iterations, [600]);
  assert.deepEqual(b.names, ['intercept', 'x1', 'x2']);
  assert.equal(b.nData, 1500);
  for (const r of [a, b]) for (const m of r.mean) assert.ok(Number.isFinite(m), `${r.sampler}: mean ${m}`);
  // c was stopped part-way: a summary of the draws it had, far fewer than asked for.
  const c = await page.evaluate(() => document.getElementById('c').result);
  assert.ok(c && c.iterations.every((i) => i > 100 && i < 1e6), `c iterations ${c?.iterations}`);
  // The minibatch sampler's batch size is shown as its internal, and below n per iteration.
  assert.ok(b.extraMeans.batch_size > 0 && b.extraMeans.batch_size <= 1500, `batch size ${b.extraMeans.batch_size}`);
  const sel = await page.$eval('#b', (el) => el.shadowRoot.querySelector('.extra-sel').value);
  assert.equal(sel, 'batch_size');
  // Both panels show a diagnostics row per parameter.
  for (const id of ['a', 'b']) {
    const rows = await page.$eval(`#${id}`, (el) => el.shadowRoot.querySelectorAll('[data-testid=embed-diagnostics] tbody tr').length);
    assert.equal(rows, 3, `${id}: diagnostics rows`);
  }
  assert.deepEqual(errors, []);
  assert.deepEqual(foreign, []);
  await page.close();
});

test('a <tallmc-sampler> with a sampler missing from the build says so; a foreign data URL is refused', async () => {
  const page = await env.browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const body = `<!doctype html><html><head><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="module" src="/embed.js"></script></head><body>
<tallmc-sampler id="u" sampler="no-such-sampler"></tallmc-sampler>
<tallmc-sampler id="f" sampler="nuts" data="http://example.invalid/data.csv"></tallmc-sampler></body></html>`;
  await page.route(`${env.url}__test__/bad.html`, (r) => r.fulfill({ contentType: 'text/html', body }));
  let foreign = 0;
  page.on('request', (r) => { if (r.url().includes('example.invalid')) foreign++; });
  await page.goto(`${env.url}__test__/bad.html`);
  await page.waitForFunction(() => document.getElementById('u').dataset.state === 'unavailable', null, { timeout: 30000 });
  await page.click('#f >> [data-testid=embed-run]');
  await page.waitForFunction(() => document.getElementById('f').dataset.state === 'error', null, { timeout: 30000 });
  const msg = await page.$eval('#f', (el) => el.shadowRoot.querySelector('[data-testid=embed-status]').textContent);
  assert.match(msg, /origin/);
  assert.equal(foreign, 0);
  assert.deepEqual(errors, []);
  await page.close();
});
