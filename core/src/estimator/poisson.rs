//! The block-Poisson estimator of the likelihood: unbiased for L(θ) = exp(ℓ(θ)) but possibly
//! negative; kept in log space as log|L̂| with its sign, and with the exact gradient of log|L̂|.
//!
//! # Formula
//! For l = 1..λ: X_l ~ Pois(1); for h = 1..X_l an independent mini-batch u^(h,l) of m iid uniform
//! indices and d̂^(h,l)(θ) = (n/m) Σᵢ d_{u^(h,l)ᵢ}(θ). Then
//! L̂(θ) = exp(Σₖ qₖ(θ)) · Π_l ξ_l,   ξ_l = exp((a+λ)/λ) · Π_h (d̂^(h,l)(θ) − a)/λ
//! log|L̂| = Σₖ qₖ(θ) + (a + λ) + Σ_{l,h} [log|d̂^(h,l) − a| − log λ]
//! sign   = Π_{l,h} sign(d̂^(h,l) − a)
//! ∇log|L̂| = ∇Σₖ qₖ(θ) + Σ_{l,h} ∇d̂^(h,l)(θ) / (d̂^(h,l)(θ) − a)        (a constant in θ)
//! E[L̂] = L(θ) for any a that does not depend on u; Var(L̂)/L² = exp(λ((d−a)/λ − 1)² + σ²/λ) − 1
//! with σ² = Var(d̂), minimised at a = d(θ) − λ.
//!
//! ## References
//! Dang et al. (2019), JMLR 20(100), eq. (15) (product index k misprinted for h);
//! Quiroz, Tran, Villani, Kohn, Dang (2021), *The block-Poisson estimator for optimally tuned
//! exact subsampling MCMC*, JCGS.

use super::ControlVariates;
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::rng::{uniform_index, Rng};
use alloc::vec::Vec;

/// Block-Poisson estimator settings: n data, mini-batch size m, λ products, soft lower bound a.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BlockPoisson {
    n: usize,
    m: usize,
    lambda: usize,
    a: f64,
}

/// The auxiliary variables u: for each of the λ products, its X_l mini-batches of m indices,
/// concatenated (length X_l·m).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PoissonSample {
    /// `products[l]` holds X_l·m indices.
    pub products: Vec<Vec<usize>>,
}

impl PoissonSample {
    /// Total indices Σ_l X_l·m (the evaluations of one full evaluation).
    pub fn total(&self) -> usize {
        self.products.iter().map(|p| p.len()).sum()
    }
}

/// The estimator at one θ for one u: per-product terms and totals.
#[derive(Debug, Clone, Default)]
pub struct PoissonEval {
    d: usize,
    logabs: Vec<f64>,
    signs: Vec<f64>,
    grads: Vec<f64>,
    proxy: f64,
    proxy_grad: Vec<f64>,
    has_grad: bool,
    dbuf: Vec<f64>,
    gbuf: Vec<f64>,
    /// log|L̂(θ)|.
    pub log_abs: f64,
    /// sign(L̂(θ)) ∈ {−1, +1}.
    pub sign: f64,
    /// ∇log|L̂(θ)| (empty without gradient).
    pub grad: Vec<f64>,
}

impl BlockPoisson {
    /// n data, mini-batch m ≥ 1, λ ≥ 1 products, finite a.
    pub fn new(n: usize, m: usize, lambda: usize, a: f64) -> Result<Self, Error> {
        if n == 0 {
            return Err(Error::data("the data set has no rows"));
        }
        if m == 0 {
            return Err(Error::setting("m", "mini-batch size must be at least 1"));
        }
        if lambda == 0 {
            return Err(Error::setting(
                "lambda",
                "number of products must be at least 1",
            ));
        }
        if !a.is_finite() {
            return Err(Error::setting("a", "soft lower bound must be finite"));
        }
        Ok(BlockPoisson { n, m, lambda, a })
    }

    /// λ.
    pub fn lambda(&self) -> usize {
        self.lambda
    }
    /// m.
    pub fn m(&self) -> usize {
        self.m
    }
    /// a.
    pub fn a(&self) -> f64 {
        self.a
    }

    /// Draw one product's mini-batches: X ~ Pois(1), then X·m uniform indices.
    pub fn draw_product<R: Rng + ?Sized>(&self, rng: &mut R, out: &mut Vec<usize>) {
        let x = crate::dist::poisson(rng, 1.0) as usize;
        out.clear();
        out.extend((0..x * self.m).map(|_| uniform_index(rng, self.n)));
    }

    /// A fresh u ~ p_U.
    pub fn draw<R: Rng + ?Sized>(&self, rng: &mut R) -> PoissonSample {
        let mut products = Vec::with_capacity(self.lambda);
        for _ in 0..self.lambda {
            let mut p = Vec::new();
            self.draw_product(rng, &mut p);
            products.push(p);
        }
        PoissonSample { products }
    }

