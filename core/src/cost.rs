//! What work costs, in per-datum evaluations: the unit every kernel, estimator, optimiser and
//! reparametrisation reports, so samplers are compared per unit of work.

/// Work done, in per-datum evaluations.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Per-datum log-likelihood evaluations.
    pub lik_evals: u64,
    /// Per-datum gradient evaluations.
    pub grad_evals: u64,
}

impl Cost {
    /// `evals` joint value-and-gradient per-datum evaluations: counted in both.
    pub fn value_and_grad(evals: u64) -> Cost {
        Cost {
            lik_evals: evals,
            grad_evals: evals,
        }
    }

    /// Full-data-pass equivalents: max(likelihood, gradient) evaluations / n
    /// (a joint value-and-gradient evaluation of one datum touches it once).
    pub fn full_passes(&self, n: usize) -> f64 {
        if n == 0 {
            return 0.0;
        }
        self.lik_evals.max(self.grad_evals) as f64 / n as f64
    }
}

impl core::ops::AddAssign for Cost {
    fn add_assign(&mut self, other: Cost) {
        self.lik_evals += other.lik_evals;
        self.grad_evals += other.grad_evals;
    }
}
