//! Exact k-DPP sampling (Kulesza & Taskar 2011, Alg. 1 + Alg. 8; thesis Algorithm 6 with its
//! typos corrected, spec 003 §2.10) and the exact inclusion probabilities.
//!
//! # Formula
//! For an L-ensemble kernel L = Σₙ λₙ vₙvₙᵀ (PSD, n × n) the k-DPP is
//! P(Y) = det(L_Y) / e_k(λ₁, …, λ_N) over subsets |Y| = k, with e_k the elementary symmetric
//! polynomial. Sampling:
//! 1. eₗ⁰ = [l = 0], eₗᵐ = eₗᵐ⁻¹ + λₘ eₗ₋₁ᵐ⁻¹ (kept in logs, so no overflow);
//! 2. l = k; for m = N … 1: keep m with probability λₘ eₗ₋₁ᵐ⁻¹ / eₗᵐ (then l ← l − 1);
//! 3. sample the projection DPP with kernel K = Σ_{m kept} vₘvₘᵀ: item i with probability
//!    K_ii^{(t)}/(k − t), then condition on it (K ← K − K·ᵢKᵢ·/Kᵢᵢ); O(N k²) per draw.
//!
//! Inclusion probabilities: πᵢ = Σₙ λₙ vₙ(i)² e_{k−1}(λ₋ₙ) / e_k(λ), Σᵢ πᵢ = k.
//!
//! Low-rank kernels with a nugget, L = FFᵀ + νI (F: N × p), are handled without the N × N
//! eigendecomposition: the p × p matrix FᵀF = QMQᵀ (Jacobi) gives the top eigenpairs
//! (μⱼ + ν, F qⱼ/√μⱼ), and the remaining N − r eigenvalues all equal ν. Because those are
//! exchangeable, step 2 only decides which top eigenvectors are kept (the rest, r′ of them,
//! come from the ν-eigenspace) and step 3 uses a Haar-random r′-dimensional subspace of the
//! orthogonal complement of the top eigenvectors (the k-DPP does not depend on the basis
//! chosen for a repeated eigenvalue, so averaging over bases is exact). Set-up
//! O(N p² + p³), each draw O(N k (k + p)) flops — a cost that is not a per-datum gradient
//! evaluation and is not counted in `grad_evals`.

