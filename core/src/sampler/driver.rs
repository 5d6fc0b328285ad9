//! The generic chain driver: any kernel, any warm-up, one [`Chain`].
//!
//! A sampler is a [`Kernel`] (its mathematics: `init`, `step`), described by [`KernelInfo`],
//! plus a [`Warmup`] (what changes in the kernel during the first `warmup` iterations: step
//! size, metric, centres, schedules; [`NoWarmup`] for a kernel frozen from the start). The
//! [`Driver`] runs them: each iteration is one kernel step; during warm-up the warm-up then
//! adapts the kernel and its extra work is charged to that step; afterwards nothing changes.
//! Every cost the chain reports comes from the kernel's [`StepInfo`] plus the warm-up's.

use crate::chain::{Chain, Cost};
use crate::kernel::{HasPosition, Kernel, KernelInfo, StepInfo};
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec::Vec;

/// What adapts during warm-up. `adapt` runs after each warm-up iteration, `finish` once after
/// the last; both may change the kernel (never the target).
pub trait Warmup<K: Kernel<T>, T> {
    /// After warm-up iteration `t` (0-based) whose step reported `info`: adapt `kernel` (the
    /// state may be used, e.g. as a draw for a metric estimate; `info`'s extras may be updated
    /// to what the adaptation changed). Returns the per-datum work spent, charged to this
    /// iteration.
    fn adapt(
        &mut self,
        t: usize,
        kernel: &mut K,
        target: &T,
        state: &mut K::State,
        info: &mut StepInfo,
        rng: &mut ChainRng,
    ) -> Cost;
    /// After the last warm-up iteration: freeze the adapted values in the kernel.
    fn finish(&mut self, _kernel: &mut K) {}
    /// Whether it keeps adapting after warm-up (`adapt` is then called at every iteration, and
    /// the chain is not exact: continuous adaptation changes the kernel's stationary law).
    fn continues(&self) -> bool {
        false
    }
    /// The chain's description, when the warm-up decides it (see [`Description`]); `None`:
    /// the kernel's ([`KernelInfo`]).
    fn describe(&self) -> Option<Description> {
        None
    }
    /// Values the warm-up chose (step size, ...), reported with the kernel's own.
    fn resolved(&self, _kernel: &K) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// What a chain says about itself (its extras' names, whether its draws carry signs, whether
/// it is exact), when its warm-up rather than its current kernel decides: a warm-up that
/// replaces the kernel's estimator at its end (`hmc-ecs-signed`) describes the final kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Description {
    /// Names of the meaningful extras.
    pub extra_names: Vec<&'static str>,
    /// Whether draws carry signs.
    pub signed: bool,
    /// Whether the chain targets the posterior exactly.
    pub exact: bool,
}

/// A kernel frozen from the first iteration: warm-up iterations are ordinary steps.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWarmup;

impl<K: Kernel<T>, T> Warmup<K, T> for NoWarmup {
    fn adapt(
        &mut self,
        _t: usize,
        _kernel: &mut K,
        _target: &T,
        _state: &mut K::State,
        _info: &mut StepInfo,
        _rng: &mut ChainRng,
    ) -> Cost {
        Cost::default()
    }
}

/// A kernel, its target and state, and its warm-up, run as a [`Chain`].
pub struct Driver<K: Kernel<T>, T, W> {
    pub(crate) kernel: K,
    pub(crate) target: T,
    pub(crate) state: K::State,
    pub(crate) warmup: W,
    names: Vec<String>,
    n_warmup: usize,
    iteration: usize,
    setup: Cost,
}

impl<K: Kernel<T>, T, W> Driver<K, T, W> {
    /// A driver at `state` (built by the caller, whose work `setup` it reports), running
    /// `n_warmup` warm-up iterations. `names` are the parameter names (length d).
    pub fn from_parts(
        kernel: K,
        target: T,
        state: K::State,
        warmup: W,
        names: Vec<String>,
        n_warmup: usize,
        setup: Cost,
    ) -> Self {
        Driver {
            kernel,
            target,
            state,
            warmup,
            names,
            n_warmup,
            iteration: 0,
            setup,
        }
    }

    /// Add set-up work done after construction (a control variate's pass, ...).
    pub fn add_setup(&mut self, cost: Cost) {
        self.setup += cost;
    }
    /// The kernel (with whatever warm-up has set).
    pub fn kernel(&self) -> &K {
        &self.kernel
    }
    /// The kernel's state.
    pub fn state(&self) -> &K::State {
        &self.state
    }
    /// The target.
    pub fn target(&self) -> &T {
        &self.target
    }
    /// The warm-up.
    pub fn warmup_schedule(&self) -> &W {
        &self.warmup
    }
}

impl<K, T, W> Chain for Driver<K, T, W>
where
    K: KernelInfo<T> + Send,
    T: Send,
    W: Warmup<K, T> + Send,
{
    fn dim(&self) -> usize {
        self.names.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        match self.warmup.describe() {
            Some(d) => d.extra_names,
            None => self.kernel.extra_names(),
        }
    }
    fn signed(&self) -> bool {
        match self.warmup.describe() {
            Some(d) => d.signed,
            None => self.kernel.signed(),
        }
    }
    fn exact(&self) -> bool {
        let exact = match self.warmup.describe() {
            Some(d) => d.exact,
            None => self.kernel.exact(),
        };
        exact && !self.warmup.continues()
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        let mut info = self.kernel.step(rng, &self.target, &mut self.state);
        let t = self.iteration;
        self.iteration += 1;
        if t < self.n_warmup || self.warmup.continues() {
            let c = self.warmup.adapt(
                t,
                &mut self.kernel,
                &self.target,
                &mut self.state,
                &mut info,
                rng,
            );
            info.lik_evals += c.lik_evals;
            info.grad_evals += c.grad_evals;
            if t + 1 == self.n_warmup {
                self.warmup.finish(&mut self.kernel);
            }
        }
        info
    }
    fn position(&self) -> &[f64] {
        self.state.position()
    }
    fn iteration(&self) -> usize {
        self.iteration
    }
    fn warmup(&self) -> usize {
        self.n_warmup
    }
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    fn window_trace(&self) -> Option<crate::ssm::buffered::WindowTrace> {
        self.kernel.window_trace(&self.state)
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        let mut r = self.kernel.resolved(&self.state);
        r.extend(self.warmup.resolved(&self.kernel));
        r
    }
}
