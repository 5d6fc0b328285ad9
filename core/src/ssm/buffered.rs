//! Buffered subsequence gradients for state-space models (Putcha 2024, §3.2.2–3.3; Aicher et
//! al. 2023): the gradient estimator of buffered PF-SGLD.
//!
//! # Formula
//! A subsequence S = {s+1..s+S} (1-based) with start s uniform on {0..T−S}, buffered to
//! S* = {s+1−B .. s+S+B} ∩ {1..T}. The estimate of ∇θ log p(y₁:T|θ) is
//!
//! ĝ(S, B) = Σ_{t∈S} E[hₜ | y_{S*}, θ] / Pr(t∈S),  hₜ = ∇θ log f(xₜ|xₜ₋₁)g(yₜ|xₜ),
//!
//! with Pr(t∈S) = c(t)/(T−S+1), c(t) = min(t, S, T−t+1, T−S+1): the edge points of the series
//! are in fewer subsequences and get larger weights (using T/S everywhere is biased, spec
//! pitfall 9). The expectation is under the model started from its initial law one step before
//! the first observation of S* (the buffer on the left forgets this wrong prior, the buffer on
//! the right brings in the future). When S starts at t = 1 the window's prior is the true one
//! and E[∇θ log ν(X₀)] is added with the weight of t = 1, so with B ≥ T the estimator is unbiased
//! for the full gradient *including* the initial-law term, and S = T, B = 0 gives it exactly.
//!
//! - "N = ∞": [`kalman_estimate`] computes the expectation exactly with the RTS smoother on S*
//!   (`lgssm` only). Cost |S*| Kalman steps.
//! - Particle: [`BufferedGradient`] runs a [`ParticleFilter`] on S* with score weights
//!   1/Pr(t∈S) on S and 0 on the buffer. Cost N·|S*| particle propagations, independent of T.
//!
//! The buffering bias decays like L^B, L the contraction constant of the smoothing kernel
//! (`lgssm`: L ≤ |φ|τ²/(σ²+τ²); `sv`: L ≤ |φ|).

use super::kalman::{fisher_sum, smooth, KalmanParams};
use super::lgssm::ar1_grad_log_initial;
use super::pf::{ParticleFilter, PfConfig, PfSummary, ScoreSpec};
use super::{Lgssm, StateSpaceModel};
use crate::error::Error;
use crate::math;
use crate::rng::{uniform_index, ChainRng};
use crate::schema::{ParamKind, ParamSpec};
use alloc::vec::Vec;

/// Series up to this length get the full-sequence gradient by default (`subseq_len` = auto).
pub const AUTO_FULL_SERIES: usize = 250;

/// `subseq_len` = auto on longer series: the thesis' S = 40.
pub const AUTO_SUBSEQ_LEN: usize = 40;

/// The `subseq_len` setting (S of [`BufferConfig`]); auto (0) is [`auto_subseq_len`].
pub const P_SUBSEQ_LEN: ParamSpec = ParamSpec {
    key: "subseq_len",
    description: "subsequence length S (time points whose gradient is used; clamped to T); auto = T for series of at most 250 points (the full-sequence gradient, no subsampling noise), else 40",
    kind: ParamKind::Int {
        default: 0,
        min: 1,
        max: usize::MAX,
    },
};

/// `subseq_len` = auto for a series of `t_len` points: T when T ≤ [`AUTO_FULL_SERIES`], else
/// [`AUTO_SUBSEQ_LEN`].
///
/// The subsequence gradient's variance grows like T/S (Putcha 2024, Table 3.4.1), and the SGLD
/// step that keeps its noise from inflating the posterior variance shrinks like 1/variance. On
/// 200 daily DAX returns (`sv`, N = 200) S = 40 gave a gradient variance ≈ 10³ per coordinate
/// and S = T ≈ 20: the full sequence costs 3.3× more per iteration and allows a step ≈ 20×
/// larger. On long series a full pass per iteration is what subsampling avoids, and the
/// path-space score's variance grows like |S*|²/N (spec 003, pitfall 10): the threshold stays
/// near the length measured.
pub fn auto_subseq_len(t_len: usize) -> usize {
    if t_len <= AUTO_FULL_SERIES {
        t_len.max(1)
    } else {
        AUTO_SUBSEQ_LEN
    }
}