    #[allow(clippy::too_many_arguments)]
    fn eval_product(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        l: usize,
        idx: &[usize],
        gathered: Option<&super::Gathered>,
        out: &mut PoissonEval,
    ) {
        let d = out.d;
        let m = self.m;
        let nm = self.n as f64 / m as f64;
        let ln_lambda = math::ln(self.lambda as f64);
        let x = idx.len() / m;
        let mut logabs = 0.0;
        let mut sign = 1.0;
        if out.has_grad {
            out.grads[l * d..(l + 1) * d]
                .iter_mut()
                .for_each(|v| *v = 0.0);
        }
        let mut dbuf = core::mem::take(&mut out.dbuf);
        let mut gbuf = core::mem::take(&mut out.gbuf);
        dbuf.resize(m, 0.0);
        gbuf.resize(if out.has_grad { m * d } else { 0 }, 0.0);
        for h in 0..x {
            let batch = &idx[h * m..(h + 1) * m];
            match gathered {
                Some(g) => {
                    cv.diffs_gathered_at(model, theta, batch, g, h * m, &mut dbuf, &mut gbuf)
                }
                None => cv.diffs(model, theta, batch, &mut dbuf, &mut gbuf),
            }
            let dhat = nm * dbuf.iter().sum::<f64>();
            let t = dhat - self.a;
            logabs += math::ln(math::abs(t)) - ln_lambda;
            if t < 0.0 {
                sign = -sign;
            }
            if out.has_grad {
                let gl = &mut out.grads[l * d..(l + 1) * d];
                for j in 0..m {
                    let gj = &gbuf[j * d..(j + 1) * d];
                    for i in 0..d {
                        gl[i] += nm * gj[i] / t;
                    }
                }
            }
        }
        out.dbuf = dbuf;
        out.gbuf = gbuf;
        out.logabs[l] = logabs;
        out.signs[l] = sign;
    }

    fn finish(&self, out: &mut PoissonEval) {
        out.log_abs = out.proxy + (self.a + self.lambda as f64) + out.logabs.iter().sum::<f64>();
        out.sign = out.signs.iter().product();
        if out.has_grad {
            let d = out.d;
            for i in 0..d {
                let mut s = out.proxy_grad[i];
                for l in 0..self.lambda {
                    s += out.grads[l * d + i];
                }
                out.grad[i] = s;
            }
        }
    }

    /// Evaluate at θ for u from scratch (Σ_l X_l·m joint evaluations).
    pub fn evaluate(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        u: &PoissonSample,
        with_grad: bool,
        out: &mut PoissonEval,
    ) {
        self.evaluate_gathered(model, cv, theta, u, &[], with_grad, out);
    }

    /// [`evaluate`](Self::evaluate), reading product l from `gathered[l]` when it holds that
    /// product's indices (see [`Gathered`](super::Gathered); the same bits either way).
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_gathered(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        u: &PoissonSample,
        gathered: &[super::Gathered],
        with_grad: bool,
        out: &mut PoissonEval,
    ) {
        let d = theta.len();
        out.d = d;
        out.has_grad = with_grad;
        out.logabs.clear();
        out.logabs.resize(self.lambda, 0.0);
        out.signs.clear();
        out.signs.resize(self.lambda, 1.0);
        out.grads.clear();
        out.proxy_grad.clear();
        out.grad.clear();
        if with_grad {
            out.grads.resize(self.lambda * d, 0.0);
            out.proxy_grad.resize(d, 0.0);
            out.grad.resize(d, 0.0);
        }
        if u.products.len() != self.lambda
            || u.products
                .iter()
                .any(|p| (p.len() / self.m) * self.m != p.len())
        {
            out.log_abs = f64::NAN;
            out.sign = 1.0;
            return;
        }
        out.proxy = if with_grad {
            cv.proxy_sum(theta, Some(&mut out.proxy_grad))
        } else {
            cv.proxy_sum(theta, None)
        };
        for (l, p) in u.products.iter().enumerate() {
            self.eval_product(model, cv, theta, l, p, gathered.get(l), out);
        }
        self.finish(out);
    }

    /// `out` ← `cur` with product l replaced by the indices `new_idx` (X·m joint evaluations at
    /// the θ of `cur`).
    #[allow(clippy::too_many_arguments)]
    pub fn replace_product(
        &self,
        model: &dyn DataModel,
        cv: &ControlVariates,
        theta: &[f64],
        l: usize,
        new_idx: &[usize],
        cur: &PoissonEval,
        out: &mut PoissonEval,
    ) {
        let dbuf = core::mem::take(&mut out.dbuf);
        let gbuf = core::mem::take(&mut out.gbuf);
        out.clone_from(cur);
        out.dbuf = dbuf;
        out.gbuf = gbuf;
        if l >= self.lambda
            || (new_idx.len() / self.m) * self.m != new_idx.len()
            || out.logabs.len() != self.lambda
        {
            out.log_abs = f64::NAN;
            return;
        }
        self.eval_product(model, cv, theta, l, new_idx, None, out);
        self.finish(out);
    }
}
