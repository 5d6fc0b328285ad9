//! GARCH(1,1) observed with noise (Putcha 2024, §3.5.3 and App. A.1.3).
//!
//! # Formula
//! σₜ² = α + βxₜ₋₁² + γσₜ₋₁²,  Xₜ ~ N(0, σₜ²),  Yₜ ~ N(xₜ, τ²).
//!
//! Reparametrised as α = μ(1−φ), β = φλ, γ = φ(1−λ): σₜ² = μ(1−φ) + φ(λxₜ₋₁² + (1−λ)σₜ₋₁²),
//! μ = α/(1−β−γ) the unconditional variance, φ = β+γ the persistence, λ = β/(β+γ).
//! θ = (log μ, logit φ, logit λ, log τ); η = (μ, φ, λ, τ, ln τ²). Stationarity (β+γ < 1) holds for
//! every θ.
//!
//! The state is [xₜ, σₜ², Dₜ] with Dₜ = dσₜ²/d(log μ, logit φ, logit λ) the total derivative of
//! the conditional variance along the path (x fixed); σₜ² and Dₜ are propagated
//! deterministically. Initial law (`Stationary`): x₀ ~ N(0, μ), σ₀² = μ, D₀ = (μ, 0, 0) (the
//! thesis' ν₀ = N(0, α/(1−β−γ)); the authors' code sets σ₀² = 0, spec pitfall 7 recommends μ).
//!
//! Complete-data score, Cₜ = (xₜ² − σₜ²)/(2σₜ⁴):
//! ∂(log μ, logit φ, logit λ) = Cₜ Dₜ,  ∂log τ = (yₜ − xₜ)²/τ² − 1, with
//! Dₜ = ∂σₜ²/∂θ + γ Dₜ₋₁ (γ = φ(1−λ) = ∂σₜ²/∂σₜ₋₁²) and the direct derivatives
//! ∂log μ = μ(1−φ), ∂logit φ = (λxₜ₋₁² + (1−λ)σₜ₋₁² − μ)φ(1−φ), ∂logit λ = φ(xₜ₋₁² − σₜ₋₁²)λ(1−λ).
//! The thesis (A.1.23) keeps only the direct part, i.e. treats σₜ₋₁² as a θ-free state (spec
//! pitfall 12); since σₜ² is a deterministic function of θ and x₀:ₜ₋₁, that is not the gradient
//! of log p(x₀:T, y₁:T|θ), and Fisher's identity needs the total derivative carried here. The
//! difference is small when γ is small (0.05 at the thesis truth) and large when λ → 0.
//!
//! Priors (DESIGN.md; densities on θ): (β, γ) uniform on the stationary triangle β, γ > 0,
//! β + γ < 1, i.e. density 2φ on (φ, λ), φ(1 − φ)λ(1 − λ)·2φ on (logit φ, logit λ);
//! τ ~ HalfNormal(2); μ = α/(1 − β − γ) ~ Gamma(2, scale ½) (α ranges over (0, ∞), where no
//! uniform law exists; the thesis' U(0, 2) has a hard wall a gradient sampler cannot see). The
//! thesis' (A.1.24) (φ+1)/2 ~ Beta(10, 1.5) and (λ+1)/2 ~ Beta(20, 1.5) pulled φ towards 1;
//! they are not used.
//!
//! Locally optimal proposal: xₜ ~ N(σₜ²yₜ/(σₜ²+τ²), σₜ²τ²/(σₜ²+τ²)), weight N(yₜ; 0, σₜ²+τ²).

use super::lgssm::check_law;
use super::{
    ln_normal, ln_normal_lv, simulate_with, InitialLaw, OptimalDraw, State, StateSpaceModel,
};
use crate::dist::normal;
use crate::error::Error;
use crate::math;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The thesis' synthetic truth (α, β, γ, τ) = (0.1, 0.8, 0.05, 0.3).
pub const TRUTH_ABG: [f64; 4] = [0.1, 0.8, 0.05, 0.3];

/// GARCH(1,1) plus observation noise, θ = (log μ, logit φ, logit λ, log τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Garch {
    /// Law of [x₀, σ₀²]: `Stationary` is N(0, μ) with σ₀² = μ, `Normal{var}` is N(0, var)
    /// with σ₀² = var (θ-free, D₀ = 0).
    pub initial: InitialLaw,
}

impl Default for Garch {
    fn default() -> Self {
        Garch {
            initial: InitialLaw::Stationary,
        }
    }
}

