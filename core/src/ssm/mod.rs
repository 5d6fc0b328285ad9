//! State-space models (SSMs) for time series: the model trait, the models `lgssm`, `sv` and
//! `garch`, the Kalman filter and RTS smoother, particle filters with a Fisher-identity score, and
//! the buffered subsequence gradients of Aicher, Putcha et al. (2023; Putcha 2024, ch. 3).
//!
//! # Model
//! X₀ ~ ν(·|θ), Xₜ | xₜ₋₁ ~ f(·|xₜ₋₁, θ), Yₜ | xₜ ~ g(·|xₜ, θ), t = 1..T, with the initial law
//! placed on the state one step **before** the first observation (as in the authors' code).
//!
//! # Conventions
//! - θ ∈ ℝᵖ is unconstrained; each model documents its transforms and priors, and
//!   [`StateSpaceModel::log_prior_grad`] includes the log-Jacobian (a density on θ itself).
//! - Per-particle hooks take the **natural** parameters η = `natural(θ)`,
//!   computed once per filter run, so a transform is not recomputed for every particle.
//!   Gradient hooks still return derivatives with respect to θ (the chain rule is inside).
//! - A state is a [`State`] = `[x, aux…]` of length [`STATE_LEN`]: `x` is the 1-d latent value,
//!   the rest deterministic companions (GARCH: σₜ² and its θ-derivative; all 0 for `lgssm` and
//!   `sv`). Build one with [`state`]`(x)` or [`StateSpaceModel::with_value`].
//! - Gradients are **accumulated** into caller-owned buffers (`grad[k] += …`).
//! - Observations are a plain `&[f64]`, so a window of a series is a sub-slice.
//!
//! # API for samplers (what `pf-sgld` / `pmmh` call)
//! - Exact (`lgssm` only): [`kalman::log_lik`], [`kalman::log_lik_grad`] (full-sequence log
//!   p(y₁:T|θ) and its θ-gradient, including the initial-law term).
//! - Particle: [`pf::ParticleFilter`] (`new(config)`, then `run(model, θ, y, score_weights, rng)`
//!   → [`pf::PfSummary`] with `log_lik`, `score`, `cost`; `ess()` per time step).
//! - Buffered subsequence gradients: [`buffered::BufferedGradient`] (`new(config)`, then
//!   `estimate(model, θ, y, rng, grad)` → [`buffered::GradInfo`] with the window and the cost;
//!   `grad` receives the estimate of ∇θ log p(y₁:T|θ), **without** the prior), and the exact
//!   "N = ∞" version [`buffered::kalman_estimate`] for `lgssm`.
//! - Add [`StateSpaceModel::log_prior_grad`] for the posterior gradient.
//! - Construction from user settings: [`build`]`(name, settings)` → `Box<dyn StateSpaceModel>`
//!   ([`MODELS`], [`true_theta`] for the thesis' synthetic truths),
//!   [`pf::PfConfig::from_settings`] (`particles`, `proposal`, `resampling`, `ess_threshold`),
//!   [`buffered::BufferConfig::from_settings`] (`subseq_len`, `buffer`).
//! - Simulation: [`StateSpaceModel::simulate`]`(θ, T, rng)` → (x₁:T, y₁:T).
//!
//! Deviation from the thesis: the GARCH score carries the total derivative of σₜ² through the
//! variance recursion (the thesis treats σₜ₋₁² as θ-free, which is not Fisher's identity).

use crate::error::Error;
use crate::rng::ChainRng;
use crate::schema::{ParamKind, ParamSpec};
use crate::settings::Settings;
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

pub mod buffered;
pub mod garch;
pub mod kalman;
pub mod lgssm;
pub mod pf;
pub mod resample;
pub mod sv;

pub use garch::Garch;
pub use lgssm::Lgssm;
pub use sv::StochasticVolatility;

/// Length of a [`State`].
pub const STATE_LEN: usize = 5;

/// One particle / latent state: `[x, aux…]`, see the module docs.
pub type State = [f64; STATE_LEN];

/// The state with value `x` and zero companions.
#[inline]
pub fn state(x: f64) -> State {
    let mut s = [0.0; STATE_LEN];
    s[0] = x;
    s
}

/// The initial law ν of the state one step before the first observation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InitialLaw {
    /// The stationary law of the state process (the thesis' choice). For `lgssm`/`sv` it is
    /// N(0, σ²/(1−φ²)); when |φ| is near or above 1, 1−φ² is floored at
    /// [`STATIONARY_FLOOR`] so the law stays proper.
    Stationary,
    /// N(0, var), independent of θ (the authors' code uses var = 10).
    Normal {
        /// Variance (> 0).
        var: f64,
    },
}

