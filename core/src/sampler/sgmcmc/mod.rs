//! Stochastic-gradient MCMC: minibatch gradient estimators (naive, control variate,
//! preferential, k-DPP) and the chains `sgld`, `sgld-cv`, `sghmc`, `sgnht`, `sgld-ps`,
//! `sgld-cv-ps`, `asgld-cv-ps` and `dpp-sgld`.
//!
//! # Convention
//! One step-size convention is used throughout (the thesis's Ch.2/Ch.4 form, eqs. (2.3.5),
//! (4.2.4), written for the log-posterior gradient):
//!
//! θ ← θ + (h/2)·ĝ(θ) + √h·ξ,  ξ ~ N(0, I_d),
//!
//! with ĝ(θ) an unbiased estimate of ∇ log π(θ) = ∇ log p(θ) + Σᵢ ∇ℓᵢ(θ). With the exact
//! gradient this is the unadjusted Langevin algorithm; on a Gaussian target N(μ, λ⁻¹) its
//! stationary law is N(μ, 1/(λ(1 − hλ/4))), stable for 0 < hλ < 4. (The thesis's Ch.3 form
//! θ + ε∇log π + √(2ε)ξ is this one with h = 2ε.) SGHMC and SGNHT use the same h through
//! η = h/2 (see [`chain`]): SGHMC with friction 1 is SGLD.
//!
//! # Formula
//! Naive minibatch (S a batch of m indices, with or without replacement):
//! ĝ(θ) = ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ).
//! Control variate around the mode θ̂ (thesis eq. (4.2.5)):
//! ĝ(θ) = ∇ log p(θ) + Σᵢ ∇ℓᵢ(θ̂) + (n/m) Σ_{i∈S} [∇ℓᵢ(θ) − ∇ℓᵢ(θ̂)],
//! with Σᵢ ∇ℓᵢ(θ̂) computed once (one full pass) at construction. Preferential and k-DPP
//! batches replace n/m by per-datum weights ([`estimator`]).
//!
//! Default step size (setting `step_size` = auto): h = min(h_curv, h_noise), from the Laplace
//! precision A = −∇² log π(θ̂) = CCᵀ at the mode and the estimator's own noise:
//! - curvature: h_curv = 0.2 / λ_max(A), so hλ ≤ 0.2 for every eigenvalue and the exact-gradient
//!   stationary variance is inflated by at most 1/(1 − 0.05) ≈ 5 % (2.5 % in sd);
//! - gradient noise: the step adds (h/2)²·Cov(ĝ) to the injected variance αh·I (α = 1 for
//!   Langevin, the friction of SGHMC/SGNHT). On a Gaussian target with precision A the
//!   stationary covariance solves AΣ + ΣA = 2I + (h/2)·Cov(ĝ) (to first order in h), so in
//!   each eigendirection of A the variance is inflated by the fraction (h/4)·Cov(ĝ)ᵢᵢ, in the
//!   sampler's own coordinates. With b̄ = tr(Cov(ĝ))/d, h_noise = 0.4·α/b̄ keeps that fraction
//!   ≤ 0.1 on average over directions (the noise adds at most a tenth of the injected
//!   variance). Cov(ĝ) is measured, not assumed: [`NOISE_PROBES`] points θ̂ + C⁻ᵀu
//!   (u ~ N(0, I), typical posterior draws) × [`NOISE_DRAWS`] estimates each, their cost
//!   counted as set-up. (Until issue 17 the trace was taken in the Laplace-whitened
//!   coordinates, C⁻¹Cov(ĝ)C⁻ᵀ, which is the same on whitened targets but has the wrong units
//!   otherwise: on an unwhitened target it let the noise dominate.)
//!
//! Above [`DENSE_SETUP_MAX_DIM`] no d × d matrix is formed ([`LaplaceCurvature::MatrixFree`]):
//! λ_max(A) by power iteration on Hessian-vector products and probe points θ̂ + s ⊙ u with
//! sᵢ = Aᵢᵢ^{−1/2} from the diagonal of A (a narrower spread than C⁻ᵀu along correlated or
//! flat directions).
//!
//! Default batch size (setting `batch_size` = auto, every sampler but `asgld-cv-ps`, whose
//! pilot chains need a fixed batch, and `dpp-sgld`): the noise is measured at m₀ =
//! [`AUTO_BATCH_MIN`] (clamped to n) and the batch grows to the smallest m whose predicted
//! noise tr(Cov ĝ)(m) does not limit the step (h_noise(m) ≥ h_curv, or ≥ the user's step):
//! with replacement tr(Cov ĝ) ∝ 1/m, without it ∝ (n − m)/m ([`auto_batch`]); then the noise is
//! measured again at m for the step. Why: while the noise limits the step, h ∝ m, so the
//! iterations per effective draw scale as 1/m and the per-datum evaluations per effective draw
//! (m/h) do not depend on m; a larger batch costs nothing per effective draw up to the point
//! where curvature takes over, and gives a chain that mixes in fewer iterations. For the naive
//! estimator on a whitened target (A ≈ I) tr(Cov ĝ) ≈ d·n/m, so m ≈ n/3: naive minibatch gradients buy
//! nothing on tall data, which is what the control variate is for (its m stays at 100).
//!
//! The earlier rule h = 0.1/tr(A) scaled as 1/d and made the chains crawl (relaxation ≈ 20d
//! iterations) on whitened targets; naive minibatch gradients on tall data need the noise
//! bound (tr(Cov ĝ) ≈ (n/m)·tr(A)) or their variance is inflated n/m-fold.
//!
//! Cost: a step evaluates m per-datum gradients, naive or control variate: the control variate
//! stores ∇ℓᵢ(θ̂) for all i at set-up (spec 003 §2.3 step 2; n·d floats), falling back to
//! recomputing them, 2m per step, only when n·d > [`gradient::CV_STORE_MAX`]. A
//! value-and-gradient call counts in both `lik_evals` and `grad_evals`. Mode finding,
//! the full-data gradient at θ̂ (one pass, which also fills the store), preferential weights
//! (one pass) and the adaptive batch size's pilot chains are reported as
//! [`Chain::setup_cost`].
//!
//! Batch sizes (checked by [`build_sg_chain`], errors rather than panics): uniform without
//! replacement is clamped to n; with replacement (uniform or preferential) m ≤
//! [`gradient::MAX_BATCH_FACTOR`]·n is required; a k-DPP's k is clamped to n and k·n ≤
//! [`DPP_MAX_KN`] is required (a draw keeps about 2k vectors of length n). The k-DPP's own work (a p × p
//! eigendecomposition at set-up and O(n k (k + p)) flops per draw, p = d + 1) touches no
//! likelihood and is not counted. None of these samplers is exact: there is no Metropolis
//! correction, so every finite step is "accepted" with probability 1.
//!
//! ## References
//! S. Putcha (2024), *Scalable Bayesian inference using stochastic gradient MCMC*, PhD thesis,
//! Lancaster University, Algorithms 4–9 and Ch.5; M. Welling, Y. W. Teh (2011), *Bayesian
//! learning via stochastic gradient Langevin dynamics*, ICML; T. Chen, E. Fox, C. Guestrin
//! (2014), *Stochastic gradient Hamiltonian Monte Carlo*, ICML; Y. W. Teh, A. H. Thiery,
//! S. J. Vollmer (2016), *Consistency and fluctuations for stochastic gradient Langevin
//! dynamics*, JMLR; N. Ding et al. (2014),
//! *Bayesian sampling using stochastic gradient thermostats*, NeurIPS; A. Kulesza, B. Taskar
//! (2011), *k-DPPs: fixed-size determinantal point processes*, ICML.

