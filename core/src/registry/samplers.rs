//! Sampler registry: names, schemas and chain construction for the exact reference samplers
//! (`rwmh`, `mala`, `hmc`, `nuts`), each wrapped in an [`AdaptiveChain`] over the full-data
//! posterior.

use crate::chain::Chain;
use crate::error::Error;
use crate::kernel::{Adaptable, Hmc, Mala, Metric, Nuts, Rwmh};
use crate::model::{DataModel, FullData};
use crate::rng::ChainRng;
use crate::sampler::{
    AdaptConfig, AdaptiveChain, MetricAdaptation, P_INIT as INIT, P_INIT_RADIUS as INIT_RADIUS,
};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;

const STEP_SIZE: ParamSpec = ParamSpec {
    key: "step_size",
    description: "step size ε; auto (NaN) = adapted by dual averaging in warm-up, a number = fixed",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const fn target_accept(default: f64) -> ParamSpec {
    ParamSpec {
        key: "target_accept",
        description: "target acceptance statistic of step-size adaptation",
        kind: ParamKind::Real {
            default,
            min: 0.01,
            max: 0.99,
        },
    }
}

const METRIC: ParamSpec = ParamSpec {
    key: "metric",
    description:
        "metric adapted in warm-up: diag (windowed variances), dense (covariance), identity",
    kind: ParamKind::Choice(&["diag", "dense", "identity"]),
};

const L_STEPS: ParamSpec = ParamSpec {
    key: "L",
    description: "leapfrog steps per iteration",
    kind: ParamKind::Int {
        default: 20,
        min: 1,
        max: 100_000,
    },
};

const JITTER: ParamSpec = ParamSpec {
    key: "jitter",
    description: "step size drawn uniformly from ε·(1 ± jitter) each iteration (default 0.2: a fixed ε·L resonates with near-Gaussian targets — on the whitened real tables jitter 0 gave R-hat 1.08–1.20, 0.2 gave ≤ 1.005)",
    kind: ParamKind::Real {
        default: 0.2,
        min: 0.0,
        max: 0.99,
    },
};

const MAX_DEPTH: ParamSpec = ParamSpec {
    key: "max_depth",
    description: "maximum tree depth (at most 2^max_depth − 1 leapfrog steps)",
    kind: ParamKind::Int {
        default: 10,
        min: 1,
        max: 30,
    },
};

/// Every sampler, in display order.
pub static SAMPLERS: &[SamplerInfo] = &[
    SamplerInfo {
        name: "rwmh",
        description: "random-walk Metropolis, proposal N(θ, ε²Σ) with Σ adapted in warm-up",
        exact: true,
        signed: false,
        models: &[],
        params: &[STEP_SIZE, target_accept(0.234), METRIC, INIT, INIT_RADIUS],
    },
    SamplerInfo {
        name: "mala",
        description: "Metropolis-adjusted Langevin algorithm, preconditioned by the metric",
        exact: true,
        signed: false,
        models: &[],
        params: &[STEP_SIZE, target_accept(0.574), METRIC, INIT, INIT_RADIUS],
    },
    SamplerInfo {
        name: "hmc",
        description: "Hamiltonian Monte Carlo with L leapfrog steps and optional step-size jitter",
        exact: true,
        signed: false,
        models: &[],
        params: &[
            STEP_SIZE,
            target_accept(0.8),
            METRIC,
            INIT,
            INIT_RADIUS,
            L_STEPS,
            JITTER,
        ],
    },
    SamplerInfo {
        name: "nuts",
        description: "No-U-Turn Sampler (multinomial, Stan-style generalised criterion)",
        exact: true,
        signed: false,
        models: &[],
        params: &[
            STEP_SIZE,
            target_accept(0.8),
            METRIC,
            INIT,
            INIT_RADIUS,
            MAX_DEPTH,
        ],
    },
    crate::sampler::hmcecs::HMC_ECS_INFO,
    crate::sampler::hmcecs::HMC_ECS_SIGNED_INFO,
    crate::sampler::smh::SMH_1_INFO,
    crate::sampler::smh::SMH_2_INFO,
    crate::sampler::minibatch_mh::MH_MINIBATCH_INFO,
    crate::sampler::minibatch_mh::baselines::AUSTERE_MH_INFO,
    crate::sampler::minibatch_mh::baselines::MH_SUBLHD_INFO,
    crate::sampler::sgmcmc::SGLD_INFO,
    crate::sampler::sgmcmc::SGLD_CV_INFO,
    crate::sampler::sgmcmc::SGHMC_INFO,
    crate::sampler::sgmcmc::SGNHT_INFO,
    crate::sampler::sgmcmc::SGLD_PS_INFO,
    crate::sampler::sgmcmc::SGLD_CV_PS_INFO,
    crate::sampler::sgmcmc::ASGLD_CV_PS_INFO,
    crate::sampler::sgmcmc::DPP_SGLD_INFO,
    crate::sampler::qnhmc::QNHMC_INFO,
    crate::sampler::pfsgld::PF_SGLD_INFO,
    crate::sampler::pmmh::PMMH_INFO,
];

/// Exact samplers that run on a time-series model with an exact likelihood (`lgssm`, Kalman).
const SERIES_EXACT: &[&str] = &["rwmh", "mala", "hmc", "nuts"];

/// The time-series models (`lgssm`, `sv`, `garch`) sampler `name` runs on: all three for
/// `pf-sgld` and `pmmh`, `lgssm` (Kalman likelihood) for the exact `rwmh`, `mala`, `hmc`,
/// `nuts`, none for the samplers that subsample i.i.d. data.
pub fn series_models(name: &str) -> &'static [&'static str] {
    match name {
        "pf-sgld" | "pmmh" => crate::model::series::SERIES_MODELS,
        n if SERIES_EXACT.contains(&n) => &["lgssm"],
        _ => &[],
    }
}

