// Kernel Stein discrepancy panel of the playground: a figure (KSD of the kept draws so far
// against the iteration, log scale) and a one-line value, fed by its own worker (ksd-worker.js,
// created through the run client's KsdWorker) so that the scores (n per-datum gradients per
// stored draw) never run on the UI thread.
//
// app.js creates one KsdPanel per run, forwards the kept draws (push) and asks for an update
// whenever it asks for diagnostics (request); the panel draws itself when the worker answers.
// Main-thread work is kept small: draws are copied once (only the kept rows) and transferred,
// the worker returns the plot's x and y arrays ready to draw (transferred), and live redraws
// happen at most every REDRAW_MS (the final one at once).
import uPlot from './vendor/uPlot.esm.js';
import { formatNumber } from './format.js';
import { KsdWorker } from './run-client.js';

const REDRAW_MS = 1000;

/** The figure, created once after the per-iteration diagnostics figure. */
function figure() {
  let fig = document.getElementById('ksd-fig');
  if (fig) return fig;
  fig = document.createElement('figure');
  fig.id = 'ksd-fig';
  fig.hidden = true;
  fig.innerHTML = '<figcaption>Kernel Stein discrepancy of the kept draws so far (IMQ kernel, exact scores, thinned draws of all chains): <span data-testid="ksd-value"></span></figcaption><div data-testid="ksd-plot" class="plot"></div>';
  const plots = document.querySelector('.plots');
  const after = document.getElementById('extra-fig');
  if (after && after.parentNode === plots) after.after(fig);
  else plots?.append(fig);
  return fig;
}

const fmt = (v) => formatNumber(v, { digits: 4, big: 1e4, expDigits: 3 });

export class KsdPanel {
  /**
   * @param {object} opts { config (the chains' configuration without `chain`), names, values
   *   (a Float64Array copy of the data, transferred), chains, signed, warmup, onError }
   */
  constructor(opts) {
    const t0 = performance.now();
    this.warmup = opts.warmup ?? 0;
    this.onError = opts.onError ?? (() => {});
    this.pending = false;
    this.wanted = false;
    this.closed = false;
    this.plot = null;
    this.fig = figure();
    this.fig.hidden = false;
    this.value = this.fig.querySelector('[data-testid=ksd-value]');
    this.el = this.fig.querySelector('[data-testid=ksd-plot]');
    this.value.textContent = 'waiting for kept draws…';
    this.value.dataset.value = '';
    this.value.dataset.final = 'false';
    this.el.replaceChildren();
    this.el.dataset.points = '0';
    this.fig.dataset.mainMs = '0';
    this.fig.dataset.mainMaxMs = '0';
    // Main-thread time spent by the panel (push copies, redraws), for tests and the console:
    // figure data-main-ms (total) and data-main-max-ms (longest single call).
    this.mainMs = 0;
    this.mainMaxMs = 0;
    this.lastDraw = 0;
    this.timer = 0;
    this.latest = null;
    this.worker = new KsdWorker({
      config: opts.config, names: opts.names, values: opts.values, chains: opts.chains,
      signed: opts.signed, maxDraws: opts.maxDraws ?? 0, warmup: this.warmup,
      onMessage: (m) => this.onMessage(m),
      onWorkerError: (e) => this.onError(`KSD worker failed: ${e.message ?? 'could not load'}`),
    });
    this.account(t0, 'start');
  }

  /**
   * Kept (post-warm-up) draws of one chain, `k × d` row-major, with signs or null. Views into a
   * larger batch buffer are copied (just their rows) and the copies transferred, so the whole
   * batch buffer is never structured-cloned.
   */
  push(chain, draws, signs) {
    if (this.closed) return;
    const t0 = performance.now();
    this.worker.push(chain, draws.slice(), signs ? signs.slice() : null, true);
    this.account(t0);
  }

  account(t0, kind = 'push') {
    const ms = performance.now() - t0;
    this.mainMs += ms;
    this.mainMaxMs = Math.max(this.mainMaxMs, ms);
    const k = (this.byKind ??= {})[kind] ??= { n: 0, ms: 0, max: 0 };
    k.n += 1;
    k.ms += ms;
    k.max = Math.max(k.max, ms);
    this.fig.dataset.mainMs = this.mainMs.toFixed(1);
    this.fig.dataset.mainMaxMs = this.mainMaxMs.toFixed(1);
    this.fig.dataset.mainByKind = JSON.stringify(this.byKind);
  }

  /** Ask for an update; `final` marks the value as the run's final KSD. */
  request(final = false) {
    if (this.closed) return;
    if (final) this.finalAsked = true;
    if (this.pending) {
      this.wanted = this.wanted || final;
      return;
    }
    this.pending = true;
    this.worker.compute(final);
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.worker.terminate();
  }

  onMessage(m) {
    if (this.closed) return;
    this.pending = false;
    if (m.type === 'error') {
      // A diagnostic that cannot be computed (e.g. a non-finite score) is reported in the panel
      // only; it does not fail the run.
      this.value.textContent = `not available: ${m.message}`;
      this.value.dataset.error = m.message;
      return;
    }
    if (m.result) this.schedule(m.result, m.id === 'final');
    if (this.wanted) {
      this.wanted = false;
      this.request(true);
    }
  }

  /** Draw `r` now if final or REDRAW_MS have passed since the last draw, else later. */
  schedule(r, final) {
    this.latest = { r, final };
    if (this.timer && !final) return;
    clearTimeout(this.timer);
    const wait = final ? 0 : Math.max(0, this.lastDraw + REDRAW_MS - performance.now());
    const draw = () => {
      this.timer = 0;
      if (this.closed || !this.latest) return;
      const { r: latest, final: fin } = this.latest;
      this.latest = null;
      this.lastDraw = performance.now();
      this.render(latest, fin);
      this.account(this.lastDraw, this.plot && this.drawn ? 'redraw' : 'first draw');
      this.drawn = true;
    };
    if (wait === 0) draw();
    else this.timer = setTimeout(draw, wait);
  }

  render(r, final) {
    // x = the iteration (warm-up included), computed in the worker.
    const x = r.iterations;
    const y = r.ksd;
    this.value.textContent = `${fmt(r.joint)} (joint, ${r.draws} draws; thesis Σⱼ√Vⱼ ${fmt(r.thesis)})${final ? '' : ' · running'}`;
    this.value.dataset.value = String(r.joint);
    this.value.dataset.thesis = String(r.thesis);
    this.value.dataset.draws = String(r.draws);
    this.value.dataset.final = String(final);
    this.el.dataset.points = String(y.length);
    const data = [x, y];
    if (!this.plot) {
      this.el.replaceChildren();
      this.plot = new uPlot({
        width: Math.max(300, Math.floor(this.el.clientWidth || 420) - 8),
        height: 240,
        scales: { x: { time: false }, y: { distr: 3 } },
        legend: { show: false },
        cursor: { show: false },
        axes: [{ label: 'iteration' }, { label: 'KSD' }],
        series: [{}, { label: 'KSD', stroke: '#2b6cb0', width: 1.5, points: { show: false } }],
      }, data, this.el);
    } else {
      this.plot.setData(data);
    }
  }
}
