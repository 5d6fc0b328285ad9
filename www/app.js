// tallmc playground: configuration form (built from the wasm registry), one Web Worker per chain,
// live plots and diagnostics. The main thread only stores batches and draws decimated plots;
// sampling, parsing and diagnostics run in workers.
import { TracePlot, HistPlot, AcfPlot, drawPair } from './plots.js';
import { KsdPanel } from './ksd.js';
import { ChainRun, Diagnostics, planDim, tooLarge } from './run-client.js';
import { formatNumber } from './format.js';
import { drawWindowTrace } from './series.js';
import { initCompare, compareReady, compareState, compareQuery } from './compare.js';
import { urlSettings, urlFeatures, urlIntercept, urlStandardize, ksdEnabled } from './url-params.js';

const $ = (id) => document.getElementById(id);
const BUILTIN = ['logistic', 'linear', 'robust', 'poisson', 'gmm', 'lgssm', 'sv', 'garch', 'pmf'];
const RENDER_MS = 250; // redraw plots at most this often
const DIAG_MS = 1000; // ask for diagnostics at most this often while running
const ACF_LAGS = 50;
// `?ksd=0` turns the KSD panel (and its worker) off; kept in the share link.
const KSD_ON = ksdEnabled(new URLSearchParams(location.search));

// ------------------------------------------------------------------------------------------------
// Growable storage

class Grow {
  constructor(ctor, cap = 1024) {
    this.ctor = ctor;
    this.buf = new ctor(cap);
    this.length = 0;
  }
  push(arr) {
    if (this.length + arr.length > this.buf.length) {
      let cap = this.buf.length * 2;
      while (cap < this.length + arr.length) cap *= 2;
      const nb = new this.ctor(cap);
      nb.set(this.buf.subarray(0, this.length));
      this.buf = nb;
    }
    this.buf.set(arr, this.length);
    this.length += arr.length;
  }
  view() {
    return this.buf.subarray(0, this.length);
  }
}

// ------------------------------------------------------------------------------------------------
// State

const state = {
  registry: null,
  data: null, // { key, names, nrows, values, label }
  dataPending: null, // Promise of data for the current selection
  run: null,
  msgId: 0,
};

const dataWorker = new Worker(new URL('./data-worker.js', import.meta.url), { type: 'module' });
const dataWaiters = new Map();
dataWorker.onmessage = (ev) => {
  const m = ev.data;
  if (m.type === 'registry') {
    onRegistry(m);
    return;
  }
  const w = dataWaiters.get(m.id);
  if (!w) return;
  dataWaiters.delete(m.id);
  if (m.type === 'error') w.reject(new Error(m.message));
  else w.resolve(m);
};
dataWorker.onerror = (e) => showError(`data worker failed: ${e.message ?? 'could not load'}`);

function askData(msg, transfer = []) {
  const id = ++state.msgId;
  return new Promise((resolve, reject) => {
    dataWaiters.set(id, { resolve, reject });
    dataWorker.postMessage({ ...msg, id }, transfer);
  });
}

// ------------------------------------------------------------------------------------------------
// Errors

function showError(msg) {
  const el = $('error');
  el.textContent = msg;
  el.hidden = false;
}
function clearError() {
  const el = $('error');
  el.textContent = '';
  el.hidden = true;
}

// ------------------------------------------------------------------------------------------------
// URL <-> form

const params = new URLSearchParams(location.search);

function modelInfo(name) {
  return state.registry?.models.find((m) => m.name === name);
}
function samplerInfo(name) {
  return state.registry?.samplers.find((s) => s.name === name);
}

function onRegistry(reg) {
  state.registry = reg;
  $('version').textContent = `tallmc ${reg.version}`;
  const ms = $('model');
  ms.replaceChildren(...reg.models.map((m) => new Option(m.name, m.name)));
  // Time-series data sets appear once their models are in this build.
  for (const o of $('dataset').querySelectorAll('option[data-series]')) if (!modelInfo(o.value)) o.remove();
  // Apply the URL query.
  const ds = params.get('dataset');
  if (ds && [...BUILTIN, 'csv'].includes(ds)) $('dataset').value = ds;
  for (const [k, id] of [['n', 'sim-n'], ['d', 'sim-d'], ['chains', 'chains'], ['warmup', 'warmup'], ['draws', 'draws'], ['seed', 'seed']]) {
    if (params.has(k)) $(id).value = params.get(k);
  }
  const intercept = urlIntercept(params);
  if (intercept !== null) $('intercept').checked = intercept;
  const standardize = urlStandardize(params);
  if (standardize !== null) $('standardize').checked = standardize;
  const model = params.get('model') ?? (BUILTIN.includes($('dataset').value) ? $('dataset').value : reg.models[0]?.name);
  if (model && modelInfo(model)) ms.value = model;
  onDatasetChange(false);
  onModelChange();
  const sampler = params.get('sampler');
  if (sampler && [...$('sampler').options].some((o) => o.value === sampler)) {
    $('sampler').value = sampler;
    onSamplerChange();
  }
  // Settings from the URL: set.<key>=value.
  for (const [k, v] of urlSettings(params)) {
    const input = document.querySelector(`[data-setting="${CSS.escape(k)}"]`);
    if (input) {
      if (input.dataset.on) input.checked = v === input.dataset.on;
      else if (input.type === 'checkbox') input.checked = v === 'true' || v === '1';
      else input.value = v;
    }
  }
  updateShare();
  compareReady();
  document.body.dataset.ready = 'true';
  if (params.get('autorun') === '1') startRun();
}

