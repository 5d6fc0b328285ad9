//! Kernel Stein discrepancy (KSD) with the inverse multi-quadric (IMQ) base kernel, after
//! Gorham & Mackey (2017) and Putcha (2024, §3.5, §4.5): a measure of how far a sample is from
//! a target π known only through its score s(θ) = ∇ log π(θ), usable on the output of any
//! sampler, exact or approximate.
//!
//! # Formula
//! Base kernel k(x, y) = (c² + ‖x − y‖²)^β with c > 0, β ∈ (−1, 0) (default c = 1, β = −½).
//! With r = x − y, u = c² + ‖r‖², s = s(x), s′ = s(y), the Langevin–Stein kernel per
//! coordinate j (its sum over j is ∇ₓ·∇ᵧk + ∇ₓk·s′ + ∇ᵧk·s + k·s·s′) is
//!
//! k⁰ⱼ(x, y) = sⱼs′ⱼ·u^β − 2β·rⱼu^(β−1)·sⱼ + 2β·rⱼu^(β−1)·s′ⱼ − 2β·u^(β−1) − 4β(β−1)·rⱼ²·u^(β−2),
//!
//! k⁰(x, y) = Σⱼ k⁰ⱼ = (s·s′)u^β − 2βu^(β−1)(s·r − s′·r) − 2βd·u^(β−1) − 4β(β−1)‖r‖²u^(β−2).
//!
//! On the diagonal k⁰(x, x) = c^(2β)‖s(x)‖² − 2βd·c^(2β−2), i.e. ‖s‖² + d for c = 1, β = −½.
//! For draws θ₁..θ_K with weights w (1 for ordinary draws, the sign for signed draws):
//!
//! - joint KSD (Gorham–Mackey; the thesis's Ch.4 code) = √(V), V = Σ_{k,k′} w_k w_k′ k⁰(θ_k, θ_k′)/(Σw)²;
//! - thesis KSD (eqs. (3.5.4), (4.5.1)) = Σⱼ √(Vⱼ), Vⱼ the same V-statistic of k⁰ⱼ;
//! - U-statistic: the same sum over k ≠ k′ divided by (Σw)² − Σw², an unbiased estimate of
//!   E_{θ,θ′~q}[k⁰] that is 0 when q = π (the Stein identity).
//!
//! Negative V-statistics (possible with signed weights or rounding) are clamped at 0 before the
//! square root. Absolute values of the two definitions are not comparable: compare methods only
//! within one definition.
//!
//! # Scores
//! [`exact_scores`] uses the full-data score ∇ log p(θ) + Σᵢ ∇ℓᵢ(θ) (cost n per-datum gradients
//! per draw); [`stochastic_scores`] the minibatch estimate ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ)
//! with S a uniform batch of m indices without replacement ("stochastic Stein discrepancies",
//! Gorham et al. 2020, as the thesis's Ch.4). Stochastic scores inflate the KSD by their
//! noise: with a batch of m the excess in V is about E‖noise‖²/K on the diagonal terms.
//!
//! # Cost and thinning
//! O(K²d) for K draws (pairs are visited once, by symmetry). Callers keep K bounded with
//! [`thin_indices`] / [`thin_chains`]: evenly spaced draws, at most [`DEFAULT_MAX_DRAWS`]
//! by default, which takes about 10⁶·d kernel evaluations. Exact scores cost K·n per-datum
//! gradients on top (10⁹ at K = 1000, n = 10⁶); [`budget_draws`] picks a K that bounds it.
//!
//! ## References
//! J. Gorham, L. Mackey (2017), *Measuring sample quality with kernels*, ICML;
//! J. Gorham, A. Raj, L. Mackey (2020), *Stochastic Stein discrepancies*, NeurIPS;
//! S. Putcha (2024), *Scalable Bayesian inference using stochastic gradient MCMC*, PhD thesis,
//! Lancaster University, §3.5 and §4.5.