/// Floor of 1 − φ² in the stationary variance σ²/(1−φ²) of `lgssm` and `sv`.
pub const STATIONARY_FLOOR: f64 = 0.01;

/// Buffers of [`StateSpaceModel::sample_optimal_batch`] (owned by the particle filter, so that a
/// step allocates nothing).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OptimalBatch {
    /// Each particle's previous state (its ancestor's), filled by the filter.
    pub prev: Vec<State>,
    /// The new states.
    pub out: Vec<State>,
    /// The incremental log weights.
    pub log_w: Vec<f64>,
    /// Working memory of the model.
    pub scratch: Vec<f64>,
}

/// A draw from the locally optimal proposal p(xₜ | xₜ₋₁, yₜ) with its incremental weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimalDraw {
    /// The new state.
    pub state: State,
    /// The incremental log weight: log p(yₜ | xₜ₋₁, θ) for an exact locally optimal kernel
    /// (`lgssm`, `garch`: it depends only on the ancestor), log f g / q for an approximation
    /// of it (`sv`).
    pub log_weight: f64,
}

/// The reported names of `lgssm` and `sv`: `phi`, `sigma`, `tau`.
pub(crate) fn phi_sigma_tau_names() -> Vec<String> {
    alloc::vec!["phi".into(), "sigma".into(), "tau".into()]
}

/// (φ, σ, τ) from θ = (φ, log σ, log τ), the reported parameters of `lgssm` and `sv`.
pub(crate) fn phi_sigma_tau(theta: &[f64], out: &mut [f64]) {
    out[0] = theta[0];
    out[1] = crate::math::exp(theta[1]);
    out[2] = crate::math::exp(theta[2]);
}

/// A state-space model with a 1-d observation, an unconstrained parameter θ ∈ ℝᵖ and the hooks a
/// particle filter and a Fisher-identity score need.
///
/// Object safe; every method is infallible. Hooks taking `eta` expect the output of
/// [`natural`](StateSpaceModel::natural).
pub trait StateSpaceModel: Send + Sync {
    /// Registry-style name (`"lgssm"`, `"sv"`, `"garch"`).
    fn name(&self) -> &'static str;
    /// Number of unconstrained parameters p.
    fn dim(&self) -> usize;
    /// Names of the unconstrained coordinates (e.g. `phi`, `log_sigma`), length p.
    fn param_names(&self) -> Vec<String>;
    /// Length of the natural parameter vector η.
    fn natural_dim(&self) -> usize;
    /// η = natural parameters of θ (e.g. (φ, σ, τ)); `eta.len() == natural_dim()`.
    fn natural(&self, theta: &[f64], eta: &mut [f64]);
    /// Natural parameters as a new vector.
    fn natural_vec(&self, theta: &[f64]) -> Vec<f64> {
        let mut eta = vec![0.0; self.natural_dim()];
        self.natural(theta, &mut eta);
        eta
    }
    /// θ for natural parameters η (the inverse transform; only the leading natural entries are
    /// read, not the cached logs that some models append); `None` if η is outside the support.
    fn unconstrained(&self, eta: &[f64]) -> Option<Vec<f64>>;

    /// Names of the reported parameters, on the natural scale of the DESIGN contract (`phi`,
    /// `sigma`, `tau` for `lgssm` and `sv`; `alpha`, `beta`, `gamma`, `tau` for `garch`),
    /// length p. Draws, summaries and `run.json` use these; samplers move θ.
    fn reported_names(&self) -> Vec<String>;
    /// The reported (natural-scale) parameters of θ, length p.
    fn to_reported(&self, theta: &[f64], out: &mut [f64]);
    /// θ for reported parameters (the inverse of [`to_reported`](Self::to_reported)); `None`
    /// outside the support.
    fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>>;

    /// log p(θ) on the unconstrained scale (log-Jacobian included); ∇θ accumulated into `grad`.
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64;
    /// log p(θ).
    fn log_prior(&self, theta: &[f64]) -> f64 {
        let mut g = vec![0.0; theta.len()];
        self.log_prior_grad(theta, &mut g)
    }
    /// Map θ back into the prior's support by reflection at its walls, returning whether it
    /// moved (default: the support is all of ℝᵖ, nothing to do), and setting `reversed[i]`
    /// (leaving the others as they are) for each coordinate whose fold reversed its direction
    /// (an odd number of reflections: a move that went on past the wall now points back). A
    /// gradient step cannot see a hard wall such as φ ~ Uniform(−1, 1); reflected Langevin
    /// dynamics keep the truncated target, so `pf-sgld` reflects after each move (and turns
    /// the Leimkuhler–Matthews step's carried normal of a reversed coordinate around).
    fn reflect(&self, _theta: &mut [f64], _reversed: &mut [bool]) -> bool {
        false
    }