function paramInput(p) {
  const label = document.createElement('label');
  label.title = p.description;
  let input;
  if (p.key === 'reparam' && p.kind === 'choice') {
    // The exact whitening reparametrisation: a checkbox (on = auto, off = none).
    input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = p.default === 'auto';
    input.dataset.on = 'auto';
    input.dataset.off = 'none';
    input.dataset.testid = 'reparam-checkbox';
    label.className = 'inline';
    input.dataset.setting = p.key;
    input.dataset.default = String(input.checked);
    input.addEventListener('change', updateShare);
    label.append(input, ' whiten the target (reparam; exact, draws on your scale)');
    return label;
  }
  if (p.kind === 'choice') {
    input = document.createElement('select');
    input.append(...p.choices.map((c) => new Option(c, c)));
    input.value = p.default;
  } else if (p.kind === 'bool') {
    input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = !!p.default;
    label.className = 'inline';
  } else {
    input = document.createElement('input');
    input.type = 'number';
    input.step = p.kind === 'int' ? '1' : 'any';
    if (p.min !== null && p.min !== undefined) input.min = p.min;
    if (p.max !== null && p.max !== undefined) input.max = p.max;
    input.placeholder = p.default === null ? 'auto' : String(p.default);
  }
  input.dataset.setting = p.key;
  input.dataset.default = p.default === null ? '' : String(p.default);
  input.addEventListener('change', updateShare);
  if (p.kind === 'bool') label.append(input, ` ${p.key}`);
  else label.append(`${p.key} `, input);
  return label;
}

function onModelChange() {
  const m = modelInfo($('model').value);
  $('model-params').replaceChildren(...(m?.params ?? []).map(paramInput));
  for (const el of document.querySelectorAll('.regression')) el.hidden = !(m?.regression);
  // Samplers that support this model.
  const ss = $('sampler');
  const prev = ss.value;
  // The registry decides which samplers run on which model (runs_on).
  const ok = (state.registry?.samplers ?? []).filter((s) => s.runs_on.includes(m?.name));
  ss.replaceChildren(...ok.map((s) => new Option(s.name, s.name)));
  if (ok.some((s) => s.name === prev)) ss.value = prev;
  else if (ok.some((s) => s.name === 'nuts')) ss.value = 'nuts';
  onSamplerChange();
}

function onSamplerChange() {
  const s = samplerInfo($('sampler').value);
  $('sampler-desc').textContent = s ? `${s.description}${s.exact ? '' : ' (approximate)'}${s.signed ? ' (signed draws)' : ''}` : 'no sampler available for this model yet';
  $('sampler-params').replaceChildren(...(s?.params ?? []).map(paramInput));
  updateShare();
}

function onDatasetChange(load = true) {
  const ds = $('dataset').value;
  const csv = ds === 'csv';
  for (const el of document.querySelectorAll('.sim')) el.hidden = csv;
  for (const el of document.querySelectorAll('.upload')) el.hidden = !csv;
  if (!csv && modelInfo(ds) && load) {
    $('model').value = ds;
    onModelChange();
  }
  if (!csv) {
    state.dataPending = null;
    $('data-info').textContent = `simulated ${ds} data, generated in a worker when you press Run`;
    // Preview of the simulated columns (d counts the intercept); replaced by the real names on Run.
    const nf = Math.max(0, (+$('sim-d').value || 1) - 1);
    const series = $('dataset').selectedOptions[0]?.hasAttribute('data-series');
    const cols = ds === 'pmf' ? ['user', 'item', 'rating'] : (series ? ['y'] : ['y', ...Array.from({ length: nf }, (_, j) => `x${j + 1}`)]);
    setColumns(ds === 'gmm' ? ['x'] : cols, true);
  } else if (!state.data || !state.data.key.startsWith('csv:')) {
    $('data-info').textContent = 'choose a data file: CSV (a header row of column names, then numbers) or NumPy .npz (one array per column)';
    setColumns([], false);
  }
  updateShare();
}

// Response and feature pickers.
function setColumns(names, fromData) {
  const rs = $('response');
  const prev = params.get('response') ?? rs.value;
  rs.replaceChildren(...names.map((n) => new Option(n, n)));
  if (names.includes(prev)) rs.value = prev;
  else if (names.includes('y')) rs.value = 'y';
  else if (names.length) rs.value = names[names.length - 1];
  const wanted = urlFeatures(params);
  const box = $('features');
  box.replaceChildren(...names.map((n) => {
    const l = document.createElement('label');
    const c = document.createElement('input');
    c.type = 'checkbox';
    c.value = n;
    c.checked = wanted ? wanted.includes(n) : true;
    c.addEventListener('change', updateShare);
    l.append(c, ` ${n}`);
    return l;
  }));
  box.dataset.fromData = fromData ? 'true' : 'false';
  syncFeatureDisable();
}
function syncFeatureDisable() {
  const r = $('response').value;
  for (const c of $('features').querySelectorAll('input')) {
    c.disabled = c.value === r;
  }
}

