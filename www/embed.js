// Embeddable live samplers for documentation pages: one `<script type="module">` and an element.
//
//   <script type="module" src="/embed.js"></script>
//   <tallmc-sampler model="logistic" sampler="hmc-ecs" data="builtin:logistic" n="5000" d="4"
//                   chains="2" warmup="500" draws="1000" seed="1"></tallmc-sampler>
//
// <tallmc-sampler> renders a compact panel (run/stop, trace, density, the sampler's internals per
// iteration, a diagnostics table) and runs its chains in its own Web Workers (one per chain, plus
// one for diagnostics), so several elements on a page run independently. See `TallmcSampler`.
//
// <tallmc-chain> (the first, single-chain widget; on the same run client and canvas plots):
//   <tallmc-chain model="logistic" sampler="nuts" n="2000" d="3" warmup="500" draws="1000"
//                 seed="1" param="1"></tallmc-chain>
//
// Attributes of <tallmc-chain>: model, sampler, n, d (simulated data set), warmup, draws, seed, param (index),
// settings (JSON object of sampler/model settings), autostart (present: run on load). Events: `tallmc-done`
// (detail: { name, mean, sd, draws, iterations } of the shown parameter) and `tallmc-error` (detail: { message }).
import wasmInit, { samplers as samplersJson, models as modelsJson } from './pkg/tallmc_web.js';
import { densities } from './density.js';
import { ChainRun, Diagnostics, tooLarge } from './run-client.js';
import { formatNumber } from './format.js';
import { drawLines, drawDensity } from './canvas-plots.js';

export class TallmcChain extends HTMLElement {
  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = `<style>
      :host { display: inline-block; font: 13px system-ui, sans-serif; border: 1px solid #dde2ea;
              border-radius: 6px; padding: 6px; background: #fff; }
      canvas { display: block; }
      .row { display: flex; gap: 8px; align-items: center; margin-top: 4px; }
      .err { color: #b42318; }
    </style>
    <canvas width="360" height="120"></canvas>
    <div class="row"><button type="button">Run</button><span class="out"></span></div>`;
    this.canvas = root.querySelector('canvas');
    this.out = root.querySelector('.out');
    this.button = root.querySelector('button');
    this.button.addEventListener('click', () => (this.client ? this.stop() : this.start()));
    if (this.hasAttribute('autostart')) this.start();
  }

  disconnectedCallback() {
    this.stop();
  }

  attr(name, dflt) {
    return this.getAttribute(name) ?? dflt;
  }

  start() {
    const model = this.attr('model', 'logistic');
    let settings = {};
    try {
      settings = JSON.parse(this.attr('settings', '{}'));
    } catch {
      this.fail('settings: not valid JSON');
      return;
    }
    const config = {
      model, sampler: this.attr('sampler', 'nuts'), response: 'y', features: null, intercept: true,
      standardize: false, warmup: Number(this.attr('warmup', '500')), settings, seed: this.attr('seed', '1'), chain: 0,
    };
    this.values = [];
    this.param = Number(this.attr('param', '0'));
    this.client = new ChainRun({
      chains: 1,
      // d is known only in the worker: 1 is a lower bound (the worker's ready checks the rest).
      plan: { total: config.warmup + Number(this.attr('draws', '1000')), dim: 1, exact: false },
      start: () => ({
        msg: {
          type: 'start', config, draws: Number(this.attr('draws', '1000')),
          simulate: { model, n: Number(this.attr('n', '2000')), d: Number(this.attr('d', '3')), seed: this.attr('data-seed', '1') },
        },
      }),
      onReady: (ch, m) => this.onMessage(m),
      onBatch: (ch, b, m) => this.onMessage(m),
      onError: (ch, msg) => this.fail(msg),
      onEnd: (r) => {
        const ch = r.chains[0];
        this.draw(ch.iteration, true);
        this.stop();
        if (ch.status === 'done') this.dispatchEvent(new CustomEvent('tallmc-done', { detail: this.summary(ch.iteration) }));
      },
    });
    this.button.textContent = 'Stop';
    this.out.className = 'out';
    this.out.textContent = 'starting…';
  }

  stop() {
    if (!this.client) return;
    this.client.terminate();
    this.client = null;
    this.button.textContent = 'Run';
  }

  fail(msg) {
    this.stop();
    this.out.className = 'out err';
    this.out.textContent = msg;
    this.dispatchEvent(new CustomEvent('tallmc-error', { detail: { message: msg } }));
  }

  /** The shown parameter's post-warm-up mean and sd (the `tallmc-done` event's detail). */
  summary(iteration) {
    const post = this.values.slice(this.warmup);
    const mean = post.reduce((a, x) => a + x, 0) / post.length;
    const sd = Math.sqrt(post.reduce((a, x) => a + (x - mean) ** 2, 0) / (post.length - 1));
    return { name: this.name, mean, sd, draws: post.length, iterations: iteration };
  }

  onMessage(m) {
    if (m.type === 'ready') {
      this.d = m.dim;
      this.name = m.paramNames[Math.min(this.param, m.dim - 1)];
      this.warmup = m.warmup;
      return undefined;
    }
    if (m.type === 'batch') {
      const b = m.batch;
      const j = Math.min(this.param, b.d - 1);
      for (let i = 0; i < b.n; i++) this.values.push(b.draws[i * b.d + j]);
      this.draw(m.iteration);
    }
    return undefined;
  }

  draw(iteration, final = false) {
    const v = this.values;
    if (!v.length) return;
    drawLines(this.canvas, [{ length: v.length, get: (i) => v[i] }], this.warmup);
    const post = v.slice(this.warmup);
    if (post.length > 1) {
      const mean = post.reduce((a, x) => a + x, 0) / post.length;
      const sd = Math.sqrt(post.reduce((a, x) => a + (x - mean) ** 2, 0) / (post.length - 1));
      this.out.textContent = `${this.name}: ${mean.toPrecision(4)} ± ${sd.toPrecision(3)} (${post.length} draws${final ? '' : ', running'})`;
    } else {
      this.out.textContent = `${this.name}: warm-up ${iteration}/${this.warmup}`;
    }
  }
}

