//! Priors on regression coefficients: independent N(0, s²) (the default, s = 10) or flat.
//!
//! Settings: `prior=normal|flat` (default `normal`), `prior_scale=s` (default 10, > 0).

use crate::error::Error;
use crate::settings::Settings;

/// Default prior standard deviation of every regression coefficient.
pub const DEFAULT_PRIOR_SCALE: f64 = 10.0;

/// A prior over all d coefficients of a regression.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Prior {
    /// Independent N(0, scale²) on every coefficient (intercept included).
    Normal {
        /// Standard deviation.
        scale: f64,
    },
    /// Improper flat prior (use only where the posterior is proper).
    Flat,
}

impl Prior {
    /// N(0, scale²) on every coefficient; `scale` must be finite and > 0.
    pub fn normal(scale: f64) -> Result<Self, Error> {
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(Error::setting(
                "prior_scale",
                alloc::format!(
                    "{} is not a positive finite number",
                    crate::settings::number(scale)
                ),
            ));
        }
        Ok(Prior::Normal { scale })
    }

    /// The prior the user asked for: `prior=normal|flat`, `prior_scale=s` (both keys are marked
    /// used). `prior_scale` with `prior=flat` is an error, so a contradictory request is not
    /// silently ignored.
    pub fn from_settings(settings: &Settings) -> Result<Self, Error> {
        let kind = settings.choice("prior", "normal", &["normal", "flat"])?;
        match kind {
            "flat" => {
                if settings.contains("prior_scale") {
                    return Err(Error::setting(
                        "prior_scale",
                        "has no effect with prior=flat",
                    ));
                }
                Ok(Prior::Flat)
            }
            _ => {
                let s = settings.f64_or("prior_scale", DEFAULT_PRIOR_SCALE)?;
                Prior::normal(s)
            }
        }
    }

    /// log p(θ) up to a constant; gradient accumulated into `grad`.
    pub fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        match *self {
            Prior::Normal { scale } => {
                let p = 1.0 / (scale * scale);
                let mut s = 0.0;
                for (g, &t) in grad.iter_mut().zip(theta) {
                    s += t * t;
                    *g -= p * t;
                }
                -0.5 * p * s
            }
            Prior::Flat => 0.0,
        }
    }
    /// log p(θ) up to a constant.
    pub fn log_density(&self, theta: &[f64]) -> f64 {
        match *self {
            Prior::Normal { scale } => {
                -0.5 * theta.iter().map(|t| t * t).sum::<f64>() / (scale * scale)
            }
            Prior::Flat => 0.0,
        }
    }
    /// The prior precision of each coordinate (0 for flat): the Hessian is −diag(this).
    pub fn precision(&self) -> f64 {
        match *self {
            Prior::Normal { scale } => 1.0 / (scale * scale),
            Prior::Flat => 0.0,
        }
    }
}
