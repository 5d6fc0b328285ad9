//! The `pmmh` sampler: the PMMH kernel ([`crate::kernel::pmmh`]: formulas, cost, extras)
//! on the generic driver with its warm-up — Robbins–Monro adaptation of log ε towards
//! `target_accept`, the proposal covariance from the second quarter of warm-up, and the
//! automatic particle count (`particles` = auto: Var log p̂ ≈ 1, tuned at the start and at the
//! warm-up midpoint, fixed afterwards so the pseudo-marginal chain is exact).

use super::driver::{Driver, Warmup};
use crate::chain::{Chain, Cost};
use crate::error::Error;
pub use crate::kernel::pmmh::{Likelihood, Pmmh, PmmhState};
use crate::kernel::{Kernel, StepInfo};
use crate::math;
use crate::model::SeriesModel;
use crate::rng::ChainRng;
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::ssm::pf::{
    p_ess_threshold, p_particles, ParticleFilter, PfConfig, P_PROPOSAL, P_RESAMPLING,
};
use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use super::pfsgld::{particle_or_kalman, series_of, start_point, P_INIT};

/// Particles of the first filter runs with `particles` = auto.
pub const AUTO_PARTICLES_START: usize = 100;
/// Largest N chosen at the start (the start may be far from the posterior, where Var log p̂
/// is large).
pub const AUTO_PARTICLES_START_MAX: usize = 2_000;
/// Largest N chosen at the warm-up midpoint.
pub const AUTO_PARTICLES_MAX: usize = 20_000;
/// Target Var log p̂ of the automatic N.
pub const AUTO_LOG_LIK_VAR: f64 = 1.0;
/// Filter runs behind each variance estimate.
pub const AUTO_PARTICLES_RUNS: usize = 12;

/// Registry entry of `pmmh`.
pub const PMMH_INFO: SamplerInfo = SamplerInfo {
    name: "pmmh",
    description: "particle marginal Metropolis–Hastings (exact, unbiased particle likelihood; kalman = exact MH on lgssm)",
    exact: true,
    signed: false,
    models: crate::model::series::SERIES_MODELS,
    params: &[
        ParamSpec {
            key: "step_size",
            description: "random-walk scale ε; auto (NaN) = adapted, with the posterior covariance, in warm-up",
            kind: ParamKind::Real {
                default: f64::NAN,
                min: 0.0,
                max: f64::INFINITY,
            },
        },
        ParamSpec {
            key: "target_accept",
            description: "target acceptance rate of the adaptation; auto (NaN) = 0.234 kalman, 0.15 particle",
            kind: ParamKind::Real {
                default: f64::NAN,
                min: 0.01,
                max: 0.99,
            },
        },
        ParamSpec {
            key: "likelihood",
            description: "particle (unbiased estimate, every model) or kalman (exact, lgssm only)",
            kind: ParamKind::Choice(&["particle", "kalman"]),
        },
        p_particles(0),
        P_PROPOSAL,
        P_RESAMPLING,
        p_ess_threshold(0.5),
        P_INIT,
    ],
};

/// PMMH's warm-up (module docs).
pub struct PmmhWarmup {
    adapt: bool,
    warmup: usize,
    // Welford accumulators over the second quarter of warm-up
    w_n: usize,
    w_mean: Vec<f64>,
    w_m2: Vec<f64>,
    /// Scratch for θ − mean before the update (no allocation per iteration).
    w_old: Vec<f64>,
    /// `particles` = auto: N is tuned at the start and at the warm-up midpoint.
    auto_particles: bool,
    /// Var log p̂ predicted at the N chosen by the last tuning (NaN before any).
    log_lik_var: f64,
}

