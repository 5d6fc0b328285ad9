// One run of one sampler configuration in the browser: a Web Worker per chain
// (chain-worker.js), its batches of draws and per-step statistics accumulated per chain, and
// stopping with a grace period ([`ChainRun`]); the run's diagnostics in their worker
// (diag-worker.js: [`Diagnostics`]) and its kernel Stein discrepancy in its worker
// (ksd-worker.js: [`KsdWorker`]). The playground (app.js, ksd.js), compare mode (compare.js)
// and the <tallmc-sampler> element (embed.js) create every run worker through this module;
// what they do with the draws and the answers (plots, tables) stays theirs, in the callbacks.

const CHAIN_WORKER = new URL('./chain-worker.js', import.meta.url);
const DIAG_WORKER = new URL('./diag-worker.js', import.meta.url);
const KSD_WORKER = new URL('./ksd-worker.js', import.meta.url);

/**
 * The most a run may hold in this page, in bytes: every iteration's draws and per-step
 * statistics of every chain are kept (for the plots, the diagnostics and the export). A run
 * estimated above it is refused before any chain worker is created when the page's own
 * estimate ([`planDim`], `o.plan` of [`ChainRun`]) is already over, and otherwise as soon as
 * its first chain is ready (with the chain's exact d and extras), before draws accumulate.
 */
export const MAX_PAGE_BYTES = 2e9;

/** Bytes a run of `chains` chains like this ready message will hold in the page. */
export function runBytes(m, chains) {
  // Draws (d), extras, and about ten per-step statistics, as 8-byte numbers.
  return chains * m.total * (m.dim + (m.extrasPerStep ?? 0) + 10) * 8;
}

/** `1.2 GB`: bytes as a person reads them. */
function gb(b) {
  return b >= 1e9 ? `${(b / 1e9).toFixed(1)} GB` : `${(b / 1e6).toFixed(0)} MB`;
}

/**
 * The parameters a run will have, as far as the page knows before any worker: a regression
 * model has one per feature (the listed `features`, or every column of `names` but the
 * `response`) plus the intercept: `{ dim, exact: true }`. Other models (matrix factorisation,
 * mixtures, time series) learn d from the data in the worker: `{ dim: 1, exact: false }`, a
 * lower bound, so the estimate refuses only runs that are too large whatever d is.
 */
export function planDim({ regression, features, names, response, intercept }) {
  if (!regression || (!features && !names)) return { dim: 1, exact: false };
  const k = features ? features.length : names.filter((n) => n !== response).length;
  return { dim: k + (intercept ? 1 : 0), exact: true };
}

/**
 * The refusal of a run too large for the page, or null: `m` has `total` (warm-up + draws),
 * `dim`, optionally `extrasPerStep` and `exact` (false: `dim` is a lower bound).
 */
export function tooLarge(m, chains, limit = MAX_PAGE_BYTES) {
  const bytes = runBytes(m, chains);
  if (!(bytes > limit)) return null;
  return `draws: ${chains} chain${chains > 1 ? 's' : ''} × ${m.total} iterations × `
    + `${m.exact === false ? 'at least ' : ''}${m.dim} parameter${m.dim === 1 ? '' : 's'} would hold about ${gb(bytes)} in this page `
    + `(limit ${gb(limit)}): lower the draws, the warm-up or the chains`;
}

/** A worker that has not answered a stop within this many milliseconds is terminated. */
export const STOP_GRACE_MS = 300;

const ENDED = ['done', 'stopped', 'error'];

/** Whether a chain has ended (done, stopped or failed). */
export const ended = (ch) => ENDED.includes(ch.status);

/**
 * The chains of one run. Each chain `ch` carries its worker and running totals, updated before
 * the callbacks see a message: `status` (starting, running, done, stopped, error),
 * `iteration`, `total`, `warmup`, `computeMs`, per-datum evaluations `lik`/`grad` (set-up,
 * warm-up and sampling) and `likS`/`gradS` (sampling), and over the kept draws `acc` (sum of
 * acceptance probabilities), `accN`, `div` (divergences), `signPos` (positive signs) and
 * `extraSum` (sums of the kernel's extras). `run.meta` comes from the first chain that is
 * ready: `names`, `d`, `signed`, `exact`, `nData`, `extraNames`, `extras` (extras per step, as
 * the chain reports them).
 */
