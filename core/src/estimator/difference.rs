//! The difference estimator of the log-likelihood with control variates, its variance σ̂², the
//! bias-corrected log-likelihood ℓ̂ − σ̂²/2 and its exact gradient, with the subsample kept in G
//! blocks of running sums so that refreshing one block costs m/G evaluations.
//!
//! # Formula
//! u = (u₁..u_m) iid uniform on {1..n} (with replacement), dᵢ = d_{uᵢ}(θ) = ℓ_{uᵢ}(θ) − q_{uᵢ}(θ):
//! ℓ̂(θ) = Σₖ qₖ(θ) + (n/m) Σᵢ dᵢ
//! σ̂²(θ) = (n²/m²) Σᵢ (dᵢ − d̄)²                    (divisor m)
//! log L̂(θ) = ℓ̂(θ) − ½ σ̂²(θ)
//! ∇ℓ̂ = ∇Σₖ qₖ + (n/m) Σᵢ ∇dᵢ,   ∇σ̂² = (2n²/m²) Σᵢ (dᵢ − d̄) ∇dᵢ
//! Running sums are centred at a shift c (the mean of the dᵢ at the last full evaluation):
//! S₁ = Σ(dᵢ − c), S₂ = Σ(dᵢ − c)², V₁ = Σ∇dᵢ, V₂ = Σ(dᵢ − c)∇dᵢ, so that
//! σ̂² = (n²/m²)(S₂ − S₁²/m) and Σ(dᵢ − d̄)∇dᵢ = V₂ − (S₁/m)V₁ without cancellation.
//!
//! ## References
//! Dang et al. (2019), JMLR 20(100), eqs. (8)–(14); Quiroz et al. (2019), JASA.

use super::ControlVariates;
use crate::error::Error;
use crate::model::DataModel;
use crate::rng::{uniform_index, Rng};
use alloc::vec::Vec;

/// Subsamples from this size on are evaluated in parts on the model's spare threads
/// ([`DataModel::parallel`]), when it has more than one.
const SPLIT_FROM: usize = 512;

/// Shape of the subsample: n data, m draws with replacement, G blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffEstimator {
    n: usize,
    m: usize,
    blocks: usize,
}

/// The difference estimator at one θ for one subsample u: per-block running sums and the
/// resulting estimates.
#[derive(Debug, Clone, Default)]
pub struct DiffEval {
    d: usize,
    shift: f64,
    s1: Vec<f64>,
    s2: Vec<f64>,
    v1: Vec<f64>,
    v2: Vec<f64>,
    proxy: f64,
    proxy_grad: Vec<f64>,
    has_grad: bool,
    dbuf: Vec<f64>,
    gbuf: Vec<f64>,
    cbuf: Vec<f64>,
    vbuf: Vec<f64>,
    pbuf: Vec<f64>,
    /// ℓ̂(θ), unbiased for ℓ(θ).
    pub ell_hat: f64,
    /// σ̂²(θ), the estimated variance of ℓ̂.
    pub sigma2: f64,
    /// log L̂ = ℓ̂ − σ̂²/2.
    pub log_lhat: f64,
    /// ∇ log L̂ = ∇ℓ̂ − ½∇σ̂² (empty when evaluated without gradient).
    pub grad: Vec<f64>,
}

impl DiffEval {
    /// Whether the gradient was computed.
    pub fn has_grad(&self) -> bool {
        self.has_grad
    }
}

