//! Buffered particle-filter SGLD (`pf-sgld`) for state-space models (Aicher, Putcha et al.
//! 2023; Putcha 2024, Algorithm 3): SGLD on a time series with the buffered subsequence
//! gradient of [`crate::ssm::buffered`].
//!
//! # Formula
//! Each iteration draws a subsequence S = {s+1..s+S} (s uniform on {0..T−S}), buffers it to
//! S* = {s+1−B..s+S+B} ∩ {1..T}, estimates ∇θ log p(y₁:T|θ) by
//!
//! ĝ(S, B) = Σ_{t∈S} E[∇θ log f(xₜ|xₜ₋₁)g(yₜ|xₜ) | y_{S*}] / Pr(t∈S),
//!
//! (expectation by a particle filter with N particles on S*, `gradient = particle`, or exactly
//! by the Kalman/RTS smoother on S* for `lgssm`, `gradient = kalman`, the thesis's "N = ∞"),
//! and moves with the project's SG-MCMC convention ([`crate::kernel::sgmcmc`]):
//!
//! θ ← θ + (h/2)(∇ log p(θ) + ĝ) + √h ξ,  ξ ~ N(0, I).
//!
//! The thesis's Ch.3 form θ + ε(∇log p + ĝ)/T + N(0, 2ε/T) is this one with h = 2ε/T; the
//! default step (`step_size` = auto) is its ε = 0.05, h = 0.1/T. B = 0 is the biased
//! no-buffer estimator, S = T and B = 0 the full-sequence gradient. No Metropolis correction:
//! the chain is approximate (`exact()` is false). A window whose log-likelihood estimate is not
//! finite (a dead filter: every particle weight zero at some time point) gives no usable score:
//! the step is reported divergent and θ is left unchanged.
//!
//! # Cost
//! One per-datum evaluation is one time point for one particle: a particle step evaluates one
//! observation (or predictive) density and counts in `lik_evals`, N·|S*| per iteration; the
//! complete-data score is evaluated only inside S, counted in `grad_evals`, N·|S| per
//! iteration. A Kalman step counts 1 per time point (|S*| and |S|). Independent of T.
//!
//! # Extras
//! `window_start` (1-based first time point of S), `ess_min` and `ess_mean` (the filter's
//! effective sample size over S*, of N; NaN for the Kalman gradient), `window_log_lik`
//! (log p̂(y_{S*}|θ) under the window's initial law).

use crate::chain::Chain;
use crate::error::Error;
use crate::kernel::sgmcmc::StepSchedule;
use crate::kernel::StepInfo;
use crate::math;
use crate::model::SeriesModel;
use crate::rng::{uniform, ChainRng};
use crate::sampler::sgmcmc::{schedule_from_settings, P_SCHEDULE, P_SCHEDULE_B, P_SCHEDULE_GAMMA};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
pub use crate::ssm::buffered::WindowTrace;
use crate::ssm::buffered::{self, BufferConfig, BufferedGradient, Window};
use crate::ssm::pf::{PfConfig, Proposal};
use crate::ssm::resample::Resampling;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// Default step factor: h = `AUTO_STEP_FACTOR`/T (the thesis's ε = 0.05 per observation).
pub const AUTO_STEP_FACTOR: f64 = 0.1;

