//! `mh-minibatch`: the minibatch Barker acceptance test of Seita, Pan, Chen & Canny (UAI 2017).
//!
//! Each iteration proposes θ' = θ + ε·z (z ~ N(0, I)), draws data without replacement in chunks
//! of m until the estimate Δ* of the log acceptance ratio has variance below σ², then accepts iff
//! Δ* + X_nc + X_corr > 0, with X_nc ~ N(0, σ² − s²) and X_corr from a precomputed
//! [`xcorr::Correction`] table (X_norm(σ²) + X_corr ≈ Logistic(0, 1)). When the condition
//! fails even with all data, the exact Barker test is used (Δ exact, logistic noise); the
//! authors' |Δ*/s| > 5 deterministic shortcut is **not** implemented (it is biased).
//!
//! # Formula
//!
//! Λᵢ = (N/K)·(ℓᵢ(θ') − ℓᵢ(θ)),  Δ* = mean_b(Λᵢ) + log p(θ') − log p(θ)  (prior not tempered),
//! s² = Var̂_b(Λᵢ)/b (population variance of the batch), grow b by m while s² ≥ σ² and b < N.
//! Target: p(θ)·Πᵢ p(xᵢ|θ)^(1/K).

pub mod baselines;
pub mod cv;
pub mod design;
pub mod digits;
pub mod xcorr;

use crate::dist::std_normal;
use crate::error::Error;
use crate::kernel::{HasPosition, Kernel, KernelInfo, StepInfo};
use crate::math;
use crate::model::DataModel;
use crate::rng::{uniform_index, uniform_open, ChainRng, Rng};
use alloc::sync::Arc;
use alloc::vec::Vec;
use xcorr::Correction;

/// Settings of the minibatch Barker test.
#[derive(Debug, Clone, PartialEq)]
pub struct MinibatchMh {
    /// Random-walk proposal standard deviation ε (per coordinate).
    pub step_size: f64,
    /// Temperature K ≥ 1 (the likelihood is raised to 1/K).
    pub temperature: f64,
    /// Initial batch size and increment m.
    pub batch_step: usize,
    /// The correction table (fixes σ).
    pub correction: Correction,
}

/// An approximate accept/reject test that reads a growing subsample of the data: the Barker
/// test [`MinibatchMh`] and the baselines [`baselines::AustereMh`], [`baselines::MhSubLhd`].
pub trait MinibatchTest: Send {
    /// Random-walk proposal standard deviation ε.
    fn step_size(&self) -> f64;
    /// The temperature K the test applies to the likelihood.
    fn temperature(&self) -> f64;
    /// Names of the four [`StepInfo::extra`] entries: the batch size, the test's spread
    /// statistic ([`TestOutcome::s2`]), the all-data flag and Δ* (scaled by N).
    fn extra_names(&self) -> Vec<&'static str> {
        alloc::vec!["batch_size", "s2", "exact_fallback", "delta_hat"]
    }
    /// Values the test chose itself (a searched design), as (name, value) pairs.
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Decide the move θ → θ' (log priors `lp0`, `lp1`) from the per-datum log-likelihood
    /// differences `diffs` (plain or with control variates). `perm` is a permutation of `0..n`
    /// that the test partially re-shuffles to draw data without replacement.
    ///
    /// The generator is `Clone` because the tests draw data a block at a time
    /// (`draw_diffs`) and, when a difference of the block is not finite, put the generator
    /// back to where a datum-by-datum draw would have stopped.
    fn decide<R: Rng + Clone>(
        &self,
        rng: &mut R,
        diffs: &cv::StepDiffs<'_>,
        lp0: f64,
        lp1: f64,
        perm: &mut [usize],
    ) -> TestOutcome;
}

/// Move the datum at a uniform position of `perm[b..]` to `perm[b]` and return it (one step of
/// a partial Fisher–Yates shuffle: `perm[..=b]` is a uniform without-replacement sample).
pub(crate) fn draw_next<R: Rng + ?Sized>(rng: &mut R, perm: &mut [usize], b: usize) -> usize {
    draw_swap(rng, perm, b);
    perm.get(b).copied().unwrap_or(0)
}

