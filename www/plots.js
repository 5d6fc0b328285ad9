// Plots for the playground: uPlot for trace / histogram / autocorrelation; the canvas plots
// (pair scatter, line and density panels, also used by the embed element without uPlot) are in
// canvas-plots.js and re-exported here. Everything is decimated for display (all draws are
// kept for export).
import uPlot from './vendor/uPlot.esm.js';

import { COLORS } from './canvas-plots.js';

export { COLORS, drawPair, drawLines, drawDensity } from './canvas-plots.js';
const MAX_POINTS = 1200; // per series on screen

function width(el) {
  return Math.max(300, Math.floor(el.clientWidth || 420) - 8);
}

function fresh(el, opts, data) {
  el.replaceChildren();
  return new uPlot({ width: width(el), height: 240, ...opts }, data, el);
}

/** Trace plot of one parameter: `chains[c]` = { get(i), length } over all iterations. */
export class TracePlot {
  constructor(el) {
    this.el = el;
    this.plot = null;
    this.nseries = -1;
  }

  update(chains, warmup) {
    const L = Math.max(0, ...chains.map((c) => c.length));
    const stride = Math.max(1, Math.ceil(L / MAX_POINTS));
    const m = Math.ceil(L / stride);
    const x = new Float64Array(m);
    for (let k = 0; k < m; k++) x[k] = k * stride;
    const ys = chains.map((c) => {
      const y = new Array(m);
      for (let k = 0; k < m; k++) {
        const i = k * stride;
        y[k] = i < c.length ? c.get(i) : null;
      }
      return y;
    });
    const data = [x, ...ys];
    if (!this.plot || this.nseries !== chains.length) {
      this.nseries = chains.length;
      this.plot = fresh(this.el, {
        scales: { x: { time: false } },
        legend: { show: false },
        cursor: { show: false },
        axes: [{ label: 'iteration' }, {}],
        series: [{}, ...chains.map((_, c) => ({ label: `chain ${c + 1}`, stroke: COLORS[c % COLORS.length], width: 1, spanGaps: false, points: { show: false } }))],
        hooks: {
          drawClear: [(u) => {
            // Shade the warm-up phase.
            if (!(this.warmup > 0)) return;
            const x1 = u.valToPos(Math.min(this.warmup, u.scales.x.max ?? 0), 'x', true);
            const x0 = u.valToPos(u.scales.x.min ?? 0, 'x', true);
            u.ctx.save();
            u.ctx.fillStyle = 'rgba(0,0,0,0.05)';
            u.ctx.fillRect(x0, u.bbox.top, Math.max(0, x1 - x0), u.bbox.height);
            u.ctx.restore();
          }],
        },
      }, data);
    } else {
      this.plot.setData(data);
    }
    this.warmup = warmup;
  }
}

/** Histogram of post-warm-up draws of one parameter over all chains (`values` = array of views). */
export class HistPlot {
  constructor(el) {
    this.el = el;
    this.plot = null;
  }

  update(chains) {
    let lo = Infinity;
    let hi = -Infinity;
    let total = 0;
    for (const c of chains) total += c.length;
    const stride = Math.max(1, Math.floor(total / 200000));
    for (const c of chains) {
      for (let i = 0; i < c.length; i += stride) {
        const v = c.get(i);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    const bins = 40;
    const x = new Float64Array(bins);
    const y = new Float64Array(bins);
    if (total > 0 && Number.isFinite(lo) && Number.isFinite(hi)) {
      if (hi === lo) { hi = lo + 1e-9; }
      const w = (hi - lo) / bins;
      for (let b = 0; b < bins; b++) x[b] = lo + (b + 0.5) * w;
      let cnt = 0;
      for (const c of chains) {
        for (let i = 0; i < c.length; i += stride) {
          const b = Math.min(bins - 1, Math.floor((c.get(i) - lo) / w));
          y[b] += 1;
          cnt++;
        }
      }
      for (let b = 0; b < bins; b++) y[b] /= cnt * w;
    }
    const data = [x, y];
    if (!this.plot) {
      this.plot = fresh(this.el, {
        scales: { x: { time: false } },
        legend: { show: false },
        cursor: { show: false },
        axes: [{}, { label: 'density' }],
        series: [{}, { stroke: COLORS[0], fill: 'rgba(43,108,176,0.3)', paths: uPlot.paths.bars({ size: [0.95, 100] }), points: { show: false } }],
      }, data);
    } else {
      this.plot.setData(data);
    }
  }
}

/** Autocorrelation (lags 0..k). */
export class AcfPlot {
  constructor(el) {
    this.el = el;
    this.plot = null;
  }

  update(acf) {
    const x = new Float64Array(acf.length);
    for (let k = 0; k < acf.length; k++) x[k] = k;
    const data = [x, Array.from(acf)];
    if (!this.plot) {
      this.plot = fresh(this.el, {
        scales: { x: { time: false }, y: { range: [-0.2, 1] } },
        legend: { show: false },
        cursor: { show: false },
        axes: [{ label: 'lag' }, {}],
        series: [{}, { stroke: COLORS[0], fill: 'rgba(43,108,176,0.3)', paths: uPlot.paths.bars({ size: [0.6, 100] }), points: { show: false } }],
      }, data);
    } else {
      this.plot.setData(data);
    }
  }
}