function readSettings() {
  const settings = {};
  for (const el of document.querySelectorAll('[data-setting]')) {
    const k = el.dataset.setting;
    if (el.dataset.on) {
      if (String(el.checked) !== el.dataset.default) settings[k] = el.checked ? el.dataset.on : el.dataset.off;
    } else if (el.type === 'checkbox') {
      if (String(el.checked) !== el.dataset.default) settings[k] = el.checked;
    } else if (el.tagName === 'SELECT') {
      if (el.value !== el.dataset.default) settings[k] = el.value;
    } else if (el.value.trim() !== '') {
      settings[k] = el.value.trim();
    }
  }
  return settings;
}

function readForm() {
  const int = (id, lo, hi) => {
    const v = Number($(id).value);
    if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`${id.replace('sim-', '')}: expected a whole number in [${lo}, ${hi}], got "${$(id).value}"`);
    return v;
  };
  const model = modelInfo($('model').value);
  if (!model) throw new Error('no model available');
  const sampler = $('sampler').value;
  if (!sampler) throw new Error(`no sampler available for model ${model.name} yet`);
  const response = $('response').value;
  let features = null;
  if (model.regression && $('features').dataset.fromData === 'true') {
    const boxes = [...$('features').querySelectorAll('input')].filter((c) => c.value !== response);
    if (boxes.some((c) => !c.checked)) features = boxes.filter((c) => c.checked).map((c) => c.value);
  }
  const seedText = $('seed').value.trim();
  if (!/^\d+$/.test(seedText)) throw new Error(`seed: expected a whole number ≥ 0, got "${seedText}"`);
  return {
    dataset: $('dataset').value,
    n: int('sim-n', 10, 1e7),
    d: int('sim-d', 1, 200),
    chains: int('chains', 1, 16),
    warmup: int('warmup', 0, 1e7),
    draws: int('draws', 1, 1e7),
    seed: seedText,
    model: model.name,
    sampler,
    response: response || 'y',
    features,
    intercept: $('intercept').checked,
    standardize: $('standardize').checked,
    settings: readSettings(),
  };
}

function configQuery(f) {
  const q = new URLSearchParams();
  q.set('dataset', f.dataset);
  if (f.dataset !== 'csv') { q.set('n', f.n); q.set('d', f.d); }
  q.set('model', f.model);
  q.set('sampler', f.sampler);
  q.set('chains', f.chains);
  q.set('warmup', f.warmup);
  q.set('draws', f.draws);
  q.set('seed', f.seed);
  if (modelInfo(f.model)?.regression) {
    q.set('response', f.response);
    if (f.features) q.set('features', f.features.join(','));
    if (!f.intercept) q.set('intercept', '0');
    if (f.standardize) q.set('standardize', '1');
  }
  for (const [k, v] of Object.entries(f.settings)) q.set(`set.${k}`, String(v));
  for (const [k, v] of compareQuery()) q.set(k, v);
  if (!KSD_ON) q.set('ksd', '0');
  return q;
}

function updateShare() {
  try {
    const q = configQuery(readForm());
    $('share').href = `?${q}`;
  } catch {
    // incomplete form: keep the previous link
  }
}

// ------------------------------------------------------------------------------------------------
// Data

async function getData(f) {
  if (f.dataset === 'csv') {
    if (!state.data || !state.data.key.startsWith('csv:')) {
      if (state.dataPending) return state.dataPending;
      // The last file failed to load: its parse error says more than "choose a file".
      throw new Error(state.dataError ?? 'choose a data file first');
    }
    return state.data;
  }
  const dseed = params.get('dseed') ?? '1';
  const key = `sim:${f.dataset}:${f.n}:${f.d}:${dseed}`;
  if (state.data?.key === key) return state.data;
  $('data-info').textContent = `simulating ${f.dataset} data (${f.n} rows)…`;
  const m = await askData({ type: 'simulate', key, model: f.dataset, n: f.n, d: f.d, seed: dseed });
  state.data = { key, names: m.names, nrows: m.nrows, label: `simulated ${f.dataset}` };
  $('data-info').textContent = `${m.nrows} rows × ${m.names.length} columns (simulated ${f.dataset}, ${m.ms.toFixed(0)} ms)`;
  const shown = [...$('features').querySelectorAll('input')].map((c) => c.value);
  if (shown.join('\u0000') !== m.names.join('\u0000')) setColumns(m.names, true);
  return state.data;
}

async function onFile() {
  const file = $('file').files?.[0];
  if (!file) return;
  clearError();
  $('data-info').textContent = `reading ${file.name}…`;
  state.data = null;
  state.dataError = null;
  // No columns until this file is read: never the previous file's.
  setColumns([], false);
  const p = (async () => {
    const bytes = await file.arrayBuffer();
    const key = `csv:${file.name}:${file.size}:${file.lastModified}:${++state.msgId}`;
    const m = await askData({ type: 'csv', key, bytes, name: file.name }, [bytes]);
    state.data = { key, names: m.names, nrows: m.nrows, label: file.name };
    $('data-info').textContent = `${file.name}: ${m.nrows} rows × ${m.names.length} columns (${m.ms.toFixed(0)} ms)`;
    setColumns(m.names, true);
    return state.data;
  })();
  state.dataPending = p;
  try {
    await p;
  } catch (e) {
    $('data-info').textContent = `${file.name}: not loaded`;
    if (state.dataPending === p) state.dataError = e.message;
    showError(e.message);
  } finally {
    if (state.dataPending === p) state.dataPending = null;
  }
}

