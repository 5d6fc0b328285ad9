//! The 1-d linear Gaussian state-space model (Putcha 2024, §3.5.1 and App. A.1.1).
//!
//! # Formula
//! Xₜ = φ Xₜ₋₁ + σ Vₜ,  Yₜ = Xₜ + τ Wₜ,  Vₜ, Wₜ ~ N(0, 1) i.i.d.
//!
//! Stationary law (|φ| < 1): N(0, σ²/(1−φ²)) — the thesis prints φ²/(1−σ²), a typo.
//!
//! Unconstrained parameters θ = (φ, log σ, log τ); natural η = (φ, σ, τ, ln σ², ln τ², ln(σ²+τ²))
//! (the logs are cached for the per-particle densities).
//!
//! Priors (thesis A.1.9, Gamma with *scale* as second argument, so the mean is 1), written as
//! densities on θ (log-Jacobians included):
//! - φ | σ ~ N(0, (c σ)²), c = 10 (`phi_scale`);
//! - σ⁻¹ ~ Gamma(a, b), τ⁻¹ ~ Gamma(a, b), a = 101, b = 1/101 (`inv_shape`, `inv_scale`); on
//!   u = log σ this is log p(u) = −a u − e⁻ᵘ/b − ln Γ(a) − a ln b.
//!
//! Complete-data score (A.1.6–A.1.8), with e = xₜ − φxₜ₋₁ and r = yₜ − xₜ:
//! ∂φ = e xₜ₋₁/σ², ∂log σ = e²/σ² − 1, ∂log τ = r²/τ² − 1.
//!
//! Locally optimal proposal (A.1.3): xₜ ~ N((τ²φxₜ₋₁ + σ²yₜ)/(σ²+τ²), σ²τ²/(σ²+τ²)), with
//! incremental weight N(yₜ; φxₜ₋₁, σ²+τ²).
//!
//! The filtered kernel contracts with constant L = |φ|τ²/(σ²+τ²) (thesis eq. 3.7.28; §3.5.1
//! prints σ² in the numerator, a typo): 0.604 at the truth φ = 0.9, σ = 0.7, τ = 1.

use super::STATIONARY_FLOOR;
use super::{ln_normal_lv, simulate_with, state, InitialLaw, OptimalDraw, State, StateSpaceModel};
use crate::dist::normal;
use crate::error::Error;
use crate::math;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec::Vec;

/// The thesis' synthetic truth (φ, σ, τ) = (0.9, 0.7, 1.0) as natural parameters.
pub const TRUTH: [f64; 3] = [0.9, 0.7, 1.0];

/// Hyperparameters of the `lgssm` and `sv` priors (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScalePrior {
    /// c in φ | σ ~ N(0, (cσ)²).
    pub phi_scale: f64,
    /// Shape a of the Gamma prior on σ⁻¹ and τ⁻¹.
    pub inv_shape: f64,
    /// Scale b of the Gamma prior on σ⁻¹ and τ⁻¹.
    pub inv_scale: f64,
}

impl Default for ScalePrior {
    /// The thesis' prior [`ScalePrior::THESIS`].
    fn default() -> Self {
        Self::THESIS
    }
}

impl ScalePrior {
    /// The thesis' prior: c = 10, a = 101, b = 1/101 (the defaults of the settings
    /// `phi_prior_scale`, `inv_shape`, `inv_scale`).
    pub const THESIS: ScalePrior = ScalePrior {
        phi_scale: 10.0,
        inv_shape: 101.0,
        inv_scale: 1.0 / 101.0,
    };

    /// Validated hyperparameters (all finite and > 0).
    pub fn new(phi_scale: f64, inv_shape: f64, inv_scale: f64) -> Result<Self, Error> {
        for (k, v) in [
            ("phi_scale", phi_scale),
            ("inv_shape", inv_shape),
            ("inv_scale", inv_scale),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(Error::setting(k, "must be a positive finite number"));
            }
        }
        Ok(ScalePrior {
            phi_scale,
            inv_shape,
            inv_scale,
        })
    }

    /// log p(φ, log σ, log τ) with its gradient accumulated into `grad[0..3]`.
    pub(crate) fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let (phi, u, v) = (theta[0], theta[1], theta[2]);
        let c2 = self.phi_scale * self.phi_scale;
        let e2u = math::exp(-2.0 * u);
        // φ | σ ~ N(0, c²σ²)
        let mut lp = -0.5 * math::ln(c2) - u - 0.5 * phi * phi * e2u / c2 - math::LN_SQRT_2PI;
        grad[0] += -phi * e2u / c2;
        grad[1] += -1.0 + phi * phi * e2u / c2;
        // σ⁻¹, τ⁻¹ ~ Gamma(a, scale b), as densities on log σ and log τ.
        let (a, b) = (self.inv_shape, self.inv_scale);
        let norm = -math::ln_gamma(a) - a * math::ln(b);
        for (k, w) in [(1usize, u), (2usize, v)] {
            let emw = math::exp(-w);
            lp += -a * w - emw / b + norm;
            grad[k] += -a + emw / b;
        }
        lp
    }
}

