//! Generalised linear models: ℓᵢ(θ) = f(yᵢ, ηᵢ), ηᵢ = xᵢᵀθ.
//!
//! # Formula
//! ∇ℓᵢ = f′(yᵢ, ηᵢ) xᵢ,  ∇²ℓᵢ = f″(yᵢ, ηᵢ) xᵢxᵢᵀ.
//! One family trait gives `logistic` ([`Logistic`]), `poisson` ([`Poisson`]), `linear` with known
//! noise ([`GaussianNoise`]) and `robust` ([`StudentT`]).

use super::prior::Prior;
use super::{DataModel, GlmView};
use crate::data::Design;
use crate::math;
use alloc::string::String;
use alloc::vec::Vec;

/// The per-datum log-likelihood as a function of the linear predictor η.
pub trait GlmFamily: Send + Sync {
    /// Model name (`logistic`, ...).
    fn name(&self) -> &'static str;
    /// f(y, η).
    fn value(&self, y: f64, eta: f64) -> f64;
    /// (f, ∂f/∂η).
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64);
    /// ∂²f/∂η².
    fn d2(&self, y: f64, eta: f64) -> f64;
    /// ∂³f/∂η³ (bounds for SMH-2 and Taylor remainders).
    fn d3(&self, y: f64, eta: f64) -> f64;
    /// sup over y, η of |∂²f/∂η²|, when finite (SMH-1 bounds); `None` when unbounded.
    fn d2_bound(&self) -> Option<f64> {
        None
    }
    /// sup over y, η of |∂³f/∂η³|, when finite (SMH-2 bounds); `None` when unbounded.
    fn d3_bound(&self) -> Option<f64> {
        None
    }
}

/// Bernoulli with logit link: f = y η − log(1 + e^η), y ∈ {0, 1}.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logistic;

impl GlmFamily for Logistic {
    fn name(&self) -> &'static str {
        "logistic"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - math::softplus(eta)
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        (y * eta - math::softplus(eta), y - math::sigmoid(eta))
    }
    #[inline]
    fn d2(&self, _y: f64, eta: f64) -> f64 {
        let s = math::sigmoid(eta);
        -s * (1.0 - s)
    }
    #[inline]
    fn d3(&self, _y: f64, eta: f64) -> f64 {
        let s = math::sigmoid(eta);
        -s * (1.0 - s) * (1.0 - 2.0 * s)
    }
    fn d2_bound(&self) -> Option<f64> {
        Some(0.25)
    }
    fn d3_bound(&self) -> Option<f64> {
        // sup |σ(1−σ)(1−2σ)| = 1/(6√3), at σ = ½ ± √3/6.
        Some(1.0 / (6.0 * math::sqrt(3.0)))
    }
}

/// A GLM posterior: family f, design, prior.
pub struct Glm<F> {
    /// Data.
    pub design: Design,
    /// The likelihood family.
    pub family: F,
    /// Prior on the coefficients.
    pub prior: Prior,
}

impl<F: GlmFamily> Glm<F> {
    /// A GLM over `design`.
    pub fn new(design: Design, family: F, prior: Prior) -> Self {
        Glm {
            design,
            family,
            prior,
        }
    }
    #[inline]
    fn eta(&self, theta: &[f64], i: usize) -> f64 {
        let row = self.design.row(i);
        let mut s = 0.0;
        for k in 0..row.len() {
            s += row[k] * theta[k];
        }
        s
    }
}

impl<F: GlmFamily> DataModel for Glm<F> {
    fn dim(&self) -> usize {
        self.design.d
    }
    fn n(&self) -> usize {
        self.design.n
    }
    fn param_names(&self) -> Vec<String> {
        self.design.names.clone()
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }
    fn log_prior_hess(&self, theta: &[f64], hess: &mut [f64]) {
        let d = theta.len();
        let p = self.prior.precision();
        for k in 0..d {
            hess[k * d + k] -= p;
        }
    }
    #[inline]
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        self.family.value(self.design.y[i], self.eta(theta, i))
    }
    #[inline]
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let (v, d1) = self.family.value_d1(self.design.y[i], self.eta(theta, i));
        let row = self.design.row(i);
        for k in 0..row.len() {
            grad[k] += d1 * row[k];
        }
        v
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d2 = self.family.d2(self.design.y[i], self.eta(theta, i));
        let row = self.design.row(i);
        let d = row.len();
        for a in 0..d {
            let ra = d2 * row[a];
            for b in 0..d {
                hess[a * d + b] += ra * row[b];
            }
        }
    }
    fn log_lik_sum(&self, theta: &[f64], idx: &[usize]) -> f64 {
        idx.iter().map(|&i| self.log_lik(theta, i)).sum()
    }
    fn log_lik_grad_all(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        (0..self.design.n)
            .map(|i| self.log_lik_grad(theta, i, grad))
            .sum()
    }
    fn log_lik_all(&self, theta: &[f64]) -> f64 {
        (0..self.design.n).map(|i| self.log_lik(theta, i)).sum()
    }
    fn as_glm(&self) -> Option<&dyn GlmView> {
        Some(self)
    }
}

