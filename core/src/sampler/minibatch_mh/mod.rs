//! The minibatch Metropolis–Hastings samplers (`mh-minibatch`, `austere-mh`, `mh-sublhd`): one
//! random-walk driver whose accept/reject step is a [`MinibatchTest`] kernel
//! ([`crate::kernel::minibatch_mh`]), the start point, and `mh-minibatch`'s settings.

use crate::chain::{Chain, Cost};
use crate::dist::std_normal;
use crate::error::Error;
use crate::kernel::minibatch_mh::xcorr::Correction;
use crate::kernel::minibatch_mh::{cv, MinibatchMh, MinibatchTest};
use crate::kernel::StepInfo;
use crate::math;
use crate::model::DataModel;
use crate::rng::{uniform, ChainRng};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

pub mod baselines;

/// A running random-walk chain over any [`DataModel`] whose accept/reject step is a
/// [`MinibatchTest`] (`mh-minibatch`, `austere-mh`, `mh-sublhd`).
pub struct MinibatchMhChain<T: MinibatchTest = MinibatchMh> {
    kernel: T,
    model: Arc<dyn DataModel>,
    theta: Vec<f64>,
    proposal: Vec<f64>,
    log_prior: f64,
    perm: Vec<usize>,
    names: Vec<String>,
    iter: usize,
    warmup: usize,
    setup: Cost,
    /// The control variate the tests read differences through (None: plain differences).
    cv: Option<cv::TaylorCv>,
}

impl<T: MinibatchTest> MinibatchMhChain<T> {
    /// Read the per-datum differences through the second-order Taylor control variate around
    /// `centre` ([`cv::TaylorCv`]; the model must be a GLM). Its pass over the data is added
    /// to the set-up cost.
    pub fn with_control_variate(mut self, centre: &[f64]) -> Result<Self, Error> {
        let view = self.model.as_glm().ok_or_else(|| {
            Error::setting(
                "control",
                "control variates need a generalised linear model",
            )
        })?;
        let c = cv::TaylorCv::new(view, centre)?;
        let n = self.model.n() as u64;
        self.setup.lik_evals += n;
        self.setup.grad_evals += n;
        self.cv = Some(c);
        Ok(self)
    }

    /// Start at `position`; checks that the prior and every ℓᵢ are finite there (one data pass,
    /// reported as setup cost). Fails when both the test and the model temper the likelihood
    /// (K ≠ 1 on each: the target would silently be tempered twice).
    pub fn new(
        kernel: T,
        model: Arc<dyn DataModel>,
        position: &[f64],
        warmup: usize,
    ) -> Result<Self, Error> {
        let d = model.dim();
        let n = model.n();
        if n == 0 {
            return Err(Error::data("mh-minibatch needs at least one datum"));
        }
        let model_k = model.likelihood_temperature();
        if kernel.temperature() != 1.0 && model_k != 1.0 {
            return Err(Error::setting(
                "temperature",
                alloc::format!(
                    "the model is already tempered (its temperature is {model_k}); set the temperature on the model or on the sampler, not both (the likelihood would be divided by {model_k} × {})",
                    kernel.temperature()
                ),
            ));
        }
        if position.len() != d {
            return Err(Error::Dimension {
                what: "position",
                expected: d,
                got: position.len(),
            });
        }
        let lp = model.log_prior(position);
        if !lp.is_finite() || position.iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        if !model.log_lik_all(position).is_finite() {
            return Err(Error::NonFiniteStart);
        }
        Ok(MinibatchMhChain {
            kernel,
            names: model.param_names(),
            theta: position.to_vec(),
            proposal: position.to_vec(),
            log_prior: lp,
            perm: (0..n).collect(),
            iter: 0,
            warmup,
            setup: Cost {
                lik_evals: n as u64,
                grad_evals: 0,
            },
            model,
            cv: None,
        })
    }

