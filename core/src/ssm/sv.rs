//! Stochastic volatility model (Putcha 2024, §3.5.2 and App. A.1.2).
//!
//! # Formula
//! Xₜ = φXₜ₋₁ + σVₜ,  Yₜ | xₜ ~ N(0, eˣᵗ τ²).
//!
//! log g(yₜ|xₜ) = −½ log(2π τ² eˣᵗ) − yₜ² e⁻ˣᵗ/(2τ²). The thesis' weight (A.1.13) drops the
//! normaliser e^{−xₜ/2}; it is included here, as in A.1.14 and the authors' code.
//!
//! θ = (φ, log σ, log τ), η = (φ, σ, τ, ln σ², ln τ²); priors and the initial law exactly as for [`Lgssm`](super::Lgssm)
//! (stationary N(0, σ²/(1−φ²)) by default). Complete-data score: ∂φ and ∂log σ as for the
//! LGSSM, ∂log τ = yₜ² e⁻ˣᵗ/τ² − 1.
//!
//! Proposals: the bootstrap (prior kernel) and, for `proposal = optimal`, a Laplace
//! approximation of the locally optimal kernel p(xₜ|xₜ₋₁, yₜ) (which has no closed form here),
//! mixed with the prior kernel for bounded weights (see [`laplace_mixture`]). The prior kernel
//! contracts with constant L ≤ |φ|. e⁻ˣ is evaluated with x clamped at −700 so extreme particles give a zero
//! weight instead of an overflow.

use super::lgssm::{ar1_grad_log_transition, ar1_natural, ar1_state_hooks, check_law, ScalePrior};
use super::{
    ln_normal_lv, simulate_with, state, InitialLaw, OptimalBatch, OptimalDraw, State,
    StateSpaceModel,
};
use crate::dist::{fill_std_normal, normal, std_normal};
use crate::error::Error;
use crate::math;
use crate::rng::{uniform, ChainRng};
use alloc::string::String;
use alloc::vec::Vec;

/// The thesis' synthetic truth (φ, σ, τ) = (0.9, 0.5, 0.5).
pub const TRUTH: [f64; 3] = [0.9, 0.5, 0.5];

/// The stochastic volatility model, θ = (φ, log σ, log τ).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StochasticVolatility {
    /// Law of x₀ (one step before y₁).
    pub initial: InitialLaw,
    /// Prior hyperparameters.
    pub prior: ScalePrior,
}

impl Default for StochasticVolatility {
    /// Stationary initial law and the default prior.
    fn default() -> Self {
        StochasticVolatility {
            initial: InitialLaw::Stationary,
            prior: ScalePrior::default(),
        }
    }
}

impl StochasticVolatility {
    /// A model with the given initial law and prior.
    pub fn new(initial: InitialLaw, prior: ScalePrior) -> Result<Self, Error> {
        Ok(StochasticVolatility {
            initial: check_law(initial)?,
            prior,
        })
    }
}

/// e⁻ˣ with x clamped at −700 (no overflow).
#[inline]
fn exp_neg(x: f64) -> f64 {
    math::exp(-(x.max(-700.0)))
}

/// Weight of the prior kernel in the `optimal` proposal's defensive mixture.
pub const DEFENSIVE_WEIGHT: f64 = 0.1;

/// ln [`DEFENSIVE_WEIGHT`].
pub const LN_DEFENSIVE: f64 = -2.302_585_092_994_045_5;

/// ln(1 − [`DEFENSIVE_WEIGHT`]).
pub const LN_1M_DEFENSIVE: f64 = -0.105_360_515_657_826_28;

/// Newton iterations for the mode of log f(x|xₜ₋₁) + log g(yₜ|x).
const LAPLACE_NEWTON: usize = 3;

