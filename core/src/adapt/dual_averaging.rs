//! Dual-averaging step-size adaptation (Nesterov's primal-dual averaging as used by NUTS and Stan).
//!
//! # Formula
//! With acceptance statistic αₜ (clipped to ≤ 1) and target δ:
//!   s̄ₜ = (1 − 1/(t + t₀)) s̄ₜ₋₁ + (δ − αₜ)/(t + t₀)
//!   xₜ = μ − √t s̄ₜ / γ,    εₜ = exp(xₜ)
//!   x̄ₜ = (1 − t^(−κ)) x̄ₜ₋₁ + t^(−κ) xₜ
//! with μ = log(10 ε₀), γ = 0.05, t₀ = 10, κ = 0.75. After warm-up ε = exp(x̄).
//!
//! ## References
//! Hoffman, M. D. & Gelman, A. (2014). The No-U-Turn Sampler, §3.2. JMLR 15.

use crate::math;

/// The dual-averaging state of one step-size adaptation.
#[derive(Debug, Clone, PartialEq)]
pub struct DualAveraging {
    /// Target acceptance statistic δ.
    pub delta: f64,
    /// Shrinkage target μ (log step size).
    pub mu: f64,
    /// γ.
    pub gamma: f64,
    /// t₀.
    pub t0: f64,
    /// κ.
    pub kappa: f64,
    counter: f64,
    s_bar: f64,
    x_bar: f64,
}

impl DualAveraging {
    /// Start adapting towards acceptance `delta` from step size `eps0` (μ = log(10 ε₀)).
    pub fn new(delta: f64, eps0: f64) -> Self {
        DualAveraging {
            delta,
            mu: math::ln(10.0 * eps0),
            gamma: 0.05,
            t0: 10.0,
            kappa: 0.75,
            counter: 0.0,
            s_bar: 0.0,
            x_bar: 0.0,
        }
    }

    /// Forget the history and shrink towards log(10 ε₀) (Stan restarts after each metric update).
    pub fn restart(&mut self, eps0: f64) {
        self.mu = math::ln(10.0 * eps0);
        self.counter = 0.0;
        self.s_bar = 0.0;
        self.x_bar = 0.0;
    }

    /// Learn from one acceptance statistic; returns the next step size exp(xₜ).
    pub fn update(&mut self, accept_stat: f64) -> f64 {
        let a = if accept_stat.is_nan() {
            0.0
        } else {
            accept_stat.min(1.0)
        };
        self.counter += 1.0;
        let eta = 1.0 / (self.counter + self.t0);
        self.s_bar = (1.0 - eta) * self.s_bar + eta * (self.delta - a);
        let x = self.mu - self.s_bar * math::sqrt(self.counter) / self.gamma;
        let x_eta = math::pow(self.counter, -self.kappa);
        self.x_bar = (1.0 - x_eta) * self.x_bar + x_eta * x;
        math::exp(x)
    }

    /// The final step size exp(x̄) (the averaged iterate).
    pub fn final_step_size(&self) -> f64 {
        math::exp(self.x_bar)
    }

    /// Number of updates since the last restart.
    pub fn count(&self) -> usize {
        self.counter as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moves_towards_target() {
        // If acceptance is always above target the step size grows, and vice versa.
        let mut da = DualAveraging::new(0.8, 1.0);
        let mut e = 1.0;
        for _ in 0..50 {
            e = da.update(1.0);
        }
        assert!(e > 1.0 && da.final_step_size() > 1.0);
        let mut da = DualAveraging::new(0.8, 1.0);
        for _ in 0..50 {
            e = da.update(0.0);
        }
        assert!(e < 1.0 && da.final_step_size() < 1.0);
    }
}
