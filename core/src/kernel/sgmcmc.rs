//! The stochastic-gradient kernel: Langevin (SGLD and its variants), Hamiltonian (SGHMC) and
//! Nosé–Hoover (SGNHT) dynamics driven by a [`GradientEstimator`], with a step-size schedule
//! and, for ASGLD-CV(-PS), a batch size adapted to ‖θ − θ̂‖² (calibrated by the sampler:
//! [`crate::sampler::sgmcmc`]).
//!
//! # Formula
//! One step size h_t in the SGLD convention throughout (ĝ estimates ∇ log π):
//! - Langevin:   θ ← θ + (h/2)ĝ(θ) + √h ξ;
//! - SGHMC (Chen et al. 2014, practical form, β̂ = 0, η = h/2, friction α ∈ (0, 1]):
//!   u ← (1 − α)u + η ĝ(θ) + √(2αη) ξ,  θ ← θ + u;
//! - SGNHT (Ding et al. 2014, practical form, η = h/2, diffusion a):
//!   u ← (1 − α_t)u + η ĝ(θ) + √(2aη) ξ,  θ ← θ + u,  α_{t+1} = α_t + uᵀu/d − η,  α₀ = a.
//!
//! With α = 1 SGHMC is exactly SGLD with step h, which is why η = h/2: the same `step_size`
//! means the same thing for all three. In the continuous-time reading η = ε² (ε the time
//! step, u = εp) and α = εγ (γ the friction), so SGHMC with small α keeps momentum for about
//! 1/α steps. The momentum starts at u ~ N(0, ηI).
//!
//! Step-size schedules: constant h_t = h₀, or decreasing h_t = h₀(1 + t/b)^(−γ), which is
//! the usual a(b + t)^(−γ) with a = h₀b^γ (t counts iterations from 0, warm-up included).
//! Σh_t = ∞ needs γ ≤ 1; Σh_t² < ∞, the other condition of Welling & Teh (2011) for
//! consistency of the un-weighted average, needs γ > ½ (they use γ ∈ (½, 1]). The default
//! γ = 0.33 follows Teh, Thiery & Vollmer (2016), whose step-size-weighted averages converge
//! for γ ∈ (0, 1) with the best MSE rate T^(−2/3) at γ = 1/3; with γ ≤ ½ the plain average
//! of the draws still carries the O(h_t) discretisation bias of the late steps.
//!
//! Decreasing steps with SGHMC/SGNHT: η_t = h_t/2 enters the update directly and the
//! momentum u is NOT rescaled when η changes. u ~ N(0, η I) is the invariant law of the
//! momentum for the current η (u = εp with η = ε²), so after a change of η the old u is
//! slightly off scale (by √(η_{t}/η_{t+1}) = 1 + O(γ/(b + t)) per step); the invariant law of
//! the dynamics at each fixed η is unchanged, and the mismatch is a transient that the
//! friction α (or the thermostat) damps within about 1/α steps — small because η changes
//! slowly. The SGNHT thermostat targets uᵀu/d = η_t, so it follows the schedule.
//!
//! Adaptive batch size (ASGLD-CV-PS, thesis Algorithm 5 with the calibration of §4.5.3):
//! n_t = min(N, max(1, ⌈n₀·‖θ_t − θ̂‖²/q⌉)), where q is the largest, over pilot chains of
//! fixed-batch SGLD-CV(-PS) with batch n₀ started at θ̂, of the 95th percentile of
//! ‖θ − θ̂‖² (second half of each pilot). The thesis uses 10 pilots (the default
//! `pilot_chains`); the pilot length (`pilot_iters` = 0, automatic, see
//! [`crate::sampler::sgmcmc::auto_pilot_iters`]) is 40 relaxation times τ = 2/(hλ_min(A)) of the slowest
//! direction, clamped to [1000, 50 000], so ill-conditioned posteriors get long enough pilots
//! for their slow directions to be dispersed. This is the thesis's rule n_t > ‖θ − θ̂‖²·ΣLᵢ²/pᵢ/V₀
//! with V₀ = (1/n₀)·q·ΣLᵢ²/pᵢ: the constant ΣLᵢ²/pᵢ cancels, so no Lipschitz constants are
//! needed to run it; when the model has them (GLMs with bounded f″) V₀ is reported.

use crate::dist;
use crate::error::Error;
use crate::estimator::gradient::GradientEstimator;
use crate::kernel::{HasPosition, Kernel, KernelInfo, StepInfo};
use crate::math;
use crate::model::DataModel;
use crate::rng::{ChainRng, Rng};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

/// A step-size schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StepSchedule {
    /// h_t = h.
    Constant(f64),
    /// h_t = h₀(1 + t/b)^(−γ).
    Decreasing {
        /// h₀ > 0.
        h0: f64,
        /// b > 0.
        b: f64,
        /// γ ≥ 0.
        gamma: f64,
    },
}