pub(crate) const P_STEP: ParamSpec = ParamSpec {
    key: "step_size",
    description: "SGLD step h in θ + (h/2)ĝ + √h ξ; auto (NaN) = 0.1/T (the thesis's ε = 0.05 per observation)",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_SUBSEQ: ParamSpec = ParamSpec {
    key: "subseq_len",
    description: "subsequence length S (time points whose gradient is used; clamped to T)",
    kind: ParamKind::Int {
        default: 40,
        min: 1,
        max: usize::MAX,
    },
};

const P_BUFFER: ParamSpec = ParamSpec {
    key: "buffer",
    description: "buffer B on each side of the subsequence (0: the biased no-buffer gradient)",
    kind: ParamKind::Int {
        default: 10,
        min: 0,
        max: usize::MAX,
    },
};

pub(crate) const fn p_particles(default: usize) -> ParamSpec {
    ParamSpec {
        key: "particles",
        description: "particles N of the filter (gradient/likelihood = particle)",
        kind: ParamKind::Int {
            default,
            min: 1,
            max: crate::ssm::pf::MAX_PARTICLES,
        },
    }
}

pub(crate) const P_PROPOSAL: ParamSpec = ParamSpec {
    key: "proposal",
    description: "particle proposal: optimal (lgssm, garch; bootstrap for sv) or bootstrap",
    kind: ParamKind::Choice(&["optimal", "bootstrap"]),
};

pub(crate) const P_RESAMPLING: ParamSpec = ParamSpec {
    key: "resampling",
    description: "resampling scheme of the particle filter",
    kind: ParamKind::Choice(&["systematic", "stratified", "residual", "multinomial"]),
};

pub(crate) const fn p_ess_threshold(default: f64) -> ParamSpec {
    ParamSpec {
        key: "ess_threshold",
        description: "resample when ESS < κN (κ = 1: at every step)",
        kind: ParamKind::Real {
            default,
            min: 0.0,
            max: 1.0,
        },
    }
}

const P_GRADIENT: ParamSpec = ParamSpec {
    key: "gradient",
    description: "window expectation: particle filter, or kalman (exact RTS smoother on the window, lgssm only)",
    kind: ParamKind::Choice(&["particle", "kalman"]),
};

pub(crate) const P_INIT: ParamSpec = ParamSpec {
    key: "init",
    description:
        "starting point: model (data-based guess), zero, or random (uniform(−1, 1) around model)",
    kind: ParamKind::Choice(&["model", "zero", "random"]),
};

/// Registry entry of `pf-sgld`.
pub const PF_SGLD_INFO: SamplerInfo = SamplerInfo {
    name: "pf-sgld",
    description: "buffered particle-filter SGLD for time series (Aicher, Putcha et al. 2023; Putcha 2024, Alg. 3)",
    exact: false,
    signed: false,
    models: crate::model::series::SERIES_MODELS,
    params: &[
        P_STEP,
        P_SCHEDULE,
        P_SCHEDULE_B,
        P_SCHEDULE_GAMMA,
        P_SUBSEQ,
        P_BUFFER,
        p_particles(200),
        P_PROPOSAL,
        P_RESAMPLING,
        p_ess_threshold(1.0),
        P_GRADIENT,
        P_INIT,
    ],
};

/// How the window expectation is computed.
#[derive(Debug, Clone)]
pub enum WindowGradient {
    /// A particle filter on the window.
    Particle(Box<BufferedGradient>),
    /// The exact RTS smoother on the window (`lgssm` only).
    Kalman(BufferConfig),
}

/// Options of a [`PfSgldChain`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfSgldOptions {
    /// Step-size schedule (its h₀ is the step; NaN h₀ = auto, 0.1/T).
    pub schedule: StepSchedule,
    /// Subsequence length and buffer.
    pub window: BufferConfig,
    /// Particle filter settings; `None` = Kalman gradient (`lgssm` only).
    pub filter: Option<PfConfig>,
}

/// A buffered PF-SGLD chain.
pub struct PfSgldChain {
    model: SeriesModel,
    gradient: WindowGradient,
    schedule: StepSchedule,
    theta: Vec<f64>,
    grad: Vec<f64>,
    iter: usize,
    warmup: usize,
    last_window: Option<Window>,
}

/// Where a chain starts.
pub(crate) fn start_point(
    model: &SeriesModel,
    init: &str,
    rng: &mut ChainRng,
) -> Result<Vec<f64>, Error> {
    use crate::model::DataModel;
    let base = model.initial_point();
    let theta: Vec<f64> = match init {
        "zero" => vec![0.0; base.len()],
        "random" => base.iter().map(|v| v + 2.0 * uniform(rng) - 1.0).collect(),
        _ => base,
    };
    let mut g = vec![0.0; theta.len()];
    if !model.ssm().log_prior_grad(&theta, &mut g).is_finite() {
        return Err(Error::NonFiniteStart);
    }
    Ok(theta)
}

