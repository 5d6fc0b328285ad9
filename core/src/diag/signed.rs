//! Sign-weighted summaries for signed pseudo-marginal draws (signed HMC-ECS, block-Poisson
//! estimator): the chain targets π̃ ∝ |L̂|·prior and expectations under π are recovered as
//! E_π[f] = E_π̃[f S]/E_π̃[S] (Quiroz et al., eqs. 16–17).

use alloc::vec::Vec;

use super::{ess_core, py_min, rhat, split_chains, var, Summary};
use crate::math;

/// Weighted type-7 quantile of (value, weight) pairs sorted by value; reduces to R's type 7 when
/// all weights are equal. Point k sits at P_k = (Σ_{j<k} w_j)/(Σ_{j<n−1} w_j); the quantile
/// interpolates linearly between the first pair of neighbours with P_{k+1} ≥ p. With negative
/// weights P need not be monotone and this is the first crossing. NaN if Σ_{j<n−1} w_j ≤ 0.
fn weighted_type7(sorted: &[(f64, f64)], p: f64) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n == 1 {
        return sorted[0].0;
    }
    let t: f64 = sorted[..n - 1].iter().map(|&(_, w)| w).sum();
    if t.is_nan() || t <= 0.0 {
        return f64::NAN;
    }
    let mut c = 0.0;
    for k in 0..n - 1 {
        let pk = c / t;
        c += sorted[k].1;
        let pk1 = if k + 1 == n - 1 { 1.0 } else { c / t };
        if pk1 >= p {
            let d = pk1 - pk;
            let gamma = if d > 0.0 {
                ((p - pk) / d).clamp(0.0, 1.0)
            } else {
                0.0
            };
            return (1.0 - gamma) * sorted[k].0 + gamma * sorted[k + 1].0;
        }
    }
    sorted[n - 1].0
}

/// Effective sample size of the sign-weighted mean of φ, with linearised series g in chains.
/// ESS = V_w(φ)/(V₀(g)/ESS_mean(g)): the number of independent draws from π that would give
/// the same variance. Falls back to ESS_mean(g) (the number of split draws) when g is constant.
fn signed_ess(var_w: f64, g: &[Vec<f64>]) -> (f64, f64) {
    let ess_g = ess_mean_vec(g);
    let all: Vec<f64> = g.iter().flat_map(|c| c.iter().copied()).collect();
    let v0 = var(&all, 0.0);
    let v1 = var(&all, 1.0);
    let mcse = math::sqrt(v1) / math::sqrt(ess_g);
    if v0 == 0.0 {
        return (ess_g, mcse);
    }
    (var_w / (v0 / ess_g), mcse)
}

/// Plain split ESS of owned chains (validity: ≥ 1 chain of ≥ 4 equal-length draws).
fn ess_mean_vec(v: &[Vec<f64>]) -> f64 {
    let Some(first) = v.first() else {
        return f64::NAN;
    };
    if first.len() < 4 || v.iter().any(|c| c.len() != first.len()) {
        return f64::NAN;
    }
    let slices: Vec<&[f64]> = v.iter().map(|c| c.as_slice()).collect();
    ess_core(&split_chains(&slices))
}