pub mod chain;

pub use crate::estimator::dpp::KDpp;
use crate::estimator::gradient;
pub use crate::estimator::gradient::{GradientEstimator, Subsampler};
pub use chain::{
    schedule_from_settings, AdaptiveBatch, Dynamics, SgChain, SgKernel, StepSchedule, P_SCHEDULE,
    P_SCHEDULE_B, P_SCHEDULE_GAMMA,
};

use crate::chain::{Chain, Cost};
use crate::dist::{AliasTable, IndexSampler};
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::optim::{
    ModeOptions, ModeResult, P_MODE_MAX_ITER, P_MODE_MEMORY, P_MODE_METHOD, P_MODE_TOL,
};
use crate::rng::{uniform, ChainRng};
use crate::sampler::share::Sharing;
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec::Vec;

/// Curvature factor c in h_curv = c / λ_max(A) of the automatic step.
pub const AUTO_STEP_FACTOR: f64 = 0.2;

/// `batch_size` = auto: the batch grows from [`AUTO_BATCH_MIN`] until the gradient noise no
/// longer limits the step (see [`auto_batch`]).
pub const BATCH_AUTO: usize = 0;
/// The smallest automatic batch, and the batch at which its noise is measured.
pub const AUTO_BATCH_MIN: usize = 100;

/// Probe points of the automatic step's gradient-noise measurement.
pub const NOISE_PROBES: usize = 8;
/// Gradient estimates per probe point.
pub const NOISE_DRAWS: usize = 8;

/// The largest d whose set-up forms the dense Laplace precision A = −∇² log π(θ̂) (d × d, a
/// Cholesky factor and an eigenvalue search, O(d³)). Above it the set-up is matrix-free
/// ([`LaplaceCurvature::MatrixFree`]): the mode by L-BFGS without the Hessian, λ_max(A) by power
/// iteration on Hessian-vector products, and probe points scaled by diag(A); at d = 7 000
/// (`pmf`) the dense set-up took minutes in Cholesky factorisations of the regularisation
/// ladder. The same limit as the GLMs' whitening ([`crate::model::glm::WHITEN_MAX_DIM`]).
pub const DENSE_SETUP_MAX_DIM: usize = 2000;

/// The Laplace precision A = −∇² log π(θ̂) at the mode as the automatic step and batch use it.
#[derive(Debug, Clone, PartialEq)]
pub enum LaplaceCurvature {
    /// A itself, row-major d × d (d ≤ [`DENSE_SETUP_MAX_DIM`]).
    Dense(Vec<f64>),
    /// Matrix-free (d > [`DENSE_SETUP_MAX_DIM`]).
    MatrixFree {
        /// λ_max(A) by power iteration on Hessian-vector products.
        lmax: f64,
        /// Per-coordinate scale of the probe points θ̂ + s ⊙ u, u ~ N(0, I): sᵢ = (Aᵢᵢ + τ)^{−1/2}
        /// from the diagonal of A (τ = 10⁻⁶·mean |Aᵢᵢ| where Aᵢᵢ ≤ τ), or λ_max^{−1/2} for
        /// every coordinate when the model has no closed-form diagonal.
        scale: Vec<f64>,
        /// Hessian-vector products spent on λ_max.
        products: usize,
    },
}

impl LaplaceCurvature {
    /// The matrix-free curvature of `model` at `mode` (see [`LaplaceCurvature::MatrixFree`]).
    /// Errors: a λ_max that is not finite and positive.
    pub fn matrix_free(model: &dyn DataModel, mode: &[f64]) -> Result<Self, Error> {
        let e = crate::optim::max_eigenvalue_matrix_free(model, mode).map_err(|_| bad_laplace())?;
        let lmax = e.value;
        if !(lmax.is_finite() && lmax > 0.0) {
            return Err(bad_laplace());
        }
        let scale = match crate::optim::neg_hessian_diag(model, mode) {
            Some(diag) if diag.iter().all(|v| v.is_finite()) => {
                let s = diag.iter().map(|v| math::abs(*v)).sum::<f64>() / diag.len().max(1) as f64;
                let tau = if s > 0.0 { 1e-6 * s } else { 1e-6 * lmax };
                diag.iter()
                    .map(|&a| 1.0 / math::sqrt(if a > tau { a } else { a.max(0.0) + tau }))
                    .collect()
            }
            _ => alloc::vec![1.0 / math::sqrt(lmax); mode.len()],
        };
        Ok(LaplaceCurvature::MatrixFree {
            lmax,
            scale,
            products: e.products,
        })
    }
}

fn bad_laplace() -> Error {
    Error::setting(
        "step_size",
        "the automatic step size needs a positive-definite Laplace precision at the mode; \
         give step_size",
    )
}

