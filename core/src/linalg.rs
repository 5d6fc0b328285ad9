//! Small dense linear algebra on row-major `d × d` slices: Cholesky, triangular solves,
//! symmetric eigendecomposition (Jacobi),
//! products. Sized for d up to a few hundred.
//!
//! # Formula
//! A = L Lᵀ (L lower triangular, positive diagonal), computed row by row
//! (Cholesky–Banachiewicz), O(d³/3) flops.

use crate::error::Error;
use crate::math;
use alloc::vec;
use alloc::vec::Vec;

/// Dot product.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..a.len().min(b.len()) {
        s += a[i] * b[i];
    }
    s
}

/// out = A x for row-major `d × d` A.
pub fn matvec(a: &[f64], d: usize, x: &[f64], out: &mut [f64]) {
    for i in 0..d {
        out[i] = dot(&a[i * d..(i + 1) * d], x);
    }
}

/// A d × d identity matrix.
pub fn identity(d: usize) -> Vec<f64> {
    let mut m = vec![0.0; d * d];
    for i in 0..d {
        m[i * d + i] = 1.0;
    }
    m
}

/// The Cholesky factor L of a symmetric positive-definite matrix.
#[derive(Debug, Clone, PartialEq)]
pub struct Cholesky {
    d: usize,
    /// Row-major lower-triangular factor (upper part zero).
    l: Vec<f64>,
}

impl Cholesky {
    /// Factor the row-major `d × d` matrix `a` (only its lower triangle is read).
    /// Fails with [`Error::NotPositiveDefinite`] on a non-positive or non-finite pivot.
    pub fn new(a: &[f64], d: usize) -> Result<Self, Error> {
        Error::check_dim("matrix", d * d, a.len())?;
        let mut l = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..=i {
                let mut s = a[i * d + j];
                for k in 0..j {
                    s -= l[i * d + k] * l[j * d + k];
                }
                if i == j {
                    if s.is_nan() || s <= 0.0 || !s.is_finite() {
                        return Err(Error::NotPositiveDefinite);
                    }
                    l[i * d + i] = math::sqrt(s);
                } else {
                    l[i * d + j] = s / l[j * d + j];
                }
            }
        }
        Ok(Cholesky { d, l })
    }

    /// Dimension.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// The factor, row-major.
    pub fn factor(&self) -> &[f64] {
        &self.l
    }

    /// out = L z.
    pub fn mul_l(&self, z: &[f64], out: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            out[i] = dot(&self.l[i * d..i * d + i + 1], &z[..i + 1]);
        }
    }

    /// out = Lᵀ z.
    pub fn mul_lt(&self, z: &[f64], out: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            let mut s = 0.0;
            for k in i..d {
                s += self.l[k * d + i] * z[k];
            }
            out[i] = s;
        }
    }

    /// In place: b ← L⁻¹ b.
    pub fn solve_l(&self, b: &mut [f64]) {
        let d = self.d;
        for i in 0..d {
            let mut s = b[i];
            for k in 0..i {
                s -= self.l[i * d + k] * b[k];
            }
            b[i] = s / self.l[i * d + i];
        }
    }

    /// In place: each d-long row b of `rows` (row-major; a partial last row is left as is)
    /// ← L⁻¹ b, eight rows at a time (transposed, so that each step of the substitution is
    /// one operation on the eight rows' numbers): the same operations in the same order as
    /// [`solve_l`](Self::solve_l) row by row (the same bits), without one row's chain of
    /// dependent subtractions waiting on each other. Compiled for the running CPU
    /// ([`crate::cpu`]; the same bits on either path).
    pub fn solve_l_rows(&self, rows: &mut [f64]) {
        crate::on_cpu!(self.solve_l_rows_avx2(rows), self.solve_l_rows_any(rows))
    }

    crate::avx2_twin!(fn solve_l_rows_avx2 = solve_l_rows_any(&self, rows: &mut [f64]));

    #[inline(always)]
    fn solve_l_rows_any(&self, rows: &mut [f64]) {
        const R: usize = 8;
        let d = self.d;
        if d == 0 {
            return;
        }
        // The eight rows transposed (t[k] holds coordinate k of each), so that each step of a
        // substitution is one operation on eight contiguous numbers.
        let mut t: alloc::vec::Vec<[f64; R]> = alloc::vec![[0.0; R]; d];
        let mut octs = rows.chunks_exact_mut(R * d);
        for block in &mut octs {
            for (k, tk) in t.iter_mut().enumerate() {
                *tk = core::array::from_fn(|j| block[j * d + k]);
            }
            for i in 0..d {
                let li = &self.l[i * d..i * d + i + 1];
                let (done, rest) = t.split_at_mut(i);
                let mut s = rest[0];
                for (&lik, tk) in li[..i].iter().zip(done.iter()) {
                    for j in 0..R {
                        s[j] -= lik * tk[j];
                    }
                }
                for sj in s.iter_mut() {
                    *sj /= li[i];
                }
                rest[0] = s;
            }
            for (k, tk) in t.iter().enumerate() {
                for (j, &v) in tk.iter().enumerate() {
                    block[j * d + k] = v;
                }
            }
        }
        for row in octs.into_remainder().chunks_exact_mut(d) {
            self.solve_l(row);
        }
    }

    /// In place: b ← L⁻ᵀ b.
    pub fn solve_lt(&self, b: &mut [f64]) {
        let d = self.d;
        for i in (0..d).rev() {
            let mut s = b[i];
            for k in i + 1..d {
                s -= self.l[k * d + i] * b[k];
            }
            b[i] = s / self.l[i * d + i];
        }
    }

    /// In place: b ← A⁻¹ b.
    pub fn solve(&self, b: &mut [f64]) {
        self.solve_l(b);
        self.solve_lt(b);
    }

    /// log det A = 2 Σ log Lᵢᵢ.
    pub fn log_det(&self) -> f64 {
        (0..self.d)
            .map(|i| 2.0 * math::ln(self.l[i * self.d + i]))
            .sum()
    }

    /// A⁻¹, row-major.
    pub fn inverse(&self) -> Vec<f64> {
        let d = self.d;
        let mut inv = vec![0.0; d * d];
        let mut col = vec![0.0; d];
        for j in 0..d {
            col.iter_mut().for_each(|c| *c = 0.0);
            col[j] = 1.0;
            self.solve(&mut col);
            for i in 0..d {
                inv[i * d + j] = col[i];
            }
        }
        inv
    }
}

