// Time-series samplers (pf-sgld, pmmh): where the last particle filter ran and its effective
// sample size over time. Top strip: the series 1..T with the buffered window S* (light) and the
// subsequence S (dark). Below: the filter's ESS at each time point of S* (0..N), S shaded.
const W = 420;
const H = 260;

/** Draw `trace` ({t, start, end, subStart, subEnd, particles, ess}) into the canvas `canvas`. */
export function drawWindowTrace(canvas, trace) {
  const ctx = canvas.getContext('2d');
  if (!ctx) return;
  ctx.clearRect(0, 0, W, H);
  if (!trace) return;
  const { t, start, end, subStart, subEnd, particles } = trace;
  const ess = trace.ess ?? [];
  const L = 40;
  const R = W - 10;
  const sx = (i) => L + ((R - L) * i) / Math.max(1, t);
  ctx.font = '11px sans-serif';
  ctx.fillStyle = '#444';
  // Strip: the whole series and the window.
  ctx.fillText(`window t = ${start + 1}..${end} (S = ${subStart + 1}..${subEnd}) of T = ${t}`, L, 12);
  ctx.strokeStyle = '#999';
  ctx.strokeRect(L, 18, R - L, 14);
  ctx.fillStyle = 'rgba(31,119,180,0.3)';
  ctx.fillRect(sx(start), 18, Math.max(1, sx(end) - sx(start)), 14);
  ctx.fillStyle = 'rgba(31,119,180,0.9)';
  ctx.fillRect(sx(subStart), 18, Math.max(1, sx(subEnd) - sx(subStart)), 14);
  // ESS over the window.
  const top = 50;
  const bottom = H - 24;
  const n = ess.length;
  ctx.fillStyle = '#444';
  if (!n || !particles) {
    ctx.fillText('exact Kalman filter: no particles, no ESS', L, top + 20);
    return;
  }
  const px = (k) => L + ((R - L) * k) / Math.max(1, n - 1);
  const py = (v) => bottom - ((bottom - top) * v) / particles;
  ctx.fillStyle = 'rgba(31,119,180,0.12)';
  ctx.fillRect(px(subStart - start), top, Math.max(1, px(subEnd - 1 - start) - px(subStart - start)), bottom - top);
  ctx.strokeStyle = '#999';
  ctx.beginPath();
  ctx.moveTo(L, top);
  ctx.lineTo(L, bottom);
  ctx.lineTo(R, bottom);
  ctx.stroke();
  ctx.fillStyle = '#444';
  ctx.fillText(String(particles), 4, top + 4);
  ctx.fillText('0', 28, bottom);
  ctx.fillText(`ESS over t = ${start + 1}..${end} (N = ${particles}); shaded: S`, L, H - 6);
  ctx.strokeStyle = '#d62728';
  ctx.beginPath();
  for (let k = 0; k < n; k++) {
    const x = px(k);
    const y = py(ess[k]);
    if (k === 0) ctx.moveTo(x, y);
    else ctx.lineTo(x, y);
  }
  ctx.stroke();
}
