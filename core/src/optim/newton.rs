//! Damped Newton with Armijo backtracking, and the [`find_mode`] entry points.
//!
//! # Formula
//! A = −∇² log π(θ), g = ∇ log π(θ); direction p solves (A + τI) p = g with the smallest
//! τ ∈ {0, 10⁻⁶·s, 10⁻⁵·s, …} (s = mean |Aᵢᵢ|) for which A + τI has a Cholesky factor, so p is
//! the Newton step where log π is concave and tends to the gradient direction g/τ where it is
//! not. Step θ ← θ + αp with α = 1, ½, ¼, … until the Armijo condition
//! log π(θ + αp) ≥ log π(θ) + 10⁻⁴ α gᵀp holds. Once the predicted gain α gᵀp is below the
//! rounding noise of log π, a step is accepted when it lowers ‖g‖∞ instead. With
//! [`ModeOptions::decrement_tol`] > 0 the search also stops after a step once gᵀA⁻¹g, with the
//! A of the step, is at most that tolerance (A is not formed again at the new point).

use super::lbfgs::{lbfgs_maximize, LbfgsOptions};
use super::objective::Objective;
use super::{norm_inf, ModeMethod, ModeOptions, ModeResult};
use crate::error::Error;
use crate::linalg::{dot, Cholesky};
use crate::model::DataModel;
use alloc::vec;
use alloc::vec::Vec;

/// Most parameters of a mode search that forms dense d × d matrices (Newton's method, or any
/// method with [`ModeOptions::hessian`]: the Hessian and a factorisation, 800 MB each at
/// d = 10⁴); a larger request would abort on allocation (e.g. `pmf` with a large `rank`)
/// instead of returning an error. L-BFGS without the dense Hessian has no such limit.
pub const MAX_MODE_DIM: usize = 10_000;

/// The posterior mode of `model` on the full data, from `start`.
///
/// Errors: `start` of the wrong length ([`Error::Dimension`]); a non-finite `start`, log
/// density or gradient there ([`Error::NonFiniteStart`]); invalid options
/// ([`Error::InvalidSetting`]); more than [`MAX_MODE_DIM`] parameters when a dense d × d
/// matrix would be formed ([`Error::InvalidData`]). Running out of iterations is not an error:
/// check [`ModeResult::converged`].
pub fn find_mode(
    model: &dyn DataModel,
    start: &[f64],
    opts: &ModeOptions,
) -> Result<ModeResult, Error> {
    run(Objective::new(model, None)?, start, opts)
}

/// The mode of the subset posterior log p(θ) + (n/m) Σ_{i∈subset} ℓᵢ(θ), m = |subset|:
/// control-variate centres computed from a subsample. Indices may repeat (a subsample drawn
/// with replacement). Costs are counted over the subset only. Fails on an empty subset or an
/// index ≥ n, and as [`find_mode`] otherwise.
pub fn find_mode_subset(
    model: &dyn DataModel,
    subset: &[usize],
    start: &[f64],
    opts: &ModeOptions,
) -> Result<ModeResult, Error> {
    run(Objective::new(model, Some(subset))?, start, opts)
}

fn run(mut obj: Objective<'_>, start: &[f64], opts: &ModeOptions) -> Result<ModeResult, Error> {
    opts.validate()?;
    let d = obj.dim();
    // d = 0 has nothing to optimise; Newton returns at once.
    let method = match opts.method {
        _ if d == 0 => ModeMethod::Newton,
        ModeMethod::Auto if d <= super::NEWTON_MAX_DIM => ModeMethod::Newton,
        ModeMethod::Auto => ModeMethod::Lbfgs,
        m => m,
    };
    let dense = method == ModeMethod::Newton || opts.hessian || obj.is_subset();
    if dense && d > MAX_MODE_DIM {
        return Err(Error::data(alloc::format!(
            "the model has {d} parameters; this mode search stores dense {d} × {d} matrices \
             (the Hessian) and takes at most {MAX_MODE_DIM} (use fewer parameters, e.g. a \
             smaller rank)"
        )));
    }
    Error::check_dim("start", d, start.len())?;
    if start.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart);
    }
    let mut theta = start.to_vec();
    let mut g = vec![0.0; d];
    let f = obj.value_grad(&theta, &mut g);
    if !f.is_finite() || g.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart);
    }
    let tol = opts.grad_tol * (obj.n().max(1) as f64);
    match method {
        ModeMethod::Newton => newton(obj, theta, f, g, tol, opts),
        ModeMethod::Lbfgs | ModeMethod::Auto => {
            let lo = LbfgsOptions {
                memory: opts.memory,
                max_iter: opts.max_iter,
                grad_tol: tol,
                max_evals: opts.max_iter.saturating_mul(20),
            };
            let r = lbfgs_maximize(|x, gr| obj.value_grad(x, gr), &theta, &lo)?;
            theta.copy_from_slice(&r.x);
            let a = if opts.hessian {
                let mut a = vec![0.0; d * d];
                obj.neg_hessian(&theta, &mut a);
                a
            } else {
                Vec::new()
            };
            Ok(ModeResult {
                mode: theta,
                log_density: r.value,
                grad: r.grad,
                neg_hessian: a,
                iterations: r.iterations,
                converged: r.converged,
                lik_evals: obj.lik_evals,
                grad_evals: obj.grad_evals,
                hess_evals: obj.hess_evals,
            })
        }
    }
}

