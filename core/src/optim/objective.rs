//! The log posterior on the full data or a scaled subset, with evaluation counters.

use crate::error::Error;
use crate::model::DataModel;
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
        match self.subset {
            None => {
                self.model
                    .log_lik_hess_rows(theta, &|q| q, self.model.n(), a);
            }
            Some(idx) => {
                if self.tmp_h.len() != d * d {
                    self.tmp_h = vec![0.0; d * d];
                }
                self.tmp_h.iter_mut().for_each(|v| *v = 0.0);
                self.model
                    .log_lik_hess_rows(theta, &|q| idx[q], idx.len(), &mut self.tmp_h);
                for (v, t) in a.iter_mut().zip(&self.tmp_h) {
                    *v += self.scale * t;
                }
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