/// Eigendecomposition of a symmetric matrix: A = V diag(λ) Vᵀ.
#[derive(Debug, Clone, PartialEq)]
pub struct SymmetricEigen {
    /// Eigenvalues, in decreasing order.
    pub values: Vec<f64>,
    /// Eigenvectors as the columns of a row-major `d × d` matrix: `vectors[i * d + j]` is
    /// component i of the eigenvector of `values[j]`. Orthonormal.
    pub vectors: Vec<f64>,
}

/// Largest dimension for which [`extreme_eigenvalues`] runs the full Jacobi decomposition.
pub const JACOBI_MAX_DIM: usize = 200;

/// The largest and smallest eigenvalues (λ_max, λ_min) of the symmetric d × d matrix `a`
/// (row-major). Up to [`JACOBI_MAX_DIM`] from [`symmetric_eigen`] (exact to rounding); above,
/// by power iteration, on A for λ_max and on λ_max·I − A for λ_min (O(d²) per iteration
/// instead of O(d³) per Jacobi sweep: at d = 900 the sweeps took minutes), stopped when the
/// Rayleigh quotient changes by less than 1e−9 relative (at most 2000 iterations), which is
/// ample for the step-size and pilot-length rules that use them.
///
/// Errors: wrong length or a non-finite entry.
pub fn extreme_eigenvalues(a: &[f64], d: usize) -> Result<(f64, f64), Error> {
    if d <= JACOBI_MAX_DIM {
        let e = symmetric_eigen(a, d)?;
        let max = e.values.first().copied().unwrap_or(f64::NAN);
        let min = e.values.last().copied().unwrap_or(f64::NAN);
        return Ok((max, min));
    }
    Error::check_dim("matrix", d * d, a.len())?;
    if a.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical("eigenvalues: a non-finite entry".into()));
    }
    let lmax = power_iteration(a, d, 0.0)?;
    // B = λ_max·I − A is positive semi-definite with top eigenvalue λ_max − λ_min.
    let shift = lmax;
    let top = power_iteration(a, d, shift)?;
    Ok((lmax, shift - top))
}