impl DiffEstimator {
    /// n data, subsample size m ≥ 1, G blocks with 1 ≤ G ≤ m (block g holds indices
    /// ⌊g·m/G⌋..⌊(g+1)·m/G⌋, so sizes differ by at most one when G does not divide m).
    pub fn new(n: usize, m: usize, blocks: usize) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::data("the data set has no rows"));
        }
        if m == 0 {
            return Err(Error::setting("m", "subsample size must be at least 1"));
        }
        if blocks == 0 || blocks > m {
            return Err(Error::setting(
                "G",
                alloc::format!("number of blocks must be in [1, m = {m}]"),
            ));
        }
        Ok(DiffEstimator { n, m, blocks })
    }

    /// n.
    pub fn n(&self) -> usize {
        self.n
    }
    /// m.
    pub fn m(&self) -> usize {
        self.m
    }
    /// G.
    pub fn blocks(&self) -> usize {
        self.blocks
    }

    /// Index range of block g within u.
    pub fn block_range(&self, g: usize) -> core::ops::Range<usize> {
        (g * self.m / self.blocks)..((g + 1) * self.m / self.blocks)
    }

    /// A fresh subsample u ~ p_U (m iid uniform indices).
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> Vec<usize> {
        (0..self.m).map(|_| uniform_index(rng, self.n)).collect()
    }

    /// Fresh indices for block g (written into `out`, resized to the block's length).
    pub fn draw_block<R: Rng + ?Sized>(&self, rng: &mut R, g: usize, out: &mut Vec<usize>) {
        let r = self.block_range(g);
        out.clear();
        out.extend((r.start..r.end).map(|_| uniform_index(rng, self.n)));
    }

    fn reset(&self, d: usize, with_grad: bool, out: &mut DiffEval) {
        let g = self.blocks;
        out.d = d;
        out.s1.clear();
        out.s1.resize(g, 0.0);
        out.s2.clear();
        out.s2.resize(g, 0.0);
        out.v1.clear();
        out.v2.clear();
        out.proxy_grad.clear();
        out.grad.clear();
        if with_grad {
            out.v1.resize(g * d, 0.0);
            out.v2.resize(g * d, 0.0);
            out.proxy_grad.resize(d, 0.0);
            out.grad.resize(d, 0.0);
        }
        out.has_grad = with_grad;
    }

    /// Evaluate at θ for subsample `idx` (length m) from scratch: m joint evaluations.
    pub fn evaluate(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        idx: &[usize],
        with_grad: bool,
        out: &mut DiffEval,
    ) {
        self.evaluate_gathered(model, cv, theta, idx, None, with_grad, out);
    }

    /// [`evaluate`](Self::evaluate), reading the subsample from `gathered` when it holds `idx`
    /// (see [`Gathered`](super::Gathered); the same bits either way).
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_gathered(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        idx: &[usize],
        gathered: Option<&super::Gathered>,
        with_grad: bool,
        out: &mut DiffEval,
    ) {
        let d = theta.len();
        self.reset(d, with_grad, out);
        if idx.len() != self.m {
            out.ell_hat = f64::NAN;
            out.sigma2 = f64::NAN;
            out.log_lhat = f64::NAN;
            return;
        }
        out.proxy = if with_grad {
            cv.proxy_sum(theta, Some(&mut out.proxy_grad))
        } else {
            cv.proxy_sum(theta, None)
        };
        let mut dbuf = core::mem::take(&mut out.dbuf);
        dbuf.resize(self.m, 0.0);
        // A gathered GLM subsample with gradient: each ∇dₖ = cₖ xₖ is added to its block's
        // sums straight from the gathered row (the same products, the same bits), without
        // writing and reading back m·d gradients.
        if let Some(g) = gathered.filter(|_| with_grad && d > 0) {
            let mut cbuf = core::mem::take(&mut out.cbuf);
            cbuf.resize(self.m, 0.0);
            // On tall subsamples the spare threads take parts of the positions, then parts of
            // the blocks (the same numbers: each position's difference and each block's sums
            // do not depend on who computes them, and `finish` adds the blocks in order).
            let par = model
                .parallel()
                .filter(|p| p.threads() > 1 && self.m >= SPLIT_FROM);
            let ok = match par {
                Some(p) => {
                    self.diffs_in_parts(p, model, cv, theta, idx, g, out, &mut dbuf, &mut cbuf)
                }
                None => cv.diffs_gathered_scalars(model, theta, idx, g, &mut dbuf, &mut cbuf),
            };
            if ok {
                out.shift = dbuf.iter().sum::<f64>() / self.m as f64;
                let rows = g.rows();
                match par {
                    Some(p) => self.blocks_in_parts(p, out, &dbuf, &cbuf, rows),
                    None => {
                        for b in 0..self.blocks {
                            let r = self.block_range(b);
                            let xs = &rows[r.start * d..r.end * d];
                            accumulate_block_rows(out, b, &dbuf[r.clone()], &cbuf[r], xs);
                        }
                    }
                }
                out.dbuf = dbuf;
                out.cbuf = cbuf;
                self.finish(out);
                return;
            }
            out.cbuf = cbuf;
        }
        let mut gbuf = core::mem::take(&mut out.gbuf);
        gbuf.resize(if with_grad { self.m * d } else { 0 }, 0.0);
        match gathered {
            Some(g) => cv.diffs_gathered(model, theta, idx, g, &mut dbuf, &mut gbuf),
            None => cv.diffs(model, theta, idx, &mut dbuf, &mut gbuf),
        }
        out.shift = dbuf.iter().sum::<f64>() / self.m as f64;
        for g in 0..self.blocks {
            let r = self.block_range(g);
            let gs = if with_grad {
                &gbuf[r.start * d..r.end * d]
            } else {
                &[][..]
            };
            accumulate_block(out, g, &dbuf[r.clone()], gs);
        }
        out.dbuf = dbuf;
        out.gbuf = gbuf;
        self.finish(out);
    }

    /// `out` ← `cur` with block g replaced by the indices `new_idx` (m/G joint evaluations at the
    /// same θ that `cur` was evaluated at). The gradient is computed when `cur` has one.
    #[allow(clippy::too_many_arguments)]
    pub fn replace_block(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        g: usize,
        new_idx: &[usize],
        cur: &DiffEval,
        out: &mut DiffEval,
    ) {
        let dbuf = core::mem::take(&mut out.dbuf);
        let gbuf = core::mem::take(&mut out.gbuf);
        out.clone_from(cur);
        let mut dbuf = dbuf;
        let mut gbuf = gbuf;
        let d = cur.d;
        let b = new_idx.len();
        if g >= self.blocks || b != self.block_range(g).len() {
            out.log_lhat = f64::NAN;
            out.dbuf = dbuf;
            out.gbuf = gbuf;
            return;
        }
        dbuf.resize(b, 0.0);
        gbuf.resize(if cur.has_grad { b * d } else { 0 }, 0.0);
        cv.diffs(model, theta, new_idx, &mut dbuf[..b], &mut gbuf);
        out.s1[g] = 0.0;
        out.s2[g] = 0.0;
        if cur.has_grad {
            out.v1[g * d..(g + 1) * d].iter_mut().for_each(|x| *x = 0.0);
            out.v2[g * d..(g + 1) * d].iter_mut().for_each(|x| *x = 0.0);
        }
        accumulate_block(out, g, &dbuf[..b], &gbuf);
        out.dbuf = dbuf;
        out.gbuf = gbuf;
        self.finish(out);
    }

    /// The differences dₖ and gradient scalars cₖ of the gathered subsample in one part of the
    /// positions per thread of `p` (each part's numbers side by side in `out.pbuf`, then
    /// copied to `dbuf` and `cbuf`); false when `g` does not hold `idx`.
    #[allow(clippy::too_many_arguments)]
    fn diffs_in_parts(
        &self,
        p: &dyn crate::parallel::ParallelFor,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        idx: &[usize],
        g: &super::Gathered,
        out: &mut DiffEval,
        dbuf: &mut [f64],
        cbuf: &mut [f64],
    ) -> bool {
        use core::sync::atomic::{AtomicBool, Ordering};
        let m = self.m;
        // As the whole evaluation: `g` must hold exactly the m positions.
        if g.rows().len() != m * cv.centre().len() {
            return false;
        }
        let len = m.div_ceil(p.threads().max(1)).max(1);
        // Every number is written by its part: no need to clear the buffer first.
        let mut buf = core::mem::take(&mut out.pbuf);
        buf.resize(2 * m, 0.0);
        let ok = AtomicBool::new(true);
        // Part k: positions k·len.., as [d's, c's].
        crate::parallel::for_each_piece(Some(p), &mut buf, 2 * len, &|k, part| {
            let (s0, l) = (k * len, part.len() / 2);
            let (dp, cp) = part.split_at_mut(l);
            if !cv.diffs_gathered_scalars_at(model, theta, &idx[s0..s0 + l], g, s0, dp, cp) {
                ok.store(false, Ordering::Relaxed);
            }
        });
        for (k, part) in buf.chunks(2 * len).enumerate() {
            let (s0, l) = (k * len, part.len() / 2);
            dbuf[s0..s0 + l].copy_from_slice(&part[..l]);
            cbuf[s0..s0 + l].copy_from_slice(&part[l..]);
        }
        out.pbuf = buf;
        ok.load(Ordering::Relaxed)
    }

    /// Every block's sums (as `accumulate_block_rows`) in one part of the blocks per thread of
    /// `p`: each block's [S₁, S₂, V₁, V₂] side by side in `out.pbuf`, then copied to `out`.
    fn blocks_in_parts(
        &self,
        p: &dyn crate::parallel::ParallelFor,
        out: &mut DiffEval,
        dbuf: &[f64],
        cbuf: &[f64],
        rows: &[f64],
    ) {
        let (d, shift, nb) = (out.d, out.shift, self.blocks);
        let w = 2 + 2 * d;
        let per = nb.div_ceil(p.threads().max(1)).max(1);
        let mut buf = core::mem::take(&mut out.pbuf);
        buf.resize(nb * w, 0.0);
        crate::parallel::for_each_piece(Some(p), &mut buf, per * w, &|k, part| {
            // Each part clears its own slots (the sums start from zero, as after `reset`).
            part.iter_mut().for_each(|v| *v = 0.0);
            for (j, slot) in part.chunks_exact_mut(w).enumerate() {
                let r = self.block_range(k * per + j);
                let (s, v) = slot.split_at_mut(2);
                let (s1, s2) = s.split_at_mut(1);
                let (v1, v2) = v.split_at_mut(d);
                add_block_rows(
                    shift,
                    &mut s1[0],
                    &mut s2[0],
                    v1,
                    v2,
                    &dbuf[r.clone()],
                    &cbuf[r.clone()],
                    &rows[r.start * d..r.end * d],
                );
            }
        });
        for (b, slot) in buf.chunks_exact(w).enumerate() {
            out.s1[b] = slot[0];
            out.s2[b] = slot[1];
            out.v1[b * d..(b + 1) * d].copy_from_slice(&slot[2..2 + d]);
            out.v2[b * d..(b + 1) * d].copy_from_slice(&slot[2 + d..]);
        }
        out.pbuf = buf;
    }

    fn finish(&self, out: &mut DiffEval) {
        let m = self.m as f64;
        let nm = self.n as f64 / m;
        let s1: f64 = out.s1.iter().sum();
        let s2: f64 = out.s2.iter().sum();
        out.ell_hat = out.proxy + nm * (s1 + m * out.shift);
        let v = (s2 - s1 * s1 / m).max(0.0);
        out.sigma2 = nm * nm * v;
        out.log_lhat = out.ell_hat - 0.5 * out.sigma2;
        if out.has_grad {
            let d = out.d;
            let dbar = s1 / m;
            // V₁ and V₂ summed over the blocks in block order for each coordinate (block by
            // block over contiguous rows of the block sums; the same additions per coordinate).
            let (mut v1, mut v2) = (
                core::mem::take(&mut out.grad),
                core::mem::take(&mut out.vbuf),
            );
            for v in [&mut v1, &mut v2] {
                v.clear();
                v.resize(d, 0.0);
            }
            for (b1, b2) in out
                .v1
                .chunks_exact(d.max(1))
                .zip(out.v2.chunks_exact(d.max(1)))
            {
                for i in 0..d {
                    v1[i] += b1[i];
                    v2[i] += b2[i];
                }
            }
            for i in 0..d {
                // ∇ℓ̂ − ½∇σ̂² = ∇Σq + (n/m)V₁ − (n/m)²(V₂ − d̄V₁)
                v1[i] = out.proxy_grad[i] + nm * v1[i] - nm * nm * (v2[i] - dbar * v1[i]);
            }
            out.grad = v1;
            out.vbuf = v2;
        }
    }
}

