//! The two-parameter Gaussian mixture of Welling & Teh (2011), a bimodal test posterior.
//!
//! # Formula
//! xᵢ ~ ½ N(θ₁, σₓ²) + ½ N(θ₁ + θ₂, σₓ²),  θ₁ ~ N(0, σ₁²),  θ₂ ~ N(0, σ₂²),
//! with σ₁² = 10, σ₂² = 1, σₓ² = 2 by default. With a temperature K ≥ 1 (setting `temperature`)
//! the likelihood is tempered, ℓᵢ = (1/K) log p(xᵢ | θ), the prior is not. The minibatch
//! samplers (`mh-minibatch`, `austere-mh`, `mh-sublhd`) have their own `temperature`; they
//! refuse a model that is already tempered (see `DataModel::likelihood_temperature`), so K is
//! applied once.
//! With aᵢ = −(xᵢ − θ₁)²/(2σₓ²), bᵢ = −(xᵢ − θ₁ − θ₂)²/(2σₓ²) and w = e^a/(e^a + e^b):
//! ℓᵢ = (1/K)[log(½e^a + ½e^b) − ½ log(2πσₓ²)],
//! ∇ℓᵢ = (1/K)[w ∇a + (1 − w) ∇b],
//! ∇²ℓᵢ = (1/K)[w ∇²a + (1 − w) ∇²b + w(1 − w)(∇a − ∇b)(∇a − ∇b)ᵀ].
//! The posterior has modes near (0, 1) and (1, −1) for data simulated at θ = (0, 1).
//!
//! ## References
//! M. Welling and Y. W. Teh (2011), *Bayesian learning via stochastic gradient Langevin
//! dynamics*, ICML, §5.1. D. Seita et al. (2017), *An efficient minibatch acceptance test for
//! Metropolis–Hastings*, UAI (N = 10⁶ with temperature K = 10⁴).

use super::DataModel;
use crate::error::Error;
use crate::math;
use crate::schema::{ParamKind, ParamSpec};
use alloc::string::String;
use alloc::vec::Vec;

/// Default prior variance of θ₁ (`prior_var_1`).
pub const DEFAULT_PRIOR_VAR_1: f64 = 10.0;
/// Default prior variance of θ₂ (`prior_var_2`).
pub const DEFAULT_PRIOR_VAR_2: f64 = 1.0;
/// Default component variance σₓ² (`noise_var`).
pub const DEFAULT_NOISE_VAR: f64 = 2.0;

/// The `gmm` model's `prior_var_1` setting.
pub const P_PRIOR_VAR_1: ParamSpec = ParamSpec::positive(
    "prior_var_1",
    "Prior variance of theta1",
    DEFAULT_PRIOR_VAR_1,
);

/// The `gmm` model's `prior_var_2` setting.
pub const P_PRIOR_VAR_2: ParamSpec = ParamSpec::positive(
    "prior_var_2",
    "Prior variance of theta2",
    DEFAULT_PRIOR_VAR_2,
);

/// The `gmm` model's `noise_var` setting (also read by the `gmm` simulator).
pub const P_NOISE_VAR: ParamSpec = ParamSpec::positive(
    "noise_var",
    "Variance σₓ² of each mixture component",
    DEFAULT_NOISE_VAR,
);

/// The `gmm` model's `temperature` setting.
pub const P_TEMPERATURE: ParamSpec = ParamSpec {
    key: "temperature",
    description: "Likelihood temperature K ≥ 1 (log-likelihood divided by K)",
    kind: ParamKind::Real {
        default: 1.0,
        min: 1.0,
        max: f64::INFINITY,
    },
};
/// The parameter the data are simulated at.
pub const TRUE_THETA: [f64; 2] = [0.0, 1.0];

/// The Welling–Teh mixture posterior over θ = (θ₁, θ₂).
#[derive(Debug, Clone)]
pub struct Gmm {
    /// Observations xᵢ.
    pub x: Vec<f64>,
    /// Prior variances (σ₁², σ₂²).
    pub prior_var: [f64; 2],
    /// Component variance σₓ².
    pub noise_var: f64,
    /// Likelihood temperature K ≥ 1.
    pub temperature: f64,
    /// −½ log(2πσₓ²), cached.
    log_norm: f64,
}