/// The dominant eigenvalue of A (`shift` = 0, assuming it is the largest: A's top eigenvalue
/// when that is ≥ |λ_min|) or of shift·I − A (`shift` ≠ 0), by power iteration from a fixed
/// start; for A itself the Rayleigh quotient of A is returned.
fn power_iteration(a: &[f64], d: usize, shift: f64) -> Result<f64, Error> {
    power_iteration_op(d, shift, |v, w| {
        for i in 0..d {
            w[i] = dot(&a[i * d..(i + 1) * d], v);
        }
    })
    .map(|(rq, _)| rq)
}

/// Most products [`power_iteration_op`] applies.
pub const POWER_ITERATION_MAX: usize = 2000;

/// [`extreme_eigenvalues`]' power iteration on a symmetric operator given by its products:
/// `apply(v, w)` writes A v into `w` (every entry). Returns the dominant eigenvalue of A
/// (`shift` = 0) or of shift·I − A, by the Rayleigh quotient, and the number of products
/// applied (at most [`POWER_ITERATION_MAX`]; stopped when the quotient changes by less than
/// 1e−9 relative). For matrix-free curvature at large d: no d × d matrix is formed.
///
/// Errors: a non-finite result.
pub fn power_iteration_op(
    d: usize,
    shift: f64,
    mut apply: impl FnMut(&[f64], &mut [f64]),
) -> Result<(f64, usize), Error> {
    let mut v: Vec<f64> = (0..d).map(|i| 1.0 + (i as f64 + 1.0) / d as f64).collect();
    let mut w = vec![0.0; d];
    let norm = |x: &[f64]| math::sqrt(dot(x, x));
    let nv = norm(&v);
    v.iter_mut().for_each(|x| *x /= nv);
    let mut rq_prev = f64::NAN;
    let mut rq = f64::NAN;
    let mut products = 0;
    for _ in 0..POWER_ITERATION_MAX {
        apply(&v, &mut w);
        products += 1;
        if shift != 0.0 {
            for i in 0..d {
                w[i] = shift * v[i] - w[i];
            }
        }
        rq = dot(&v, &w);
        let nw = norm(&w);
        if !(nw.is_finite() && nw > 0.0) {
            break;
        }
        for i in 0..d {
            v[i] = w[i] / nw;
        }
        if math::abs(rq - rq_prev) <= 1e-9 * math::abs(rq) {
            break;
        }
        rq_prev = rq;
    }
    if !rq.is_finite() {
        return Err(Error::Numerical(
            "eigenvalues: power iteration failed".into(),
        ));
    }
    Ok((rq, products))
}

