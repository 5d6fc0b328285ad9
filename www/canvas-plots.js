// Canvas plots (no plotting library): the pair scatter of the playground, and the line and
// density panels of the embed element, which must run with nothing but its own module.
import { formatNumber } from './format.js';

/** Chain colours, shared by every plot. */
export const COLORS = ['#2b6cb0', '#c05621', '#2f855a', '#9b2c2c', '#6b46c1', '#b7791f', '#2c7a7b', '#97266d'];

const fmt = (v) => formatNumber(v, { missing: '–' });

/** Scatter of two parameters (post-warm-up, all chains, decimated) on a canvas. */
export function drawPair(canvas, xs, ys, labels) {
  const ctx = canvas.getContext('2d');
  const W = canvas.width;
  const H = canvas.height;
  ctx.clearRect(0, 0, W, H);
  const pad = 36;
  let x0 = Infinity, x1 = -Infinity, y0 = Infinity, y1 = -Infinity;
  let total = 0;
  for (let c = 0; c < xs.length; c++) total += xs[c].length;
  const stride = Math.max(1, Math.ceil(total / 4000));
  for (let c = 0; c < xs.length; c++) {
    for (let i = 0; i < xs[c].length; i += stride) {
      const a = xs[c].get(i), b = ys[c].get(i);
      if (a < x0) x0 = a; if (a > x1) x1 = a;
      if (b < y0) y0 = b; if (b > y1) y1 = b;
    }
  }
  ctx.fillStyle = '#5b6577';
  ctx.font = '11px system-ui, sans-serif';
  ctx.fillText(labels[0] ?? '', W / 2 - 20, H - 6);
  ctx.save();
  ctx.translate(11, H / 2 + 20);
  ctx.rotate(-Math.PI / 2);
  ctx.fillText(labels[1] ?? '', 0, 0);
  ctx.restore();
  ctx.strokeStyle = '#c9d2df';
  ctx.strokeRect(pad, 6, W - pad - 6, H - pad - 6);
  if (!(total > 0) || !Number.isFinite(x0) || !Number.isFinite(y0)) return;
  if (x1 === x0) x1 = x0 + 1e-9;
  if (y1 === y0) y1 = y0 + 1e-9;
  ctx.fillText(x0.toPrecision(3), pad, H - pad + 14);
  ctx.fillText(x1.toPrecision(3), W - 50, H - pad + 14);
  ctx.fillText(y1.toPrecision(3), 2, 14);
  ctx.fillText(y0.toPrecision(3), 2, H - pad);
  const sx = (W - pad - 10) / (x1 - x0);
  const sy = (H - pad - 10) / (y1 - y0);
  for (let c = 0; c < xs.length; c++) {
    ctx.fillStyle = COLORS[c % COLORS.length] + '80';
    for (let i = 0; i < xs[c].length; i += stride) {
      const px = pad + 2 + (xs[c].get(i) - x0) * sx;
      const py = H - pad - 2 - (ys[c].get(i) - y0) * sy;
      ctx.fillRect(px - 1, py - 1, 2, 2);
    }
  }
}

/** Lines of several series `{length, get}` on one canvas, decimated to the canvas width. */
export function drawLines(canvas, series, warmup, scalePost = false) {
  const ctx = canvas.getContext('2d');
  const { width: W, height: H } = canvas;
  ctx.clearRect(0, 0, W, H);
  const L = Math.max(0, ...series.map((s) => s.length));
  if (!L) return;
  const stride = Math.max(1, Math.ceil(L / W));
  let lo = Infinity;
  let hi = -Infinity;
  // scalePost: the y range covers the post-warm-up values only (warm-up may be far off).
  const from = scalePost && L > warmup ? warmup : 0;
  for (const s of series) {
    for (let i = from; i < s.length; i += stride) {
      const v = s.get(i);
      if (v === null) continue;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
  }
  if (!Number.isFinite(lo)) return;
  if (hi === lo) { hi += 0.5; lo -= 0.5; }
  const span = Math.max(L, warmup + 1);
  ctx.fillStyle = 'rgba(0,0,0,0.05)';
  ctx.fillRect(0, 0, (Math.min(warmup, span) / span) * W, H);
  series.forEach((s, c) => {
    ctx.strokeStyle = COLORS[c % COLORS.length];
    ctx.globalAlpha = series.length > 1 ? 0.8 : 1;
    ctx.lineWidth = 1;
    ctx.beginPath();
    let pen = false;
    for (let i = 0; i < s.length; i += stride) {
      const v = s.get(i);
      if (v === null) { pen = false; continue; }
      const x = (i / span) * W;
      const y = Math.min(H, Math.max(0, H - 12 - ((v - lo) / (hi - lo)) * (H - 18)));
      if (pen) ctx.lineTo(x, y); else ctx.moveTo(x, y);
      pen = true;
    }
    ctx.stroke();
  });
  ctx.globalAlpha = 1;
  ctx.fillStyle = '#5b6577';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText(fmt(hi), 2, 10);
  ctx.fillText(fmt(lo), 2, H - 2);
}

/** Density curves `{x, ys}` on one canvas (shared x axis). */
export function drawDensity(canvas, { x, ys }, colors = COLORS) {
  const ctx = canvas.getContext('2d');
  const { width: W, height: H } = canvas;
  ctx.clearRect(0, 0, W, H);
  const ymax = Math.max(0, ...ys.map((y) => Math.max(0, ...y)));
  if (!(ymax > 0) || x.length < 2) return;
  const x0 = x[0];
  const x1 = x[x.length - 1];
  ys.forEach((y, c) => {
    ctx.strokeStyle = colors[c % colors.length];
    ctx.fillStyle = `${colors[c % colors.length]}22`;
    ctx.lineWidth = 1.5;
    ctx.beginPath();
    ctx.moveTo(0, H - 12);
    for (let k = 0; k < x.length; k++) ctx.lineTo(((x[k] - x0) / (x1 - x0)) * W, H - 12 - (y[k] / ymax) * (H - 18));
    ctx.lineTo(W, H - 12);
    ctx.fill();
    ctx.stroke();
  });
  ctx.fillStyle = '#5b6577';
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText(fmt(x0), 2, H - 1);
  const t = fmt(x1);
  ctx.fillText(t, W - ctx.measureText(t).width - 2, H - 1);
}