/// [`draw_next`]'s swap: `perm[b]` exchanged with a uniform position r of `perm[b..]`; returns
/// r (`b` itself, drawing nothing, when `b` is past the end).
#[inline]
fn draw_swap<R: Rng + ?Sized>(rng: &mut R, perm: &mut [usize], b: usize) -> usize {
    let n = perm.len();
    if b >= n {
        return b;
    }
    let r = b + uniform_index(rng, n - b);
    perm.swap(b, r);
    r
}

/// Data drawn and evaluated together by the tests ([`draw_diffs`]).
pub(crate) const DRAW_BLOCK: usize = 128;

/// The next k = min(`vals.len()`, [`DRAW_BLOCK`], n − `t`) data of the without-replacement draw
/// from position `t` of `perm` (k calls of [`draw_next`]), with `scale` times their
/// differences in `vals[..k]`, computed together ([`cv::StepDiffs::at_many`]: the same bits
/// as `scale * diffs.at(i)` datum by datum). Returns k, or, when a scaled difference is not
/// finite, its position + 1 with `rng` and `perm` as after drawing it: exactly where a loop
/// drawing and evaluating one datum at a time would stop on it (the later draws are undone).
pub(crate) fn draw_diffs<R: Rng + Clone>(
    rng: &mut R,
    perm: &mut [usize],
    t: usize,
    diffs: &cv::StepDiffs<'_>,
    scale: f64,
    vals: &mut [f64],
) -> usize {
    let k = vals.len().min(DRAW_BLOCK).min(perm.len().saturating_sub(t));
    let saved = rng.clone();
    let mut swaps = [0usize; DRAW_BLOCK];
    for (p, s) in swaps[..k].iter_mut().enumerate() {
        *s = draw_swap(rng, perm, t + p);
    }
    let vals = &mut vals[..k];
    diffs.at_many(&perm[t..t + k], vals);
    for v in vals.iter_mut() {
        *v *= scale;
    }
    match vals.iter().position(|v| !v.is_finite()) {
        Some(j) => {
            if j + 1 < k {
                // Undo the swaps after datum j (in reverse order) and the generator's draws:
                // perm and rng as after the first j + 1 draws.
                for p in (j + 1..k).rev() {
                    perm.swap(t + p, swaps[p]);
                }
                *rng = saved;
                for p in 0..=j {
                    let _ = uniform_index(rng, perm.len() - (t + p));
                }
            }
            j + 1
        }
        None => k,
    }
}

/// `scale` times the differences of all data, in order (`n` of them; a full scan, 2n
/// likelihood evaluations): the same bits as `scale * diffs.at(i)` for i in 0..n.
pub(crate) fn scan_diffs(diffs: &cv::StepDiffs<'_>, n: usize, scale: f64) -> Vec<f64> {
    let mut out = alloc::vec![0.0; n];
    let mut idx = [0usize; DRAW_BLOCK];
    for (c, o) in out.chunks_mut(DRAW_BLOCK).enumerate() {
        let idx = &mut idx[..o.len()];
        for (p, i) in idx.iter_mut().enumerate() {
            *i = c * DRAW_BLOCK + p;
        }
        diffs.at_many(idx, o);
        for v in o.iter_mut() {
            *v *= scale;
        }
    }
    out
}

/// What one minibatch test decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestOutcome {
    /// Accepted.
    pub accepted: bool,
    /// Final batch size b.
    pub batch: usize,
    /// Δ* at the decision.
    pub delta: f64,
    /// The spread statistic at the decision: s² for the Barker test (0 when all data decided),
    /// the squared standard error for AustereMH, the Bernstein half-width c for MHSubLhd.
    pub s2: f64,
    /// The test read all data: for the Barker test, the variance condition failed even then and
    /// the exact Barker test decided; for the baselines, the exact Metropolis test decided.
    pub exact_fallback: bool,
    /// A non-finite log-likelihood ratio was met (rejected).
    pub divergent: bool,
    /// Per-datum likelihood evaluations spent (2 per datum read: θ and θ').
    pub lik_evals: u64,
}

