//! Samplers: the drivers that run a kernel as a [`Chain`](crate::chain::Chain) — warm-up,
//! start point, cost counting — and each sampler's settings schema and parsing.
//!
//! Above the kernels, estimators, models and particle filters they drive; below the
//! [registry](crate::registry), which lists them. Nothing below this module imports it.

pub mod adaptive;
pub mod driver;
pub mod hmcecs;
pub mod minibatch_mh;
pub mod pfsgld;
pub mod pmmh;
pub mod qnhmc;
pub mod sgmcmc;
pub mod share;
pub mod smh;

pub use adaptive::{AdaptConfig, AdaptiveChain, MetricAdaptation, StanWarmup};
pub use driver::{Description, Driver, NoWarmup, Warmup};

use crate::error::Error;
use crate::model::DataModel;
use crate::rng::{uniform, ChainRng};
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::vec::Vec;

/// The `init` setting [`at_start`] reads (random, zero, model), shared by every sampler that
/// starts there.
pub(crate) const P_INIT: ParamSpec = ParamSpec {
    key: "init",
    description:
        "starting point: random (uniform(−r, r) per coordinate), zero, model (the model's own)",
    kind: ParamKind::Choice(&["random", "zero", "model"]),
};

/// The `init_radius` setting [`at_start`] reads.
pub(crate) const P_INIT_RADIUS: ParamSpec = ParamSpec {
    key: "init_radius",
    description: "r of the random starting point uniform(−r, r)",
    kind: ParamKind::Real {
        default: 2.0,
        min: 0.0,
        max: 1e6,
    },
};

/// The starting point's settings for [`at_start`]: (`init`, `init_radius`).
pub(crate) fn start_from_settings(s: &Settings) -> Result<(&'static str, f64), Error> {
    Ok((P_INIT.choice(s)?, P_INIT_RADIUS.real(s)?))
}

/// Build a chain at the configured starting point `init`: `random` draws each coordinate
/// uniformly in (−`radius`, `radius`) and is redrawn while `build` reports a non-finite start
/// (up to 100 times, as Stan does); `zero` and `model` (the model's own point) are tried once.
/// `build` gets the position and the chain's RNG; any other error is returned at once.
pub fn at_start<C>(
    init: &str,
    radius: f64,
    model: &dyn DataModel,
    rng: &mut ChainRng,
    mut build: impl FnMut(&[f64], &mut ChainRng) -> Result<C, Error>,
) -> Result<C, Error> {
    let d = model.dim();
    let attempts = if init == "random" { 100 } else { 1 };
    let mut last = Error::NonFiniteStart;
    for _ in 0..attempts {
        let position: Vec<f64> = match init {
            "zero" => alloc::vec![0.0; d],
            "model" => model.initial_point(),
            _ => (0..d)
                .map(|_| radius * (2.0 * uniform(rng) - 1.0))
                .collect(),
        };
        match build(&position, rng) {
            Err(Error::NonFiniteStart) => last = Error::NonFiniteStart,
            r => return r,
        }
    }
    Err(last)
}
