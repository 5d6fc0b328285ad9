// Compare mode of the playground: several sampler configurations on the same data set, model,
// chains, warm-up, draws and seed (taken from the form). Each configuration runs in its own chain
// workers (configurations one after another, so they do not compete for cores), then a summary
// table (ESS/s, ESS per 1000 gradient evaluations, data fraction per iteration, deviations of
// every posterior mean and sd from a reference run in reference-sd units), a detail table per
// configuration and overlaid marginal densities.
//
// URL: `compare=nuts;hmc-ecs:m=200,G=10` (configurations separated by `;`, settings by `,`) and
// `ref=<index>` (the reference configuration; default the first exact sampler).
//
// Extra columns (e.g. KSD) plug in without touching this file:
//   import { registerCompareColumn } from './compare.js';
//   registerCompareColumn({ key: 'ksd', label: 'KSD', compute: async (result, tools) => number });
// The KSD column is computed here (the run client's KsdWorker: IMQ kernel, exact scores, thinned kept draws);
// a later registration under 'ksd' replaces it.
// `result` = { config, names, chains: [{ draws: Float64Array (post warm-up, row-major n × d),
// signs }], d, signed, summary, chainConfig (the JSON config the chain workers got, without
// `chain`), f (the form), data ({ key, names, nrows }) }; `tools.copyData()` resolves to
// { names, values } (a fresh column-major copy, e.g. for `DataSet.fromColumns`). A column
// registered under `ksd` fills the KSD column, which shows "n/a" until one is registered.
import uPlot from './vendor/uPlot.esm.js';
import { COLORS } from './plots.js';
import { densities } from './density.js';
import { ChainRun, Diagnostics, KsdWorker, planDim, tooLarge } from './run-client.js';
import { formatNumber } from './format.js';
import { compareConfigText, parseCompareList, parseRef } from './url-params.js';

const $ = (id) => document.getElementById(id);
const columns = new Map(); // key -> { label, compute }

/** Add a column to the comparison table (`key` 'ksd' fills the KSD column). */
export function registerCompareColumn({ key, label, compute }) {
  columns.set(key, { label, compute });
  if (ctx) renderTable();
}

/** KSD of a finished configuration: its kept draws in a KSD worker (run client's KsdWorker, exact scores). */
function ksdOf(result, tools) {
  return tools.copyData().then(({ names, values }) => new Promise((resolve, reject) => {
    const w = new KsdWorker({
      config: result.chainConfig, names, values, chains: result.chains.length, signed: result.signed,
      onWorkerError: (e) => { w.terminate(); reject(new Error(e.message ?? 'KSD worker failed')); },
      onMessage: (m) => {
        w.terminate();
        if (m.type === 'error') reject(new Error(m.message));
        else resolve(m.result ? m.result.joint : NaN);
      },
    });
    result.chains.forEach((c, k) => w.push(k, c.draws, result.signed ? c.signs : null));
    w.compute(true);
  }));
}
columns.set('ksd', { label: 'KSD', compute: ksdOf });

let ctx = null; // from app.js: { readForm, getData, askData, samplerInfo, modelInfo, showError, params, registry }
const cmp = { configs: [], results: [], running: null, ref: 0 };

/** `sampler:k=v,k=v` -> { sampler, settings }. */
const configText = compareConfigText;
const label = (c) => configText(c).replace(':', ' ').replace(/,/g, ' ');

const fmt = (v, digits = 3) => formatNumber(v, { digits, missing: 'n/a' });

function setStatus(text, state) {
  $('compare-status').textContent = text;
  document.body.dataset.compare = state;
}

// ------------------------------------------------------------------------------------------------
// Configuration list

function renderList() {
  const ul = $('compare-list');
  ul.replaceChildren(...cmp.configs.map((c, i) => {
    const li = document.createElement('li');
    li.dataset.config = String(i);
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = COLORS[i % COLORS.length];
    const del = document.createElement('button');
    del.type = 'button';
    del.textContent = '×';
    del.title = 'remove';
    del.disabled = !!cmp.running;
    del.addEventListener('click', () => {
      cmp.configs.splice(i, 1);
      cmp.results = [];
      if (cmp.ref >= cmp.configs.length) cmp.ref = 0;
      renderList();
      renderTable();
    });
    li.append(sw, ` ${label(c)} `, del);
    return li;
  }));
  const sel = $('compare-reference');
  sel.replaceChildren(...cmp.configs.map((c, i) => new Option(`${i + 1}: ${label(c)}`, String(i))));
  if (cmp.configs.length) sel.value = String(Math.min(cmp.ref, cmp.configs.length - 1));
  $('compare-run').disabled = !!cmp.running || cmp.configs.length === 0;
  $('compare-stop').disabled = !cmp.running;
}