    /// Draw X₀ ~ ν(·|θ).
    fn sample_initial(&self, eta: &[f64], rng: &mut ChainRng) -> State;
    /// log ν(x₀|θ).
    fn log_initial(&self, eta: &[f64], x: &State) -> f64;
    /// ∇θ log ν(x₀|θ) accumulated into `grad` (nothing when ν does not depend on θ).
    fn grad_log_initial(&self, eta: &[f64], x: &State, grad: &mut [f64]);
    /// The state with value `x` and its deterministic companions: those of the initial law when
    /// `prev` is `None`, else those implied by the transition from `prev`. The default (no
    /// companions) is [`state`]`(x)`.
    fn with_value(&self, _eta: &[f64], _prev: Option<&State>, x: f64) -> State {
        state(x)
    }
    /// Draw Xₜ ~ f(·|xₜ₋₁, θ) (deterministic components propagated exactly).
    fn sample_transition(&self, eta: &[f64], prev: &State, rng: &mut ChainRng) -> State;
    /// log f(xₜ|xₜ₋₁, θ) (density of the random component).
    fn log_transition(&self, eta: &[f64], prev: &State, x: &State) -> f64;
    /// log g(yₜ|xₜ, θ).
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64;
    /// ∇θ [log f(xₜ|xₜ₋₁, θ) + log g(yₜ|xₜ, θ)] accumulated into `grad`: the summand hₜ of
    /// Fisher's identity ∇θ log p(y₁:T|θ) = Σₜ E[hₜ | y₁:T] (+ the initial-law term).
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]);
    /// [`grad_log_joint`](Self::grad_log_joint) for every particle of one step: row i of
    /// `grad` (n rows of p = [`dim`](Self::dim), overwritten) is the summand at
    /// (`prev[i]`, `x[i]`), n = `prev.len()`. The default calls `grad_log_joint` per particle on
    /// a zeroed row; a model may override it with a loop that vectorises (within rounding of
    /// the default).
    fn grad_log_joint_batch(
        &self,
        eta: &[f64],
        prev: &[State],
        x: &[State],
        y: f64,
        grad: &mut [f64],
    ) {
        let p = self.dim();
        for ((g, pv), xv) in grad.chunks_exact_mut(p).zip(prev).zip(x) {
            g.fill(0.0);
            self.grad_log_joint(eta, pv, xv, y, g);
        }
    }

    /// Whether [`sample_optimal`](StateSpaceModel::sample_optimal) is available.
    fn has_optimal_proposal(&self) -> bool {
        false
    }
    /// Draw from the locally optimal proposal p(xₜ|xₜ₋₁, yₜ, θ) (or an approximation of it) and
    /// return the incremental log weight (log p(yₜ|xₜ₋₁, θ) for the exact kernel);
    /// `None` when the model has none (then the filter falls back to the bootstrap proposal).
    fn sample_optimal(
        &self,
        _eta: &[f64],
        _prev: &State,
        _y: f64,
        _rng: &mut ChainRng,
    ) -> Option<OptimalDraw> {
        None
    }

    /// The `optimal` proposal for every particle of one step at once: the law of
    /// [`sample_optimal`](Self::sample_optimal) for each particle, with the random numbers
    /// drawn in the same order, written so that the work without random numbers vectorises.
    /// Reads `batch.prev` (each particle's previous state, n of them) and sets `batch.out` and
    /// `batch.log_w` to n entries each. Returns false, writing nothing, when the model has no
    /// batched form (the filter then calls `sample_optimal` per particle).
    fn sample_optimal_batch(
        &self,
        _eta: &[f64],
        _y: f64,
        _rng: &mut ChainRng,
        _batch: &mut OptimalBatch,
    ) -> bool {
        false
    }

    /// Simulate (x₀:T, y₁:T) at θ: returns (states x₁..x_T, observations y₁..y_T).
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>);
}

/// Names of the built-in state-space models, for [`build`].
pub const MODELS: &[&str] = &["lgssm", "sv", "garch"];