/// The `optimal` proposal of the stochastic volatility model: a draw from the defensive mixture
/// q = (1 − α) N(x̂, v) + α N(m, σ²), α = [`DEFENSIVE_WEIGHT`], and its log importance weight
/// log f(x|xₜ₋₁) + log g(yₜ|x) − log q(x).
///
/// # Formula
/// With m = φxₜ₋₁ and c = yₜ²/(2τ²), the log of the locally optimal kernel is, up to a
/// constant, ℓ(x) = −(x − m)²/(2σ²) − x/2 − c e⁻ˣ: concave, ℓ'(x) = −(x − m)/σ² − ½ + c e⁻ˣ,
/// ℓ''(x) = −1/σ² − c e⁻ˣ. x̂ is the Newton iterate ([`LAPLACE_NEWTON`] iterations; ℓ' is
/// convex and decreasing, so Newton converges without step control) from a Lambert-W start
/// ([`laplace_start`]) and v = −1/ℓ'' at the last iterate but one (one exp fewer; any v > 0 is
/// valid). Where e⁻ˣ overflows (an extreme θ) the draw falls back to the prior kernel.
/// Any x̂ and v > 0 give a valid importance sampler; the Laplace choice makes the weights
/// nearly constant when yₜ is informative, where the prior kernel's are degenerate. The prior
/// component keeps the weight below g(yₜ|x)/α, which for yₜ ≠ 0 is at most
/// (2π yₜ²)^(−½)e^(−½)/α, so the weights
/// have finite variance even where v < σ²/2 (a Gaussian proposal alone would not).
///
/// Random numbers: one uniform (the mixture's component), then one standard normal
/// ([`std_normal`]), for every draw; [`laplace_mixture_given`] makes the draw from them.
pub fn laplace_mixture(eta: &[f64], prev: &State, y: f64, rng: &mut ChainRng) -> OptimalDraw {
    let u = uniform(rng);
    let z = std_normal(rng);
    laplace_mixture_given(eta, prev, y, u, z)
}

/// [`laplace_mixture`]'s draw from a uniform u ∈ [0, 1) and a standard normal z: the prior
/// kernel's m + σz where u < α (or where the Laplace step overflows), else x̂ + √v z.
pub fn laplace_mixture_given(eta: &[f64], prev: &State, y: f64, u: f64, z: f64) -> OptimalDraw {
    let (phi, s2) = (eta[0], eta[1] * eta[1]);
    let t2 = eta[2] * eta[2];
    let m = phi * prev[0];
    let c = 0.5 * y * y / t2;
    let inv_s2 = 1.0 / s2;
    let mut x = laplace_start(m, s2, c);
    let mut curv = inv_s2;
    for _ in 0..LAPLACE_NEWTON {
        let e = c * exp_neg(x);
        curv = inv_s2 + e;
        let next = x + (-(x - m) * inv_s2 - 0.5 + e) / curv;
        if !next.is_finite() {
            break;
        }
        x = next;
    }
    if !(curv.is_finite() && curv > 0.0 && x.is_finite()) {
        // an overflow at an extreme θ: the prior kernel, with weight g
        let draw = m + eta[1] * z;
        let lg = -0.5 * (eta[4] + draw + y * y * exp_neg(draw) / t2) - math::LN_SQRT_2PI;
        return OptimalDraw {
            state: state(draw),
            log_weight: lg,
        };
    }
    // the curvature at the last iterate but one: any v > 0 gives a valid proposal
    let (mode, v) = (x, 1.0 / curv);
    let draw = if u < DEFENSIVE_WEIGHT {
        m + eta[1] * z
    } else {
        mode + math::sqrt(v) * z
    };
    let lf = ln_normal_lv(draw, m, s2, eta[3]);
    let lq = math::log_add_exp(
        LN_1M_DEFENSIVE + ln_normal_lv(draw, mode, v, -math::ln(curv)),
        LN_DEFENSIVE + lf,
    );
    let lg = -0.5 * (eta[4] + draw + y * y * exp_neg(draw) / t2) - math::LN_SQRT_2PI;
    OptimalDraw {
        state: state(draw),
        log_weight: lf + lg - lq,
    }
}

