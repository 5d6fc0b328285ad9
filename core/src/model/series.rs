//! Time-series models: a [`StateSpaceModel`] (`lgssm`, `sv`, `garch`) over one observed series,
//! presented as a [`DataModel`] so the registry, the chains, the CLI and the browser can carry
//! it like any other model.
//!
//! The data are one column y₁..y_T; `n()` is T. The likelihood of a state-space model does not
//! factorise over time points, so the per-datum interface is only a view:
//!
//! # Formula
//! ℓₜ(θ) = log p(yₜ | y₁:ₜ₋₁, θ) (the predictive decomposition, Σₜ ℓₜ = log p(y₁:T | θ)).
//!
//! - `lgssm`: exact by the Kalman filter ([`kalman`]); the full sums
//!   ([`DataModel::log_lik_all`], [`DataModel::log_lik_grad_all`]) cost T Kalman steps, a single
//!   ℓₜ costs t steps. So the exact samplers (`rwmh`, `mala`, `hmc`, `nuts`) run on `lgssm`
//!   with the Kalman likelihood.
//! - `sv`, `garch`: no closed form; every per-datum method returns NaN and the kernel registry
//!   refuses the exact samplers (use `pmmh`, exact with the particle likelihood, or `pf-sgld`).
//!
//! Subsampling samplers (`sgld`, `smh-1`, `hmc-ecs`, ...) assume exchangeable data and are
//! refused on every time-series model ([`DataModel::as_series`] tells them apart); the samplers
//! built for time series are `pf-sgld` and `pmmh` ([`crate::sampler::pfsgld`],
//! [`crate::sampler::pmmh`]).

use crate::data::Table;
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::ssm::kalman::{self, KalmanParams};
use crate::ssm::{Garch, InitialLaw, Lgssm, StateSpaceModel, StochasticVolatility};
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Names of the time-series models, in registry order.
pub const SERIES_MODELS: &[&str] = &["lgssm", "sv", "garch"];

/// The state-space model of a [`SeriesModel`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SsmKind {
    /// Linear Gaussian (exact Kalman likelihood).
    Lgssm(Lgssm),
    /// Stochastic volatility.
    Sv(StochasticVolatility),
    /// GARCH(1,1) with observation noise.
    Garch(Garch),
}

impl SsmKind {
    /// The model with its default prior and the given initial law, by registry name.
    pub fn from_name(name: &str, initial: InitialLaw) -> Result<Self, Error> {
        match name {
            "lgssm" => Ok(SsmKind::Lgssm(Lgssm::new(initial, Default::default())?)),
            "sv" => Ok(SsmKind::Sv(StochasticVolatility::new(
                initial,
                Default::default(),
            )?)),
            "garch" => Ok(SsmKind::Garch(Garch::new(initial)?)),
            other => Err(Error::Unknown {
                what: "time-series model",
                name: other.into(),
            }),
        }
    }

    /// The model by registry name from settings: the initial law
    /// ([`crate::ssm::initial_law_from_settings`]: `initial`, `initial_var`) and, for `lgssm`
    /// and `sv`, the prior ([`crate::ssm::scale_prior_from_settings`]: `prior`,
    /// `sigma_prior_scale`, `tau_prior_scale`, `phi_prior_scale`, `inv_shape`, `inv_scale`; an
    /// error for `garch`, whose prior has no such keys).
    pub fn from_settings(name: &str, settings: &crate::settings::Settings) -> Result<Self, Error> {
        let initial = crate::ssm::initial_law_from_settings(settings)?;
        match name {
            "lgssm" => Ok(SsmKind::Lgssm(Lgssm::new(
                initial,
                crate::ssm::scale_prior_from_settings(settings)?,
            )?)),
            "sv" => Ok(SsmKind::Sv(StochasticVolatility::new(
                initial,
                crate::ssm::scale_prior_from_settings(settings)?,
            )?)),
            "garch" => {
                for k in crate::ssm::SCALE_PRIOR_PARAMS.iter().map(|p| p.key) {
                    if settings.given(k) {
                        return Err(Error::setting(k, "has no effect with model garch"));
                    }
                }
                Ok(SsmKind::Garch(Garch::new(initial)?))
            }
            other => Err(Error::Unknown {
                what: "time-series model",
                name: other.into(),
            }),
        }
    }

