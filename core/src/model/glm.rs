//! Generalised linear models: ℓᵢ(θ) = f(yᵢ, ηᵢ), ηᵢ = xᵢᵀθ.
//!
//! # Formula
//! ∇ℓᵢ = f′(yᵢ, ηᵢ) xᵢ,  ∇²ℓᵢ = f″(yᵢ, ηᵢ) xᵢxᵢᵀ.
//! One family trait gives `logistic`, `poisson`, `linear` (known noise) and `robust` (Student-t).

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
}
