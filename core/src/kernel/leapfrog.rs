//! The leapfrog (velocity Verlet) integrator of Hamiltonian dynamics with a [`Metric`].
//!
//! # Formula
//! H(θ, p) = −log π(θ) + ½ pᵀ M⁻¹ p. One step of size ε:
//!   p ← p + (ε/2) ∇log π(θ)
//!   θ ← θ + ε M⁻¹ p
//!   p ← p + (ε/2) ∇log π(θ)
//! Volume preserving and reversible (negate p, step, negate p returns the start); the energy
//! error after a fixed time is O(ε²).
//!
//! ## References
//! Neal, R. M. (2011). MCMC using Hamiltonian dynamics. Handbook of MCMC, ch. 5.

use super::Metric;
use crate::model::LogDensity;
use alloc::vec;
use alloc::vec::Vec;

/// A point in phase space with its cached log density and gradient.
#[derive(Debug, Clone, PartialEq)]
pub struct PhasePoint {
    /// Position θ.
    pub q: Vec<f64>,
    /// Momentum p.
    pub p: Vec<f64>,
    /// ∇ log π(θ).
    pub grad: Vec<f64>,
    /// log π(θ).
    pub log_density: f64,
}

impl PhasePoint {
    /// Evaluate log π and its gradient at `q` (one gradient call); momentum zero.
    pub fn new<T: LogDensity + ?Sized>(target: &T, q: &[f64]) -> Self {
        let d = q.len();
        let mut grad = vec![0.0; d];
        let log_density = target.log_density_grad(q, &mut grad);
        PhasePoint {
            q: q.to_vec(),
            p: vec![0.0; d],
            grad,
            log_density,
        }
    }

    /// Whether log π and every gradient component are finite.
    pub fn is_finite(&self) -> bool {
        self.log_density.is_finite() && self.grad.iter().all(|g| g.is_finite())
    }

    /// H = −log π(θ) + ½ pᵀ M⁻¹ p; +∞ when not finite (NaN never escapes).
    pub fn hamiltonian(&self, metric: &Metric) -> f64 {
        let h = -self.log_density + metric.kinetic(&self.p);
        if h.is_nan() {
            f64::INFINITY
        } else {
            h
        }
    }
}

/// One leapfrog step of size `eps` (negative to integrate backwards) from `z`, in place.
/// `v` is scratch of length d. Costs one gradient call.
pub fn leapfrog<T: LogDensity + ?Sized>(
    target: &T,
    metric: &Metric,
    eps: f64,
    z: &mut PhasePoint,
    v: &mut [f64],
) {
    let half = 0.5 * eps;
    for (p, g) in z.p.iter_mut().zip(&z.grad) {
        *p += half * g;
    }
    metric.velocity(&z.p, v);
    for (q, vi) in z.q.iter_mut().zip(v.iter()) {
        *q += eps * vi;
    }
    z.log_density = target.log_density_grad(&z.q, &mut z.grad);
    for (p, g) in z.p.iter_mut().zip(&z.grad) {
        *p += half * g;
    }
}

/// `steps` leapfrog steps of size `eps` (scratch allocated once). Returns the number done.
pub fn integrate<T: LogDensity + ?Sized>(
    target: &T,
    metric: &Metric,
    eps: f64,
    steps: usize,
    z: &mut PhasePoint,
) -> usize {
    let mut v = vec![0.0; z.q.len()];
    for _ in 0..steps {
        leapfrog(target, metric, eps, z, &mut v);
    }
    steps
}

impl super::HasPosition for PhasePoint {
    fn position(&self) -> &[f64] {
        &self.q
    }
}