impl PfSgldChain {
    /// A chain on `model` starting at `theta`.
    pub fn new(
        model: SeriesModel,
        opts: PfSgldOptions,
        theta: Vec<f64>,
        warmup: usize,
    ) -> Result<Self, Error> {
        let p = model.ssm().dim();
        if theta.len() != p {
            return Err(Error::Dimension {
                what: "theta",
                expected: p,
                got: theta.len(),
            });
        }
        if theta.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        let window = BufferConfig::new(opts.window.subseq_len, opts.window.buffer)?;
        let gradient = match opts.filter {
            Some(f) => WindowGradient::Particle(Box::new(BufferedGradient::new(window, f)?)),
            None => {
                if model.lgssm().is_none() {
                    return Err(Error::setting(
                        "gradient",
                        alloc::format!(
                            "kalman needs the lgssm model (model `{}` has no Kalman smoother)",
                            model.ssm().name()
                        ),
                    ));
                }
                WindowGradient::Kalman(window)
            }
        };
        let t_len = model.y().len() as f64;
        let mut schedule = opts.schedule;
        if schedule.initial().is_nan() {
            schedule = schedule.with_initial(AUTO_STEP_FACTOR / t_len);
        }
        let h0 = schedule.initial();
        if !(h0.is_finite() && h0 > 0.0) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        Ok(PfSgldChain {
            model,
            gradient,
            schedule,
            grad: vec![0.0; p],
            theta,
            iter: 0,
            warmup,
            last_window: None,
        })
    }

    /// The last window and the filter's ESS over it (`None` before the first step).
    pub fn trace(&self) -> Option<WindowTrace> {
        let window = self.last_window?;
        Some(match &self.gradient {
            WindowGradient::Particle(g) => WindowTrace {
                window,
                ess: g.filter().ess().to_vec(),
                particles: g.filter().config().particles,
            },
            WindowGradient::Kalman(_) => WindowTrace {
                window,
                ess: Vec::new(),
                particles: 0,
            },
        })
    }
}

impl Chain for PfSgldChain {
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.model.ssm().param_names()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        vec!["window_start", "ess_min", "ess_mean", "window_log_lik"]
    }
    fn exact(&self) -> bool {
        false
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        let h = self.schedule.at(self.iter);
        self.iter += 1;
        self.grad.iter_mut().for_each(|g| *g = 0.0);
        let ssm = self.model.ssm();
        let y = self.model.y();
        let mut info = StepInfo {
            step_size: h,
            energy: f64::NAN,
            extra: [f64::NAN; 4],
            ..StepInfo::default()
        };
        let est = match &mut self.gradient {
            WindowGradient::Particle(g) => {
                let r = g.estimate(ssm, &self.theta, y, rng, &mut self.grad);
                if let Ok(gi) = &r {
                    let ess = g.filter().ess();
                    let n = ess.len().max(1) as f64;
                    info.extra[1] = ess.iter().copied().fold(f64::INFINITY, f64::min);
                    info.extra[2] = ess.iter().sum::<f64>() / n;
                    let s_len = (gi.window.sub_end - gi.window.sub_start) as u64;
                    let particles = g.filter().config().particles as u64;
                    info.lik_evals = gi.cost;
                    info.grad_evals = particles * s_len;
                }
                r
            }
            WindowGradient::Kalman(cfg) => match self.model.lgssm() {
                Some(m) => {
                    let r = buffered::kalman_estimate(m, &self.theta, y, *cfg, rng, &mut self.grad);
                    if let Ok(gi) = &r {
                        info.lik_evals = gi.cost;
                        info.grad_evals = (gi.window.sub_end - gi.window.sub_start) as u64;
                    }
                    r
                }
                None => Err(Error::setting("gradient", "kalman needs lgssm")),
            },
        };
        let gi = match est {
            Ok(gi) => gi,
            Err(_) => {
                info.divergent = true;
                return info;
            }
        };
        self.last_window = Some(gi.window);
        info.extra[0] = (gi.window.sub_start + 1) as f64;
        info.extra[3] = gi.window_log_lik;
        // a dead filter (every weight zero at some time point: p̂(y_{S*}|θ) = 0) or a
        // non-finite window likelihood leaves no usable score: divergent step, θ unchanged
        if !gi.window_log_lik.is_finite() {
            info.divergent = true;
            return info;
        }
        let lp = ssm.log_prior_grad(&self.theta, &mut self.grad);
        if !lp.is_finite() || self.grad.iter().any(|g| !g.is_finite()) {
            info.divergent = true;
            return info;
        }
        let sd = math::sqrt(h);
        for (t, g) in self.theta.iter_mut().zip(&self.grad) {
            *t += 0.5 * h * g + sd * crate::dist::std_normal(rng);
        }
        info.accept_prob = 1.0;
        info.accepted = true;
        info
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
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        vec![("step_size", self.schedule.initial())]
    }
    fn window_trace(&self) -> Option<WindowTrace> {
        self.trace()
    }
}