use crate::dist::IndexSampler;
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::rng::Rng;
use alloc::vec;
use alloc::vec::Vec;

/// Default bound on the number of draws a KSD is computed from (after thinning).
pub const DEFAULT_MAX_DRAWS: usize = 1000;

/// The fewest draws [`budget_draws`] chooses (below ~100 draws the KSD of exact draws is
/// dominated by its own 1/√K floor).
pub const MIN_BUDGET_DRAWS: usize = 100;

/// The exact-score budget of [`budget_draws`], in per-datum gradient coordinates (n·d per
/// draw). A logistic per-datum gradient costs about 4.5 ns per coordinate on one core
/// (measured: 10⁹ gradients at d = 10 took 45 s of CPU), so this is about 5 s of CPU.
pub const SCORE_BUDGET: u64 = 1_000_000_000;

/// A default number of draws K for a KSD with exact scores on n data in d dimensions, bounding
/// the K·n·d cost of the scores by [`SCORE_BUDGET`] within [[`MIN_BUDGET_DRAWS`],
/// [`DEFAULT_MAX_DRAWS`]].
///
/// # Formula
/// K = min(1000, max(100, ⌊10⁹ / (n·d)⌋)); 1000 for n·d = 0.
pub fn budget_draws(n: usize, d: usize) -> usize {
    let nd = (n as u64).saturating_mul(d as u64);
    if nd == 0 {
        return DEFAULT_MAX_DRAWS;
    }
    let k = usize::try_from(SCORE_BUDGET / nd).unwrap_or(usize::MAX);
    k.clamp(MIN_BUDGET_DRAWS, DEFAULT_MAX_DRAWS)
}

/// The inverse multi-quadric base kernel k(x, y) = (c² + ‖x − y‖²)^β.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Imq {
    c: f64,
    beta: f64,
}

impl Default for Imq {
    fn default() -> Self {
        Imq::DEFAULT
    }
}

impl Imq {
    /// c = 1, β = −½ (Gorham & Mackey 2017; the thesis's choice).
    pub const DEFAULT: Imq = Imq { c: 1.0, beta: -0.5 };

    /// The kernel with scale `c` > 0 and exponent `beta` ∈ (−1, 0), the range for which the
    /// IMQ KSD detects non-convergence (Gorham & Mackey 2017, Thm. 8).
    pub fn new(c: f64, beta: f64) -> Result<Self, Error> {
        if !(c.is_finite() && c > 0.0) {
            return Err(Error::setting("ksd_c", "must be a finite number > 0"));
        }
        if !(beta > -1.0 && beta < 0.0) {
            return Err(Error::setting("ksd_beta", "must lie in (−1, 0)"));
        }
        Ok(Imq { c, beta })
    }

    /// Scale c.
    pub fn c(&self) -> f64 {
        self.c
    }

    /// Exponent β.
    pub fn beta(&self) -> f64 {
        self.beta
    }

    /// u^β, u^(β−1), u^(β−2) for u = c² + ‖r‖².
    #[inline]
    fn powers(&self, r2: f64) -> (f64, f64, f64) {
        let u = self.c * self.c + r2;
        let ub = if self.beta == -0.5 {
            1.0 / math::sqrt(u)
        } else {
            math::pow(u, self.beta)
        };
        let ub1 = ub / u;
        (ub, ub1, ub1 / u)
    }

    /// The base kernel k(x, y) = (c² + ‖x − y‖²)^β. NaN when the lengths differ.
    pub fn base(&self, x: &[f64], y: &[f64]) -> f64 {
        if x.len() != y.len() {
            return f64::NAN;
        }
        let r2: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
        self.powers(r2).0
    }

