//! The registry: every model and sampler by name, with a parameter schema the CLI validates
//! `--set` against and the browser builds its forms from. A sampler added here appears in both.

use crate::chain::Chain;
use crate::data::Table;
use crate::error::Error;
use crate::model::DataModel;
use crate::rng::ChainRng;
use crate::settings::Settings;

pub mod models;
pub mod samplers;

pub use crate::sampler::share::{SetupShare, Sharing};
pub use crate::schema::{ChainConfig, ModelInfo, ParamKind, ParamSpec, SamplerInfo};
use alloc::boxed::Box;
use alloc::sync::Arc;
pub use samplers::{check_compatible, compatible, series_models};

/// Every sampler available, in display order.
pub fn samplers() -> &'static [SamplerInfo] {
    samplers::SAMPLERS
}

/// Every model available, in display order.
pub fn models() -> &'static [ModelInfo] {
    models::MODELS
}

/// Look a sampler up by name.
pub fn sampler(name: &str) -> Result<&'static SamplerInfo, Error> {
    samplers()
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "sampler",
            name: name.into(),
        })
}

/// Build a data model from a table. `response`/features/intercept/standardisation come from
/// `design`; priors and model options from `settings` (keys it reads are marked used).
pub fn build_model(
    name: &str,
    table: &Table,
    design: &crate::data::DesignSpec,
    settings: &Settings,
) -> Result<Arc<dyn DataModel>, Error> {
    models::build(name, table, design, settings, None)
}

/// [`build_model`] with the model's set-up passes (a GLM's whitening: the mode search and its
/// Hessian) and later full-data passes split through `parallel` (a host with threads; chunked
/// sums, so the model is the same whatever the threads).
pub fn build_model_on(
    name: &str,
    table: &Table,
    design: &crate::data::DesignSpec,
    settings: &Settings,
    parallel: Arc<dyn crate::parallel::ParallelFor>,
) -> Result<Arc<dyn DataModel>, Error> {
    models::build(name, table, design, settings, Some(parallel))
}

/// [`build_model_on`] for a regression model ([`models::takes_design`]) from its design, made
/// by the caller straight from the data (the CLI's CSV reader writes a file's cells into the
/// design's rows by [`DesignSpec::plan`](crate::data::DesignSpec::plan)): the same model as
/// from the table that design was made from ([`models::build_from_design`]).
pub fn build_model_from_design_on(
    name: &str,
    design: crate::data::Design,
    response: &str,
    settings: &Settings,
    parallel: Arc<dyn crate::parallel::ParallelFor>,
) -> Result<Arc<dyn DataModel>, Error> {
    models::build_from_design(name, design, response, settings, Some(parallel))
}

/// Build a chain for `model`. The starting point is drawn from `rng` (the chain's own stream),
/// so the same seed gives the same chain natively and in the browser.
///
/// When the model samples in whitened coordinates ([`DataModel::user_map`]), the chain is
/// wrapped so that its positions are θ on the user's scale: one wrapper for every sampler.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    build_chain_sharing(config, model, rng, Sharing::Off)
}

/// [`build_chain`] with the set-up's deterministic work shared between a run's chains
/// ([`Sharing`]: the stochastic-gradient samplers' mode search and control-variate centre,
/// HMC-ECS's control variates, the minibatch tests' mode search and control variate, SMH's
/// kernel; the other samplers ignore it): the first chain built with `Sharing::Record`, the others with
/// `Sharing::Reuse` of what it kept are the chains [`build_chain`] builds, bit for bit, and
/// only the first counts the shared work's evaluations.
pub fn build_chain_sharing(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let chain = samplers::build_sharing(config, model.clone(), rng, sharing)?;
    Ok(match model.user_map() {
        Some(_) => Box::new(Mapped::new(chain, model, MapKind::User)),
        None => chain,
    })
}

/// [`build_chain`], with positions and names on the reported scale of the output contract
/// ([`DataModel::reports_transformed`]: time-series models report `phi, sigma, tau` where the
/// samplers move `phi, log_sigma, log_tau`). What `tallmc run` and the playground write and
/// show; [`DataModel::position_of_reported`] maps a reported draw back (for scores and the KSD).
pub fn build_reported_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    build_reported_chain_sharing(config, model, rng, Sharing::Off)
}

