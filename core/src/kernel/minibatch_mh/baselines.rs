//! The baselines of Seita et al. (2017): `austere-mh` (Korattikara, Chen & Welling 2014, a
//! sequential Student-t test) and `mh-sublhd` (Bardenet, Doucet & Holmes 2014, an
//! empirical-Bernstein confidence sampler). Both approximate the **Metropolis** test
//! log u < Δ; with a symmetric random-walk proposal.
//!
//! # Formula
//!
//! lᵢ = (1/K)(ℓᵢ(θ') − ℓᵢ(θ)),  μ₀ = (1/N)·(log u + log p(θ) − log p(θ')),  u ~ U(0, 1);
//! exact MH accepts iff mean_N(lᵢ) > μ₀.
//!
//! AustereMH, batch grown by m: s = s_l/√n·√(1 − (n−1)/(N−1)), t = (l̄ − μ₀)/s,
//! stop when 1 − F_{t, n−1}(|t|) < ε or n = N; accept iff l̄ > μ₀. The design (m, ε) is fixed,
//! or chosen by [`design::search`]: once at μ_std = 0 with worst-case error E(0) < Δ*
//! (AustereMH(c)), or at every iteration at the full-data μ_std = (μ − μ₀)√(N−1)/σ_l with
//! E(μ_std) < Δ* (AustereMH(nc); its full scan is counted in `lik_evals`, not in the batch).
//!
//! MHSubLhd, batch grown geometrically b ← ⌈γ t⌉ from m: C = maxᵢ |lᵢ| over all data,
//! δ_k = δ (p−1)/(p k^p), c = σ̂_t √(2 log(3/δ_k)/t) + 6 C log(3/δ_k)/t,
//! stop when |l̄ − μ₀| ≥ c or t = N; accept iff l̄ > μ₀.

use super::design::{self, NcTable, SeqDesign};
use super::{draw_diffs, draw_next, scan_diffs, MinibatchTest, TestOutcome, DRAW_BLOCK};
use crate::error::Error;
use crate::math;

use crate::rng::{uniform_open, Rng};
use alloc::vec::Vec;

/// Upper tail 1 − F(t) of Student's t with ν degrees of freedom, for t ≥ 0.
///
/// # Formula
/// 1 − F_ν(t) = ½ I_{ν/(ν+t²)}(ν/2, ½).
pub fn student_t_upper(t: f64, nu: f64) -> f64 {
    if t.is_nan() || nu.is_nan() || nu <= 0.0 {
        return f64::NAN;
    }
    let t = math::abs(t);
    if t == f64::INFINITY {
        return 0.0;
    }
    0.5 * math::beta_inc(0.5 * nu, 0.5, nu / (nu + t * t))
}

fn base_outcome() -> TestOutcome {
    TestOutcome {
        accepted: false,
        batch: 0,
        delta: f64::NEG_INFINITY,
        s2: f64::NAN,
        exact_fallback: false,
        divergent: false,
        lik_evals: 0,
    }
}

fn check_common(step: f64, temperature: f64, m: usize, min_m: usize) -> Result<(), Error> {
    crate::kernel::check_step_size(step)?;
    if !(temperature.is_finite() && temperature >= 1.0) {
        return Err(Error::setting("temperature", "must be a finite number ≥ 1"));
    }
    if m < min_m {
        return Err(Error::setting(
            "batch_step",
            alloc::format!("must be at least {min_m}"),
        ));
    }
    Ok(())
}

/// How AustereMH chooses its test design (m, ε).
#[derive(Debug, Clone, PartialEq)]
pub enum AustereDesign {
    /// A fixed (m, ε) given by the user.
    Fixed,
    /// AustereMH(c): the worst-case (μ_std = 0) design search, done once before sampling.
    Conservative {
        /// The error bound Δ*.
        bound: f64,
        /// The chosen design with its error and expected data use at μ_std = 0.
        chosen: SeqDesign,
    },
    /// AustereMH(nc): the design searched at each iteration's full-data μ_std (one full scan
    /// per iteration, counted in `lik_evals` but not in the batch size).
    NonConservative(NcTable),
}

/// AustereMH: the sequential t-test with a fixed, conservative or per-iteration design.
#[derive(Debug, Clone, PartialEq)]
pub struct AustereMh {
    /// Random-walk proposal standard deviation.
    pub step_size: f64,
    /// Temperature K ≥ 1.
    pub temperature: f64,
    /// Batch increment m ≥ 2 (fixed and conservative designs).
    pub batch_step: usize,
    /// Per-look error level ε ∈ (0, 0.5) (fixed and conservative designs).
    pub epsilon: f64,
    /// How (m, ε) were chosen.
    pub design: AustereDesign,
}