impl<F: GlmFamily> GlmView for Glm<F> {
    fn design(&self) -> &Design {
        &self.design
    }
    fn family(&self) -> &dyn GlmFamily {
        &self.family
    }
}

/// Gaussian noise with known standard deviation σ: f = −(y − η)²/(2σ²) (constant dropped).
#[derive(Debug, Clone, Copy)]
pub struct GaussianNoise {
    /// Noise standard deviation σ (> 0).
    pub sd: f64,
}

impl GlmFamily for GaussianNoise {
    fn name(&self) -> &'static str {
        "linear"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.sd;
        -0.5 * r * r
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let r = y - eta;
        let p = 1.0 / (self.sd * self.sd);
        (-0.5 * r * r * p, r * p)
    }
    #[inline]
    fn d2(&self, _y: f64, _eta: f64) -> f64 {
        -1.0 / (self.sd * self.sd)
    }
    #[inline]
    fn d3(&self, _y: f64, _eta: f64) -> f64 {
        0.0
    }
    fn d2_bound(&self) -> Option<f64> {
        Some(1.0 / (self.sd * self.sd))
    }
    fn d3_bound(&self) -> Option<f64> {
        Some(0.0)
    }
}

/// Poisson counts with log link: f = y η − e^η (the constant −log y! is dropped), y ∈ {0, 1, …}.
///
/// # Formula
/// f′ = y − e^η,  f″ = −e^η,  f‴ = −e^η.
#[derive(Debug, Clone, Copy, Default)]
pub struct Poisson;

impl GlmFamily for Poisson {
    fn name(&self) -> &'static str {
        "poisson"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - math::exp(eta)
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let m = math::exp(eta);
        (y * eta - m, y - m)
    }
    #[inline]
    fn d2(&self, _y: f64, eta: f64) -> f64 {
        -math::exp(eta)
    }
    #[inline]
    fn d3(&self, _y: f64, eta: f64) -> f64 {
        -math::exp(eta)
    }
}

/// Student-t errors with ν degrees of freedom and known scale s (robust regression):
/// f = −((ν + 1)/2) · log(1 + r²/ν), r = (y − η)/s (constants dropped).
///
/// # Formula
/// With g(r) = ((ν+1)/2) log(1 + r²/ν):
/// g′(r) = (ν+1) r / (ν + r²),  g″(r) = (ν+1)(ν − r²)/(ν + r²)²,
/// g‴(r) = 2(ν+1) r (r² − 3ν)/(ν + r²)³;
/// f′ = g′(r)/s,  f″ = −g″(r)/s²,  f‴ = g‴(r)/s³.
/// sup|f″| = (ν+1)/(ν s²) (at r = 0), sup|f‴| = (ν+1)(3 + 2√2)/(4 ν^{3/2} s³).
///
/// ## References
/// Bierkens et al. (2018), *Scalable Metropolis–Hastings for exact Bayesian inference with
/// large datasets* (robust linear regression with ν = 4, unit scale).
#[derive(Debug, Clone, Copy)]
pub struct StudentT {
    /// Degrees of freedom ν (> 0).
    pub nu: f64,
    /// Scale s (> 0).
    pub scale: f64,
}

impl Default for StudentT {
    fn default() -> Self {
        StudentT {
            nu: 4.0,
            scale: 1.0,
        }
    }
}

impl GlmFamily for StudentT {
    fn name(&self) -> &'static str {
        "robust"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        -0.5 * (self.nu + 1.0) * math::ln_1p(r * r / self.nu)
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let r = (y - eta) / self.scale;
        let v = -0.5 * (self.nu + 1.0) * math::ln_1p(r * r / self.nu);
        (v, (self.nu + 1.0) * r / ((self.nu + r * r) * self.scale))
    }
    #[inline]
    fn d2(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        let q = self.nu + r * r;
        -(self.nu + 1.0) * (self.nu - r * r) / (q * q * self.scale * self.scale)
    }
    #[inline]
    fn d3(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        let q = self.nu + r * r;
        let s = self.scale;
        2.0 * (self.nu + 1.0) * r * (r * r - 3.0 * self.nu) / (q * q * q * s * s * s)
    }
    fn d2_bound(&self) -> Option<f64> {
        Some((self.nu + 1.0) / (self.nu * self.scale * self.scale))
    }
    fn d3_bound(&self) -> Option<f64> {
        let s = self.scale;
        Some(
            (self.nu + 1.0) * (3.0 + 2.0 * math::sqrt(2.0))
                / (4.0 * math::pow(self.nu, 1.5) * s * s * s),
        )
    }
}
