//! Mode finding: damped Newton and L-BFGS with line search, on the full data or a subset,
//! returning the mode, the negative Hessian there and the cost in per-datum evaluations.
//!
//! Control variates (centre θ̂ and the Taylor coefficients), SMH, the Laplace start of the
//! samplers and the metric initialisation all call [`find_mode`] / [`find_mode_subset`].
//! [`lbfgs_maximize`] is the generic optimiser underneath, usable on any smooth function.
//!
//! # Formula
//! log π(θ) = log p(θ) + s · Σ_{i∈S} ℓᵢ(θ), with S = {0, …, n−1} and s = 1 on the full data,
//! or S a subset of size m and s = n/m (an unbiased estimate of the full log-likelihood).
//! Converged when ‖∇ log π(θ)‖∞ ≤ `grad_tol` · max(1, n).
//!
//! ## References
//! - J. Nocedal, S. J. Wright (2006), *Numerical Optimization*, 2nd ed., Springer:
//!   Alg. 3.1 (backtracking), 3.5–3.6 (strong-Wolfe line search), 7.4–7.5 (L-BFGS),
//!   §3.4 (Hessian modification).
//! - D. C. Liu, J. Nocedal (1989), *On the limited memory BFGS method for large scale
//!   optimization*, Math. Programming 45.

mod curvature;
mod lbfgs;
mod newton;
mod objective;

pub use curvature::{
    max_eigenvalue_matrix_free, neg_hessian_diag, neg_hessian_vec, MatrixFreeEigen,
};
pub use lbfgs::{lbfgs_maximize, LbfgsMemory, LbfgsOptions, LbfgsResult};
pub use newton::{find_mode, find_mode_subset, MAX_MODE_DIM};

use crate::cost::Cost;
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::vec::Vec;

/// Which optimiser [`find_mode`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeMethod {
    /// Damped Newton with Armijo backtracking: per-datum Hessians, O(n d²) per iteration,
    /// quadratic convergence. The default for d up to a few hundred.
    Newton,
    /// L-BFGS with a strong-Wolfe line search: gradients only, O(n d) per evaluation.
    /// The Hessian is computed once, at the end.
    Lbfgs,
    /// [`ModeMethod::Newton`] up to [`NEWTON_MAX_DIM`] parameters, [`ModeMethod::Lbfgs`]
    /// above: a Newton step factors a d × d matrix (O(d³), several times when the Hessian is
    /// indefinite, as in matrix factorisation), which at d = 900 took minutes.
    Auto,
}

/// The largest dimension [`ModeMethod::Auto`] finds the mode of by Newton's method.
pub const NEWTON_MAX_DIM: usize = 200;

/// Options of [`find_mode`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeOptions {
    /// Optimiser.
    pub method: ModeMethod,
    /// Maximum iterations (Newton steps or L-BFGS steps), ≥ 1.
    pub max_iter: usize,
    /// Relative gradient tolerance: stop when ‖∇ log π‖∞ ≤ grad_tol · max(1, n) (≥ 0).
    pub grad_tol: f64,
    /// L-BFGS memory (pairs kept), ≥ 1.
    pub memory: usize,
    /// Whether [`ModeResult::neg_hessian`] is formed at the mode (a dense d × d matrix). Without
    /// it, L-BFGS runs with O(d) memory and takes any d; the curvature is then available
    /// matrix-free ([`neg_hessian_vec`], [`neg_hessian_diag`]). Newton's method forms the
    /// matrix at every step regardless.
    pub hessian: bool,
    /// Newton only: also stop once the Newton decrement gᵀA⁻¹g at the current point, with A
    /// the last negative Hessian formed, is at most this: the squared distance to the mode in
    /// posterior standard deviations, the scale that matters for a Laplace reparametrisation.
    /// The search then returns without forming the Hessian at the last point
    /// ([`ModeResult::neg_hessian`] is the one at the point before). 0 (the default): off.
    pub decrement_tol: f64,
}

