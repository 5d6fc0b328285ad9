//! The correction distribution X_corr of the minibatch Barker test (Seita et al. 2017): a discrete
//! distribution such that X_norm + X_corr ≈ Logistic(0, 1) when X_norm ~ N(0, σ²).
//!
//! # Formula
//!
//! On the grids Yⱼ = j·h (j = −N_g…N_g, atoms) and Xᵢ = i·h (i = −2N_g…2N_g, evaluation points),
//! h = V/N_g, with Mᵢⱼ = Φ((Xᵢ − Yⱼ)/σ) and vᵢ = S(Xᵢ) = 1/(1 + e^(−Xᵢ)), the masses are
//!
//!   u = argmin ‖M u − v‖₂  subject to  u ≥ 0        (non-negative least squares, Lawson–Hanson)
//!
//! and the reported error is L∞ = maxᵢ |(M u)ᵢ − vᵢ|. It bounds the error of the acceptance
//! probability: supΔ |P(Δ + X_norm + X_corr > 0) − S(Δ)| ≤ L∞ (up to the grid spacing).
//!
//! The tables [`SIGMA_1`] (σ = 1) and [`SIGMA_1_2`] (σ = 1.2) were produced by [`nnls_correction`]
//! with V = 10, N_g = 500; the test suite regenerates them and checks they match and their L∞.

