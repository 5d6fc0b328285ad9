//! Chains: the object-safe face of a configured sampler (model + kernel + adaptation + state),
//! and the driver that runs warm-up then sampling and hands every draw to a sink.
//!
//! The CLI runs one chain per thread; the browser owns one chain per Web Worker and steps it in
//! batches. Both go through [`Chain`], so a sampler added to the registry appears in both.

pub use crate::cost::Cost;
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
    fn window_trace(&self) -> Option<crate::ssm::buffered::WindowTrace> {
        None
    }
    /// Values the sampler chose itself (step size, trajectory length, subsample size, ...),
    /// final once warm-up is over, as (name, value) pairs. Empty by default.
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
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
        warm += info.cost();
        sink(Phase::Warmup, k, chain.position(), &info);
    }
    for k in 0..draws {
        let info = chain.step(rng);
        samp += info.cost();
        sink(Phase::Sampling, k, chain.position(), &info);
    }
    (samp, warm)
}