/// The `buffer` setting (B of [`BufferConfig`]).
pub const P_BUFFER: ParamSpec = ParamSpec {
    key: "buffer",
    description: "buffer B on each side of the subsequence (0: the biased no-buffer gradient)",
    kind: ParamKind::Int {
        default: 10,
        min: 0,
        max: usize::MAX,
    },
};

/// Subsequence length S and buffer B.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BufferConfig {
    /// Subsequence length S ≥ 1.
    pub subseq_len: usize,
    /// Buffer B ≥ 0 on each side.
    pub buffer: usize,
}

impl BufferConfig {
    /// Validated config (S ≥ 1).
    pub fn new(subseq_len: usize, buffer: usize) -> Result<Self, Error> {
        if subseq_len == 0 {
            return Err(Error::setting("subseq_len", "must be at least 1"));
        }
        Ok(BufferConfig { subseq_len, buffer })
    }

    /// From settings, for a series of `t_len` points: [`P_SUBSEQ_LEN`] (S ≥ 1, default auto:
    /// [`auto_subseq_len`]) and [`P_BUFFER`] (B, default 10, ≥ 0).
    pub fn from_settings(
        settings: &crate::settings::Settings,
        t_len: usize,
    ) -> Result<Self, Error> {
        let s = P_SUBSEQ_LEN
            .int_or_auto(settings)?
            .unwrap_or_else(|| auto_subseq_len(t_len));
        Self::new(s, P_BUFFER.int(settings)?)
    }
}

/// A buffered window, as 0-based half-open index ranges into y.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// First index of S* (inclusive).
    pub start: usize,
    /// One past the last index of S*.
    pub end: usize,
    /// First index of S.
    pub sub_start: usize,
    /// One past the last index of S.
    pub sub_end: usize,
}

/// The filter's view of the last window, for plots: where it was and the ESS path over it
/// (`pmmh`: the whole series, S = S* = 1..T).
#[derive(Debug, Clone, PartialEq)]
pub struct WindowTrace {
    /// The window (0-based half-open ranges into y).
    pub window: Window,
    /// ESS after weighting at each time point of S* (empty for the Kalman gradient).
    pub ess: Vec<f64>,
    /// Particles N (0 for the Kalman gradient).
    pub particles: usize,
}

impl Window {
    /// The window with S starting at 0-based `sub_start`, for a series of length `t_len`
    /// (S is truncated to the series if it would run past its end).
    pub fn new(t_len: usize, cfg: BufferConfig, sub_start: usize) -> Self {
        let sub_start = sub_start.min(t_len);
        let sub_end = sub_start.saturating_add(cfg.subseq_len).min(t_len);
        Window {
            start: sub_start.saturating_sub(cfg.buffer),
            end: sub_end.saturating_add(cfg.buffer).min(t_len),
            sub_start,
            sub_end,
        }
    }

    /// |S*|.
    pub fn len(&self) -> usize {
        self.end - self.start
    }

    /// Whether S* is empty.
    pub fn is_empty(&self) -> bool {
        self.end == self.start
    }
}

/// Pr(t ∈ S) for the 1-based time `t` when S (length `s_len` ≤ `t_len`) starts uniformly on
/// {0..T−S}: min(t, S, T−t+1, T−S+1)/(T−S+1); 0 outside 1..T.
pub fn inclusion_probability(t: usize, t_len: usize, s_len: usize) -> f64 {
    if t == 0 || t > t_len || s_len == 0 {
        return 0.0;
    }
    let s = s_len.min(t_len);
    let starts = t_len - s + 1;
    let c = t.min(s).min(t_len - t + 1).min(starts);
    c as f64 / starts as f64
}

/// A uniform subsequence start (0-based) on {0..T−S}.
pub fn sample_start(rng: &mut ChainRng, t_len: usize, s_len: usize) -> usize {
    let s = s_len.min(t_len);
    uniform_index(rng, t_len - s + 1)
}

/// Score weights over S*: 1/Pr(t∈S) on S, 0 on the buffer; written into `out`.
pub fn score_weights(w: &Window, t_len: usize, s_len: usize, out: &mut Vec<f64>) {
    out.clear();
    for i in w.start..w.end {
        if i >= w.sub_start && i < w.sub_end {
            out.push(1.0 / inclusion_probability(i + 1, t_len, s_len));
        } else {
            out.push(0.0);
        }
    }
}

