//! Running mean, variance and covariance (Welford's algorithm) for metric adaptation.
//!
//! # Formula
//! nₖ = nₖ₋₁ + 1, δ = x − mₖ₋₁, mₖ = mₖ₋₁ + δ/nₖ, Sₖ = Sₖ₋₁ + δ (x − mₖ)ᵀ;
//! sample covariance S/(n − 1).
//!
//! ## References
//! Welford, B. P. (1962). Note on a method for calculating corrected sums of squares and products.
//! Technometrics 4(3).

use alloc::vec;
use alloc::vec::Vec;

/// Running per-coordinate mean and variance.
#[derive(Debug, Clone, PartialEq)]
pub struct WelfordVar {
    n: usize,
    mean: Vec<f64>,
    m2: Vec<f64>,
}

impl WelfordVar {
    /// Empty accumulator of dimension d.
    pub fn new(d: usize) -> Self {
        WelfordVar {
            n: 0,
            mean: vec![0.0; d],
            m2: vec![0.0; d],
        }
    }
    /// Add one draw.
    pub fn add(&mut self, x: &[f64]) {
        self.n += 1;
        let n = self.n as f64;
        for ((m, s), &xi) in self.mean.iter_mut().zip(self.m2.iter_mut()).zip(x) {
            let delta = xi - *m;
            *m += delta / n;
            *s += delta * (xi - *m);
        }
    }
    /// Draws added.
    pub fn count(&self) -> usize {
        self.n
    }
    /// Running mean.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }
    /// Sample variances (n − 1 denominator; zeros when n < 2).
    pub fn variance(&self) -> Vec<f64> {
        let den = if self.n > 1 { (self.n - 1) as f64 } else { 1.0 };
        let z = if self.n > 1 { 1.0 } else { 0.0 };
        self.m2.iter().map(|s| z * s / den).collect()
    }
    /// Forget every draw.
    pub fn reset(&mut self) {
        self.n = 0;
        self.mean.iter_mut().for_each(|x| *x = 0.0);
        self.m2.iter_mut().for_each(|x| *x = 0.0);
    }
}

/// Running mean and full covariance.
#[derive(Debug, Clone, PartialEq)]
pub struct WelfordCov {
    n: usize,
    mean: Vec<f64>,
    m2: Vec<f64>,
    delta: Vec<f64>,
}

impl WelfordCov {
    /// Empty accumulator of dimension d.
    pub fn new(d: usize) -> Self {
        WelfordCov {
            n: 0,
            mean: vec![0.0; d],
            m2: vec![0.0; d * d],
            delta: vec![0.0; d],
        }
    }
    /// Add one draw.
    pub fn add(&mut self, x: &[f64]) {
        let d = self.mean.len();
        self.n += 1;
        let n = self.n as f64;
        for i in 0..d.min(x.len()) {
            self.delta[i] = x[i] - self.mean[i];
            self.mean[i] += self.delta[i] / n;
        }
        for i in 0..d.min(x.len()) {
            let after = x[i] - self.mean[i];
            for j in 0..d.min(x.len()) {
                self.m2[i * d + j] += after * self.delta[j];
            }
        }
    }
    /// Draws added.
    pub fn count(&self) -> usize {
        self.n
    }
    /// Sample covariance, row-major (n − 1 denominator; zeros when n < 2), symmetrised.
    pub fn covariance(&self) -> Vec<f64> {
        let d = self.mean.len();
        let den = if self.n > 1 { (self.n - 1) as f64 } else { 1.0 };
        let z = if self.n > 1 { 1.0 } else { 0.0 };
        let mut c = vec![0.0; d * d];
        for i in 0..d {
            for j in 0..d {
                c[i * d + j] = z * 0.5 * (self.m2[i * d + j] + self.m2[j * d + i]) / den;
            }
        }
        c
    }
    /// Forget every draw.
    pub fn reset(&mut self) {
        self.n = 0;
        self.mean.iter_mut().for_each(|x| *x = 0.0);
        self.m2.iter_mut().for_each(|x| *x = 0.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_two_pass() {
        let xs = [
            [1.0, 2.0],
            [3.0, -1.0],
            [0.5, 0.25],
            [4.0, 4.0],
            [-2.0, 1.5],
        ];
        let mut v = WelfordVar::new(2);
        let mut c = WelfordCov::new(2);
        for x in &xs {
            v.add(x);
            c.add(x);
        }
        let n = xs.len() as f64;
        let m0 = xs.iter().map(|x| x[0]).sum::<f64>() / n;
        let m1 = xs.iter().map(|x| x[1]).sum::<f64>() / n;
        let v0 = xs.iter().map(|x| (x[0] - m0).powi(2)).sum::<f64>() / (n - 1.0);
        let c01 = xs.iter().map(|x| (x[0] - m0) * (x[1] - m1)).sum::<f64>() / (n - 1.0);
        assert!((v.variance()[0] - v0).abs() < 1e-12);
        assert!((c.covariance()[0] - v0).abs() < 1e-12);
        assert!((c.covariance()[1] - c01).abs() < 1e-12);
        assert!((c.covariance()[2] - c01).abs() < 1e-12);
    }
}
