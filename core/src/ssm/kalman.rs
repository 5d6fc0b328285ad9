//! Kalman filter and Rauch–Tung–Striebel smoother for the 1-d [`Lgssm`]: the exact
//! log-likelihood and its gradient (the "N = ∞" reference of Putcha 2024, ch. 3).
//!
//! # Formula
//! Filter, prior x₀ ~ N(m₀, P₀) one step before y₁, for t = 1..n:
//! m⁻ₜ = φmₜ₋₁, P⁻ₜ = φ²Pₜ₋₁ + σ²; vₜ = yₜ − m⁻ₜ, Sₜ = P⁻ₜ + τ²;
//! log p(y₁:n) = Σₜ −½(log 2πSₜ + vₜ²/Sₜ); Kₜ = P⁻ₜ/Sₜ, mₜ = m⁻ₜ + Kₜvₜ, Pₜ = (1−Kₜ)P⁻ₜ.
//!
//! RTS smoother, t = n−1..0: Jₜ = Pₜφ/P⁻ₜ₊₁, mˢₜ = mₜ + Jₜ(mˢₜ₊₁ − m⁻ₜ₊₁),
//! Pˢₜ = Pₜ + Jₜ²(Pˢₜ₊₁ − P⁻ₜ₊₁), Cov(xₜ₊₁, xₜ | y) = Jₜ Pˢₜ₊₁.
//!
//! Gradient by Fisher's identity, ∇θ log p(y₁:n) = E\[∇θ log ν(X₀)\] + Σₜ E\[hₜ\], with
//! θ = (φ, log σ, log τ) and the smoothed moments:
//! E\[hₜ\]_φ = (E\[xₜxₜ₋₁\] − φE\[xₜ₋₁²\])/σ²,
//! E\[hₜ\]_logσ = (E\[xₜ²\] − 2φE\[xₜxₜ₋₁\] + φ²E\[xₜ₋₁²\])/σ² − 1,
//! E\[hₜ\]_logτ = ((yₜ − mˢₜ)² + Pˢₜ)/τ² − 1.
//! The initial-law term (stationary ν: v₀ = σ²/(1−φ²)) is (E\[x₀²\] − v₀)/(2v₀²)·∇θ v₀; without it
//! the Fisher sum does not match finite differences (spec pitfall 8).

use super::lgssm::ar1_grad_log_initial;
use super::{Lgssm, StateSpaceModel};
use crate::math;
use alloc::vec::Vec;

/// Natural parameters of a 1-d LGSSM plus the initial law N(m₀, P₀) of x₀.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KalmanParams {
    /// Autoregression φ.
    pub phi: f64,
    /// State noise sd σ.
    pub sigma: f64,
    /// Observation noise sd τ.
    pub tau: f64,
    /// Mean of x₀.
    pub m0: f64,
    /// Variance of x₀.
    pub p0: f64,
}

impl KalmanParams {
    /// Parameters of `model` at θ = (φ, log σ, log τ); a θ of another length gives NaN
    /// parameters (and so NaN likelihoods), never a panic.
    pub fn of(model: &Lgssm, theta: &[f64]) -> Self {
        let eta = match theta {
            [phi, ls, lt] => [*phi, math::exp(*ls), math::exp(*lt)],
            _ => [f64::NAN; 3],
        };
        let (m0, p0) = model.initial_moments(&eta);
        KalmanParams {
            phi: eta[0],
            sigma: eta[1],
            tau: eta[2],
            m0,
            p0,
        }
    }
}

/// Smoothed moments of x₀..xₙ given y₁..yₙ.
#[derive(Debug, Clone, PartialEq)]
pub struct Smoothed {
    /// log p(y₁:n).
    pub log_lik: f64,
    /// E[xₜ | y₁:n], t = 0..n (length n + 1).
    pub mean: Vec<f64>,
    /// Var[xₜ | y₁:n], t = 0..n.
    pub var: Vec<f64>,
    /// Cov(xₜ, xₜ₋₁ | y₁:n) at index t = 1..n (index 0 is 0).
    pub lag_cov: Vec<f64>,
}

/// log p(y₁:n) by the Kalman filter; O(n) time, O(1) memory.
pub fn filter_log_lik(p: &KalmanParams, y: &[f64]) -> f64 {
    let (s2, t2) = (p.sigma * p.sigma, p.tau * p.tau);
    let (mut m, mut pv) = (p.m0, p.p0);
    let mut ll = 0.0;
    for &yt in y {
        let mp = p.phi * m;
        let pp = p.phi * p.phi * pv + s2;
        let v = yt - mp;
        let s = pp + t2;
        ll += -0.5 * (math::ln(s) + v * v / s) - math::LN_SQRT_2PI;
        let k = pp / s;
        m = mp + k * v;
        pv = (1.0 - k) * pp;
    }
    ll
}