/** Settings under which a sampler the registry marks exact is not (the chain reports
 * `exact() == false` for them): qnhmc's continuous adaptation (spec 001 §5). */
const INEXACT_SETTINGS = { qnhmc: { adapt: 'continuous' } };

/** Whether configuration `c` targets the posterior exactly (registry flag and its settings). */
function configExact(c) {
  const s = ctx.samplerInfo(c?.sampler);
  if (!s || !s.exact) return false;
  const bad = INEXACT_SETTINGS[c.sampler] ?? {};
  return !Object.entries(bad).some(([k, v]) => c.settings?.[k] === v);
}

/** The default reference: the first exact, unsigned configuration (else the first one). */
function defaultRef() {
  const k = cmp.configs.findIndex((c) => configExact(c) && !ctx.samplerInfo(c.sampler)?.signed);
  return Math.max(0, k);
}

function addCurrent() {
  const sampler = $('sampler').value;
  if (!sampler) return;
  const settings = {};
  for (const el of document.querySelectorAll('#sampler-params [data-setting]')) {
    const k = el.dataset.setting;
    if (el.type === 'checkbox') {
      if (String(el.checked) !== el.dataset.default) settings[k] = String(el.checked);
    } else if (el.tagName === 'SELECT') {
      if (el.value !== el.dataset.default) settings[k] = el.value;
    } else if (el.value.trim() !== '') {
      settings[k] = el.value.trim();
    }
  }
  cmp.configs.push({ sampler, settings });
  cmp.results = [];
  if (cmp.configs.length === 1 || !configExact(cmp.configs[cmp.ref])) cmp.ref = defaultRef();
  renderList();
  renderTable();
  updateUrl();
}

function updateUrl() {
  const q = new URLSearchParams(location.search);
  q.delete('compare');
  q.delete('ref');
  for (const [k, v] of compareQuery()) q.set(k, v);
  history.replaceState(null, '', `?${q}`);
  const share = document.getElementById('share');
  if (share) {
    const s = new URLSearchParams(share.getAttribute('href')?.replace(/^[^?]*\?/, '') ?? '');
    s.delete('compare');
    s.delete('ref');
    for (const [k, v] of compareQuery()) s.set(k, v);
    share.href = `?${s}`;
  }
}

// ------------------------------------------------------------------------------------------------
// Running one configuration

/** Model settings from the form (sampler settings come from the configuration). */
function modelSettings() {
  const out = {};
  for (const el of document.querySelectorAll('#model-params [data-setting]')) {
    const k = el.dataset.setting;
    if (el.type === 'checkbox') {
      if (String(el.checked) !== el.dataset.default) out[k] = el.checked;
    } else if (el.tagName === 'SELECT') {
      if (el.value !== el.dataset.default) out[k] = el.value;
    } else if (el.value.trim() !== '') {
      out[k] = el.value.trim();
    }
  }
  return out;
}

/** The page's estimate of one configuration's run before any worker ([`tooLarge`]). */
function runPlan(f, data) {
  return {
    total: f.warmup + f.draws,
    ...planDim({ regression: ctx.modelInfo?.(f.model)?.regression, features: f.features, names: data.names, response: f.response, intercept: f.intercept }),
  };
}