// ------------------------------------------------------------------------------------------------
// Running

/** Kernel extras per step (`n × EXTRAS` in a batch), as the chains report it (ChainHandle.extrasPerStep). */
let EXTRAS = 4;

/** Extra `k` of one chain over all iterations (warm-up included). */
function extraView(chain, k) {
  // k = EXTRAS: the sign of the likelihood estimate per iteration (signed samplers).
  if (k === EXTRAS) return { length: chain.signAll.length, get: (i) => chain.signAll.buf[i] };
  const buf = chain.extra.buf;
  const n = chain.extra.length / EXTRAS;
  return {
    length: n,
    get: (i) => {
      const v = buf[i * EXTRAS + k];
      return Number.isFinite(v) ? v : null;
    },
  };
}

function colView(chain, j, fromWarmup) {
  const d = chain.d;
  const buf = chain.draws.buf;
  const off = fromWarmup ? 0 : chain.warmup;
  const n = Math.max(0, chain.draws.length / d - off);
  return { length: n, get: (i) => buf[(i + off) * d + j] };
}

async function startRun() {
  if (state.run && !state.run.finished) return;
  clearError();
  let f;
  try {
    f = readForm();
  } catch (e) {
    showError(e.message);
    return;
  }
  history.replaceState(null, '', `?${configQuery(f)}`);
  updateShare();
  setRunning(true);
  document.body.dataset.state = 'starting';
  setProgress(0, 'loading data…');
  let data;
  let copies = [];
  let plan;
  try {
    data = await getData(f);
    // The page's estimate of the run's memory, before any worker (or copy of the data): a
    // run over the limit is refused by the run client without a chain or KSD worker.
    plan = {
      total: f.warmup + f.draws,
      ...planDim({ regression: modelInfo(f.model)?.regression, features: f.features, names: data.names, response: f.response, intercept: f.intercept }),
    };
    // One copy per chain, plus one for the KSD worker's model.
    if (!tooLarge(plan, f.chains)) copies = (await askData({ type: 'copies', key: data.key, k: f.chains + (KSD_ON ? 1 : 0) })).copies;
  } catch (e) {
    showError(e.message);
    setRunning(false);
    setProgress(0, 'idle');
    document.body.dataset.state = 'error';
    return;
  }
  const run = {
    f,
    finished: false,
    paused: false,
    started: performance.now(),
    pausedMs: 0,
    pauseStart: 0,
    endTime: 0,
    chains: [],
    d: 0,
    names: [],
    signed: false,
    nData: data.nrows,
    diag: null,
    summary: null,
    finalRequested: false,
    dirty: true,
  };
  state.run?.ksd?.close();
  state.run = run;
  document.body.dataset.state = 'running';
  $('diagnostics').querySelector('tbody').replaceChildren();
  showWarnings([]);
  $('cost').querySelector('tbody').replaceChildren();
  $('chain-progress').replaceChildren();
  $('ecs-fraction-fig').hidden = true;
  $('ecs-sigma2-fig').hidden = true;
  $('extra-fig').hidden = true;
  $('window-fig').hidden = true;
  $('extra').replaceChildren();
  run.client = new ChainRun({
    chains: f.chains,
    plan,
    start: (c) => {
      const config = {
        model: f.model, sampler: f.sampler, response: f.response, features: f.features,
        intercept: f.intercept, standardize: f.standardize, warmup: f.warmup,
        settings: f.settings, seed: f.seed, chain: c,
      };
      const values = copies[c];
      return { msg: { type: 'start', config, draws: f.draws, names: data.names, values }, transfer: [values.buffer] };
    },
    onReady: (ch, m) => onChainReady(run, ch, m),
    onBatch: (ch, b, m) => onChainBatch(run, ch, b, m),
    onMessage: (ch, m) => {
      if (m.type === 'paused') ch.pausedAt = run.paused ? m.iteration : null;
    },
    onError: (ch, message) => {
      if (state.run !== run) return;
      // The failing chain's error is shown; the other chains go on (a configuration error
      // fails every chain, each with the same message, shown once).
      run.chainErrors ??= new Map();
      const who = run.chainErrors.get(message) ?? [];
      who.push(ch.c + 1);
      run.chainErrors.set(message, who);
      showError([...run.chainErrors].map(([msg, cs]) => (run.chains.length > 1
        ? `chain${cs.length > 1 ? 's' : ''} ${cs.sort((a, b) => a - b).join(', ')}: ${msg}` : msg)).join('; '));
    },
    onEnd: () => {
      if (state.run === run) checkFinished(run);
    },
  });
  run.chains = run.client.chains;
  // what the playground keeps per chain (the run client keeps the totals)
  for (const ch of run.chains) {
    Object.assign(ch, {
      total: f.warmup + f.draws, warmup: f.warmup, d: 0,
      draws: new Grow(Float64Array), signs: new Grow(Float64Array), extra: new Grow(Float64Array),
      signAll: new Grow(Float64Array), el: null,
    });
    const row = document.createElement('div');
    row.innerHTML = `chain ${ch.c + 1} <progress max="100" value="0"></progress> <span></span>`;
    $('chain-progress').append(row);
    ch.el = row;
  }
  // Kernel Stein discrepancy of the kept draws, in its own worker (ksd.js).
  if (KSD_ON && !run.client.refused) run.ksd = new KsdPanel({
    config: { model: f.model, sampler: f.sampler, response: f.response, features: f.features, intercept: f.intercept, standardize: f.standardize, warmup: f.warmup, settings: f.settings, seed: f.seed },
    names: data.names, values: copies[f.chains], chains: f.chains, signed: !!samplerInfo(f.sampler)?.signed, warmup: f.warmup,
    onError: (msg) => showError(msg),
  });
  scheduleRender();
}