export class ChainRun {
  /**
   * @param {object} o
   * @param {number} o.chains number of chains
   * @param {(c: number) => {msg: object, transfer?: Transferable[]}} o.start chain c's start message
   * @param {(ch: object, m: object) => void} [o.onReady] after a chain is ready
   * @param {(ch: object, batch: object, m: object) => void} [o.onBatch] after a batch is counted
   * @param {(ch: object, m: object) => void} [o.onMessage] any other message (`paused`)
   * @param {(ch: object, message: string) => void} [o.onError] a chain failed (it is terminated)
   * @param {(run: ChainRun) => void} [o.onEnd] once, when every chain has ended
   * @param {number} [o.maxBytes] the page's memory limit for the run ([`MAX_PAGE_BYTES`])
   * @param {{total: number, dim: number, exact?: boolean}} [o.plan] the page's estimate before
   *   any worker (warm-up + draws, [`planDim`]): a run over the limit is refused without
   *   creating a worker; every chain fails with the message (`onError`, then `onEnd`, after
   *   the constructor returns)
   */
  constructor(o) {
    this.o = o;
    this.meta = null;
    this.stopRequested = false;
    this.endedOnce = false;
    this.chains = [];
    const refused = o.plan ? tooLarge(o.plan, o.chains, o.maxBytes ?? MAX_PAGE_BYTES) : null;
    for (let c = 0; c < o.chains; c++) {
      const ch = {
        c, worker: null, status: 'starting', iteration: 0, total: 0, warmup: 0, computeMs: 0,
        lik: 0, grad: 0, likS: 0, gradS: 0, acc: 0, accN: 0, div: 0, signPos: 0, extraSum: null,
      };
      this.chains.push(ch);
      if (refused) continue;
      const worker = new Worker(CHAIN_WORKER, { type: 'module' });
      ch.worker = worker;
      worker.onmessage = (ev) => this.receive(ch, ev.data);
      worker.onerror = (e) => this.receive(ch, { type: 'error', message: e.message ?? 'chain worker failed to start' });
      const { msg, transfer } = o.start(c);
      worker.postMessage(msg, transfer ?? []);
    }
    if (refused) {
      // Failed before any worker existed; the callbacks run once the caller holds the run.
      queueMicrotask(() => {
        for (const ch of this.chains) this.receive(ch, { type: 'error', message: refused });
      });
    }
  }

  /** Whether this run was refused before any worker was created ([`tooLarge`] on `o.plan`). */
  get refused() {
    return this.chains.length > 0 && this.chains.every((ch) => ch.worker === null);
  }

  /** Whether every chain has ended. */
  get ended() {
    return this.chains.every(ended);
  }

  /** Kept draws over every chain (the denominator of the means below). */
  get kept() {
    return this.chains.reduce((t, c) => t + c.accN, 0);
  }

  /** Mean of each kernel extra per kept draw over every chain (NaN before any draw is kept). */
  extraMeans() {
    const n = this.kept;
    return Array.from({ length: this.meta?.extras ?? 0 }, (_, k) => (n
      ? this.chains.reduce((t, c) => t + (c.extraSum ? c.extraSum[k] : 0), 0) / n
      : NaN));
  }

  /** Post `msg` to every chain still running (pause, resume). */
  post(msg) {
    for (const ch of this.chains) if (!ended(ch)) ch.worker?.postMessage(msg);
  }

  /**
   * Stop every chain: ask, then terminate what has not answered within `graceMs` (0: at once),
   * marking it `status`.
   */
  stop({ graceMs = STOP_GRACE_MS, status = 'stopped' } = {}) {
    this.stopRequested = true;
    this.post({ type: 'stop' });
    const cut = () => {
      for (const ch of this.chains) {
        if (ended(ch)) continue;
        ch.worker?.terminate();
        ch.status = status;
      }
      this.checkEnd();
    };
    if (graceMs <= 0) cut();
    else setTimeout(cut, graceMs);
  }

