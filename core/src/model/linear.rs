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

use super::glm::{laplace_map, whiten_note, GaussianNoise, Glm};
use super::prior::Prior;
use super::reparam::{AffineMap, ReparamInfo};
use super::DataModel;
use crate::data::Design;
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::math;
use crate::schema::{ParamKind, ParamSpec};
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

/// The `linear` model's `noise` setting: known sd, or a Gamma-prior precision.
pub const P_NOISE: ParamSpec = ParamSpec {
    key: "noise",
    description:
        "known: noise_sd is fixed; gamma: precision τ ~ Gamma(shape, rate), sampled as log_tau",
    kind: ParamKind::Choice(&["known", "gamma"]),
};

/// The `linear` model's `noise_sd` setting (`noise=known`).
pub const P_NOISE_SD: ParamSpec = ParamSpec::positive(
    "noise_sd",
    "Known noise standard deviation σ (> 0)",
    DEFAULT_NOISE_SD,
);

/// The `linear` model's `noise_prior_shape` setting (`noise=gamma`).
pub const P_NOISE_PRIOR_SHAPE: ParamSpec = ParamSpec::positive(
    "noise_prior_shape",
    "Gamma prior shape of the noise precision τ (noise=gamma)",
    DEFAULT_NOISE_PRIOR_SHAPE,
);

/// The `linear` model's `noise_prior_rate` setting (`noise=gamma`).
pub const P_NOISE_PRIOR_RATE: ParamSpec = ParamSpec::positive(
    "noise_prior_rate",
    "Gamma prior rate of the noise precision τ (noise=gamma)",
    DEFAULT_NOISE_PRIOR_RATE,
);

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
    Error::check_positive("noise_sd", noise_sd)?;
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
///
/// After [`LinearUnknownNoise::whiten`] the model is the same posterior in whitened coordinates
/// z = (z_β, z_u): β = β̂ + C_β⁻ᵀz_β and u = û + z_u/c_u, from the mode and the negative Hessian
/// there with the (β, u) cross terms dropped (they vanish at the mode up to the prior's pull:
/// Σᵢ xᵢrᵢ = 0 there without a prior). The rows are transformed once in place, x̃ᵢ = C_β⁻¹xᵢ,
/// with offsets oᵢ = xᵢᵀβ̂, so rᵢ = yᵢ − oᵢ − x̃ᵢᵀz_β and a per-datum evaluation stays O(d).
#[derive(Debug, Clone)]
pub struct LinearUnknownNoise {
    /// Data (whitened rows after [`LinearUnknownNoise::whiten`]).
    pub design: Design,
    /// Prior on the coefficients β.
    pub prior: Prior,
    /// Gamma shape a (> 0).
    pub shape: f64,
    /// Gamma rate b (> 0).
    pub rate: f64,
    offset: Option<Vec<f64>>,
    map: Option<AffineMap>,
    reparam: Option<ReparamInfo>,
    /// u = u_shift + u_scale·z_u (whitened; 0 and 1 otherwise).
    u_shift: f64,
    u_scale: f64,
}

impl LinearUnknownNoise {
    /// A model over `design`; `shape` and `rate` must be positive and finite.
    pub fn new(design: Design, prior: Prior, shape: f64, rate: f64) -> Result<Self, Error> {
        Error::check_positive("noise_prior_shape", shape)?;
        Error::check_positive("noise_prior_rate", rate)?;
        Ok(LinearUnknownNoise {
            design,
            prior,
            shape,
            rate,
            offset: None,
            map: None,
            reparam: None,
            u_shift: 0.0,
            u_scale: 1.0,
        })
    }

    #[inline]
    fn resid(&self, theta: &[f64], i: usize) -> f64 {
        let row = self.design.row(i);
        let mut s = 0.0;
        for k in 0..row.len() {
            s += row[k] * theta[k];
        }
        match &self.offset {
            Some(o) => self.design.y[i] - (o[i] + s),
            None => self.design.y[i] - s,
        }
    }

    /// u = log τ at the position (`theta[d]`, or û + z_u/c_u when whitened).
    #[inline]
    fn log_tau(&self, theta: &[f64]) -> f64 {
        let z = theta[self.design.d];
        if self.map.is_some() {
            self.u_shift + self.u_scale * z
        } else {
            z
        }
    }