    /// The Stein kernel k⁰(x, y) summed over coordinates (module formula), from the points and
    /// their scores sx = s(x), sy = s(y). NaN when the four lengths differ.
    pub fn stein(&self, x: &[f64], sx: &[f64], y: &[f64], sy: &[f64]) -> f64 {
        let d = x.len();
        if sx.len() != d || y.len() != d || sy.len() != d {
            return f64::NAN;
        }
        let (mut r2, mut ss, mut sr) = (0.0, 0.0, 0.0);
        for j in 0..d {
            let r = x[j] - y[j];
            r2 += r * r;
            ss += sx[j] * sy[j];
            sr += (sx[j] - sy[j]) * r;
        }
        let b = self.beta;
        let (ub, ub1, ub2) = self.powers(r2);
        ss * ub - 2.0 * b * ub1 * sr - 2.0 * b * d as f64 * ub1 - 4.0 * b * (b - 1.0) * r2 * ub2
    }

    /// The per-coordinate Stein kernels k⁰ⱼ(x, y), written into `out` (length d). Leaves `out`
    /// untouched and returns false when the lengths differ.
    pub fn stein_coords(
        &self,
        x: &[f64],
        sx: &[f64],
        y: &[f64],
        sy: &[f64],
        out: &mut [f64],
    ) -> bool {
        let d = x.len();
        if sx.len() != d || y.len() != d || sy.len() != d || out.len() != d {
            return false;
        }
        let r2: f64 = x.iter().zip(y).map(|(a, b)| (a - b) * (a - b)).sum();
        let (ub, ub1, ub2) = self.powers(r2);
        let b = self.beta;
        for j in 0..d {
            let r = x[j] - y[j];
            out[j] = sx[j] * sy[j] * ub
                - 2.0 * b * r * ub1 * (sx[j] - sy[j])
                - 2.0 * b * ub1
                - 4.0 * b * (b - 1.0) * r * r * ub2;
        }
        true
    }
}

/// The KSD of a weighted sample, in both definitions, with the underlying statistics.
#[derive(Clone, Debug, PartialEq)]
pub struct Ksd {
    /// Joint KSD √V (Gorham–Mackey's L2 combination over coordinates).
    pub joint: f64,
    /// The thesis's KSD Σⱼ √Vⱼ (L1 sum over coordinates).
    pub thesis: f64,
    /// V-statistic V = Σ_{k,k′} w_k w_k′ k⁰/(Σw)² (not clamped).
    pub v_statistic: f64,
    /// U-statistic over distinct pairs (NaN for fewer than 2 draws).
    pub u_statistic: f64,
    /// Per-coordinate V-statistics Vⱼ (not clamped).
    pub v_coords: Vec<f64>,
    /// Number of draws used.
    pub draws: usize,
    /// Standard error of [`joint`](Ksd::joint) from the draws' own spread, treating them as
    /// independent (evenly thinned chains): 2·sd(hₖ)/√K for V = mean(hₖ), hₖ = Σ_k′ k⁰(θ_k,
    /// θ_k′)/K, through √V (delta method). NaN for fewer than 2 draws, V ≤ 0, or unequal
    /// weights (a signed sampler's).
    pub joint_se: f64,
}

/// Check a row-major `K × d` pair of point and score arrays; returns K.
fn shape(points: &[f64], scores: &[f64], d: usize) -> Result<usize, Error> {
    if d == 0 {
        return Err(Error::data("KSD: the dimension must be at least 1"));
    }
    if points.len() / d * d != points.len() || scores.len() != points.len() {
        return Err(Error::data(alloc::format!(
            "KSD: {} point values and {} score values do not form K × {d} arrays",
            points.len(),
            scores.len()
        )));
    }
    let k = points.len() / d;
    if k == 0 {
        return Err(Error::data("KSD: no draws"));
    }
    Ok(k)
}

/// KSD of K unweighted draws (`points`, `scores`: K × d row-major). Errors: d = 0, no draws, or
/// shapes that do not match. Non-finite points or scores give NaN statistics, not an error.
pub fn ksd(kernel: &Imq, points: &[f64], scores: &[f64], d: usize) -> Result<Ksd, Error> {
    let k = shape(points, scores, d)?;
    ksd_weighted(kernel, points, scores, &vec![1.0; k], d)
}