if (!customElements.get('tallmc-chain')) customElements.define('tallmc-chain', TallmcChain);

// ------------------------------------------------------------------------------------------------
// <tallmc-sampler>

let registryPromise = null;
/** The sampler and model registries from the wasm build (loaded once per page). */
export function registry() {
  registryPromise ??= wasmInit().then(() => ({
    samplers: JSON.parse(samplersJson()),
    models: JSON.parse(modelsJson()),
  }));
  return registryPromise;
}

/** Attributes the element reads itself; any other attribute naming a sampler or model setting is a setting. */
const OWN_ATTRS = new Set(['model', 'sampler', 'data', 'n', 'd', 'data-seed', 'chains', 'warmup', 'draws',
  'seed', 'param', 'response', 'intercept', 'standardize', 'settings', 'autostart', 'extra', 'label']);
/** Global HTML attributes, never settings (besides data-*, aria-* and on* handlers). */
const HTML_ATTRS = new Set(['id', 'class', 'style', 'title', 'hidden', 'slot', 'part', 'lang', 'dir', 'tabindex', 'role', 'is', 'translate', 'inert']);
/** Which per-iteration internal to show first (the sampler's own choice: its `extra` attribute). */
const PREFERRED = ['points', 'batch_size', 'sign', 'ess_min', 'ess_mean', 'sigma2', 'n_batches', 'data_fraction', 'u_accept'];
const RENDER_MS = 200;
const DIAG_MS = 1200;
const MAX_CHAINS = 8;

const fmt = (v, p = 3) => formatNumber(v, { digits: p, missing: '–' });