  /** Terminate every worker now, without callbacks. */
  terminate() {
    for (const ch of this.chains) {
      ch.worker?.terminate();
      if (!ended(ch)) ch.status = 'stopped';
    }
    this.endedOnce = true;
  }

  receive(ch, m) {
    if (this.endedOnce || ended(ch)) return;
    switch (m.type) {
      case 'ready': {
        const refusal = tooLarge(m, this.chains.length, this.o.maxBytes ?? MAX_PAGE_BYTES);
        if (refusal) {
          this.receive(ch, { type: 'error', message: refusal });
          return;
        }
        ch.status = 'running';
        ch.total = m.total;
        ch.warmup = m.warmup;
        ch.lik += m.setupLikEvals;
        ch.grad += m.setupGradEvals;
        ch.extraSum = new Float64Array(m.extrasPerStep);
        this.meta ??= {
          names: Array.from(m.paramNames), d: m.dim, signed: m.signed, exact: m.exact,
          nData: m.nData, extraNames: Array.from(m.extraNames ?? []).slice(0, m.extrasPerStep),
          extras: m.extrasPerStep,
        };
        this.o.onReady?.(ch, m);
        break;
      }
      case 'batch':
        ch.iteration = m.iteration;
        ch.computeMs = m.computeMs;
        this.count(ch, m.batch);
        this.o.onBatch?.(ch, m.batch, m);
        break;
      case 'done':
      case 'stopped':
        ch.status = m.type;
        ch.iteration = m.iteration;
        ch.computeMs = m.computeMs;
        this.checkEnd();
        break;
      case 'error':
        ch.status = 'error';
        ch.worker?.terminate();
        this.o.onError?.(ch, m.message);
        this.checkEnd();
        break;
      default:
        this.o.onMessage?.(ch, m);
        break;
    }
  }

  /** Add a batch to the chain's totals (kept draws: from index `nWarmup` on). */
  count(ch, b) {
    const nw = b.nWarmup;
    const k = ch.extraSum?.length ?? 0;
    const withExtras = k > 0 && b.extra && b.extra.length === b.n * k;
    for (let i = 0; i < b.n; i++) {
      ch.lik += b.likEvals[i];
      ch.grad += b.gradEvals[i];
      if (i < nw) continue;
      ch.likS += b.likEvals[i];
      ch.gradS += b.gradEvals[i];
      ch.div += b.divergent[i];
      ch.acc += b.acceptProb[i];
      ch.accN += 1;
      ch.signPos += b.sign[i] > 0 ? 1 : 0;
      if (withExtras) for (let j = 0; j < k; j++) ch.extraSum[j] += b.extra[i * k + j];
    }
  }

  checkEnd() {
    if (this.endedOnce || !this.ended) return;
    this.endedOnce = true;
    this.o.onEnd?.(this);
  }
}

/**
 * The diagnostics of a run in their worker (diag-worker.js: R-hat, bulk and tail ESS, MCSE, the
 * autocorrelation of one parameter, and with the final summary the CLI's convergence warnings).
 * The worker is created at the first [`reset`]; one instance may serve run after run (the
 * playground keeps one per page, [`listen`] and [`reset`] per run). One summary request is in
 * flight at a time: a live request while one is pending is dropped, a final one is always sent.
 */
export class Diagnostics {
  /**
   * @param {object} [o]
   * @param {(m: object) => void} [o.onMessage] each answer: `{type: 'summary', id, summary,
   *   acf, acfParam, warnings, ms}` or `{type: 'error', id, message}`
   * @param {(e: ErrorEvent) => void} [o.onWorkerError] the worker itself failed (e.g. to load)
   */
  constructor(o = {}) {
    this.worker = null;
    /** Whether a summary request awaits its answer. */
    this.pending = false;
    /** `performance.now()` of the last summary request. */
    this.last = 0;
    this.listen(o);
  }

  /** Where the answers go from now on (`onMessage`, `onWorkerError` as in the constructor). */
  listen({ onMessage, onWorkerError } = {}) {
    this.onMessage = onMessage;
    this.onWorkerError = onWorkerError;
  }