/// KSD of K weighted draws (weights of length K: importance weights, or the ±1 signs of a
/// signed sampler). Errors as [`ksd`], plus weights of the wrong length or with zero sum.
///
/// # Formula
/// V = Σ_{k,k′} w_k w_k′ k⁰(θ_k, θ_k′)/(Σw)², U = Σ_{k≠k′} w_k w_k′ k⁰/((Σw)² − Σw²).
pub fn ksd_weighted(
    kernel: &Imq,
    points: &[f64],
    scores: &[f64],
    weights: &[f64],
    d: usize,
) -> Result<Ksd, Error> {
    let k = shape(points, scores, d)?;
    if weights.len() != k {
        return Err(Error::data(alloc::format!(
            "KSD: {} weights for {k} draws",
            weights.len()
        )));
    }
    let sw: f64 = weights.iter().sum();
    let sw2: f64 = weights.iter().map(|w| w * w).sum();
    if sw == 0.0 {
        return Err(Error::data("KSD: the weights sum to zero"));
    }
    let mut diag = vec![0.0; d];
    let mut off = vec![0.0; d];
    let mut tmp = vec![0.0; d];
    // h[a] = Σ_b k⁰(θ_a, θ_b) summed over coordinates (for the standard error only).
    let mut h = vec![0.0; k];
    let row = |a: usize| a * d..(a + 1) * d;
    for a in 0..k {
        let (xa, sa) = (&points[row(a)], &scores[row(a)]);
        kernel.stein_coords(xa, sa, xa, sa, &mut tmp);
        let wa = weights[a];
        for j in 0..d {
            diag[j] += wa * wa * tmp[j];
        }
        h[a] += tmp.iter().sum::<f64>();
        for b in (a + 1)..k {
            kernel.stein_coords(xa, sa, &points[row(b)], &scores[row(b)], &mut tmp);
            let w = 2.0 * wa * weights[b];
            for j in 0..d {
                off[j] += w * tmp[j];
            }
            let t: f64 = tmp.iter().sum();
            h[a] += t;
            h[b] += t;
        }
    }
    let norm = sw * sw;
    let v_coords: Vec<f64> = (0..d).map(|j| (diag[j] + off[j]) / norm).collect();
    let v: f64 = v_coords.iter().sum();
    let off_total: f64 = off.iter().sum();
    let u_den = norm - sw2;
    let u = if k >= 2 && u_den != 0.0 {
        off_total / u_den
    } else {
        f64::NAN
    };
    let root = |x: f64| {
        if x.is_nan() {
            x
        } else {
            math::sqrt(x.max(0.0))
        }
    };
    let equal = weights.iter().all(|&w| w == weights[0]);
    let joint_se = if k >= 2 && equal && v > 0.0 {
        let kf = k as f64;
        let mean = h.iter().sum::<f64>() / (kf * kf);
        let var = h
            .iter()
            .map(|&x| (x / kf - mean) * (x / kf - mean))
            .sum::<f64>()
            / (kf - 1.0);
        2.0 * math::sqrt(var / kf) / (2.0 * math::sqrt(v))
    } else {
        f64::NAN
    };
    Ok(Ksd {
        joint_se,
        joint: root(v),
        thesis: v_coords.iter().map(|&x| root(x)).sum(),
        v_statistic: v,
        u_statistic: u,
        v_coords,
        draws: k,
    })
}

