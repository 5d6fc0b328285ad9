//! Exact affine reparametrisation (whitening) of a model: samplers run in coordinates z where the
//! posterior is close to N(0, I), and every draw is reported on the user's scale θ.
//!
//! # Formula
//! With θ̂ the posterior mode and P = −∇² log π(θ̂) = C Cᵀ (Cholesky, C lower triangular), the
//! Laplace covariance is P⁻¹ = C⁻ᵀ C⁻¹ and
//!
//!   θ = θ̂ + C⁻ᵀ z,   z = Cᵀ (θ − θ̂),
//!   ∇_z log π = C⁻¹ ∇_θ log π,   ∇_θ log π = C ∇_z log π,   ∇²_z = C⁻¹ ∇²_θ C⁻ᵀ.
//!
//! The Jacobian |det C⁻ᵀ| is constant, so π_z(z) ∝ π(θ̂ + C⁻ᵀ z) exactly: the reparametrisation
//! changes the coordinates, never the target, whatever θ̂ and C are (a poor mode or Hessian only
//! makes the whitening less good). For a GLM, ηᵢ = xᵢᵀθ = xᵢᵀθ̂ + (C⁻¹xᵢ)ᵀ z: the design is
//! transformed once, in place (x̃ᵢ = C⁻¹xᵢ), plus one offset oᵢ = xᵢᵀθ̂ per row, so a per-datum
//! evaluation stays O(d) (see [`crate::model::Glm::whiten`]).
//!
//! Why: raw real data (ages in years next to 0/1 dummies, correlated columns) give posteriors
//! whose scales differ by orders of magnitude and whose coordinates are strongly correlated;
//! random-walk, Langevin, minibatch and SMH proposals, SG step sizes and Taylor bounds are all
//! tuned per coordinate or isotropically, so they fail or crawl there. In z every sampler sees a
//! near-isotropic target.

use crate::cost::Cost;
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::string::String;
use alloc::vec::Vec;

/// The `reparam` setting as declared in the models' schemas ([`ReparamMode::from_settings`]).
pub const P_REPARAM: ParamSpec = ParamSpec {
    key: "reparam",
    description:
        "auto: sample in whitened coordinates θ = θ̂ + C⁻ᵀz (mode and Laplace precision CCᵀ; \
                  exact, draws reported on θ); none: sample θ as given",
    kind: ParamKind::Choice(&["auto", "none"]),
};

/// The `reparam` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReparamMode {
    /// Whiten the models that support it (the GLMs and `linear` with `noise=gamma`), leave
    /// the others as they are.
    Auto,
    /// Sample in the model's own coordinates.
    None,
}

impl ReparamMode {
    /// Read `reparam=auto|none` (default `auto`; the key is marked used).
    pub fn from_settings(s: &Settings) -> Result<Self, Error> {
        Ok(match P_REPARAM.choice(s)? {
            "none" => ReparamMode::None,
            _ => ReparamMode::Auto,
        })
    }
}

/// The map θ = θ̂ + C⁻ᵀ z between sampler coordinates z and the user's coordinates θ.
#[derive(Debug, Clone, PartialEq)]
pub struct AffineMap {
    shift: Vec<f64>,
    chol: Cholesky,
}

impl AffineMap {
    /// From the mode θ̂ and the precision P = −∇² log π(θ̂) (row-major d × d). Fails when P is
    /// not positive definite or θ̂ is not finite.
    pub fn from_mode_and_precision(mode: &[f64], precision: &[f64]) -> Result<Self, Error> {
        let d = mode.len();
        if mode.iter().any(|v| !v.is_finite()) {
            return Err(Error::Numerical("reparam: the mode is not finite".into()));
        }
        let chol = Cholesky::new(precision, d)?;
        Ok(AffineMap {
            shift: mode.to_vec(),
            chol,
        })
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.shift.len()
    }

    /// The shift θ̂ (the user-scale point z = 0 maps to).
    pub fn shift(&self) -> &[f64] {
        &self.shift
    }

    /// The Cholesky factor C of the precision.
    pub fn cholesky(&self) -> &Cholesky {
        &self.chol
    }

    /// θ = θ̂ + C⁻ᵀ z, written into `theta`.
    pub fn to_user(&self, z: &[f64], theta: &mut [f64]) {
        theta.copy_from_slice(z);
        self.chol.solve_lt(theta);
        for (t, s) in theta.iter_mut().zip(&self.shift) {
            *t += s;
        }
    }