/// Symmetric eigendecomposition by the cyclic Jacobi method (only the upper triangle of the
/// row-major `d × d` matrix `a` is read; it is symmetrised first).
///
/// # Formula
/// Each rotation in the (p, q) plane zeroes a_pq: θ = (a_qq − a_pp)/(2a_pq),
/// t = sign(θ)/(|θ| + √(θ² + 1)), c = 1/√(1 + t²), s = t·c; A ← JᵀAJ, V ← VJ.
/// Sweeps repeat until the off-diagonal Frobenius norm is below 1e−15 of the total norm
/// (quadratic convergence, typically 6–10 sweeps). Cost O(d³) per sweep.
///
/// Errors: wrong length, a non-finite entry, or no convergence within 100 sweeps.
pub fn symmetric_eigen(a: &[f64], d: usize) -> Result<SymmetricEigen, Error> {
    Error::check_dim("matrix", d * d, a.len())?;
    if a.iter().any(|v| !v.is_finite()) {
        return Err(Error::Numerical("eigen: non-finite matrix entry".into()));
    }
    let mut m = vec![0.0; d * d];
    for i in 0..d {
        for j in i..d {
            m[i * d + j] = a[i * d + j];
            m[j * d + i] = a[i * d + j];
        }
    }
    let mut v = identity(d);
    let total: f64 = m.iter().map(|x| x * x).sum();
    let mut converged = false;
    for _sweep in 0..100 {
        let mut off = 0.0;
        for p in 0..d {
            for q in p + 1..d {
                off += 2.0 * m[p * d + q] * m[p * d + q];
            }
        }
        if off <= 1e-30 * total || off == 0.0 {
            converged = true;
            break;
        }
        for p in 0..d {
            for q in p + 1..d {
                let apq = m[p * d + q];
                if apq == 0.0 {
                    continue;
                }
                let theta = (m[q * d + q] - m[p * d + p]) / (2.0 * apq);
                let t = if theta >= 0.0 {
                    1.0 / (theta + math::sqrt(theta * theta + 1.0))
                } else {
                    -1.0 / (-theta + math::sqrt(theta * theta + 1.0))
                };
                let c = 1.0 / math::sqrt(1.0 + t * t);
                let s = t * c;
                // Columns p and q of M ← M J.
                for k in 0..d {
                    let mkp = m[k * d + p];
                    let mkq = m[k * d + q];
                    m[k * d + p] = c * mkp - s * mkq;
                    m[k * d + q] = s * mkp + c * mkq;
                }
                // Rows p and q of M ← Jᵀ M.
                for k in 0..d {
                    let mpk = m[p * d + k];
                    let mqk = m[q * d + k];
                    m[p * d + k] = c * mpk - s * mqk;
                    m[q * d + k] = s * mpk + c * mqk;
                }
                m[p * d + q] = 0.0;
                m[q * d + p] = 0.0;
                for k in 0..d {
                    let vkp = v[k * d + p];
                    let vkq = v[k * d + q];
                    v[k * d + p] = c * vkp - s * vkq;
                    v[k * d + q] = s * vkp + c * vkq;
                }
            }
        }
    }
    if !converged {
        return Err(Error::Numerical(
            "eigen: Jacobi did not converge in 100 sweeps".into(),
        ));
    }
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&x, &y| {
        m[y * d + y]
            .partial_cmp(&m[x * d + x])
            .unwrap_or(core::cmp::Ordering::Equal)
    });
    let values: Vec<f64> = order.iter().map(|&j| m[j * d + j]).collect();
    let mut vectors = vec![0.0; d * d];
    for (new, &old) in order.iter().enumerate() {
        for i in 0..d {
            vectors[i * d + new] = v[i * d + old];
        }
    }
    Ok(SymmetricEigen { values, vectors })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spd(d: usize) -> Vec<f64> {
        // A = B Bᵀ + d I with a fixed B
        let mut b = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                b[i * d + j] = ((i * 7 + j * 3) % 5) as f64 - 2.0;
            }
        }
        let mut a = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                a[i * d + j] = dot(&b[i * d..(i + 1) * d], &b[j * d..(j + 1) * d]);
            }
            a[i * d + i] += d as f64;
        }
        a
    }

    /// Eight rows at a time give each row the bits of `solve_l` alone, for every width and
    /// a partial last block; a trailing partial row is left untouched.
    #[test]
    fn solve_l_rows_gives_the_bits_of_solve_l() {
        for d in [1usize, 2, 5, 30] {
            let c = Cholesky::new(&spd(d), d).unwrap();
            for rows in [0usize, 1, 7, 8, 9, 17, 40] {
                let x: Vec<f64> = (0..rows * d + d / 2)
                    .map(|k| libm::sin(k as f64 * 0.37) * 3.0 + 0.1)
                    .collect();
                let mut many = x.clone();
                c.solve_l_rows(&mut many);
                let mut one = x.clone();
                for row in one[..rows * d].chunks_exact_mut(d) {
                    c.solve_l(row);
                }
                assert!(
                    many.iter()
                        .zip(&one)
                        .all(|(a, b)| a.to_bits() == b.to_bits()),
                    "d = {d}, rows = {rows}"
                );
            }
        }
    }

    #[test]
    fn factor_solve_inverse() {
        let d = 6;
        let a = spd(d);
        let c = Cholesky::new(&a, d).unwrap();
        // L Lᵀ = A
        let l = c.factor();
        for i in 0..d {
            for j in 0..d {
                let s: f64 = (0..d).map(|k| l[i * d + k] * l[j * d + k]).sum();
                assert!((s - a[i * d + j]).abs() < 1e-10);
            }
        }
        let x: Vec<f64> = (0..d).map(|i| i as f64 - 2.5).collect();
        let mut b = vec![0.0; d];
        matvec(&a, d, &x, &mut b);
        c.solve(&mut b);
        for i in 0..d {
            assert!((b[i] - x[i]).abs() < 1e-10);
        }
        let inv = c.inverse();
        let mut e = vec![0.0; d];
        let mut col = vec![0.0; d];
        for j in 0..d {
            for i in 0..d {
                col[i] = inv[i * d + j];
            }
            matvec(&a, d, &col, &mut e);
            for i in 0..d {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((e[i] - want).abs() < 1e-10);
            }
        }
        // L z then L⁻¹ back
        let z = [1.0, -2.0, 0.5, 3.0, 0.0, 1.5];
        let mut lz = [0.0; 6];
        c.mul_l(&z, &mut lz);
        c.solve_l(&mut lz);
        let mut ltz = [0.0; 6];
        c.mul_lt(&z, &mut ltz);
        c.solve_lt(&mut ltz);
        for i in 0..d {
            assert!((lz[i] - z[i]).abs() < 1e-12 && (ltz[i] - z[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn rejects_indefinite_and_nan() {
        assert_eq!(
            Cholesky::new(&[1.0, 2.0, 2.0, 1.0], 2),
            Err(Error::NotPositiveDefinite)
        );
        assert_eq!(
            Cholesky::new(&[f64::NAN], 1),
            Err(Error::NotPositiveDefinite)
        );
        assert!(Cholesky::new(&[1.0], 2).is_err());
    }
    #[test]
    fn jacobi_eigen_reconstructs() {
        for d in [1usize, 2, 5, 9] {
            let a = spd(d);
            // make it indefinite too
            let mut b = a.clone();
            for i in 0..d {
                b[i * d + i] -= 2.0 * d as f64;
            }
            for m in [&a, &b] {
                let e = symmetric_eigen(m, d).unwrap();
                for w in e.values.windows(2) {
                    assert!(w[0] >= w[1]);
                }
                let v = &e.vectors;
                for i in 0..d {
                    for j in 0..d {
                        let vtv: f64 = (0..d).map(|k| v[k * d + i] * v[k * d + j]).sum();
                        let want = if i == j { 1.0 } else { 0.0 };
                        assert!((vtv - want).abs() < 1e-12);
                        let rec: f64 = (0..d)
                            .map(|k| v[i * d + k] * e.values[k] * v[j * d + k])
                            .sum();
                        assert!((rec - m[i * d + j]).abs() < 1e-10 * (1.0 + m[i * d + j].abs()));
                    }
                }
                let tr: f64 = (0..d).map(|i| m[i * d + i]).sum();
                assert!((e.values.iter().sum::<f64>() - tr).abs() < 1e-9 * (1.0 + tr.abs()));
            }
        }
        assert!(symmetric_eigen(&[1.0, f64::NAN, 0.0, 1.0], 2).is_err());
        assert!(symmetric_eigen(&[1.0], 2).is_err());
        // Known spectrum: [[2, 1], [1, 2]] has eigenvalues 3 and 1.
        let e = symmetric_eigen(&[2.0, 1.0, 1.0, 2.0], 2).unwrap();
        assert!((e.values[0] - 3.0).abs() < 1e-14 && (e.values[1] - 1.0).abs() < 1e-14);
    }
}