/// [`laplace_mixture`] for every particle of one step (`batch.prev` → `batch.out`,
/// `batch.log_w`), in passes: the modes and curvatures (no random numbers; branch-free with
/// [`math::fast_exp`], [`math::fast_ln`] and [`math::fast_ln_1p_unit`], so the loop
/// vectorises, with AVX2 where the CPU has it), the random numbers (n uniforms, then n standard
/// normals from [`fill_std_normal`]), the draws, then their log weights (branch-free again).
///
/// The same law as [`laplace_mixture`], not its stream: particle i's draw is
/// [`laplace_mixture_given`]`(uᵢ, zᵢ)` up to rounding, with uᵢ the i-th uniform and zᵢ the
/// i-th normal. x̂ and v may differ from it in the last bits (the start's ln(1 + z) is
/// softplus(ln z) for every z instead of ln z above ln z = 30, a gap below 10⁻¹³; any x̂ and
/// v > 0 give a valid importance sampler, and the weight uses the x̂ and v that drew), and log
/// f, log g and log q are within a few ulp of its values (`fast_exp` gives 0 below e⁻⁷⁰⁸·³
/// where `libm` gives a subnormal: only for a draw above 708 with y²/τ² above about 10³⁰⁰).
pub fn laplace_mixture_batch(eta: &[f64], y: f64, rng: &mut ChainRng, batch: &mut OptimalBatch) {
    let n = batch.prev.len();
    let scratch = &mut batch.scratch;
    scratch.clear();
    scratch.resize(6 * n, 0.0);
    let (m, rest) = scratch.split_at_mut(n);
    let (mode, rest) = rest.split_at_mut(n);
    let (curv, rest) = rest.split_at_mut(n);
    let (u, rest) = rest.split_at_mut(n);
    let (z, draw) = rest.split_at_mut(n);
    for (mi, p) in m.iter_mut().zip(&batch.prev) {
        *mi = eta[0] * p[0];
    }
    crate::on_cpu!(
        laplace_modes_avx2(eta, y, m, mode, curv),
        laplace_modes(eta, y, m, mode, curv)
    );
    for ui in u.iter_mut() {
        *ui = uniform(rng);
    }
    fill_std_normal(rng, z);
    // the draws: the prior kernel where u < α or x̂ = NaN (a scalar loop: `libm`'s square
    // root keeps a loop from vectorising)
    for i in 0..n {
        draw[i] = if mode[i].is_nan() || u[i] < DEFENSIVE_WEIGHT {
            m[i] + eta[1] * z[i]
        } else {
            mode[i] + math::sqrt(1.0 / curv[i]) * z[i]
        };
    }
    batch.log_w.clear();
    batch.log_w.resize(n, 0.0);
    crate::on_cpu!(
        laplace_weights_avx2(eta, y, m, mode, curv, draw, &mut batch.log_w),
        laplace_weights(eta, y, m, mode, curv, draw, &mut batch.log_w)
    );
    batch.out.clear();
    batch.out.extend(draw.iter().map(|&d| state(d)));
}

/// −|x| (the sign bit set: no branch).
#[inline(always)]
fn neg_abs(x: f64) -> f64 {
    f64::from_bits(x.to_bits() | (1 << 63))
}

/// Pass 1 of [`laplace_mixture_batch`]: for each m = φxₜ₋₁, the Newton iterate x̂ from
/// [`laplace_start`]'s point (its ln(1 + z) as softplus(ln z)) and the curvature −ℓ'' at the
/// last iterate but one, as in [`laplace_mixture`]; x̂ = NaN where they are not finite.
#[inline(always)]
fn laplace_modes_body(eta: &[f64], y: f64, m: &[f64], mode: &mut [f64], curv: &mut [f64]) {
    let s2 = eta[1] * eta[1];
    let t2 = eta[2] * eta[2];
    let c = 0.5 * y * y / t2;
    let inv_s2 = 1.0 / s2;
    let c_pos = c > 0.0;
    // ln z = ln(cσ²) + σ²/2 − m: the first term is the same for every particle
    let ln_cs2 = if c_pos { math::ln(c * s2) } else { 0.0 };
    let n = m.len().min(mode.len()).min(curv.len());
    for i in 0..n {
        let mi = m[i];
        let base = mi - 0.5 * s2;
        let ln_z = ln_cs2 + 0.5 * s2 - mi;
        // L = ln(1 + z) = softplus(ln z), then W(z) ≈ L − ln(1 + L)
        let l = if ln_z > 0.0 { ln_z } else { 0.0 }
            + math::fast_ln_1p_unit(math::fast_exp(neg_abs(ln_z)));
        let w = l - math::fast_ln(1.0 + l);
        let start = if w.is_finite() { base + w } else { mi };
        let mut x = if c_pos { start } else { base };
        let mut cv = inv_s2;
        for _ in 0..LAPLACE_NEWTON {
            let e = c * math::fast_exp(-(if x > -700.0 { x } else { -700.0 }));
            cv = inv_s2 + e;
            let next = x + (-(x - mi) * inv_s2 - 0.5 + e) / cv;
            x = if next.is_finite() { next } else { x };
        }
        let ok = cv.is_finite() && cv > 0.0 && x.is_finite();
        mode[i] = if ok { x } else { f64::NAN };
        curv[i] = cv;
    }
}

