//! A dense multivariate Gaussian target built from tall data: the unknown mean μ of
//! observations yᵢ ~ N(μ, Σ) with Σ known and dense. The posterior is Gaussian with a closed form
//! ([`GaussianMean::posterior`]), strongly correlated when ρ is large, and every estimator can
//! subsample it.
//!
//! # Formula
//! Σ = sd² R,  R = equicorrelation (Rⱼₖ = ρ, j ≠ k) or AR(1) (Rⱼₖ = ρ^|j−k|);  P = Σ⁻¹.
//! ℓᵢ(μ) = −½ (yᵢ − μ)ᵀ P (yᵢ − μ),  ∇ℓᵢ = P (yᵢ − μ),  ∇²ℓᵢ = −P.
//! With prior N(0, s² I): posterior precision Λ = n P + I/s², mean Λ⁻¹ P Σᵢ yᵢ
//! (a flat prior drops I/s²: mean ȳ, covariance Σ/n).
//!
//! The data are the table's feature columns (every column except the response when no feature
//! list is given); the parameters are named after those columns.

use super::prior::Prior;
use super::DataModel;
use crate::error::Error;
use crate::linalg::{self, Cholesky};
use crate::schema::{ParamKind, ParamSpec};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The correlation structure of Σ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Correlation {
    /// Rⱼₖ = ρ for j ≠ k (needs −1/(d−1) < ρ < 1).
    Equi,
    /// Rⱼₖ = ρ^|j−k| (needs |ρ| < 1).
    Ar1,
}

/// Default correlation ρ (`rho`).
pub const DEFAULT_RHO: f64 = 0.5;
/// Default marginal standard deviation (`sd`).
pub const DEFAULT_SD: f64 = 1.0;

/// The `gaussian` model's `correlation` setting (also read by its simulator).
pub const P_CORRELATION: ParamSpec = ParamSpec {
    key: "correlation",
    description: "Correlation structure: equi (all pairs ρ) or ar1 (ρ^|j−k|)",
    kind: ParamKind::Choice(&["equi", "ar1"]),
};

/// The `gaussian` model's `rho` setting (also read by its simulator).
pub const P_RHO: ParamSpec = ParamSpec {
    key: "rho",
    description: "Correlation ρ of the observations",
    kind: ParamKind::RealOpen {
        default: DEFAULT_RHO,
        min: -1.0,
        max: 1.0,
        min_open: true,
        max_open: true,
    },
};

/// The `gaussian` model's `sd` setting (also read by its simulator).
pub const P_SD: ParamSpec = ParamSpec::positive(
    "sd",
    "Marginal standard deviation of each coordinate",
    DEFAULT_SD,
);

/// The correlation structure named by `correlation` ([`P_CORRELATION`]).
pub fn correlation_from_settings(s: &crate::settings::Settings) -> Result<Correlation, Error> {
    Ok(match P_CORRELATION.choice(s)? {
        "ar1" => Correlation::Ar1,
        _ => Correlation::Equi,
    })
}

/// The covariance Σ = sd² R, row-major d × d. Errors if it is not positive definite.
pub fn covariance(d: usize, corr: Correlation, rho: f64, sd: f64) -> Result<Vec<f64>, Error> {
    if !(rho > -1.0 && rho < 1.0) {
        return Err(Error::setting(
            "rho",
            alloc::format!("{} is outside (−1, 1)", crate::settings::number(rho)),
        ));
    }
    Error::check_positive("sd", sd)?;
    let mut s = vec![0.0; d * d];
    for j in 0..d {
        for k in 0..d {
            let r = if j == k {
                1.0
            } else {
                match corr {
                    Correlation::Equi => rho,
                    Correlation::Ar1 => crate::math::pow(rho, j.abs_diff(k) as f64),
                }
            };
            s[j * d + k] = sd * sd * r;
        }
    }
    if Cholesky::new(&s, d).is_err() {
        return Err(Error::setting(
            "rho",
            alloc::format!(
                "{} does not give a positive-definite covariance for d = {d}",
                crate::settings::number(rho)
            ),
        ));
    }
    Ok(s)
}

