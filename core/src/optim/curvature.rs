//! Matrix-free curvature of the full-data log posterior: Hessian-vector products, the Hessian's
//! diagonal and its largest eigenvalue, with no d × d matrix (set-up at large d, where a dense
//! Hessian costs O(d²) memory and its factorisation O(d³) time).
//!
//! # Formula
//! A = −∇² log π(θ) = −∇² log p(θ) − Σᵢ ∇²ℓᵢ(θ); A v from the model's
//! [`DataModel::log_lik_hess_vec_all`] and [`DataModel::log_prior_hess_vec`] (one full-data
//! pass in closed form, two by central differences otherwise); λ_max(A) by power iteration on
//! v ↦ A v ([`crate::linalg::power_iteration_op`]).

use crate::error::Error;
use crate::model::DataModel;
use alloc::vec;
use alloc::vec::Vec;

/// A v with A = −∇² log π(θ) on the full data, written into `out` (length d).
pub fn neg_hessian_vec(model: &dyn DataModel, theta: &[f64], v: &[f64], out: &mut [f64]) {
    out.iter_mut().for_each(|x| *x = 0.0);
    model.log_prior_hess_vec(theta, v, out);
    model.log_lik_hess_vec_all(theta, v, out);
    out.iter_mut().for_each(|x| *x = -*x);
}

/// The diagonal of A = −∇² log π(θ) on the full data, when the model has it in closed form
/// ([`DataModel::log_post_hess_diag`]); `None` otherwise.
pub fn neg_hessian_diag(model: &dyn DataModel, theta: &[f64]) -> Option<Vec<f64>> {
    let mut out = vec![0.0; theta.len()];
    if !model.log_post_hess_diag(theta, &mut out) {
        return None;
    }
    out.iter_mut().for_each(|x| *x = -*x);
    Some(out)
}

/// What [`max_eigenvalue_matrix_free`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MatrixFreeEigen {
    /// λ_max(A), A = −∇² log π(θ) (the Rayleigh quotient of the last power iterate).
    pub value: f64,
    /// Hessian-vector products applied (each one full-data pass, or two by differences).
    pub products: usize,
    /// Per-datum evaluations spent (n per product).
    pub per_datum: u64,
}

/// λ_max of A = −∇² log π(θ) on the full data by power iteration on Hessian-vector products
/// ([`neg_hessian_vec`]), assuming the largest eigenvalue dominates in magnitude (as at a mode).
///
/// Errors: `theta` of the wrong length, a non-finite result.
pub fn max_eigenvalue_matrix_free(
    model: &dyn DataModel,
    theta: &[f64],
) -> Result<MatrixFreeEigen, Error> {
    let d = model.dim();
    Error::check_dim("theta", d, theta.len())?;
    let (value, products) =
        crate::linalg::power_iteration_op(d, 0.0, |v, w| neg_hessian_vec(model, theta, v, w))?;
    Ok(MatrixFreeEigen {
        value,
        products,
        per_datum: products as u64 * model.n() as u64,
    })
}