/// The Cholesky factor of A, or where A is not positive definite (flat or saddle directions, as
/// in matrix factorisation, whose posterior is invariant under rotations of the factors) of
/// A + τI with the smallest τ of the ladder 10⁻⁶·s, 10⁻⁵·s, … (s = mean |Aᵢᵢ|) that factors:
/// the probe points of [`measure_noise`] then spread at most 1/√τ along those directions.
/// `None` when no τ up to 10⁶·s works (A not finite).
fn regularised_cholesky(a: &[f64], d: usize) -> Option<crate::linalg::Cholesky> {
    if let Ok(c) = crate::linalg::Cholesky::new(a, d) {
        return Some(c);
    }
    let s = (0..d).map(|k| math::abs(a[k * d + k])).sum::<f64>() / d.max(1) as f64;
    if !(s.is_finite() && s > 0.0) {
        return None;
    }
    let mut work = a.to_vec();
    let mut tau = 1e-6 * s;
    while tau <= 1e6 * s {
        work.copy_from_slice(a);
        for k in 0..d {
            work[k * d + k] += tau;
        }
        if let Ok(c) = crate::linalg::Cholesky::new(&work, d) {
            return Some(c);
        }
        tau *= 10.0;
    }
    None
}

/// The gradient-noise measurement behind the automatic step and batch (module docs): the
/// curvature step h_curv = c/λ_max(A) and tr(Cov ĝ), the trace of the estimator's covariance
/// (in the sampler's coordinates), averaged over
/// [`NOISE_PROBES`] typical points; with the per-datum evaluations spent. `laplace` is A at
/// the mode.
fn measure_noise(
    est: &mut GradientEstimator,
    model: &dyn DataModel,
    mode: &[f64],
    laplace: &LaplaceCurvature,
    rng: &mut ChainRng,
) -> Result<(f64, f64, Cost), Error> {
    let d = mode.len();
    let (chol, lmax) = match laplace {
        LaplaceCurvature::Dense(neg_hessian) => {
            let chol = regularised_cholesky(neg_hessian, d).ok_or_else(bad_laplace)?;
            let lmax = crate::linalg::extreme_eigenvalues(neg_hessian, d)
                .map_err(|_| bad_laplace())?
                .0;
            (Some(chol), lmax)
        }
        LaplaceCurvature::MatrixFree { lmax, .. } => (None, *lmax),
    };
    if !(lmax.is_finite() && lmax > 0.0) {
        return Err(bad_laplace());
    }
    let h_curv = AUTO_STEP_FACTOR / lmax;
    let mut cost = Cost::default();
    let mut theta = alloc::vec![0.0; d];
    let mut g = alloc::vec![0.0; NOISE_DRAWS * d];
    let mut tr_sum = 0.0;
    for _ in 0..NOISE_PROBES {
        for t in theta.iter_mut() {
            *t = crate::dist::std_normal(rng);
        }
        match (&chol, laplace) {
            (Some(chol), _) => chol.solve_lt(&mut theta),
            (None, LaplaceCurvature::MatrixFree { scale, .. }) => {
                for (t, s) in theta.iter_mut().zip(scale) {
                    *t *= s;
                }
            }
            (None, LaplaceCurvature::Dense(_)) => {}
        }
        for (t, m) in theta.iter_mut().zip(mode) {
            *t += m;
        }
        for r in 0..NOISE_DRAWS {
            let out = &mut g[r * d..(r + 1) * d];
            out.iter_mut().for_each(|v| *v = 0.0);
            let e = est.estimate(rng, model, &theta, out);
            cost.lik_evals += e;
            cost.grad_evals += e;
        }
        // tr of the sample covariance of the estimates
        for j in 0..d {
            let mean = (0..NOISE_DRAWS).map(|r| g[r * d + j]).sum::<f64>() / NOISE_DRAWS as f64;
            tr_sum += (0..NOISE_DRAWS)
                .map(|r| (g[r * d + j] - mean) * (g[r * d + j] - mean))
                .sum::<f64>()
                / (NOISE_DRAWS - 1) as f64;
        }
    }
    let tr_bw = tr_sum / NOISE_PROBES as f64;
    if !tr_bw.is_finite() {
        return Err(Error::Numerical(
            "the gradient estimator's noise is not finite at typical posterior points; give \
             step_size"
                .into(),
        ));
    }
    Ok((h_curv, tr_bw, cost))
}

/// The noise-limited step 0.4·α·d/tr(Cov ĝ) (infinite without noise).
fn noise_step(friction: f64, d: usize, tr_bw: f64) -> f64 {
    if tr_bw > 0.0 {
        0.4 * friction * d as f64 / tr_bw
    } else {
        f64::INFINITY
    }
}

/// The automatic batch size (module docs): the smallest m ≥ `m0` whose predicted noise
/// tr(Cov ĝ)(m) no longer limits the step `h` (0.4·α·d/tr(m) ≥ h), from tr(Cov ĝ) = `tr0`
/// measured at m0. Uniform batches without replacement scale as (n − m)/m (finite
/// population), batches with replacement as 1/m; the result is at most n.
pub fn auto_batch(
    n: usize,
    m0: usize,
    tr0: f64,
    with_replacement: bool,
    h: f64,
    friction: f64,
    d: usize,
) -> usize {
    let target = 0.4 * friction * d as f64 / h; // the largest tr(Cov ĝ) that does not limit h
                                                // NaN tr0 or a noise already below the target: keep m0
    if tr0.is_nan() || tr0 <= target || !target.is_finite() || target <= 0.0 {
        return m0.min(n);
    }
    let (nf, m0f) = (n as f64, m0 as f64);
    let m = if with_replacement {
        m0f * tr0 / target
    } else if m0 >= n {
        nf
    } else {
        // tr(m) = K (n − m)/m with K = tr0·m0/(n − m0): tr(m) ≤ target ⇔ m ≥ n/(1 + target/K)
        let k = tr0 * m0f / (nf - m0f);
        nf / (1.0 + target / k)
    };
    let m = math::ceil(m);
    if m.is_nan() || m >= nf {
        n
    } else {
        (m as usize).clamp(m0.min(n), n)
    }
}