/// Stationary variance σ²/(1−φ²) of an AR(1) state, `None` when |φ| ≥ 1.
pub fn stationary_variance(phi: f64, sigma: f64) -> Option<f64> {
    if math::abs(phi) < 1.0 {
        Some(sigma * sigma / (1.0 - phi * phi))
    } else {
        None
    }
}

/// The variance of the `Stationary` initial law, with 1 − φ² floored at [`STATIONARY_FLOOR`];
/// returns (v₀, ∂v₀/∂φ, ∂v₀/∂log σ).
pub(crate) fn ar1_initial_variance(phi: f64, sigma: f64) -> (f64, f64, f64) {
    let one = 1.0 - phi * phi;
    let s2 = sigma * sigma;
    if one > STATIONARY_FLOOR {
        let v = s2 / one;
        (v, 2.0 * phi * s2 / (one * one), 2.0 * v)
    } else {
        let v = s2 / STATIONARY_FLOOR;
        (v, 0.0, 2.0 * v)
    }
}

/// Initial-law helpers shared by `lgssm` and `sv` (both AR(1) states): (mean, variance) of ν.
pub(crate) fn ar1_initial(law: InitialLaw, phi: f64, sigma: f64) -> (f64, f64) {
    match law {
        InitialLaw::Stationary => (0.0, ar1_initial_variance(phi, sigma).0),
        InitialLaw::Normal { var } => (0.0, var),
    }
}

/// ∇θ log ν(x₀) for an AR(1) state with θ = (φ, log σ, …), accumulated into `grad[0..2]`.
pub(crate) fn ar1_grad_log_initial(law: InitialLaw, phi: f64, sigma: f64, x0: f64, g: &mut [f64]) {
    if let InitialLaw::Stationary = law {
        let (v, dphi, du) = ar1_initial_variance(phi, sigma);
        let dv = (x0 * x0 - v) / (2.0 * v * v);
        g[0] += dv * dphi;
        g[1] += dv * du;
    }
}

pub(crate) fn check_law(law: InitialLaw) -> Result<InitialLaw, Error> {
    if let InitialLaw::Normal { var } = law {
        if !(var > 0.0 && var.is_finite()) {
            return Err(Error::setting(
                "initial_var",
                "must be a positive finite number",
            ));
        }
    }
    Ok(law)
}

/// η[0..5] = (φ, σ, τ, ln σ², ln τ²) from θ = (φ, log σ, log τ) (`lgssm`, `sv`).
pub(crate) fn ar1_natural(theta: &[f64], eta: &mut [f64]) {
    eta[0] = theta[0];
    eta[1] = math::exp(theta[1]);
    eta[2] = math::exp(theta[2]);
    eta[3] = 2.0 * theta[1];
    eta[4] = 2.0 * theta[2];
}