/// Joint KSD of the first m draws for every m = 1..K, in one O(K²d) pass: the KSD "against the
/// run" when the draws are in time order. `weights` (length K) weight the draws as in
/// [`ksd_weighted`]; `None` means all 1. Errors as [`ksd_weighted`]; a prefix whose weights sum
/// to zero gives NaN.
///
/// # Formula
/// S_m = S_{m−1} + w_m²k⁰(θ_m, θ_m) + 2 Σ_{i<m} w_i w_m k⁰(θ_i, θ_m),
/// KSD_m = √max(S_m, 0)/|Σ_{i≤m} w_i|.
pub fn ksd_trace(
    kernel: &Imq,
    points: &[f64],
    scores: &[f64],
    weights: Option<&[f64]>,
    d: usize,
) -> Result<Vec<f64>, Error> {
    let k = shape(points, scores, d)?;
    if let Some(w) = weights {
        if w.len() != k {
            return Err(Error::data(alloc::format!(
                "KSD: {} weights for {k} draws",
                w.len()
            )));
        }
    }
    let w = |i: usize| weights.and_then(|w| w.get(i).copied()).unwrap_or(1.0);
    let row = |a: usize| a * d..(a + 1) * d;
    let mut out = Vec::with_capacity(k);
    let (mut s, mut sw) = (0.0, 0.0);
    for m in 0..k {
        let (xm, sm) = (&points[row(m)], &scores[row(m)]);
        let wm = w(m);
        s += wm * wm * kernel.stein(xm, sm, xm, sm);
        for i in 0..m {
            s += 2.0 * w(i) * wm * kernel.stein(&points[row(i)], &scores[row(i)], xm, sm);
        }
        sw += wm;
        let v = if sw == 0.0 { f64::NAN } else { s / (sw * sw) };
        out.push(if v.is_nan() {
            v
        } else {
            math::sqrt(v.max(0.0))
        });
    }
    Ok(out)
}

/// At most `max` evenly spaced indices of `0..len`: all of them when len ≤ max, otherwise
/// ⌊i·len/max⌋ for i = 0..max (every (len/max)-th draw, starting with the first). Empty for
/// max = 0.
pub fn thin_indices(len: usize, max: usize) -> Vec<usize> {
    if len <= max {
        return (0..len).collect();
    }
    (0..max)
        .map(|i| ((i as u128 * len as u128) / max as u128) as usize)
        .collect()
}

/// Thinning of several chains to at most `max` draws in total: the budget is split over the
/// non-empty chains as evenly as possible (⌊max/live⌋ each, one more for the first
/// max mod live of them; with more non-empty chains than `max`, the first `max` chains keep one
/// draw each and the others none), and chain c keeps [`thin_indices`]`(len_c, quota_c)`.
/// Returned as (chain, index) pairs in time order (by rank within the chain, then chain), so
/// that [`ksd_trace`] over them follows the run.
pub fn thin_chains(lens: &[usize], max: usize) -> Vec<(usize, usize)> {
    let live = lens.iter().filter(|&&l| l > 0).count();
    if live == 0 || max == 0 {
        return Vec::new();
    }
    let (base, extra) = (max / live, max % live);
    let mut rank = 0;
    let quotas: Vec<usize> = lens
        .iter()
        .map(|&l| {
            if l == 0 {
                return 0;
            }
            rank += 1;
            base + usize::from(rank <= extra)
        })
        .collect();
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    for (c, (&len, &quota)) in lens.iter().zip(&quotas).enumerate() {
        for (rank, i) in thin_indices(len, quota).into_iter().enumerate() {
            out.push((rank, c, i));
        }
    }
    // Rank within the chain orders the chains' thinned draws in lockstep.
    out.sort_unstable();
    out.into_iter().map(|(_, c, i)| (c, i)).collect()
}

/// Points on the user's scale θ into the model's sampling coordinates (a whitened model's z;
/// unchanged otherwise), K × d row-major.
fn sampler_points(model: &dyn DataModel, points: &[f64]) -> Option<Vec<f64>> {
    let map = model.user_map()?;
    let d = map.dim();
    let mut z = vec![0.0; points.len()];
    let mut tmp = vec![0.0; d];
    for (t, zz) in points.chunks_exact(d).zip(z.chunks_exact_mut(d)) {
        map.to_sampler(t, zz, &mut tmp);
    }
    Some(z)
}

