//! Settings schema and parsing of `austere-mh` and `mh-sublhd` (kernels in
//! [`crate::kernel::minibatch_mh::baselines`]), run by the minibatch driver.

use super::{start_chain, P_CONTROL, P_STEP, P_TEMPERATURE};
use crate::chain::Chain;
use crate::error::Error;
use crate::kernel::minibatch_mh::baselines::{AustereMh, MhSubLhd};
use crate::model::DataModel;
use crate::optim::{ModeOptions, P_MODE_MAX_ITER, P_MODE_MEMORY, P_MODE_METHOD, P_MODE_TOL};
use crate::rng::ChainRng;
use crate::sampler::share::Sharing;
use crate::sampler::{P_INIT, P_INIT_RADIUS};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use alloc::boxed::Box;
use alloc::sync::Arc;

const P_BATCH_AUSTERE: ParamSpec = ParamSpec {
    key: "batch_step",
    description: "batch increment m of the sequential t-test",
    kind: ParamKind::Int {
        default: 50,
        min: 2,
        max: usize::MAX,
    },
};

const P_EPSILON: ParamSpec = ParamSpec {
    key: "epsilon",
    description: "per-look level ε: stop when the t-test p-value is below ε",
    kind: ParamKind::RealOpen {
        default: 0.005,
        min: 0.0,
        max: 0.5,
        min_open: true,
        max_open: true,
    },
};

const P_DESIGN: ParamSpec = ParamSpec {
    key: "design",
    description: "fixed: the given (batch_step, epsilon); conservative: AustereMH(c), the grid design with worst-case error < error_bound; nonconservative: AustereMH(nc), the design for each iteration's full-data μ_std",
    kind: ParamKind::Choice(&["fixed", "conservative", "nonconservative"]),
};

const P_ERROR_BOUND: ParamSpec = ParamSpec {
    key: "error_bound",
    description: "Δ*: bound on a test's probability of a wrong decision (designs conservative and nonconservative)",
    kind: ParamKind::RealOpen {
        default: 0.1,
        min: 0.0,
        max: 0.5,
        min_open: true,
        max_open: true,
    },
};

const P_BATCH_SUBLHD: ParamSpec = ParamSpec {
    key: "batch_step",
    description: "initial batch size m (then grown geometrically by γ)",
    kind: ParamKind::Int {
        default: 50,
        min: 2,
        max: usize::MAX,
    },
};

const P_GAMMA: ParamSpec = ParamSpec {
    key: "gamma",
    description: "geometric batch growth factor γ",
    kind: ParamKind::RealOpen {
        default: 1.5,
        min: 1.0,
        max: f64::INFINITY,
        min_open: true,
        max_open: true,
    },
};

const P_DELTA: ParamSpec = ParamSpec {
    key: "delta",
    description: "total error level δ of the confidence sampler",
    kind: ParamKind::RealOpen {
        default: 0.01,
        min: 0.0,
        max: 1.0,
        min_open: true,
        max_open: true,
    },
};

const P_P: ParamSpec = ParamSpec {
    key: "p",
    description: "exponent p of the error schedule δ_k = δ(p−1)/(p k^p)",
    kind: ParamKind::RealOpen {
        default: 2.0,
        min: 1.0,
        max: f64::INFINITY,
        min_open: true,
        max_open: true,
    },
};

/// Registry entry of `austere-mh`.
pub const AUSTERE_MH_INFO: SamplerInfo = SamplerInfo {
    name: "austere-mh",
    description: "AustereMH: sequential t-test on a growing minibatch (Korattikara et al. 2014)",
    exact: false,
    signed: false,
    models: &[],
    params: &[
        P_STEP,
        P_TEMPERATURE,
        P_DESIGN,
        P_BATCH_AUSTERE,
        P_EPSILON,
        P_ERROR_BOUND,
        P_INIT,
        P_INIT_RADIUS,
        P_CONTROL,
        P_MODE_METHOD,
        P_MODE_MAX_ITER,
        P_MODE_TOL,
        P_MODE_MEMORY,
    ],
};

/// Registry entry of `mh-sublhd`.
pub const MH_SUBLHD_INFO: SamplerInfo = SamplerInfo {
    name: "mh-sublhd",
    description: "MHSubLhd: empirical-Bernstein confidence sampler (Bardenet et al. 2014)",
    exact: false,
    signed: false,
    models: &[],
    params: &[
        P_STEP,
        P_TEMPERATURE,
        P_BATCH_SUBLHD,
        P_GAMMA,
        P_DELTA,
        P_P,
        P_INIT,
        P_INIT_RADIUS,
        P_CONTROL,
        P_MODE_METHOD,
        P_MODE_MAX_ITER,
        P_MODE_TOL,
        P_MODE_MEMORY,
    ],
};

/// Build an `austere-mh` or `mh-sublhd` chain from validated settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let s = config.settings;
    let step = super::step_from_settings(s, model.as_ref())?;
    let control = super::control_from_settings(s, model.as_ref())?;
    let temperature = P_TEMPERATURE.real(s)?;
    let austere = config.sampler == "austere-mh";
    let m = if austere {
        P_BATCH_AUSTERE
    } else {
        P_BATCH_SUBLHD
    }
    .int(s)?;
    let (init, radius) = crate::sampler::start_from_settings(s)?;
    let mode = ModeOptions::from_settings(s)?;
    let control = control.then_some(&mode);
    if austere {
        let design = P_DESIGN.choice(s)?;
        let k = if design == "fixed" {
            if s.contains("error_bound") {
                return Err(Error::setting(
                    "error_bound",
                    "has no effect with design=fixed (use design=conservative or nonconservative)",
                ));
            }
            let eps = P_EPSILON.real(s)?;
            s.check_all_used()?;
            AustereMh::new(step, temperature, m, eps)?
        } else {
            for key in ["batch_step", "epsilon"] {
                if s.contains(key) {
                    return Err(Error::setting(
                        key,
                        alloc::format!(
                            "has no effect with design={design} (the design search chooses it)"
                        ),
                    ));
                }
            }
            let bound = P_ERROR_BOUND.real(s)?;
            s.check_all_used()?;
            if design == "conservative" {
                AustereMh::conservative(step, temperature, model.n(), bound)?
            } else {
                AustereMh::non_conservative(step, temperature, model.n(), bound)?
            }
        };
        start_chain(k, model, init, radius, config.warmup, rng, control, sharing)
    } else {
        let gamma = P_GAMMA.real(s)?;
        let delta = P_DELTA.real(s)?;
        let p = P_P.real(s)?;
        s.check_all_used()?;
        let k = MhSubLhd::new(step, temperature, m, gamma, delta, p)?;
        start_chain(k, model, init, radius, config.warmup, rng, control, sharing)
    }
}