fn check_bound(bound: f64) -> Result<(), Error> {
    if bound > 0.0 && bound < 0.5 {
        Ok(())
    } else {
        Err(Error::setting("error_bound", "must be in (0, 0.5)"))
    }
}

impl AustereMh {
    /// A fixed design (m, ε).
    pub fn new(
        step_size: f64,
        temperature: f64,
        batch_step: usize,
        epsilon: f64,
    ) -> Result<Self, Error> {
        check_common(step_size, temperature, batch_step, 2)?;
        if !(epsilon > 0.0 && epsilon < 0.5) {
            return Err(Error::setting("epsilon", "must be in (0, 0.5)"));
        }
        Ok(AustereMh {
            step_size,
            temperature,
            batch_step,
            epsilon,
            design: AustereDesign::Fixed,
        })
    }

    /// AustereMH(c) for `n` data: the design of the grid (ε ∈ {0.001, …, 0.2} × m ∈ {50, …,
    /// 500}) with the least data use at μ_std = 0 and worst-case error E(0) < `bound` (Δ*).
    /// Fails when no design meets the bound.
    pub fn conservative(
        step_size: f64,
        temperature: f64,
        n: usize,
        bound: f64,
    ) -> Result<Self, Error> {
        check_common(step_size, temperature, 2, 2)?;
        check_bound(bound)?;
        let chosen = design::search(n, 0.0, bound, design::DEFAULT_BINS).ok_or_else(|| {
            Error::setting(
                "error_bound",
                alloc::format!("no design of the grid has worst-case error below {bound}"),
            )
        })?;
        Ok(AustereMh {
            step_size,
            temperature,
            batch_step: chosen.batch_step,
            epsilon: chosen.epsilon,
            design: AustereDesign::Conservative { bound, chosen },
        })
    }

    /// AustereMH(nc) for `n` data: at each iteration the design with the least data use at
    /// the full-data μ_std subject to E(μ_std) < `bound` (Δ*); all data when none meets it.
    pub fn non_conservative(
        step_size: f64,
        temperature: f64,
        n: usize,
        bound: f64,
    ) -> Result<Self, Error> {
        check_common(step_size, temperature, 2, 2)?;
        check_bound(bound)?;
        Ok(AustereMh {
            step_size,
            temperature,
            batch_step: design::BATCH_GRID[0],
            epsilon: design::EPSILON_GRID[0],
            design: AustereDesign::NonConservative(NcTable::new(n, bound, design::DEFAULT_BINS)),
        })
    }
}

/// The sequential t-test with design (m, ε) on data drawn through `perm`. `draw(rng, perm, b,
/// vals)` draws the next data from position b of `perm` (as [`draw_next`] one at a time) and
/// writes their lᵢ to `vals`, returning how many (at least one, at most `vals.len()`); a
/// non-finite lᵢ stops the test and must be the last of its block (as [`draw_diffs`] does).
/// Fills `out` (batch, Δ*, se², decision).
#[allow(clippy::too_many_arguments)]
fn sequential_t_test<R: Rng + Clone>(
    rng: &mut R,
    perm: &mut [usize],
    m: usize,
    epsilon: f64,
    mu0: f64,
    mut draw: impl FnMut(&mut R, &mut [usize], usize, &mut [f64]) -> usize,
    out: &mut TestOutcome,
) {
    let n = perm.len();
    let nf = n as f64;
    let (mut mean, mut m2, mut b) = (0.0, 0.0, 0usize);
    let mut vals = [0.0f64; DRAW_BLOCK];
    loop {
        let target = (b + m.max(1)).min(n);
        while b < target {
            let k = (target - b).min(DRAW_BLOCK);
            let got = draw(rng, perm, b, &mut vals[..k]);
            for &l in &vals[..got] {
                b += 1;
                if !l.is_finite() {
                    out.batch = b;
                    return;
                }
                let d = l - mean;
                mean += d / b as f64;
                m2 += d * (l - mean);
            }
        }
        out.batch = b;
        out.delta = nf * (mean - mu0);
        if b >= n {
            out.accepted = mean > mu0;
            out.exact_fallback = true;
            return;
        }
        let bf = b as f64;
        let s_l = math::sqrt(m2 / (bf - 1.0));
        let s = s_l / math::sqrt(bf) * math::sqrt(1.0 - (bf - 1.0) / (nf - 1.0));
        out.s2 = s * s;
        let diff = mean - mu0;
        let decided = if s > 0.0 {
            student_t_upper(diff / s, bf - 1.0) < epsilon
        } else {
            diff != 0.0
        };
        if decided {
            out.accepted = diff > 0.0;
            return;
        }
    }
}