impl StepSchedule {
    /// The step size at iteration t (from 0).
    pub fn at(&self, t: usize) -> f64 {
        match *self {
            StepSchedule::Constant(h) => h,
            StepSchedule::Decreasing { h0, b, gamma } => h0 * math::pow(1.0 + t as f64 / b, -gamma),
        }
    }

    /// h₀.
    pub fn initial(&self) -> f64 {
        self.at(0)
    }

    /// The same schedule with h₀ replaced.
    pub fn with_initial(self, h0: f64) -> Self {
        match self {
            StepSchedule::Constant(_) => StepSchedule::Constant(h0),
            StepSchedule::Decreasing { b, gamma, .. } => StepSchedule::Decreasing { h0, b, gamma },
        }
    }

    /// Check h₀ > 0 finite, b > 0 finite and γ ≥ 0 finite.
    pub fn validate(&self) -> Result<(), Error> {
        let h0 = self.initial();
        if !(h0.is_finite() && h0 > 0.0) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        if let StepSchedule::Decreasing { b, gamma, .. } = *self {
            if !(b.is_finite() && b > 0.0) {
                return Err(Error::setting("schedule_b", "must be a finite number > 0"));
            }
            if !(gamma.is_finite() && gamma >= 0.0) {
                return Err(Error::setting("schedule_gamma", "must be finite and ≥ 0"));
            }
        }
        Ok(())
    }
}

/// The dynamics an [`SgKernel`] discretises.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dynamics {
    /// Overdamped Langevin (SGLD).
    Langevin,
    /// Underdamped Langevin with friction α ∈ (0, 1] (SGHMC).
    Hamiltonian {
        /// α.
        friction: f64,
    },
    /// Nosé–Hoover thermostat with diffusion a > 0 (SGNHT).
    NoseHoover {
        /// a.
        friction: f64,
    },
}

/// The SG-MCMC kernel: dynamics, step-size schedule and gradient estimator (whose subsample
/// buffers and batch size change as it runs: it is held in a `RefCell`, one per chain), with
/// the adaptive-batch rule (n₀, q) when calibrated.
#[derive(Debug)]
pub struct SgKernel {
    /// The gradient estimator.
    pub est: RefCell<GradientEstimator>,
    /// The dynamics.
    pub dynamics: Dynamics,
    /// The step-size schedule (t counts iterations from 0, warm-up included).
    pub schedule: StepSchedule,
    /// (n₀, q) of the adaptive batch rule n_t = min(N, max(1, ⌈n₀‖θ − θ̂‖²/q⌉)).
    pub adaptive: Option<(usize, f64)>,
    /// The calibration's pilot chains and iterations (reported).
    pub pilot: Option<(usize, usize)>,
    /// V₀ of the adaptive rule (NaN when unknown).
    pub v0: f64,
}

/// The state of [`SgKernel`]: θ, the momentum u, the thermostat α, the iteration t, and work
/// buffers.
#[derive(Debug, Clone, PartialEq)]
pub struct SgState {
    theta: Vec<f64>,
    mom: Vec<f64>,
    thermostat: f64,
    grad: Vec<f64>,
    next: Vec<f64>,
    next_mom: Vec<f64>,
    iter: usize,
}

impl HasPosition for SgState {
    fn position(&self) -> &[f64] {
        &self.theta
    }
}

impl SgKernel {
    /// Draw the initial momentum u ~ N(0, ηI), η = h₀/2 (SGHMC, SGNHT; Langevin has none).
    pub fn draw_momentum<R: Rng + ?Sized>(&self, rng: &mut R, state: &mut SgState) {
        if self.dynamics == Dynamics::Langevin {
            return;
        }
        let eta = self.schedule.initial() / 2.0;
        for u in state.mom.iter_mut() {
            *u = math::sqrt(eta) * dist::std_normal(rng);
        }
    }

    /// The (initial) batch size.
    pub fn batch(&self) -> usize {
        match self.adaptive {
            Some((n0, _)) => n0,
            None => self.est.borrow().batch(),
        }
    }
}

impl Kernel<Arc<dyn DataModel>> for SgKernel {
    type State = SgState;

    /// The state at `position` (finite, length d) with zero momentum (see
    /// [`SgKernel::draw_momentum`]) and the thermostat at a (SGNHT).
    fn init(&self, model: &Arc<dyn DataModel>, position: &[f64]) -> Result<SgState, Error> {
        let d = model.dim();
        if position.len() != d || position.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Ok(SgState {
            theta: position.to_vec(),
            mom: vec![0.0; d],
            thermostat: match self.dynamics {
                Dynamics::NoseHoover { friction } => friction,
                _ => f64::NAN,
            },
            grad: vec![0.0; d],
            next: vec![0.0; d],
            next_mom: vec![0.0; d],
            iter: 0,
        })
    }