function runConfig(config, f, data, copies, onProgress) {
  const started = performance.now();
  const settings = { ...modelSettings(), ...config.settings };
  const cfgOf = (c) => ({
    model: f.model, sampler: config.sampler, response: f.response, features: f.features,
    intercept: f.intercept, standardize: f.standardize, warmup: f.warmup, settings, seed: f.seed, chain: c,
  });
  const kept = []; // per chain: kept draws and signs, as batches
  let chainRun = null;
  const run = { diag: null, stop: () => chainRun?.stop() };
  const promise = new Promise((resolve, reject) => {
    let failed = false;
    const fail = (msg) => {
      if (failed) return;
      failed = true;
      chainRun.terminate();
      run.diag?.terminate();
      reject(new Error(`${label(config)}: ${msg}`));
    };
    chainRun = new ChainRun({
      chains: f.chains,
      plan: runPlan(f, data),
      start: (c) => {
        kept.push({ draws: [], signs: [] });
        const values = copies[c];
        return { msg: { type: 'start', config: cfgOf(c), draws: f.draws, names: data.names, values }, transfer: [values.buffer] };
      },
      onReady: () => {
        if (chainRun.stopRequested) chainRun.post({ type: 'stop' });
      },
      onBatch: (ch, b) => {
        const nw = b.nWarmup;
        if (nw < b.n) {
          kept[ch.c].draws.push(b.draws.subarray(nw * b.d));
          kept[ch.c].signs.push(b.sign.subarray(nw));
        }
        const cs = chainRun.chains;
        onProgress(cs.reduce((t, x) => t + x.iteration, 0) / cs.reduce((t, x) => t + (x.total || f.warmup + f.draws), 0));
      },
      onError: (ch, msg) => fail(msg),
      onEnd: (r) => finish(r),
    });

    function finish(r) {
      if (failed) return;
      const wallMs = performance.now() - started;
      const meta = r.meta;
      if (r.stopRequested || !meta) {
        reject(Object.assign(new Error('stopped'), { stopped: true }));
        return;
      }
      const chains = kept.map((k) => {
        const n = k.draws.reduce((t, a) => t + a.length, 0);
        const draws = new Float64Array(n);
        let o = 0;
        for (const a of k.draws) { draws.set(a, o); o += a.length; }
        const signs = new Float64Array(n / meta.d);
        o = 0;
        for (const a of k.signs) { signs.set(a, o); o += a.length; }
        return { draws, signs };
      });
      // The configuration's result, once its final diagnostics are in.
      const done = (m) => {
        const cs = r.chains;
        const sum = (key) => cs.reduce((t, x) => t + x[key], 0);
        const accN = sum('accN');
        const means = r.extraMeans();
        const extraMeans = {};
        meta.extraNames.forEach((name, k) => { extraMeans[name] = means[k]; });
        const { names, d, signed, exact, nData, extraNames } = meta;
        resolve({
          config, names, d, signed, exact, nData, extraNames, chains, summary: m.summary, wallMs,
          accN, likS: sum('likS'), gradS: sum('gradS'), extraMeans, lik: sum('lik'), grad: sum('grad'),
          acceptance: sum('acc') / Math.max(1, accN), f, data,
          chainConfig: { ...cfgOf(0), chain: undefined }, extra: {},
        });
      };
      // Diagnostics in a worker of its own.
      const dw = new Diagnostics({
        onWorkerError: (e) => fail(`diagnostics: ${e.message ?? 'worker failed'}`),
        onMessage: (m) => {
          dw.terminate();
          if (m.type === 'error') { fail(`diagnostics: ${m.message}`); return; }
          done(m);
        },
      });
      run.diag = dw;
      dw.reset({ chains: chains.length, d: meta.d, signed: meta.signed });
      chains.forEach((c, k) => dw.push(k, c.draws, meta.signed ? c.signs : null));
      dw.request({ final: true });
    }
  });
  return { run, promise };
}

async function runAll() {
  if (cmp.running || !cmp.configs.length) return;
  let f;
  try {
    f = ctx.readForm();
  } catch (e) {
    setStatus(e.message, 'error');
    return;
  }
  cmp.ref = Number($('compare-reference').value) || 0;
  updateUrl();
  cmp.results = [];
  const token = { stopped: false, current: null };
  cmp.running = token;
  renderList();
  renderTable();
  setStatus('loading data…', 'running');
  try {
    const data = await ctx.getData(f);
    // Refused before any copy of the data or chain worker when the page's estimate is over.
    const refusal = tooLarge(runPlan(f, data), f.chains);
    if (refusal) throw new Error(refusal);
    // For registered columns: a fresh copy of the data's values (column-major, as chains get them).
    const tools = { copyData: async () => ({ names: data.names, values: (await ctx.askData({ type: 'copies', key: data.key, k: 1 })).copies[0] }) };
    for (let i = 0; i < cmp.configs.length && !token.stopped; i++) {
      const config = cmp.configs[i];
      const { copies } = await ctx.askData({ type: 'copies', key: data.key, k: f.chains });
      const r = runConfig(config, f, data, copies, (p) => setStatus(`running ${i + 1}/${cmp.configs.length}: ${label(config)} ${(100 * p).toFixed(0)}%`, 'running'));
      token.current = r.run;
      const res = await r.promise;
      for (const [key, col] of columns) {
        try {
          res.extra[key] = await col.compute(res, tools);
        } catch (e) {
          res.extra[key] = NaN;
          console.warn(`compare column ${key}: ${e.message ?? e}`);
        }
      }
      cmp.results[i] = res;
      renderTable();
      renderDensity();
    }
    setStatus(token.stopped ? 'stopped' : `done: ${cmp.configs.length} configurations`, token.stopped ? 'stopped' : 'done');
  } catch (e) {
    if (e.stopped) setStatus('stopped', 'stopped');
    else setStatus(e.message ?? String(e), 'error');
  } finally {
    cmp.running = null;
    renderList();
  }
}