/// The start of the sequential tests: a fresh outcome and the per-datum threshold
/// μ₀ = (ln u − [log p(θ′) − log p(θ)]) / N, or `Err` with the finished outcome when the prior
/// difference already decides the step (NaN: a divergent rejection, −∞: a rejection).
fn sequential_start<R: Rng + ?Sized>(
    rng: &mut R,
    lp0: f64,
    lp1: f64,
    nf: f64,
) -> Result<(TestOutcome, f64), TestOutcome> {
    let mut out = base_outcome();
    let prior_diff = lp1 - lp0;
    if prior_diff.is_nan() {
        out.divergent = true;
        return Err(out);
    }
    if prior_diff == f64::NEG_INFINITY {
        return Err(out);
    }
    Ok((out, (math::ln(uniform_open(rng)) - prior_diff) / nf))
}

/// Whether the full scan `ratios` already decides the step: a NaN or +∞ ratio is a divergent
/// rejection, a −∞ one a rejection (`out` is marked accordingly).
fn decided_by_scan(ratios: &[f64], out: &mut TestOutcome) -> bool {
    if ratios.iter().any(|l| l.is_nan() || *l == f64::INFINITY) {
        out.divergent = true;
        return true;
    }
    ratios.contains(&f64::NEG_INFINITY)
}

impl MinibatchTest for AustereMh {
    fn step_size(&self) -> f64 {
        self.step_size
    }
    fn temperature(&self) -> f64 {
        self.temperature
    }
    fn extra_names(&self) -> Vec<&'static str> {
        alloc::vec!["batch_size", "se2", "all_data", "delta_hat"]
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        match &self.design {
            AustereDesign::Fixed => Vec::new(),
            AustereDesign::Conservative { bound, chosen } => alloc::vec![
                ("batch_step", chosen.batch_step as f64),
                ("epsilon", chosen.epsilon),
                ("error_bound", *bound),
                ("design_error", chosen.error),
                ("design_data", chosen.data),
            ],
            AustereDesign::NonConservative(t) => alloc::vec![("error_bound", t.bound())],
        }
    }
    fn decide<R: Rng + Clone>(
        &self,
        rng: &mut R,
        diffs: &super::cv::StepDiffs<'_>,
        lp0: f64,
        lp1: f64,
        perm: &mut [usize],
    ) -> TestOutcome {
        let n = perm.len();
        let nf = n as f64;
        let (mut out, mu0) = match sequential_start(rng, lp0, lp1, nf) {
            Ok(start) => start,
            Err(done) => return done,
        };
        let inv_k = 1.0 / self.temperature;
        let table = match &self.design {
            AustereDesign::NonConservative(t) => t,
            _ => {
                let mut evals = 0u64;
                let mut bad = false;
                sequential_t_test(
                    rng,
                    perm,
                    self.batch_step,
                    self.epsilon,
                    mu0,
                    |rng, perm, b, vals| {
                        let got = draw_diffs(rng, perm, b, diffs, inv_k, vals);
                        evals += 2 * got as u64;
                        if let Some(&l) = vals[..got].last().filter(|l| !l.is_finite()) {
                            bad = l.is_nan() || l == f64::INFINITY;
                        }
                        got
                    },
                    &mut out,
                );
                out.lik_evals = evals;
                if bad {
                    out.divergent = true;
                    out.accepted = false;
                }
                return out;
            }
        };
        // AustereMH(nc): μ_std from a full scan, then the design for it.
        let ratios = scan_diffs(diffs, n, inv_k);
        out.lik_evals = 2 * n as u64;
        if decided_by_scan(&ratios, &mut out) {
            return out;
        }
        let mu = ratios.iter().sum::<f64>() / nf;
        let var = ratios.iter().map(|l| (l - mu) * (l - mu)).sum::<f64>() / (nf - 1.0).max(1.0);
        let mu_std = if var > 0.0 {
            (mu - mu0) * math::sqrt(nf - 1.0) / math::sqrt(var)
        } else {
            f64::INFINITY
        };
        match table.design(mu_std) {
            Some(d) => sequential_t_test(
                rng,
                perm,
                d.batch_step,
                d.epsilon,
                mu0,
                |rng, perm, b, vals| {
                    for (p, v) in vals.iter_mut().enumerate() {
                        let i = draw_next(rng, perm, b + p);
                        *v = ratios.get(i).copied().unwrap_or(f64::NAN);
                    }
                    vals.len()
                },
                &mut out,
            ),
            None => {
                out.batch = n;
                out.delta = nf * (mu - mu0);
                out.accepted = mu > mu0;
                out.exact_fallback = true;
            }
        }
        out
    }
}

/// MHSubLhd with the empirical-Bernstein bound and the empirical range C from all data.
#[derive(Debug, Clone, PartialEq)]
pub struct MhSubLhd {
    /// Random-walk proposal standard deviation.
    pub step_size: f64,
    /// Temperature K ≥ 1.
    pub temperature: f64,
    /// Initial batch m ≥ 2.
    pub batch_step: usize,
    /// Geometric growth factor γ > 1.
    pub gamma: f64,
    /// Total error level δ ∈ (0, 1).
    pub delta: f64,
    /// Exponent p > 1 of the δ schedule.
    pub p: f64,
}

