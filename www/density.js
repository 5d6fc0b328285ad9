// Density estimates shared by the embed panel and the playground's compare mode: a Gaussian kernel
// density on a common grid (linear binning, then a discrete convolution), so several sample sets
// can be overlaid on one axis. Samples are `{ length, get(i) }` views or plain arrays.

const view = (s) => (typeof s.get === 'function' ? s : { length: s.length, get: (i) => s[i] });

/** Quantile of a sorted array (linear interpolation). */
function quantile(sorted, p) {
  if (!sorted.length) return NaN;
  const h = (sorted.length - 1) * p;
  const lo = Math.floor(h);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

/** Mean, sd and a subsample (at most `max` values, evenly strided) of one sample set. */
function describe(s, max = 20000) {
  const v = view(s);
  const stride = Math.max(1, Math.ceil(v.length / max));
  const sub = [];
  let sum = 0;
  let sum2 = 0;
  let n = 0;
  for (let i = 0; i < v.length; i += stride) {
    const x = v.get(i);
    if (!Number.isFinite(x)) continue;
    sub.push(x);
    sum += x;
    sum2 += x * x;
    n++;
  }
  const mean = n ? sum / n : NaN;
  const sd = n > 1 ? Math.sqrt(Math.max(0, (sum2 - n * mean * mean) / (n - 1))) : NaN;
  sub.sort((a, b) => a - b);
  return { sub, mean, sd, n };
}

/**
 * Kernel densities of several sample sets on one grid of `points` values.
 * Returns { x: Float64Array, ys: Float64Array[] } (each y integrates to ≈ 1; all zero when a set
 * is empty). Bandwidth: Silverman's rule per set, 0.9·min(sd, IQR/1.34)·n^(−1/5).
 */
export function densities(sets, points = 160) {
  const ds = sets.map((s) => describe(s));
  let lo = Infinity;
  let hi = -Infinity;
  const bws = ds.map((d) => {
    if (d.sub.length < 2) return NaN;
    const iqr = quantile(d.sub, 0.75) - quantile(d.sub, 0.25);
    const spread = Math.min(d.sd, iqr > 0 ? iqr / 1.34 : d.sd) || d.sd || 1e-9;
    const bw = Math.max(1e-12, 0.9 * spread * d.n ** -0.2);
    lo = Math.min(lo, quantile(d.sub, 0.001) - 3 * bw);
    hi = Math.max(hi, quantile(d.sub, 0.999) + 3 * bw);
    return bw;
  });
  const x = new Float64Array(points);
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) return { x, ys: ds.map(() => new Float64Array(points)) };
  if (hi <= lo) hi = lo + 1e-9;
  const step = (hi - lo) / (points - 1);
  for (let k = 0; k < points; k++) x[k] = lo + k * step;
  const ys = ds.map((d, c) => {
    const y = new Float64Array(points);
    const bw = bws[c];
    if (!(bw > 0)) return y;
    // Linear binning onto the grid, then convolution with the Gaussian kernel.
    const counts = new Float64Array(points);
    for (const v of d.sub) {
      const t = (v - lo) / step;
      const k = Math.floor(t);
      if (k < 0 || k >= points) continue;
      const f = t - k;
      counts[k] += 1 - f;
      if (k + 1 < points) counts[k + 1] += f;
    }
    const reach = Math.min(points - 1, Math.ceil((4 * bw) / step));
    const kern = new Float64Array(reach + 1);
    for (let r = 0; r <= reach; r++) kern[r] = Math.exp(-0.5 * ((r * step) / bw) ** 2);
    const norm = 1 / (d.sub.length * bw * Math.sqrt(2 * Math.PI));
    for (let k = 0; k < points; k++) {
      const ck = counts[k];
      if (ck === 0) continue;
      for (let r = -reach; r <= reach; r++) {
        const j = k + r;
        if (j >= 0 && j < points) y[j] += ck * kern[Math.abs(r)] * norm;
      }
    }
    return y;
  });
  return { x, ys };
}
