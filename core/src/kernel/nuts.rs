//! The No-U-Turn Sampler with multinomial sampling and Stan's generalised no-U-turn criterion
//! (including the extra checks across the boundary of merged sub-trees).
//!
//! # Formula
//! Trajectories double forwards or backwards in time (direction by a fair coin) until the
//! generalised criterion fails: with ρ = Σ pᵢ over a (sub)tree and p♯ = M⁻¹ p at its two ends,
//! continue while p♯₋ · ρ > 0 and p♯₊ · ρ > 0. Each state carries weight exp(H₀ − H); the new
//! sub-tree is taken with probability min(1, W_new / W_old) (biased progressive sampling),
//! inside sub-trees uniform progressive sampling. H − H₀ > 1000 (or non-finite) is a divergence:
//! the trajectory stops and the last sub-tree is discarded.
//! Acceptance statistic: mean over all leaves of min(1, exp(H₀ − H)).
//!
//! ## References
//! Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn Sampler. JMLR 15.
//! Betancourt, M. (2017). A conceptual introduction to Hamiltonian Monte Carlo. arXiv:1701.02434.
//! Stan's `base_nuts.hpp` (tree building with the additional sub-tree checks).

use super::hmc::{init_point, probe_one_leapfrog, MAX_ENERGY_ERROR};
use super::leapfrog::{leapfrog, PhasePoint};
use super::{Adaptable, Kernel, KernelInfo, Metric, StepInfo};
use crate::cost::Cost;
use crate::error::Error;
use crate::math;
use crate::model::LogDensity;
use crate::rng::{uniform, ChainRng, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// Multinomial NUTS with maximum tree depth `max_depth` (at most 2^max_depth − 1 leapfrogs).
#[derive(Debug, Clone, PartialEq)]
pub struct Nuts {
    step_size: f64,
    metric: Metric,
    max_depth: usize,
}

impl Nuts {
    /// A kernel with step size ε > 0 and `max_depth` in 1..=30.
    pub fn new(step_size: f64, metric: Metric, max_depth: usize) -> Result<Self, Error> {
        super::check_step_size(step_size)?;
        if !(1..=30).contains(&max_depth) {
            return Err(Error::setting("max_depth", "must be in 1..=30"));
        }
        Ok(Nuts {
            step_size,
            metric,
            max_depth,
        })
    }

    /// Maximum tree depth.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }
}

/// Generalised no-U-turn criterion: p♯₋ · ρ > 0 and p♯₊ · ρ > 0.
#[inline]
fn no_u_turn(p_sharp_minus: &[f64], p_sharp_plus: &[f64], rho: &[f64]) -> bool {
    crate::linalg::dot(p_sharp_plus, rho) > 0.0 && crate::linalg::dot(p_sharp_minus, rho) > 0.0
}

fn add_into(acc: &mut [f64], x: &[f64]) {
    for (a, b) in acc.iter_mut().zip(x) {
        *a += b;
    }
}

fn sum(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x + y).collect()
}

/// What a trajectory needs while it is built.
struct Builder<'a, T: ?Sized, R: ?Sized> {
    target: &'a T,
    metric: &'a Metric,
    rng: &'a mut R,
    /// Signed step size of the current doubling.
    eps: f64,
    h0: f64,
    v: Vec<f64>,
    n_leapfrog: u32,
    sum_metro_prob: f64,
    divergent: bool,
}

