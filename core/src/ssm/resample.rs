//! Resampling schemes for particle filters: multinomial, stratified, systematic and residual.
//!
//! Every scheme is unbiased: the offspring count Oᵢ of particle i has E\[Oᵢ\] = N Wᵢ for
//! normalised weights W. They differ in variance (Douc, Cappé & Moulines 2005):
//!
//! # Formula
//! With cumulative weights Cᵢ = Σ_{j≤i} Wⱼ, particle i receives every point uₖ ∈ [Cᵢ₋₁, Cᵢ):
//! - multinomial: u₁..u_N i.i.d. U(0, 1) (generated already sorted, by normalised exponential
//!   spacings, so resampling is O(N));
//! - stratified: uₖ = (k + Uₖ)/N with Uₖ i.i.d. U(0, 1) (Kitagawa 1996);
//! - systematic: uₖ = (k + U)/N with one U ~ U(0, 1); Oᵢ ∈ {⌊NWᵢ⌋, ⌈NWᵢ⌉};
//! - residual: ⌊NWᵢ⌋ deterministic copies, then the R = N − Σ⌊NWⱼ⌋ remaining ones drawn by
//!   *systematic* resampling of the residual weights (NWᵢ − ⌊NWᵢ⌋)/R (Liu & Chen 1998 use
//!   multinomial; the systematic remainder keeps Oᵢ ∈ {⌊NWᵢ⌋, ⌈NWᵢ⌉}).
//!
//! Ancestor indices are returned in non-decreasing order.

use crate::error::Error;
use crate::math;
use crate::rng::{uniform, uniform_open, Rng};
use alloc::vec::Vec;

/// A resampling scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resampling {
    /// i.i.d. categorical draws.
    Multinomial,
    /// One uniform per stratum [k/N, (k+1)/N).
    Stratified,
    /// One uniform shared by all strata.
    Systematic,
    /// Deterministic integer parts, systematic remainder.
    Residual,
}

impl Resampling {
    /// All schemes, in the order of [`Resampling::NAMES`].
    pub const ALL: [Resampling; 4] = [
        Resampling::Multinomial,
        Resampling::Stratified,
        Resampling::Systematic,
        Resampling::Residual,
    ];
    /// Setting values accepted by [`Resampling::from_name`].
    pub const NAMES: [&'static str; 4] = ["multinomial", "stratified", "systematic", "residual"];

    /// The scheme called `name` (one of [`Resampling::NAMES`]).
    pub fn from_name(name: &str) -> Result<Self, Error> {
        for (k, n) in Self::NAMES.iter().enumerate() {
            if *n == name {
                return Ok(Self::ALL[k]);
            }
        }
        Err(Error::Unknown {
            what: "resampling scheme",
            name: name.into(),
        })
    }

    /// The setting value of this scheme.
    pub fn name(self) -> &'static str {
        match self {
            Resampling::Multinomial => "multinomial",
            Resampling::Stratified => "stratified",
            Resampling::Systematic => "systematic",
            Resampling::Residual => "residual",
        }
    }

    /// Draw `n` ancestor indices from the normalised `weights` into `out` (cleared first).
    /// Weights must be ≥ 0 and sum to 1 up to rounding; an empty `weights` gives no ancestors.
    pub fn resample<R: Rng + ?Sized>(
        self,
        weights: &[f64],
        n: usize,
        rng: &mut R,
        out: &mut Vec<usize>,
    ) {
        out.clear();
        if weights.is_empty() || n == 0 {
            return;
        }
        match self {
            Resampling::Multinomial => multinomial(weights, n, rng, out),
            Resampling::Stratified => {
                let inv = 1.0 / n as f64;
                sweep(weights, n, out, |k, _| (k as f64 + uniform(rng)) * inv)
            }
            Resampling::Systematic => {
                let u = uniform(rng);
                let inv = 1.0 / n as f64;
                sweep(weights, n, out, |k, _| (k as f64 + u) * inv)
            }
            Resampling::Residual => residual(weights, n, rng, out),
        }
    }
}

/// Effective sample size 1/Σ Wᵢ² of normalised weights (0 for an empty slice).
pub fn ess(weights: &[f64]) -> f64 {
    let s: f64 = weights.iter().map(|w| w * w).sum();
    if s > 0.0 {
        1.0 / s
    } else {
        0.0
    }
}

/// Offspring counts Oᵢ (how often each index occurs) of an ancestor vector, length `n_parents`.
pub fn offspring_counts(ancestors: &[usize], n_parents: usize) -> Vec<usize> {
    let mut c = alloc::vec![0usize; n_parents];
    for &a in ancestors {
        if let Some(ci) = c.get_mut(a) {
            *ci += 1;
        }
    }
    c
}

/// Assign the k-th of `n` increasing points `point(k, ·)` in [0, 1) to the particle whose
/// cumulative-weight interval contains it. Points are scaled by the weights' actual sum (summed
/// in the same order as the sweep), so rounding can never select a trailing zero weight.
fn sweep(weights: &[f64], n: usize, out: &mut Vec<usize>, mut point: impl FnMut(usize, ()) -> f64) {
    let last = weights.len() - 1;
    let total: f64 = weights.iter().fold(0.0, |a, w| a + w);
    let mut i = 0usize;
    let mut cum = weights[0];
    for k in 0..n {
        let u = point(k, ()) * total;
        while u >= cum && i < last {
            i += 1;
            cum += weights[i];
        }
        out.push(i);
    }
}

/// Sorted i.i.d. uniforms by exponential spacings: uₖ = (E₁+…+Eₖ)/(E₁+…+E_{n+1}).
fn multinomial<R: Rng + ?Sized>(weights: &[f64], n: usize, rng: &mut R, out: &mut Vec<usize>) {
    let mut total = 0.0;
    let mut spacings = Vec::with_capacity(n + 1);
    for _ in 0..=n {
        let e = -math::ln(uniform_open(rng));
        total += e;
        spacings.push(e);
    }
    let mut acc = 0.0;
    sweep(weights, n, out, |k, _| {
        acc += spacings[k];
        acc / total
    });
}

fn residual<R: Rng + ?Sized>(weights: &[f64], n: usize, rng: &mut R, out: &mut Vec<usize>) {
    let nf = n as f64;
    let mut resid = Vec::with_capacity(weights.len());
    let mut copies = 0usize;
    for (i, &w) in weights.iter().enumerate() {
        let nw = nf * w;
        let f = math::floor(nw);
        let k = f as usize;
        // never more than n deterministic copies, whatever the rounding
        let k = k.min(n - copies);
        for _ in 0..k {
            out.push(i);
        }
        copies += k;
        resid.push((nw - f).max(0.0));
    }
    let r = n - copies;
    if r == 0 {
        return;
    }
    let total: f64 = resid.iter().sum();
    if total.is_nan() || total <= 0.0 {
        // rounding left no residual mass: fill with the heaviest particle
        let mut best = 0;
        for (i, &w) in weights.iter().enumerate() {
            if w > weights[best] {
                best = i;
            }
        }
        out.extend(core::iter::repeat_n(best, r));
        out.sort_unstable();
        return;
    }
    for v in resid.iter_mut() {
        *v /= total;
    }
    let u = uniform(rng);
    let inv = 1.0 / r as f64;
    let mut extra = Vec::with_capacity(r);
    sweep(&resid, r, &mut extra, |k, _| (k as f64 + u) * inv);
    out.extend_from_slice(&extra);
    out.sort_unstable();
}