impl Garch {
    /// A model with the given initial law.
    pub fn new(initial: InitialLaw) -> Result<Self, Error> {
        Ok(Garch {
            initial: check_law(initial)?,
        })
    }

    /// θ for (μ, φ, λ, τ).
    pub fn theta(mu: f64, phi: f64, lambda: f64, tau: f64) -> [f64; 4] {
        [
            math::ln(mu),
            math::ln(phi / (1.0 - phi)),
            math::ln(lambda / (1.0 - lambda)),
            math::ln(tau),
        ]
    }

    /// θ for the classical (α, β, γ, τ), α > 0, β, γ > 0, β + γ < 1.
    pub fn theta_from_abg(alpha: f64, beta: f64, gamma: f64, tau: f64) -> [f64; 4] {
        let phi = beta + gamma;
        Self::theta(alpha / (1.0 - phi), phi, beta / phi, tau)
    }

    fn variance(eta: &[f64], prev: &State) -> f64 {
        let (mu, phi, lambda) = (eta[0], eta[1], eta[2]);
        mu * (1.0 - phi) + phi * (lambda * prev[0] * prev[0] + (1.0 - lambda) * prev[1])
    }

    /// The state with value `x` after `prev`: [x, σₜ², Dₜ].
    fn next(eta: &[f64], prev: &State, x: f64) -> State {
        let (mu, phi, lambda) = (eta[0], eta[1], eta[2]);
        let xp2 = prev[0] * prev[0];
        let gamma = phi * (1.0 - lambda);
        [
            x,
            Self::variance(eta, prev),
            mu * (1.0 - phi) + gamma * prev[2],
            (lambda * xp2 + (1.0 - lambda) * prev[1] - mu) * phi * (1.0 - phi) + gamma * prev[3],
            phi * (xp2 - prev[1]) * lambda * (1.0 - lambda) + gamma * prev[4],
        ]
    }

    /// The initial state with value `x`: [x, σ₀², D₀].
    fn first(&self, eta: &[f64], x: f64) -> State {
        match self.initial {
            InitialLaw::Stationary => [x, eta[0], eta[0], 0.0, 0.0],
            InitialLaw::Normal { var } => [x, var, 0.0, 0.0, 0.0],
        }
    }

    fn initial_var(&self, eta: &[f64]) -> f64 {
        match self.initial {
            InitialLaw::Stationary => eta[0],
            InitialLaw::Normal { var } => var,
        }
    }
}

/// Scale of the half-normal prior on τ (DESIGN.md: τ ~ HalfNormal(2)).
const TAU_PRIOR_SCALE: f64 = 2.0;

