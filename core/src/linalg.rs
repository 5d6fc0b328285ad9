//! Small dense linear algebra on row-major `d × d` slices: Cholesky, triangular solves,
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
        if a.len() != d * d {
            return Err(Error::Dimension {
                what: "matrix",
                expected: d * d,
                got: a.len(),
            });
        }
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
}