function stopAll() {
  const t = cmp.running;
  if (!t) return;
  t.stopped = true;
  t.current?.stop();
}

// ------------------------------------------------------------------------------------------------
// Output

/** Per-configuration numbers against the reference result `ref`. */
function metrics(r, ref) {
  const d = r.d;
  const s = r.summary;
  let minEss = Infinity;
  for (let j = 0; j < d; j++) minEss = Math.min(minEss, s[j * 9 + 6]);
  const wall = r.wallMs / 1000;
  const perParam = r.names.map((name, j) => {
    const k = ref ? ref.names.indexOf(name) : -1;
    const sdRef = k >= 0 ? ref.summary[k * 9 + 1] : NaN;
    return {
      name, mean: s[j * 9], sd: s[j * 9 + 1], ess: s[j * 9 + 6], rhat: s[j * 9 + 8],
      dMean: k >= 0 ? (s[j * 9] - ref.summary[k * 9]) / sdRef : NaN,
      dSd: k >= 0 ? (s[j * 9 + 1] - ref.summary[k * 9 + 1]) / sdRef : NaN,
    };
  });
  const maxAbs = (key) => perParam.reduce((m, p) => (Number.isFinite(p[key]) ? Math.max(m, Math.abs(p[key])) : NaN), 0);
  return {
    minEss,
    essPerS: minEss / wall,
    essPerGrad: r.gradS > 0 ? (1000 * minEss) / r.gradS : NaN,
    dataFraction: r.accN && r.nData ? Math.max(r.likS, r.gradS) / r.nData / r.accN : NaN,
    meanDev: maxAbs('dMean'),
    sdDev: maxAbs('dSd'),
    perParam,
    wall,
  };
}

function cell(tr, col, v, text) {
  const td = document.createElement('td');
  td.dataset.col = col;
  td.dataset.value = String(v);
  td.textContent = text ?? fmt(v);
  tr.append(td);
  return td;
}

function renderTable() {
  const tbody = $('compare-table').querySelector('tbody');
  const ref = cmp.results[cmp.ref];
  const details = [];
  const rows = cmp.configs.map((c, i) => {
    const tr = document.createElement('tr');
    tr.dataset.config = String(i);
    const th = document.createElement('th');
    th.scope = 'row';
    const sw = document.createElement('span');
    sw.className = 'swatch';
    sw.style.background = COLORS[i % COLORS.length];
    th.append(sw, ` ${label(c)}${i === cmp.ref ? ' (reference)' : ''}`);
    tr.append(th);
    const r = cmp.results[i];
    if (!r) {
      for (const col of ['wall', 'min_ess', 'ess_per_s', 'ess_per_1000_grad', 'data_fraction', 'accept', 'mean_dev', 'sd_dev', 'ksd']) cell(tr, col, NaN, '…');
      return tr;
    }
    const m = metrics(r, ref);
    cell(tr, 'wall', m.wall, `${fmt(m.wall)} s`);
    cell(tr, 'min_ess', m.minEss, fmt(m.minEss, 4));
    cell(tr, 'ess_per_s', m.essPerS);
    cell(tr, 'ess_per_1000_grad', m.essPerGrad);
    cell(tr, 'data_fraction', m.dataFraction);
    cell(tr, 'accept', r.acceptance);
    const md = cell(tr, 'mean_dev', m.meanDev);
    const sd = cell(tr, 'sd_dev', m.sdDev);
    if (m.meanDev > 0.15) md.className = 'bad';
    if (m.sdDev > 0.15) sd.className = 'bad';
    cell(tr, 'ksd', r.extra.ksd ?? NaN, columns.has('ksd') ? undefined : 'n/a');
    // Detail table of this configuration.
    const det = document.createElement('details');
    det.dataset.config = String(i);
    const sum = document.createElement('summary');
    sum.textContent = `${i + 1}: ${label(c)}: per parameter`;
    const t = document.createElement('table');
    t.className = 'compare-detail';
    t.dataset.testid = 'compare-detail';
    t.innerHTML = '<thead><tr><th>param</th><th>mean</th><th>sd</th><th>Δmean / sd<sub>ref</sub></th><th>Δsd / sd<sub>ref</sub></th><th>ESS bulk</th><th>R-hat</th></tr></thead>';
    const tb = document.createElement('tbody');
    for (const p of m.perParam) {
      const row = document.createElement('tr');
      const h = document.createElement('th');
      h.textContent = p.name;
      row.append(h);
      cell(row, 'mean', p.mean, fmt(p.mean, 4));
      cell(row, 'sd', p.sd, fmt(p.sd, 4));
      cell(row, 'mean_dev', p.dMean);
      cell(row, 'sd_dev', p.dSd);
      cell(row, 'ess_bulk', p.ess, Number.isFinite(p.ess) ? p.ess.toFixed(0) : 'n/a');
      cell(row, 'rhat', p.rhat, fmt(p.rhat, 4));
      tb.append(row);
    }
    const extras = Object.entries(r.extraMeans).map(([k, v]) => `${k} ${fmt(v)}`).join(' · ');
    t.append(tb);
    det.append(sum, t);
    if (extras) {
      const p = document.createElement('p');
      p.className = 'info';
      p.textContent = `mean per iteration (post warm-up): ${extras}`;
      det.append(p);
    }
    details.push(det);
    return tr;
  });
  tbody.replaceChildren(...rows);
  $('compare-details').replaceChildren(...details);
  // Extra registered columns other than KSD are listed under the table.
  const others = [...columns.keys()].filter((k) => k !== 'ksd');
  $('compare-extra').textContent = others.map((k) => `${columns.get(k).label}: ${cmp.results.map((r, i) => (r ? `${i + 1} ${fmt(r.extra[k])}` : '')).filter(Boolean).join(', ')}`).join(' · ');
}