    /// The same posterior in whitened coordinates (see the type's documentation; the mode
    /// search and fall-backs are [`Glm::whiten`]'s). Calling it twice whitens once.
    pub fn whiten(mut self) -> Self {
        if self.map.is_some() {
            return self;
        }
        let (n, d) = (self.design.n, self.design.d);
        let start = self.initial_point();
        let w = match laplace_map(&self, &start, true) {
            Ok(w) => w,
            Err(info) => {
                self.reparam = Some(info);
                return self;
            }
        };
        let m = d + 1;
        let mut full = vec![0.0; m];
        let mut offset = Vec::with_capacity(n);
        for row in self.design.x.chunks_exact_mut(d.max(1)) {
            offset.push(row.iter().zip(&w.mode.mode).map(|(a, b)| a * b).sum());
            if d > 0 {
                full[..d].copy_from_slice(row);
                full[d] = 0.0;
                // C is block-diagonal: C⁻¹(x, 0) = (C_β⁻¹x, 0)
                w.map.grad_to_sampler(&mut full);
                row.copy_from_slice(&full[..d]);
            }
        }
        if d == 0 {
            // no columns: no rows were visited above, and every offset is 0
            offset = vec![0.0; n];
        }
        // c_u = C[d][d]: z_u = c_u (u − û)
        let mut e = vec![0.0; m];
        e[d] = 1.0;
        w.map.grad_to_sampler(&mut e);
        self.u_shift = w.mode.mode[d];
        self.u_scale = e[d];
        self.reparam = Some(ReparamInfo {
            kind: "whiten",
            note: whiten_note(&w, n),
            rows_used: w.rows,
            cost: w.mode.cost(),
            hess_evals: w.mode.hess_evals,
        });
        self.offset = Some(offset);
        self.map = Some(w.map);
        self
    }

    /// Record that whitening was not applied (`reparam=none`): `why` for run.json.
    pub fn not_whitened(mut self, why: &str) -> Self {
        self.reparam = Some(ReparamInfo::none(String::from(why)));
        self
    }

    /// log p(θ) at the user's θ and its gradient (accumulated into `grad`).
    fn user_log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let d = self.design.d;
        let u = theta[d];
        let e = math::exp(u);
        grad[d] += self.shape - self.rate * e;
        self.prior.log_density_grad(&theta[..d], &mut grad[..d]) + self.shape * u - self.rate * e
    }

    /// log p(θ) at the user's θ.
    fn user_log_prior(&self, theta: &[f64]) -> f64 {
        let d = self.design.d;
        let u = theta[d];
        self.prior.log_density(&theta[..d]) + self.shape * u - self.rate * math::exp(u)
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
        match &self.map {
            None => self.user_log_prior_grad(theta, grad),
            Some(map) => {
                map.value_grad_at_user(theta, grad, |th, g| self.user_log_prior_grad(th, g))
            }
        }
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        match &self.map {
            None => self.user_log_prior(theta),
            Some(map) => map.value_at_user(theta, |th| self.user_log_prior(th)),
        }
    }
    fn log_prior_hess(&self, theta: &[f64], hess: &mut [f64]) {
        let d = self.design.d;
        let m = d + 1;
        let p = self.prior.precision();
        match &self.map {
            None => {
                for k in 0..d {
                    hess[k * m + k] -= p;
                }
                hess[d * m + d] -= self.rate * math::exp(theta[d]);
            }
            Some(map) => {
                // diag(−p, …, −b eᵘ) in θ is C⁻¹ diag(…) C⁻ᵀ in z
                let mut h = vec![0.0; m * m];
                for k in 0..d {
                    h[k * m + k] = -p;
                }
                h[d * m + d] = -self.rate * math::exp(self.log_tau(theta));
                let mut col = vec![0.0; m];
                map.hessian_to_sampler(&mut h, &mut col);
                for (a, b) in hess.iter_mut().zip(&h) {
                    *a += b;
                }
            }
        }
    }
    #[inline]
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        let u = self.log_tau(theta);
        let r = self.resid(theta, i);
        0.5 * u - 0.5 * math::exp(u) * r * r
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let d = self.design.d;
        let u = self.log_tau(theta);
        let tau = math::exp(u);
        let r = self.resid(theta, i);
        let row = self.design.row(i);
        for k in 0..d {
            grad[k] += tau * r * row[k];
        }
        let half_tr2 = 0.5 * tau * r * r;
        if self.map.is_some() {
            grad[d] += self.u_scale * (0.5 - half_tr2);
        } else {
            grad[d] += 0.5 - half_tr2;
        }
        0.5 * u - half_tr2
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d = self.design.d;
        let m = d + 1;
        let tau = math::exp(self.log_tau(theta));
        let r = self.resid(theta, i);
        let row = self.design.row(i);
        let s = if self.map.is_some() {
            self.u_scale
        } else {
            1.0
        };
        for a in 0..d {
            for b in 0..d {
                hess[a * m + b] -= tau * row[a] * row[b];
            }
            hess[a * m + d] += s * tau * r * row[a];
            hess[d * m + a] += s * tau * r * row[a];
        }
        hess[d * m + d] -= s * s * 0.5 * tau * r * r;
    }
    fn user_map(&self) -> Option<&AffineMap> {
        self.map.as_ref()
    }
    fn reparam_info(&self) -> Option<&ReparamInfo> {
        self.reparam.as_ref()
    }
    /// β = 0 and τ = 1/mean(yᵢ²) (the precision given β = 0), deterministic; when whitened,
    /// z = 0 (the mode).
    fn initial_point(&self) -> Vec<f64> {
        let d = self.design.d;
        let mut v = vec![0.0; d + 1];
        if self.map.is_some() {
            return v;
        }
        if self.design.n > 0 {
            let ms = self.design.y.iter().map(|y| y * y).sum::<f64>() / self.design.n as f64;
            if ms > 0.0 && ms.is_finite() {
                v[d] = -math::ln(ms);
            }
        }
        v
    }
}