/// Scores in the model's sampling coordinates to scores of log π(θ) (∇_θ = C ∇_z), in place.
fn scores_to_user(model: &dyn DataModel, scores: &mut [f64]) {
    if let Some(map) = model.user_map() {
        let d = map.dim();
        let mut gz = vec![0.0; d];
        for g in scores.chunks_exact_mut(d) {
            gz.copy_from_slice(g);
            map.score_to_user(&gz, g);
        }
    }
}

/// Exact scores ∇ log π(θ) = ∇ log p(θ) + Σᵢ ∇ℓᵢ(θ) of K points (K × d row-major), K × d
/// row-major. Points and scores are on the user's scale θ, also for a whitened model
/// ([`DataModel::user_map`]). Errors: a dimension mismatch, or a non-finite score (a point
/// outside the support, or overflow).
pub fn exact_scores(model: &dyn DataModel, points: &[f64]) -> Result<Vec<f64>, Error> {
    let d = model.dim();
    let k = shape(points, points, d)?;
    let z = sampler_points(model, points);
    let points = z.as_deref().unwrap_or(points);
    let mut out = vec![0.0; k * d];
    for (x, g) in points.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        model.log_prior_grad(x, g);
    }
    // All points in one pass over the data (the same bits as a pass per point).
    model.log_lik_grad_all_many(points, &mut out);
    if out.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical(
            "KSD: non-finite score at a draw (outside the support?)".into(),
        ));
    }
    scores_to_user(model, &mut out);
    Ok(out)
}