const TEMPLATE = `<style>
  :host { display: block; font: 13px/1.35 system-ui, sans-serif; border: 1px solid #dde2ea; border-radius: 6px;
          padding: 8px; background: #fff; color: #1a202c; max-width: 560px; margin: 0.6rem 0; }
  .head { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; }
  .title { font-weight: 600; }
  .status { color: #4a5568; margin-left: auto; }
  .status.err { color: #b42318; }
  .plots { display: flex; gap: 6px; margin-top: 6px; }
  canvas { display: block; border: 1px solid #edf0f5; border-radius: 3px; }
  .cap { font-size: 11px; color: #5b6577; display: flex; gap: 6px; align-items: center; margin-top: 4px; }
  table { border-collapse: collapse; margin-top: 6px; font-variant-numeric: tabular-nums; }
  th, td { padding: 1px 8px 1px 0; text-align: right; }
  th:first-child { text-align: left; }
  thead th { color: #5b6577; font-weight: 500; border-bottom: 1px solid #dde2ea; }
  tbody tr { cursor: pointer; }
  tbody tr.sel th { color: #2b6cb0; }
  .stats { margin-top: 4px; color: #2d3748; font-size: 12px; }
  .warnings { margin: 4px 0 0; padding-left: 16px; color: #9c4221; font-size: 12px; }
  button { font: inherit; padding: 2px 10px; }
  progress { width: 110px; }
  select { font: inherit; font-size: 11px; }
</style>
<div class="head"><button type="button" data-testid="embed-run" part="button">Run</button>
  <span class="title" part="title"></span><progress max="100" value="0" data-testid="embed-progress"></progress>
  <span class="status" data-testid="embed-status" role="status"></span></div>
<div class="plots">
  <div><canvas class="trace" width="330" height="110" data-testid="embed-trace"></canvas><div class="cap trace-cap">trace</div></div>
  <div><canvas class="dens" width="190" height="110" data-testid="embed-density"></canvas><div class="cap dens-cap">density (post warm-up)</div></div>
</div>
<div class="internals" hidden><canvas class="extra" width="526" height="70" data-testid="embed-internals"></canvas>
  <div class="cap">per iteration: <select class="extra-sel" aria-label="sampler internal"></select><span class="extra-note"></span></div></div>
<table data-testid="embed-diagnostics"><thead><tr><th>param</th><th>mean</th><th>sd</th><th>ESS bulk</th><th>R-hat</th></tr></thead><tbody></tbody></table>
<div class="stats" data-testid="embed-stats"></div>
<ul class="warnings" data-testid="embed-warnings" part="warnings" role="alert" hidden></ul>`;

/**
 * `<tallmc-sampler>`: a live sampler panel.
 *
 * Attributes (all optional):
 * - `model` (default: the built-in data set's model, else `logistic`), `sampler` (`nuts`);
 * - `data`: `builtin:<model>` (simulated in each chain's worker, `n` rows, `d` columns including
 *   the intercept, `data-seed`) or a CSV URL on the page's own origin (fetched once, parsed in the
 *   workers by the same parser as `tallmc run`); `response` (`y`), `intercept` (`false` to drop);
 * - `chains` (2), `warmup` (500), `draws` (1000), `seed` (1);
 * - `param`: the parameter shown first (name or index; default the first slope);
 * - `extra`: the sampler internal plotted per iteration (default: the most telling one);
 * - sampler and model settings, either as attributes named like the setting (case-insensitive:
 *   `step_size="0.05"`, `m="200"`) or as a JSON object in `settings`;
 * - `autostart`: run when attached; `label`: the panel's title.
 *
 * State for scripts and tests: `data-state` = idle | starting | running | done | stopped | error |
 * unavailable (the sampler is not in this build's registry); `result` (after a run: names, mean,
 * sd, essBulk, rhat, acceptance, dataFraction, extraMeans, wallMs, warnings — the CLI's convergence
 * warnings, also listed under the panel —, …); events `tallmc-done` and
 * `tallmc-error`. Methods `start()` and `stop()`.
 */
export class TallmcSampler extends HTMLElement {
  /** Summary of the last finished run (null before one and while one runs). */
  result = null;