use crate::dist;
use crate::error::Error;
use crate::linalg::symmetric_eigen;
use crate::math;
use crate::rng::{uniform, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// Largest k·n of a `dpp-sgld` chain: each k-DPP draw keeps about 2k work vectors of length n
/// (5·10⁷ → 800 MB), and costs O(n k (k + d)) flops.
pub const DPP_MAX_KN: usize = 50_000_000;
/// A k-DPP over the ground set `0..n` with an L-ensemble kernel given by its spectrum:
/// explicit top eigenpairs plus (optionally) an eigenvalue ν of multiplicity n − r whose
/// eigenspace is the orthogonal complement of the top eigenvectors.
#[derive(Debug, Clone)]
pub struct KDpp {
    n: usize,
    k: usize,
    /// Top eigenvalues λⱼ, j < r.
    lambda: Vec<f64>,
    /// Top eigenvectors U (n × r) stored column by column, i.e. Uᵀ row-major: eigenvector j is
    /// `ut[j * n..(j + 1) * n]`.
    ut: Vec<f64>,
    /// The repeated eigenvalue ν of the complement and its multiplicity c = n − r.
    nu: f64,
    c: usize,
    /// log eₗ over (complement ∪ first m top eigenvalues): (r + 1) × (k + 1).
    log_e: Vec<f64>,
    incl: Vec<f64>,
    // workspaces
    basis: Vec<Vec<f64>>,
    chol: Vec<Vec<f64>>,
    resid: Vec<f64>,
}

fn ln_choose(c: usize, l: usize) -> f64 {
    if l > c {
        return f64::NEG_INFINITY;
    }
    math::ln_gamma(c as f64 + 1.0)
        - math::ln_gamma(l as f64 + 1.0)
        - math::ln_gamma((c - l) as f64 + 1.0)
}

fn ln_pos(x: f64) -> f64 {
    if x > 0.0 {
        math::ln(x)
    } else {
        f64::NEG_INFINITY
    }
}

/// The table of log e_l, l = 0..=k, over (c copies of ν) ∪ the first m of
/// {λⱼ : j ∈ top, j ≠ skip}, one row per m (row-major, (rows) × (k + 1)); the last row is the
/// whole multiset.
fn log_esp(nu: f64, c: usize, top: &[f64], skip: Option<usize>, k: usize) -> Vec<f64> {
    let mut row: Vec<f64> = (0..=k)
        .map(|l| {
            if l == 0 {
                0.0
            } else {
                ln_choose(c, l) + l as f64 * ln_pos(nu)
            }
        })
        .collect();
    let mut all = row.clone();
    for (j, &lam) in top.iter().enumerate() {
        if Some(j) == skip {
            continue;
        }
        let ll = ln_pos(lam);
        let prev = row.clone();
        for l in 1..=k {
            row[l] = math::log_add_exp(prev[l], ll + prev[l - 1]);
        }
        all.extend_from_slice(&row);
    }
    all
}

/// log e_0 … log e_k of `values` (negative values count as 0). For tests and diagnostics.
pub fn log_elementary_symmetric(values: &[f64], k: usize) -> Vec<f64> {
    let all = log_esp(0.0, 0, values, None, k);
    all[all.len() - (k + 1)..].to_vec()
}

impl KDpp {
    /// A k-DPP from a full eigendecomposition of L: `values` (length n) and `vectors` (row-major
    /// n × n, eigenvectors in columns, as [`crate::linalg::SymmetricEigen`]). Eigenvalues
    /// below 1e−12·max are treated as 0. Errors: wrong sizes, k = 0, k > rank(L), or
    /// k·n > [`DPP_MAX_KN`] (every constructor checks this work-space bound).
    pub fn from_eigen(values: &[f64], vectors: &[f64], k: usize) -> Result<Self, Error> {
        let n = values.len();
        Error::check_dim("eigenvectors", n * n, vectors.len())?;
        let vmax = values.iter().cloned().fold(0.0f64, f64::max);
        let lambda: Vec<f64> = values
            .iter()
            .map(|&v| if v > 1e-12 * vmax { v } else { 0.0 })
            .collect();
        Self::build(n, k, lambda, vectors.to_vec(), 0.0)
    }

    /// A k-DPP from the kernel matrix L itself (row-major n × n, symmetric PSD): Jacobi
    /// eigendecomposition, O(n³). For small ground sets.
    pub fn from_kernel(l: &[f64], n: usize, k: usize) -> Result<Self, Error> {
        let e = symmetric_eigen(l, n)?;
        Self::from_eigen(&e.values, &e.vectors, k)
    }

    /// The k-DPP of the linear kernel with nugget L = FFᵀ + νI, `f` row-major n × p, without
    /// forming L (see the module docs). Errors: wrong sizes, non-finite entries, ν < 0,
    /// k = 0, or k > rank(L) (possible only when ν = 0).
    pub fn linear_kernel(
        f: &[f64],
        n: usize,
        p: usize,
        nugget: f64,
        k: usize,
    ) -> Result<Self, Error> {
        if f.len() != n * p || p == 0 {
            return Err(Error::Dimension {
                what: "DPP features",
                expected: n * p.max(1),
                got: f.len(),
            });
        }
        if !(nugget >= 0.0 && nugget.is_finite()) {
            return Err(Error::setting("dpp_nugget", "must be finite and ≥ 0"));
        }
        let mut ftf = vec![0.0; p * p];
        for row in f.chunks(p) {
            for a in 0..p {
                for b in 0..p {
                    ftf[a * p + b] += row[a] * row[b];
                }
            }
        }
        let e = symmetric_eigen(&ftf, p)?;
        let mmax = e.values.first().copied().unwrap_or(0.0).max(0.0);
        let keep: Vec<usize> = (0..p)
            .filter(|&j| e.values[j] > 1e-10 * mmax && mmax > 0.0)
            .collect();
        let r = keep.len();
        let mut u = vec![0.0; n * r];
        for (jj, &j) in keep.iter().enumerate() {
            let s = 1.0 / math::sqrt(e.values[j]);
            for i in 0..n {
                let mut v = 0.0;
                for a in 0..p {
                    v += f[i * p + a] * e.vectors[a * p + j];
                }
                u[i * r + jj] = v * s;
            }
        }
        let lambda: Vec<f64> = keep.iter().map(|&j| e.values[j] + nugget).collect();
        Self::build(n, k, lambda, u, nugget)
    }

    fn build(n: usize, k: usize, lambda: Vec<f64>, u: Vec<f64>, nu: f64) -> Result<Self, Error> {
        let r = lambda.len();
        if k == 0 || k > n {
            return Err(Error::setting(
                "batch_size",
                alloc::format!("a k-DPP over {n} items needs 1 ≤ k ≤ {n}, got {k}"),
            ));
        }
        if k.saturating_mul(n) > DPP_MAX_KN {
            return Err(Error::setting(
                "batch_size",
                alloc::format!(
                    "a k-DPP draw keeps about 2·k·n floats; k·n = {k}·{n} exceeds {}",
                    DPP_MAX_KN
                ),
            ));
        }
        if lambda.iter().any(|v| !v.is_finite()) || u.iter().any(|v| !v.is_finite()) {
            return Err(Error::Numerical("k-DPP: non-finite spectrum".into()));
        }
        let c = n - r;
        let log_e = log_esp(nu, c, &lambda, None, k);
        let log_ek = log_e[r * (k + 1) + k];
        if !log_ek.is_finite() {
            return Err(Error::setting(
                "batch_size",
                alloc::format!(
                    "k = {k} exceeds the rank of the DPP kernel L; use a smaller k or a nugget > 0"
                ),
            ));
        }
        // Inclusion probabilities πᵢ = Σₙ λₙ vₙ(i)² e_{k−1}(λ₋ₙ)/e_k.
        let mut coef = Vec::with_capacity(r);
        for j in 0..r {
            let e = log_esp(nu, c, &lambda, Some(j), k);
            let lek1 = e[e.len() - 2];
            coef.push(math::exp(ln_pos(lambda[j]) + lek1 - log_ek));
        }
        let coef_c = if c > 0 {
            let e = log_esp(nu, c - 1, &lambda, None, k);
            math::exp(ln_pos(nu) + e[e.len() - 2] - log_ek)
        } else {
            0.0
        };
        let incl: Vec<f64> = (0..n)
            .map(|i| {
                let row = &u[i * r..(i + 1) * r];
                let s2: f64 = row.iter().map(|v| v * v).sum();
                let top: f64 = row.iter().zip(&coef).map(|(v, w)| v * v * w).sum();
                (top + coef_c * (1.0 - s2).max(0.0)).clamp(0.0, 1.0)
            })
            .collect();
        let mut ut = vec![0.0; r * n];
        for i in 0..n {
            for j in 0..r {
                ut[j * n + i] = u[i * r + j];
            }
        }
        Ok(KDpp {
            n,
            k,
            lambda,
            ut,
            nu,
            c,
            log_e,
            incl,
            basis: Vec::new(),
            chol: Vec::new(),
            resid: vec![0.0; n],
        })
    }

    /// Ground-set size n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Subset size k.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The repeated eigenvalue ν (the nugget) and its multiplicity n − r.
    pub fn nugget(&self) -> (f64, usize) {
        (self.nu, self.c)
    }

    /// log e_k(λ), the log normaliser of P(Y) = det(L_Y)/e_k.
    pub fn log_normaliser(&self) -> f64 {
        self.log_e[self.lambda.len() * (self.k + 1) + self.k]
    }

    /// The exact inclusion probabilities πᵢ = P(i ∈ Y) (they sum to k).
    pub fn inclusion_probabilities(&self) -> &[f64] {
        &self.incl
    }

    /// Draw one subset of k distinct items into `out` (cleared first; ascending order is not
    /// guaranteed). Returns whether the draw is complete (|out| = k). It can fall short only
    /// numerically: the residual trace Σᵢ Kᵢᵢ^{(t)} of the sequential conditioning equals
    /// k − t ≥ 1 in exact arithmetic (K is a rank-k projection); when it is below ½ after
    /// rounding (the basis has numerically lost rank, or every residual diagonal is ≤ 0), the
    /// remaining picks would be driven by rounding noise, so the draw stops; the partial subset
    /// is then NOT a k-DPP draw and must not be used with weights meant for k items — the
    /// caller gets `false` (the gradient estimator turns it into a NaN estimate, a reported
    /// divergence, and counts it).
    ///
    /// Compiled for the running CPU ([`crate::cpu`]; the same bits on either path): the Haar
    /// vectors' projections and the conditioning are dot products and updates over n.
    #[must_use = "an incomplete draw (false) is not a k-DPP sample"]
    pub fn sample<R: Rng + ?Sized>(&mut self, rng: &mut R, out: &mut Vec<usize>) -> bool {
        crate::on_cpu!(self.sample_avx2(rng, out), self.sample_any(rng, out))
    }

    /// [`sample`](Self::sample) compiled with AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn sample_avx2<R: Rng + ?Sized>(&mut self, rng: &mut R, out: &mut Vec<usize>) -> bool {
        self.sample_any(rng, out)
    }

    #[inline(always)]
    fn sample_any<R: Rng + ?Sized>(&mut self, rng: &mut R, out: &mut Vec<usize>) -> bool {
        out.clear();
        let (n, k, r) = (self.n, self.k, self.lambda.len());
        let kk = k + 1;
        // Stage 2: which top eigenvectors (the rest from the ν-eigenspace).
        let mut l = k;
        let mut chosen: Vec<usize> = Vec::with_capacity(k);
        for m in (1..=r).rev() {
            if l == 0 {
                break;
            }
            let num = ln_pos(self.lambda[m - 1]) + self.log_e[(m - 1) * kk + l - 1];
            let den = self.log_e[m * kk + l];
            if uniform(rng) < math::exp(num - den) {
                chosen.push(m - 1);
                l -= 1;
            }
        }
        let extra = l.min(self.c);
        // The basis of the projection DPP: chosen top vectors, then `extra` Haar vectors
        // orthogonal to all top vectors and to each other.
        self.basis.resize_with(chosen.len() + extra, Vec::new);
        for (b, &j) in self.basis.iter_mut().zip(&chosen) {
            b.clear();
            b.extend_from_slice(&self.ut[j * n..(j + 1) * n]);
        }
        for t in chosen.len()..chosen.len() + extra {
            let mut g = core::mem::take(&mut self.basis[t]);
            // Every value is overwritten: only a first draw's growth is zero-filled.
            g.resize(n, 0.0);
            dist::fill_std_normal(rng, &mut g);
            for _pass in 0..2 {
                for v in self.ut.chunks_exact(n) {
                    axpy(-dot(v, &g), v, &mut g);
                }
                for b in &self.basis[chosen.len()..t] {
                    axpy(-dot(b, &g), b, &mut g);
                }
            }
            let norm = math::sqrt(dot(&g, &g));
            g.iter_mut().for_each(|v| *v /= norm);
            self.basis[t] = g;
        }
        // Stage 3: projection DPP by sequential conditioning (a pivoted Cholesky of K).
        let kb = self.basis.len();
        self.resid.iter_mut().for_each(|v| *v = 0.0);
        for b in &self.basis {
            for (rsd, x) in self.resid.iter_mut().zip(b) {
                *rsd += x * x;
            }
        }
        self.chol.resize_with(kb, Vec::new);
        for t in 0..kb {
            let total = sum_positive(&self.resid);
            // Exactly kb − t ≥ 1 for an orthonormal basis.
            if total.is_nan() || total <= 0.5 {
                return false;
            }
            let mut target = uniform(rng) * total;
            let mut pick = n;
            for i in 0..n {
                let w = self.resid[i].max(0.0);
                if w > 0.0 {
                    pick = i;
                    if target < w {
                        break;
                    }
                    target -= w;
                }
            }
            if pick >= n {
                return false;
            }
            out.push(pick);
            // Column `pick` of the conditional kernel: Σ_b b[pick] b − Σ_{s<t} L_s[pick] L_s.
            let mut col: Vec<f64> = core::mem::take(&mut self.chol[t]);
            col.clear();
            col.resize(n, 0.0);
            for b in &self.basis {
                axpy(b[pick], b, &mut col);
            }
            for prev in &self.chol[..t] {
                axpy(-prev[pick], prev, &mut col);
            }
            let piv = col[pick];
            let inv = if piv > 0.0 {
                1.0 / math::sqrt(piv)
            } else {
                0.0
            };
            col.iter_mut().for_each(|c| *c *= inv);
            for (rsd, c) in self.resid.iter_mut().zip(&col) {
                *rsd -= c * c;
            }
            self.resid[pick] = 0.0;
            self.chol[t] = col;
        }
        out.len() == k
    }
}

/// Σ aᵢbᵢ with four partial sums (independent additions, so that the loop pipelines and
/// vectorises; the k-DPP's projections and norms).
#[inline(always)]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut s = [0.0f64; 4];
    let (mut ca, mut cb) = (a.chunks_exact(4), b.chunks_exact(4));
    for (x, y) in (&mut ca).zip(&mut cb) {
        for l in 0..4 {
            s[l] += x[l] * y[l];
        }
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        t += x * y;
    }
    t
}

/// y += a·x.
#[inline(always)]
fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}

/// Σ max(vᵢ, 0) with four partial sums.
#[inline(always)]
fn sum_positive(v: &[f64]) -> f64 {
    let mut s = [0.0f64; 4];
    let mut c = v.chunks_exact(4);
    for x in &mut c {
        for l in 0..4 {
            s[l] += x[l].max(0.0);
        }
    }
    let mut t = (s[0] + s[1]) + (s[2] + s[3]);
    for x in c.remainder() {
        t += x.max(0.0);
    }
    t
}