    fn step(&self, rng: &mut ChainRng, model: &Arc<dyn DataModel>, st: &mut SgState) -> StepInfo {
        let mut est = self.est.borrow_mut();
        let h = self.schedule.at(st.iter);
        st.iter += 1;
        let mut dist2 = f64::NAN;
        if let (Some((n0, q)), Some(c)) = (self.adaptive, est.centre()) {
            dist2 = st
                .theta
                .iter()
                .zip(c)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>();
            let n = model.n();
            let want = math::ceil(n0 as f64 * dist2 / q);
            let nt = if want.is_finite() {
                (want.max(1.0) as usize).min(n)
            } else {
                n
            };
            // Cannot fail: 1 ≤ nt ≤ n.
            let _ = est.set_batch(nt);
        }
        // A NaN estimate (an incomplete k-DPP draw) makes the proposal non-finite: the step
        // is reported as divergent and the chain stays put.
        let evals = est.estimate(rng, model.as_ref(), &st.theta, &mut st.grad);
        let d = st.theta.len();
        let mut thermo_next = st.thermostat;
        match self.dynamics {
            Dynamics::Langevin => {
                let sqrt_h = math::sqrt(h);
                for ((x, t), g) in st.next.iter_mut().zip(&st.theta).zip(&st.grad) {
                    *x = t + 0.5 * h * g + sqrt_h * dist::std_normal(rng);
                }
            }
            Dynamics::Hamiltonian { friction } | Dynamics::NoseHoover { friction } => {
                let eta = 0.5 * h;
                let alpha = match self.dynamics {
                    Dynamics::NoseHoover { .. } => st.thermostat,
                    _ => friction,
                };
                let sd = math::sqrt(2.0 * friction * eta);
                let mut uu = 0.0;
                for j in 0..d {
                    let u =
                        (1.0 - alpha) * st.mom[j] + eta * st.grad[j] + sd * dist::std_normal(rng);
                    st.next_mom[j] = u;
                    st.next[j] = st.theta[j] + u;
                    uu += u * u;
                }
                if let Dynamics::NoseHoover { .. } = self.dynamics {
                    thermo_next = st.thermostat + uu / d as f64 - eta;
                }
            }
        }
        let ok = st.next.iter().chain(&st.next_mom).all(|v| v.is_finite())
            && (thermo_next.is_finite() || thermo_next.is_nan() && st.thermostat.is_nan());
        if ok {
            core::mem::swap(&mut st.theta, &mut st.next);
            if self.dynamics != Dynamics::Langevin {
                core::mem::swap(&mut st.mom, &mut st.next_mom);
            }
            st.thermostat = thermo_next;
        }
        let mut extra = [f64::NAN; 4];
        extra[0] = est.batch() as f64;
        let mut k = 1;
        if self.adaptive.is_some() {
            extra[k] = dist2;
            k += 1;
        }
        if let Dynamics::NoseHoover { .. } = self.dynamics {
            extra[k] = st.thermostat;
        }
        StepInfo {
            accept_prob: if ok { 1.0 } else { 0.0 },
            accepted: ok,
            divergent: !ok,
            lik_evals: evals,
            grad_evals: evals,
            n_leapfrog: 0,
            step_size: h,
            energy: f64::NAN,
            sign: 1.0,
            extra,
        }
    }
}

impl KernelInfo<Arc<dyn DataModel>> for SgKernel {
    fn extra_names(&self) -> Vec<&'static str> {
        let mut extras = vec!["batch_size"];
        if self.adaptive.is_some() {
            extras.push("dist2_to_mode");
        }
        if let Dynamics::NoseHoover { .. } = self.dynamics {
            extras.push("thermostat");
        }
        extras
    }
    /// h₀, the batch, the friction, and the adaptive rule's calibration.
    fn resolved(&self, _state: &SgState) -> Vec<(&'static str, f64)> {
        let mut r = vec![
            ("step_size", self.schedule.initial()),
            ("batch_size", self.batch() as f64),
        ];
        match self.dynamics {
            Dynamics::Hamiltonian { friction } | Dynamics::NoseHoover { friction } => {
                r.push(("friction", friction))
            }
            Dynamics::Langevin => {}
        }
        if let Some((_, q)) = self.adaptive {
            if let Some((chains, iters)) = self.pilot {
                r.push(("pilot_chains", chains as f64));
                r.push(("pilot_iters", iters as f64));
            }
            r.push(("pilot_q95", q));
            if self.v0.is_finite() {
                r.push(("v0", self.v0));
            }
        }
        r
    }
    fn exact(&self) -> bool {
        false
    }
}
