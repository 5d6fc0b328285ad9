//! Test models for the `mh-minibatch` tests: one-parameter data models with a flat prior.
#![allow(dead_code)]

use tallmc_core::model::DataModel;

/// ℓᵢ(θ) = θ·cᵢ, flat prior: Λᵢ(0 → 1) = (N/K)·cᵢ, a controlled per-point ratio.
pub struct Linear1 {
    /// The slopes cᵢ.
    pub c: Vec<f64>,
}

impl DataModel for Linear1 {
    fn dim(&self) -> usize {
        1
    }
    fn n(&self) -> usize {
        self.c.len()
    }
    fn param_names(&self) -> Vec<String> {
        vec!["theta".into()]
    }
    fn log_prior_grad(&self, _theta: &[f64], _grad: &mut [f64]) -> f64 {
        0.0
    }
    fn log_prior(&self, _theta: &[f64]) -> f64 {
        0.0
    }
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        theta[0] * self.c[i]
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        grad[0] += self.c[i];
        theta[0] * self.c[i]
    }
    fn log_lik_hess(&self, _theta: &[f64], _i: usize, _hess: &mut [f64]) {}
}

/// xᵢ ~ N(θ, 1), flat prior: ℓᵢ(θ) = −(xᵢ − θ)²/2. Tempered by K the posterior is N(x̄, K/N).
pub struct GaussMean {
    /// The data.
    pub x: Vec<f64>,
}

impl DataModel for GaussMean {
    fn dim(&self) -> usize {
        1
    }
    fn n(&self) -> usize {
        self.x.len()
    }
    fn param_names(&self) -> Vec<String> {
        vec!["mu".into()]
    }
    fn log_prior_grad(&self, _theta: &[f64], _grad: &mut [f64]) -> f64 {
        0.0
    }
    fn log_prior(&self, _theta: &[f64]) -> f64 {
        0.0
    }
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        let r = self.x[i] - theta[0];
        -0.5 * r * r
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let r = self.x[i] - theta[0];
        grad[0] += r;
        -0.5 * r * r
    }
    fn log_lik_hess(&self, _theta: &[f64], _i: usize, hess: &mut [f64]) {
        hess[0] -= 1.0;
    }
}

/// n standard-normal quantiles Φ⁻¹((i + ½)/n), re-standardised to mean 0 and variance 1.
pub fn normal_scores(n: usize) -> Vec<f64> {
    let q: Vec<f64> = (0..n)
        .map(|i| tallmc_core::math::norm_quantile((i as f64 + 0.5) / n as f64))
        .collect();
    let m = q.iter().sum::<f64>() / n as f64;
    let v = q.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n as f64;
    q.iter().map(|x| (x - m) / v.sqrt()).collect()
}