impl PmmhWarmup {
    /// `particles` = auto: measure Var log p̂ at `at` (the current position at the start; the
    /// mean of the second quarter of warm-up at its midpoint) with the current N, set
    /// N ← clamp(⌈N·Var/[`AUTO_LOG_LIK_VAR`]⌉, [`AUTO_PARTICLES_START`], `max`) and recompute
    /// the current state's estimate with it. Returns the evaluations spent.
    ///
    /// At the midpoint the warm-up mean is used rather than wherever the chain happens to be:
    /// Var log p̂ grows fast away from the posterior's centre, and on the dax returns (`sv`)
    /// the current position gave N = 11 311 in one chain and 3 904 in the other (seed 1).
    fn tune_particles(
        &mut self,
        model: &SeriesModel,
        st: &mut PmmhState,
        at: Option<&[f64]>,
        max: usize,
        rng: &mut ChainRng,
    ) -> u64 {
        let n0 = st.particles();
        if n0 == 0 {
            return 0;
        }
        let th = st.theta.clone();
        let probe: Vec<f64> = match at {
            Some(a) if model.ssm().log_prior(a).is_finite() => a.to_vec(),
            _ => th.clone(),
        };
        let mut cost = 0u64;
        let mut lls = Vec::with_capacity(AUTO_PARTICLES_RUNS);
        for _ in 0..AUTO_PARTICLES_RUNS {
            let (_, ll, c) = st.evaluate(model, &probe, rng);
            cost += c;
            if ll.is_finite() {
                lls.push(ll);
            }
        }
        // a run that failed outright counts as infinite variance
        let var = if lls.len() < 2 || lls.len() < AUTO_PARTICLES_RUNS {
            f64::INFINITY
        } else {
            let m = lls.iter().sum::<f64>() / lls.len() as f64;
            lls.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (lls.len() - 1) as f64
        };
        let want = n0 as f64 * var / AUTO_LOG_LIK_VAR;
        let n = if want.is_nan() || want >= max as f64 {
            max
        } else {
            (math::ceil(want) as usize).clamp(AUTO_PARTICLES_START, max)
        };
        // the variance predicted at the chosen N (Var log p̂ ∝ 1/N)
        self.log_lik_var = var * n0 as f64 / n as f64;
        if let Likelihood::Particle(pf) = &mut st.lik {
            if n != n0 {
                let cfg = PfConfig {
                    particles: n,
                    ..*pf.config()
                };
                if let Ok(f) = ParticleFilter::new(cfg) {
                    **pf = f;
                }
            }
        }
        // a fresh estimate at the (possibly new) N for the current state
        let (lp, ll, c) = st.evaluate(model, &th, rng);
        cost += c;
        if lp.is_finite() && ll.is_finite() {
            st.log_prior = lp;
            st.log_lik = ll;
            st.keep_last_run();
        }
        cost
    }
}

impl Warmup<Pmmh, SeriesModel> for PmmhWarmup {
    fn adapt(
        &mut self,
        t: usize,
        kernel: &mut Pmmh,
        model: &SeriesModel,
        st: &mut PmmhState,
        info: &mut StepInfo,
        rng: &mut ChainRng,
    ) -> Cost {
        let iter = t + 1;
        let accept = info.accept_prob;
        let mut cost = 0;
        if self.auto_particles && self.warmup >= 2 && iter == self.warmup / 2 {
            // the second quarter's mean (w_mean), when that quarter was recorded
            let centre = (self.w_n >= 10).then(|| self.w_mean.clone());
            cost += self.tune_particles(model, st, centre.as_deref(), AUTO_PARTICLES_MAX, rng);
        }
        if self.adapt && iter <= self.warmup {
            let k = iter as f64;
            kernel.log_eps += (accept - kernel.target) / math::pow(k + 1.0, 0.6);
            kernel.log_eps = kernel.log_eps.clamp(-30.0, 10.0);
            let (q1, half) = (self.warmup / 4, self.warmup / 2);
            if self.warmup >= 40 && iter > q1 && iter <= half {
                self.w_n += 1;
                let n = self.w_n as f64;
                let p = st.theta.len();
                // Welford for the mean and the full co-moment matrix
                for j in 0..p {
                    self.w_old[j] = st.theta[j] - self.w_mean[j];
                    self.w_mean[j] += self.w_old[j] / n;
                }
                for j in 0..p {
                    let new_j = st.theta[j] - self.w_mean[j];
                    for k in 0..p {
                        self.w_m2[j * p + k] += self.w_old[k] * new_j;
                    }
                }
                if iter == half && self.w_n >= 10 {
                    let cov: Vec<f64> = self.w_m2.iter().map(|v| v / (n - 1.0)).collect();
                    for j in 0..p {
                        let sd = math::sqrt(cov[j * p + j]);
                        if sd.is_finite() && sd > 0.0 {
                            kernel.scale[j] = sd;
                        }
                    }
                    kernel.chol = crate::linalg::Cholesky::new(&cov, p)
                        .ok()
                        .map(|c| c.factor().to_vec())
                        .filter(|l| l.iter().all(|v| v.is_finite()));
                    kernel.log_eps = math::ln(2.38 / math::sqrt(p as f64));
                }
            }
        }
        // the current run may have changed (particle tuning)
        kernel.report(st, info);
        Cost {
            lik_evals: cost,
            grad_evals: 0,
        }
    }
    /// Var log p̂ predicted at the chosen N (automatic particles).
    fn resolved(&self, _kernel: &Pmmh) -> Vec<(&'static str, f64)> {
        if self.log_lik_var.is_finite() {
            vec![("log_lik_var", self.log_lik_var)]
        } else {
            Vec::new()
        }
    }
}

