//! The minibatch Metropolis–Hastings samplers (`mh-minibatch`, `austere-mh`, `mh-sublhd`): one
//! random-walk driver whose accept/reject step is a [`MinibatchTest`] kernel
//! ([`crate::kernel::minibatch_mh`]), the start point, and `mh-minibatch`'s settings.

use super::driver::{Driver, NoWarmup};
use crate::chain::{Chain, Cost};
use crate::error::Error;
use crate::kernel::minibatch_mh::xcorr::Correction;
use crate::kernel::minibatch_mh::{cv, MinibatchMh, MinibatchRw, MinibatchTest};
use crate::kernel::Kernel;
use crate::math;
use crate::model::DataModel;
use crate::optim::{ModeOptions, P_MODE_MAX_ITER, P_MODE_MEMORY, P_MODE_METHOD, P_MODE_TOL};
use crate::rng::ChainRng;
use crate::sampler::share::Sharing;
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use alloc::boxed::Box;
use alloc::sync::Arc;

pub mod baselines;

/// A running random-walk chain over any [`DataModel`] whose accept/reject step is a
/// [`MinibatchTest`] (`mh-minibatch`, `austere-mh`, `mh-sublhd`): the [`MinibatchRw`] kernel
/// on the generic driver, frozen from the first iteration.
pub type MinibatchMhChain<T = MinibatchMh> = Driver<MinibatchRw<T>, Arc<dyn DataModel>, NoWarmup>;

impl<T: MinibatchTest> Driver<MinibatchRw<T>, Arc<dyn DataModel>, NoWarmup> {
    /// Start at `position` (checks in [`MinibatchRw`]'s `init`; its data pass is reported as
    /// set-up cost).
    pub fn new(
        test: T,
        model: Arc<dyn DataModel>,
        position: &[f64],
        warmup: usize,
    ) -> Result<Self, Error> {
        let kernel = MinibatchRw { test, cv: None };
        let state = kernel.init(&model, position)?;
        let names = model.param_names();
        let setup = Cost {
            lik_evals: model.n() as u64,
            grad_evals: 0,
        };
        Ok(Driver::from_parts(
            kernel, model, state, NoWarmup, names, warmup, setup,
        ))
    }

    /// Read the per-datum differences through the second-order Taylor control variate around
    /// `centre` ([`cv::TaylorCv`]; the model must be a GLM). Its pass over the data is added
    /// to the set-up cost.
    pub fn with_control_variate(self, centre: &[f64]) -> Result<Self, Error> {
        let target = self.target.clone();
        let (c, _) = Sharing::Off.taylor_cv(&target, centre)?;
        Ok(self.with_taylor_cv(c, true))
    }

    /// Read the per-datum differences through `cv` (made for this chain's model); its pass
    /// over the data is added to the set-up cost when this chain `computed` it (a copy of
    /// another chain's cost none).
    pub(crate) fn with_taylor_cv(mut self, cv: cv::TaylorCv, computed: bool) -> Self {
        if computed {
            let n = self.target.n() as u64;
            self.add_setup(Cost {
                lik_evals: n,
                grad_evals: n,
            });
        }
        self.kernel.cv = Some(cv);
        self
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
        super::P_INIT,
        super::P_INIT_RADIUS,
        P_CONTROL,
        P_MODE_METHOD,
        P_MODE_MAX_ITER,
        P_MODE_TOL,
        P_MODE_MEMORY,
    ],
};

/// Build an `mh-minibatch` chain from validated settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: Sharing<'_>,
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
    let (init, radius) = super::start_from_settings(s)?;
    let mode = ModeOptions::from_settings(s)?;
    s.check_all_used()?;
    let kernel = MinibatchMh::new(step, temperature, m, correction)?;
    let centre = control.then_some(&mode);
    start_chain(
        kernel,
        model,
        init,
        radius,
        config.warmup,
        rng,
        centre,
        sharing,
    )
}

/// Start a chain at the configured point (`random` starts that give a non-finite density are
/// redrawn, up to 100 times); with `control` (the mode search's options), the tests read
/// control-variate differences around the mode (z = 0 for a whitened model, else the mode
/// finder's, its cost counted as set-up). The mode search and the control variate's pass are
/// deterministic: `sharing` keeps them for the run's other chains, or takes the kept ones
/// (then not counted: each chain is the chain built alone, bit for bit).
#[allow(clippy::too_many_arguments)]
pub(crate) fn start_chain<T: MinibatchTest + Clone + 'static>(
    kernel: T,
    model: Arc<dyn DataModel>,
    init: &str,
    radius: f64,
    warmup: usize,
    rng: &mut ChainRng,
    control: Option<&ModeOptions>,
    mut sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let centre = if let Some(opts) = control {
        if model.user_map().is_some() {
            Some((alloc::vec![0.0; model.dim()], Cost::default()))
        } else {
            let (mode, searched) = sharing.find_mode(&model, &model.initial_point(), opts)?;
            let cost = if searched {
                mode.cost()
            } else {
                Cost::default()
            };
            Some((mode.mode, cost))
        }
    } else {
        None
    };
    let c = super::at_start(init, radius, model.as_ref(), rng, |p, _| {
        MinibatchMhChain::new(kernel.clone(), model.clone(), p, warmup)
    })?;
    Ok(match &centre {
        Some((theta_hat, cost)) => {
            let (cv, computed) = sharing.taylor_cv(&model, theta_hat)?;
            let mut c = c.with_taylor_cv(cv, computed);
            c.add_setup(*cost);
            Box::new(c)
        }
        None => Box::new(c),
    })
}