  connectedCallback() {
    if (this.shadowRoot) return;
    const root = this.attachShadow({ mode: 'open' });
    root.innerHTML = TEMPLATE;
    const q = (s) => root.querySelector(s);
    this.ui = {
      button: q('button'), title: q('.title'), progress: q('progress'), status: q('.status'),
      trace: q('.trace'), dens: q('.dens'), traceCap: q('.trace-cap'), densCap: q('.dens-cap'),
      internals: q('.internals'), extra: q('.extra'), extraSel: q('.extra-sel'), extraNote: q('.extra-note'),
      tbody: q('tbody'), stats: q('.stats'), warnings: q('.warnings'),
    };
    this.ui.button.addEventListener('click', () => (this.running ? this.stop() : this.start()));
    this.ui.extraSel.addEventListener('change', () => { if (this.run) this.run.extraAuto = false; this.render(); });
    this.ui.tbody.addEventListener('click', (e) => {
      const tr = e.target.closest('tr');
      if (tr && this.run) { this.run.j = Number(tr.dataset.j); this.render(); }
    });
    this.setState('idle');
    this.ui.title.textContent = this.getAttribute('label') ?? `${this.getAttribute('sampler') ?? 'nuts'} · ${this.getAttribute('model') ?? this.builtinName() ?? 'logistic'}`;
    registry().then((reg) => {
      const name = this.getAttribute('sampler') ?? 'nuts';
      if (!reg.samplers.some((s) => s.name === name)) {
        this.setState('unavailable');
        this.status(`sampler “${name}” is not in this build yet`, true);
        this.ui.button.disabled = true;
      } else if (this.hasAttribute('autostart') && !this.run) {
        this.start();
      }
    }, (e) => this.fail(`could not load tallmc: ${e.message ?? e}`));
  }

  disconnectedCallback() {
    this.stop(true);
  }

  get running() {
    return !!this.run && !this.run.finished;
  }

  builtinName() {
    const data = this.getAttribute('data');
    if (data === null) return null;
    return data.startsWith('builtin:') ? data.slice(8) : null;
  }

  setState(s) {
    this.dataset.state = s;
  }

  status(text, err = false) {
    this.ui.status.textContent = text;
    this.ui.status.className = err ? 'status err' : 'status';
  }

  fail(msg) {
    this.stop(true);
    this.status(msg, true);
    this.setState('error');
    this.dispatchEvent(new CustomEvent('tallmc-error', { detail: { message: msg } }));
  }

