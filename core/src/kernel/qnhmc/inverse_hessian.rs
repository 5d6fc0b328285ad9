//! The BFGS / L-BFGS estimate C of the inverse Hessian of U = −log π that QNHMC's dynamics
//! are multiplied by: dense BFGS updates (with optional eigenvalue clamps) or L-BFGS pairs
//! ([`crate::optim::LbfgsMemory`]), the curvature safeguard, and the initial scale.

use super::{InitScale, Store, DENSE_MAX_D};
use crate::error::Error;
use crate::linalg::{dot, Cholesky};
use crate::math;
use crate::optim::LbfgsMemory;
use alloc::vec;
use alloc::vec::Vec;

#[derive(Debug, Clone, PartialEq)]
enum Repr {
    Dense(Vec<f64>),
    Lbfgs { pairs: LbfgsMemory, gamma: f64 },
}

/// A BFGS or L-BFGS estimate B of the inverse Hessian of U = −log π (always symmetric positive
/// definite: pairs failing the curvature condition are skipped).
#[derive(Debug, Clone, PartialEq)]
pub struct InverseHessian {
    d: usize,
    init: InitScale,
    tol: f64,
    repr: Repr,
    updates: usize,
    skipped: usize,
    clamp: Option<(f64, f64)>,
    clamped: usize,
}

/// d², or an `InvalidSetting` on `store` when d > [`DENSE_MAX_D`].
pub(crate) fn dense_len(d: usize) -> Result<usize, Error> {
    match d.checked_mul(d) {
        Some(n) if d <= DENSE_MAX_D => Ok(n),
        _ => Err(Error::setting(
            "store",
            alloc::format!("dense storage needs d ≤ {DENSE_MAX_D} (d = {d}); use store=lbfgs"),
        )),
    }
}

/// δ must be finite and in [0, 1) (at δ ≥ 1 no pair can pass: |yᵀs| ≤ ‖s‖‖y‖).
pub(crate) fn check_curvature_tol(tol: f64) -> Result<(), Error> {
    if tol.is_finite() && (0.0..1.0).contains(&tol) {
        Ok(())
    } else {
        Err(Error::setting(
            "curvature_tol",
            alloc::format!("{} is outside [0, 1)", crate::settings::number(tol)),
        ))
    }
}

/// B with its eigenvalues clipped to [lo, hi] (`None` if they all lie inside already).
///
/// # Formula
/// B = V diag(λ) Vᵀ  →  V diag(min(max(λᵢ, lo), hi)) Vᵀ.
fn clamp_eigenvalues(b: &[f64], d: usize, lo: f64, hi: f64) -> Result<Option<Vec<f64>>, Error> {
    let e = crate::linalg::symmetric_eigen(b, d)?;
    if e.values.iter().all(|&l| l >= lo && l <= hi) {
        return Ok(None);
    }
    let lam: Vec<f64> = e.values.iter().map(|&l| l.max(lo).min(hi)).collect();
    let v = &e.vectors;
    let mut out = vec![0.0; d * d];
    for i in 0..d {
        for j in i..d {
            let x: f64 = (0..d).map(|k| v[i * d + k] * lam[k] * v[j * d + k]).sum();
            out[i * d + j] = x;
            out[j * d + i] = x;
        }
    }
    Ok(Some(out))
}

impl InverseHessian {
    /// B₀ = γ I (γ = 1 until the first pair when `init` is [`InitScale::Scaled`]), stored
    /// as `store`, with curvature tolerance δ = `tol` ≥ 0.
    pub fn new(d: usize, store: Store, init: InitScale, tol: f64) -> Result<Self, Error> {
        if d == 0 {
            return Err(Error::data("the model has no parameters"));
        }
        check_curvature_tol(tol)?;
        let gamma = match init {
            InitScale::Fixed(g) => {
                if !(g.is_finite() && g > 0.0) {
                    return Err(Error::setting("init_scale", "must be a finite number > 0"));
                }
                g
            }
            InitScale::Scaled => 1.0,
        };
        let repr = match store {
            Store::Dense => {
                let mut b = vec![0.0; dense_len(d)?];
                for i in 0..d {
                    b[i * d + i] = gamma;
                }
                Repr::Dense(b)
            }
            Store::Lbfgs(m) => {
                if m == 0 {
                    return Err(Error::setting("memory", "must be at least 1"));
                }
                Repr::Lbfgs {
                    pairs: LbfgsMemory::new(m),
                    gamma,
                }
            }
        };
        Ok(InverseHessian {
            d,
            init,
            tol,
            repr,
            updates: 0,
            skipped: 0,
            clamp: None,
            clamped: 0,
        })
    }