fn newton(
    mut obj: Objective<'_>,
    mut theta: Vec<f64>,
    mut f: f64,
    mut g: Vec<f64>,
    tol: f64,
    opts: &ModeOptions,
) -> Result<ModeResult, Error> {
    let d = theta.len();
    let mut a = vec![0.0; d * d];
    obj.neg_hessian(&theta, &mut a);
    let mut work = vec![0.0; d * d];
    let mut p = vec![0.0; d];
    let mut trial = vec![0.0; d];
    let mut gt = vec![0.0; d];
    let mut iterations = 0;
    let mut converged = norm_inf(&g) <= tol;
    while !converged && iterations < opts.max_iter {
        iterations += 1;
        newton_direction(&a, d, &g, &mut work, &mut p);
        let mut slope = dot(&g, &p);
        if !(slope > 0.0 && slope.is_finite()) {
            p.copy_from_slice(&g);
            slope = dot(&g, &g);
        }
        let noise = 1024.0 * f64::EPSILON * (1.0 + crate::math::abs(f));
        let gnorm = norm_inf(&g);
        let mut alpha = 1.0;
        // None: no acceptable step; Some(false): accepted, gradient still to compute;
        // Some(true): accepted with value and gradient already in (ft, gt).
        let mut outcome = None;
        let mut ft = f64::NEG_INFINITY;
        for _ in 0..64 {
            for k in 0..d {
                trial[k] = theta[k] + alpha * p[k];
            }
            ft = obj.value(&trial);
            if ft.is_finite() && ft >= f + 1e-4 * alpha * slope {
                outcome = Some(false);
                break;
            }
            if ft.is_finite() && alpha * slope <= noise {
                // Rounding regime: the value cannot tell; the gradient can.
                ft = obj.value_grad(&trial, &mut gt);
                if ft.is_finite() && norm_inf(&gt) < gnorm {
                    outcome = Some(true);
                }
                break;
            }
            alpha *= 0.5;
        }
        match outcome {
            None => break,
            Some(have_grad) => {
                theta.copy_from_slice(&trial);
                if have_grad {
                    f = ft;
                    g.copy_from_slice(&gt);
                } else {
                    f = obj.value_grad(&theta, &mut g);
                }
                converged = norm_inf(&g) <= tol;
                if !converged && opts.decrement_tol > 0.0 {
                    // The decrement with the Hessian already formed (no new one when it
                    // says the mode is near enough).
                    newton_direction(&a, d, &g, &mut work, &mut p);
                    let dec = dot(&g, &p);
                    if dec.is_finite() && (0.0..=opts.decrement_tol).contains(&dec) {
                        converged = true;
                        break;
                    }
                }
                obj.neg_hessian(&theta, &mut a);
            }
        }
    }
    Ok(ModeResult {
        mode: theta,
        log_density: f,
        grad: g,
        neg_hessian: a,
        iterations,
        converged,
        lik_evals: obj.lik_evals,
        grad_evals: obj.grad_evals,
        hess_evals: obj.hess_evals,
    })
}

/// p = (A + τI)⁻¹ g with the smallest τ of the ladder that makes A + τI positive definite;
/// p = g when no τ works (A not finite).
fn newton_direction(a: &[f64], d: usize, g: &[f64], work: &mut [f64], p: &mut [f64]) {
    let mut s = 0.0;
    for k in 0..d {
        s += crate::math::abs(a[k * d + k]);
    }
    let s = if s.is_finite() && s > 0.0 {
        s / d as f64
    } else {
        1.0
    };
    let mut tau = 0.0;
    for _ in 0..40 {
        work.copy_from_slice(a);
        for k in 0..d {
            work[k * d + k] += tau;
        }
        if let Ok(ch) = Cholesky::new(work, d) {
            p.copy_from_slice(g);
            ch.solve(p);
            if p.iter().all(|v| v.is_finite()) {
                return;
            }
        }
        tau = if tau == 0.0 { 1e-6 * s } else { 10.0 * tau };
    }
    p.copy_from_slice(g);
}