impl<T: LogDensity + ?Sized, R: Rng + ?Sized> Builder<'_, T, R> {
    /// Build a sub-tree of 2^depth leapfrogs continuing from `z` (Stan's `build_tree`).
    #[allow(clippy::too_many_arguments)]
    fn build_tree(
        &mut self,
        depth: usize,
        z: &mut PhasePoint,
        z_propose: &mut PhasePoint,
        p_sharp_beg: &mut [f64],
        p_sharp_end: &mut [f64],
        rho: &mut [f64],
        p_beg: &mut [f64],
        p_end: &mut [f64],
        log_sum_weight: &mut f64,
    ) -> bool {
        if depth == 0 {
            leapfrog(self.target, self.metric, self.eps, z, &mut self.v);
            self.n_leapfrog += 1;
            let mut h = z.hamiltonian(self.metric);
            if !z.is_finite() {
                h = f64::INFINITY;
            }
            if h - self.h0 > MAX_ENERGY_ERROR || !h.is_finite() {
                self.divergent = true;
            }
            let w = self.h0 - h;
            *log_sum_weight = math::log_add_exp(*log_sum_weight, w);
            self.sum_metro_prob += if w > 0.0 { 1.0 } else { math::exp(w) };
            z_propose.clone_from(z);
            self.metric.velocity(&z.p, p_sharp_beg);
            p_sharp_end.copy_from_slice(p_sharp_beg);
            add_into(rho, &z.p);
            p_beg.copy_from_slice(&z.p);
            p_end.copy_from_slice(&z.p);
            return !self.divergent;
        }
        let d = z.q.len();
        // The initial sub-tree.
        let mut log_sum_weight_init = f64::NEG_INFINITY;
        let mut p_init_end = vec![0.0; d];
        let mut p_sharp_init_end = vec![0.0; d];
        let mut rho_init = vec![0.0; d];
        if !self.build_tree(
            depth - 1,
            z,
            z_propose,
            p_sharp_beg,
            &mut p_sharp_init_end,
            &mut rho_init,
            p_beg,
            &mut p_init_end,
            &mut log_sum_weight_init,
        ) {
            return false;
        }
        // The final sub-tree.
        let mut z_propose_final = z.clone();
        let mut log_sum_weight_final = f64::NEG_INFINITY;
        let mut p_final_beg = vec![0.0; d];
        let mut p_sharp_final_beg = vec![0.0; d];
        let mut rho_final = vec![0.0; d];
        if !self.build_tree(
            depth - 1,
            z,
            &mut z_propose_final,
            &mut p_sharp_final_beg,
            p_sharp_end,
            &mut rho_final,
            &mut p_final_beg,
            p_end,
            &mut log_sum_weight_final,
        ) {
            return false;
        }
        // Multinomial sample from the right sub-tree (uniform progressive sampling).
        let log_sum_weight_subtree = math::log_add_exp(log_sum_weight_init, log_sum_weight_final);
        *log_sum_weight = math::log_add_exp(*log_sum_weight, log_sum_weight_subtree);
        if log_sum_weight_final > log_sum_weight_subtree {
            *z_propose = z_propose_final;
        } else {
            let a = math::exp(log_sum_weight_final - log_sum_weight_subtree);
            if uniform(self.rng) < a {
                *z_propose = z_propose_final;
            }
        }
        let rho_subtree = sum(&rho_init, &rho_final);
        add_into(rho, &rho_subtree);
        // Demand satisfaction around the merged sub-trees ...
        let mut persist = no_u_turn(p_sharp_beg, p_sharp_end, &rho_subtree);
        // ... and between them.
        let rho_ext = sum(&rho_init, &p_final_beg);
        persist &= no_u_turn(p_sharp_beg, &p_sharp_final_beg, &rho_ext);
        let rho_ext = sum(&rho_final, &p_init_end);
        persist &= no_u_turn(&p_sharp_init_end, p_sharp_end, &rho_ext);
        persist
    }
}

impl<T: LogDensity + ?Sized> Kernel<T> for Nuts {
    type State = PhasePoint;