use crate::error::Error;
use crate::math;
use crate::rng::{uniform, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// Logistic CDF S(x) = 1/(1 + e^(−x)).
#[inline]
pub fn logistic_cdf(x: f64) -> f64 {
    math::sigmoid(x)
}

/// The CDF of X_norm + X_corr at x for a table of (location, mass) atoms and X_norm ~ N(0, σ²):
/// Σⱼ uⱼ Φ((x − yⱼ)/σ).
pub fn mixture_cdf(atoms: &[(f64, f64)], sigma: f64, x: f64) -> f64 {
    atoms
        .iter()
        .map(|&(y, u)| u * math::norm_cdf((x - y) / sigma))
        .sum()
}

/// L∞ distance between the CDF of X_norm(σ²) + X_corr and the logistic CDF over the points
/// x = i·h, i = −k…k.
pub fn cdf_error(atoms: &[(f64, f64)], sigma: f64, h: f64, k: usize) -> f64 {
    let k = k as i64;
    (-k..=k)
        .map(|i| {
            let x = i as f64 * h;
            math::abs(mixture_cdf(atoms, sigma, x) - logistic_cdf(x))
        })
        .fold(0.0, f64::max)
}

/// Solve min ‖A x − b‖₂ subject to x ≥ 0 (Lawson & Hanson 1974, Algorithm NNLS).
/// `a` is column-major m × n. Returns x (length n).
pub fn nnls(a: &[f64], m: usize, n: usize, b: &[f64], max_iter: usize) -> Result<Vec<f64>, Error> {
    if a.len() != m * n || b.len() != m || m == 0 || n == 0 {
        return Err(Error::Dimension {
            what: "nnls system",
            expected: m * n,
            got: a.len(),
        });
    }
    let col = |j: usize| &a[j * m..(j + 1) * m];
    let mut x = vec![0.0; n];
    let mut passive = vec![false; n];
    let mut blocked = vec![false; n];
    let mut resid = b.to_vec();
    let mut w = vec![0.0; n];
    let tol = 1e-12 * (m as f64);
    let mut iter = 0;
    loop {
        // w = Aᵀ (b − A x)
        for (j, wj) in w.iter_mut().enumerate() {
            *wj = crate::linalg::dot(col(j), &resid);
        }
        let mut best = None;
        let mut best_w = tol;
        for j in 0..n {
            if !passive[j] && !blocked[j] && w[j] > best_w {
                best_w = w[j];
                best = Some(j);
            }
        }
        let Some(t) = best else { break };
        passive[t] = true;
        let mut first = true;
        loop {
            iter += 1;
            if iter > max_iter {
                return Err(Error::Numerical("nnls: iteration limit reached".into()));
            }
            let idx: Vec<usize> = (0..n).filter(|&j| passive[j]).collect();
            let z = lstsq_cols(a, m, &idx, b)?;
            if z.iter().all(|&v| v > 0.0) {
                for (k, &j) in idx.iter().enumerate() {
                    x[j] = z[k];
                }
                blocked.iter_mut().for_each(|v| *v = false);
                break;
            }
            if first {
                // The column just added cannot enter (round-off): skip it this round.
                if let Some(k) = idx.iter().position(|&j| j == t) {
                    if z[k] <= 0.0 {
                        passive[t] = false;
                        blocked[t] = true;
                        break;
                    }
                }
            }
            first = false;
            let mut alpha = f64::INFINITY;
            let mut arg = None;
            for (k, &j) in idx.iter().enumerate() {
                if z[k] <= 0.0 {
                    let r = x[j] / (x[j] - z[k]);
                    if r < alpha {
                        alpha = r;
                        arg = Some(j);
                    }
                }
            }
            for (k, &j) in idx.iter().enumerate() {
                x[j] += alpha * (z[k] - x[j]);
            }
            if let Some(j) = arg {
                x[j] = 0.0;
            }
            for &j in idx.iter() {
                if x[j] <= 1e-15 {
                    x[j] = 0.0;
                    passive[j] = false;
                }
            }
        }
        resid.copy_from_slice(b);
        for j in 0..n {
            if x[j] != 0.0 {
                for (r, &aij) in resid.iter_mut().zip(col(j)) {
                    *r -= aij * x[j];
                }
            }
        }
        if passive.iter().all(|&p| p) {
            break;
        }
    }
    Ok(x)
}

/// Least squares on the columns `idx` of the column-major m × n matrix `a` by Householder QR.
fn lstsq_cols(a: &[f64], m: usize, idx: &[usize], b: &[f64]) -> Result<Vec<f64>, Error> {
    let k = idx.len();
    if k > m {
        return Err(Error::Numerical(
            "nnls: more passive columns than rows".into(),
        ));
    }
    let mut q: Vec<f64> = Vec::with_capacity(m * k);
    for &j in idx {
        q.extend_from_slice(&a[j * m..(j + 1) * m]);
    }
    let mut rhs = b.to_vec();
    for c in 0..k {
        // Householder vector for column c, rows c..m.
        let norm = math::sqrt(q[c * m + c..(c + 1) * m].iter().map(|v| v * v).sum());
        if norm == 0.0 {
            return Err(Error::Numerical("nnls: rank-deficient passive set".into()));
        }
        let alpha = if q[c * m + c] > 0.0 { -norm } else { norm };
        let mut v: Vec<f64> = q[c * m + c..(c + 1) * m].to_vec();
        v[0] -= alpha;
        let vn2: f64 = v.iter().map(|t| t * t).sum();
        if vn2 > 0.0 {
            for cc in c..k {
                let colv = &mut q[cc * m + c..(cc + 1) * m];
                let s: f64 = colv.iter().zip(&v).map(|(x, y)| x * y).sum::<f64>() * 2.0 / vn2;
                for (x, y) in colv.iter_mut().zip(&v) {
                    *x -= s * y;
                }
            }
            let r = &mut rhs[c..m];
            let s: f64 = r.iter().zip(&v).map(|(x, y)| x * y).sum::<f64>() * 2.0 / vn2;
            for (x, y) in r.iter_mut().zip(&v) {
                *x -= s * y;
            }
        }
    }
    // Back-substitution R z = (Qᵀ b)[..k].
    let mut z = vec![0.0; k];
    for c in (0..k).rev() {
        let mut s = rhs[c];
        for cc in c + 1..k {
            s -= q[cc * m + c] * z[cc];
        }
        let d = q[c * m + c];
        if d == 0.0 || !d.is_finite() {
            return Err(Error::Numerical("nnls: singular triangular factor".into()));
        }
        z[c] = s / d;
    }
    Ok(z)
}

/// Build the correction table for X_norm ~ N(0, σ²) by non-negative least squares on the grid
/// of half-width `v` with `ng` atoms per side (see the module formula). Returns the atoms with
/// positive mass as (location, mass), sorted by location.
pub fn nnls_correction(sigma: f64, v: f64, ng: usize) -> Result<Vec<(f64, f64)>, Error> {
    if !(sigma > 0.0 && sigma < 1.8) {
        return Err(Error::setting("sigma", "must be in (0, 1.8)"));
    }
    if !(v > 0.0 && v.is_finite()) || ng == 0 {
        return Err(Error::setting("grid", "half-width and size must be > 0"));
    }
    let h = v / ng as f64;
    let n = 2 * ng + 1;
    let m = 4 * ng + 1;
    let ys: Vec<f64> = (0..n).map(|j| (j as f64 - ng as f64) * h).collect();
    let xs: Vec<f64> = (0..m).map(|i| (i as f64 - 2.0 * ng as f64) * h).collect();
    let mut a = Vec::with_capacity(m * n);
    for &y in &ys {
        for &x in &xs {
            a.push(math::norm_cdf((x - y) / sigma));
        }
    }
    let b: Vec<f64> = xs.iter().map(|&x| logistic_cdf(x)).collect();
    let u = nnls(&a, m, n, &b, 10 * n)?;
    Ok(ys.into_iter().zip(u).filter(|&(_, w)| w > 0.0).collect())
}

/// A correction distribution ready to sample: atoms and their cumulative normalised masses.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    sigma: f64,
    atoms: Vec<f64>,
    cum: Vec<f64>,
}

