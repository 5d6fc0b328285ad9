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

use super::driver::{Driver, Warmup};
use crate::adapt::{check_target_accept, StepSizeWarmup, WelfordCov, WelfordVar, WindowSchedule};
use crate::chain::Cost;
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

/// Stan's warm-up ([module docs](self)): dual averaging of the step size, windowed metric
/// estimates, the step-size heuristic after each window, the averaged step size at the end.
pub struct StanWarmup {
    config: AdaptConfig,
    step: StepSizeWarmup,
    windows: WindowSchedule,
    estimator: Option<Estimator>,
}

impl StanWarmup {
    /// The adaptation settings.
    pub fn config(&self) -> &AdaptConfig {
        &self.config
    }
}

impl<K, T> Warmup<K, T> for StanWarmup
where
    K: Adaptable<T>,
    T: LogDensity,
{
    fn adapt(
        &mut self,
        _t: usize,
        kernel: &mut K,
        target: &T,
        state: &mut K::State,
        info: &mut StepInfo,
        rng: &mut ChainRng,
    ) -> Cost {
        let mut pending = Cost::default();
        self.step.update(kernel, info.accept_prob);
        if let Some(est) = self.estimator.as_mut() {
            if self.windows.in_window() {
                est.add(state.position());
            }
            if self.windows.advance() {
                if let Some(m) = est.metric() {
                    kernel.set_metric(m);
                }
                est.reset();
                // Probes run after a window's end are charged to this step.
                pending += self.step.restart(kernel, rng, target, state);
            }
        }
        pending
    }
    fn finish(&mut self, kernel: &mut K) {
        self.step.finish(kernel);
    }
    /// The step size in force (the adapted one once warm-up is over).
    fn resolved(&self, kernel: &K) -> Vec<(&'static str, f64)> {
        alloc::vec![("eps", kernel.step_size())]
    }
}

/// Any [`Adaptable`] kernel with its target and state, adapting during the first `warmup`
/// iterations by [`StanWarmup`]: the generic [`Driver`].
pub type AdaptiveChain<K, T> = Driver<K, T, StanWarmup>;

impl<K, T> Driver<K, T, StanWarmup>
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
        Error::check_dim("parameter names", d, names.len())?;
        check_target_accept(config.target_accept)?;
        let state = kernel.init(&target, position)?;
        let e = target.evals_per_call();
        let mut setup = Cost {
            lik_evals: e,
            grad_evals: if kernel.uses_gradient() { e } else { 0 },
        };
        let (step, c) = StepSizeWarmup::start(
            &mut kernel,
            rng,
            &target,
            &state,
            config.target_accept,
            config.adapt_step_size,
        );
        setup += c;
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
        let warmup = StanWarmup {
            config,
            step,
            windows,
            estimator,
        };
        Ok(Driver::from_parts(
            kernel,
            target,
            state,
            warmup,
            names,
            config.warmup,
            setup,
        ))
    }

    /// The adaptation settings.
    pub fn config(&self) -> &AdaptConfig {
        self.warmup.config()
    }
}