/// Add the differences `ds` (and gradients `gs`, row-major, empty without gradient) to block g.
fn accumulate_block(out: &mut DiffEval, g: usize, ds: &[f64], gs: &[f64]) {
    let d = out.d;
    let c = out.shift;
    let mut s1 = 0.0;
    let mut s2 = 0.0;
    for (j, &dv) in ds.iter().enumerate() {
        let e = dv - c;
        s1 += e;
        s2 += e * e;
        if out.has_grad {
            let gr = &gs[j * d..(j + 1) * d];
            let v1 = &mut out.v1[g * d..(g + 1) * d];
            for i in 0..d {
                v1[i] += gr[i];
            }
            let v2 = &mut out.v2[g * d..(g + 1) * d];
            for i in 0..d {
                v2[i] += e * gr[i];
            }
        }
    }
    out.s1[g] += s1;
    out.s2[g] += s2;
}

/// [`accumulate_block`] with each gradient given as cⱼ xⱼ (`cs` the scalars, `xs` the rows,
/// row-major): the products cⱼ xⱼᵢ formed here, as the gathered evaluation forms them, and added
/// in the same order (the same bits). Compiled for the running CPU ([`crate::cpu`]).
fn accumulate_block_rows(out: &mut DiffEval, g: usize, ds: &[f64], cs: &[f64], xs: &[f64]) {
    let d = out.d;
    let (c, mut s1, mut s2) = (out.shift, out.s1[g], out.s2[g]);
    let (v1, v2) = (
        &mut out.v1[g * d..(g + 1) * d],
        &mut out.v2[g * d..(g + 1) * d],
    );
    add_block_rows(c, &mut s1, &mut s2, v1, v2, ds, cs, xs);
    out.s1[g] = s1;
    out.s2[g] = s2;
}

