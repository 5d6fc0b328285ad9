//! A chain that adapts step size and metric during warm-up (Stan's scheme) and then freezes them.
//!
//! # Formula
//! Every warm-up iteration feeds the step's acceptance statistic to dual averaging. Draws in the
//! slow windows feed a Welford estimate; at the end of each window the metric becomes
//!   diag:  (n/(n + 5)) σ̂² + 10⁻³ · 5/(n + 5)
//!   dense: (n/(n + 5)) Σ̂  + 10⁻³ · 5/(n + 5) · I
//! then the step size is re-initialised by the doubling heuristic and dual averaging restarts
//! at μ = log(10 ε). At the end of warm-up ε = exp(x̄), and nothing changes afterwards.
//!
//! ## References
//! Stan Reference Manual, "HMC algorithm parameters"; Hoffman & Gelman (2014), JMLR 15.

use crate::adapt::{
    find_reasonable_step_size, DualAveraging, WelfordCov, WelfordVar, WindowSchedule,
};
use crate::chain::{Chain, Cost};
use crate::error::Error;
use crate::kernel::{Adaptable, HasPosition, Metric, StepInfo};
use crate::model::LogDensity;
use crate::rng::ChainRng;
use alloc::string::String;
use alloc::vec::Vec;

/// Which metric warm-up estimates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricAdaptation {
    /// Keep the kernel's metric.
    Identity,
    /// Diagonal: per-coordinate variances.
    Diag,
    /// Dense: full covariance.
    Dense,
}

/// How a chain adapts during warm-up.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptConfig {
    /// Warm-up iterations.
    pub warmup: usize,
    /// Target acceptance statistic δ for dual averaging (and threshold of the initial heuristic).
    pub target_accept: f64,
    /// Whether the step size is adapted (false: the kernel's step size is kept as given).
    pub adapt_step_size: bool,
    /// Which metric is estimated.
    pub metric: MetricAdaptation,
}

enum Estimator {
    Diag(WelfordVar),
    Dense(WelfordCov, usize),
}

impl Estimator {
    fn add(&mut self, x: &[f64]) {
        match self {
            Estimator::Diag(w) => w.add(x),
            Estimator::Dense(w, _) => w.add(x),
        }
    }
    /// The regularised metric; `None` if it is not usable (then the old metric stays).
    fn metric(&self) -> Option<Metric> {
        match self {
            Estimator::Diag(w) => {
                let n = w.count() as f64;
                let v = w
                    .variance()
                    .iter()
                    .map(|s| (n / (n + 5.0)) * s + 1e-3 * (5.0 / (n + 5.0)))
                    .collect();
                Metric::diag(v).ok()
            }
            Estimator::Dense(w, d) => {
                let (n, d) = (w.count() as f64, *d);
                let mut c = w.covariance();
                for x in c.iter_mut() {
                    *x *= n / (n + 5.0);
                }
                for i in 0..d {
                    c[i * d + i] += 1e-3 * (5.0 / (n + 5.0));
                }
                Metric::dense(c, d).ok()
            }
        }
    }
    fn reset(&mut self) {
        match self {
            Estimator::Diag(w) => w.reset(),
            Estimator::Dense(w, _) => w.reset(),
        }
    }
}

/// Any [`Adaptable`] kernel with its target and state, adapting during the first `warmup`
/// iterations. Implements [`Chain`].
pub struct AdaptiveChain<K, T>
where
    K: Adaptable<T>,
    T: LogDensity,
{
    kernel: K,
    target: T,
    state: K::State,
    names: Vec<String>,
    config: AdaptConfig,
    iteration: usize,
    dual: Option<DualAveraging>,
    windows: WindowSchedule,
    estimator: Option<Estimator>,
    setup: Cost,
    pending: Cost,
}