/// [`build_reported_chain`] with the set-up shared as in [`build_chain_sharing`].
pub fn build_reported_chain_sharing(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let chain = build_chain_sharing(config, model.clone(), rng, sharing)?;
    Ok(if model.reports_transformed() {
        Box::new(Mapped::new(chain, model, MapKind::Reported))
    } else {
        chain
    })
}

/// What one chain of [`run_chains`] cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChainCost {
    /// Setup (initialisation, step-size heuristic, mode finding, ...).
    pub setup: crate::chain::Cost,
    /// Warm-up iterations.
    pub warmup: crate::chain::Cost,
    /// Kept iterations.
    pub sampling: crate::chain::Cost,
}

/// Build and run `n_chains` chains one after another (no threads): chain c is built and stepped
/// on its own stream [`chain_rng`](crate::rng::chain_rng)`(seed, c)`, so its draws do not depend
/// on how many other chains run or in which order — the CLI's threads and the browser's workers
/// produce the same draws. The sink receives (chain, phase, index within phase, θ, step info).
pub fn run_chains<F>(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    seed: u64,
    n_chains: usize,
    draws: usize,
    mut sink: F,
) -> Result<alloc::vec::Vec<ChainCost>, Error>
where
    F: FnMut(usize, crate::chain::Phase, usize, &[f64], &crate::kernel::StepInfo),
{
    let mut out = alloc::vec::Vec::with_capacity(n_chains);
    for c in 0..n_chains {
        let mut rng = crate::rng::chain_rng(seed, c as u64);
        let mut chain = build_chain(config, model.clone(), &mut rng)?;
        let (sampling, warmup) =
            crate::chain::run_chain(chain.as_mut(), &mut rng, draws, |p, k, th, info| {
                sink(c, p, k, th, info)
            });
        out.push(ChainCost {
            setup: chain.setup_cost(),
            warmup,
            sampling,
        });
    }
    Ok(out)
}

/// How [`Mapped`] maps the inner chain's position.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MapKind {
    /// θ = θ̂ + C⁻ᵀ z ([`DataModel::user_map`]).
    User,
    /// The reported scale ([`DataModel::to_reported`]), with the reported names.
    Reported,
}

/// A chain whose positions (and, for [`MapKind::Reported`], names) are those of its inner
/// chain mapped through the model: every other method is the inner chain's.
struct Mapped {
    inner: Box<dyn Chain>,
    model: Arc<dyn DataModel>,
    kind: MapKind,
    out: alloc::vec::Vec<f64>,
}

impl Mapped {
    fn new(inner: Box<dyn Chain>, model: Arc<dyn DataModel>, kind: MapKind) -> Self {
        let out = alloc::vec![0.0; inner.dim()];
        let mut m = Mapped {
            inner,
            model,
            kind,
            out,
        };
        m.map();
        m
    }

    fn map(&mut self) {
        match self.kind {
            MapKind::User => {
                if let Some(map) = self.model.user_map() {
                    map.to_user(self.inner.position(), &mut self.out);
                }
            }
            MapKind::Reported => self.model.to_reported(self.inner.position(), &mut self.out),
        }
    }
}

impl Chain for Mapped {
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn param_names(&self) -> alloc::vec::Vec<alloc::string::String> {
        match self.kind {
            MapKind::User => self.inner.param_names(),
            MapKind::Reported => self.model.reported_names(),
        }
    }
    fn extra_names(&self) -> alloc::vec::Vec<&'static str> {
        self.inner.extra_names()
    }
    fn signed(&self) -> bool {
        self.inner.signed()
    }
    fn exact(&self) -> bool {
        self.inner.exact()
    }
    fn step(&mut self, rng: &mut ChainRng) -> crate::kernel::StepInfo {
        let info = self.inner.step(rng);
        self.map();
        info
    }
    fn position(&self) -> &[f64] {
        &self.out
    }
    fn iteration(&self) -> usize {
        self.inner.iteration()
    }
    fn warmup(&self) -> usize {
        self.inner.warmup()
    }
    fn setup_cost(&self) -> crate::chain::Cost {
        self.inner.setup_cost()
    }
    fn window_trace(&self) -> Option<crate::ssm::buffered::WindowTrace> {
        self.inner.window_trace()
    }
    fn resolved(&self) -> alloc::vec::Vec<(&'static str, f64)> {
        self.inner.resolved()
    }
}