function onChainReady(run, ch, m) {
  if (state.run !== run) return;
  ch.d = m.dim;
  if (!run.names.length) {
    const meta = run.client.meta;
    run.names = meta.names;
    run.d = meta.d;
    run.signed = meta.signed;
    run.nData = meta.nData;
    EXTRAS = meta.extras;
    // Exactness can depend on the settings (qnhmc adapt=continuous): the chain reports it.
    const desc = $('sampler-desc');
    desc.textContent = desc.textContent.replace(/ \(not exact with these settings\)$/, '');
    if (meta.exact === false && samplerInfo($('sampler').value)?.exact) desc.textContent += ' (not exact with these settings)';
    // Kernel extras shown as per-iteration plots (HMC-ECS: subsample fraction, σ̂²).
    const names = meta.extraNames;
    run.extraNames = names;
    run.fracIdx = names.indexOf('data_fraction');
    run.sigma2Idx = names.indexOf('sigma2');
    $('ecs-fraction-fig').hidden = run.fracIdx < 0;
    $('ecs-sigma2-fig').hidden = run.sigma2Idx < 0;
    setExtraSelect(names, run.signed);
    run.extraAuto = true; // the automatic choice may move on if that internal stays empty
    setParamSelects(run.names);
    startDiag(run);
  }
  if (run.paused) ch.worker.postMessage({ type: 'pause' });
}

function onChainBatch(run, ch, b, m) {
  if (state.run !== run) return;
  ch.draws.push(b.draws);
  if (m.trace) ch.trace = m.trace; // time-series samplers: the last filter window
  const nw = b.nWarmup;
  if (run.signed) ch.signAll.push(b.sign);
  if (b.extra && b.extra.length === b.n * EXTRAS) ch.extra.push(b.extra);
  if (nw < b.n) {
    const post = b.draws.subarray(nw * b.d);
    const signs = b.sign.subarray(nw);
    if (run.signed) ch.signs.push(signs);
    run.diag?.push(ch.c, post, run.signed ? signs : null);
    run.ksd?.push(ch.c, post, run.signed ? signs : null);
  }
  run.dirty = true;
  scheduleRender();
}

function checkFinished(run) {
  if (run.finished) return;
  if (!run.chains.every((c) => ['done', 'stopped', 'error'].includes(c.status))) return;
  run.finished = true;
  run.endTime = performance.now();
  setRunning(false);
  const ok = run.chains.every((c) => c.status === 'done');
  document.body.dataset.state = ok ? 'finishing' : (run.chains.some((c) => c.status === 'error') ? 'error' : 'stopped');
  if (run.diag && run.chains.some((c) => c.status !== 'error')) {
    // Final diagnostics over every draw; "done" once they are shown.
    run.finalRequested = true;
    requestDiag(run, true);
  }
  renderNow();
}

function stopRun(error = false) {
  const run = state.run;
  if (!run || run.finished) return;
  // Whatever has not answered within the grace period is terminated (then checkFinished).
  run.client.stop({ status: error ? 'error' : 'stopped' });
}

function togglePause() {
  const run = state.run;
  if (!run || run.finished) return;
  run.paused = !run.paused;
  if (run.paused) run.pauseStart = performance.now();
  else run.pausedMs += performance.now() - run.pauseStart;
  for (const ch of run.chains) ch.pausedAt = null;
  run.client.post({ type: run.paused ? 'pause' : 'resume' });
  $('pause').textContent = run.paused ? 'Resume' : 'Pause';
  document.body.dataset.state = run.paused ? 'paused' : 'running';
}

function setRunning(on) {
  $('run').disabled = on;
  $('stop').disabled = !on;
  $('pause').disabled = !on;
  $('pause').textContent = 'Pause';
  $('export-draws').disabled = on && !state.run;
  $('export-summary').disabled = on && !state.run;
}

// ------------------------------------------------------------------------------------------------
// Diagnostics worker

// One diagnostics worker for the page (created by the run client at the first run), reset per run.
const diagnostics = new Diagnostics();
function startDiag(run) {
  diagnostics.listen({ onMessage: (m) => onDiag(run, m) });
  diagnostics.reset({ chains: run.chains.length, d: run.d, signed: run.signed });
  run.diag = diagnostics;
}

function requestDiag(run, final = false) {
  run.ksd?.request(final);
  if (!run.diag) return;
  run.diag.request({
    final, acfParam: Math.max(0, $('param').selectedIndex), maxLag: ACF_LAGS,
    names: run.names, divergent: run.chains.map((c) => c.div),
  });
}

function onDiag(run, m) {
  if (state.run !== run) return;
  if (m.type === 'error') {
    showError(`diagnostics: ${m.message}`);
    return;
  }
  if (m.id !== 'final' && run.finalRequested) return;
  run.summary = m.summary;
  run.acf = m.acf;
  run.acfParam = m.acfParam;
  run.dirty = true;
  if (m.id === 'final') {
    run.final = true;
    showWarnings(m.warnings ?? []);
    renderNow();
    document.body.dataset.state = run.chains.every((c) => c.status === 'done') ? 'done'
      : (run.chains.some((c) => c.status === 'error') ? 'error' : 'stopped');
  } else {
    scheduleRender();
  }
}

