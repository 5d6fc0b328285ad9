//! MCMC kernels: immutable parameters + `init` + infallible `step`.
//!
//! A kernel is generic over its target `T` (a [`LogDensity`](crate::model::LogDensity) for the
//! exact kernels, a [`DataModel`](crate::model::DataModel) for the subsampling ones). `init`
//! validates and returns an error; `step` never fails: a non-finite energy is a rejected,
//! divergent step. Each step reports its cost in per-datum evaluations.

pub use crate::cost::Cost;
use crate::error::Error;
use crate::rng::{ChainRng, Rng};

/// `impl Tunable` for a kernel that keeps its step size and metric as the plain fields
/// `step_size: f64` and `metric: Metric` (defined before the kernel modules so they can use it).
macro_rules! impl_tunable_fields {
    ($kernel:ty) => {
        impl $crate::kernel::Tunable for $kernel {
            fn step_size(&self) -> f64 {
                self.step_size
            }
            fn set_step_size(&mut self, eps: f64) {
                self.step_size = eps;
            }
            fn metric(&self) -> &$crate::kernel::Metric {
                &self.metric
            }
            fn set_metric(&mut self, metric: $crate::kernel::Metric) {
                self.metric = metric;
            }
        }
    };
}

pub mod hmc;
pub mod hmcecs;
pub mod leapfrog;
pub mod mala;
pub mod metric;
pub mod minibatch_mh;
pub mod nuts;
pub mod pfsgld;
pub mod pmmh;
pub mod qnhmc;
pub mod rwmh;
pub mod sgmcmc;
pub mod smh;
pub use hmc::Hmc;
pub use mala::Mala;
pub use metric::Metric;
pub use nuts::Nuts;
pub use rwmh::Rwmh;

use alloc::vec::Vec;

/// Number of kernel-specific extras per step ([`StepInfo::extra`]).
pub const EXTRAS: usize = 4;

/// What one step did. A small `Copy` record; the chain driver writes it to `stats.csv`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepInfo {
    /// Metropolis acceptance probability of the proposal (mean over the tree for NUTS).
    pub accept_prob: f64,
    /// Whether the state moved.
    pub accepted: bool,
    /// A non-finite or exploding energy was met (the step was rejected).
    pub divergent: bool,
    /// Per-datum log-likelihood evaluations this step (a value-and-gradient call counts in both).
    pub lik_evals: u64,
    /// Per-datum gradient evaluations this step.
    pub grad_evals: u64,
    /// Leapfrog steps (0 for non-Hamiltonian kernels).
    pub n_leapfrog: u32,
    /// Step size used.
    pub step_size: f64,
    /// Hamiltonian (or −log π for MH kernels) at the returned state; NaN when not applicable.
    pub energy: f64,
    /// Sign of the state's weight for signed (pseudo-marginal, block-Poisson) samplers; 1 otherwise.
    pub sign: f64,
    /// Kernel-specific extras, named by the chain's `extra_names()` (σ̂², batch size, tree depth, ...).
    pub extra: [f64; EXTRAS],
}

impl StepInfo {
    /// This step's evaluations as a [`Cost`].
    pub fn cost(&self) -> Cost {
        Cost {
            lik_evals: self.lik_evals,
            grad_evals: self.grad_evals,
        }
    }
}

impl Default for StepInfo {
    fn default() -> Self {
        StepInfo {
            accept_prob: 0.0,
            accepted: false,
            divergent: false,
            lik_evals: 0,
            grad_evals: 0,
            n_leapfrog: 0,
            step_size: f64::NAN,
            energy: f64::NAN,
            sign: 1.0,
            extra: [f64::NAN; EXTRAS],
        }
    }
}

/// A state that has a position θ.
pub trait HasPosition {
    /// θ.
    fn position(&self) -> &[f64];
}