/// The [`StateSpaceModel`] hooks that `lgssm` and `sv` share (an AR(1) state
/// xₜ ~ N(φxₜ₋₁, σ²) with x₀ ~ ν, θ = (φ, log σ, log τ), reported (φ, σ, τ)), written once
/// for both impls; the implementing type has the fields `initial: InitialLaw` and
/// `prior: ScalePrior`, and its `natural` starts with [`ar1_natural`].
macro_rules! ar1_state_hooks {
    () => {
        fn dim(&self) -> usize {
            3
        }
        fn param_names(&self) -> Vec<String> {
            alloc::vec!["phi".into(), "log_sigma".into(), "log_tau".into()]
        }
        fn unconstrained(&self, eta: &[f64]) -> Option<Vec<f64>> {
            if eta.len() < 3 || !(eta[1] > 0.0 && eta[2] > 0.0) || !eta[0].is_finite() {
                return None;
            }
            Some($crate::ssm::Lgssm::theta(eta[0], eta[1], eta[2]).to_vec())
        }
        fn reported_names(&self) -> Vec<String> {
            $crate::ssm::phi_sigma_tau_names()
        }
        fn to_reported(&self, theta: &[f64], out: &mut [f64]) {
            $crate::ssm::phi_sigma_tau(theta, out)
        }
        fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>> {
            self.unconstrained(reported)
        }
        fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
            self.prior.log_density_grad(theta, grad)
        }
        fn sample_initial(
            &self,
            eta: &[f64],
            rng: &mut $crate::rng::ChainRng,
        ) -> $crate::ssm::State {
            let (m, v) = $crate::ssm::lgssm::ar1_initial(self.initial, eta[0], eta[1]);
            $crate::ssm::state($crate::dist::normal(rng, m, $crate::math::sqrt(v)))
        }
        fn log_initial(&self, eta: &[f64], x: &$crate::ssm::State) -> f64 {
            let (m, v) = $crate::ssm::lgssm::ar1_initial(self.initial, eta[0], eta[1]);
            $crate::ssm::ln_normal(x[0], m, v)
        }
        fn grad_log_initial(&self, eta: &[f64], x: &$crate::ssm::State, grad: &mut [f64]) {
            $crate::ssm::lgssm::ar1_grad_log_initial(self.initial, eta[0], eta[1], x[0], grad);
        }
        fn sample_transition(
            &self,
            eta: &[f64],
            prev: &$crate::ssm::State,
            rng: &mut $crate::rng::ChainRng,
        ) -> $crate::ssm::State {
            $crate::ssm::state($crate::dist::normal(rng, eta[0] * prev[0], eta[1]))
        }
        fn log_transition(
            &self,
            eta: &[f64],
            prev: &$crate::ssm::State,
            x: &$crate::ssm::State,
        ) -> f64 {
            $crate::ssm::ln_normal_lv(x[0], eta[0] * prev[0], eta[1] * eta[1], eta[3])
        }
    };
}
pub(crate) use ar1_state_hooks;

/// ∂φ and ∂log σ of log N(xₜ; φxₜ₋₁, σ²), accumulated into `grad[0..2]`.
pub(crate) fn ar1_grad_log_transition(eta: &[f64], prev: &State, x: &State, grad: &mut [f64]) {
    let (phi, s2) = (eta[0], eta[1] * eta[1]);
    let e = x[0] - phi * prev[0];
    grad[0] += e * prev[0] / s2;
    grad[1] += e * e / s2 - 1.0;
}

/// The linear Gaussian SSM, θ = (φ, log σ, log τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lgssm {
    /// Law of x₀ (one step before y₁).
    pub initial: InitialLaw,
    /// Prior hyperparameters.
    pub prior: ScalePrior,
}

impl Default for Lgssm {
    /// Stationary initial law and the thesis prior.
    fn default() -> Self {
        Lgssm {
            initial: InitialLaw::Stationary,
            prior: ScalePrior::default(),
        }
    }
}

impl Lgssm {
    /// A model with the given initial law and prior (a `Normal` law needs var > 0).
    pub fn new(initial: InitialLaw, prior: ScalePrior) -> Result<Self, Error> {
        Ok(Lgssm {
            initial: check_law(initial)?,
            prior,
        })
    }

    /// θ = (φ, log σ, log τ) for natural (φ, σ, τ).
    pub fn theta(phi: f64, sigma: f64, tau: f64) -> [f64; 3] {
        [phi, math::ln(sigma), math::ln(tau)]
    }

    /// (m₀, P₀) of the initial law at natural parameters η.
    pub fn initial_moments(&self, eta: &[f64]) -> (f64, f64) {
        ar1_initial(self.initial, eta[0], eta[1])
    }
}

impl StateSpaceModel for Lgssm {
    fn name(&self) -> &'static str {
        "lgssm"
    }
    ar1_state_hooks!();
    fn natural_dim(&self) -> usize {
        6
    }
    fn natural(&self, theta: &[f64], eta: &mut [f64]) {
        ar1_natural(theta, eta);
        eta[5] = math::ln(eta[1] * eta[1] + eta[2] * eta[2]);
    }
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64 {
        ln_normal_lv(y, x[0], eta[2] * eta[2], eta[4])
    }
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]) {
        ar1_grad_log_transition(eta, prev, x, grad);
        let r = y - x[0];
        grad[2] += r * r / (eta[2] * eta[2]) - 1.0;
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
        let (phi, s2, t2) = (eta[0], eta[1] * eta[1], eta[2] * eta[2]);
        let pred = phi * prev[0];
        let tot = s2 + t2;
        let mean = (t2 * pred + s2 * y) / tot;
        let var = s2 * t2 / tot;
        Some(OptimalDraw {
            state: state(normal(rng, mean, math::sqrt(var))),
            log_weight: ln_normal_lv(y, pred, tot, eta[5]),
        })
    }
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>) {
        simulate_with(self, theta, t_len, rng, |eta, x, r| normal(r, x[0], eta[2]))
    }
}