/// The posterior of the mean of dense Gaussian observations with known covariance.
#[derive(Debug, Clone)]
pub struct GaussianMean {
    /// Observations, row-major n × d.
    pub y: Vec<f64>,
    /// Number of observations.
    pub n: usize,
    /// Dimension.
    pub d: usize,
    /// Parameter names (the data columns).
    pub names: Vec<String>,
    /// Observation covariance Σ (row-major).
    pub cov: Vec<f64>,
    /// Its inverse P.
    pub precision: Vec<f64>,
    /// Prior on μ.
    pub prior: Prior,
}

impl GaussianMean {
    /// A model over row-major observations `y` (n × d, finite) with covariance `cov`.
    pub fn new(
        y: Vec<f64>,
        d: usize,
        names: Vec<String>,
        cov: Vec<f64>,
        prior: Prior,
    ) -> Result<Self, Error> {
        if d == 0 {
            return Err(Error::data("the gaussian model needs at least one column"));
        }
        Error::check_dim("parameter names", d, names.len())?;
        let n = y.len() / d;
        if n * d != y.len() {
            return Err(Error::Dimension {
                what: "observations",
                expected: n * d,
                got: y.len(),
            });
        }
        if n == 0 {
            return Err(Error::data("the data set has no rows"));
        }
        if let Some(p) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidData {
                row: Some(p / d + 1),
                column: names.get(p % d).cloned(),
                msg: String::from("value is not finite"),
            });
        }
        let precision = Cholesky::new(&cov, d)?.inverse();
        Ok(GaussianMean {
            y,
            n,
            d,
            names,
            cov,
            precision,
            prior,
        })
    }

    /// The exact posterior (mean, covariance row-major d × d).
    pub fn posterior(&self) -> Result<(Vec<f64>, Vec<f64>), Error> {
        let d = self.d;
        let mut sum = vec![0.0; d];
        for i in 0..self.n {
            for k in 0..d {
                sum[k] += self.y[i * d + k];
            }
        }
        let mut lam = vec![0.0; d * d];
        let nf = self.n as f64;
        for k in 0..d * d {
            lam[k] = nf * self.precision[k];
        }
        let pp = self.prior.precision();
        for k in 0..d {
            lam[k * d + k] += pp;
        }
        let mut b = vec![0.0; d];
        linalg::matvec(&self.precision, d, &sum, &mut b);
        let chol = Cholesky::new(&lam, d)?;
        chol.solve(&mut b);
        Ok((b, chol.inverse()))
    }

    /// ℓᵢ(θ) = −½ (yᵢ − θ)ᵀ P (yᵢ − θ), adding ∇ℓᵢ = P (yᵢ − θ) into `grad` when given.
    fn log_lik_and_grad(&self, theta: &[f64], i: usize, mut grad: Option<&mut [f64]>) -> f64 {
        let d = self.d;
        let yi = &self.y[i * d..(i + 1) * d];
        let mut q = 0.0;
        for a in 0..d {
            let ra = yi[a] - theta[a];
            let pa = &self.precision[a * d..(a + 1) * d];
            let mut s = 0.0;
            for b in 0..d {
                s += pa[b] * (yi[b] - theta[b]);
            }
            if let Some(g) = grad.as_deref_mut() {
                g[a] += s;
            }
            q += ra * s;
        }
        -0.5 * q
    }
}

impl DataModel for GaussianMean {
    fn dim(&self) -> usize {
        self.d
    }
    fn n(&self) -> usize {
        self.n
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.prior.log_density_grad(theta, grad)
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.prior.log_density(theta)
    }
    fn log_prior_hess(&self, _theta: &[f64], hess: &mut [f64]) {
        let d = self.d;
        let p = self.prior.precision();
        for k in 0..d {
            hess[k * d + k] -= p;
        }
    }
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        self.log_lik_and_grad(theta, i, None)
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        self.log_lik_and_grad(theta, i, Some(grad))
    }
    fn log_lik_hess(&self, _theta: &[f64], _i: usize, hess: &mut [f64]) {
        for (h, p) in hess.iter_mut().zip(&self.precision) {
            *h -= p;
        }
    }
}