impl StateSpaceModel for Garch {
    fn name(&self) -> &'static str {
        "garch"
    }
    fn dim(&self) -> usize {
        4
    }
    fn param_names(&self) -> Vec<String> {
        vec![
            "log_mu".into(),
            "logit_phi".into(),
            "logit_lambda".into(),
            "log_tau".into(),
        ]
    }
    fn natural_dim(&self) -> usize {
        5
    }
    fn natural(&self, theta: &[f64], eta: &mut [f64]) {
        eta[0] = math::exp(theta[0]);
        eta[1] = math::sigmoid(theta[1]);
        eta[2] = math::sigmoid(theta[2]);
        eta[3] = math::exp(theta[3]);
        eta[4] = 2.0 * theta[3];
    }
    fn unconstrained(&self, eta: &[f64]) -> Option<Vec<f64>> {
        if eta.len() < 4
            || !(eta[0] > 0.0 && eta[3] > 0.0)
            || !(eta[1] > 0.0 && eta[1] < 1.0 && eta[2] > 0.0 && eta[2] < 1.0)
        {
            return None;
        }
        Some(Garch::theta(eta[0], eta[1], eta[2], eta[3]).to_vec())
    }
    fn reported_names(&self) -> Vec<String> {
        vec!["alpha".into(), "beta".into(), "gamma".into(), "tau".into()]
    }
    /// (α, β, γ, τ) = (μ(1−φ), φλ, φ(1−λ), τ).
    fn to_reported(&self, theta: &[f64], out: &mut [f64]) {
        let mu = math::exp(theta[0]);
        let phi = math::sigmoid(theta[1]);
        let lambda = math::sigmoid(theta[2]);
        out[0] = mu * (1.0 - phi);
        out[1] = phi * lambda;
        out[2] = phi * (1.0 - lambda);
        out[3] = math::exp(theta[3]);
    }
    fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>> {
        if reported.len() < 4 {
            return None;
        }
        let (alpha, beta, gamma, tau) = (reported[0], reported[1], reported[2], reported[3]);
        if !(alpha > 0.0 && beta > 0.0 && gamma > 0.0 && beta + gamma < 1.0 && tau > 0.0) {
            return None;
        }
        let phi = beta + gamma;
        self.unconstrained(&[alpha / (1.0 - phi), phi, beta / phi, tau])
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        // μ ~ Gamma(2, scale ½) on log μ: 2 log μ − 2μ + 2 ln 2
        let mu = math::exp(theta[0]);
        let mut lp = 2.0 * theta[0] - 2.0 * mu + 2.0 * core::f64::consts::LN_2;
        grad[0] += 2.0 - 2.0 * mu;
        // (β, γ) uniform on the stationary triangle β, γ > 0, β + γ < 1 (density 2): with
        // β = φλ, γ = φ(1 − λ) the density of (φ, λ) is 2φ, and on (logit φ, logit λ)
        // 2φ · φ(1 − φ) · λ(1 − λ)
        let (l1, l2) = (theta[1], theta[2]);
        lp += core::f64::consts::LN_2
            + 2.0 * math::log_sigmoid(l1)
            + math::log_sigmoid(-l1)
            + math::log_sigmoid(l2)
            + math::log_sigmoid(-l2);
        grad[1] += 2.0 - 3.0 * math::sigmoid(l1);
        grad[2] += 1.0 - 2.0 * math::sigmoid(l2);
        // τ ~ HalfNormal(2) on v = log τ: ln √(2/π) − ln 2 − e²ᵛ/8 + v
        let r2 = math::exp(2.0 * theta[3]) / (TAU_PRIOR_SCALE * TAU_PRIOR_SCALE);
        lp += -0.225_791_352_644_727_4 - math::ln(TAU_PRIOR_SCALE) - 0.5 * r2 + theta[3];
        grad[3] += 1.0 - r2;
        lp
    }
    fn sample_initial(&self, eta: &[f64], rng: &mut ChainRng) -> State {
        let v = self.initial_var(eta);
        self.first(eta, normal(rng, 0.0, math::sqrt(v)))
    }
    fn with_value(&self, eta: &[f64], prev: Option<&State>, x: f64) -> State {
        match prev {
            None => self.first(eta, x),
            Some(p) => Self::next(eta, p, x),
        }
    }
    fn log_initial(&self, eta: &[f64], x: &State) -> f64 {
        ln_normal(x[0], 0.0, self.initial_var(eta))
    }
    fn grad_log_initial(&self, eta: &[f64], x: &State, grad: &mut [f64]) {
        if let InitialLaw::Stationary = self.initial {
            let mu = eta[0];
            grad[0] += (x[0] * x[0] - mu) / (2.0 * mu);
        }
    }
    fn sample_transition(&self, eta: &[f64], prev: &State, rng: &mut ChainRng) -> State {
        let mut s = Self::next(eta, prev, 0.0);
        s[0] = normal(rng, 0.0, math::sqrt(s[1]));
        s
    }
    fn log_transition(&self, eta: &[f64], prev: &State, x: &State) -> f64 {
        ln_normal(x[0], 0.0, Self::variance(eta, prev))
    }
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64 {
        ln_normal_lv(y, x[0], eta[3] * eta[3], eta[4])
    }
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]) {
        // σₜ² and Dₜ recomputed from prev (so the hook does not trust x's companions)
        let s = Self::next(eta, prev, x[0]);
        let s2 = s[1];
        let c = (x[0] * x[0] - s2) / (2.0 * s2 * s2);
        grad[0] += c * s[2];
        grad[1] += c * s[3];
        grad[2] += c * s[4];
        let tau = eta[3];
        let r = y - x[0];
        grad[3] += r * r / (tau * tau) - 1.0;
    }
    fn has_optimal_proposal(&self) -> bool {
        true
    }
    fn sample_optimal(
        &self,
        eta: &[f64],
        prev: &State,
        y: f64,
        rng: &mut ChainRng,
    ) -> Option<OptimalDraw> {
        let mut s = Self::next(eta, prev, 0.0);
        let s2 = s[1];
        let t2 = eta[3] * eta[3];
        let tot = s2 + t2;
        s[0] = normal(rng, s2 * y / tot, math::sqrt(s2 * t2 / tot));
        Some(OptimalDraw {
            state: s,
            log_weight: ln_normal(y, 0.0, tot),
        })
    }
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>) {
        simulate_with(self, theta, t_len, rng, |eta, x, r| normal(r, x[0], eta[3]))
    }
}