/// Sign-weighted summary for draws fᵢ with signs (or any real weights) sᵢ, same shape as
/// `chains`, typically ±1 from signed HMC-ECS. With all sᵢ = 1 it equals [`super::summarize`]
/// except that `ess_bulk` is then the mean-ESS ([`super::ess_mean`]) rather than the
/// rank-normalised one (to rounding; see below).
///
/// - mean, sd, quantiles are sign-weighted (quantiles as a weighted type 7: see the formula).
/// - `mcse_mean` is the delta-method standard error of the ratio estimator, from the plain
///   split ESS of its linearised series gᵢ.
/// - `ess_bulk` is the number of independent draws from π worth the same precision for the
///   mean, V_w(f)/mcse²-style; it includes the sign penalty (≈ (2τ − 1)² for ±1 signs with
///   Pr(s = +1) = τ).
/// - `ess_tail` is the same construction for the indicators 1{f ≤ q̂₀.₀₅} and 1{f ≤ q̂₀.₉₅},
///   the smaller of the two.
/// - `rhat` is [`super::rhat`] of the draws themselves (convergence of the chain on π̃).
///
/// Every field is NaN if shapes differ, a draw or sign is NaN, there are no draws, or
/// Σ sᵢ ≤ 0; sd is NaN if the weighted variance comes out negative; ESS/MCSE/R-hat follow the
/// validity rules of the unweighted functions.
///
/// # Formula
/// With S = Σ sᵢ, N draws: μ̂ = Σ sᵢfᵢ/S; V_w = Σ sᵢ(fᵢ − μ̂)²/S; sd = √(V_w·N/(N − 1)).
/// gᵢ = sᵢ(fᵢ − μ̂)·N/S (so μ̂ − μ ≈ mean(g)); mcse_mean = sd(g)/√ESS_mean(g);
/// ess_bulk = V_w/(V₀(g)/ESS_mean(g)) with V₀ the divisor-N variance.
/// Tail: p̂ = Σ sᵢIᵢ/S, hᵢ = sᵢ(Iᵢ − p̂)N/S, ESS_p = V_w(I)/(V₀(h)/ESS_mean(h)).
/// Quantile: sort by f; point k sits at P_k = Σ_{j<k} s₍ⱼ₎/Σ_{j<N−1} s₍ⱼ₎; interpolate
/// linearly at the first k with P_{k+1} ≥ p (equal weights: exactly type 7).
pub fn summarize_signed(chains: &[&[f64]], signs: &[&[f64]]) -> Summary {
    if chains.len() != signs.len()
        || chains.iter().zip(signs).any(|(c, s)| c.len() != s.len())
        || chains
            .iter()
            .chain(signs)
            .any(|c| c.iter().any(|v| v.is_nan()))
    {
        return Summary::NAN;
    }
    let n: usize = chains.iter().map(|c| c.len()).sum();
    let s_tot: f64 = signs.iter().flat_map(|s| s.iter()).sum();
    if n == 0 || s_tot.is_nan() || s_tot <= 0.0 || s_tot.is_infinite() {
        return Summary::NAN;
    }
    let nf = n as f64;
    let weighted_mean = |phi: &dyn Fn(f64) -> f64| -> f64 {
        chains
            .iter()
            .zip(signs)
            .flat_map(|(c, s)| c.iter().zip(s.iter()))
            .map(|(&f, &w)| w * phi(f))
            .sum::<f64>()
            / s_tot
    };
    let mu = weighted_mean(&|f| f);
    let var_w = weighted_mean(&|f| (f - mu) * (f - mu));
    let sd = math::sqrt(var_w * nf / (nf - 1.0));

    let mut pairs: Vec<(f64, f64)> = chains
        .iter()
        .zip(signs)
        .flat_map(|(c, s)| c.iter().copied().zip(s.iter().copied()))
        .collect();
    pairs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let q5 = weighted_type7(&pairs, 0.05);
    let q50 = weighted_type7(&pairs, 0.5);
    let q95 = weighted_type7(&pairs, 0.95);

    // Linearised series of the ratio estimator for φ, arranged in chains.
    let linearise = |phi: &dyn Fn(f64) -> f64, centre: f64| -> Vec<Vec<f64>> {
        chains
            .iter()
            .zip(signs)
            .map(|(c, s)| {
                c.iter()
                    .zip(s.iter())
                    .map(|(&f, &w)| w * (phi(f) - centre) * nf / s_tot)
                    .collect()
            })
            .collect()
    };
    let (ess_bulk, mcse_mean) = signed_ess(var_w, &linearise(&|f| f, mu));

    let tail_ess = |q: f64| -> f64 {
        let ind = move |f: f64| if f <= q { 1.0 } else { 0.0 };
        let p_hat = weighted_mean(&ind);
        let v = weighted_mean(&|f| (ind(f) - p_hat) * (ind(f) - p_hat));
        signed_ess(v, &linearise(&ind, p_hat)).0
    };
    let ess_tail = py_min(tail_ess(q5), tail_ess(q95));

    super::honest(
        Summary {
            mean: mu,
            sd,
            q5,
            q50,
            q95,
            mcse_mean,
            ess_bulk,
            ess_tail,
            rhat: rhat(chains),
        },
        chains,
    )
}

