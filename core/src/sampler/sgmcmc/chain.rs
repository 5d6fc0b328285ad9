//! The stochastic-gradient samplers' chain: the [`SgKernel`] on the generic driver (no
//! warm-up adaptation: warm-up iterations are ordinary steps of the schedule), the step-size
//! schedule's settings, and the calibration of ASGLD-CV(-PS)'s adaptive batch by pilot
//! chains (formulas in [`crate::kernel::sgmcmc`]).

use super::super::driver::{Driver, NoWarmup};
use crate::chain::Cost;
use crate::dist;
use crate::error::Error;
use crate::estimator::gradient::{lipschitz_constants, GradientEstimator, Subsampler};
pub use crate::kernel::sgmcmc::{Dynamics, SgKernel, SgState, StepSchedule};
use crate::kernel::Kernel;
use crate::math;
use crate::model::DataModel;
use crate::rng::ChainRng;
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

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

/// Read `schedule` (constant | decreasing) and, with `decreasing`, `schedule_b` and
/// `schedule_gamma`, with initial step `h0`. `schedule_b` / `schedule_gamma` without
/// `schedule=decreasing` are refused (they would have no effect).
pub fn schedule_from_settings(s: &Settings, h0: f64) -> Result<StepSchedule, Error> {
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

/// Adaptive batch sizes n_t ∝ ‖θ_t − θ̂‖² (needs a control-variate estimator).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveBatch {
    /// Pilot chains for the calibration (thesis: 10).
    pub pilot_chains: usize,
    /// Iterations per pilot chain (≥ 2; 0 = automatic, resolved by
    /// [`super::build_sg_chain`] with [`super::auto_pilot_iters`]).
    pub pilot_iters: usize,
}

/// A stochastic-gradient chain: [`SgKernel`] on the generic driver.
pub type SgChain = Driver<SgKernel, Arc<dyn DataModel>, NoWarmup>;

impl Driver<SgKernel, Arc<dyn DataModel>, NoWarmup> {
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
        let kernel = SgKernel {
            est: RefCell::new(est),
            dynamics,
            schedule,
            adaptive: None,
            pilot: None,
            v0: f64::NAN,
        };
        let mut state = kernel.init(&model, &theta)?;
        kernel.draw_momentum(rng, &mut state);
        let names = model.param_names();
        let mut chain = Driver::from_parts(kernel, model, state, NoWarmup, names, warmup, setup);
        if let Some(a) = adaptive {
            chain.calibrate(a, rng)?;
        }
        Ok(chain)
    }

    /// Pilot chains of fixed-batch Langevin from θ̂: q = max over pilots of the 95th
    /// percentile of ‖θ − θ̂‖² over each pilot's second half.
    fn calibrate(&mut self, a: AdaptiveBatch, rng: &mut ChainRng) -> Result<(), Error> {
        let model = self.target.clone();
        let mut setup = Cost::default();
        let k = &mut self.kernel;
        let est = k.est.get_mut();
        let centre = match est.centre() {
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
        let n0 = est.batch();
        let h = k.schedule.initial();
        let sqrt_h = math::sqrt(h);
        let d = model.dim();
        let mut q = 0.0f64;
        let mut th = vec![0.0; d];
        let mut g = vec![0.0; d];
        let mut dist2 = Vec::with_capacity(a.pilot_iters);
        for _ in 0..a.pilot_chains {
            th.copy_from_slice(&centre);
            dist2.clear();
            for t in 0..a.pilot_iters {
                let e = est.estimate(rng, model.as_ref(), &th, &mut g);
                setup.lik_evals += e;
                setup.grad_evals += e;
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
        k.adaptive = Some((n0, q));
        k.pilot = Some((a.pilot_chains, a.pilot_iters));
        // V₀ = (1/n₀)·q·ΣLᵢ²/pᵢ, when Lipschitz constants are known.
        if let Some(l) = lipschitz_constants(model.as_ref()) {
            let n = l.len() as f64;
            let s: f64 = match est.subsampler() {
                Subsampler::Preferential { table, .. } => l
                    .iter()
                    .enumerate()
                    .map(|(i, li)| li * li / table.probability(i))
                    .sum(),
                _ => l.iter().map(|li| li * li * n).sum(),
            };
            k.v0 = q * s / n0 as f64;
        }
        self.add_setup(setup);
        Ok(())
    }

    /// The initial step size h₀.
    pub fn step_size(&self) -> f64 {
        self.kernel.schedule.initial()
    }

    /// The (initial) batch size.
    pub fn batch(&self) -> usize {
        self.kernel.batch()
    }

    /// The calibration constant q of the adaptive batch rule (NaN when not adaptive).
    pub fn adaptive_q(&self) -> f64 {
        self.kernel.adaptive.map_or(f64::NAN, |(_, q)| q)
    }

    /// The pseudo-variance threshold V₀ of the adaptive rule, when the model has Lipschitz
    /// constants (NaN otherwise).
    pub fn v0(&self) -> f64 {
        self.kernel.v0
    }

    /// The gradient estimator.
    pub fn estimator(&self) -> core::cell::Ref<'_, GradientEstimator> {
        self.kernel.est.borrow()
    }
}
