//! The 1-d linear Gaussian state-space model (Putcha 2024, §3.5.1 and App. A.1.1).
//!
//! # Formula
//! Xₜ = φ Xₜ₋₁ + σ Vₜ,  Yₜ = Xₜ + τ Wₜ,  Vₜ, Wₜ ~ N(0, 1) i.i.d.
//!
//! Stationary law (|φ| < 1): N(0, σ²/(1−φ²)) — the thesis prints φ²/(1−σ²), a typo.
//!
//! Parameters θ = (φ, log σ, log τ); natural η = (φ, σ, τ, ln σ², ln τ², ln(σ²+τ²)) (the logs
//! are cached for the per-particle densities).
//!
//! Priors ([`ScalePrior`]), written as densities on θ (log-Jacobians included):
//! - default (DESIGN.md): φ ~ Uniform(−1, 1), σ ~ HalfNormal(1), τ ~ HalfNormal(2)
//!   (`sigma_prior_scale`, `tau_prior_scale`); log p(φ) = −ln 2 on |φ| < 1 and −∞ outside (a
//!   proposal there is rejected; `pf-sgld` reflects φ at ±1, [`StateSpaceModel::reflect`]);
//!   on w = log σ, log p(w) = ln √(2/π) − ln s − e²ʷ/(2s²) + w. φ stays a coordinate of its
//!   own (not atanh φ): the posterior of φ is near 1 on real series, where atanh stretches it
//!   by 1/(1 − φ²) and a fixed SGLD step would mix that many times more slowly;
//! - `prior=thesis` (thesis A.1.9, Gamma with *scale* as second argument): φ | σ ~ N(0, (cσ)²)
//!   on ℝ, c = 10 (`phi_prior_scale`); σ⁻¹ ~ Gamma(a, b), τ⁻¹ ~ Gamma(a, b),
//!   a = 101, b = 1/101 (`inv_shape`, `inv_scale`); on u = log σ this is
//!   log p(u) = −a u − e⁻ᵘ/b − ln Γ(a) − a ln b. It holds σ and τ within about 10% of 1 — a
//!   strong statement about the data's units, which is why it is not the default.
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

/// The `lgssm` and `sv` priors (see the module docs), as densities on θ = (φ, log σ, log τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ScalePrior {
    /// The default (DESIGN.md): φ ~ Uniform(−1, 1), σ ~ HalfNormal(`sigma_scale`),
    /// τ ~ HalfNormal(`tau_scale`), independently (settings `sigma_prior_scale` = 1,
    /// `tau_prior_scale` = 2).
    HalfNormal {
        /// Scale of the half-normal prior on σ.
        sigma_scale: f64,
        /// Scale of the half-normal prior on τ.
        tau_scale: f64,
    },
    /// The thesis' prior (A.1.9, `prior=thesis`): φ | σ ~ N(0, (cσ)²),
    /// σ⁻¹ ~ Gamma(a, b), τ⁻¹ ~ Gamma(a, b) (Gamma with *scale* b, so the mean of σ⁻¹ is ab).
    Thesis {
        /// c in φ | σ ~ N(0, (cσ)²).
        phi_scale: f64,
        /// Shape a of the Gamma prior on σ⁻¹ and τ⁻¹.
        inv_shape: f64,
        /// Scale b of the Gamma prior on σ⁻¹ and τ⁻¹.
        inv_scale: f64,
    },
}

impl Default for ScalePrior {
    /// [`ScalePrior::DEFAULT`].
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// ln √(2/π), the log normaliser of a unit half-normal density.
const LN_SQRT_2_OVER_PI: f64 = -0.225_791_352_644_727_4;

impl ScalePrior {
    /// The default prior: φ ~ Uniform(−1, 1), σ ~ HalfNormal(1), τ ~ HalfNormal(2).
    pub const DEFAULT: ScalePrior = ScalePrior::HalfNormal {
        sigma_scale: 1.0,
        tau_scale: 2.0,
    };

    /// The thesis' prior: c = 10, a = 101, b = 1/101 (the defaults of the settings
    /// `phi_prior_scale`, `inv_shape`, `inv_scale` with `prior=thesis`).
    pub const THESIS: ScalePrior = ScalePrior::Thesis {
        phi_scale: 10.0,
        inv_shape: 101.0,
        inv_scale: 1.0 / 101.0,
    };

    /// Validated half-normal scales (finite and > 0).
    pub fn half_normal(sigma_scale: f64, tau_scale: f64) -> Result<Self, Error> {
        check_positive(&[
            ("sigma_prior_scale", sigma_scale),
            ("tau_prior_scale", tau_scale),
        ])?;
        Ok(ScalePrior::HalfNormal {
            sigma_scale,
            tau_scale,
        })
    }