  /** The chain configuration and data source from the attributes (throws a message on bad input). */
  async readConfig() {
    const reg = await registry();
    const a = (k, d) => this.getAttribute(k) ?? d;
    const int = (k, d, lo, hi) => {
      const v = Number(a(k, String(d)));
      if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`${k}: expected a whole number in [${lo}, ${hi}], got "${a(k, '')}"`);
      return v;
    };
    const builtin = this.builtinName() ?? (this.hasAttribute('data') ? null : (a('model', 'logistic')));
    const model = a('model', builtin ?? 'logistic');
    const sampler = a('sampler', 'nuts');
    const sInfo = reg.samplers.find((s) => s.name === sampler);
    if (!sInfo) throw Object.assign(new Error(`sampler “${sampler}” is not in this build yet`), { unavailable: true });
    const mInfo = reg.models.find((m) => m.name === model);
    let settings;
    try {
      settings = JSON.parse(a('settings', '{}'));
    } catch {
      throw new Error('settings: not a JSON object');
    }
    if (!settings || typeof settings !== 'object' || Array.isArray(settings)) throw new Error('settings: not a JSON object');
    const specs = [...sInfo.params, ...(mInfo?.params ?? [])];
    for (const attr of this.getAttributeNames()) {
      if (OWN_ATTRS.has(attr) || HTML_ATTRS.has(attr) || /^(data-|aria-|on)/.test(attr)) continue;
      const p = specs.find((s) => s.key.toLowerCase() === attr);
      // An attribute that is neither the element's nor a setting is a mistake: say so rather than
      // silently run something else.
      if (!p) throw new Error(`attribute “${attr}” is not a setting of ${sampler} or ${model} (settings: ${specs.map((s) => s.key).join(', ') || 'none'})`);
      if (!(p.key in settings)) settings[p.key] = this.getAttribute(attr);
    }
    const seed = a('seed', '1').trim();
    if (!/^\d+$/.test(seed)) throw new Error(`seed: expected a whole number ≥ 0, got "${seed}"`);
    const cfg = {
      model, sampler, response: a('response', 'y'), features: null,
      intercept: a('intercept', 'true') !== 'false', standardize: a('standardize', 'false') === 'true',
      warmup: int('warmup', 500, 0, 1e7), settings, seed,
    };
    const source = builtin !== null
      ? { kind: 'builtin', model: builtin, n: int('n', 2000, 10, 5e6), d: int('d', 3, 1, 200), seed: a('data-seed', '1') }
      : { kind: 'csv', url: a('data', '') };
    return { cfg, source, chains: int('chains', 2, 1, MAX_CHAINS), draws: int('draws', 1000, 1, 1e7), sInfo };
  }

  /** The CSV bytes of a same-origin URL (cached per element). */
  async fetchCsv(url) {
    const u = new URL(url, document.baseURI);
    if (u.origin !== location.origin) throw new Error(`data: ${u.href} is not on this page's origin; tallmc only reads same-origin files`);
    if (this.csvCache?.href === u.href) return this.csvCache;
    const r = await fetch(u.href, { credentials: 'same-origin' });
    if (!r.ok) throw new Error(`data: ${u.pathname}: HTTP ${r.status}`);
    const bytes = await r.arrayBuffer();
    this.csvCache = { href: u.href, bytes, name: u.pathname.split('/').pop() || 'data.csv' };
    return this.csvCache;
  }

  async start() {
    if (this.running) return;
    this.stop(true);
    this.setState('starting');
    this.status('starting…');
    this.ui.button.textContent = 'Stop';
    let conf;
    let csv = null;
    try {
      conf = await this.readConfig();
      if (conf.source.kind === 'csv') csv = await this.fetchCsv(conf.source.url);
    } catch (e) {
      this.ui.button.textContent = 'Run';
      if (e.unavailable) {
        this.setState('unavailable');
        this.status(e.message, true);
        return;
      }
      this.fail(e.message ?? String(e));
      return;
    }
    if (!this.hasAttribute('label')) this.ui.title.textContent = `${conf.cfg.sampler} · ${conf.cfg.model}`;
    const run = {
      conf, finished: false, started: performance.now(), end: 0, d: 0, names: [], signed: false, nData: 0,
      extraNames: [], chains: [], summary: null, final: false, j: -1,
    };
    // The page's estimate before any worker (d is known only in the worker: 1 is a lower
    // bound; the first chain's ready message checks the exact size).
    const plan = { total: conf.cfg.warmup + conf.draws, dim: 1, exact: false };
    const refusal = tooLarge(plan, conf.chains);
    if (refusal) {
      this.ui.button.textContent = 'Run';
      this.fail(refusal);
      return;
    }
    this.run = run;
    this.showWarnings([]);
    this.result = null;
    // Its own diagnostics worker (the run client creates it when the first chain is ready).
    run.diag = new Diagnostics({
      onMessage: (m) => this.onDiag(run, m),
      onWorkerError: (e) => this.fail(`diagnostics worker: ${e.message ?? 'failed'}`),
    });
    run.client = new ChainRun({
      chains: conf.chains,
      plan,
      start: (c) => {
        const msg = { type: 'start', config: { ...conf.cfg, chain: c }, draws: conf.draws };
        if (conf.source.kind === 'builtin') {
          msg.simulate = { model: conf.source.model, n: conf.source.n, d: conf.source.d, seed: conf.source.seed };
          return { msg };
        }
        const bytes = csv.bytes.slice(0);
        msg.csv = { bytes, name: csv.name };
        return { msg, transfer: [bytes] };
      },
      onReady: (ch, m) => this.onReady(run, ch, m),
      onBatch: (ch, b) => this.onBatch(run, ch, b),
      onError: (ch, msg) => {
        if (this.run === run && !run.finished) this.fail(run.chains.length > 1 ? `chain ${ch.c + 1}: ${msg}` : msg);
      },
      onEnd: () => this.finish(run),
    });
    run.chains = run.client.chains;
    // what this panel keeps per chain (the run client keeps the totals)
    for (const ch of run.chains) {
      Object.assign(ch, { total: conf.cfg.warmup + conf.draws, warmup: conf.cfg.warmup, draws: [], extra: [], sign: [], n: 0 });
    }
    this.setState('running');
    this.scheduleRender();
  }

  /** Stop every chain of the current run (`quiet`: no final diagnostics, e.g. on removal). */
  stop(quiet = false) {
    const run = this.run;
    if (!run) return;
    if (run.finished) {
      if (quiet) this.cleanup(run);
      return;
    }
    if (quiet) {
      run.quiet = true;
      run.client.terminate();
      this.finish(run);
      return;
    }
    // stopped chains end the run; what does not answer is terminated after a grace period
    run.client.stop();
  }

  cleanup(run) {
    run.diag?.terminate();
    run.diag = null;
  }

  onReady(run, ch, m) {
    if (this.run !== run || run.finished) return;
    if (!run.d) {
      const meta = run.client.meta;
      run.d = meta.d;
      run.names = meta.names;
      run.signed = meta.signed;
      run.nData = meta.nData;
      run.extras = meta.extras;
      run.extraNames = meta.extraNames;
      const want = this.getAttribute('param');
      const byName = run.names.indexOf(want ?? '');
      run.j = byName >= 0 ? byName : (want !== null && /^\d+$/.test(want) ? Math.min(run.d - 1, Number(want)) : Math.min(1, run.d - 1));
      this.setupInternals(run);
      run.diag.reset({ chains: run.chains.length, d: run.d, signed: run.signed });
    }
  }

  onBatch(run, ch, b) {
    if (this.run !== run || run.finished) return;
    ch.draws.push(b.draws);
    ch.n += b.n;
    if (b.extra && b.extra.length === b.n * run.extras) ch.extra.push(b.extra);
    ch.sign.push(b.sign);
    const nw = b.nWarmup;
    if (nw < b.n) {
      const post = b.draws.slice(nw * b.d);
      const signs = b.sign.slice(nw);
      run.diag?.push(ch.c, post, run.signed ? signs : null, true);
    }
    this.scheduleRender();
  }

  finish(run) {
    if (run.finished) return;
    run.finished = true;
    run.end = performance.now();
    this.ui.button.textContent = 'Run';
    const ok = run.chains.every((c) => c.status === 'done');
    if (run.quiet || !run.d || run.chains.some((c) => c.status === 'error')) {
      this.cleanup(run);
      if (this.dataset.state !== 'error') this.setState('stopped');
      this.render();
      return;
    }
    if (!run.chains.some((c) => c.accN > 0)) {
      // Stopped in warm-up: nothing to summarise.
      this.cleanup(run);
      this.setState('stopped');
      this.status('stopped in warm-up');
      this.render();
      return;
    }
    this.status(ok ? 'computing diagnostics…' : 'stopped; computing diagnostics…');
    run.okFinish = ok;
    this.requestDiag(run, true);
    this.render();
  }

  requestDiag(run, final = false) {
    // the final summary carries the CLI's convergence warnings (R-hat, ESS, divergences, stuck)
    run.diag?.request({ final, names: run.names, divergent: run.chains.map((c) => c.div) });
  }

  onDiag(run, m) {
    if (this.run !== run) return;
    if (m.type === 'error') {
      this.fail(`diagnostics: ${m.message}`);
      return;
    }
    if (m.id !== 'final' && run.finished) return;
    run.summary = m.summary;
    if (m.id === 'final') {
      run.final = true;
      run.warnings = m.warnings ?? [];
      this.cleanup(run);
      this.result = this.collect(run);
      this.showWarnings(run.warnings);
      this.render();
      this.setState(run.okFinish ? 'done' : 'stopped');
      this.dispatchEvent(new CustomEvent('tallmc-done', { detail: this.result }));
    } else {
      this.scheduleRender();
    }
  }

  /** Summary numbers of a finished run (what `result` exposes). */
  collect(run) {
    const s = run.summary;
    const col = (k) => run.names.map((_, j) => s[j * 9 + k]);
    const accN = run.chains.reduce((t, c) => t + c.accN, 0);
    const extraMeans = {};
    const means = run.client.extraMeans();
    run.extraNames.forEach((n, k) => { extraMeans[n] = means[k]; });
    if (run.signed) extraMeans.sign = accN ? 2 * run.chains.reduce((t, c) => t + c.signPos, 0) / accN - 1 : NaN;
    const likS = run.chains.reduce((t, c) => t + c.likS, 0);
    const gradS = run.chains.reduce((t, c) => t + c.gradS, 0);
    return {
      sampler: run.conf.cfg.sampler, model: run.conf.cfg.model, names: run.names,
      mean: col(0), sd: col(1), q5: col(2), q95: col(4), essBulk: col(6), essTail: col(7), rhat: col(8),
      acceptance: accN ? run.chains.reduce((t, c) => t + c.acc, 0) / accN : NaN,
      dataFraction: accN && run.nData ? Math.max(likS, gradS) / run.nData / accN : NaN,
      likEvalsPerIter: accN ? likS / accN : NaN, gradEvalsPerIter: accN ? gradS / accN : NaN,
      extraMeans, tau: run.signed ? extraMeans.sign * 0.5 + 0.5 : undefined,
      iterations: run.chains.map((c) => c.iteration), draws: accN, nData: run.nData,
      wallMs: run.end - run.started, warnings: run.warnings ?? [],
    };
  }

  /** The run's convergence warnings (the lines `tallmc run` prints), or none. */
  showWarnings(lines) {
    const ul = this.ui.warnings;
    ul.replaceChildren(...lines.map((l) => {
      const li = document.createElement('li');
      li.textContent = `Warning: ${l}`;
      return li;
    }));
    ul.hidden = lines.length === 0;
  }

  setupInternals(run) {
    const opts = [...run.extraNames, ...(run.signed ? ['sign'] : [])];
    const sel = this.ui.extraSel;
    sel.replaceChildren(...opts.map((n) => new Option(n, n)));
    const want = this.getAttribute('extra');
    const pick = (want && opts.includes(want)) ? want
      : (PREFERRED.find((p) => opts.includes(p)) ?? opts.find((o) => /ess/.test(o)) ?? opts[0]);
    if (pick) sel.value = pick;
    // An automatic choice moves on if the sampler leaves that internal empty (NaN) in this run.
    run.extraAuto = !(want && opts.includes(want));
    this.ui.internals.hidden = opts.length === 0;
  }

  scheduleRender() {
    if (this.renderTimer) return;
    this.renderTimer = setTimeout(() => {
      this.renderTimer = null;
      this.render();
    }, RENDER_MS);
  }

  render() {
    const run = this.run;
    if (!run) return;
    const total = run.chains.reduce((t, c) => t + c.total, 0);
    const done = run.chains.reduce((t, c) => t + c.iteration, 0);
    this.ui.progress.value = total ? (100 * done) / total : 0;
    if (!run.d) return;
    const j = run.j;
    const name = run.names[j];
    // Trace (all iterations; warm-up shaded) and post-warm-up density of parameter j.
    const series = run.chains.map((ch) => this.column(ch, (b, i) => b.draws[i * run.d + j], 'draws'));
    drawLines(this.ui.trace, series, run.chains[0]?.warmup ?? 0);
    this.ui.traceCap.textContent = `trace of ${name} (${run.chains.length} chain${run.chains.length > 1 ? 's' : ''})`;
    const post = run.chains.map((ch, c) => ({ length: Math.max(0, series[c].length - ch.warmup), get: (i) => series[c].get(i + ch.warmup) }));
    drawDensity(this.ui.dens, densities(post.length > 1 ? [{ length: post.reduce((t, p) => t + p.length, 0), get: concatGet(post) }] : post));
    this.ui.densCap.textContent = `density of ${name} (post warm-up)`;
    // Sampler internals per iteration.
    let ex = this.ui.extraSel.value;
    if (ex && run.extraAuto && ex !== 'sign' && run.chains.some((ch) => ch.extra.length)) {
      const has = (name) => {
        const k = run.extraNames.indexOf(name);
        return k >= 0 && run.chains.some((ch) => ch.extra.some((b) => {
          for (let i = k; i < b.length; i += run.extras) if (Number.isFinite(b[i])) return true;
          return false;
        }));
      };
      if (!has(ex)) {
        const alt = run.extraNames.find(has);
        if (alt) this.ui.extraSel.value = ex = alt;
      }
      run.extraAuto = false;
    }
    if (ex) {
      const k = run.extraNames.indexOf(ex);
      const ys = run.chains.map((ch) => (ex === 'sign'
        ? this.column(ch, (b, i) => b.sign[i], 'sign')
        : this.column(ch, (b, i) => b.extra[i * run.extras + k], 'extra')));
      drawLines(this.ui.extra, ys, run.chains[0]?.warmup ?? 0, true);
      const accN = run.chains.reduce((t, c) => t + c.accN, 0);
      const mean = ex === 'sign'
        ? (accN ? run.chains.reduce((t, c) => t + c.signPos, 0) / accN : NaN)
        : run.client.extraMeans()[k];
      this.ui.extraNote.textContent = ex === 'sign'
        ? ` · fraction of positive signs τ̂ = ${fmt(mean)} (post warm-up)`
        : ` · mean ${fmt(mean)} per iteration (post warm-up)`;
    }
    // Diagnostics table.
    if (run.summary) {
      const s = run.summary;
      const rows = run.names.map((n, i) => {
        const tr = document.createElement('tr');
        tr.dataset.j = String(i);
        if (i === j) tr.className = 'sel';
        const th = document.createElement('th');
        th.textContent = n;
        tr.append(th);
        for (const [k, col] of [[0, 'mean'], [1, 'sd'], [6, 'ess_bulk'], [8, 'rhat']]) {
          const td = document.createElement('td');
          const v = s[i * 9 + k];
          td.dataset.col = col;
          td.dataset.value = String(v);
          td.textContent = col === 'ess_bulk' ? (Number.isFinite(v) ? v.toFixed(0) : '–') : fmt(v, col === 'rhat' ? 4 : 3);
          tr.append(td);
        }
        return tr;
      });
      this.ui.tbody.replaceChildren(...rows);
    }
    // Cost and acceptance line.
    const accN = run.chains.reduce((t, c) => t + c.accN, 0);
    const likS = run.chains.reduce((t, c) => t + c.likS, 0);
    const gradS = run.chains.reduce((t, c) => t + c.gradS, 0);
    const wall = ((run.finished ? run.end : performance.now()) - run.started) / 1000;
    const parts = [
      `acceptance ${fmt(accN ? run.chains.reduce((t, c) => t + c.acc, 0) / accN : NaN)}`,
      `data fraction / iteration ${fmt(accN && run.nData ? Math.max(likS, gradS) / run.nData / accN : NaN)}`,
      `${fmt(wall, 2)} s`,
    ];
    this.ui.stats.textContent = parts.join(' · ');
    if (!run.finished) {
      const pct = total ? Math.round((100 * done) / total) : 0;
      const phase = run.chains.some((c) => c.iteration < c.warmup) ? 'warm-up' : 'sampling';
      this.status(`${phase} ${pct}%`);
      if (performance.now() - (run.diag?.last ?? 0) > DIAG_MS) this.requestDiag(run);
    } else if (run.final) {
      this.status(run.okFinish ? `done: ${accN} draws` : 'stopped');
    }
  }

  /** A per-iteration column of one chain across its batches: `pick(batch, i)`. */
  column(ch, pick, kind) {
    const batches = kind === 'extra' ? ch.extra : (kind === 'sign' ? ch.sign : ch.draws);
    // Every kind has one entry per iteration; build (batch, offset) lookups lazily.
    const sizes = batches.map((b) => (kind === 'extra' ? b.length / this.run.extras : (kind === 'sign' ? b.length : b.length / (this.run.d || 1))));
    const starts = [];
    let t = 0;
    for (const s of sizes) { starts.push(t); t += s; }
    const wrap = batches.map((b) => (kind === 'extra' ? { extra: b } : (kind === 'sign' ? { sign: b } : { draws: b })));
    return {
      length: t,
      get: (i) => {
        let lo = 0;
        let hi = starts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (starts[mid] <= i) lo = mid; else hi = mid - 1;
        }
        const v = pick(wrap[lo], i - starts[lo]);
        return Number.isFinite(v) ? v : null;
      },
    };
  }
}

/** One view over several views, end to end. */
function concatGet(views) {
  return (i) => {
    for (const v of views) {
      if (i < v.length) return v.get(i);
      i -= v.length;
    }
    return NaN;
  };
}

if (!customElements.get('tallmc-sampler')) customElements.define('tallmc-sampler', TallmcSampler);