    /// Containment (spec 001 §6.1 fix b): after every dense update, clip the eigenvalues of B
    /// to [`lo`, `hi`] (0 < lo ≤ hi, hi may be ∞; one O(d³) eigendecomposition per update).
    /// Dense storage only; B₀ is clipped too.
    pub fn with_clamp(mut self, lo: f64, hi: f64) -> Result<Self, Error> {
        if !(lo.is_finite() && lo > 0.0 && hi >= lo) {
            return Err(Error::setting(
                "min_eig",
                alloc::format!(
                    "need 0 < min_eig ≤ max_eig (got {}, {})",
                    crate::settings::number(lo),
                    crate::settings::number(hi)
                ),
            ));
        }
        let d = self.d;
        match &mut self.repr {
            Repr::Dense(b) => {
                if let Some(cb) = clamp_eigenvalues(b, d, lo, hi)? {
                    *b = cb;
                }
            }
            Repr::Lbfgs { .. } => {
                return Err(Error::setting(
                    "min_eig",
                    "eigenvalue clamps need dense storage (store=dense)",
                ))
            }
        }
        self.clamp = Some((lo, hi));
        Ok(self)
    }

    /// Updates whose result had an eigenvalue clipped by [`with_clamp`](Self::with_clamp).
    pub fn clamped(&self) -> usize {
        self.clamped
    }

    /// A fixed dense matrix `b` (row-major d × d, symmetric positive definite); later pairs
    /// update it by dense BFGS without rescaling.
    /// Errors: d > [`DENSE_MAX_D`] (`store`), a wrong length (`Dimension`), an asymmetric
    /// matrix (`inverse_hessian` setting), a matrix that is not positive definite.
    pub fn from_dense(b: Vec<f64>, d: usize, tol: f64) -> Result<Self, Error> {
        let len = dense_len(d)?;
        Error::check_dim("inverse Hessian", len, b.len())?;
        for i in 0..d {
            for j in 0..i {
                if b[i * d + j] != b[j * d + i] {
                    return Err(Error::setting(
                        "inverse_hessian",
                        alloc::format!("not symmetric: entry ({i}, {j}) ≠ entry ({j}, {i})"),
                    ));
                }
            }
        }
        Cholesky::new(&b, d)?;
        let mut h = InverseHessian::new(d, Store::Dense, InitScale::Fixed(1.0), tol)?;
        h.repr = Repr::Dense(b);
        Ok(h)
    }

    /// Dimension d.
    pub fn dim(&self) -> usize {
        self.d
    }
    /// Pairs used so far.
    pub fn updates(&self) -> usize {
        self.updates
    }
    /// Pairs skipped by the curvature safeguard (or non-finite) so far.
    pub fn skipped(&self) -> usize {
        self.skipped
    }
    /// Whether the estimate is a dense matrix.
    pub fn is_dense(&self) -> bool {
        matches!(self.repr, Repr::Dense(_))
    }

    /// A scale summary: tr(B)/d for dense storage, γ of B₀ = γ I for L-BFGS.
    pub fn scale(&self) -> f64 {
        match &self.repr {
            Repr::Dense(b) => (0..self.d).map(|i| b[i * self.d + i]).sum::<f64>() / self.d as f64,
            Repr::Lbfgs { gamma, .. } => *gamma,
        }
    }