let densityPlot = null;
function renderDensity() {
  const done = cmp.results.map((r, i) => [r, i]).filter(([r]) => r);
  const el = $('compare-density');
  if (!done.length) return;
  const names = done[0][0].names;
  const psel = $('compare-param');
  if (psel.options.length !== names.length || [...psel.options].some((o, k) => o.value !== names[k])) {
    const prev = psel.value;
    psel.replaceChildren(...names.map((n) => new Option(n, n)));
    psel.value = names.includes(prev) ? prev : names[Math.min(1, names.length - 1)];
  }
  const name = psel.value;
  const sets = done.map(([r]) => {
    const j = r.names.indexOf(name);
    const views = r.chains.map((c) => ({ length: c.draws.length / r.d, get: (i) => c.draws[i * r.d + j] }));
    const total = views.reduce((t, v) => t + v.length, 0);
    return {
      length: j >= 0 ? total : 0,
      get: (i) => {
        for (const v of views) {
          if (i < v.length) return v.get(i);
          i -= v.length;
        }
        return NaN;
      },
    };
  });
  const { x, ys } = densities(sets);
  const data = [x, ...ys.map((y) => Array.from(y))];
  el.replaceChildren();
  densityPlot = new uPlot({
    width: Math.max(300, Math.floor(el.clientWidth || 600) - 8),
    height: 260,
    scales: { x: { time: false } },
    cursor: { show: false },
    axes: [{ label: name }, { label: 'density' }],
    series: [{}, ...done.map(([r, i]) => ({ label: label(r.config), stroke: COLORS[i % COLORS.length], width: 2, points: { show: false } }))],
  }, data, el);
}

/** Wire the compare section (called once by app.js). */
export function initCompare(context) {
  ctx = context;
  const q = ctx.params.get('compare');
  if (q) cmp.configs = parseCompareList(q);
  cmp.ref = parseRef(ctx.params.get('ref'), cmp.configs.length);
  $('compare-add').addEventListener('click', addCurrent);
  $('compare-run').addEventListener('click', runAll);
  $('compare-stop').addEventListener('click', stopAll);
  $('compare-clear').addEventListener('click', () => {
    if (cmp.running) return;
    cmp.configs = [];
    cmp.results = [];
    renderList();
    renderTable();
    updateUrl();
  });
  $('compare-reference').addEventListener('change', () => {
    cmp.ref = Number($('compare-reference').value) || 0;
    renderTable();
    updateUrl();
  });
  $('compare-param').addEventListener('change', renderDensity);
  if (q) $('compare').open = true;
  setStatus('', 'idle');
}

/** Call when the registry has arrived (the default reference needs the samplers' exact flags). */
export function compareReady() {
  if (cmp.ref < 0) cmp.ref = defaultRef();
  renderList();
  renderTable();
}

/** The compare configurations as URL query pairs (kept in the playground's share link). */
export function compareQuery() {
  if (!cmp.configs.length) return [];
  return [['compare', cmp.configs.map(configText).join(';')], ['ref', String(Math.max(0, cmp.ref))]];
}

/** Read-only view for tests and the console. */
export function compareState() {
  return {
    configs: cmp.configs.map(configText),
    ref: cmp.ref,
    results: cmp.results.map((r) => (r ? { names: r.names, metrics: metrics(r, cmp.results[cmp.ref]) } : null)),
  };
}
