//! Hamiltonian Monte Carlo with a static number of leapfrog steps and optional step-size jitter.
//!
//! # Formula
//! p ~ N(0, M); (θ′, p′) = L leapfrog steps of size ε̃ from (θ, p), ε̃ = ε·(1 + j·(2u − 1)),
//! u ~ U(0, 1); accept with probability min(1, exp(H(θ, p) − H(θ′, p′))).
//! A non-finite H or H − H₀ > 1000 ends the trajectory as a divergent rejection.
//!
//! ## References
//! Neal, R. M. (2011). MCMC using Hamiltonian dynamics. Handbook of MCMC, ch. 5.

use super::leapfrog::{leapfrog, PhasePoint};
use super::{accept_prob, Adaptable, Kernel, KernelInfo, Metric, StepInfo};
use crate::cost::Cost;
use crate::error::Error;
use crate::model::LogDensity;
use crate::rng::{uniform, ChainRng, Rng};
use alloc::vec;

/// The energy error beyond which a trajectory is divergent (as in Stan).
pub const MAX_ENERGY_ERROR: f64 = 1000.0;

/// Static HMC: `n_steps` leapfrog steps of a jittered step size.
#[derive(Debug, Clone, PartialEq)]
pub struct Hmc {
    step_size: f64,
    metric: Metric,
    n_steps: usize,
    jitter: f64,
}

impl Hmc {
    /// A kernel with step size ε > 0, `n_steps` ≥ 1 leapfrog steps and jitter j ∈ [0, 1).
    pub fn new(step_size: f64, metric: Metric, n_steps: usize, jitter: f64) -> Result<Self, Error> {
        check_static(step_size, n_steps, jitter)?;
        Ok(Hmc {
            step_size,
            metric,
            n_steps,
            jitter,
        })
    }

    /// Number of leapfrog steps L.
    pub fn n_steps(&self) -> usize {
        self.n_steps
    }
}

/// The settings of a static trajectory (HMC, QNHMC): step size ε > 0, `n_steps` L ≥ 1 and
/// jitter j ∈ [0, 1).
pub(crate) fn check_static(step_size: f64, n_steps: usize, jitter: f64) -> Result<(), Error> {
    super::check_step_size(step_size)?;
    if n_steps == 0 {
        return Err(Error::setting("L", "must be at least 1"));
    }
    if !(0.0..1.0).contains(&jitter) {
        return Err(Error::setting("jitter", "must be in [0, 1)"));
    }
    Ok(())
}

/// The largest automatic number of leapfrog steps (an ε driven small early in warm-up costs at
/// most this many gradients per iteration).
pub const MAX_AUTO_STEPS: usize = 1000;

/// Automatic leapfrog steps for a trajectory length T at step size ε: round(T/ε) clamped to
/// [1, [`MAX_AUTO_STEPS`]] (HMC-ECS and QNHMC with `L` = auto).
pub fn auto_steps(traj_len: f64, eps: f64) -> usize {
    (crate::math::round(traj_len / eps) as usize).clamp(1, MAX_AUTO_STEPS)
}

/// The sampling phase's (L, ε) for a trajectory length T from warm-up's step size ε̄:
/// L = ⌈T/ε̄⌉ clamped to [1, [`MAX_AUTO_STEPS`]] and ε = min(ε̄, T/L), so that εL = T exactly
/// (where L is not clamped) with a step no longer than the adapted one. [`auto_steps`]'s
/// rounding, which warm-up keeps while ε moves, leaves εL anywhere in (0.8·T, 4T/3] for L ≥ 2
/// and in (2T/3, 2T] at L = 1: 0.82·T at ε̄ = 0.648, T = π/2, where L = 2. Draws a quarter
/// period apart in a Gaussian's flow are independent, so a short trajectory costs ESS per draw,
/// not only per gradient.
pub fn exact_steps(traj_len: f64, eps: f64) -> (usize, f64) {
    let steps = (crate::math::ceil(traj_len / eps) as usize).clamp(1, MAX_AUTO_STEPS);
    (steps, eps.min(traj_len / steps as f64))
}

/// One iteration's step size ε̃ = ε·(1 + j·(2u − 1)), u ~ U(0, 1); ε itself (and no draw) when
/// j = 0.
pub(crate) fn jittered<R: Rng + ?Sized>(rng: &mut R, step_size: f64, jitter: f64) -> f64 {
    if jitter > 0.0 {
        step_size * (1.0 + jitter * (2.0 * uniform(rng) - 1.0))
    } else {
        step_size
    }
}

/// Initial state for Hamiltonian kernels: evaluates log π and ∇ log π at `position`.
pub(crate) fn init_point<T: LogDensity + ?Sized>(
    target: &T,
    position: &[f64],
    metric: &Metric,
) -> Result<PhasePoint, Error> {
    super::check_position(target.dim(), position, metric)?;
    let z = PhasePoint::new(target, position);
    if !z.is_finite() {
        return Err(Error::NonFiniteStart);
    }
    Ok(z)
}

/// Acceptance probability of one leapfrog step of size `eps` from `state` with fresh momentum.
pub(crate) fn probe_one_leapfrog<T: LogDensity + ?Sized, R: Rng + ?Sized>(
    rng: &mut R,
    target: &T,
    metric: &Metric,
    state: &PhasePoint,
    eps: f64,
) -> (f64, Cost) {
    let mut z = state.clone();
    metric.sample_momentum(rng, &mut z.p);
    let h0 = z.hamiltonian(metric);
    let mut v = vec![0.0; z.q.len()];
    leapfrog(target, metric, eps, &mut z, &mut v);
    let h = z.hamiltonian(metric);
    (
        accept_prob(h0 - h),
        Cost::value_and_grad(target.evals_per_call()),
    )
}

impl<T: LogDensity + ?Sized> Kernel<T> for Hmc {
    type State = PhasePoint;

    fn init(&self, target: &T, position: &[f64]) -> Result<PhasePoint, Error> {
        init_point(target, position, &self.metric)
    }

    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut PhasePoint) -> StepInfo {
        let eps = jittered(rng, self.step_size, self.jitter);
        let mut z = state.clone();
        self.metric.sample_momentum(rng, &mut z.p);
        let h0 = z.hamiltonian(&self.metric);
        let mut v = vec![0.0; z.q.len()];
        let mut done = 0u32;
        let mut divergent = false;
        let mut h = h0;
        for _ in 0..self.n_steps {
            leapfrog(target, &self.metric, eps, &mut z, &mut v);
            done += 1;
            h = z.hamiltonian(&self.metric);
            if !h.is_finite() || h - h0 > MAX_ENERGY_ERROR || !z.is_finite() {
                divergent = true;
                break;
            }
        }
        let (a, accepted) = super::metropolis(rng, divergent, || h0 - h);
        let energy = if accepted {
            *state = z;
            h
        } else {
            h0
        };
        let e = target.evals_per_call() * done as u64;
        StepInfo {
            accept_prob: a,
            accepted,
            divergent,
            lik_evals: e,
            grad_evals: e,
            n_leapfrog: done,
            step_size: eps,
            energy,
            ..StepInfo::default()
        }
    }
}

impl_tunable_fields!(Hmc);

impl<T: LogDensity + ?Sized> KernelInfo<T> for Hmc {}

impl<T: LogDensity + ?Sized> Adaptable<T> for Hmc {
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &PhasePoint,
        eps: f64,
    ) -> (f64, Cost) {
        probe_one_leapfrog(rng, target, &self.metric, state, eps)
    }
}