impl<K, T> AdaptiveChain<K, T>
where
    K: Adaptable<T>,
    T: LogDensity,
{
    /// Initialise `kernel` at `position` and, when the step size is adapted, pick a first step
    /// size by the doubling heuristic (starting from the kernel's current step size).
    /// `names` are the parameter names (length d).
    pub fn new(
        mut kernel: K,
        target: T,
        position: &[f64],
        names: Vec<String>,
        config: AdaptConfig,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        let d = target.dim();
        if names.len() != d {
            return Err(Error::Dimension {
                what: "parameter names",
                expected: d,
                got: names.len(),
            });
        }
        if !(config.target_accept > 0.0 && config.target_accept < 1.0) {
            return Err(Error::setting("target_accept", "must be in (0, 1)"));
        }
        let state = kernel.init(&target, position)?;
        let e = target.evals_per_call();
        let mut setup = Cost {
            lik_evals: e,
            grad_evals: if kernel.uses_gradient() { e } else { 0 },
        };
        let dual = if config.adapt_step_size {
            let (eps, c) = find_reasonable_step_size(
                &kernel,
                rng,
                &target,
                &state,
                kernel.step_size(),
                config.target_accept,
            );
            setup.lik_evals += c.lik_evals;
            setup.grad_evals += c.grad_evals;
            kernel.set_step_size(eps);
            Some(DualAveraging::new(config.target_accept, eps))
        } else {
            None
        };
        let windows = WindowSchedule::new(config.warmup);
        let estimator = if windows.enabled() {
            match config.metric {
                MetricAdaptation::Identity => None,
                MetricAdaptation::Diag => Some(Estimator::Diag(WelfordVar::new(d))),
                MetricAdaptation::Dense => Some(Estimator::Dense(WelfordCov::new(d), d)),
            }
        } else {
            None
        };
        Ok(AdaptiveChain {
            kernel,
            target,
            state,
            names,
            config,
            iteration: 0,
            dual,
            windows,
            estimator,
            setup,
            pending: Cost::default(),
        })
    }

    /// The kernel (with its current step size and metric).
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
    /// The adaptation settings.
    pub fn config(&self) -> &AdaptConfig {
        &self.config
    }

    fn adapt(&mut self, info: &StepInfo, rng: &mut ChainRng) {
        if let Some(da) = self.dual.as_mut() {
            let eps = da.update(info.accept_prob);
            self.kernel.set_step_size(eps);
        }
        if let Some(est) = self.estimator.as_mut() {
            if self.windows.in_window() {
                est.add(self.state.position());
            }
            if self.windows.advance() {
                if let Some(m) = est.metric() {
                    self.kernel.set_metric(m);
                }
                est.reset();
                if let Some(da) = self.dual.as_mut() {
                    let (eps, c) = find_reasonable_step_size(
                        &self.kernel,
                        rng,
                        &self.target,
                        &self.state,
                        self.kernel.step_size(),
                        self.config.target_accept,
                    );
                    self.pending.lik_evals += c.lik_evals;
                    self.pending.grad_evals += c.grad_evals;
                    self.kernel.set_step_size(eps);
                    da.restart(eps);
                }
            }
        }
    }
}

impl<K, T> Chain for AdaptiveChain<K, T>
where
    K: Adaptable<T> + Send,
    T: LogDensity + Send,
{
    fn dim(&self) -> usize {
        self.target.dim()
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        self.kernel.extra_names()
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        let mut info = self.kernel.step(rng, &self.target, &mut self.state);
        if self.iteration < self.config.warmup {
            self.adapt(&info, rng);
            // Probes run after a window's end are charged to this step.
            info.lik_evals += self.pending.lik_evals;
            info.grad_evals += self.pending.grad_evals;
            self.pending = Cost::default();
            self.iteration += 1;
            if self.iteration == self.config.warmup {
                if let Some(da) = self.dual.as_ref() {
                    let eps = da.final_step_size();
                    if eps.is_finite() && eps > 0.0 {
                        self.kernel.set_step_size(eps);
                    }
                }
            }
        } else {
            self.iteration += 1;
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
        self.config.warmup
    }
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    /// The step size in force (the adapted one once warm-up is over).
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        alloc::vec![("eps", self.kernel.step_size())]
    }
}