/// Stochastic scores ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ), S a fresh uniform batch of
/// `batch` indices without replacement per point (clamped to n; `batch` ≥ n gives the exact
/// score). Points and scores on the user's scale, as [`exact_scores`]. Errors as
/// [`exact_scores`], plus batch = 0 or a model without data.
pub fn stochastic_scores<R: Rng + ?Sized>(
    model: &dyn DataModel,
    points: &[f64],
    batch: usize,
    rng: &mut R,
) -> Result<Vec<f64>, Error> {
    let d = model.dim();
    let n = model.n();
    let k = shape(points, points, d)?;
    let z = sampler_points(model, points);
    let points = z.as_deref().unwrap_or(points);
    if batch == 0 {
        return Err(Error::setting("batch_size", "must be at least 1"));
    }
    let m = batch.min(n);
    let mut sampler = IndexSampler::new(n, m, false)?;
    let scale = n as f64 / m as f64;
    let mut idx = Vec::with_capacity(m);
    let mut lik = vec![0.0; d];
    let mut out = vec![0.0; k * d];
    for (x, g) in points.chunks_exact(d).zip(out.chunks_exact_mut(d)) {
        model.log_prior_grad(x, g);
        lik.iter_mut().for_each(|v| *v = 0.0);
        if m == n {
            model.log_lik_grad_all(x, &mut lik);
        } else {
            sampler.sample(rng, &mut idx);
            for &i in &idx {
                model.log_lik_grad(x, i, &mut lik);
            }
        }
        let sc = if m == n { 1.0 } else { scale };
        for (gj, lj) in g.iter_mut().zip(&lik) {
            *gj += sc * lj;
        }
        if g.iter().any(|v| !v.is_finite()) {
            return Err(Error::Numerical(
                "KSD: non-finite score at a draw (outside the support?)".into(),
            ));
        }
    }
    scores_to_user(model, &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validates_and_thins() {
        assert!(Imq::new(0.0, -0.5).is_err());
        assert!(Imq::new(1.0, 0.0).is_err());
        assert!(Imq::new(1.0, -1.0).is_err());
        assert!(Imq::new(2.0, -0.3).is_ok());
        assert_eq!(thin_indices(3, 5), vec![0, 1, 2]);
        assert_eq!(budget_draws(1000, 5), 1000);
        assert_eq!(budget_draws(200_000, 5), 1000);
        assert_eq!(budget_draws(250_000, 5), 800);
        assert_eq!(budget_draws(1_000_000, 5), 200);
        assert_eq!(budget_draws(1_000_000, 10), 100);
        assert_eq!(budget_draws(100_000_000, 10), 100);
        assert_eq!(budget_draws(0, 3), 1000);
        assert_eq!(budget_draws(usize::MAX, usize::MAX), 100);
        assert_eq!(thin_indices(10, 5), vec![0, 2, 4, 6, 8]);
        assert!(thin_indices(10, 0).is_empty());
        assert_eq!(
            thin_chains(&[4, 0, 4], 4),
            vec![(0, 0), (2, 0), (0, 2), (2, 2)]
        );
        // The cap holds with more chains than `max`, and the remainder is used.
        assert_eq!(thin_chains(&[5, 5, 0, 5], 2), vec![(0, 0), (1, 0)]);
        assert_eq!(
            thin_chains(&[4, 4, 4], 5),
            vec![(0, 0), (1, 0), (2, 0), (0, 2), (1, 2)]
        );
        for (lens, max) in [
            (vec![10usize; 7], 3usize),
            (vec![3, 100, 0, 1], 10),
            (vec![1000; 4], 1000),
            (vec![1; 2000], 1000),
        ] {
            let total: usize = lens.iter().sum();
            let picks = thin_chains(&lens, max);
            assert!(picks.len() <= max, "{} > {max}", picks.len());
            if lens.iter().all(|&l| l >= max) {
                assert_eq!(picks.len(), max.min(total));
            }
            assert!(picks.iter().all(|&(c, i)| i < lens[c]));
        }
        let k = Imq::DEFAULT;
        assert!(ksd(&k, &[], &[], 1).is_err());
        assert!(ksd(&k, &[1.0, 2.0], &[1.0], 1).is_err());
        assert!(ksd(&k, &[1.0], &[1.0], 0).is_err());
        assert!(ksd_weighted(&k, &[1.0, 2.0], &[1.0, 1.0], &[1.0, -1.0], 1).is_err());
        assert!(k.stein(&[1.0], &[1.0, 2.0], &[1.0], &[1.0]).is_nan());
    }

    #[test]
    fn coords_sum_to_joint_and_trace_ends_at_ksd() {
        let k = Imq::new(1.3, -0.4).unwrap();
        let x = [0.3, -1.0, 2.0];
        let sx = [1.0, 0.5, -0.2];
        let y = [-0.7, 0.1, 1.5];
        let sy = [0.2, -1.5, 0.9];
        let mut c = [0.0; 3];
        assert!(k.stein_coords(&x, &sx, &y, &sy, &mut c));
        let joint = k.stein(&x, &sx, &y, &sy);
        assert!((c.iter().sum::<f64>() - joint).abs() < 1e-12);
        // Symmetry.
        assert!((k.stein(&y, &sy, &x, &sx) - joint).abs() < 1e-12);
        let pts = [x, y].concat();
        let scs = [sx, sy].concat();
        let r = ksd(&k, &pts, &scs, 3).unwrap();
        let t = ksd_trace(&k, &pts, &scs, None, 3).unwrap();
        assert!((t[1] - r.joint).abs() < 1e-12);
        assert!((r.v_coords.iter().sum::<f64>() - r.v_statistic).abs() < 1e-12);
        assert!((r.u_statistic - joint).abs() < 1e-12);
        let w = [1.0, 0.4];
        let rw = ksd_weighted(&k, &pts, &scs, &w, 3).unwrap();
        let tw = ksd_trace(&k, &pts, &scs, Some(&w), 3).unwrap();
        assert!((tw[1] - rw.joint).abs() < 1e-12);
        assert!(ksd_trace(&k, &pts, &scs, Some(&w[..1]), 3).is_err());
    }
}
