//! The stochastic-gradient chain: Langevin (SGLD and its variants), Hamiltonian (SGHMC) and
//! Nosé–Hoover (SGNHT) dynamics driven by a [`GradientEstimator`], with a step-size schedule
//! and, for ASGLD-CV(-PS), a batch size adapted to ‖θ − θ̂‖².
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
//! [`super::auto_pilot_iters`]) is 40 relaxation times τ = 2/(hλ_min(A)) of the slowest
//! direction, clamped to [1000, 50 000], so ill-conditioned posteriors get long enough pilots
//! for their slow directions to be dispersed. This is the thesis's rule n_t > ‖θ − θ̂‖²·ΣLᵢ²/pᵢ/V₀
//! with V₀ = (1/n₀)·q·ΣLᵢ²/pᵢ: the constant ΣLᵢ²/pᵢ cancels, so no Lipschitz constants are
//! needed to run it; when the model has them (GLMs with bounded f″) V₀ is reported.

use crate::chain::{Chain, Cost};
use crate::dist;
use crate::error::Error;
use crate::estimator::gradient::{lipschitz_constants, GradientEstimator, Subsampler};
use crate::kernel::StepInfo;
use crate::math;
use crate::model::DataModel;
use crate::rng::ChainRng;
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// `schedule` of the SG samplers and pf-sgld.
pub const P_SCHEDULE: ParamSpec = ParamSpec {
    key: "schedule",
    description: "step sizes: constant, or decreasing h_t = h₀(1 + t/b)^(−γ) = a(b + t)^(−γ)",
    kind: ParamKind::Choice(&["constant", "decreasing"]),
};

/// `schedule_b` (with `schedule=decreasing`).
pub const P_SCHEDULE_B: ParamSpec = ParamSpec {
    key: "schedule_b",
    description: "b of the decreasing schedule (iterations until h has fallen by 2^γ)",
    kind: ParamKind::Real {
        default: 1000.0,
        min: 1e-12,
        max: f64::INFINITY,
    },
};

/// `schedule_gamma` (with `schedule=decreasing`).
pub const P_SCHEDULE_GAMMA: ParamSpec = ParamSpec {
    key: "schedule_gamma",
    description: "exponent γ of the decreasing schedule (Teh et al. 2016: 1/3; Welling & Teh's Σh² < ∞ needs γ > ½)",
    kind: ParamKind::Real {
        default: 0.33,
        min: 0.0,
        max: 1.0,
    },
};

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

    /// Read `schedule` (constant | decreasing) and, with `decreasing`, `schedule_b` and
    /// `schedule_gamma`, with initial step `h0`. `schedule_b` / `schedule_gamma` without
    /// `schedule=decreasing` are refused (they would have no effect).
    pub fn from_settings(s: &Settings, h0: f64) -> Result<Self, Error> {
        match P_SCHEDULE.choice(s)? {
            "decreasing" => Ok(StepSchedule::Decreasing {
                h0,
                b: P_SCHEDULE_B.real(s)?,
                gamma: P_SCHEDULE_GAMMA.real(s)?,
            }),
            _ => {
                for key in ["schedule_b", "schedule_gamma"] {
                    if s.contains(key) {
                        return Err(Error::setting(key, "only used with schedule=decreasing"));
                    }
                }
                Ok(StepSchedule::Constant(h0))
            }
        }
    }

    fn validate(&self) -> Result<(), Error> {
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

/// The dynamics a [`SgChain`] discretises.
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

/// Adaptive batch sizes n_t ∝ ‖θ_t − θ̂‖² (needs a control-variate estimator).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveBatch {
    /// Pilot chains for the calibration (thesis: 10).
    pub pilot_chains: usize,
    /// Iterations per pilot chain (≥ 2; 0 = automatic, resolved by
    /// [`super::build_sg_chain`] with [`super::auto_pilot_iters`]).
    pub pilot_iters: usize,
}

/// A stochastic-gradient chain.
pub struct SgChain {
    model: Arc<dyn DataModel>,
    names: Vec<String>,
    est: GradientEstimator,
    dynamics: Dynamics,
    schedule: StepSchedule,
    theta: Vec<f64>,
    mom: Vec<f64>,
    thermostat: f64,
    grad: Vec<f64>,
    next: Vec<f64>,
    next_mom: Vec<f64>,
    iter: usize,
    warmup: usize,
    setup: Cost,
    /// (n₀, q) of the adaptive batch rule.
    adaptive: Option<(usize, f64)>,
    pilot: Option<AdaptiveBatch>,
    v0: f64,
    extras: Vec<&'static str>,
}