/// The `initial` setting of every time-series model ([`initial_law_from_settings`]).
pub const P_INITIAL: ParamSpec = ParamSpec {
    key: "initial",
    description: "Law of the state before y₁: stationary (the thesis) or normal N(0, initial_var)",
    kind: ParamKind::Choice(&["stationary", "normal"]),
};

/// The `initial_var` setting of every time-series model (`initial=normal`).
pub const P_INITIAL_VAR: ParamSpec = ParamSpec::positive(
    "initial_var",
    "Variance of the normal initial law (initial=normal; the authors' code uses 10)",
    10.0,
);

/// The `prior` setting of `lgssm` and `sv` ([`scale_prior_from_settings`]).
pub const P_PRIOR: ParamSpec = ParamSpec {
    key: "prior",
    description: "Prior family: halfnormal (φ ~ U(−1, 1), σ, τ half-normal) or thesis (φ | σ ~ N(0, (cσ)²), σ⁻¹, τ⁻¹ ~ Gamma(a, b))",
    kind: ParamKind::Choice(&["halfnormal", "thesis"]),
};

/// The `sigma_prior_scale` setting of `lgssm` and `sv` (`prior=halfnormal`).
pub const P_SIGMA_PRIOR_SCALE: ParamSpec = ParamSpec::positive(
    "sigma_prior_scale",
    "Scale of the HalfNormal prior on σ (prior=halfnormal)",
    1.0,
);

/// The `tau_prior_scale` setting of `lgssm` and `sv` (`prior=halfnormal`).
pub const P_TAU_PRIOR_SCALE: ParamSpec = ParamSpec::positive(
    "tau_prior_scale",
    "Scale of the HalfNormal prior on τ (prior=halfnormal)",
    2.0,
);

/// The `phi_prior_scale` setting of `lgssm` and `sv` (`prior=thesis`).
pub const P_PHI_PRIOR_SCALE: ParamSpec = ParamSpec::positive(
    "phi_prior_scale",
    "c in the prior φ | σ ~ N(0, (cσ)²) (prior=thesis)",
    10.0,
);

/// The `inv_shape` setting of `lgssm` and `sv` (`prior=thesis`).
pub const P_INV_SHAPE: ParamSpec = ParamSpec::positive(
    "inv_shape",
    "Shape a of the Gamma(a, b) prior on σ⁻¹ and τ⁻¹ (prior=thesis)",
    101.0,
);

/// The `inv_scale` setting of `lgssm` and `sv` (`prior=thesis`).
pub const P_INV_SCALE: ParamSpec = ParamSpec::positive(
    "inv_scale",
    "Scale b of the Gamma(a, b) prior on σ⁻¹ and τ⁻¹ (prior=thesis; default 1/101)",
    1.0 / 101.0,
);

/// The settings of [`initial_law_from_settings`] (every time-series model).
pub const INITIAL_LAW_PARAMS: [ParamSpec; 2] = [P_INITIAL, P_INITIAL_VAR];

/// The settings of [`scale_prior_from_settings`] (`lgssm`, `sv`).
pub const SCALE_PRIOR_PARAMS: [ParamSpec; 6] = [
    P_PRIOR,
    P_SIGMA_PRIOR_SCALE,
    P_TAU_PRIOR_SCALE,
    P_PHI_PRIOR_SCALE,
    P_INV_SHAPE,
    P_INV_SCALE,
];

/// The initial law from settings: `initial=stationary|normal` (default `stationary`) and, with
/// `normal`, `initial_var` (default 10, > 0). `initial_var` with `stationary` is an error.
pub fn initial_law_from_settings(settings: &Settings) -> Result<InitialLaw, Error> {
    match P_INITIAL.choice(settings)? {
        "normal" => {
            let var = P_INITIAL_VAR.real(settings)?;
            Ok(InitialLaw::Normal { var })
        }
        _ => {
            if settings.contains(P_INITIAL_VAR.key) {
                return Err(Error::setting(
                    "initial_var",
                    "only used with initial=normal",
                ));
            }
            Ok(InitialLaw::Stationary)
        }
    }
}