// ------------------------------------------------------------------------------------------------
// Rendering (throttled)

let renderTimer = null;
let lastRender = 0;
function scheduleRender() {
  if (renderTimer) return;
  const wait = Math.max(0, RENDER_MS - (performance.now() - lastRender));
  renderTimer = setTimeout(() => {
    renderTimer = null;
    renderNow();
  }, wait);
}

const trace = new TracePlot($('trace'));
const hist = new HistPlot($('hist'));
const acfPlot = new AcfPlot($('acf'));
const fracPlot = new TracePlot($('ecs-fraction'));
const sigma2Plot = new TracePlot($('ecs-sigma2'));
const extraPlot = new TracePlot($('extra-plot'));

/** Fill the generic per-iteration diagnostics select (hidden when the sampler reports no extras). */
function setExtraSelect(names, signed = false) {
  const shown = names.slice(0, EXTRAS);
  const opts = shown.map((n, k) => new Option(n, String(k)));
  // Signed samplers: the sign of the likelihood estimate per iteration.
  if (signed) opts.push(new Option('sign', String(EXTRAS)));
  $('extra').replaceChildren(...opts);
  // The most telling internal first: points processed (SMH), batch size (minibatch MH, SG-MCMC),
  // filter ESS (particle methods), sign (signed HMC-ECS).
  const labels = opts.map((o) => o.textContent);
  const pick = ['points', 'batch_size', 'ess_min', 'ess_mean', 'sign'].map((n) => labels.indexOf(n)).find((k) => k >= 0) ?? 0;
  $('extra').selectedIndex = opts.length ? pick : -1;
  $('extra-fig').hidden = opts.length === 0;
}

function setParamSelects(names) {
  for (const id of ['param', 'pair-x', 'pair-y']) {
    const s = $(id);
    s.replaceChildren(...names.map((n, j) => new Option(n, String(j))));
  }
  $('pair-y').selectedIndex = Math.min(1, names.length - 1);
}

function setProgress(pct, text) {
  const p = $('progress');
  p.setAttribute('aria-valuenow', String(Math.round(pct)));
  $('progress-text').textContent = text;
  $('progress-fill').style.width = `${pct}%`;
}

const fmt = (v, digits = 4) => formatNumber(v, { digits });

function renderNow() {
  lastRender = performance.now();
  const run = state.run;
  if (!run) return;
  // Progress.
  const total = run.chains.reduce((s, c) => s + c.total, 0);
  const done = run.chains.reduce((s, c) => s + c.iteration, 0);
  const pct = total ? (100 * done) / total : 0;
  if (run.final && run.chains.every((c) => c.status === 'done')) setProgress(100, 'done');
  else if (run.finished && run.chains.every((c) => c.status === 'done')) setProgress(pct, 'computing diagnostics…');
  else if (run.finished) setProgress(pct, run.chains.some((c) => c.status === 'error') ? 'failed' : 'stopped');
  else setProgress(pct, `${pct.toFixed(0)}%${run.paused ? ' (paused)' : ''}`);
  for (const ch of run.chains) {
    const bar = ch.el.querySelector('progress');
    bar.value = ch.total ? (100 * ch.iteration) / ch.total : 0;
    const rate = ch.computeMs > 0 ? (1000 * ch.iteration) / ch.computeMs : 0;
    const phase = ch.status === 'running' ? (ch.iteration < ch.warmup ? 'warm-up' : 'sampling') : ch.status;
    ch.el.querySelector('span').textContent = `${ch.iteration}/${ch.total} · ${rate.toFixed(0)} it/s · ${phase}`;
  }
  if (!run.d) return;
  // Plots of the selected parameter.
  const j = Math.max(0, $('param').selectedIndex);
  const withData = run.chains.filter((c) => c.d);
  trace.update(withData.map((c) => colView(c, j, true)), run.f.warmup);
  hist.update(withData.map((c) => colView(c, j, false)));
  if (run.acf && run.acfParam === j) acfPlot.update(run.acf);
  const px = Math.max(0, $('pair-x').selectedIndex);
  const py = Math.max(0, $('pair-y').selectedIndex);
  drawPair($('pair-canvas'), withData.map((c) => colView(c, px, false)), withData.map((c) => colView(c, py, false)), [run.names[px], run.names[py]]);
  if (run.fracIdx >= 0) fracPlot.update(withData.map((c) => extraView(c, run.fracIdx)), run.f.warmup);
  if (run.sigma2Idx >= 0) sigma2Plot.update(withData.map((c) => extraView(c, run.sigma2Idx)), run.f.warmup);
  if (run.extraAuto && withData.some((c) => c.extra.length)) {
    // An internal the sampler leaves empty (NaN) in this run gives way to one with values.
    run.extraAuto = false;
    const finite = (k) => k === EXTRAS || withData.some((c) => {
      const v = extraView(c, k);
      for (let i = 0; i < v.length; i++) if (v.get(i) !== null) return true;
      return false;
    });
    if ($('extra').value !== '' && !finite(Number($('extra').value))) {
      const alt = [...$('extra').options].map((o) => Number(o.value)).find(finite);
      if (alt !== undefined) $('extra').value = String(alt);
    }
  }
  const ek = $('extra').value === '' ? -1 : Number($('extra').value);
  if (ek >= 0 && (run.extraNames?.length || run.signed)) extraPlot.update(withData.map((c) => extraView(c, ek)), run.f.warmup);
  const wt = run.chains[0]?.trace;
  $('window-fig').hidden = !wt;
  if (wt) drawWindowTrace($('window-canvas'), wt);
  if (run.summary) renderTable(run);
  renderCost(run);
  if (!run.finished && performance.now() - (run.diag?.last ?? 0) > DIAG_MS) requestDiag(run);
}