/// An MCMC kernel over target `T`.
pub trait Kernel<T: ?Sized> {
    /// What the next step needs (position, cached log density and gradient, ...).
    type State: HasPosition + Clone + Send;
    /// Validate and build the state at `position`.
    fn init(&self, target: &T, position: &[f64]) -> Result<Self::State, Error>;
    /// One transition. Never panics and never fails.
    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut Self::State) -> StepInfo;
}

/// What a kernel tells about itself besides its steps, for the driver to report: the names
/// of its extras, the values it resolved, whether it is exact or signed. Every kernel the
/// generic driver ([`crate::sampler::Driver`]) runs implements it.
pub trait KernelInfo<T: ?Sized>: Kernel<T> {
    /// Names of the meaningful entries of [`StepInfo::extra`].
    fn extra_names(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// Values the kernel chose itself (scales, subsample sizes, ...), as (name, value).
    fn resolved(&self, _state: &Self::State) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
    /// Whether it targets the posterior exactly.
    fn exact(&self) -> bool {
        true
    }
    /// Whether its draws carry signs.
    fn signed(&self) -> bool {
        false
    }
    /// Time-series kernels: the window of the last filter run and the filter's ESS over it.
    fn window_trace(&self, _state: &Self::State) -> Option<crate::ssm::buffered::WindowTrace> {
        None
    }
}

/// Kernels whose step size and metric warm-up adaptation may tune.
pub trait Tunable {
    /// Current step size ε.
    fn step_size(&self) -> f64;
    /// Set ε (> 0).
    fn set_step_size(&mut self, eps: f64);
    /// Current metric (inverse mass matrix / proposal covariance shape).
    fn metric(&self) -> &Metric;
    /// Replace the metric.
    fn set_metric(&mut self, metric: Metric);
}

/// Kernels that warm-up adaptation ([`crate::sampler::AdaptiveChain`]) can drive.
pub trait Adaptable<T: ?Sized>: KernelInfo<T> + Tunable {
    /// Acceptance probability of one cheap trial move from `state` with step size `eps`
    /// (one leapfrog step for Hamiltonian kernels, one proposal for MH kernels), leaving `state`
    /// unchanged, and what it cost. Used by the initial step-size heuristic. Never NaN.
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &Self::State,
        eps: f64,
    ) -> (f64, Cost);
    /// Whether `init` evaluates the gradient (for setup-cost accounting).
    fn uses_gradient(&self) -> bool {
        true
    }
}

/// min(1, exp(log_ratio)), with NaN mapped to 0 (a rejection).
#[inline]
pub fn accept_prob(log_ratio: f64) -> f64 {
    if log_ratio.is_nan() {
        0.0
    } else if log_ratio >= 0.0 {
        1.0
    } else {
        crate::math::exp(log_ratio)
    }
}

/// The Metropolis decision shared by the exact kernels: acceptance probability
/// a = min(1, exp(log_ratio())) (0 for a divergent proposal, whose ratio is then not computed)
/// and whether a uniform draw falls below it. A divergent proposal draws no uniform, so the
/// random stream is the same as when each kernel wrote this inline.
#[inline]
pub(crate) fn metropolis<R: Rng + ?Sized>(
    rng: &mut R,
    divergent: bool,
    log_ratio: impl FnOnce() -> f64,
) -> (f64, bool) {
    let a = if divergent {
        0.0
    } else {
        accept_prob(log_ratio())
    };
    let accepted = !divergent && crate::rng::uniform(rng) < a;
    (a, accepted)
}

/// Check a step size: finite and > 0.
pub(crate) fn check_step_size(eps: f64) -> Result<(), Error> {
    if eps.is_finite() && eps > 0.0 {
        Ok(())
    } else {
        Err(Error::setting("step_size", "must be a finite number > 0"))
    }
}

/// Check a starting position against the target's dimension.
pub(crate) fn check_position(d: usize, position: &[f64], metric: &Metric) -> Result<(), Error> {
    Error::check_dim("position", d, position.len())?;
    Error::check_dim("metric", d, metric.dim())?;
    if position.iter().any(|x| !x.is_finite()) {
        return Err(Error::NonFiniteStart);
    }
    Ok(())
}
