//! The `pf-sgld` sampler: the buffered particle-filter SGLD kernel
//! ([`crate::kernel::pfsgld`], formulas, cost and extras there) on the generic driver, its
//! settings, and the particle-filter settings it shares with `pmmh`.

use super::driver::{Driver, NoWarmup};
use crate::chain::{Chain, Cost};
use crate::error::Error;
pub use crate::kernel::pfsgld::{PfSgld, PfSgldState, WindowGradient};
use crate::kernel::sgmcmc::StepSchedule;
use crate::kernel::Kernel;
use crate::model::SeriesModel;
use crate::rng::{uniform, ChainRng};
use crate::sampler::sgmcmc::{schedule_from_settings, P_SCHEDULE, P_SCHEDULE_B, P_SCHEDULE_GAMMA};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
pub use crate::ssm::buffered::WindowTrace;
use crate::ssm::buffered::{BufferConfig, P_BUFFER, P_SUBSEQ_LEN};
use crate::ssm::pf::{
    p_ess_threshold, p_particles, PfConfig, Proposal, PF_PARAMS, P_PROPOSAL, P_RESAMPLING,
};
use crate::ssm::resample::Resampling;
use alloc::boxed::Box;
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
        P_SUBSEQ_LEN,
        P_BUFFER,
        p_particles(200),
        P_PROPOSAL,
        P_RESAMPLING,
        p_ess_threshold(1.0),
        P_GRADIENT,
        P_INIT,
    ],
};

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

/// A buffered PF-SGLD chain: [`PfSgld`] on the generic driver (no warm-up adaptation).
pub type PfSgldChain = Driver<PfSgld, SeriesModel, NoWarmup>;

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

impl Driver<PfSgld, SeriesModel, NoWarmup> {
    /// A chain on `model` starting at `theta`; `step_size` auto (NaN h₀) is 0.1/T.
    pub fn new(
        model: SeriesModel,
        opts: PfSgldOptions,
        theta: Vec<f64>,
        warmup: usize,
    ) -> Result<Self, Error> {
        let t_len = model.y().len() as f64;
        let mut schedule = opts.schedule;
        if schedule.initial().is_nan() {
            schedule = schedule.with_initial(AUTO_STEP_FACTOR / t_len);
        }
        let kernel = PfSgld {
            schedule,
            window: BufferConfig::new(opts.window.subseq_len, opts.window.buffer)?,
            filter: opts.filter,
        };
        let state = kernel.init(&model, &theta)?;
        let h0 = schedule.initial();
        if !(h0.is_finite() && h0 > 0.0) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        let names = model.ssm().param_names();
        Ok(Driver::from_parts(
            kernel,
            model,
            state,
            NoWarmup,
            names,
            warmup,
            Cost::default(),
        ))
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
    let particles = match (s.get_str(spec.key), spec.kind) {
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
        for k in PF_PARAMS.iter().map(|p| p.key) {
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
    let window = BufferConfig::from_settings(s)?;
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
