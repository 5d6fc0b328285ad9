//! Random-walk Metropolis–Hastings with a Cholesky-scaled Gaussian proposal.
//!
//! # Formula
//! θ′ = θ + ε L z, z ~ N(0, I), Σ = L Lᵀ the metric (proposal covariance ε² Σ).
//! Accept with probability min(1, π(θ′)/π(θ)).
//!
//! ## References
//! Roberts, G. O., Gelman, A. & Gilks, W. R. (1997). Weak convergence and optimal scaling of
//! random walk Metropolis algorithms. Ann. Appl. Probab. 7(1) (optimal acceptance 0.234).

use super::{accept_prob, Adaptable, HasPosition, Kernel, KernelInfo, Metric, StepInfo};
use crate::cost::Cost;
use crate::dist;
use crate::error::Error;
use crate::model::LogDensity;
use crate::rng::{ChainRng, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// Random-walk Metropolis with proposal N(θ, ε² Σ).
#[derive(Debug, Clone, PartialEq)]
pub struct Rwmh {
    step_size: f64,
    metric: Metric,
}

/// The state of [`Rwmh`]: position and its log density.
#[derive(Debug, Clone, PartialEq)]
pub struct RwmhState {
    /// θ.
    pub q: Vec<f64>,
    /// log π(θ).
    pub log_density: f64,
}

impl HasPosition for RwmhState {
    fn position(&self) -> &[f64] {
        &self.q
    }
}

impl Rwmh {
    /// A kernel with step size ε > 0 and proposal shape Σ = `metric`.
    pub fn new(step_size: f64, metric: Metric) -> Result<Self, Error> {
        super::check_step_size(step_size)?;
        Ok(Rwmh { step_size, metric })
    }

    fn propose<R: Rng + ?Sized>(&self, rng: &mut R, q: &[f64], eps: f64) -> Vec<f64> {
        let d = q.len();
        let mut z = vec![0.0; d];
        for x in z.iter_mut() {
            *x = dist::std_normal(rng);
        }
        let mut out = vec![0.0; d];
        self.metric.scale_noise(&z, &mut out);
        for (o, qi) in out.iter_mut().zip(q) {
            *o = qi + eps * *o;
        }
        out
    }
}

impl<T: LogDensity + ?Sized> Kernel<T> for Rwmh {
    type State = RwmhState;

    fn init(&self, target: &T, position: &[f64]) -> Result<RwmhState, Error> {
        super::check_position(target.dim(), position, &self.metric)?;
        let log_density = target.log_density(position);
        if !log_density.is_finite() {
            return Err(Error::NonFiniteStart);
        }
        Ok(RwmhState {
            q: position.to_vec(),
            log_density,
        })
    }

    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut RwmhState) -> StepInfo {
        let prop = self.propose(rng, &state.q, self.step_size);
        let lp = target.log_density(&prop);
        let divergent = !lp.is_finite();
        let (a, accepted) = super::metropolis(rng, divergent, || lp - state.log_density);
        if accepted {
            state.q = prop;
            state.log_density = lp;
        }
        StepInfo {
            accept_prob: a,
            accepted,
            divergent,
            lik_evals: target.evals_per_call(),
            grad_evals: 0,
            n_leapfrog: 0,
            step_size: self.step_size,
            energy: -state.log_density,
            ..StepInfo::default()
        }
    }
}

impl_tunable_fields!(Rwmh);

impl<T: LogDensity + ?Sized> KernelInfo<T> for Rwmh {}

impl<T: LogDensity + ?Sized> Adaptable<T> for Rwmh {
    fn uses_gradient(&self) -> bool {
        false
    }
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &RwmhState,
        eps: f64,
    ) -> (f64, Cost) {
        let prop = self.propose(rng, &state.q, eps);
        let lp = target.log_density(&prop);
        let a = if lp.is_finite() {
            accept_prob(lp - state.log_density)
        } else {
            0.0
        };
        let cost = Cost {
            lik_evals: target.evals_per_call(),
            grad_evals: 0,
        };
        (a, cost)
    }
}