    /// out = B v (dense: one matrix–vector product; L-BFGS: the two-loop recursion).
    pub fn apply(&self, v: &[f64], out: &mut [f64]) {
        match &self.repr {
            Repr::Dense(b) => crate::linalg::matvec(b, self.d, v, out),
            Repr::Lbfgs { pairs, gamma } => pairs.apply(*gamma, v, out),
        }
    }

    /// B as a dense row-major d × d matrix (L-BFGS: B applied to each unit vector, symmetrised).
    pub fn to_dense(&self) -> Vec<f64> {
        let d = self.d;
        match &self.repr {
            Repr::Dense(b) => b.clone(),
            Repr::Lbfgs { .. } => {
                let mut out = vec![0.0; d * d];
                let mut e = vec![0.0; d];
                let mut col = vec![0.0; d];
                for j in 0..d {
                    e[j] = 1.0;
                    self.apply(&e, &mut col);
                    e[j] = 0.0;
                    for i in 0..d {
                        out[i * d + j] = col[i];
                    }
                }
                for i in 0..d {
                    for j in 0..i {
                        let m = 0.5 * (out[i * d + j] + out[j * d + i]);
                        out[i * d + j] = m;
                        out[j * d + i] = m;
                    }
                }
                out
            }
        }
    }

    /// Use the pair s = θ₊ − θ, y = ∇U(θ₊) − ∇U(θ) if yᵀs > δ ‖s‖ ‖y‖ (and everything is
    /// finite); returns whether it was used. Wrong lengths count as skipped.
    pub fn update(&mut self, s: &[f64], y: &[f64]) -> bool {
        let d = self.d;
        if s.len() != d || y.len() != d {
            self.skipped += 1;
            return false;
        }
        let sy = dot(s, y);
        let ss = dot(s, s);
        let yy = dot(y, y);
        let ok = sy.is_finite()
            && ss.is_finite()
            && yy.is_finite()
            && ss > 0.0
            && yy > 0.0
            && sy > self.tol * math::sqrt(ss) * math::sqrt(yy);
        if !ok {
            self.skipped += 1;
            return false;
        }
        let rho = 1.0 / sy;
        let gamma_new = sy / yy;
        if !(rho.is_finite() && gamma_new.is_finite() && gamma_new > 0.0) {
            self.skipped += 1;
            return false;
        }
        let first = self.updates == 0;
        let scaled = matches!(self.init, InitScale::Scaled);
        let clamp = self.clamp;
        match &mut self.repr {
            Repr::Dense(b) => {
                // The candidate is built aside and committed only if every entry is finite.
                let mut nb = if first && scaled {
                    let mut g = vec![0.0; d * d];
                    for i in 0..d {
                        g[i * d + i] = gamma_new;
                    }
                    g
                } else {
                    b.clone()
                };
                let mut u = vec![0.0; d];
                crate::linalg::matvec(&nb, d, y, &mut u);
                let yu = dot(y, &u);
                let c = rho * rho * yu + rho;
                for i in 0..d {
                    for j in i..d {
                        let v = nb[i * d + j] - rho * (s[i] * u[j] + u[i] * s[j]) + c * s[i] * s[j];
                        nb[i * d + j] = v;
                        nb[j * d + i] = v;
                    }
                }
                if !(c.is_finite() && nb.iter().all(|v| v.is_finite())) {
                    self.skipped += 1;
                    return false;
                }
                if let Some((lo, hi)) = clamp {
                    match clamp_eigenvalues(&nb, d, lo, hi) {
                        Ok(Some(cb)) => {
                            nb = cb;
                            self.clamped += 1;
                        }
                        Ok(None) => {}
                        Err(_) => {
                            self.skipped += 1;
                            return false;
                        }
                    }
                }
                *b = nb;
            }
            Repr::Lbfgs { pairs, gamma } => {
                pairs.push(s, y, rho);
                if scaled {
                    *gamma = gamma_new;
                }
            }
        }
        self.updates += 1;
        true
    }
}