/// A PMMH chain: [`Pmmh`] with [`PmmhWarmup`] on the generic driver.
pub type PmmhChain = Driver<Pmmh, SeriesModel, PmmhWarmup>;

impl Driver<Pmmh, SeriesModel, PmmhWarmup> {
    /// A chain on `model` at `theta`; `step_size` NaN = adapted. Errors when the likelihood at
    /// `theta` is not finite.
    ///
    /// `filter.particles` = 0 selects the automatic N (module docs).
    pub fn new(
        model: SeriesModel,
        filter: Option<PfConfig>,
        theta: Vec<f64>,
        step_size: f64,
        target_accept: f64,
        warmup: usize,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        let auto_particles = filter.as_ref().is_some_and(|f| f.particles == 0);
        let filter = filter.map(|f| PfConfig {
            particles: if f.particles == 0 {
                AUTO_PARTICLES_START
            } else {
                f.particles
            },
            ..f
        });
        let p = model.ssm().dim();
        let adapt = step_size.is_nan();
        let target = if target_accept.is_nan() {
            if filter.is_some() {
                0.15
            } else {
                0.234
            }
        } else {
            target_accept
        };
        let t_len = model.y().len() as f64;
        let scale = if adapt {
            vec![1.0 / math::sqrt(t_len); p]
        } else {
            vec![1.0; p]
        };
        let log_eps = if adapt {
            math::ln(2.38 / math::sqrt(p as f64))
        } else {
            math::ln(step_size)
        };
        let kernel = Pmmh {
            log_eps,
            scale,
            chol: None,
            target,
            filter,
        };
        let mut state = kernel.init(&model, &theta)?;
        if !adapt && (step_size <= 0.0 || !step_size.is_finite()) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        let mut setup = Cost {
            lik_evals: kernel.estimate_current(&model, &mut state, rng)?,
            grad_evals: 0,
        };
        let mut schedule = PmmhWarmup {
            adapt,
            warmup,
            w_n: 0,
            w_mean: vec![0.0; p],
            w_m2: vec![0.0; p * p],
            w_old: vec![0.0; p],
            auto_particles,
            log_lik_var: f64::NAN,
        };
        if auto_particles {
            setup.lik_evals +=
                schedule.tune_particles(&model, &mut state, None, AUTO_PARTICLES_START_MAX, rng);
        }
        let names = model.ssm().param_names();
        Ok(Driver::from_parts(
            kernel, model, state, schedule, names, warmup, setup,
        ))
    }

    /// The filter's ESS path over time of the current state's particle run (empty for
    /// Kalman).
    pub fn ess_path(&self) -> &[f64] {
        self.state().ess_path()
    }

    /// Particles N (0 for the Kalman likelihood).
    pub fn particles(&self) -> usize {
        self.state().particles()
    }
}

/// Build a `pmmh` chain from the user's settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: &dyn crate::model::DataModel,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let series = series_of(config.sampler, model)?;
    let s = config.settings;
    let step = PMMH_INFO.param("step_size")?.positive_or_auto(s)?;
    let target = match s.get_str("target_accept") {
        None | Some("auto") | Some("nan") | Some("NaN") => f64::NAN,
        Some(_) => PMMH_INFO.param("target_accept")?.real(s)?,
    };
    // particles = auto (absent or `auto`): tuned by the chain (module docs)
    let auto = matches!(s.get_str("particles"), None | Some("auto"));
    let filter = particle_or_kalman(s, &PMMH_INFO, "likelihood", AUTO_PARTICLES_START)?;
    let filter = match filter {
        Some(f) if auto => Some(PfConfig { particles: 0, ..f }),
        f => f,
    };
    let init = PMMH_INFO.param("init")?.choice(s)?;
    s.check_all_used()?;
    let theta = start_point(series, init, rng)?;
    Ok(Box::new(PmmhChain::new(
        series.clone(),
        filter,
        theta,
        step,
        target,
        config.warmup,
        rng,
    )?))
}