impl Default for ModeOptions {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// The `mode_method` setting of [`ModeOptions::from_settings`].
pub const P_MODE_METHOD: ParamSpec = ParamSpec {
    key: "mode_method",
    description: "optimiser of the posterior mode: auto (newton up to d = 200, lbfgs above), newton (damped Newton) or lbfgs",
    kind: ParamKind::Choice(&["auto", "newton", "lbfgs"]),
};

/// The `mode_max_iter` setting of [`ModeOptions::from_settings`].
pub const P_MODE_MAX_ITER: ParamSpec = ParamSpec {
    key: "mode_max_iter",
    description: "maximum iterations of the mode search",
    kind: ParamKind::Int {
        default: ModeOptions::DEFAULT.max_iter,
        min: 1,
        max: 1_000_000,
    },
};

/// The `mode_tol` setting of [`ModeOptions::from_settings`].
pub const P_MODE_TOL: ParamSpec = ParamSpec {
    key: "mode_tol",
    description: "relative gradient tolerance of the mode search: ‖∇ log π‖∞ ≤ tol · max(1, n)",
    kind: ParamKind::Real {
        default: ModeOptions::DEFAULT.grad_tol,
        min: 0.0,
        max: 1.0,
    },
};

/// The `mode_memory` setting of [`ModeOptions::from_settings`] (L-BFGS pairs kept).
pub const P_MODE_MEMORY: ParamSpec = ParamSpec {
    key: "mode_memory",
    description: "L-BFGS memory of the mode search (pairs kept)",
    kind: ParamKind::Int {
        default: ModeOptions::DEFAULT.memory,
        min: 1,
        max: 1000,
    },
};

/// The settings of [`ModeOptions::from_settings`].
pub const MODE_PARAMS: [ParamSpec; 4] = [P_MODE_METHOD, P_MODE_MAX_ITER, P_MODE_TOL, P_MODE_MEMORY];

impl ModeOptions {
    /// Auto (Newton up to [`NEWTON_MAX_DIM`]), at most 500 iterations, tolerance 1e-10,
    /// L-BFGS memory 10, the dense negative Hessian at the mode formed (the defaults of [`MODE_PARAMS`]; `mode_method`'s default is the first
    /// of its choices, `auto`).
    pub const DEFAULT: ModeOptions = ModeOptions {
        method: ModeMethod::Auto,
        max_iter: 500,
        grad_tol: 1e-10,
        memory: 10,
        hessian: true,
        decrement_tol: 0.0,
    };

    /// Read [`MODE_PARAMS`]: `mode_method` (`newton` | `lbfgs`), `mode_max_iter`, `mode_tol`
    /// and `mode_memory` from user settings, with the defaults of [`ModeOptions::DEFAULT`].
    pub fn from_settings(s: &Settings) -> Result<Self, Error> {
        let method = match P_MODE_METHOD.choice(s)? {
            "lbfgs" => ModeMethod::Lbfgs,
            "newton" => ModeMethod::Newton,
            _ => ModeMethod::Auto,
        };
        Ok(ModeOptions {
            method,
            max_iter: P_MODE_MAX_ITER.int(s)?,
            grad_tol: P_MODE_TOL.real(s)?,
            memory: P_MODE_MEMORY.int(s)?,
            hessian: true,
            decrement_tol: 0.0,
        })
    }

    pub(crate) fn validate(&self) -> Result<(), Error> {
        if self.max_iter == 0 {
            return Err(Error::setting("mode_max_iter", "must be at least 1"));
        }
        if !(self.decrement_tol >= 0.0 && self.decrement_tol.is_finite()) {
            return Err(Error::setting(
                "decrement_tol",
                "must be finite and non-negative",
            ));
        }
        if !(self.grad_tol >= 0.0 && self.grad_tol.is_finite()) {
            return Err(Error::setting(
                "mode_tol",
                "must be finite and non-negative",
            ));
        }
        if self.memory == 0 {
            return Err(Error::setting("mode_memory", "must be at least 1"));
        }
        Ok(())
    }
}

/// What [`find_mode`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct ModeResult {
    /// The mode θ̂ (or the last iterate when not converged).
    pub mode: Vec<f64>,
    /// log π(θ̂) (up to the model's additive constant; the subset estimate for a subset).
    pub log_density: f64,
    /// ∇ log π(θ̂) (≈ 0 when converged).
    pub grad: Vec<f64>,
    /// −∇² log π(θ̂), row-major d × d, symmetrised; empty when [`ModeOptions::hessian`] was
    /// false and the method was L-BFGS.
    pub neg_hessian: Vec<f64>,
    /// Iterations taken.
    pub iterations: usize,
    /// Whether the gradient tolerance was met.
    pub converged: bool,
    /// Per-datum log-likelihood evaluations (a joint value-and-gradient evaluation counts here
    /// and in `grad_evals`, as in [`crate::kernel::StepInfo`]).
    pub lik_evals: u64,
    /// Per-datum gradient evaluations.
    pub grad_evals: u64,
    /// Per-datum Hessian evaluations (dense per-datum Hessians accumulated into a d × d matrix).
    pub hess_evals: u64,
}

impl ModeResult {
    /// The cost as a chain counts it (Hessian evaluations are reported separately in
    /// [`ModeResult::hess_evals`]).
    pub fn cost(&self) -> Cost {
        Cost {
            lik_evals: self.lik_evals,
            grad_evals: self.grad_evals,
        }
    }

    /// The Laplace covariance (−∇² log π(θ̂))⁻¹, row-major; fails when the negative Hessian
    /// is not positive definite (a saddle or a flat direction) or was not formed.
    pub fn covariance(&self) -> Result<Vec<f64>, Error> {
        let d = self.mode.len();
        Ok(Cholesky::new(&self.neg_hessian, d)?.inverse())
    }
}

/// ‖x‖∞; NaN if any entry is NaN.
pub(crate) fn norm_inf(x: &[f64]) -> f64 {
    let mut m = 0.0f64;
    for &v in x {
        if v.is_nan() {
            return f64::NAN;
        }
        let a = crate::math::abs(v);
        if a > m {
            m = a;
        }
    }
    m
}
