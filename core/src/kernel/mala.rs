//! The Metropolis-adjusted Langevin algorithm (preconditioned by the metric).
//!
//! # Formula
//! μ(θ) = θ + (ε²/2) Σ ∇log π(θ),  θ′ = μ(θ) + ε L z,  z ~ N(0, I), Σ = L Lᵀ.
//! log q(θ′ | θ) = −(1/(2ε²)) (θ′ − μ(θ))ᵀ Σ⁻¹ (θ′ − μ(θ)) (+ const).
//! Accept with probability min(1, π(θ′) q(θ | θ′) / (π(θ) q(θ′ | θ))).
//!
//! ## References
//! Roberts, G. O. & Tweedie, R. L. (1996). Exponential convergence of Langevin distributions and
//! their discrete approximations. Bernoulli 2(4). Roberts & Rosenthal (1998), optimal acceptance 0.574.

use super::{accept_prob, Adaptable, HasPosition, Kernel, KernelInfo, Metric, StepInfo};
use crate::cost::Cost;
use crate::dist;
use crate::error::Error;
use crate::model::LogDensity;
use crate::rng::{ChainRng, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// MALA with proposal N(θ + (ε²/2) Σ ∇log π(θ), ε² Σ).
#[derive(Debug, Clone, PartialEq)]
pub struct Mala {
    step_size: f64,
    metric: Metric,
}

/// The state of [`Mala`]: position, log density and gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct MalaState {
    /// θ.
    pub q: Vec<f64>,
    /// log π(θ).
    pub log_density: f64,
    /// ∇ log π(θ).
    pub grad: Vec<f64>,
}

impl HasPosition for MalaState {
    fn position(&self) -> &[f64] {
        &self.q
    }
}

/// A proposal with its log density, gradient and log q(θ′ | θ).
struct Proposal {
    q: Vec<f64>,
    log_density: f64,
    grad: Vec<f64>,
    log_q_fwd: f64,
}

impl Mala {
    /// A kernel with step size ε > 0 and preconditioner Σ = `metric`.
    pub fn new(step_size: f64, metric: Metric) -> Result<Self, Error> {
        super::check_step_size(step_size)?;
        Ok(Mala { step_size, metric })
    }

    /// μ(θ) = θ + (ε²/2) Σ g.
    fn drift(&self, q: &[f64], g: &[f64], eps: f64) -> Vec<f64> {
        let mut v = vec![0.0; q.len()];
        self.metric.velocity(g, &mut v);
        let h = 0.5 * eps * eps;
        for (vi, qi) in v.iter_mut().zip(q) {
            *vi = qi + h * *vi;
        }
        v
    }

    fn propose<T: LogDensity + ?Sized, R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &MalaState,
        eps: f64,
    ) -> Proposal {
        let d = state.q.len();
        let mut z = vec![0.0; d];
        for x in z.iter_mut() {
            *x = dist::std_normal(rng);
        }
        let mut q = vec![0.0; d];
        self.metric.scale_noise(&z, &mut q);
        let mu = self.drift(&state.q, &state.grad, eps);
        for (qi, m) in q.iter_mut().zip(&mu) {
            *qi = m + eps * *qi;
        }
        let mut grad = vec![0.0; d];
        let log_density = target.log_density_grad(&q, &mut grad);
        // (θ′ − μ)ᵀ Σ⁻¹ (θ′ − μ) / ε² = |z|².
        let log_q_fwd = -0.5 * crate::linalg::dot(&z, &z);
        Proposal {
            q,
            log_density,
            grad,
            log_q_fwd,
        }
    }

    /// log of the MH ratio for a proposal (NaN/−∞ when not finite).
    fn log_ratio(&self, state: &MalaState, prop: &Proposal, eps: f64) -> f64 {
        let mu_back = self.drift(&prop.q, &prop.grad, eps);
        let diff: Vec<f64> = state.q.iter().zip(&mu_back).map(|(a, b)| a - b).collect();
        let log_q_back = -self.metric.inv_quad(&diff) / (eps * eps);
        prop.log_density - state.log_density + log_q_back - prop.log_q_fwd
    }
}

fn finite(prop: &Proposal) -> bool {
    prop.log_density.is_finite() && prop.grad.iter().all(|g| g.is_finite())
}

impl<T: LogDensity + ?Sized> Kernel<T> for Mala {
    type State = MalaState;

    fn init(&self, target: &T, position: &[f64]) -> Result<MalaState, Error> {
        super::check_position(target.dim(), position, &self.metric)?;
        let mut grad = vec![0.0; position.len()];
        let log_density = target.log_density_grad(position, &mut grad);
        if !log_density.is_finite() || grad.iter().any(|g| !g.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Ok(MalaState {
            q: position.to_vec(),
            log_density,
            grad,
        })
    }

    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut MalaState) -> StepInfo {
        let eps = self.step_size;
        let prop = self.propose(rng, target, state, eps);
        let divergent = !finite(&prop);
        let (a, accepted) = super::metropolis(rng, divergent, || self.log_ratio(state, &prop, eps));
        if accepted {
            state.q = prop.q;
            state.log_density = prop.log_density;
            state.grad = prop.grad;
        }
        let e = target.evals_per_call();
        StepInfo {
            accept_prob: a,
            accepted,
            divergent,
            lik_evals: e,
            grad_evals: e,
            n_leapfrog: 0,
            step_size: eps,
            energy: -state.log_density,
            ..StepInfo::default()
        }
    }
}

impl_tunable_fields!(Mala);

impl<T: LogDensity + ?Sized> KernelInfo<T> for Mala {}

impl<T: LogDensity + ?Sized> Adaptable<T> for Mala {
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &MalaState,
        eps: f64,
    ) -> (f64, Cost) {
        let prop = self.propose(rng, target, state, eps);
        let a = if finite(&prop) {
            accept_prob(self.log_ratio(state, &prop, eps))
        } else {
            0.0
        };
        (a, Cost::value_and_grad(target.evals_per_call()))
    }
}
