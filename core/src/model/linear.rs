//! Linear regression with Gaussian noise: known noise (a [`Glm`] with [`GaussianNoise`], which has
//! a closed-form posterior) or unknown precision τ with a Gamma prior ([`LinearUnknownNoise`]).
//!
//! # Formula
//! Known noise σ:  ℓᵢ(β) = −(yᵢ − xᵢᵀβ)²/(2σ²).
//! With prior N(0, s² I) the posterior is N(m, V), V = (XᵀX/σ² + I/s²)⁻¹, m = V Xᵀy/σ²
//! (a flat prior drops I/s²).
//!
//! Unknown noise, θ = (β, u) with u = log τ:
//! ℓᵢ(θ) = ½ u − ½ eᵘ (yᵢ − xᵢᵀβ)²,
//! log p(θ) = log p(β) + a u − b eᵘ   (Gamma(a, b) on τ, rate b, log-Jacobian u included).

use super::glm::{GaussianNoise, Glm};
use super::prior::Prior;
use super::DataModel;
use crate::data::Design;
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::math;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// Linear regression with known noise standard deviation.
pub type Linear = Glm<GaussianNoise>;

/// Default noise standard deviation (`noise_sd`).
pub const DEFAULT_NOISE_SD: f64 = 1.0;
/// Default Gamma prior shape on the noise precision (`noise_prior_shape`).
pub const DEFAULT_NOISE_PRIOR_SHAPE: f64 = 1.0;
/// Default Gamma prior rate on the noise precision (`noise_prior_rate`).
pub const DEFAULT_NOISE_PRIOR_RATE: f64 = 1.0;

/// The exact posterior of linear regression with known noise: (mean, covariance), the
/// covariance row-major d × d.
///
/// # Formula
/// V = (XᵀX/σ² + I/s²)⁻¹,  m = V Xᵀy/σ²  (flat prior: no I/s² term).
///
/// Errors: `noise_sd` not positive and finite; a posterior precision that is not positive
/// definite (flat prior with collinear columns or fewer rows than columns).
pub fn conjugate_posterior(
    design: &Design,
    noise_sd: f64,
    prior: &Prior,
) -> Result<(Vec<f64>, Vec<f64>), Error> {
    if !(noise_sd > 0.0 && noise_sd.is_finite()) {
        return Err(Error::setting(
            "noise_sd",
            alloc::format!(
                "{} is not a positive finite number",
                crate::settings::number(noise_sd)
            ),
        ));
    }
    let d = design.d;
    let p = 1.0 / (noise_sd * noise_sd);
    let mut prec = vec![0.0; d * d];
    let mut b = vec![0.0; d];
    for i in 0..design.n {
        let row = design.row(i);
        let y = design.y[i];
        for a in 0..d {
            b[a] += p * row[a] * y;
            for c in 0..=a {
                prec[a * d + c] += p * row[a] * row[c];
            }
        }
    }
    let pp = prior.precision();
    for a in 0..d {
        prec[a * d + a] += pp;
        for c in 0..a {
            prec[c * d + a] = prec[a * d + c];
        }
    }
    let chol = Cholesky::new(&prec, d)?;
    chol.solve(&mut b);
    Ok((b, chol.inverse()))
}

/// Linear regression with unknown noise precision τ ~ Gamma(shape a, rate b); the parameter
/// `log_tau` = log τ comes last.
#[derive(Debug, Clone)]
pub struct LinearUnknownNoise {
    /// Data.
    pub design: Design,
    /// Prior on the coefficients β.
    pub prior: Prior,
    /// Gamma shape a (> 0).
    pub shape: f64,
    /// Gamma rate b (> 0).
    pub rate: f64,
}

impl LinearUnknownNoise {
    /// A model over `design`; `shape` and `rate` must be positive and finite.
    pub fn new(design: Design, prior: Prior, shape: f64, rate: f64) -> Result<Self, Error> {
        if !(shape > 0.0 && shape.is_finite()) {
            return Err(Error::setting(
                "noise_prior_shape",
                alloc::format!(
                    "{} is not a positive finite number",
                    crate::settings::number(shape)
                ),
            ));
        }
        if !(rate > 0.0 && rate.is_finite()) {
            return Err(Error::setting(
                "noise_prior_rate",
                alloc::format!(
                    "{} is not a positive finite number",
                    crate::settings::number(rate)
                ),
            ));
        }
        Ok(LinearUnknownNoise {
            design,
            prior,
            shape,
            rate,
        })
    }

    #[inline]
    fn resid(&self, theta: &[f64], i: usize) -> f64 {
        let row = self.design.row(i);
        let mut s = 0.0;
        for k in 0..row.len() {
            s += row[k] * theta[k];
        }
        self.design.y[i] - s
    }
}

impl DataModel for LinearUnknownNoise {
    fn dim(&self) -> usize {
        self.design.d + 1
    }
    fn n(&self) -> usize {
        self.design.n
    }
    fn param_names(&self) -> Vec<String> {
        let mut v = self.design.names.clone();
        v.push(String::from("log_tau"));
        v
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let d = self.design.d;
        let u = theta[d];
        let e = math::exp(u);
        grad[d] += self.shape - self.rate * e;
        self.prior.log_density_grad(&theta[..d], &mut grad[..d]) + self.shape * u - self.rate * e
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        let d = self.design.d;
        let u = theta[d];
        self.prior.log_density(&theta[..d]) + self.shape * u - self.rate * math::exp(u)
    }
    fn log_prior_hess(&self, theta: &[f64], hess: &mut [f64]) {
        let d = self.design.d;
        let m = d + 1;
        let p = self.prior.precision();
        for k in 0..d {
            hess[k * m + k] -= p;
        }
        hess[d * m + d] -= self.rate * math::exp(theta[d]);
    }
    #[inline]
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        let u = theta[self.design.d];
        let r = self.resid(theta, i);
        0.5 * u - 0.5 * math::exp(u) * r * r
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let d = self.design.d;
        let u = theta[d];
        let tau = math::exp(u);
        let r = self.resid(theta, i);
        let row = self.design.row(i);
        for k in 0..d {
            grad[k] += tau * r * row[k];
        }
        let half_tr2 = 0.5 * tau * r * r;
        grad[d] += 0.5 - half_tr2;
        0.5 * u - half_tr2
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d = self.design.d;
        let m = d + 1;
        let tau = math::exp(theta[d]);
        let r = self.resid(theta, i);
        let row = self.design.row(i);
        for a in 0..d {
            for b in 0..d {
                hess[a * m + b] -= tau * row[a] * row[b];
            }
            hess[a * m + d] += tau * r * row[a];
            hess[d * m + a] += tau * r * row[a];
        }
        hess[d * m + d] -= 0.5 * tau * r * r;
    }
    /// β = 0 and τ = 1/mean(yᵢ²) (the precision given β = 0), deterministic.
    fn initial_point(&self) -> Vec<f64> {
        let d = self.design.d;
        let mut v = vec![0.0; d + 1];
        if self.design.n > 0 {
            let ms = self.design.y.iter().map(|y| y * y).sum::<f64>() / self.design.n as f64;
            if ms > 0.0 && ms.is_finite() {
                v[d] = -math::ln(ms);
            }
        }
        v
    }
}