impl MhSubLhd {
    /// Validate the settings.
    pub fn new(
        step_size: f64,
        temperature: f64,
        batch_step: usize,
        gamma: f64,
        delta: f64,
        p: f64,
    ) -> Result<Self, Error> {
        check_common(step_size, temperature, batch_step, 2)?;
        if !(gamma > 1.0 && gamma.is_finite()) {
            return Err(Error::setting("gamma", "must be a finite number > 1"));
        }
        if !(delta > 0.0 && delta < 1.0) {
            return Err(Error::setting("delta", "must be in (0, 1)"));
        }
        if !(p > 1.0 && p.is_finite()) {
            return Err(Error::setting("p", "must be a finite number > 1"));
        }
        Ok(MhSubLhd {
            step_size,
            temperature,
            batch_step,
            gamma,
            delta,
            p,
        })
    }
}

impl MinibatchTest for MhSubLhd {
    fn step_size(&self) -> f64 {
        self.step_size
    }
    fn temperature(&self) -> f64 {
        self.temperature
    }
    fn extra_names(&self) -> Vec<&'static str> {
        alloc::vec!["batch_size", "bound_c", "all_data", "delta_hat"]
    }
    fn decide<R: Rng + Clone>(
        &self,
        rng: &mut R,
        diffs: &super::cv::StepDiffs<'_>,
        lp0: f64,
        lp1: f64,
        perm: &mut [usize],
    ) -> TestOutcome {
        let n = perm.len();
        let nf = n as f64;
        let (mut out, mu0) = match sequential_start(rng, lp0, lp1, nf) {
            Ok(start) => start,
            Err(done) => return done,
        };
        let inv_k = 1.0 / self.temperature;
        // The range C: with the Taylor control variate, from the remainder bound (no data
        // read, each batch item costs 2 evaluations); otherwise every ratio is needed, one
        // full scan (2N evaluations), reused for the batch. Either way C bounds maxᵢ|lᵢ − l̄|
        // up to the common shift, so 6C ≥ 3·(max − min) as the Bernstein bound needs.
        let bound = diffs.range_bound().map(|b| inv_k * b);
        let ratios: Vec<f64> = if bound.is_some() {
            Vec::new()
        } else {
            out.lik_evals = 2 * n as u64;
            scan_diffs(diffs, n, inv_k)
        };
        if decided_by_scan(&ratios, &mut out) {
            return out;
        }
        let c_range = match bound {
            Some(b) => b,
            None => ratios.iter().fold(0.0, |a: f64, l| a.max(math::abs(*l))),
        };
        let (mut mean, mut m2, mut t) = (0.0, 0.0, 0usize);
        let mut b = self.batch_step.min(n);
        let mut k = 0i32;
        let mut vals = [0.0f64; DRAW_BLOCK];
        loop {
            while t < b {
                // The next block of draws, used in draw order: evaluated together with the
                // bound (stopping at a non-finite ratio as datum by datum), else from the scan.
                let len = (b - t).min(DRAW_BLOCK);
                let got = if bound.is_some() {
                    draw_diffs(rng, perm, t, diffs, inv_k, &mut vals[..len])
                } else {
                    for (p, v) in vals[..len].iter_mut().enumerate() {
                        let i = draw_next(rng, perm, t + p);
                        *v = ratios.get(i).copied().unwrap_or(0.0);
                    }
                    len
                };
                for &l in &vals[..got] {
                    if bound.is_some() {
                        out.lik_evals += 2;
                        if l.is_nan() || l == f64::INFINITY {
                            out.divergent = true;
                            return out;
                        }
                        if l == f64::NEG_INFINITY {
                            return out;
                        }
                    }
                    t += 1;
                    let d = l - mean;
                    mean += d / t as f64;
                    m2 += d * (l - mean);
                }
            }
            k += 1;
            let tf = t as f64;
            out.batch = t;
            out.delta = nf * (mean - mu0);
            let diff = mean - mu0;
            if t >= n {
                out.accepted = diff > 0.0;
                out.exact_fallback = true;
                return out;
            }
            let dk = self.delta * (self.p - 1.0) / (self.p * math::pow(k as f64, self.p));
            let lg = math::ln(3.0 / dk);
            let sd = math::sqrt(m2 / tf);
            let c = sd * math::sqrt(2.0 * lg / tf) + 6.0 * c_range * lg / tf;
            out.s2 = c;
            if math::abs(diff) >= c {
                out.accepted = diff > 0.0;
                return out;
            }
            let next = math::ceil(self.gamma * tf);
            b = if next >= nf {
                n
            } else {
                (next as usize).max(t + 1)
            };
        }
    }
}