/// The filter settings from `particles`, `proposal`, `resampling`, `ess_threshold`, with the
/// defaults of sampler `info`'s schema; `particles` = auto (pmmh's default) starts from
/// `auto_particles` (pmmh then tunes it).
pub(crate) fn filter_settings(
    s: &Settings,
    info: &SamplerInfo,
    auto_particles: usize,
) -> Result<PfConfig, Error> {
    // absent or `auto`: the schema's default (pf-sgld), or `auto_particles` where the default
    // is automatic (pmmh)
    let spec = info.param("particles")?;
    let particles = match (s.get_str("particles"), spec.kind) {
        (None | Some("auto"), ParamKind::Int { default, .. }) if default > 0 => default,
        (None | Some("auto"), _) => auto_particles,
        _ => spec.int(s)?,
    };
    let proposal = Proposal::from_name(P_PROPOSAL.choice(s)?)?;
    let resampling = Resampling::from_name(P_RESAMPLING.choice(s)?)?;
    let kappa = info.param("ess_threshold")?.real(s)?;
    PfConfig::new(particles, proposal, resampling, kappa)
}

/// The particle filter chosen by setting `key` (`particle` or `kalman`): `Some(config)` from
/// [`filter_settings`], or `None` for the exact Kalman filter, where the filter settings have
/// no effect and are refused.
pub(crate) fn particle_or_kalman(
    s: &Settings,
    info: &SamplerInfo,
    key: &str,
    auto_particles: usize,
) -> Result<Option<PfConfig>, Error> {
    if info.param(key)?.choice(s)? == "kalman" {
        for k in ["particles", "proposal", "resampling", "ess_threshold"] {
            if s.contains(k) {
                return Err(Error::setting(
                    k,
                    alloc::format!("has no effect with {key}=kalman"),
                ));
            }
        }
        return Ok(None);
    }
    filter_settings(s, info, auto_particles).map(Some)
}

/// The series model of a chain, or the error for an i.i.d. model.
pub(crate) fn series_of<'a>(
    sampler: &str,
    model: &'a dyn crate::model::DataModel,
) -> Result<&'a SeriesModel, Error> {
    model.as_series().ok_or_else(|| {
        Error::setting(
            "sampler",
            alloc::format!(
                "`{sampler}` needs a time-series model (lgssm, sv, garch); this model's data \
                 are i.i.d."
            ),
        )
    })
}

/// Build a `pf-sgld` chain from the user's settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: &dyn crate::model::DataModel,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let series = series_of(config.sampler, model)?;
    let s = config.settings;
    let step = P_STEP.positive_or_auto(s)?;
    let schedule = schedule_from_settings(s, step)?;
    let window = BufferConfig::new(P_SUBSEQ.int(s)?, P_BUFFER.int(s)?)?;
    let filter = particle_or_kalman(s, &PF_SGLD_INFO, "gradient", 0)?;
    let init = P_INIT.choice(s)?;
    s.check_all_used()?;
    let theta = start_point(series, init, rng)?;
    let opts = PfSgldOptions {
        schedule,
        window,
        filter,
    };
    Ok(Box::new(PfSgldChain::new(
        series.clone(),
        opts,
        theta,
        config.warmup,
    )?))
}