/** The run's convergence warnings (the lines `tallmc run` prints), or none. */
function showWarnings(lines) {
  const ul = $('warnings');
  ul.replaceChildren(...lines.map((l) => {
    const li = document.createElement('li');
    li.textContent = `Warning: ${l}`;
    return li;
  }));
  ul.hidden = lines.length === 0;
}

function renderTable(run) {
  const s = run.summary;
  const cols = ['mean', 'sd', 'q5', null, 'q95', 'mcse_mean', 'ess_bulk', 'ess_tail', 'rhat'];
  const tbody = $('diagnostics').querySelector('tbody');
  const rows = [];
  for (let j = 0; j < run.d; j++) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = run.names[j];
    tr.append(th);
    cols.forEach((col, k) => {
      if (!col) return;
      const v = s[j * 9 + k];
      const td = document.createElement('td');
      td.dataset.col = col;
      td.dataset.value = String(v);
      td.textContent = col.startsWith('ess') ? (Number.isFinite(v) ? v.toFixed(0) : 'NaN') : fmt(v, col === 'rhat' ? 4 : 4);
      if ((col === 'rhat' && !(v < 1.01)) || (col.startsWith('ess') && !(v > 100))) td.className = 'bad';
      tr.append(td);
    });
    rows.push(tr);
  }
  tbody.replaceChildren(...rows);
}

/** Longer names of some sampler internals in the cost panel. */
const EXTRA_LABELS = {
  u_accept: 'acceptance of the u-block refresh (u_accept)',
  n_batches: 'block-Poisson mini-batches (n_batches)',
  points: 'points processed (points)',
  batch_size: 'batch size (batch_size)',
  ess_min: 'minimum filter ESS (ess_min)',
  ess_mean: 'mean filter ESS (ess_mean)',
  refreshed_block: 'refreshed block of u, −1 = refresh rejected (refreshed_block)',
};

/** Internals that are labels, not quantities: plotted per iteration, never averaged. */
const CATEGORICAL_EXTRAS = new Set(['refreshed_block', 'window_start']);

/** Cost-panel rows for the kernel extras that have a plot (post warm-up means). */
function extraRows(run, accN) {
  const rows = [];
  const means = run.client.extraMeans();
  const mean = (k) => (accN ? means[k] : NaN);
  if (run.fracIdx >= 0) rows.push(['mean subsample fraction per iteration (post warm-up)', fmt(mean(run.fracIdx), 3)]);
  if (run.sigma2Idx >= 0) rows.push(['mean σ̂² of the log-likelihood estimator (post warm-up)', fmt(mean(run.sigma2Idx), 3)]);
  // Every other sampler internal: its post-warm-up mean per iteration.
  (run.extraNames ?? []).slice(0, EXTRAS).forEach((name, k) => {
    if (k === run.fracIdx || k === run.sigma2Idx || CATEGORICAL_EXTRAS.has(name)) return;
    rows.push([`mean ${EXTRA_LABELS[name] ?? name} per iteration (post warm-up)`, fmt(mean(k), 3)]);
  });
  if (run.signed) {
    let pos = 0;
    let all = 0;
    for (const c of run.chains) {
      const v = c.signs.view();
      for (let i = 0; i < v.length; i++) if (v[i] > 0) pos++;
      all += v.length;
    }
    rows.push(['fraction of positive signs τ̂ (post warm-up)', fmt(all ? pos / all : NaN, 3)]);
  }
  return rows;
}