impl MinibatchMh {
    /// Validate the settings.
    pub fn new(
        step_size: f64,
        temperature: f64,
        batch_step: usize,
        correction: Correction,
    ) -> Result<Self, Error> {
        crate::kernel::check_step_size(step_size)?;
        if !(temperature.is_finite() && temperature >= 1.0) {
            return Err(Error::setting("temperature", "must be a finite number ≥ 1"));
        }
        if batch_step == 0 {
            return Err(Error::setting("batch_step", "must be at least 1"));
        }
        Ok(MinibatchMh {
            step_size,
            temperature,
            batch_step,
            correction,
        })
    }

    /// The minibatch Barker test of moving from θ (log prior `lp0`) to θ' (log prior `lp1`).
    /// `perm` is a permutation of `0..n` that is partially re-shuffled (the first b entries
    /// become a uniform without-replacement sample).
    #[allow(clippy::too_many_arguments)]
    pub fn test<R: Rng + Clone>(
        &self,
        rng: &mut R,
        model: &dyn DataModel,
        theta: &[f64],
        proposal: &[f64],
        lp0: f64,
        lp1: f64,
        perm: &mut [usize],
    ) -> TestOutcome {
        let diffs = cv::StepDiffs::new(model, theta, proposal, None);
        self.decide(rng, &diffs, lp0, lp1, perm)
    }
}

impl MinibatchTest for MinibatchMh {
    fn step_size(&self) -> f64 {
        self.step_size
    }
    fn temperature(&self) -> f64 {
        self.temperature
    }
    fn decide<R: Rng + Clone>(
        &self,
        rng: &mut R,
        diffs: &cv::StepDiffs<'_>,
        lp0: f64,
        lp1: f64,
        perm: &mut [usize],
    ) -> TestOutcome {
        let n = perm.len();
        let scale = n as f64 / self.temperature;
        let prior_diff = lp1 - lp0;
        let sigma2 = self.correction.sigma() * self.correction.sigma();
        let mut out = TestOutcome {
            accepted: false,
            batch: 0,
            delta: f64::NEG_INFINITY,
            s2: 0.0,
            exact_fallback: false,
            divergent: false,
            lik_evals: 0,
        };
        if prior_diff.is_nan() {
            out.divergent = true;
            return out;
        }
        if prior_diff == f64::NEG_INFINITY {
            return out;
        }
        // Welford over Λᵢ.
        let mut mean = 0.0;
        let mut m2 = 0.0;
        let mut b = 0usize;
        let mut vals = [0.0f64; DRAW_BLOCK];
        loop {
            let target = (b + self.batch_step).min(n);
            while b < target {
                // Λᵢ = scale·(ℓᵢ(θ′) − ℓᵢ(θ)) a block at a time, used in draw order.
                let k = (target - b).min(DRAW_BLOCK);
                let got = draw_diffs(rng, perm, b, diffs, scale, &mut vals[..k]);
                for &lam in &vals[..got] {
                    b += 1;
                    out.lik_evals = 2 * b as u64;
                    if !lam.is_finite() {
                        out.batch = b;
                        out.divergent = lam.is_nan() || lam == f64::INFINITY;
                        return out;
                    }
                    let d = lam - mean;
                    mean += d / b as f64;
                    m2 += d * (lam - mean);
                }
            }
            let s2 = m2 / (b as f64 * b as f64);
            let delta = mean + prior_diff;
            out.batch = b;
            out.lik_evals = 2 * b as u64;
            out.delta = delta;
            if b >= n {
                // All data: Δ* = Δ exactly; the exact Barker test.
                out.s2 = 0.0;
                out.exact_fallback = s2 >= sigma2;
                let u = uniform_open(rng);
                let x_log = math::ln(u) - math::ln(1.0 - u);
                out.accepted = delta + x_log > 0.0;
                return out;
            }
            if s2 < sigma2 {
                out.s2 = s2;
                let x_nc = math::sqrt(sigma2 - s2) * std_normal(rng);
                let x_corr = self.correction.sample(rng);
                out.accepted = delta + x_nc + x_corr > 0.0;
                return out;
            }
        }
    }
}

/// The random-walk kernel of the minibatch samplers (`mh-minibatch`, `austere-mh`,
/// `mh-sublhd`): θ′ = θ + εξ, ξ ~ N(0, I), accepted or not by the [`MinibatchTest`] `test`
/// reading the per-datum differences ℓᵢ(θ′) − ℓᵢ(θ) — through the second-order Taylor control
/// variate `cv` when it is set ([`cv::StepDiffs`]).
#[derive(Debug, Clone)]
pub struct MinibatchRw<M: MinibatchTest> {
    /// The accept/reject test (and the step size ε and temperature).
    pub test: M,
    /// The control variate the test reads differences through (None: plain differences).
    pub cv: Option<cv::TaylorCv>,
}