/// [`laplace_modes_body`] compiled for the baseline CPU.
fn laplace_modes(eta: &[f64], y: f64, m: &[f64], mode: &mut [f64], curv: &mut [f64]) {
    laplace_modes_body(eta, y, m, mode, curv)
}

/// [`laplace_modes_body`] compiled with AVX2 (the same operations, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn laplace_modes_avx2(eta: &[f64], y: f64, m: &[f64], mode: &mut [f64], curv: &mut [f64]) {
    laplace_modes_body(eta, y, m, mode, curv)
}

/// The last pass of [`laplace_mixture_batch`]: log f + log g − log q at each draw (log g alone
/// where x̂ = NaN, the prior kernel's draw), with log q = log((1 − α) N(x; x̂, 1/curv) +
/// α N(x; m, σ²)).
#[inline(always)]
fn laplace_weights_body(
    eta: &[f64],
    y: f64,
    m: &[f64],
    mode: &[f64],
    curv: &[f64],
    draw: &[f64],
    log_w: &mut [f64],
) {
    let s2 = eta[1] * eta[1];
    let t2 = eta[2] * eta[2];
    let y2 = y * y;
    let n = m
        .len()
        .min(mode.len())
        .min(curv.len())
        .min(draw.len())
        .min(log_w.len());
    for i in 0..n {
        let d = draw[i];
        let en = math::fast_exp(-(if d > -700.0 { d } else { -700.0 }));
        let lg = -0.5 * (eta[4] + d + y2 * en / t2) - math::LN_SQRT_2PI;
        let dm = d - m[i];
        let lf = -0.5 * (eta[3] + dm * dm / s2) - math::LN_SQRT_2PI;
        let dq = d - mode[i];
        let ln_q_laplace = -0.5 * (dq * dq * curv[i] - math::fast_ln(curv[i])) - math::LN_SQRT_2PI;
        let a = LN_1M_DEFENSIVE + ln_q_laplace;
        let b = LN_DEFENSIVE + lf;
        let hi = if a > b { a } else { b };
        let lq = hi + math::fast_ln_1p_unit(math::fast_exp(neg_abs(a - b)));
        log_w[i] = if mode[i].is_nan() { lg } else { lf + lg - lq };
    }
}

/// [`laplace_weights_body`] compiled for the baseline CPU.
fn laplace_weights(
    eta: &[f64],
    y: f64,
    m: &[f64],
    mode: &[f64],
    curv: &[f64],
    draw: &[f64],
    log_w: &mut [f64],
) {
    laplace_weights_body(eta, y, m, mode, curv, draw, log_w)
}

/// [`laplace_weights_body`] compiled with AVX2 (the same operations, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn laplace_weights_avx2(
    eta: &[f64],
    y: f64,
    m: &[f64],
    mode: &[f64],
    curv: &[f64],
    draw: &[f64],
    log_w: &mut [f64],
) {
    laplace_weights_body(eta, y, m, mode, curv, draw, log_w)
}

/// [`StateSpaceModel::grad_log_joint_batch`] of [`StochasticVolatility`]: the same terms as
/// its `grad_log_joint` (∂φ, ∂log σ of the AR(1) transition; ∂log τ = y² e⁻ˣ/τ² − 1), with
/// e⁻ˣ from [`math::fast_exp`] (within 1 ulp of `libm`'s) so that the loop vectorises.
#[inline(always)]
fn score_terms_body(eta: &[f64], prev: &[State], x: &[State], y: f64, grad: &mut [f64]) {
    let (phi, s2) = (eta[0], eta[1] * eta[1]);
    let t2 = eta[2] * eta[2];
    let y2 = y * y;
    for ((g, pv), xv) in grad.chunks_exact_mut(3).zip(prev).zip(x) {
        let (xp, xt) = (pv[0], xv[0]);
        let e = xt - phi * xp;
        let en = math::fast_exp(-(if xt > -700.0 { xt } else { -700.0 }));
        g[0] = e * xp / s2;
        g[1] = e * e / s2 - 1.0;
        g[2] = y2 * en / t2 - 1.0;
    }
}

