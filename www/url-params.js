// www/url-params.js: the playground's URL query read without the page (no DOM): compare mode's
// `compare=<sampler>[:k=v,k=v];…&ref=<index>` and the form's `set.<key>=value`, `features`,
// `intercept`, `standardize`, `ksd`. Used by app.js and compare.js; driven with generated
// query strings by tests/browser/url-params.test.mjs.

/** One compare configuration `<sampler>[:k=v,k=v]` → `{ sampler, settings }`. */
export function parseCompareConfig(text) {
  const [sampler, rest = ''] = text.split(':');
  const settings = {};
  for (const kv of rest.split(',').filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i > 0) settings[kv.slice(0, i).trim()] = kv.slice(i + 1).trim();
  }
  return { sampler: sampler.trim(), settings };
}

/** The text of one compare configuration (inverse of parseCompareConfig). */
export function compareConfigText(c) {
  const s = Object.entries(c.settings).map(([k, v]) => `${k}=${v}`).join(',');
  return s ? `${c.sampler}:${s}` : c.sampler;
}

/** The `compare` parameter (configurations separated by `;`) → configurations. */
export function parseCompareList(q) {
  return q ? q.split(';').filter(Boolean).map(parseCompareConfig) : [];
}

/** The `ref` parameter: an index into `count` configurations, or -1 (choose the default). */
export function parseRef(refParam, count) {
  const ref = refParam === null ? NaN : Number(refParam);
  return Number.isInteger(ref) && ref >= 0 && ref < count ? ref : -1;
}

/** Settings from `set.<key>=value` parameters, in order: `[[key, value], …]`. */
export function urlSettings(params) {
  const out = [];
  for (const [k, v] of params) if (k.startsWith('set.')) out.push([k.slice(4), v]);
  return out;
}

/** The `features` parameter as column names (undefined when absent). */
export function urlFeatures(params) {
  return params.get('features')?.split(',').filter(Boolean);
}

/** `intercept`: on unless `0` or `false`; null when absent. */
export function urlIntercept(params) {
  if (!params.has('intercept')) return null;
  return params.get('intercept') !== '0' && params.get('intercept') !== 'false';
}

/** `standardize`: on for `1` or `true`; null when absent. */
export function urlStandardize(params) {
  if (!params.has('standardize')) return null;
  return params.get('standardize') === '1' || params.get('standardize') === 'true';
}

/** `?ksd=0` turns the KSD panel off. */
export function ksdEnabled(params) {
  return params.get('ksd') !== '0';
}