/// The `lgssm`/`sv` prior from settings ([`SCALE_PRIOR_PARAMS`]): `prior=halfnormal` (the
/// default) with `sigma_prior_scale` (1) and `tau_prior_scale` (2), or `prior=thesis` with
/// `phi_prior_scale` (c = 10), `inv_shape` (a = 101), `inv_scale` (b = 1/101) of
/// [`lgssm::ScalePrior`]; each a finite number > 0. A key of the other family is an error
/// (it would have no effect).
pub fn scale_prior_from_settings(settings: &Settings) -> Result<lgssm::ScalePrior, Error> {
    let thesis = P_PRIOR.choice(settings)? == "thesis";
    let (unused, family) = if thesis {
        (
            [P_SIGMA_PRIOR_SCALE, P_TAU_PRIOR_SCALE].as_slice(),
            "prior=thesis",
        )
    } else {
        (
            [P_PHI_PRIOR_SCALE, P_INV_SHAPE, P_INV_SCALE].as_slice(),
            "prior=halfnormal (the default; set prior=thesis)",
        )
    };
    for p in unused {
        if settings.contains(p.key) {
            return Err(Error::setting(
                p.key,
                alloc::format!("has no effect with {family}"),
            ));
        }
    }
    if thesis {
        lgssm::ScalePrior::thesis(
            P_PHI_PRIOR_SCALE.real(settings)?,
            P_INV_SHAPE.real(settings)?,
            P_INV_SCALE.real(settings)?,
        )
    } else {
        lgssm::ScalePrior::half_normal(
            P_SIGMA_PRIOR_SCALE.real(settings)?,
            P_TAU_PRIOR_SCALE.real(settings)?,
        )
    }
}

/// A model by name (one of [`MODELS`]) from settings: the initial law (see
/// [`initial_law_from_settings`]) and, for `lgssm` and `sv`, the prior
/// ([`scale_prior_from_settings`]).
pub fn build(name: &str, settings: &Settings) -> Result<Box<dyn StateSpaceModel>, Error> {
    let initial = initial_law_from_settings(settings)?;
    let scale_prior = scale_prior_from_settings;
    match name {
        "lgssm" => Ok(Box::new(Lgssm::new(initial, scale_prior(settings)?)?)),
        "sv" => Ok(Box::new(StochasticVolatility::new(
            initial,
            scale_prior(settings)?,
        )?)),
        "garch" => Ok(Box::new(Garch::new(initial)?)),
        _ => Err(Error::Unknown {
            what: "state-space model",
            name: name.into(),
        }),
    }
}

/// The thesis' synthetic truth of model `name` as unconstrained θ: `lgssm` (φ, σ, τ) =
/// (0.9, 0.7, 1), `sv` (0.9, 0.5, 0.5), `garch` (α, β, γ, τ) = (0.1, 0.8, 0.05, 0.3).
pub fn true_theta(name: &str) -> Result<Vec<f64>, Error> {
    match name {
        "lgssm" => {
            let t = lgssm::TRUTH;
            Ok(Lgssm::theta(t[0], t[1], t[2]).to_vec())
        }
        "sv" => {
            let t = sv::TRUTH;
            Ok(Lgssm::theta(t[0], t[1], t[2]).to_vec())
        }
        "garch" => {
            let t = garch::TRUTH_ABG;
            Ok(Garch::theta_from_abg(t[0], t[1], t[2], t[3]).to_vec())
        }
        _ => Err(Error::Unknown {
            what: "state-space model",
            name: name.into(),
        }),
    }
}

/// log N(x; mean, var).
#[inline]
pub(crate) fn ln_normal(x: f64, mean: f64, var: f64) -> f64 {
    ln_normal_lv(x, mean, var, crate::math::ln(var))
}

/// log N(x; mean, var) with ln var precomputed.
#[inline]
pub(crate) fn ln_normal_lv(x: f64, mean: f64, var: f64, ln_var: f64) -> f64 {
    let d = x - mean;
    -0.5 * (ln_var + d * d / var) - crate::math::LN_SQRT_2PI
}

/// Generic simulator shared by the models: draw x₀ from ν, then (xₜ, yₜ) for t = 1..T, where the
/// observation is drawn by `obs(η, xₜ, rng)`.
pub(crate) fn simulate_with<M: StateSpaceModel + ?Sized>(
    model: &M,
    theta: &[f64],
    t_len: usize,
    rng: &mut ChainRng,
    obs: impl Fn(&[f64], &State, &mut ChainRng) -> f64,
) -> (Vec<f64>, Vec<f64>) {
    let eta = model.natural_vec(theta);
    let mut x = model.sample_initial(&eta, rng);
    let mut xs = Vec::with_capacity(t_len);
    let mut ys = Vec::with_capacity(t_len);
    for _ in 0..t_len {
        x = model.sample_transition(&eta, &x, rng);
        xs.push(x[0]);
        ys.push(obs(&eta, &x, rng));
    }
    (xs, ys)
}