/// [`score_terms_body`] compiled for the baseline CPU.
fn score_terms(eta: &[f64], prev: &[State], x: &[State], y: f64, grad: &mut [f64]) {
    score_terms_body(eta, prev, x, y, grad)
}

/// [`score_terms_body`] compiled with AVX2 (the same operations, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn score_terms_avx2(eta: &[f64], prev: &[State], x: &[State], y: f64, grad: &mut [f64]) {
    score_terms_body(eta, prev, x, y, grad)
}

/// Newton's starting point for the mode of ℓ(x) = −(x − m)²/(2σ²) − x/2 − c e⁻ˣ.
///
/// # Formula
/// With x = m − σ²/2 + w, ℓ'(x) = 0 reads w eʷ = z, z = cσ² e^(σ²/2 − m): w = W(z), the Lambert
/// function, approximated by L − ln(1 + L) with L = ln(1 + z) (within 0.58 of W for all z ≥ 0,
/// the largest gap near z = 8; L from ln z when z would overflow); three Newton steps from it
/// reach the mode within 3·10⁻⁶ for outliers such as c = 5 000 at m = 0. At y = 0 (c = 0) it is the exact mode m − σ²/2; an
/// outlier after a calm spell (m ≪ 0, c large) starts within reach of the mode instead of
/// moving about 1 per Newton step from m.
fn laplace_start(m: f64, s2: f64, c: f64) -> f64 {
    let base = m - 0.5 * s2;
    if c <= 0.0 {
        return base;
    }
    let ln_z = math::ln(c * s2) + 0.5 * s2 - m;
    let l = if ln_z > 30.0 {
        ln_z
    } else {
        math::ln_1p(math::exp(ln_z))
    };
    let w = l - math::ln_1p(l);
    if w.is_finite() {
        base + w
    } else {
        m
    }
}

impl StateSpaceModel for StochasticVolatility {
    fn name(&self) -> &'static str {
        "sv"
    }
    ar1_state_hooks!();
    fn natural_dim(&self) -> usize {
        5
    }
    fn natural(&self, theta: &[f64], eta: &mut [f64]) {
        ar1_natural(theta, eta);
    }
    fn log_observation(&self, eta: &[f64], x: &State, y: f64) -> f64 {
        let t2 = eta[2] * eta[2];
        -0.5 * (eta[4] + x[0] + y * y * exp_neg(x[0]) / t2) - math::LN_SQRT_2PI
    }
    fn grad_log_joint(&self, eta: &[f64], prev: &State, x: &State, y: f64, grad: &mut [f64]) {
        ar1_grad_log_transition(eta, prev, x, grad);
        grad[2] += y * y * exp_neg(x[0]) / (eta[2] * eta[2]) - 1.0;
    }
    fn grad_log_joint_batch(
        &self,
        eta: &[f64],
        prev: &[State],
        x: &[State],
        y: f64,
        grad: &mut [f64],
    ) {
        crate::on_cpu!(
            score_terms_avx2(eta, prev, x, y, grad),
            score_terms(eta, prev, x, y, grad)
        )
    }
    fn has_optimal_proposal(&self) -> bool {
        true
    }
    fn sample_optimal(
        &self,
        eta: &[f64],
        prev: &State,
        y: f64,
        rng: &mut ChainRng,
    ) -> Option<OptimalDraw> {
        Some(laplace_mixture(eta, prev, y, rng))
    }
    fn sample_optimal_batch(
        &self,
        eta: &[f64],
        y: f64,
        rng: &mut ChainRng,
        batch: &mut OptimalBatch,
    ) -> bool {
        laplace_mixture_batch(eta, y, rng, batch);
        true
    }
    fn simulate(&self, theta: &[f64], t_len: usize, rng: &mut ChainRng) -> (Vec<f64>, Vec<f64>) {
        simulate_with(self, theta, t_len, rng, |eta, x, r| {
            normal(r, 0.0, eta[2] * math::exp(0.5 * x[0]))
        })
    }
}
