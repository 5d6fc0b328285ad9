//! Priors on regression coefficients: independent N(0, s²) (the default, s = 10) or flat.

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