impl Correction {
    /// From (location, mass) atoms for X_norm ~ N(0, σ²). Masses are normalised to sum 1.
    pub fn new(atoms: &[(f64, f64)], sigma: f64) -> Result<Self, Error> {
        if !(sigma > 0.0 && sigma.is_finite()) {
            return Err(Error::setting("sigma", "must be a finite number > 0"));
        }
        if atoms.is_empty()
            || atoms
                .iter()
                .any(|&(y, u)| !y.is_finite() || !u.is_finite() || u < 0.0)
        {
            return Err(Error::setting(
                "correction",
                "atoms must be finite with non-negative masses",
            ));
        }
        let total: f64 = atoms.iter().map(|a| a.1).sum();
        if total <= 0.0 {
            return Err(Error::setting("correction", "total mass must be > 0"));
        }
        let mut acc = 0.0;
        let mut cum = Vec::with_capacity(atoms.len());
        for &(_, u) in atoms {
            acc += u / total;
            cum.push(acc);
        }
        if let Some(last) = cum.last_mut() {
            *last = 1.0;
        }
        Ok(Correction {
            sigma,
            atoms: atoms.iter().map(|a| a.0).collect(),
            cum,
        })
    }

    /// The embedded σ = 1 table.
    pub fn sigma_1() -> Self {
        Self::builtin(&SIGMA_1, 1.0)
    }

    /// The embedded σ = 1.2 table (looser variance condition s² < 1.44).
    pub fn sigma_1_2() -> Self {
        Self::builtin(&SIGMA_1_2, 1.2)
    }

    fn builtin(atoms: &[(f64, f64)], sigma: f64) -> Self {
        let total: f64 = atoms.iter().map(|a| a.1).sum();
        let mut acc = 0.0;
        let cum = atoms
            .iter()
            .map(|&(_, u)| {
                acc += u / total;
                acc
            })
            .collect::<Vec<_>>();
        let mut c = Correction {
            sigma,
            atoms: atoms.iter().map(|a| a.0).collect(),
            cum,
        };
        if let Some(last) = c.cum.last_mut() {
            *last = 1.0;
        }
        c
    }

    /// σ of the Gaussian part this table corrects.
    pub fn sigma(&self) -> f64 {
        self.sigma
    }

    /// Atoms as (location, normalised mass).
    pub fn atoms(&self) -> Vec<(f64, f64)> {
        let mut prev = 0.0;
        self.atoms
            .iter()
            .zip(&self.cum)
            .map(|(&y, &c)| {
                let u = c - prev;
                prev = c;
                (y, u)
            })
            .collect()
    }

    /// One draw of X_corr (inverse CDF on the atoms).
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> f64 {
        let u = uniform(rng);
        let k = self.cum.partition_point(|&c| c <= u);
        let k = k.min(self.atoms.len().saturating_sub(1));
        self.atoms.get(k).copied().unwrap_or(0.0)
    }
}

/// σ = 1 correction atoms (location, mass): NNLS, V = 10, N_g = 500.
pub const SIGMA_1: [(f64, f64); 25] = [
    (-10.0, 8.281816660499703e-5),
    (-7.74, 8.320067115011528e-5),
    (-7.68, 0.0004465940013430897),
    (-6.16, 0.0008563967571361055),
    (-5.78, 0.0018208886701330984),
    (-4.54, 0.006542557432588254),
    (-4.14, 0.002370115905090301),
    (-3.58, 0.010243702546822855),
    (-2.7800000000000002, 0.03483739619190874),
    (-2.02, 0.039780485411968096),
    (-1.48, 0.06701646009018891),
    (-0.96, 0.13586123647248044),
    (-0.02, 0.3852291490576131),
    (0.9, 0.1446232196468844),
    (1.34, 0.0421577914653525),
    (1.78, 0.05931714071503567),
    (2.46, 0.031176340307745853),
    (3.18, 0.02335042922948788),
    (4.0, 0.0030662258409400503),
    (4.5, 0.007948071520576644),
    (5.82, 0.0014211556318145424),
    (6.08, 0.0011654209707991825),
    (7.6000000000000005, 0.00016077119726957926),
    (7.76, 0.00036173889076237484),
    (10.0, 7.959659709601018e-5),
];

/// σ = 1.2 correction atoms (location, mass): NNLS, V = 10, N_g = 500.
pub const SIGMA_1_2: [(f64, f64); 19] = [
    (-10.0, 5.684594114174271e-5),
    (-8.18, 0.00025718378871061203),
    (-5.98, 0.002547049950437319),
    (-5.94, 0.00027040408150542076),
    (-3.8000000000000003, 0.020515907172740554),
    (-3.72, 0.0021522800788484012),
    (-1.86, 0.031283483909151116),
    (-1.8, 0.11300263794061967),
    (-0.06, 0.2648180538267014),
    (0.04, 0.3949206542711915),
    (1.8, 0.11502818888557298),
    (1.86, 0.02930087323331783),
    (3.7600000000000002, 0.01412269921927593),
    (3.84, 0.008588072257870524),
    (5.94, 0.00032687153025387657),
    (5.98, 0.0024969144024819994),
    (8.2, 0.00020168676144299012),
    (8.24, 5.646177318508644e-5),
    (10.0, 5.280500637935314e-5),
];