    /// z = Cᵀ (θ − θ̂), written into `z`; `tmp` is a scratch buffer of length d.
    pub fn to_sampler(&self, theta: &[f64], z: &mut [f64], tmp: &mut [f64]) {
        for ((t, &th), &s) in tmp.iter_mut().zip(theta).zip(&self.shift) {
            *t = th - s;
        }
        self.chol.mul_lt(tmp, z);
    }

    /// ∇_θ = C ∇_z (a score in sampler coordinates to the user's), written into `g_theta`.
    pub fn score_to_user(&self, g_z: &[f64], g_theta: &mut [f64]) {
        self.chol.mul_l(g_z, g_theta);
    }

    /// In place: g ← C⁻¹ g (a gradient in user coordinates to sampler coordinates).
    pub fn grad_to_sampler(&self, g: &mut [f64]) {
        self.chol.solve_l(g);
    }

    /// [`grad_to_sampler`](Self::grad_to_sampler) for each d-long row of `rows` (row-major),
    /// eight rows at a time (the same bits).
    pub fn grads_to_sampler(&self, rows: &mut [f64]) {
        self.chol.solve_l_rows(rows);
    }

    /// A user-scale function's value at the sampler point `z` and its gradient in sampler
    /// coordinates: `f(θ, g_θ)` gets θ = θ̂ + C⁻ᵀ z and a zeroed `g_θ` it accumulates into;
    /// C⁻¹ g_θ is added to `grad`. Returns f's value (a prior's, for the whitened models).
    pub fn value_grad_at_user(
        &self,
        z: &[f64],
        grad: &mut [f64],
        f: impl FnOnce(&[f64], &mut [f64]) -> f64,
    ) -> f64 {
        let d = z.len();
        let mut t = alloc::vec![0.0; 2 * d];
        let (th, g) = t.split_at_mut(d);
        self.to_user(z, th);
        let v = f(th, g);
        self.grad_to_sampler(g);
        for (a, b) in grad.iter_mut().zip(g.iter()) {
            *a += b;
        }
        v
    }

    /// A user-scale function's value at the sampler point `z`: `f(θ)` with θ = θ̂ + C⁻ᵀ z.
    pub fn value_at_user(&self, z: &[f64], f: impl FnOnce(&[f64]) -> f64) -> f64 {
        let mut th = alloc::vec![0.0; z.len()];
        self.to_user(z, &mut th);
        f(&th)
    }

    /// In place: H ← C⁻¹ H C⁻ᵀ (a Hessian in user coordinates to sampler coordinates),
    /// row-major d × d; `col` is a scratch buffer of length d.
    pub fn hessian_to_sampler(&self, h: &mut [f64], col: &mut [f64]) {
        let d = self.dim();
        // rows: H ← C⁻¹ H (solve each column)
        for j in 0..d {
            for i in 0..d {
                col[i] = h[i * d + j];
            }
            self.chol.solve_l(col);
            for i in 0..d {
                h[i * d + j] = col[i];
            }
        }
        // columns: H ← H C⁻ᵀ = (C⁻¹ Hᵀ)ᵀ (solve each row)
        for i in 0..d {
            col.copy_from_slice(&h[i * d..(i + 1) * d]);
            self.chol.solve_l(col);
            h[i * d..(i + 1) * d].copy_from_slice(col);
        }
    }
}

/// What the reparametrisation did, for `run.json` and the page.
#[derive(Debug, Clone, PartialEq)]
pub struct ReparamInfo {
    /// `whiten` (applied), `none` (asked for none, or not supported by the model) or
    /// `failed` (asked for, but the mode or Hessian could not be used; sampled as given).
    pub kind: &'static str,
    /// One line on what happened (the mode search, the fall-back reason).
    pub note: String,
    /// Rows the mode and Hessian were computed from (n, or an evenly spaced subset on tall data).
    pub rows_used: usize,
    /// Per-datum evaluations spent (mode search and Hessian), once for all chains.
    pub cost: Cost,
    /// Per-datum Hessian evaluations of the mode search.
    pub hess_evals: u64,
}

impl ReparamInfo {
    /// Not whitened (`kind` `none`), for the reason `note`; nothing spent.
    pub fn none(note: String) -> Self {
        ReparamInfo {
            kind: "none",
            note,
            rows_used: 0,
            cost: Cost::default(),
            hess_evals: 0,
        }
    }
}
