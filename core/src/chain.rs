//! Chains: the object-safe face of a configured sampler (model + kernel + adaptation + state),
//! and the driver that runs warm-up then sampling and hands every draw to a sink.
//!
//! The CLI runs one chain per thread; the browser owns one chain per Web Worker and steps it in
//! batches. Both go through [`Chain`], so a sampler added to the registry appears in both.

use crate::kernel::StepInfo;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec::Vec;

/// A running chain. `step` advances one iteration: during the first `warmup` iterations it also
/// adapts (step size, metric, centres, ...); afterwards everything that defines the target is frozen.
pub trait Chain: Send {
    /// Parameter dimension.
    fn dim(&self) -> usize;
    /// Parameter names.
    fn param_names(&self) -> Vec<String>;
    /// Names of the kernel-specific extras in [`StepInfo::extra`] that are meaningful (≤ 4).
    fn extra_names(&self) -> Vec<&'static str> {
        Vec::new()
    }
    /// Whether draws carry signs (signed pseudo-marginal samplers).
    fn signed(&self) -> bool {
        false
    }
    /// Whether the sampler targets the posterior exactly (false for SG-MCMC, continuous QNHMC, ...).
    fn exact(&self) -> bool {
        true
    }
    /// One iteration.
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo;
    /// The current position θ.
    fn position(&self) -> &[f64];
    /// Iterations done so far (warm-up included).
    fn iteration(&self) -> usize;
    /// Number of warm-up iterations this chain was built with.
    fn warmup(&self) -> usize;
    /// Per-datum evaluations spent outside `step` (mode finding, centring), for cost totals.
    fn setup_cost(&self) -> Cost {
        Cost::default()
    }
    /// Time-series samplers (`pf-sgld`, `pmmh`): the window of the last filter run and the
    /// filter's ESS over it, for plots. `None` for every other sampler.
    fn window_trace(&self) -> Option<crate::kernel::pfsgld::WindowTrace> {
        None
    }
    /// Values the sampler chose itself (step size, trajectory length, subsample size, ...),
    /// final once warm-up is over, as (name, value) pairs. Empty by default.
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Work done, in per-datum evaluations.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Cost {
    /// Per-datum log-likelihood evaluations.
    pub lik_evals: u64,
    /// Per-datum gradient evaluations.
    pub grad_evals: u64,
}

impl Cost {
    /// Add a step's evaluations.
    pub fn add(&mut self, info: &StepInfo) {
        self.lik_evals += info.lik_evals;
        self.grad_evals += info.grad_evals;
    }
    /// Full-data-pass equivalents: max(likelihood, gradient) evaluations / n
    /// (a joint value-and-gradient evaluation of one datum touches it once).
    pub fn full_passes(&self, n: usize) -> f64 {
        if n == 0 {
            return 0.0;
        }
        self.lik_evals.max(self.grad_evals) as f64 / n as f64
    }
}

/// Which phase an iteration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Adapting; draws are discarded from summaries.
    Warmup,
    /// Frozen; draws are kept.
    Sampling,
}

/// Run `warmup` iterations (reported to the sink with [`Phase::Warmup`]) then `draws` kept
/// iterations. The sink receives (phase, index within phase, θ, step info).
/// Returns the cost of the sampling phase and the cost of the warm-up phase.
pub fn run_chain<F>(
    chain: &mut dyn Chain,
    rng: &mut ChainRng,
    draws: usize,
    mut sink: F,
) -> (Cost, Cost)
where
    F: FnMut(Phase, usize, &[f64], &StepInfo),
{
    let mut warm = Cost::default();
    let mut samp = Cost::default();
    while chain.iteration() < chain.warmup() {
        let k = chain.iteration();
        let info = chain.step(rng);
        warm.add(&info);
        sink(Phase::Warmup, k, chain.position(), &info);
    }
    for k in 0..draws {
        let info = chain.step(rng);
        samp.add(&info);
        sink(Phase::Sampling, k, chain.position(), &info);
    }
    (samp, warm)
}

/// What one chain of [`run_chains`] cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChainCost {
    /// Setup (initialisation, step-size heuristic, mode finding, ...).
    pub setup: Cost,
    /// Warm-up iterations.
    pub warmup: Cost,
    /// Kept iterations.
    pub sampling: Cost,
}

/// Build and run `n_chains` chains one after another (no threads): chain c is built and stepped
/// on its own stream [`chain_rng`](crate::rng::chain_rng)`(seed, c)`, so its draws do not depend
/// on how many other chains run or in which order — the CLI's threads and the browser's workers
/// produce the same draws. The sink receives (chain, phase, index within phase, θ, step info).
pub fn run_chains<F>(
    config: &crate::registry::ChainConfig<'_>,
    model: alloc::sync::Arc<dyn crate::model::DataModel>,
    seed: u64,
    n_chains: usize,
    draws: usize,
    mut sink: F,
) -> Result<Vec<ChainCost>, crate::Error>
where
    F: FnMut(usize, Phase, usize, &[f64], &StepInfo),
{
    let mut out = Vec::with_capacity(n_chains);
    for c in 0..n_chains {
        let mut rng = crate::rng::chain_rng(seed, c as u64);
        let mut chain = crate::registry::build_chain(config, model.clone(), &mut rng)?;
        let (sampling, warmup) = run_chain(chain.as_mut(), &mut rng, draws, |p, k, th, info| {
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