/// The automatic step size (module docs): min(c/λ_max(A), 0.4·α·d/tr(Cov ĝ)), α the friction of
/// the momentum dynamics (1 for Langevin). Returns the step and the per-datum evaluations
/// spent measuring the noise. `laplace` is A at the mode.
fn auto_step(
    est: &mut GradientEstimator,
    model: &dyn DataModel,
    mode: &[f64],
    laplace: &LaplaceCurvature,
    friction: f64,
    rng: &mut ChainRng,
) -> Result<(f64, Cost), Error> {
    let (h_curv, tr_bw, cost) = measure_noise(est, model, mode, laplace, rng)?;
    Ok((h_curv.min(noise_step(friction, mode.len(), tr_bw)), cost))
}

pub use crate::estimator::dpp::DPP_MAX_KN;

/// Default number of ASGLD pilot chains (thesis §4.5.3: 10).
pub const PILOT_CHAINS_DEFAULT: usize = 10;

/// Bounds of the automatic pilot length (iterations per pilot chain).
pub const PILOT_ITERS_MIN: usize = 1000;
/// See [`PILOT_ITERS_MIN`].
pub const PILOT_ITERS_MAX: usize = 50_000;

/// The automatic pilot length for Langevin with step h at a mode with Laplace precision A
/// (row-major d × d): the slowest coordinate relaxes as (1 − hλ_min/2)^t, i.e. over
/// τ = 2/(hλ_min) iterations (≥ 10·λ_max/λ_min with the automatic step); a pilot runs
/// 40τ iterations (the first half, 20τ, is discarded; the second half gives about 10
/// effectively independent draws of the slowest coordinate), clamped to
/// [[`PILOT_ITERS_MIN`], [`PILOT_ITERS_MAX`]]. An A without a positive smallest eigenvalue
/// gives the maximum.
pub fn auto_pilot_iters(neg_hessian: &[f64], d: usize, h: f64) -> usize {
    let lmin = crate::linalg::extreme_eigenvalues(neg_hessian, d).map_or(f64::NAN, |e| e.1);
    let tau = 2.0 / (h * lmin);
    if !(lmin > 0.0 && tau.is_finite()) {
        return PILOT_ITERS_MAX;
    }
    let it = math::ceil(40.0 * tau);
    if it >= PILOT_ITERS_MAX as f64 {
        PILOT_ITERS_MAX
    } else {
        (it as usize).max(PILOT_ITERS_MIN)
    }
}

/// Where a stochastic-gradient chain starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SgldInit {
    /// The posterior mode (the thesis: optimisation replaces burn-in).
    Mode,
    /// The model's [`DataModel::initial_point`].
    Model,
    /// The origin.
    Zero,
    /// Uniform on [−2, 2]^d.
    Random,
}

/// How the minibatch of a chain is formed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Batching {
    /// Uniform indices.
    Uniform {
        /// With replacement.
        with_replacement: bool,
    },
    /// Preferential weights (SGLD-PS: ‖∇ℓᵢ(θ̂)‖; with a control variate, SGLD-CV-PS:
    /// √tr(∇²ℓᵢ Σ̂ ∇²ℓᵢ)), mixed with δ/n.
    Preferential {
        /// Defensive mixture weight δ ∈ [0, 1].
        defensive: f64,
    },
    /// A k-DPP with linear kernel L = FFᵀ + νI, F = [(1 − w)X, w·y] (GLMs only).
    Dpp {
        /// w ∈ [0, 1].
        w: f64,
        /// ν ≥ 0.
        nugget: f64,
        /// Horvitz–Thompson weights 1/πᵢ (true, unbiased) or the thesis's 1/(k·Lᵢᵢ/tr L).
        inclusion: bool,
    },
}

/// Everything that defines a stochastic-gradient chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgOptions {
    /// Initial step size h₀ (NaN: automatic, see the module docs).
    pub step_size: f64,
    /// Schedule shape (its h₀ is replaced by `step_size`).
    pub schedule: StepSchedule,
    /// Batch size m (clamped to n for uniform batches without replacement and for k-DPPs; at
    /// most [`gradient::MAX_BATCH_FACTOR`]·n with replacement; k·n ≤ [`DPP_MAX_KN`]).
    pub batch: usize,
    /// Batch formation.
    pub batching: Batching,
    /// Use the control-variate estimator centred at the mode.
    pub control_variate: bool,
    /// Dynamics.
    pub dynamics: Dynamics,
    /// Adaptive batch size (needs `control_variate`; `pilot_iters` = 0 is resolved by
    /// [`auto_pilot_iters`]).
    pub adaptive: Option<AdaptiveBatch>,
    /// Starting point.
    pub init: SgldInit,
    /// The mode search (for `init=mode`, the control variates' centre, the automatic step size
    /// and batch; `mode_*` settings). Its `hessian` is chosen by the dimension.
    pub mode: ModeOptions,
}

/// Options of an SGLD chain (the `sgld` / `sgld-cv` subset of [`SgOptions`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgldOptions {
    /// Step size h (NaN: automatic, see the module docs).
    pub step_size: f64,
    /// Batch size m (clamped to n).
    pub batch: usize,
    /// Draw the batch with replacement.
    pub with_replacement: bool,
    /// Use the control-variate estimator centred at the mode.
    pub control_variate: bool,
    /// Starting point.
    pub init: SgldInit,
}

impl From<&SgldOptions> for SgOptions {
    fn from(o: &SgldOptions) -> Self {
        SgOptions {
            step_size: o.step_size,
            schedule: StepSchedule::Constant(o.step_size),
            batch: o.batch,
            batching: Batching::Uniform {
                with_replacement: o.with_replacement,
            },
            control_variate: o.control_variate,
            dynamics: Dynamics::Langevin,
            adaptive: None,
            init: o.init,
            mode: ModeOptions::DEFAULT,
        }
    }
}

fn add_cost(a: &mut Cost, b: Cost) {
    a.lik_evals += b.lik_evals;
    a.grad_evals += b.grad_evals;
}

/// Build a stochastic-gradient chain: find the mode when needed (automatic step size, control
/// variate, preferential weights, `init` = mode), form the batch sampler and estimator, and
/// start the chain. Errors: invalid settings (including batch sizes beyond the limits of
/// [`SgOptions::batch`]), a failed mode search, a non-finite start, zero preferential
/// weights without a defensive mixture, a k-DPP on a non-GLM model.
pub fn build_sg_chain(
    model: Arc<dyn DataModel>,
    opts: &SgOptions,
    warmup: usize,
    rng: &mut ChainRng,
) -> Result<SgChain, Error> {
    build_sg_chain_sharing(model, opts, warmup, rng, Sharing::Off)
}

