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

use super::lgssm::{ar1_grad_log_initial, ar1_initial, check_law, ScalePrior};
use super::{ln_normal, ln_normal_lv, simulate_with, state, InitialLaw, State, StateSpaceModel};
use crate::dist::normal;
use crate::error::Error;
use crate::math;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec;
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
    /// Stationary initial law and the thesis prior.
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
    fn dim(&self) -> usize {
        3
    }
    fn param_names(&self) -> Vec<String> {
        vec!["phi".into(), "log_sigma".into(), "log_tau".into()]
    }
    fn natural_dim(&self) -> usize {
        5
    }
    fn natural(&self, theta: &[f64], eta: &mut [f64]) {
        eta[0] = theta[0];
        eta[1] = math::exp(theta[1]);
        eta[2] = math::exp(theta[2]);
        eta[3] = 2.0 * theta[1];
        eta[4] = 2.0 * theta[2];
    }
    fn unconstrained(&self, eta: &[f64]) -> Option<Vec<f64>> {
        if eta.len() < 3 || !(eta[1] > 0.0 && eta[2] > 0.0) || !eta[0].is_finite() {
            return None;
        }
        Some(vec![eta[0], math::ln(eta[1]), math::ln(eta[2])])
    }
    fn reported_names(&self) -> Vec<String> {
        super::phi_sigma_tau_names()
    }
    fn to_reported(&self, theta: &[f64], out: &mut [f64]) {
        super::phi_sigma_tau(theta, out)
    }
    fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>> {
        self.unconstrained(reported)
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
    fn sample_initial(&self, eta: &[f64], rng: &mut ChainRng) -> State {
        let (m, v) = ar1_initial(self.initial, eta[0], eta[1]);
        state(normal(rng, m, math::sqrt(v)))
    }
    fn log_initial(&self, eta: &[f64], x: &State) -> f64 {
        let (m, v) = ar1_initial(self.initial, eta[0], eta[1]);
        ln_normal(x[0], m, v)
    }
    fn grad_log_initial(&self, eta: &[f64], x: &State, grad: &mut [f64]) {
        ar1_grad_log_initial(self.initial, eta[0], eta[1], x[0], grad);
    }
    fn sample_transition(&self, eta: &[f64], prev: &State, rng: &mut ChainRng) -> State {
        state(normal(rng, eta[0] * prev[0], eta[1]))
    }
    fn log_transition(&self, eta: &[f64], prev: &State, x: &State) -> f64 {
        ln_normal_lv(x[0], eta[0] * prev[0], eta[1] * eta[1], eta[3])
    }
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64 {
        let t2 = eta[2] * eta[2];
        -0.5 * (eta[4] + x[0] + y * y * exp_neg(x[0]) / t2) - math::LN_SQRT_2PI
    }
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]) {
        let (phi, s2, t2) = (eta[0], eta[1] * eta[1], eta[2] * eta[2]);
        let e = x[0] - phi * prev[0];
        grad[0] += e * prev[0] / s2;
        grad[1] += e * e / s2 - 1.0;
        grad[2] += y * y * exp_neg(x[0]) / t2 - 1.0;
    }
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>) {
        simulate_with(self, theta, t_len, rng, |eta, x, r| {
            normal(r, 0.0, eta[2] * math::exp(0.5 * x[0]))
        })
    }
}