impl Gmm {
    /// A mixture over data `x` (non-empty, finite) with the given variances and temperature.
    pub fn new(
        x: Vec<f64>,
        prior_var: [f64; 2],
        noise_var: f64,
        temperature: f64,
    ) -> Result<Self, Error> {
        if x.is_empty() {
            return Err(Error::data("the data set has no rows"));
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidData {
                row: Some(i + 1),
                column: None,
                msg: String::from("value is not finite"),
            });
        }
        Error::check_positive("prior_var_1", prior_var[0])?;
        Error::check_positive("prior_var_2", prior_var[1])?;
        Error::check_positive("noise_var", noise_var)?;
        if !(temperature >= 1.0 && temperature.is_finite()) {
            return Err(Error::setting(
                "temperature",
                alloc::format!(
                    "{} must be a finite number ≥ 1",
                    crate::settings::number(temperature)
                ),
            ));
        }
        let log_norm = -0.5 * math::ln(2.0 * core::f64::consts::PI * noise_var);
        Ok(Gmm {
            x,
            prior_var,
            noise_var,
            temperature,
            log_norm,
        })
    }

    /// The default Welling–Teh constants (σ₁² = 10, σ₂² = 1, σₓ² = 2, K = 1).
    pub fn welling_teh(x: Vec<f64>) -> Result<Self, Error> {
        Gmm::new(
            x,
            [DEFAULT_PRIOR_VAR_1, DEFAULT_PRIOR_VAR_2],
            DEFAULT_NOISE_VAR,
            1.0,
        )
    }

    /// (a, b, ℓ (untempered), w) at datum i.
    #[inline]
    fn parts(&self, theta: &[f64], i: usize) -> (f64, f64, f64, f64) {
        let x = self.x[i];
        let ra = x - theta[0];
        let rb = ra - theta[1];
        let h = 0.5 / self.noise_var;
        let a = -h * ra * ra;
        let b = -h * rb * rb;
        let l = math::log_add_exp(a, b) - core::f64::consts::LN_2 + self.log_norm;
        // w = e^a/(e^a + e^b) = σ(a − b)
        let w = math::sigmoid(a - b);
        (ra, rb, l, w)
    }
}

impl DataModel for Gmm {
    fn dim(&self) -> usize {
        2
    }
    fn n(&self) -> usize {
        self.x.len()
    }
    fn param_names(&self) -> Vec<String> {
        alloc::vec![String::from("theta1"), String::from("theta2")]
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        grad[0] -= theta[0] / self.prior_var[0];
        grad[1] -= theta[1] / self.prior_var[1];
        self.log_prior(theta)
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        -0.5 * (theta[0] * theta[0] / self.prior_var[0] + theta[1] * theta[1] / self.prior_var[1])
    }
    fn log_prior_hess(&self, _theta: &[f64], hess: &mut [f64]) {
        hess[0] -= 1.0 / self.prior_var[0];
        hess[3] -= 1.0 / self.prior_var[1];
    }
    #[inline]
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        self.parts(theta, i).2 / self.temperature
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let (ra, rb, l, w) = self.parts(theta, i);
        let k = 1.0 / self.temperature;
        let p = 1.0 / self.noise_var;
        // ∇a = (ra/σ², 0), ∇b = (rb/σ², rb/σ²)
        grad[0] += k * p * (w * ra + (1.0 - w) * rb);
        grad[1] += k * p * (1.0 - w) * rb;
        k * l
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let (ra, rb, _, w) = self.parts(theta, i);
        let k = 1.0 / self.temperature;
        let p = 1.0 / self.noise_var;
        // ∇a − ∇b = ((ra − rb)/σ², −rb/σ²)
        let g0 = p * (ra - rb);
        let g1 = -p * rb;
        let ww = w * (1.0 - w);
        hess[0] += k * (-p + ww * g0 * g0);
        hess[1] += k * (-(1.0 - w) * p + ww * g0 * g1);
        hess[2] += k * (-(1.0 - w) * p + ww * g0 * g1);
        hess[3] += k * (-(1.0 - w) * p + ww * g1 * g1);
    }
    /// (0.5, 0), the start used by Seita et al.'s code.
    fn initial_point(&self) -> Vec<f64> {
        alloc::vec![0.5, 0.0]
    }
    fn likelihood_temperature(&self) -> f64 {
        self.temperature
    }
}