/// [`build_sg_chain`] with the mode search (from [`DataModel::initial_point`], a
/// deterministic function of the model and the options) shared between a run's chains
/// ([`Sharing`]): the same chain, bit for bit; a chain that reuses the search does not count
/// its evaluations.
pub fn build_sg_chain_sharing(
    model: Arc<dyn DataModel>,
    opts: &SgOptions,
    warmup: usize,
    rng: &mut ChainRng,
    mut sharing: Sharing<'_>,
) -> Result<SgChain, Error> {
    let d = model.dim();
    let n = model.n();
    if d == 0 || n == 0 {
        return Err(Error::data(
            "stochastic-gradient MCMC needs at least one parameter and one datum",
        ));
    }
    if !(opts.step_size.is_nan() || (opts.step_size.is_finite() && opts.step_size > 0.0)) {
        return Err(Error::setting(
            "step_size",
            "must be a finite number > 0 (or auto)",
        ));
    }
    let auto_batch_on = opts.batch == BATCH_AUTO;
    if auto_batch_on && matches!(opts.batching, Batching::Dpp { .. }) {
        return Err(Error::setting("batch_size", "the k of a k-DPP must be ≥ 1"));
    }
    if auto_batch_on && opts.adaptive.is_some() {
        return Err(Error::setting(
            "batch_size",
            "adaptive batch sizes need a fixed pilot batch_size",
        ));
    }
    // The automatic batch starts from (and never goes below) AUTO_BATCH_MIN.
    let batch = if auto_batch_on {
        AUTO_BATCH_MIN
    } else {
        opts.batch
    };
    if opts.adaptive.is_some() && !opts.control_variate {
        return Err(Error::setting(
            "batch_size",
            "adaptive batch sizes need the control-variate estimator",
        ));
    }
    let preferential = matches!(opts.batching, Batching::Preferential { .. });
    let need_mode = opts.step_size.is_nan()
        || auto_batch_on
        || opts.control_variate
        || preferential
        || opts.init == SgldInit::Mode;
    let mut setup = Cost::default();
    // Above DENSE_SETUP_MAX_DIM no d × d matrix is formed (the mode by L-BFGS, the curvature
    // matrix-free).
    let dense = d <= DENSE_SETUP_MAX_DIM;
    let mode: Option<ModeResult> = if need_mode {
        let (r, searched) = sharing.find_mode(
            &model,
            &model.initial_point(),
            &ModeOptions {
                hessian: dense,
                ..opts.mode
            },
        )?;
        if searched {
            add_cost(&mut setup, r.cost());
        }
        Some(r)
    } else {
        None
    };
    let needs_curvature = auto_batch_on || opts.step_size.is_nan();
    let laplace = match &mode {
        Some(r) if dense => Some(LaplaceCurvature::Dense(r.neg_hessian.clone())),
        Some(r) if needs_curvature => Some(LaplaceCurvature::matrix_free(model.as_ref(), &r.mode)?),
        _ => None,
    };
    let sub = match opts.batching {
        Batching::Uniform { with_replacement } => {
            let m = if with_replacement && !auto_batch_on {
                batch
            } else {
                batch.min(n)
            };
            gradient::check_batch(n, m, with_replacement)?;
            Subsampler::Uniform(IndexSampler::new(n, m, with_replacement)?)
        }
        Batching::Preferential { defensive } => {
            if !(0.0..=1.0).contains(&defensive) {
                return Err(Error::setting("defensive", "must be in [0, 1]"));
            }
            let batch = if auto_batch_on { batch.min(n) } else { batch };
            gradient::check_batch(n, batch, true)?;
            let r = mode.as_ref().ok_or(Error::NonFiniteStart)?;
            let w = if opts.control_variate {
                if !dense {
                    return Err(Error::setting(
                        "sampler",
                        alloc::format!(
                            "the control-variate preferential weights need the dense Laplace \
                             covariance (a d × d inverse and per-datum Hessians), which this \
                             set-up forms only up to d = {DENSE_SETUP_MAX_DIM}; this model has \
                             d = {d}: use sgld-cv or sgld-ps"
                        ),
                    ));
                }
                // The Laplace covariance; regularised where the precision is only semi-definite
                // (matrix factorisation), as for the automatic step's probe points.
                let cov = match r.covariance() {
                    Ok(c) => c,
                    Err(_) => regularised_cholesky(&r.neg_hessian, d)
                        .ok_or_else(|| {
                            Error::setting(
                                "weights",
                                "the control-variate weights need a finite Laplace precision at \
                                 the mode",
                            )
                        })?
                        .inverse(),
                };
                gradient::cv_ps_weights(model.as_ref(), &r.mode, &cov)?
            } else {
                gradient::ps_weights(model.as_ref(), &r.mode)
            };
            add_cost(
                &mut setup,
                Cost {
                    lik_evals: n as u64,
                    grad_evals: n as u64,
                },
            );
            if w.iter().any(|v| !v.is_finite()) {
                return Err(Error::Numerical(
                    "preferential weights are not finite".into(),
                ));
            }
            let p = gradient::defensive_mixture(&w, defensive);
            if p.iter().any(|&v| v <= 0.0) {
                return Err(Error::setting(
                    "defensive",
                    "some preferential weights are zero, so those data could never be drawn and \
                     the estimator would be biased; set defensive > 0 (e.g. 0.01)",
                ));
            }
            Subsampler::Preferential {
                table: AliasTable::new(&p)?,
                batch,
            }
        }
        Batching::Dpp {
            w,
            nugget,
            inclusion,
        } => {
            let glm = model.as_glm().ok_or_else(|| {
                Error::setting(
                    "sampler",
                    "dpp-sgld needs a regression model (logistic, linear, robust, poisson): its \
                     kernel is built from the design and the response",
                )
            })?;
            if !(0.0..=1.0).contains(&w) {
                return Err(Error::setting("dpp_w", "must be in [0, 1]"));
            }
            let k = opts.batch.min(n);
            if k.saturating_mul(n) > DPP_MAX_KN {
                return Err(Error::setting(
                    "batch_size",
                    alloc::format!(
                        "a k-DPP with k = {k} over n = {n} data needs about 2·k·n = {} floats of                          work space (limit k·n ≤ {DPP_MAX_KN}); use k ≤ {}",
                        2u128 * k as u128 * n as u128,
                        (DPP_MAX_KN / n).max(1)
                    ),
                ));
            }
            let des = glm.design();
            let p = des.d + 1;
            let mut f = Vec::with_capacity(n * p);
            for i in 0..n {
                f.extend(des.row(i).iter().map(|x| (1.0 - w) * x));
                f.push(w * des.y.get(i).copied().unwrap_or(0.0));
            }
            let dpp = KDpp::linear_kernel(&f, n, p, nugget, k)?;
            let weights: Vec<f64> = if inclusion {
                let pi = dpp.inclusion_probabilities();
                if pi.iter().any(|&v| v.is_nan() || v <= 0.0) {
                    return Err(Error::setting(
                        "dpp_nugget",
                        "some data have inclusion probability 0; use a nugget > 0",
                    ));
                }
                pi.iter().map(|&v| 1.0 / v).collect()
            } else {
                // The thesis's p_i = L_ii / tr(L) (the 1-DPP marginal), weight 1/(k p_i).
                let lii: Vec<f64> = f
                    .chunks(p)
                    .map(|r| r.iter().map(|v| v * v).sum::<f64>() + nugget)
                    .collect();
                let tr: f64 = lii.iter().sum();
                lii.iter()
                    .map(|&l| if l > 0.0 { tr / (k as f64 * l) } else { 0.0 })
                    .collect()
            };
            Subsampler::Dpp {
                dpp: Box::new(dpp),
                weights,
            }
        }
    };
    let centre = if opts.control_variate {
        mode.as_ref().map(|r| r.mode.as_slice())
    } else {
        None
    };
    let (mut est, c) = sharing.gradient_estimator(&model, sub, centre)?;
    add_cost(&mut setup, c);
    let friction = match opts.dynamics {
        Dynamics::Langevin => 1.0,
        Dynamics::Hamiltonian { friction } | Dynamics::NoseHoover { friction } => friction.min(1.0),
    };
    if auto_batch_on {
        // Measure the noise at the starting batch, grow the batch until the noise no longer
        // limits the step (the user's, or the curvature step), then measure again below.
        let r = mode.as_ref().ok_or(Error::NonFiniteStart)?;
        let lap = laplace.as_ref().ok_or(Error::NonFiniteStart)?;
        let (h_curv, tr0, c) = measure_noise(&mut est, model.as_ref(), &r.mode, lap, rng)?;
        add_cost(&mut setup, c);
        let h_target = if opts.step_size.is_nan() {
            h_curv
        } else {
            opts.step_size
        };
        let with_replacement = match opts.batching {
            Batching::Uniform { with_replacement } => with_replacement,
            _ => true,
        };
        let m0 = est.batch();
        let m = auto_batch(n, m0, tr0, with_replacement, h_target, friction, d);
        if m != m0 {
            est.set_batch(m)?;
        }
    }
    let h0 = match (&mode, &laplace, opts.step_size.is_nan()) {
        (Some(r), Some(lap), true) => {
            let (h, c) = auto_step(&mut est, model.as_ref(), &r.mode, lap, friction, rng)?;
            add_cost(&mut setup, c);
            h
        }
        _ => opts.step_size,
    };
    let adaptive = match (opts.adaptive, &mode) {
        (Some(a), Some(r)) if a.pilot_iters == 0 => Some(AdaptiveBatch {
            pilot_iters: auto_pilot_iters(&r.neg_hessian, d, h0),
            ..a
        }),
        (a, _) => a,
    };
    let theta: Vec<f64> = match (opts.init, &mode) {
        (SgldInit::Mode, Some(r)) => r.mode.clone(),
        (SgldInit::Zero, _) => alloc::vec![0.0; d],
        (SgldInit::Random, _) => (0..d).map(|_| 4.0 * uniform(rng) - 2.0).collect(),
        _ => model.initial_point(),
    };
    SgChain::new(
        model,
        est,
        opts.dynamics,
        opts.schedule.with_initial(h0),
        theta,
        setup,
        warmup,
        adaptive,
        rng,
    )
}