impl SgChain {
    /// A chain at `theta` (validated finite, length d) with estimator `est`. `setup` is the
    /// cost already spent (mode, centre, weights). With `adaptive`, runs the pilot chains now
    /// (their cost joins the setup) — the estimator must then be a control variate. Errors: a
    /// bad schedule or friction, a non-finite start, failed calibration.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        model: Arc<dyn DataModel>,
        est: GradientEstimator,
        dynamics: Dynamics,
        schedule: StepSchedule,
        theta: Vec<f64>,
        setup: Cost,
        warmup: usize,
        adaptive: Option<AdaptiveBatch>,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        let d = model.dim();
        schedule.validate()?;
        match dynamics {
            Dynamics::Langevin => {}
            Dynamics::Hamiltonian { friction } => {
                if !(friction > 0.0 && friction <= 1.0) {
                    return Err(Error::setting("friction", "must be in (0, 1]"));
                }
            }
            Dynamics::NoseHoover { friction } => {
                if !(friction > 0.0 && friction.is_finite()) {
                    return Err(Error::setting("friction", "must be a finite number > 0"));
                }
            }
        }
        if theta.len() != d || theta.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        let eta = schedule.initial() / 2.0;
        let mom: Vec<f64> = match dynamics {
            Dynamics::Langevin => vec![0.0; d],
            _ => (0..d)
                .map(|_| math::sqrt(eta) * dist::std_normal(rng))
                .collect(),
        };
        let thermostat = match dynamics {
            Dynamics::NoseHoover { friction } => friction,
            _ => f64::NAN,
        };
        let mut extras = vec!["batch_size"];
        if adaptive.is_some() {
            extras.push("dist2_to_mode");
        }
        if let Dynamics::NoseHoover { .. } = dynamics {
            extras.push("thermostat");
        }
        let mut chain = SgChain {
            names: model.param_names(),
            model,
            est,
            dynamics,
            schedule,
            theta,
            mom,
            thermostat,
            grad: vec![0.0; d],
            next: vec![0.0; d],
            next_mom: vec![0.0; d],
            iter: 0,
            warmup,
            setup,
            adaptive: None,
            pilot: adaptive,
            v0: f64::NAN,
            extras,
        };
        if let Some(a) = adaptive {
            chain.calibrate(a, rng)?;
        }
        Ok(chain)
    }

    /// Pilot chains of fixed-batch Langevin from θ̂: q = max over pilots of the 95th
    /// percentile of ‖θ − θ̂‖² over each pilot's second half.
    fn calibrate(&mut self, a: AdaptiveBatch, rng: &mut ChainRng) -> Result<(), Error> {
        let centre = match self.est.centre() {
            Some(c) => c.to_vec(),
            None => {
                return Err(Error::setting(
                    "batch_size",
                    "adaptive batch sizes need a control-variate estimator",
                ))
            }
        };
        if a.pilot_chains == 0 || a.pilot_iters < 2 {
            return Err(Error::setting(
                "pilot_iters",
                "need at least one pilot chain of at least 2 iterations (0 = automatic is \
                 resolved by build_sg_chain)",
            ));
        }
        let n0 = self.est.batch();
        let h = self.schedule.initial();
        let sqrt_h = math::sqrt(h);
        let d = self.theta.len();
        let mut q = 0.0f64;
        let mut th = vec![0.0; d];
        let mut g = vec![0.0; d];
        let mut dist2 = Vec::with_capacity(a.pilot_iters);
        for _ in 0..a.pilot_chains {
            th.copy_from_slice(&centre);
            dist2.clear();
            for t in 0..a.pilot_iters {
                let e = self.est.estimate(rng, self.model.as_ref(), &th, &mut g);
                self.setup.lik_evals += e;
                self.setup.grad_evals += e;
                for (x, gj) in th.iter_mut().zip(&g) {
                    *x += 0.5 * h * gj + sqrt_h * dist::std_normal(rng);
                }
                if th.iter().any(|v| !v.is_finite()) {
                    return Err(Error::Numerical(
                        "adaptive batch calibration: pilot chain diverged; use a smaller step_size"
                            .into(),
                    ));
                }
                if 2 * t >= a.pilot_iters {
                    dist2.push(th.iter().zip(&centre).map(|(x, c)| (x - c) * (x - c)).sum());
                }
            }
            dist2.sort_by(|x: &f64, y| x.partial_cmp(y).unwrap_or(core::cmp::Ordering::Equal));
            let pos = ((0.95 * dist2.len() as f64) as usize).min(dist2.len().saturating_sub(1));
            q = q.max(dist2.get(pos).copied().unwrap_or(0.0));
        }
        if !(q > 0.0 && q.is_finite()) {
            return Err(Error::Numerical(
                "adaptive batch calibration: the pilot chains did not move".into(),
            ));
        }
        self.adaptive = Some((n0, q));
        // V₀ = (1/n₀)·q·ΣLᵢ²/pᵢ, when Lipschitz constants are known.
        if let Some(l) = lipschitz_constants(self.model.as_ref()) {
            let n = l.len() as f64;
            let s: f64 = match self.est.subsampler() {
                Subsampler::Preferential { table, .. } => l
                    .iter()
                    .enumerate()
                    .map(|(i, li)| li * li / table.probability(i))
                    .sum(),
                _ => l.iter().map(|li| li * li * n).sum(),
            };
            self.v0 = q * s / n0 as f64;
        }
        Ok(())
    }

    /// The initial step size h₀.
    pub fn step_size(&self) -> f64 {
        self.schedule.initial()
    }

    /// The (initial) batch size.
    pub fn batch(&self) -> usize {
        match self.adaptive {
            Some((n0, _)) => n0,
            None => self.est.batch(),
        }
    }

    /// The calibration constant q of the adaptive batch rule (NaN when not adaptive).
    pub fn adaptive_q(&self) -> f64 {
        self.adaptive.map_or(f64::NAN, |(_, q)| q)
    }

    /// The pseudo-variance threshold V₀ of the adaptive rule, when the model has Lipschitz
    /// constants (NaN otherwise).
    pub fn v0(&self) -> f64 {
        self.v0
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> &GradientEstimator {
        &self.est
    }
}