/// Route time-series models and time-series samplers: `Some(result)` when this call decides,
/// `None` to continue with the i.i.d. samplers.
fn route_series(
    config: &ChainConfig<'_>,
    model: &Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Option<Result<Box<dyn Chain>, Error>> {
    match config.sampler {
        "pf-sgld" => {
            return Some(crate::sampler::pfsgld::build_chain(
                config,
                model.as_ref(),
                rng,
            ))
        }
        "pmmh" => {
            return Some(crate::sampler::pmmh::build_chain(
                config,
                model.as_ref(),
                rng,
            ))
        }
        _ => {}
    }
    let series = model.as_series()?;
    match check_compatible(config.sampler, series.ssm().name()) {
        Ok(()) => None,
        Err(e) => Some(Err(e)),
    }
}

/// Whether sampler `sampler` runs on model `model`: time-series models take the samplers
/// [`series_models`] routes to them; other models the samplers that list them (or list none).
pub fn compatible(sampler: &str, model: &str) -> bool {
    if crate::model::series::SERIES_MODELS.contains(&model) {
        return series_models(sampler).contains(&model);
    }
    super::sampler(sampler).is_ok_and(|i| i.models.is_empty() || i.models.contains(&model))
}

/// [`compatible`], as an error that says what to use instead.
pub fn check_compatible(sampler: &str, model: &str) -> Result<(), Error> {
    if compatible(sampler, model) {
        return Ok(());
    }
    let exact_series = series_models("nuts").contains(&model);
    let series = crate::model::series::SERIES_MODELS.contains(&model);
    let exact = SERIES_EXACT.contains(&sampler);
    let supported: Vec<&str> = super::models()
        .iter()
        .map(|m| m.name)
        .filter(|m| compatible(sampler, m))
        .collect();
    // The names are echoed: cut, so an unknown one stays one short line.
    let (sampler, model) = (
        crate::settings::shorten(sampler),
        crate::settings::shorten(model),
    );
    let msg = if series {
        if exact {
            alloc::format!(
                "`{sampler}` needs an exact likelihood, which model `{model}` does not have: \
                 use pmmh (exact, particle likelihood) or pf-sgld"
            )
        } else {
            alloc::format!(
                "`{sampler}` subsamples i.i.d. data and does not apply to the time-series model \
                 `{model}`: use pf-sgld or pmmh{}",
                if exact_series {
                    " (or the exact rwmh, mala, hmc, nuts with the Kalman likelihood)"
                } else {
                    ""
                }
            )
        }
    } else {
        alloc::format!(
            "sampler `{sampler}` does not support model `{model}` (it supports: {})",
            supported.join(", ")
        )
    };
    Err(Error::setting("sampler", msg))
}

/// The settings every exact sampler shares.
struct Common {
    step_size: f64,
    target_accept: f64,
    metric: MetricAdaptation,
    init: &'static str,
    init_radius: f64,
}

fn common(s: &Settings, info: &SamplerInfo) -> Result<Common, Error> {
    let step_size = STEP_SIZE.positive_or_auto(s)?;
    let target_accept = info.param("target_accept")?.real(s)?;
    let metric = match METRIC.choice(s)? {
        "dense" => MetricAdaptation::Dense,
        "identity" => MetricAdaptation::Identity,
        _ => MetricAdaptation::Diag,
    };
    let (init, init_radius) = crate::sampler::start_from_settings(s)?;
    Ok(Common {
        step_size,
        target_accept,
        metric,
        init,
        init_radius,
    })
}

type Target = FullData<Arc<dyn DataModel>>;

/// Wrap a kernel into an adaptive chain at the configured starting point. A random start that
/// gives a non-finite density is redrawn (up to 100 times, as Stan does).
fn make_chain<K>(
    kernel: K,
    model: Arc<dyn DataModel>,
    c: &Common,
    warmup: usize,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error>
where
    K: Adaptable<Target> + Clone + Send + 'static,
{
    let _d = model.dim();
    let names = model.param_names();
    let config = AdaptConfig {
        warmup,
        target_accept: c.target_accept,
        adapt_step_size: c.step_size.is_nan(),
        metric: c.metric,
    };
    let chain = crate::sampler::at_start(c.init, c.init_radius, model.as_ref(), rng, |p, rng| {
        let target = FullData::new(model.clone());
        AdaptiveChain::new(kernel.clone(), target, p, names.clone(), config, rng)
    })?;
    Ok(Box::new(chain))
}

/// Build a chain for sampler `config.sampler` on the full-data posterior of `model`.
/// Every setting is validated; a key no sampler or model read is an [`Error::UnknownSetting`].
pub fn build(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    build_sharing(config, model, rng, crate::sampler::share::Sharing::Off)
}

/// [`build`] with the set-up's deterministic work shared between a run's chains
/// ([`crate::sampler::share::Sharing`]: the stochastic-gradient samplers' mode search and
/// control-variate centre, HMC-ECS's control variates, the minibatch tests' mode search and
/// control variate, SMH's kernel; the others build as [`build`]).
pub fn build_sharing(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: crate::sampler::share::Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let s = config.settings;
    let d = model.dim();
    if d == 0 {
        return Err(Error::data("the model has no parameters"));
    }
    if let Some(r) = route_series(config, &model, rng) {
        return r;
    }
    if let "hmc-ecs" | "hmc-ecs-signed" = config.sampler {
        let signed = config.sampler == "hmc-ecs-signed";
        return crate::sampler::hmcecs::build_chain(config, model, rng, signed, sharing);
    }
    if let "smh-1" | "smh-2" = config.sampler {
        return crate::sampler::smh::build_chain(config, model, sharing);
    }
    if config.sampler == "mh-minibatch" {
        return crate::sampler::minibatch_mh::build_chain(config, model, rng, sharing);
    }
    if let "austere-mh" | "mh-sublhd" = config.sampler {
        return crate::sampler::minibatch_mh::baselines::build_chain(config, model, rng, sharing);
    }
    if config.sampler == "qnhmc" {
        return crate::sampler::qnhmc::build_chain(config, model, rng);
    }
    if crate::sampler::sgmcmc::is_sg_sampler(config.sampler) {
        return crate::sampler::sgmcmc::build_chain(config, model, rng, sharing);
    }
    let info = match config.sampler {
        "rwmh" | "mala" | "hmc" | "nuts" => super::sampler(config.sampler)?,
        other => {
            return Err(Error::Unknown {
                what: "sampler",
                name: other.into(),
            })
        }
    };
    let c = common(s, info)?;
    // Auto step size starts the heuristic from 1, as Stan does.
    let eps = if c.step_size.is_nan() {
        1.0
    } else {
        c.step_size
    };
    let metric = Metric::Identity(d);
    let w = config.warmup;
    match config.sampler {
        "rwmh" => {
            s.check_all_used()?;
            make_chain(Rwmh::new(eps, metric)?, model, &c, w, rng)
        }
        "mala" => {
            s.check_all_used()?;
            make_chain(Mala::new(eps, metric)?, model, &c, w, rng)
        }
        "hmc" => {
            let l = L_STEPS.int(s)?;
            let jitter = JITTER.real(s)?;
            s.check_all_used()?;
            make_chain(Hmc::new(eps, metric, l, jitter)?, model, &c, w, rng)
        }
        _ => {
            let depth = MAX_DEPTH.int(s)?;
            s.check_all_used()?;
            make_chain(Nuts::new(eps, metric, depth)?, model, &c, w, rng)
        }
    }
}