/// What a gradient estimate cost and where it looked.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GradInfo {
    /// The window used.
    pub window: Window,
    /// Particle propagations N·|S*| (particle version) or Kalman steps |S*| (Kalman version).
    pub cost: u64,
    /// log p̂(y_{S*}|θ) under the window's initial law (a by-product, not a likelihood of y₁:T).
    pub window_log_lik: f64,
}

/// The inputs of a buffered gradient: θ and the gradient buffer of length p, a non-empty series.
fn check(theta: &[f64], p: usize, y: &[f64], grad: &[f64]) -> Result<(), Error> {
    Error::check_dim("theta", p, theta.len())?;
    if y.is_empty() {
        return Err(Error::data("empty time series"));
    }
    Error::check_dim("grad", p, grad.len())
}

/// Run the filter on a window `ys` of the series with the score weights `spec` and add its
/// score estimate into `grad`.
fn filter_window<M: StateSpaceModel + ?Sized>(
    pf: &mut ParticleFilter,
    model: &M,
    theta: &[f64],
    ys: &[f64],
    spec: ScoreSpec<'_>,
    rng: &mut ChainRng,
    grad: &mut [f64],
) -> Result<PfSummary, Error> {
    let out = pf.run(model, theta, ys, Some(spec), rng)?;
    for (g, s) in grad.iter_mut().zip(pf.score()) {
        *g += s;
    }
    Ok(out)
}

/// The exact ("N = ∞") buffered gradient ĝ(S, B) for `lgssm`, S starting at 0-based
/// `sub_start`, accumulated into `grad[0..3]`.
pub fn kalman_window_gradient(
    model: &Lgssm,
    theta: &[f64],
    y: &[f64],
    cfg: BufferConfig,
    sub_start: usize,
    grad: &mut [f64],
) -> Result<GradInfo, Error> {
    check(theta, 3, y, grad)?;
    let t_len = y.len();
    let w = Window::new(t_len, cfg, sub_start);
    let mut cw = Vec::with_capacity(w.len());
    score_weights(&w, t_len, cfg.subseq_len, &mut cw);
    let p = KalmanParams::of(model, theta);
    let ys = &y[w.start..w.end];
    let sm = smooth(&p, ys);
    fisher_sum(&p, ys, &sm, Some(&cw), grad);
    if w.start == 0 && w.sub_start == 0 {
        let c0 = 1.0 / inclusion_probability(1, t_len, cfg.subseq_len);
        let ex0 = sm.var[0] + sm.mean[0] * sm.mean[0];
        let mut g0 = [0.0; 3];
        ar1_grad_log_initial(model.initial, p.phi, p.sigma, math::sqrt(ex0), &mut g0);
        for k in 0..3 {
            grad[k] += c0 * g0[k];
        }
    }
    Ok(GradInfo {
        window: w,
        cost: w.len() as u64,
        window_log_lik: sm.log_lik,
    })
}

/// [`kalman_window_gradient`] at a uniformly drawn subsequence.
pub fn kalman_estimate(
    model: &Lgssm,
    theta: &[f64],
    y: &[f64],
    cfg: BufferConfig,
    rng: &mut ChainRng,
    grad: &mut [f64],
) -> Result<GradInfo, Error> {
    let s = sample_start(rng, y.len(), cfg.subseq_len);
    kalman_window_gradient(model, theta, y, cfg, s, grad)
}

/// The particle buffered gradient g^PF(S, B, N) with its reusable work buffers.
///
/// Usage: `let mut g = BufferedGradient::new(buf_cfg, pf_cfg)?;` then per iteration
/// `g.estimate(&model, &theta, &y, &mut rng, &mut grad)?` (grad is accumulated into; zero it
/// first). The filter's ESS path over S* is then in `g.filter().ess()`.
#[derive(Debug, Clone)]
pub struct BufferedGradient {
    cfg: BufferConfig,
    pf: ParticleFilter,
    weights: Vec<f64>,
}

impl BufferedGradient {
    /// An estimator with the given window and filter settings.
    pub fn new(cfg: BufferConfig, pf: PfConfig) -> Result<Self, Error> {
        let cfg = BufferConfig::new(cfg.subseq_len, cfg.buffer)?;
        Ok(BufferedGradient {
            cfg,
            pf: ParticleFilter::new(pf)?,
            weights: Vec::new(),
        })
    }