/// Filter forward and smooth backward; O(n) time and memory.
pub fn smooth(p: &KalmanParams, y: &[f64]) -> Smoothed {
    let n = y.len();
    let (s2, t2) = (p.sigma * p.sigma, p.tau * p.tau);
    let mut mf = Vec::with_capacity(n + 1);
    let mut pf = Vec::with_capacity(n + 1);
    let mut mp = Vec::with_capacity(n + 1);
    let mut pp = Vec::with_capacity(n + 1);
    mf.push(p.m0);
    pf.push(p.p0);
    mp.push(p.m0);
    pp.push(p.p0);
    let mut ll = 0.0;
    for (t, &yt) in y.iter().enumerate() {
        let m_pred = p.phi * mf[t];
        let p_pred = p.phi * p.phi * pf[t] + s2;
        let v = yt - m_pred;
        let s = p_pred + t2;
        ll += -0.5 * (math::ln(s) + v * v / s) - math::LN_SQRT_2PI;
        let k = p_pred / s;
        mp.push(m_pred);
        pp.push(p_pred);
        mf.push(m_pred + k * v);
        pf.push((1.0 - k) * p_pred);
    }
    let mut ms = mf.clone();
    let mut ps = pf.clone();
    let mut lag = alloc::vec![0.0; n + 1];
    for t in (0..n).rev() {
        let j = pf[t] * p.phi / pp[t + 1];
        ms[t] = mf[t] + j * (ms[t + 1] - mp[t + 1]);
        ps[t] = pf[t] + j * j * (ps[t + 1] - pp[t + 1]);
        lag[t + 1] = j * ps[t + 1];
    }
    Smoothed {
        log_lik: ll,
        mean: ms,
        var: ps,
        lag_cov: lag,
    }
}

/// Σₜ wₜ E[hₜ | y₁:n] over t = 1..n (1-based positions in `y`) with weights `weights[t−1]`
/// (`None`: all 1), θ = (φ, log σ, log τ), accumulated into `grad[0..3]`. Excludes the
/// initial-law term.
pub fn fisher_sum(
    p: &KalmanParams,
    y: &[f64],
    sm: &Smoothed,
    weights: Option<&[f64]>,
    grad: &mut [f64],
) {
    let (phi, s2, t2) = (p.phi, p.sigma * p.sigma, p.tau * p.tau);
    for t in 1..=y.len() {
        let w = match weights {
            Some(w) => w[t - 1],
            None => 1.0,
        };
        if w == 0.0 {
            continue;
        }
        let (m1, m0) = (sm.mean[t], sm.mean[t - 1]);
        let exx = sm.var[t] + m1 * m1;
        let ex0 = sm.var[t - 1] + m0 * m0;
        let ex10 = sm.lag_cov[t] + m1 * m0;
        let r = y[t - 1] - m1;
        grad[0] += w * (ex10 - phi * ex0) / s2;
        grad[1] += w * ((exx - 2.0 * phi * ex10 + phi * phi * ex0) / s2 - 1.0);
        grad[2] += w * ((r * r + sm.var[t]) / t2 - 1.0);
    }
}

/// Exact log p(y₁:n | θ) of `model` (NaN if θ does not have length 3).
pub fn log_lik(model: &Lgssm, theta: &[f64], y: &[f64]) -> f64 {
    if theta.len() != 3 {
        return f64::NAN;
    }
    filter_log_lik(&KalmanParams::of(model, theta), y)
}

/// Exact log p(y₁:n | θ) with its θ-gradient (Fisher identity on the RTS smoother, including
/// the initial-law term) accumulated into `grad[0..3]`. Does not include the prior. NaN (and
/// `grad` untouched) if θ or `grad` does not have length 3.
pub fn log_lik_grad(model: &Lgssm, theta: &[f64], y: &[f64], grad: &mut [f64]) -> f64 {
    if theta.len() != 3 || grad.len() != 3 {
        return f64::NAN;
    }
    let p = KalmanParams::of(model, theta);
    let sm = smooth(&p, y);
    fisher_sum(&p, y, &sm, None, grad);
    let ex0 = sm.var[0] + sm.mean[0] * sm.mean[0];
    // E[∇ log ν(X₀)] is linear in x₀², so plug in E[x₀²] via the pseudo-state √E[x₀²].
    ar1_grad_log_initial(model.initial, p.phi, p.sigma, math::sqrt(ex0), grad);
    sm.log_lik
}

/// Exact log posterior (up to the evidence) and its gradient: Kalman log-likelihood plus the
/// model's log prior. `grad` is accumulated into. NaN (and `grad` untouched) on wrong lengths.
pub fn log_posterior_grad(model: &Lgssm, theta: &[f64], y: &[f64], grad: &mut [f64]) -> f64 {
    let ll = log_lik_grad(model, theta, y, grad);
    if ll.is_nan() {
        return ll;
    }
    ll + model.log_prior_grad(theta, grad)
}