    /// Validated thesis hyperparameters (all finite and > 0).
    pub fn thesis(phi_scale: f64, inv_shape: f64, inv_scale: f64) -> Result<Self, Error> {
        check_positive(&[
            ("phi_prior_scale", phi_scale),
            ("inv_shape", inv_shape),
            ("inv_scale", inv_scale),
        ])?;
        Ok(ScalePrior::Thesis {
            phi_scale,
            inv_shape,
            inv_scale,
        })
    }

    /// log p(φ, log σ, log τ) (log-Jacobians included) with its gradient accumulated into
    /// `grad[0..3]`; −∞ outside the support (|φ| ≥ 1 under the default prior).
    pub(crate) fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let (phi, u, v) = (theta[0], theta[1], theta[2]);
        match *self {
            ScalePrior::HalfNormal {
                sigma_scale,
                tau_scale,
            } => {
                // φ ~ U(−1, 1): flat inside, no gradient
                let mut lp = if math::abs(phi) < 1.0 {
                    -core::f64::consts::LN_2
                } else {
                    f64::NEG_INFINITY
                };
                // σ ~ HalfNormal(s) on w = log σ: √(2/π)/s · exp(−e²ʷ/(2s²)) · eʷ
                for (k, w, s) in [(1usize, u, sigma_scale), (2usize, v, tau_scale)] {
                    let r2 = math::exp(2.0 * w) / (s * s);
                    lp += LN_SQRT_2_OVER_PI - math::ln(s) - 0.5 * r2 + w;
                    grad[k] += 1.0 - r2;
                }
                lp
            }
            ScalePrior::Thesis {
                phi_scale,
                inv_shape,
                inv_scale,
            } => {
                let c2 = phi_scale * phi_scale;
                let e2u = math::exp(-2.0 * u);
                // φ | σ ~ N(0, c²σ²)
                let mut lp =
                    -0.5 * math::ln(c2) - u - 0.5 * phi * phi * e2u / c2 - math::LN_SQRT_2PI;
                grad[0] += -phi * e2u / c2;
                grad[1] += -1.0 + phi * phi * e2u / c2;
                // σ⁻¹, τ⁻¹ ~ Gamma(a, scale b), as densities on log σ and log τ.
                let (a, b) = (inv_shape, inv_scale);
                let norm = -math::ln_gamma(a) - a * math::ln(b);
                for (k, w) in [(1usize, u), (2usize, v)] {
                    let emw = math::exp(-w);
                    lp += -a * w - emw / b + norm;
                    grad[k] += -a + emw / b;
                }
                lp
            }
        }
    }
}

/// Error naming the first setting that is not a positive finite number.
fn check_positive(values: &[(&'static str, f64)]) -> Result<(), Error> {
    for &(k, v) in values {
        if !(v > 0.0 && v.is_finite()) {
            return Err(Error::setting(k, "must be a positive finite number"));
        }
    }
    Ok(())
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
        fn reflect(&self, theta: &mut [f64], reversed: &mut [bool]) -> bool {
            match self.prior {
                $crate::ssm::lgssm::ScalePrior::HalfNormal { .. } => {
                    let (moved, rev) = $crate::ssm::lgssm::fold_into_unit(&mut theta[0]);
                    if rev {
                        if let Some(r) = reversed.first_mut() {
                            *r = true;
                        }
                    }
                    moved
                }
                $crate::ssm::lgssm::ScalePrior::Thesis { .. } => false,
            }
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

/// Fold `x` into (−1, 1) by reflection at ±1 (period 4), returning whether it moved and
/// whether the fold reversed its direction (an odd number of reflections); a value exactly at
/// ±1 is moved inside by the smallest step. Non-finite values are left alone.
pub(crate) fn fold_into_unit(x: &mut f64) -> (bool, bool) {
    let v = *x;
    if !v.is_finite() || math::abs(v) < 1.0 {
        return (false, false);
    }
    // v + 1 mod 4 in [0, 4): [0, 2) goes up, [2, 4) comes back down
    let mut r = libm::fmod(v + 1.0, 4.0);
    if r < 0.0 {
        r += 4.0;
    }
    let reversed = r >= 2.0;
    let mut f = if reversed { 3.0 - r } else { r - 1.0 };
    if f >= 1.0 {
        f = 1.0 - f64::EPSILON;
    } else if f <= -1.0 {
        f = -1.0 + f64::EPSILON;
    }
    *x = f;
    (true, reversed)
}

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
    /// Stationary initial law and the default prior.
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