    /// The test and its settings.
    pub fn kernel(&self) -> &T {
        &self.kernel
    }
}

impl<T: MinibatchTest> Chain for MinibatchMhChain<T> {
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        self.kernel.extra_names()
    }
    fn exact(&self) -> bool {
        false
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        self.iter += 1;
        let eps = self.kernel.step_size();
        for (p, &t) in self.proposal.iter_mut().zip(&self.theta) {
            *p = t + eps * std_normal(rng);
        }
        let lp1 = self.model.log_prior(&self.proposal);
        let diffs = cv::StepDiffs::new(
            self.model.as_ref(),
            &self.theta,
            &self.proposal,
            self.cv.as_ref(),
        );
        let o = self
            .kernel
            .decide(rng, &diffs, self.log_prior, lp1, &mut self.perm);
        if o.accepted {
            self.theta.copy_from_slice(&self.proposal);
            self.log_prior = lp1;
        }
        StepInfo {
            accept_prob: if o.delta.is_nan() {
                0.0
            } else {
                math::sigmoid(o.delta)
            },
            accepted: o.accepted,
            divergent: o.divergent,
            lik_evals: o.lik_evals,
            grad_evals: 0,
            n_leapfrog: 0,
            step_size: eps,
            energy: f64::NAN,
            sign: 1.0,
            extra: [
                o.batch as f64,
                o.s2,
                if o.exact_fallback { 1.0 } else { 0.0 },
                o.delta,
            ],
        }
    }
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn iteration(&self) -> usize {
        self.iter
    }
    fn warmup(&self) -> usize {
        self.warmup
    }
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        let mut r = self.kernel.resolved();
        r.push(("step_size", self.kernel.step_size()));
        r.push(("control_variate", if self.cv.is_some() { 1.0 } else { 0.0 }));
        r
    }
}

