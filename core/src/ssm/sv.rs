//! Stochastic volatility model (Putcha 2024, §3.5.2 and App. A.1.2).
//!
//! # Formula
//! Xₜ = φXₜ₋₁ + σVₜ,  Yₜ | xₜ ~ N(0, eˣᵗ τ²).
//!
//! log g(yₜ|xₜ) = −½ log(2π τ² eˣᵗ) − yₜ² e⁻ˣᵗ/(2τ²). The thesis' weight (A.1.13) drops the
//! normaliser e^{−xₜ/2}; it is included here, as in A.1.14 and the authors' code.
//!
//! θ = (φ, log σ, log τ), η = (φ, σ, τ, ln σ², ln τ²); priors and the initial law exactly as for [`Lgssm`](super::Lgssm)
//! (stationary N(0, σ²/(1−φ²)) by default). Complete-data score: ∂φ and ∂log σ as for the
//! LGSSM, ∂log τ = yₜ² e⁻ˣᵗ/τ² − 1.
//!
//! Bootstrap proposal only (no closed-form optimal kernel). The prior kernel contracts with
//! constant L ≤ |φ|. e⁻ˣ is evaluated with x clamped at −700 so extreme particles give a zero
//! weight instead of an overflow.

use super::lgssm::{ar1_grad_log_transition, ar1_natural, ar1_state_hooks, check_law, ScalePrior};
use super::{simulate_with, InitialLaw, State, StateSpaceModel};
use crate::dist::normal;
use crate::error::Error;
use crate::math;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec::Vec;

/// The thesis' synthetic truth (φ, σ, τ) = (0.9, 0.5, 0.5).
pub const TRUTH: [f64; 3] = [0.9, 0.5, 0.5];

/// The stochastic volatility model, θ = (φ, log σ, log τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StochasticVolatility {
    /// Law of x₀ (one step before y₁).
    pub initial: InitialLaw,
    /// Prior hyperparameters.
    pub prior: ScalePrior,
}

impl Default for StochasticVolatility {
    /// Stationary initial law and the default prior.
    fn default() -> Self {
        StochasticVolatility {
            initial: InitialLaw::Stationary,
            prior: ScalePrior::default(),
        }
    }
}

impl StochasticVolatility {
    /// A model with the given initial law and prior.
    pub fn new(initial: InitialLaw, prior: ScalePrior) -> Result<Self, Error> {
        Ok(StochasticVolatility {
            initial: check_law(initial)?,
            prior,
        })
    }
}

/// e⁻ˣ with x clamped at −700 (no overflow).
#[inline]
fn exp_neg(x: f64) -> f64 {
    math::exp(-(x.max(-700.0)))
}

impl StateSpaceModel for StochasticVolatility {
    fn name(&self) -> &'static str {
        "sv"
    }
    ar1_state_hooks!();
    fn natural_dim(&self) -> usize {
        5
    }
    fn natural(&self, theta: &[f64], eta: &mut [f64]) {
        ar1_natural(theta, eta);
    }
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64 {
        let t2 = eta[2] * eta[2];
        -0.5 * (eta[4] + x[0] + y * y * exp_neg(x[0]) / t2) - math::LN_SQRT_2PI
    }
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]) {
        ar1_grad_log_transition(eta, prev, x, grad);
        grad[2] += y * y * exp_neg(x[0]) / (eta[2] * eta[2]) - 1.0;
    }
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>) {
        simulate_with(self, theta, t_len, rng, |eta, x, r| {
            normal(r, 0.0, eta[2] * math::exp(0.5 * x[0]))
        })
    }
}
