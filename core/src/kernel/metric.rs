//! The metric: the inverse mass matrix M⁻¹ of Hamiltonian kernels, and the proposal covariance
//! shape of random-walk and Langevin kernels.
//!
//! # Formula
//! p ~ N(0, M), K(p) = ½ pᵀ M⁻¹ p, dθ/dt = M⁻¹ p. With M⁻¹ = Σ = L Lᵀ: p = L⁻ᵀ z, z ~ N(0, I).
//! A random-walk proposal is θ + ε L z (covariance ε² Σ).

use crate::dist;
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::rng::Rng;
use alloc::vec::Vec;

/// M⁻¹ = I, diag(σ²) or a dense SPD Σ.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// M⁻¹ = I.
    Identity(usize),
    /// M⁻¹ = diag(v); `v` holds variances (all > 0).
    Diag(Vec<f64>),
    /// M⁻¹ = Σ (row-major), with its Cholesky factor.
    Dense {
        /// Σ.
        cov: Vec<f64>,
        /// Σ = L Lᵀ.
        chol: Cholesky,
    },
}

impl Metric {
    /// A diagonal metric; every variance must be finite and > 0.
    pub fn diag(v: Vec<f64>) -> Result<Self, Error> {
        if v.iter().any(|x| !x.is_finite() || *x <= 0.0) {
            return Err(Error::NotPositiveDefinite);
        }
        Ok(Metric::Diag(v))
    }

    /// A dense metric from a covariance Σ (row-major d × d).
    pub fn dense(cov: Vec<f64>, d: usize) -> Result<Self, Error> {
        let chol = Cholesky::new(&cov, d)?;
        Ok(Metric::Dense { cov, chol })
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        match self {
            Metric::Identity(d) => *d,
            Metric::Diag(v) => v.len(),
            Metric::Dense { chol, .. } => chol.dim(),
        }
    }

    /// Draw p ~ N(0, M) into `p`.
    pub fn sample_momentum<R: Rng + ?Sized>(&self, rng: &mut R, p: &mut [f64]) {
        for x in p.iter_mut() {
            *x = dist::std_normal(rng);
        }
        match self {
            Metric::Identity(_) => {}
            Metric::Diag(v) => {
                for (x, s2) in p.iter_mut().zip(v) {
                    *x /= crate::math::sqrt(*s2);
                }
            }
            Metric::Dense { chol, .. } => chol.solve_lt(p),
        }
    }

    /// v = M⁻¹ p.
    pub fn velocity(&self, p: &[f64], v: &mut [f64]) {
        match self {
            Metric::Identity(_) => v.copy_from_slice(p),
            Metric::Diag(s) => {
                for i in 0..p.len() {
                    v[i] = s[i] * p[i];
                }
            }
            Metric::Dense { cov, .. } => crate::linalg::matvec(cov, p.len(), p, v),
        }
    }

    /// K(p) = ½ pᵀ M⁻¹ p.
    pub fn kinetic(&self, p: &[f64]) -> f64 {
        match self {
            Metric::Identity(_) => 0.5 * crate::linalg::dot(p, p),
            Metric::Diag(s) => 0.5 * p.iter().zip(s).map(|(x, s)| s * x * x).sum::<f64>(),
            Metric::Dense { cov, .. } => {
                let d = p.len();
                let mut s = 0.0;
                for i in 0..d {
                    s += p[i] * crate::linalg::dot(&cov[i * d..(i + 1) * d], p);
                }
                0.5 * s
            }
        }
    }

    /// out = L z with Σ = L Lᵀ (a draw of N(0, Σ) when z ~ N(0, I)).
    pub fn scale_noise(&self, z: &[f64], out: &mut [f64]) {
        match self {
            Metric::Identity(_) => out.copy_from_slice(z),
            Metric::Diag(s) => {
                for i in 0..z.len() {
                    out[i] = crate::math::sqrt(s[i]) * z[i];
                }
            }
            Metric::Dense { chol, .. } => chol.mul_l(z, out),
        }
    }

    /// ½ xᵀ Σ⁻¹ x (the Gaussian quadratic form of a proposal with covariance Σ).
    pub fn inv_quad(&self, x: &[f64]) -> f64 {
        match self {
            Metric::Identity(_) => 0.5 * crate::linalg::dot(x, x),
            Metric::Diag(s) => 0.5 * x.iter().zip(s).map(|(x, s)| x * x / s).sum::<f64>(),
            Metric::Dense { chol, .. } => {
                let mut y: Vec<f64> = x.to_vec();
                chol.solve_l(&mut y);
                0.5 * crate::linalg::dot(&y, &y)
            }
        }
    }
}
