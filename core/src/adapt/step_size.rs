//! The initial step-size heuristic: double or halve ε until a one-step acceptance probability
//! crosses a threshold.
//!
//! # Formula
//! a(ε) = acceptance probability of one trial move with step size ε. If a(ε₀) > δ double ε
//! while a(ε) > δ, otherwise halve it while a(ε) < δ (stopping at the first crossing).
//!
//! ## References
//! Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn Sampler, Algorithm 4. JMLR 15.
//! Stan's `base_hmc::init_stepsize`.

use crate::cost::Cost;
use crate::kernel::Adaptable;
use crate::rng::Rng;

/// A reasonable first step size for `kernel` at `state`, starting from `eps0`; returns it with
/// the cost of the trial moves. Bounded to [1e-12, 1e7] and 100 trials; never fails.
pub fn find_reasonable_step_size<K, T, R>(
    kernel: &K,
    rng: &mut R,
    target: &T,
    state: &K::State,
    eps0: f64,
    threshold: f64,
) -> (f64, Cost)
where
    K: Adaptable<T>,
    T: ?Sized,
    R: Rng + ?Sized,
{
    let mut cost = Cost::default();
    let mut eps = if eps0.is_finite() && eps0 > 0.0 {
        eps0
    } else {
        1.0
    };
    let (a, c) = kernel.probe(rng, target, state, eps);
    cost.lik_evals += c.lik_evals;
    cost.grad_evals += c.grad_evals;
    // Probes never return NaN (a failed trial has acceptance 0).
    let up = a > threshold;
    for _ in 0..100 {
        eps = if up { 2.0 * eps } else { 0.5 * eps };
        if !(1e-12..=1e7).contains(&eps) {
            eps = eps.clamp(1e-12, 1e7);
            break;
        }
        let (a, c) = kernel.probe(rng, target, state, eps);
        cost.lik_evals += c.lik_evals;
        cost.grad_evals += c.grad_evals;
        if up && a <= threshold {
            break;
        }
        if !up && a >= threshold {
            break;
        }
    }
    (eps, cost)
}
