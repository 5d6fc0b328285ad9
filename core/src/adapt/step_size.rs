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

use super::DualAveraging;
use crate::cost::Cost;
use crate::error::Error;
use crate::kernel::{Adaptable, Tunable};
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

/// Step-size warm-up as Stan runs it, shared by every windowed warm-up: a first ε by the
/// doubling heuristic and dual averaging from it ([`start`](Self::start)), one dual-averaging
/// update per warm-up step ([`update`](Self::update)), the heuristic again and a restart of
/// dual averaging at a checkpoint ([`restart`](Self::restart)), and the averaged ε at the end
/// ([`finish`](Self::finish)). With the step size fixed, all of these leave the kernel alone.
#[derive(Debug, Clone, PartialEq)]
pub struct StepSizeWarmup {
    target_accept: f64,
    dual: Option<DualAveraging>,
}

impl StepSizeWarmup {
    /// When `adapt`: set `kernel`'s step size by the heuristic from its current one and start
    /// dual averaging towards `target_accept` there; returns the warm-up and the probes' cost.
    pub fn start<K, T, R>(
        kernel: &mut K,
        rng: &mut R,
        target: &T,
        state: &K::State,
        target_accept: f64,
        adapt: bool,
    ) -> (Self, Cost)
    where
        K: Adaptable<T>,
        T: ?Sized,
        R: Rng + ?Sized,
    {
        let mut cost = Cost::default();
        let dual = if adapt {
            let (eps, c) = retune(kernel, rng, target, state, target_accept);
            cost += c;
            Some(DualAveraging::new(target_accept, eps))
        } else {
            None
        };
        (
            StepSizeWarmup {
                target_accept,
                dual,
            },
            cost,
        )
    }

    /// Feed one step's acceptance statistic to dual averaging and set the kernel's step size.
    pub fn update<K: Tunable + ?Sized>(&mut self, kernel: &mut K, accept_prob: f64) {
        if let Some(da) = self.dual.as_mut() {
            let eps = da.update(accept_prob);
            kernel.set_step_size(eps);
        }
    }

    /// At a checkpoint (a new metric): the heuristic from the current step size, and dual
    /// averaging restarted there. Returns the probes' cost (zero with a fixed step size).
    pub fn restart<K, T, R>(
        &mut self,
        kernel: &mut K,
        rng: &mut R,
        target: &T,
        state: &K::State,
    ) -> Cost
    where
        K: Adaptable<T>,
        T: ?Sized,
        R: Rng + ?Sized,
    {
        let mut cost = Cost::default();
        if let Some(da) = self.dual.as_mut() {
            let (eps, c) = retune(kernel, rng, target, state, self.target_accept);
            cost += c;
            da.restart(eps);
        }
        cost
    }

    /// After warm-up: the averaged step size, when it is usable.
    pub fn finish<K: Tunable + ?Sized>(&self, kernel: &mut K) {
        if let Some(da) = self.dual.as_ref() {
            let eps = da.final_step_size();
            if eps.is_finite() && eps > 0.0 {
                kernel.set_step_size(eps);
            }
        }
    }
}

/// The heuristic from the kernel's current step size; sets and returns the new one with the
/// probes' cost.
fn retune<K, T, R>(
    kernel: &mut K,
    rng: &mut R,
    target: &T,
    state: &K::State,
    target_accept: f64,
) -> (f64, Cost)
where
    K: Adaptable<T>,
    T: ?Sized,
    R: Rng + ?Sized,
{
    let (eps, c) = find_reasonable_step_size(
        kernel,
        rng,
        target,
        state,
        kernel.step_size(),
        target_accept,
    );
    kernel.set_step_size(eps);
    (eps, c)
}

/// Check a target acceptance statistic: in (0, 1).
pub fn check_target_accept(target_accept: f64) -> Result<(), Error> {
    if target_accept > 0.0 && target_accept < 1.0 {
        Ok(())
    } else {
        Err(Error::setting("target_accept", "must be in (0, 1)"))
    }
}