    /// The window settings.
    pub fn config(&self) -> BufferConfig {
        self.cfg
    }

    /// The filter (its `ess()` is the ESS over the last window).
    pub fn filter(&self) -> &ParticleFilter {
        &self.pf
    }

    /// g^PF(S, B, N) at a uniformly drawn subsequence, accumulated into `grad`.
    pub fn estimate<M: StateSpaceModel + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        y: &[f64],
        rng: &mut ChainRng,
        grad: &mut [f64],
    ) -> Result<GradInfo, Error> {
        let s = sample_start(rng, y.len(), self.cfg.subseq_len);
        self.estimate_at(model, theta, y, s, rng, grad)
    }

    /// g^PF(S, B, N) with S starting at 0-based `sub_start`, accumulated into `grad`.
    pub fn estimate_at<M: StateSpaceModel + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        y: &[f64],
        sub_start: usize,
        rng: &mut ChainRng,
        grad: &mut [f64],
    ) -> Result<GradInfo, Error> {
        let p = model.dim();
        check(theta, p, y, grad)?;
        let t_len = y.len();
        let w = Window::new(t_len, self.cfg, sub_start);
        score_weights(&w, t_len, self.cfg.subseq_len, &mut self.weights);
        let initial = if w.start == 0 && w.sub_start == 0 {
            1.0 / inclusion_probability(1, t_len, self.cfg.subseq_len)
        } else {
            0.0
        };
        let spec = ScoreSpec {
            weights: Some(&self.weights),
            initial,
        };
        let out = filter_window(
            &mut self.pf,
            model,
            theta,
            &y[w.start..w.end],
            spec,
            rng,
            grad,
        )?;
        Ok(GradInfo {
            window: w,
            cost: out.cost,
            window_log_lik: out.log_lik,
        })
    }
}

/// A low-variance estimate of the full-sequence score ∇θ log p(y₁:T|θ) (without the prior)
/// for diagnostics (KSD scores): the series is cut into consecutive blocks S₁, S₂, … of length
/// `cfg.subseq_len`, each block's Fisher sum E[Σ_{t∈Sₖ} hₜ | y_{Sₖ*}] is estimated by the
/// filter on its buffered window Sₖ* (buffer `cfg.buffer` each side, the window's initial law
/// at its start), and the block sums are added into `grad` (the initial-law term with the
/// first block). Returns the particle propagations N·Σₖ|Sₖ*|.
///
/// # Formula
/// ŝ(θ) = Σₖ Ê[Σ_{t∈Sₖ} ∇θ log f(xₜ|xₜ₋₁)g(yₜ|xₜ) | y_{Sₖ*}] (+ Ê[∇θ log ν(x₀) | y_{S₁*}]).
///
/// Compared with the full-sequence path-space score (variance growing like T²/N from path
/// degeneracy) the variance grows like T·(S + 2B)/N; the price is the buffer bias of each
/// block, which decays geometrically in B for a forgetting state process (the same bias as
/// the buffered gradient of [`BufferedGradient`]).
pub fn block_score<M: StateSpaceModel + ?Sized>(
    pf: &mut ParticleFilter,
    model: &M,
    theta: &[f64],
    y: &[f64],
    cfg: BufferConfig,
    rng: &mut ChainRng,
    grad: &mut [f64],
) -> Result<u64, Error> {
    let p = model.dim();
    check(theta, p, y, grad)?;
    let cfg = BufferConfig::new(cfg.subseq_len, cfg.buffer)?;
    let t_len = y.len();
    let mut weights = Vec::new();
    let mut cost = 0u64;
    let mut a = 0;
    while a < t_len {
        let w = Window::new(t_len, cfg, a);
        weights.clear();
        for i in w.start..w.end {
            weights.push(if i >= w.sub_start && i < w.sub_end {
                1.0
            } else {
                0.0
            });
        }
        let spec = ScoreSpec {
            weights: Some(&weights),
            initial: if a == 0 { 1.0 } else { 0.0 },
        };
        let out = filter_window(pf, model, theta, &y[w.start..w.end], spec, rng, grad)?;
        cost += out.cost;
        a = w.sub_end;
    }
    Ok(cost)
}