/// The state of [`MinibatchRw`]: θ, the proposal buffer, log p(θ), and the permutation the
/// tests draw data from without replacement.
#[derive(Debug, Clone, PartialEq)]
pub struct MinibatchRwState {
    theta: Vec<f64>,
    proposal: Vec<f64>,
    log_prior: f64,
    perm: Vec<usize>,
}

impl HasPosition for MinibatchRwState {
    fn position(&self) -> &[f64] {
        &self.theta
    }
}

impl<M: MinibatchTest> Kernel<Arc<dyn DataModel>> for MinibatchRw<M> {
    type State = MinibatchRwState;

    /// The state at `position`; checks that the prior and every ℓᵢ are finite there (one
    /// data pass). Fails when both the test and the model temper the likelihood (K ≠ 1 on
    /// each: the target would silently be tempered twice).
    fn init(&self, model: &Arc<dyn DataModel>, position: &[f64]) -> Result<Self::State, Error> {
        let d = model.dim();
        let n = model.n();
        if n == 0 {
            return Err(Error::data("mh-minibatch needs at least one datum"));
        }
        let model_k = model.likelihood_temperature();
        if self.test.temperature() != 1.0 && model_k != 1.0 {
            return Err(Error::setting(
                "temperature",
                alloc::format!(
                    "the model is already tempered (its temperature is {model_k}); set the temperature on the model or on the sampler, not both (the likelihood would be divided by {model_k} × {})",
                    self.test.temperature()
                ),
            ));
        }
        Error::check_dim("position", d, position.len())?;
        let lp = model.log_prior(position);
        if !lp.is_finite() || position.iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        if !model.log_lik_all(position).is_finite() {
            return Err(Error::NonFiniteStart);
        }
        Ok(MinibatchRwState {
            theta: position.to_vec(),
            proposal: position.to_vec(),
            log_prior: lp,
            perm: (0..n).collect(),
        })
    }

    fn step(
        &self,
        rng: &mut ChainRng,
        model: &Arc<dyn DataModel>,
        state: &mut MinibatchRwState,
    ) -> StepInfo {
        let eps = self.test.step_size();
        for (p, &t) in state.proposal.iter_mut().zip(&state.theta) {
            *p = t + eps * std_normal(rng);
        }
        let lp1 = model.log_prior(&state.proposal);
        let diffs = cv::StepDiffs::new(
            model.as_ref(),
            &state.theta,
            &state.proposal,
            self.cv.as_ref(),
        );
        let o = self
            .test
            .decide(rng, &diffs, state.log_prior, lp1, &mut state.perm);
        if o.accepted {
            state.theta.copy_from_slice(&state.proposal);
            state.log_prior = lp1;
        }
        StepInfo {
            accept_prob: if o.delta.is_nan() {
                0.0
            } else {
                math::sigmoid(o.delta)
            },
            accepted: o.accepted,
            divergent: o.divergent,
            lik_evals: o.lik_evals,
            grad_evals: 0,
            n_leapfrog: 0,
            step_size: eps,
            energy: f64::NAN,
            sign: 1.0,
            extra: [
                o.batch as f64,
                o.s2,
                if o.exact_fallback { 1.0 } else { 0.0 },
                o.delta,
            ],
        }
    }
}

impl<M: MinibatchTest> KernelInfo<Arc<dyn DataModel>> for MinibatchRw<M> {
    fn extra_names(&self) -> Vec<&'static str> {
        self.test.extra_names()
    }
    /// The test's own choices, ε, and whether the control variate is on (1/0).
    fn resolved(&self, _state: &MinibatchRwState) -> Vec<(&'static str, f64)> {
        let mut r = self.test.resolved();
        r.push(("step_size", self.test.step_size()));
        r.push(("control_variate", if self.cv.is_some() { 1.0 } else { 0.0 }));
        r
    }
    fn exact(&self) -> bool {
        false
    }
}