  /** Start over for `chains` chains of `d` parameters (`signed`: draws come with signs). */
  reset({ chains, d, signed }) {
    if (!this.worker) {
      this.worker = new Worker(DIAG_WORKER, { type: 'module' });
      this.worker.onmessage = (ev) => {
        this.pending = false;
        this.onMessage?.(ev.data);
      };
      this.worker.onerror = (e) => this.onWorkerError?.(e);
    }
    this.pending = false;
    this.last = 0;
    this.worker.postMessage({ type: 'reset', chains, d, signed });
  }

  /**
   * Kept draws of one chain (`k × d` row-major) and their signs (or null). With `transfer`, the
   * arrays' buffers move to the worker (they must not be views into a buffer still in use).
   */
  push(chain, draws, signs = null, transfer = false) {
    if (!this.worker) return;
    const list = transfer ? [draws.buffer, ...(signs ? [signs.buffer] : [])] : [];
    this.worker.postMessage({ type: 'push', chain, draws, signs }, list);
  }

  /**
   * Ask for a summary (`final`: over every draw, with the warnings for `names` and the chains'
   * `divergent` counts); `acfParam` (−1: none) and `maxLag` choose the autocorrelation. Returns
   * whether the request was sent (a live one is dropped while another is pending).
   */
  request({ final = false, acfParam = -1, maxLag = 0, names, divergent } = {}) {
    if (!this.worker || (this.pending && !final)) return false;
    this.pending = true;
    this.last = performance.now();
    const msg = { type: 'summary', id: final ? 'final' : 'live', acfParam, maxLag };
    if (final) {
      msg.names = names;
      msg.divergent = divergent;
    }
    this.worker.postMessage(msg);
    return true;
  }

  /** End the worker (a later [`reset`] creates a new one). */
  terminate() {
    this.worker?.terminate();
    this.worker = null;
    this.pending = false;
  }
}

/**
 * The kernel Stein discrepancy of a run in its worker (ksd-worker.js): the worker builds its own
 * copy of the run's model from `config` and the data, keeps a thinned subset of the kept draws
 * with their exact scores, and answers each [`compute`] (`{type: 'ksd', id, result, ms,
 * skipped}` or `{type: 'error', id, message}`).
 */
export class KsdWorker {
  /**
   * @param {object} o
   * @param {object} o.config the chains' configuration (without `chain`)
   * @param {string[]} o.names the data's column names
   * @param {Float64Array} o.values a column-major copy of the data (its buffer is transferred)
   * @param {number} o.chains number of chains
   * @param {boolean} o.signed whether draws come with signs
   * @param {number} [o.maxDraws] draws kept (0: the worker's default)
   * @param {number} [o.warmup] warm-up iterations (added to the trace's x)
   * @param {(m: object) => void} [o.onMessage] each answer
   * @param {(e: ErrorEvent) => void} [o.onWorkerError] the worker itself failed
   */
  constructor(o) {
    this.worker = new Worker(KSD_WORKER, { type: 'module' });
    this.worker.onmessage = (ev) => o.onMessage?.(ev.data);
    this.worker.onerror = (e) => o.onWorkerError?.(e);
    this.worker.postMessage({
      type: 'start', config: o.config, names: o.names, values: o.values, chains: o.chains,
      signed: o.signed, maxDraws: o.maxDraws ?? 0, warmup: o.warmup ?? 0,
    }, o.values?.buffer ? [o.values.buffer] : []);
  }

  /** Kept draws of one chain and their signs (or null); `transfer` as in [`Diagnostics`]. */
  push(chain, draws, signs = null, transfer = false) {
    const list = transfer ? [draws.buffer, ...(signs ? [signs.buffer] : [])] : [];
    this.worker.postMessage({ type: 'push', chain, draws, signs }, list);
  }

  /** Ask for the KSD so far (`final`: always computed; a live request may be skipped when busy). */
  compute(final = false) {
    this.worker.postMessage({ type: 'compute', id: final ? 'final' : 'live' });
  }

  /** End the worker. */
  terminate() {
    this.worker.terminate();
  }
}