    /// The model as a trait object.
    pub fn ssm(&self) -> &dyn StateSpaceModel {
        match self {
            SsmKind::Lgssm(m) => m,
            SsmKind::Sv(m) => m,
            SsmKind::Garch(m) => m,
        }
    }
}

/// A state-space model with its observed series (cheap to clone: the series is shared).
#[derive(Debug, Clone)]
pub struct SeriesModel {
    kind: SsmKind,
    y: Arc<[f64]>,
    column: String,
}

impl SeriesModel {
    /// The model `kind` over the series `y` (read from column `column`); every value finite,
    /// at least 2 time points.
    pub fn new(kind: SsmKind, y: Vec<f64>, column: &str) -> Result<Self, Error> {
        if y.len() < 2 {
            return Err(Error::data("a time series needs at least 2 observations"));
        }
        if let Some(i) = y.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidData {
                row: Some(i + 1),
                column: Some(column.into()),
                msg: String::from("value is not finite"),
            });
        }
        Ok(SeriesModel {
            kind,
            y: y.into(),
            column: column.into(),
        })
    }

    /// The column a time-series model reads from `table`: `response` if present, else `y`,
    /// else the only column.
    pub fn from_table(kind: SsmKind, table: &Table, response: &str) -> Result<Self, Error> {
        let j = table
            .column_index(response)
            .or_else(|| table.column_index("y"))
            .or(if table.names.len() == 1 {
                Some(0)
            } else {
                None
            });
        match j.and_then(|j| Some((table.names.get(j)?, table.columns.get(j)?))) {
            Some((name, col)) => SeriesModel::new(kind, col.clone(), name),
            None => Err(Error::InvalidData {
                row: None,
                column: Some(response.into()),
                msg: String::from(
                    "no such column (a time-series model reads the response column, `y`, or \
                     the only column)",
                ),
            }),
        }
    }

    /// The model.
    pub fn kind(&self) -> &SsmKind {
        &self.kind
    }

    /// The model as a trait object.
    pub fn ssm(&self) -> &dyn StateSpaceModel {
        self.kind.ssm()
    }

    /// The `lgssm` model, when it is one (exact Kalman likelihood available).
    pub fn lgssm(&self) -> Option<&Lgssm> {
        match &self.kind {
            SsmKind::Lgssm(m) => Some(m),
            _ => None,
        }
    }

    /// An error naming setting `key` unless the model is `lgssm` (the Kalman filter and
    /// smoother need it); `what` names the Kalman tool asked for.
    pub fn require_kalman(&self, key: &str, what: &str) -> Result<(), crate::error::Error> {
        if self.lgssm().is_some() {
            return Ok(());
        }
        Err(crate::error::Error::setting(
            key,
            alloc::format!(
                "kalman needs the lgssm model (model `{}` has no Kalman {what})",
                self.ssm().name()
            ),
        ))
    }

    /// Whether log p(y₁:T|θ) is available exactly (`lgssm` only).
    pub fn has_exact_likelihood(&self) -> bool {
        self.lgssm().is_some()
    }

    /// The observations y₁..y_T.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Name of the column the series was read from.
    pub fn column(&self) -> &str {
        &self.column
    }

    /// Sample standard deviation of the series.
    fn sd(&self) -> f64 {
        let n = self.y.len() as f64;
        let m = self.y.iter().sum::<f64>() / n;
        let v = self.y.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0).max(1.0);
        math::sqrt(v).max(1e-6)
    }
}