function renderCost(run) {
  const end = run.finished ? run.endTime : performance.now();
  const wall = Math.max(1e-3, (end - run.started - run.pausedMs - (run.paused ? performance.now() - run.pauseStart : 0)) / 1000);
  const lik = run.chains.reduce((s, c) => s + c.lik, 0);
  const grad = run.chains.reduce((s, c) => s + c.grad, 0);
  const iters = run.chains.reduce((s, c) => s + c.iteration, 0);
  const div = run.chains.reduce((s, c) => s + c.div, 0);
  const accN = run.chains.reduce((s, c) => s + c.accN, 0);
  const acc = run.chains.reduce((s, c) => s + c.acc, 0);
  let minEss = NaN;
  if (run.summary) {
    for (let j = 0; j < run.d; j++) {
      const e = run.summary[j * 9 + 6];
      if (!(e >= minEss)) minEss = e;
    }
  }
  const likS = run.chains.reduce((s, c) => s + c.likS, 0);
  const gradS = run.chains.reduce((s, c) => s + c.gradS, 0);
  const passes = run.nData ? Math.max(lik, grad) / run.nData : NaN;
  const fraction = accN && run.nData ? Math.max(likS, gradS) / run.nData / accN : NaN;
  const rows = [
    ['wall time', `${wall.toFixed(1)} s`],
    ['iterations (all chains)', String(iters)],
    ['likelihood evaluations (per datum, total)', lik.toExponential(3)],
    ['gradient evaluations (per datum, total)', grad.toExponential(3)],
    ['full-data passes (total)', fmt(passes, 4)],
    ['data fraction per kept iteration', fmt(fraction, 3)],
    ...extraRows(run, accN),
    ['mean acceptance (post warm-up)', fmt(accN ? acc / accN : NaN, 3)],
    ['divergences (post warm-up)', String(div)],
    ['min bulk ESS', fmt(minEss, 4)],
    ['min bulk ESS / s (wall)', fmt(minEss / wall, 4)],
    ['min bulk ESS / 1000 gradient evals (sampling)', fmt(gradS > 0 ? (1000 * minEss) / gradS : NaN, 4)],
    ['min bulk ESS / full-data pass (sampling)', fmt(likS + gradS > 0 && run.nData ? minEss / (Math.max(likS, gradS) / run.nData) : NaN, 4)],
  ];
  $('cost').querySelector('tbody').replaceChildren(...rows.map(([k, v]) => {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = k;
    const td = document.createElement('td');
    td.textContent = v;
    tr.append(th, td);
    return tr;
  }));
}

// ------------------------------------------------------------------------------------------------
// Export

function download(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

/** Post-warm-up draws as CSV: chain,draw,<params>[,sign]. */
export function drawsCsv() {
  const run = state.run;
  if (!run || !run.d) return '';
  const out = [['chain', 'draw', ...run.names, ...(run.signed ? ['sign'] : [])].join(',')];
  for (const ch of run.chains) {
    const n = Math.max(0, ch.draws.length / ch.d - ch.warmup);
    for (let i = 0; i < n; i++) {
      const row = ch.draws.buf.subarray((ch.warmup + i) * ch.d, (ch.warmup + i + 1) * ch.d);
      const cells = [ch.c, i, ...Array.from(row, String)];
      if (run.signed) cells.push(String(ch.signs.buf[i]));
      out.push(cells.join(','));
    }
  }
  return out.join('\n') + '\n';
}

/** The summary as CSV: param,mean,sd,q5,q50,q95,mcse_mean,ess_bulk,ess_tail,rhat. */
export function summaryCsv() {
  const run = state.run;
  if (!run || !run.summary) return '';
  const out = ['param,mean,sd,q5,q50,q95,mcse_mean,ess_bulk,ess_tail,rhat'];
  for (let j = 0; j < run.d; j++) {
    out.push([run.names[j], ...Array.from(run.summary.subarray(j * 9, j * 9 + 9), String)].join(','));
  }
  return out.join('\n') + '\n';
}

// ------------------------------------------------------------------------------------------------
// Wiring

$('dataset').addEventListener('change', () => { clearError(); onDatasetChange(true); });
$('sim-d').addEventListener('change', () => onDatasetChange(false));
$('file').addEventListener('change', onFile);
$('model').addEventListener('change', onModelChange);
$('sampler').addEventListener('change', onSamplerChange);
$('response').addEventListener('change', () => { syncFeatureDisable(); updateShare(); });
for (const id of ['sim-n', 'chains', 'warmup', 'draws', 'seed', 'intercept', 'standardize']) $(id).addEventListener('change', updateShare);
$('run').addEventListener('click', startRun);
$('stop').addEventListener('click', () => stopRun(false));
$('pause').addEventListener('click', togglePause);
for (const id of ['param', 'pair-x', 'pair-y', 'extra']) {
  $(id).addEventListener('change', () => {
    if (state.run) {
      if (id === 'extra') state.run.extraAuto = false;
      if (id === 'param') requestDiag(state.run, state.run.finished);
      renderNow();
    }
  });
}
$('export-draws').addEventListener('click', () => download('draws.csv', drawsCsv()));
$('export-summary').addEventListener('click', () => download('summary.csv', summaryCsv()));
$('share').addEventListener('click', (e) => {
  e.preventDefault();
  updateShare();
  history.replaceState(null, '', $('share').href);
  navigator.clipboard?.writeText(location.href).catch(() => {});
});

// A small read-only view for tests and the console.
window.tallmc = {
  get state() { return document.body.dataset.state ?? 'idle'; },
  get registry() { return state.registry; },
  iterations: () => state.run?.chains.map((c) => c.iteration) ?? [],
  /** Per chain, the iteration at which its worker acknowledged a pause (null: not paused). */
  pausedAt: () => state.run?.chains.map((c) => c.pausedAt ?? null) ?? [],
  computeMs: () => state.run?.chains.map((c) => c.computeMs) ?? [],
  /** Per chain: starting, running, done, stopped or error. */
  chainStatus: () => state.run?.chains.map((c) => c.status) ?? [],
  /** Test hook: chain c's worker dies of an uncaught error. */
  crashChain: (c) => state.run?.client.chains[c]?.worker.postMessage({ type: 'crash' }),
  drawsCsv,
  summaryCsv,
  compare: compareState,
};

// Compare mode (compare.js): several sampler configurations on the same data.
initCompare({ readForm, getData, askData, samplerInfo, modelInfo, showError, params });

dataWorker.postMessage({ type: 'registry' });
