//! The log posterior on the full data or a scaled subset, with evaluation counters.

use crate::error::Error;
use crate::model::DataModel;
use crate::parallel::{map_jobs, PASS_CHUNK};
use alloc::vec;
use alloc::vec::Vec;

/// log p(θ) + s Σ_{i∈S} ℓᵢ(θ) with per-datum cost accounting.
pub(crate) struct Objective<'a> {
    model: &'a dyn DataModel,
    subset: Option<&'a [usize]>,
    scale: f64,
    /// Data touched per evaluation (n or m).
    m: u64,
    pub(crate) lik_evals: u64,
    pub(crate) grad_evals: u64,
    pub(crate) hess_evals: u64,
    tmp: Vec<f64>,
    tmp_h: Vec<f64>,
}

impl<'a> Objective<'a> {
    /// Full data, or `subset` with scale n/m. Validates the subset.
    pub(crate) fn new(
        model: &'a dyn DataModel,
        subset: Option<&'a [usize]>,
    ) -> Result<Self, Error> {
        let n = model.n();
        let d = model.dim();
        let (scale, m) = match subset {
            None => (1.0, n),
            Some(idx) => {
                if idx.is_empty() {
                    return Err(Error::setting("subset", "the subset is empty"));
                }
                if let Some(&bad) = idx.iter().find(|&&i| i >= n) {
                    return Err(Error::setting(
                        "subset",
                        alloc::format!("index {bad} is out of range for {n} data"),
                    ));
                }
                (n as f64 / idx.len() as f64, idx.len())
            }
        };
        Ok(Objective {
            model,
            subset,
            scale,
            m: m as u64,
            lik_evals: 0,
            grad_evals: 0,
            hess_evals: 0,
            tmp: vec![0.0; d],
            // Allocated by the first subset Hessian (after the size checks of the search).
            tmp_h: Vec::new(),
        })
    }

    pub(crate) fn dim(&self) -> usize {
        self.model.dim()
    }

    /// Whether this is a subset objective (its scratch already holds a d × d matrix).
    pub(crate) fn is_subset(&self) -> bool {
        self.subset.is_some()
    }

    pub(crate) fn n(&self) -> usize {
        self.model.n()
    }

    /// log π(θ); −∞ outside the prior's support.
    pub(crate) fn value(&mut self, theta: &[f64]) -> f64 {
        let lp = self.model.log_prior(theta);
        if !lp.is_finite() {
            return f64::NEG_INFINITY;
        }
        self.lik_evals += self.m;
        let ll = match self.subset {
            None => self.model.log_lik_all(theta),
            Some(idx) if idx.len() > PASS_CHUNK => {
                let mut s = 0.0;
                let job = |c: usize, out: &mut [f64]| {
                    out[0] = self.model.log_lik_sum(theta, &idx[chunk(c, idx.len())]);
                };
                let jobs = idx.len().div_ceil(PASS_CHUNK);
                map_jobs(self.model.parallel(), jobs, 1, &job, &mut |_, out| {
                    s += out[0]
                });
                self.scale * s
            }
            Some(idx) => self.scale * self.model.log_lik_sum(theta, idx),
        };
        lp + ll
    }

    /// log π(θ); ∇ log π(θ) is written into `grad`.
    pub(crate) fn value_grad(&mut self, theta: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let lp = self.model.log_prior_grad(theta, grad);
        if !lp.is_finite() {
            return f64::NEG_INFINITY;
        }
        self.lik_evals += self.m;
        self.grad_evals += self.m;
        let ll = match self.subset {
            None => self.model.log_lik_grad_all(theta, grad),
            Some(idx) if idx.len() > PASS_CHUNK => {
                let (d, mut s) = (self.tmp.len(), 0.0);
                let tmp = &mut self.tmp;
                tmp.iter_mut().for_each(|g| *g = 0.0);
                let job = |c: usize, out: &mut [f64]| {
                    let (v, g) = out.split_at_mut(1);
                    v[0] = self
                        .model
                        .log_lik_grad_batch(theta, &idx[chunk(c, idx.len())], g);
                };
                let jobs = idx.len().div_ceil(PASS_CHUNK);
                map_jobs(self.model.parallel(), jobs, 1 + d, &job, &mut |_, out| {
                    s += out[0];
                    for (t, v) in tmp.iter_mut().zip(&out[1..]) {
                        *t += v;
                    }
                });
                for (g, t) in grad.iter_mut().zip(&self.tmp) {
                    *g += self.scale * t;
                }
                self.scale * s
            }
            Some(idx) => {
                self.tmp.iter_mut().for_each(|g| *g = 0.0);
                let s = self.model.log_lik_grad_batch(theta, idx, &mut self.tmp);
                for (g, t) in grad.iter_mut().zip(&self.tmp) {
                    *g += self.scale * t;
                }
                self.scale * s
            }
        };
        lp + ll
    }

    /// −∇² log π(θ), symmetrised, written into `a` (row-major d × d).
    pub(crate) fn neg_hessian(&mut self, theta: &[f64], a: &mut [f64]) {
        let d = self.dim();
        a.iter_mut().for_each(|v| *v = 0.0);
        self.model.log_prior_hess(theta, a);
        self.hess_evals += self.m;
        // More than one chunk of rows: each chunk's Hessian from zero, the chunks added in
        // order (on the model's threads when it has them; the same bits either way).
        let count = self.subset.map_or(self.model.n(), <[usize]>::len);
        let row = |q: usize| self.subset.map_or(q, |idx| idx[q]);
        let chunked = |out: &mut [f64]| {
            let job = |c: usize, h: &mut [f64]| {
                let r = chunk(c, count);
                self.model
                    .log_lik_hess_rows(theta, &|q| row(r.start + q), r.len(), h);
            };
            let mut sink = |_: usize, h: &[f64]| {
                for (v, t) in out.iter_mut().zip(h) {
                    *v += t;
                }
            };
            let jobs = count.div_ceil(PASS_CHUNK);
            map_jobs(self.model.parallel(), jobs, d * d, &job, &mut sink);
        };
        match self.subset {
            None if count > PASS_CHUNK => chunked(a),
            None => {
                self.model
                    .log_lik_hess_rows(theta, &|q| q, self.model.n(), a);
            }
            Some(idx) => {
                let mut tmp_h = core::mem::take(&mut self.tmp_h);
                tmp_h.clear();
                tmp_h.resize(d * d, 0.0);
                if count > PASS_CHUNK {
                    chunked(&mut tmp_h);
                } else {
                    self.model
                        .log_lik_hess_rows(theta, &|q| idx[q], idx.len(), &mut tmp_h);
                }
                for (v, t) in a.iter_mut().zip(&tmp_h) {
                    *v += self.scale * t;
                }
                self.tmp_h = tmp_h;
            }
        }
        for r in 0..d {
            a[r * d + r] = -a[r * d + r];
            for c in 0..r {
                let s = -0.5 * (a[r * d + c] + a[c * d + r]);
                a[r * d + c] = s;
                a[c * d + r] = s;
            }
        }
    }
}

/// Rows of chunk `c` of a pass over `count` rows ([`PASS_CHUNK`] each, the last one short).
fn chunk(c: usize, count: usize) -> core::ops::Range<usize> {
    c * PASS_CHUNK..((c + 1) * PASS_CHUNK).min(count)
}