#[cfg(test)]
mod tests {
    use super::super::{ess_mean, ess_tail, summarize};
    use super::*;
    use alloc::vec;

    fn chains() -> Vec<Vec<f64>> {
        // Deterministic AR(1)-like chains from a simple LCG.
        let mut state: u64 = 12345;
        let mut u = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64) / ((1u64 << 53) as f64) - 0.5
        };
        (0..3)
            .map(|_| {
                let mut x = 0.0;
                (0..301)
                    .map(|_| {
                        x = 0.6 * x + u();
                        x
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn all_positive_signs_reduce_to_summarize() {
        let c = chains();
        let cs: Vec<&[f64]> = c.iter().map(|v| v.as_slice()).collect();
        let ones: Vec<Vec<f64>> = c.iter().map(|v| vec![1.0; v.len()]).collect();
        let os: Vec<&[f64]> = ones.iter().map(|v| v.as_slice()).collect();
        let a = summarize(&cs);
        let b = summarize_signed(&cs, &os);
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-10 * x.abs().max(1e-300);
        assert!(close(a.mean, b.mean), "{} {}", a.mean, b.mean);
        assert!(close(a.sd, b.sd));
        assert!(close(a.q5, b.q5) && close(a.q50, b.q50) && close(a.q95, b.q95));
        assert!(
            close(a.mcse_mean, b.mcse_mean),
            "{} {}",
            a.mcse_mean,
            b.mcse_mean
        );
        assert!(
            close(ess_mean(&cs), b.ess_bulk),
            "{} {}",
            ess_mean(&cs),
            b.ess_bulk
        );
        assert!(
            close(ess_tail(&cs), b.ess_tail),
            "{} {}",
            ess_tail(&cs),
            b.ess_tail
        );
        assert_eq!(a.rhat, b.rhat);
    }

    #[test]
    fn negative_signs_cancel() {
        // Values 1, 2, 3 with signs +1, +1, −1 … : E = (1 + 2 − 3)/1 = 0 per block.
        let x: Vec<f64> = (0..30).map(|i| (i % 3 + 1) as f64).collect();
        let s: Vec<f64> = (0..30)
            .map(|i| if i % 3 == 2 { -1.0 } else { 1.0 })
            .collect();
        let out = summarize_signed(&[&x], &[&s]);
        assert!(out.mean.abs() < 1e-12, "{}", out.mean);
        // Σ s = 10 > 0, so everything is defined; mismatched shapes are NaN.
        assert!(summarize_signed(&[&x], &[&s[..29]]).mean.is_nan());
        let neg: Vec<f64> = s.iter().map(|v| -v).collect();
        assert!(summarize_signed(&[&x], &[&neg]).mean.is_nan());
    }

    #[test]
    fn weighted_type7_equal_weights_is_type7() {
        let v: Vec<(f64, f64)> = (0..7).map(|i| ((i * i) as f64, 1.0)).collect();
        // n = 7, p = 0.5: h = 3.5 + 0.5 = 4 ⇒ x₍₄₎ = 9; p = 0.1: h = 1.6 ⇒ 0.4·1 = 0.6.
        assert!((weighted_type7(&v, 0.5) - 9.0).abs() < 1e-12);
        assert!((weighted_type7(&v, 0.1) - 0.6).abs() < 1e-12);
        assert_eq!(weighted_type7(&v, 0.0), 0.0);
        assert_eq!(weighted_type7(&v, 1.0), 36.0);
    }
}