impl Chain for SgChain {
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        self.extras.clone()
    }
    fn exact(&self) -> bool {
        false
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        let h = self.schedule.at(self.iter);
        self.iter += 1;
        let mut dist2 = f64::NAN;
        if let (Some((n0, q)), Some(c)) = (self.adaptive, self.est.centre()) {
            dist2 = self
                .theta
                .iter()
                .zip(c)
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>();
            let n = self.model.n();
            let want = math::ceil(n0 as f64 * dist2 / q);
            let nt = if want.is_finite() {
                (want.max(1.0) as usize).min(n)
            } else {
                n
            };
            // Cannot fail: 1 ≤ nt ≤ n.
            let _ = self.est.set_batch(nt);
        }
        // A NaN estimate (an incomplete k-DPP draw) makes the proposal non-finite: the step
        // is reported as divergent and the chain stays put.
        let evals = self
            .est
            .estimate(rng, self.model.as_ref(), &self.theta, &mut self.grad);
        let d = self.theta.len();
        let mut thermo_next = self.thermostat;
        match self.dynamics {
            Dynamics::Langevin => {
                let sqrt_h = math::sqrt(h);
                for ((x, t), g) in self.next.iter_mut().zip(&self.theta).zip(&self.grad) {
                    *x = t + 0.5 * h * g + sqrt_h * dist::std_normal(rng);
                }
            }
            Dynamics::Hamiltonian { friction } | Dynamics::NoseHoover { friction } => {
                let eta = 0.5 * h;
                let alpha = match self.dynamics {
                    Dynamics::NoseHoover { .. } => self.thermostat,
                    _ => friction,
                };
                let sd = math::sqrt(2.0 * friction * eta);
                let mut uu = 0.0;
                for j in 0..d {
                    let u = (1.0 - alpha) * self.mom[j]
                        + eta * self.grad[j]
                        + sd * dist::std_normal(rng);
                    self.next_mom[j] = u;
                    self.next[j] = self.theta[j] + u;
                    uu += u * u;
                }
                if let Dynamics::NoseHoover { .. } = self.dynamics {
                    thermo_next = self.thermostat + uu / d as f64 - eta;
                }
            }
        }
        let ok = self
            .next
            .iter()
            .chain(&self.next_mom)
            .all(|v| v.is_finite())
            && (thermo_next.is_finite() || thermo_next.is_nan() && self.thermostat.is_nan());
        if ok {
            core::mem::swap(&mut self.theta, &mut self.next);
            if self.dynamics != Dynamics::Langevin {
                core::mem::swap(&mut self.mom, &mut self.next_mom);
            }
            self.thermostat = thermo_next;
        }
        let mut extra = [f64::NAN; 4];
        extra[0] = self.est.batch() as f64;
        let mut k = 1;
        if self.adaptive.is_some() {
            extra[k] = dist2;
            k += 1;
        }
        if let Dynamics::NoseHoover { .. } = self.dynamics {
            extra[k] = self.thermostat;
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
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn iteration(&self) -> usize {
        self.iter
    }
    fn warmup(&self) -> usize {
        self.warmup
    }
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
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
            if let Some(p) = self.pilot {
                r.push(("pilot_chains", p.pilot_chains as f64));
                r.push(("pilot_iters", p.pilot_iters as f64));
            }
            r.push(("pilot_q95", q));
            if self.v0.is_finite() {
                r.push(("v0", self.v0));
            }
        }
        r
    }
}