/// An SGLD chain (naive or control-variate gradient, constant step): [`build_sg_chain`]
/// with [`SgldOptions`].
pub type SgldChain = SgChain;

impl SgChain {
    /// Build an `sgld` / `sgld-cv` chain (see [`build_sg_chain`]).
    pub fn sgld(
        model: Arc<dyn DataModel>,
        opts: &SgldOptions,
        warmup: usize,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        build_sg_chain(model, &SgOptions::from(opts), warmup, rng)
    }
}

// ---------------------------------------------------------------------------------------------
// Registry

const P_STEP: ParamSpec = ParamSpec {
    key: "step_size",
    description: "step h in θ ← θ + (h/2)ĝ + √h ξ (initial h₀ of a decreasing schedule); auto (NaN) = min(0.2/λ_max(A), 0.4·friction/(mean eigenvalue of the gradient-noise covariance)), A the Laplace precision",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const fn p_batch(default: usize) -> ParamSpec {
    ParamSpec {
        key: "batch_size",
        description: "minibatch size m (without replacement and k-DPP: clamped to n; with replacement ≤ 10n; k-DPP k·n ≤ 5·10⁷); auto = the smallest m ≥ 100 (≤ n) whose measured gradient noise does not limit the step",
        kind: ParamKind::Int {
            default,
            min: 1,
            max: usize::MAX,
        },
    }
}

const P_WR: ParamSpec = ParamSpec {
    key: "with_replacement",
    description: "draw the minibatch with replacement",
    kind: ParamKind::Bool(false),
};

const P_INIT: ParamSpec = ParamSpec {
    key: "init",
    description: "start: mode (posterior mode), model, zero, random (uniform on [−2, 2]^d)",
    kind: ParamKind::Choice(&["mode", "model", "zero", "random"]),
};

const P_FRICTION_HMC: ParamSpec = ParamSpec {
    key: "friction",
    description: "friction α ∈ (0, 1] of u ← (1 − α)u + (h/2)ĝ + √(αh) ξ (α = 1 is SGLD)",
    kind: ParamKind::Real {
        default: 0.1,
        min: 1e-12,
        max: 1.0,
    },
};

const P_FRICTION_NH: ParamSpec = ParamSpec {
    key: "friction",
    description: "diffusion a > 0 of SGNHT (noise √(ah) ξ, initial thermostat a)",
    kind: ParamKind::Real {
        default: 0.1,
        min: 1e-12,
        max: f64::INFINITY,
    },
};

const P_CV: ParamSpec = ParamSpec {
    key: "control_variate",
    description: "use control-variate gradients centred at the mode",
    kind: ParamKind::Bool(false),
};

const P_DEFENSIVE: ParamSpec = ParamSpec {
    key: "defensive",
    description: "defensive mixture p ← (1 − δ)p + δ/n of the preferential weights (0 = thesis)",
    kind: ParamKind::Real {
        default: 0.0,
        min: 0.0,
        max: 1.0,
    },
};

const P_PREFERENTIAL: ParamSpec = ParamSpec {
    key: "preferential",
    description: "preferential weights (ASGLD-CV-PS); false = uniform with replacement (ASGLD-CV)",
    kind: ParamKind::Bool(true),
};

const P_PILOT_CHAINS: ParamSpec = ParamSpec {
    key: "pilot_chains",
    description:
        "pilot chains (fixed batch_size) calibrating n_t = ⌈batch_size·‖θ − θ̂‖²/q95⌉ (thesis: 10)",
    kind: ParamKind::Int {
        default: PILOT_CHAINS_DEFAULT,
        min: 1,
        max: 1000,
    },
};

const P_PILOT_ITERS: ParamSpec = ParamSpec {
    key: "pilot_iters",
    description: "iterations per pilot chain (q95 from the second half); 0 = auto, 40 relaxation times 2/(h·λ_min) of the Laplace precision, in [1000, 50000]",
    kind: ParamKind::Int {
        default: 0,
        min: 0,
        max: 100_000_000,
    },
};

const P_DPP_W: ParamSpec = ParamSpec {
    key: "dpp_w",
    description: "w of the DPP kernel L = FFᵀ + νI, F = [(1 − w)X, w·y]",
    kind: ParamKind::Real {
        default: 0.1,
        min: 0.0,
        max: 1.0,
    },
};

const P_DPP_NUGGET: ParamSpec = ParamSpec {
    key: "dpp_nugget",
    description: "nugget ν of L = FFᵀ + νI (k > rank(FFᵀ) needs ν > 0)",
    kind: ParamKind::Real {
        default: 0.1,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_DPP_WEIGHTS: ParamSpec = ParamSpec {
    key: "dpp_weights",
    description: "inclusion: Horvitz–Thompson 1/πᵢ (unbiased); thesis: 1/(k·Lᵢᵢ/tr L) (biased)",
    kind: ParamKind::Choice(&["inclusion", "thesis"]),
};

const SGLD_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(BATCH_AUTO),
    P_WR,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

const SGHMC_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(BATCH_AUTO),
    P_WR,
    P_FRICTION_HMC,
    P_CV,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

const SGNHT_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(BATCH_AUTO),
    P_WR,
    P_FRICTION_NH,
    P_CV,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

const PS_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(BATCH_AUTO),
    P_DEFENSIVE,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

const ASGLD_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(100),
    P_PREFERENTIAL,
    P_DEFENSIVE,
    P_PILOT_CHAINS,
    P_PILOT_ITERS,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

/// Default k of `dpp-sgld` (each draw costs O(n k (k + d)) flops).
pub const DPP_DEFAULT_K: usize = 20;

const P_CV_DPP: ParamSpec = ParamSpec {
    key: "control_variate",
    description: "control-variate gradients centred at the mode, weighted like the k-DPP's other terms (unbiased with inclusion weights); false = the thesis's DPP-SGLD, whose naive k-DPP gradient is too noisy to mix on real data",
    kind: ParamKind::Bool(true),
};

const DPP_PARAMS: &[ParamSpec] = &[
    P_STEP,
    P_SCHEDULE,
    P_SCHEDULE_B,
    P_SCHEDULE_GAMMA,
    p_batch(DPP_DEFAULT_K),
    P_DPP_W,
    P_DPP_NUGGET,
    P_DPP_WEIGHTS,
    P_CV_DPP,
    P_INIT,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

/// Registry entry of `sgld`.
pub const SGLD_INFO: SamplerInfo = SamplerInfo {
    name: "sgld",
    description:
        "stochastic-gradient Langevin dynamics, naive minibatch gradient (Welling & Teh 2011)",
    exact: false,
    signed: false,
    models: &[],
    params: SGLD_PARAMS,
};

/// Registry entry of `sgld-cv`.
pub const SGLD_CV_INFO: SamplerInfo = SamplerInfo {
    name: "sgld-cv",
    description: "SGLD with control-variate gradients centred at the mode (Putcha 2024, Alg. 7)",
    exact: false,
    signed: false,
    models: &[],
    params: SGLD_PARAMS,
};

/// Registry entry of `sghmc`.
pub const SGHMC_INFO: SamplerInfo = SamplerInfo {
    name: "sghmc",
    description: "stochastic-gradient HMC with friction (Chen et al. 2014, practical form)",
    exact: false,
    signed: false,
    models: &[],
    params: SGHMC_PARAMS,
};

/// Registry entry of `sgnht`.
pub const SGNHT_INFO: SamplerInfo = SamplerInfo {
    name: "sgnht",
    description: "stochastic-gradient Nosé–Hoover thermostat (Ding et al. 2014)",
    exact: false,
    signed: false,
    models: &[],
    params: SGNHT_PARAMS,
};

/// Registry entry of `sgld-ps`.
pub const SGLD_PS_INFO: SamplerInfo = SamplerInfo {
    name: "sgld-ps",
    description: "SGLD with preferential subsampling pᵢ ∝ ‖∇ℓᵢ(θ̂)‖ (Putcha 2024, Alg. 8)",
    exact: false,
    signed: false,
    models: &[],
    params: PS_PARAMS,
};

/// Registry entry of `sgld-cv-ps`.
pub const SGLD_CV_PS_INFO: SamplerInfo = SamplerInfo {
    name: "sgld-cv-ps",
    description:
        "SGLD-CV with preferential subsampling pᵢ ∝ √tr(∇²ℓᵢ Σ̂ ∇²ℓᵢ) (Putcha 2024, Alg. 9)",
    exact: false,
    signed: false,
    models: &[],
    params: PS_PARAMS,
};

/// Registry entry of `asgld-cv-ps`.
pub const ASGLD_CV_PS_INFO: SamplerInfo = SamplerInfo {
    name: "asgld-cv-ps",
    description:
        "SGLD-CV-PS with batch size ∝ ‖θ − θ̂‖², calibrated by pilot chains (Putcha 2024, Alg. 5)",
    exact: false,
    signed: false,
    models: &[],
    params: ASGLD_PARAMS,
};

/// Registry entry of `dpp-sgld`.
pub const DPP_SGLD_INFO: SamplerInfo = SamplerInfo {
    name: "dpp-sgld",
    description: "SGLD with exact k-DPP minibatches, linear kernel on (X, y) (Putcha 2024, Ch.5)",
    exact: false,
    signed: false,
    models: &["logistic", "linear", "robust", "poisson"],
    params: DPP_PARAMS,
};

/// Every sampler of this module, in display order.
pub const SAMPLERS: &[SamplerInfo] = &[
    SGLD_INFO,
    SGLD_CV_INFO,
    SGHMC_INFO,
    SGNHT_INFO,
    SGLD_PS_INFO,
    SGLD_CV_PS_INFO,
    ASGLD_CV_PS_INFO,
    DPP_SGLD_INFO,
];

/// Whether `name` is one of this module's samplers.
pub fn is_sg_sampler(name: &str) -> bool {
    SAMPLERS.iter().any(|s| s.name == name)
}

/// Build any of this module's chains from the user's settings, the set-up's mode search shared
/// between a run's chains as `sharing` says ([`Sharing`]; `Sharing::Off`: a chain on its own).
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let name = config.sampler;
    if !is_sg_sampler(name) {
        return Err(Error::Unknown {
            what: "sampler",
            name: name.into(),
        });
    }
    let s = config.settings;
    let info = SAMPLERS
        .iter()
        .find(|i| i.name == name)
        .ok_or_else(|| Error::Unknown {
            what: "sampler",
            name: name.into(),
        })?;
    let step_size = P_STEP.positive_or_auto(s)?;
    let schedule = schedule_from_settings(s, 1.0)?;
    let batch = info
        .param("batch_size")?
        .int_or_auto(s)?
        .unwrap_or(BATCH_AUTO);
    let wr = || P_WR.flag(s);
    let (batching, control_variate, dynamics, adaptive) = match name {
        "sgld" | "sgld-cv" => (
            Batching::Uniform {
                with_replacement: wr()?,
            },
            name == "sgld-cv",
            Dynamics::Langevin,
            None,
        ),
        "sghmc" | "sgnht" => {
            let with_replacement = wr()?;
            let cv = info.param("control_variate")?.flag(s)?;
            let friction = info.param("friction")?.real(s)?;
            let dynamics = if name == "sghmc" {
                Dynamics::Hamiltonian { friction }
            } else {
                Dynamics::NoseHoover { friction }
            };
            (Batching::Uniform { with_replacement }, cv, dynamics, None)
        }
        "sgld-ps" | "sgld-cv-ps" => (
            Batching::Preferential {
                defensive: P_DEFENSIVE.real(s)?,
            },
            name == "sgld-cv-ps",
            Dynamics::Langevin,
            None,
        ),
        "asgld-cv-ps" => {
            let batching = if P_PREFERENTIAL.flag(s)? {
                Batching::Preferential {
                    defensive: P_DEFENSIVE.real(s)?,
                }
            } else {
                P_DEFENSIVE.real(s)?;
                Batching::Uniform {
                    with_replacement: true,
                }
            };
            let adaptive = AdaptiveBatch {
                pilot_chains: P_PILOT_CHAINS.int(s)?,
                pilot_iters: P_PILOT_ITERS.int(s)?,
            };
            (batching, true, Dynamics::Langevin, Some(adaptive))
        }
        _ => (
            Batching::Dpp {
                w: P_DPP_W.real(s)?,
                nugget: P_DPP_NUGGET.real(s)?,
                inclusion: P_DPP_WEIGHTS.choice(s)? == "inclusion",
            },
            info.param("control_variate")?.flag(s)?,
            Dynamics::Langevin,
            None,
        ),
    };
    let init = match P_INIT.choice(s)? {
        "model" => SgldInit::Model,
        "zero" => SgldInit::Zero,
        "random" => SgldInit::Random,
        _ => SgldInit::Mode,
    };
    let mode = ModeOptions::from_settings(s)?;
    s.check_all_used()?;
    let opts = SgOptions {
        step_size,
        schedule,
        batch,
        batching,
        control_variate,
        dynamics,
        adaptive,
        init,
        mode,
    };
    Ok(Box::new(build_sg_chain_sharing(
        model,
        &opts,
        config.warmup,
        rng,
        sharing,
    )?))
}

#[cfg(test)]
mod tests {
    use super::auto_batch;

    /// The predicted noise at the returned batch meets the target, one fewer datum does not.
    #[test]
    fn auto_batch_is_the_smallest_batch_meeting_the_target() {
        let (n, m0, d, h, alpha) = (10_000usize, 100usize, 4usize, 0.2, 1.0);
        let target = 0.4 * alpha * d as f64 / h;
        let tr0 = 50.0 * target;
        // without replacement: tr(m) = K (n − m)/m
        let k = tr0 * m0 as f64 / (n - m0) as f64;
        let tr = |m: usize| k * (n - m) as f64 / m as f64;
        let m = auto_batch(n, m0, tr0, false, h, alpha, d);
        assert!(tr(m) <= target * (1.0 + 1e-12) && tr(m - 1) > target, "{m}");
        // with replacement: tr(m) = tr0·m0/m
        let m = auto_batch(n, m0, tr0, true, h, alpha, d);
        assert_eq!(m, 5000);
        // noise below the target: m0; beyond n: n; n < m0: n
        assert_eq!(auto_batch(n, m0, 0.5 * target, false, h, alpha, d), m0);
        assert_eq!(auto_batch(n, m0, 1e6 * target, true, h, alpha, d), n);
        assert_eq!(auto_batch(50, 50, 10.0 * target, false, h, alpha, d), 50);
        assert_eq!(auto_batch(n, m0, f64::NAN, false, h, alpha, d), m0);
    }
}