pub(crate) const P_STEP: ParamSpec = ParamSpec {
    key: "step_size",
    description: "random-walk proposal standard deviation ε per coordinate; auto: 2.38/√d in the whitened coordinates of reparam=auto (acceptance ≈ 0.2), else 0.1",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

pub(crate) const P_CONTROL: ParamSpec = ParamSpec {
    key: "control",
    description: "auto: on a GLM the tests read differences through a second-order Taylor control variate around the mode (same mean, far smaller spread: small batches at useful step sizes); none: plain differences (the papers')",
    kind: ParamKind::Choice(&["auto", "none"]),
};

/// σ·√d of the automatic random-walk step in whitened coordinates.
pub const AUTO_STEP: f64 = 2.38;

/// The random-walk step: `step_size` if given, else 2.38/√d when the model samples whitened
/// coordinates (`reparam=auto`: the posterior is close to N(0, I)), else 0.1.
pub(crate) fn step_from_settings(
    s: &crate::settings::Settings,
    model: &dyn DataModel,
) -> Result<f64, Error> {
    let v = P_STEP.positive_or_auto(s)?;
    Ok(if !v.is_nan() {
        v
    } else if model.user_map().is_some() {
        AUTO_STEP / math::sqrt(model.dim().max(1) as f64)
    } else {
        0.1
    })
}

/// Whether the `control` setting asks for control variates on this model (`auto`: on a GLM).
pub(crate) fn control_from_settings(
    s: &crate::settings::Settings,
    model: &dyn DataModel,
) -> Result<bool, Error> {
    Ok(P_CONTROL.choice(s)? == "auto" && model.as_glm().is_some())
}

pub(crate) const P_TEMPERATURE: ParamSpec = ParamSpec {
    key: "temperature",
    description: "temperature K: target p(θ)·Πᵢ p(xᵢ|θ)^(1/K) (the prior is not tempered); not with a model that is tempered itself (gmm temperature ≠ 1)",
    kind: ParamKind::Real {
        default: 1.0,
        min: 1.0,
        max: f64::INFINITY,
    },
};

const P_BATCH_STEP: ParamSpec = ParamSpec {
    key: "batch_step",
    description: "initial minibatch size m, also the increment while s² ≥ σ²",
    kind: ParamKind::Int {
        default: 50,
        min: 1,
        max: usize::MAX,
    },
};

const P_SIGMA: ParamSpec = ParamSpec {
    key: "sigma",
    description: "σ of the correction table: 1 (L∞ ≈ 5e-6) or 1.2 (looser s² < 1.44, L∞ ≈ 2e-5)",
    kind: ParamKind::Choice(&["1", "1.2"]),
};

pub(crate) const P_INIT: ParamSpec = ParamSpec {
    key: "init",
    description: "starting point: random (uniform(−r, r)), zero, model (the model's own)",
    kind: ParamKind::Choice(&["random", "zero", "model"]),
};

pub(crate) const P_INIT_RADIUS: ParamSpec = ParamSpec {
    key: "init_radius",
    description: "r of the random starting point uniform(−r, r)",
    kind: ParamKind::Real {
        default: 2.0,
        min: 0.0,
        max: 1e6,
    },
};

/// Registry entry of `mh-minibatch`.
pub const MH_MINIBATCH_INFO: SamplerInfo = SamplerInfo {
    name: "mh-minibatch",
    description: "minibatch Barker test with a Gaussian + correction noise (Seita et al. 2017)",
    exact: false,
    signed: false,
    models: &[],
    params: &[
        P_STEP,
        P_TEMPERATURE,
        P_BATCH_STEP,
        P_SIGMA,
        P_INIT,
        P_INIT_RADIUS,
        P_CONTROL,
    ],
};

/// Build an `mh-minibatch` chain from validated settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let s = config.settings;
    let step = step_from_settings(s, model.as_ref())?;
    let control = control_from_settings(s, model.as_ref())?;
    let temperature = P_TEMPERATURE.real(s)?;
    let m = P_BATCH_STEP.int(s)?;
    let correction = match P_SIGMA.choice(s)? {
        "1.2" => Correction::sigma_1_2(),
        _ => Correction::sigma_1(),
    };
    let init = P_INIT.choice(s)?;
    let radius = P_INIT_RADIUS.real(s)?;
    s.check_all_used()?;
    let kernel = MinibatchMh::new(step, temperature, m, correction)?;
    start_chain(kernel, model, init, radius, config.warmup, rng, control)
}

/// Start a chain at the configured point (`random` starts that give a non-finite density are
/// redrawn, up to 100 times); with `control`, the tests read control-variate differences around
/// the mode (z = 0 for a whitened model, else the mode finder's, its cost counted as set-up).
pub(crate) fn start_chain<T: MinibatchTest + Clone + 'static>(
    kernel: T,
    model: Arc<dyn DataModel>,
    init: &str,
    radius: f64,
    warmup: usize,
    rng: &mut ChainRng,
    control: bool,
) -> Result<Box<dyn Chain>, Error> {
    let centre = if !control {
        None
    } else if model.user_map().is_some() {
        Some((alloc::vec![0.0; model.dim()], Cost::default()))
    } else {
        let mode = crate::optim::find_mode(
            model.as_ref(),
            &model.initial_point(),
            &crate::optim::ModeOptions::default(),
        )?;
        let cost = mode.cost();
        Some((mode.mode, cost))
    };
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
        match MinibatchMhChain::new(kernel.clone(), model.clone(), &position, warmup) {
            Ok(c) => {
                return Ok(match &centre {
                    Some((theta_hat, cost)) => {
                        let mut c = c.with_control_variate(theta_hat)?;
                        c.setup.lik_evals += cost.lik_evals;
                        c.setup.grad_evals += cost.grad_evals;
                        Box::new(c)
                    }
                    None => Box::new(c),
                })
            }
            Err(Error::NonFiniteStart) => last = Error::NonFiniteStart,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}