impl DataModel for SeriesModel {
    fn dim(&self) -> usize {
        self.ssm().dim()
    }
    fn n(&self) -> usize {
        self.y.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.ssm().param_names()
    }
    fn reports_transformed(&self) -> bool {
        true
    }
    fn reported_names(&self) -> Vec<String> {
        self.ssm().reported_names()
    }
    fn to_reported(&self, theta: &[f64], out: &mut [f64]) {
        self.ssm().to_reported(theta, out)
    }
    fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>> {
        self.ssm().position_of_reported(reported)
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.ssm().log_prior_grad(theta, grad)
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        self.ssm().log_prior(theta)
    }
    /// ℓᵢ = log p(yᵢ₊₁ | y₁:ᵢ) (0-based i) by the Kalman filter on y₁..yᵢ₊₁ (O(i)); NaN for
    /// models without an exact likelihood, for i ≥ T and for a θ of the wrong length.
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        match (self.lgssm(), self.y.get(..=i)) {
            (Some(m), Some(head)) if theta.len() == 3 => {
                let p = KalmanParams::of(m, theta);
                kalman::filter_log_lik(&p, head) - kalman::filter_log_lik(&p, &head[..i])
            }
            _ => f64::NAN,
        }
    }
    /// ℓᵢ and ∇ℓᵢ as the difference of the Kalman log-likelihoods (and their gradients) of
    /// y₁..yᵢ₊₁ and y₁..yᵢ; NaN for models without an exact likelihood.
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        match (self.lgssm(), self.y.get(..=i)) {
            (Some(m), Some(head)) if grad.len() == 3 => {
                let mut g1 = [0.0; 3];
                let mut g0 = [0.0; 3];
                let l1 = kalman::log_lik_grad(m, theta, head, &mut g1);
                let l0 = if i == 0 {
                    // log p(y₁:₀) = 0 with zero gradient
                    0.0
                } else {
                    kalman::log_lik_grad(m, theta, &head[..i], &mut g0)
                };
                for k in 0..3 {
                    grad[k] += g1[k] - g0[k];
                }
                l1 - l0
            }
            _ => {
                grad.iter_mut().for_each(|g| *g = f64::NAN);
                f64::NAN
            }
        }
    }
    /// Central finite differences of [`log_lik_grad`](DataModel::log_lik_grad).
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d = theta.len();
        let mut t = theta.to_vec();
        let mut gp = alloc::vec![0.0; d];
        let mut gm = alloc::vec![0.0; d];
        for j in 0..d {
            let h = 1e-5 * (1.0 + math::abs(theta[j]));
            t[j] = theta[j] + h;
            gp.iter_mut().for_each(|g| *g = 0.0);
            self.log_lik_grad(&t, i, &mut gp);
            t[j] = theta[j] - h;
            gm.iter_mut().for_each(|g| *g = 0.0);
            self.log_lik_grad(&t, i, &mut gm);
            t[j] = theta[j];
            for k in 0..d {
                if let Some(v) = hess.get_mut(k * d + j) {
                    *v += (gp[k] - gm[k]) / (2.0 * h);
                }
            }
        }
    }
    /// log p(y₁:T|θ) by the Kalman filter (T steps); NaN without an exact likelihood.
    fn log_lik_all(&self, theta: &[f64]) -> f64 {
        match self.lgssm() {
            Some(m) => kalman::log_lik(m, theta, &self.y),
            None => f64::NAN,
        }
    }
    /// log p(y₁:T|θ) and its gradient by the Kalman filter and RTS smoother (Fisher identity,
    /// initial-law term included); NaN without an exact likelihood.
    fn log_lik_grad_all(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        match self.lgssm() {
            Some(m) if grad.len() == 3 => kalman::log_lik_grad(m, theta, &self.y, grad),
            _ => {
                grad.iter_mut().for_each(|g| *g = f64::NAN);
                f64::NAN
            }
        }
    }
    fn log_lik_sum(&self, theta: &[f64], idx: &[usize]) -> f64 {
        if idx.len() == self.y.len() && idx.iter().enumerate().all(|(k, &i)| k == i) {
            return self.log_lik_all(theta);
        }
        idx.iter().map(|&i| self.log_lik(theta, i)).sum()
    }
    /// A data-based start: `lgssm`/`sv` φ = 0.5 and σ, τ from the sample sd s of y (`lgssm`:
    /// σ = τ = s/2; `sv`: σ = 0.5, τ = s); `garch` μ = s², φ = λ = 0.5, τ = s/2.
    fn initial_point(&self) -> Vec<f64> {
        let s = self.sd();
        match &self.kind {
            SsmKind::Lgssm(_) => Lgssm::theta(0.5, 0.5 * s, 0.5 * s).to_vec(),
            SsmKind::Sv(_) => Lgssm::theta(0.5, 0.5, s).to_vec(),
            SsmKind::Garch(_) => Garch::theta(s * s, 0.5, 0.5, 0.5 * s).to_vec(),
        }
    }
    fn as_series(&self) -> Option<&SeriesModel> {
        Some(self)
    }
}