    fn init(&self, target: &T, position: &[f64]) -> Result<PhasePoint, Error> {
        init_point(target, position, &self.metric)
    }

    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut PhasePoint) -> StepInfo {
        let d = state.q.len();
        let metric = &self.metric;
        let mut z = state.clone();
        metric.sample_momentum(rng, &mut z.p);
        let h0 = z.hamiltonian(metric);

        let mut z_fwd = z.clone();
        let mut z_bck = z.clone();
        let mut z_sample = z.clone();
        let mut z_propose = z.clone();

        let mut p_sharp = vec![0.0; d];
        metric.velocity(&z.p, &mut p_sharp);
        let mut p_fwd_fwd = z.p.clone();
        let mut p_sharp_fwd_fwd = p_sharp.clone();
        let mut p_fwd_bck = z.p.clone();
        let mut p_sharp_fwd_bck = p_sharp.clone();
        let mut p_bck_fwd = z.p.clone();
        let mut p_sharp_bck_fwd = p_sharp.clone();
        let mut p_bck_bck = z.p.clone();
        let mut p_sharp_bck_bck = p_sharp;
        let mut rho = z.p.clone();
        let mut log_sum_weight = 0.0;
        let mut depth = 0usize;

        let mut b = Builder {
            target,
            metric,
            rng,
            eps: self.step_size,
            h0,
            v: vec![0.0; d],
            n_leapfrog: 0,
            sum_metro_prob: 0.0,
            divergent: false,
        };

        while depth < self.max_depth {
            let mut rho_fwd = vec![0.0; d];
            let mut rho_bck = vec![0.0; d];
            let mut log_sum_weight_subtree = f64::NEG_INFINITY;
            let valid = if uniform(b.rng) > 0.5 {
                // Extend forwards.
                b.eps = self.step_size;
                // The old trajectory becomes the backward sub-tree; its forward end is the
                // old forward end (not the interior point `p_fwd_bck`: that asymmetry breaks
                // detailed balance; fixed in Stan by N. Huurre, stan-dev/stan#3032).
                rho_bck.copy_from_slice(&rho);
                p_bck_fwd.copy_from_slice(&p_fwd_fwd);
                p_sharp_bck_fwd.copy_from_slice(&p_sharp_fwd_fwd);
                b.build_tree(
                    depth,
                    &mut z_fwd,
                    &mut z_propose,
                    &mut p_sharp_fwd_bck,
                    &mut p_sharp_fwd_fwd,
                    &mut rho_fwd,
                    &mut p_fwd_bck,
                    &mut p_fwd_fwd,
                    &mut log_sum_weight_subtree,
                )
            } else {
                // Extend backwards.
                b.eps = -self.step_size;
                // The old trajectory becomes the forward sub-tree; its backward end is the
                // old backward end.
                rho_fwd.copy_from_slice(&rho);
                p_fwd_bck.copy_from_slice(&p_bck_bck);
                p_sharp_fwd_bck.copy_from_slice(&p_sharp_bck_bck);
                b.build_tree(
                    depth,
                    &mut z_bck,
                    &mut z_propose,
                    &mut p_sharp_bck_fwd,
                    &mut p_sharp_bck_bck,
                    &mut rho_bck,
                    &mut p_bck_fwd,
                    &mut p_bck_bck,
                    &mut log_sum_weight_subtree,
                )
            };
            if !valid {
                break;
            }
            depth += 1;
            // Biased progressive sampling of the new sub-tree.
            if log_sum_weight_subtree > log_sum_weight {
                z_sample.clone_from(&z_propose);
            } else {
                let a = math::exp(log_sum_weight_subtree - log_sum_weight);
                if uniform(b.rng) < a {
                    z_sample.clone_from(&z_propose);
                }
            }
            log_sum_weight = math::log_add_exp(log_sum_weight, log_sum_weight_subtree);
            rho = sum(&rho_bck, &rho_fwd);
            // Demand satisfaction around the merged sub-trees ...
            let mut persist = no_u_turn(&p_sharp_bck_bck, &p_sharp_fwd_fwd, &rho);
            // ... and between them.
            let rho_ext = sum(&rho_bck, &p_fwd_bck);
            persist &= no_u_turn(&p_sharp_bck_bck, &p_sharp_fwd_bck, &rho_ext);
            let rho_ext = sum(&rho_fwd, &p_bck_fwd);
            persist &= no_u_turn(&p_sharp_bck_fwd, &p_sharp_fwd_fwd, &rho_ext);
            if !persist {
                break;
            }
        }

        let n_leapfrog = b.n_leapfrog;
        let accept_prob = if n_leapfrog > 0 {
            b.sum_metro_prob / n_leapfrog as f64
        } else {
            0.0
        };
        let divergent = b.divergent;
        let accepted = z_sample.q != state.q;
        let energy = z_sample.hamiltonian(metric);
        *state = z_sample;
        let e = target.evals_per_call() * n_leapfrog as u64;
        let mut extra = [f64::NAN; 4];
        extra[0] = depth as f64;
        StepInfo {
            accept_prob,
            accepted,
            divergent,
            lik_evals: e,
            grad_evals: e,
            n_leapfrog,
            step_size: self.step_size,
            energy,
            sign: 1.0,
            extra,
        }
    }
}

impl_tunable_fields!(Nuts);

impl<T: LogDensity + ?Sized> Adaptable<T> for Nuts {
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &PhasePoint,
        eps: f64,
    ) -> (f64, Cost) {
        probe_one_leapfrog(rng, target, &self.metric, state, eps)
    }
}

impl<T: LogDensity + ?Sized> KernelInfo<T> for Nuts {
    fn extra_names(&self) -> Vec<&'static str> {
        vec!["tree_depth"]
    }
}