/// The sums of one block, each given by reference: S₁ += Σ eⱼ, S₂ += Σ eⱼ², V₁ += Σ cⱼxⱼ,
/// V₂ += Σ eⱼcⱼxⱼ with eⱼ = dⱼ − `shift` (S₁ and S₂ get the block's own sums added once, as
/// `accumulate_block`). Compiled for the running CPU ([`crate::cpu`]).
#[allow(clippy::too_many_arguments)]
fn add_block_rows(
    shift: f64,
    s1: &mut f64,
    s2: &mut f64,
    v1: &mut [f64],
    v2: &mut [f64],
    ds: &[f64],
    cs: &[f64],
    xs: &[f64],
) {
    crate::on_cpu!(
        add_block_rows_avx2(shift, s1, s2, v1, v2, ds, cs, xs),
        add_block_rows_any(shift, s1, s2, v1, v2, ds, cs, xs)
    )
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(clippy::too_many_arguments)]
fn add_block_rows_avx2(
    shift: f64,
    s1: &mut f64,
    s2: &mut f64,
    v1: &mut [f64],
    v2: &mut [f64],
    ds: &[f64],
    cs: &[f64],
    xs: &[f64],
) {
    add_block_rows_any(shift, s1, s2, v1, v2, ds, cs, xs);
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn add_block_rows_any(
    shift: f64,
    s1: &mut f64,
    s2: &mut f64,
    v1: &mut [f64],
    v2: &mut [f64],
    ds: &[f64],
    cs: &[f64],
    xs: &[f64],
) {
    let d = v1.len();
    let c = shift;
    let mut t1 = 0.0;
    let mut t2 = 0.0;
    for ((&dv, &cj), x) in ds.iter().zip(cs).zip(xs.chunks_exact(d.max(1))) {
        let e = dv - c;
        t1 += e;
        t2 += e * e;
        for ((a, b), &xi) in v1.iter_mut().zip(v2.iter_mut()).zip(x) {
            let gi = cj * xi;
            *a += gi;
            *b += e * gi;
        }
    }
    *s1 += t1;
    *s2 += t2;
}

/// Convenience: the estimates at θ for a fresh evaluation, as (ℓ̂, σ̂²).
pub fn estimate(
    est: &DiffEstimator,
    model: &dyn DataModel,
    cv: &ControlVariates,
    theta: &[f64],
    idx: &[usize],
) -> (f64, f64) {
    let mut e = DiffEval::default();
    est.evaluate(model, cv, theta, idx, false, &mut e);
    (e.ell_hat, e.sigma2)
}

/// The subsample size m that gives σ² = n²·Var_k(d_k(θ))/m = `target` at θ, from the differences
/// `ds` of a pilot sample at θ (ω = 1/n, sampling with replacement). At least 1.
pub fn m_for_target(n: usize, ds: &[f64], target: f64) -> usize {
    if ds.len() < 2 || target.is_nan() || target <= 0.0 {
        return 1;
    }
    let k = ds.len() as f64;
    let mean = ds.iter().sum::<f64>() / k;
    let var = ds.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (k - 1.0);
    let nf = n as f64;
    let m = nf * nf * var / target;
    if !m.is_finite() {
        return usize::MAX;
    }
    crate::math::ceil(m).max(1.0) as usize
}
