//! Sequential importance resampling particle filter (Putcha 2024, Algorithm 2) with adaptive
//! resampling, the log-likelihood estimate, and the path-space Fisher-identity score.
//!
//! # Formula
//! Particles x₀⁽ⁱ⁾ ~ ν, Wᵢ = 1/N, H₀⁽ⁱ⁾ = c₀ ∇θ log ν(x₀⁽ⁱ⁾) (c₀ = the initial score weight).
//! For t = 1..T:
//! 1. if ESSₜ₋₁ = 1/ΣWᵢ² < κN (κ = `ess_threshold`; κ ≥ 1 means every step), draw ancestors aᵢ
//!    by the resampling scheme and set Wᵢ = 1/N; otherwise aᵢ = i;
//! 2. propose xₜ⁽ⁱ⁾ ~ q(·|xₜ₋₁⁽ᵃⁱ⁾, yₜ) and weight w̃ᵢ = g(yₜ|xₜ)f(xₜ|xₜ₋₁)/q; the bootstrap
//!    proposal q = f gives w̃ = g(yₜ|xₜ), the locally optimal one gives w̃ = p(yₜ|xₜ₋₁) (`sv`'s
//!    approximation of it keeps the general w̃ = gf/q);
//! 3. p̂(yₜ|y₁:ₜ₋₁) = Σᵢ W_{aᵢ} w̃ᵢ (W after step 1), log p̂(y₁:T) = Σₜ log p̂(yₜ|y₁:ₜ₋₁)
//!    (unbiased on the exp scale), new Wᵢ ∝ W_{aᵢ} w̃ᵢ;
//! 4. Hₜ⁽ⁱ⁾ = Hₜ₋₁⁽ᵃⁱ⁾ + cₜ hₜ(xₜ₋₁⁽ᵃⁱ⁾, xₜ⁽ⁱ⁾), hₜ = ∇θ log f(xₜ|xₜ₋₁)g(yₜ|xₜ), cₜ = the
//!    score weight of step t (1, or 1/Pr(t∈S) inside a subsequence and 0 in its buffer).
//!
//! Score estimate Σᵢ W_T⁽ⁱ⁾ H_T⁽ⁱ⁾ (Fisher's identity on path space: O(Np) per step, variance
//! growing like T²/N through path degeneracy, so keep windows short — spec pitfall 10).
//!
//! All weights are kept in the log domain and normalised with log-sum-exp.

use super::resample::{ess, Resampling};
use super::{OptimalBatch, State, StateSpaceModel, STATE_LEN};
use crate::error::Error;
use crate::math;
use crate::rng::ChainRng;
use crate::schema::{ParamKind, ParamSpec};
use alloc::vec;
use alloc::vec::Vec;

/// The proposal distribution of the filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proposal {
    /// The transition f (bootstrap filter).
    Bootstrap,
    /// The locally optimal p(xₜ|xₜ₋₁, yₜ): exact for `lgssm` and `garch`, a Laplace
    /// approximation mixed with the prior kernel for `sv` ([`crate::ssm::sv::laplace_mixture`]).
    Optimal,
}

impl Proposal {
    /// Setting values: `bootstrap`, `optimal`.
    pub const NAMES: [&'static str; 2] = ["bootstrap", "optimal"];
    /// The proposal called `name`.
    pub fn from_name(name: &str) -> Result<Self, Error> {
        match name {
            "bootstrap" => Ok(Proposal::Bootstrap),
            "optimal" => Ok(Proposal::Optimal),
            _ => Err(Error::Unknown {
                what: "particle proposal",
                name: name.into(),
            }),
        }
    }
}

/// Largest particle count N accepted anywhere (10⁶: the filter's buffers are O(N·p) and the
/// playground runs in wasm's 4 GB address space).
pub const MAX_PARTICLES: usize = 1_000_000;

/// The `particles` setting with default `default` (0: automatic, as `pmmh`'s).
pub const fn p_particles(default: usize) -> ParamSpec {
    ParamSpec {
        key: "particles",
        description: "particles N of the filter (gradient/likelihood = particle); auto: pmmh tunes N to Var log p̂ ≈ 1, pf-sgld takes 2.5 per time point of the window, within [200, 2 500]",
        kind: ParamKind::Int {
            default,
            min: 1,
            max: MAX_PARTICLES,
        },
    }
}

/// The `proposal` setting of the filter.
pub const P_PROPOSAL: ParamSpec = ParamSpec {
    key: "proposal",
    description: "particle proposal: optimal (exact for lgssm, garch; a Laplace approximation mixed with the prior kernel for sv) or bootstrap",
    kind: ParamKind::Choice(&["optimal", "bootstrap"]),
};

/// The `resampling` setting of the filter.
pub const P_RESAMPLING: ParamSpec = ParamSpec {
    key: "resampling",
    description: "resampling scheme of the particle filter",
    kind: ParamKind::Choice(&["systematic", "stratified", "residual", "multinomial"]),
};

/// The `ess_threshold` setting with default `default`.
pub const fn p_ess_threshold(default: f64) -> ParamSpec {
    ParamSpec {
        key: "ess_threshold",
        description: "resample when ESS < κN (κ = 1: at every step)",
        kind: ParamKind::RealOpen {
            default,
            min: 0.0,
            max: 1.0,
            min_open: true,
            max_open: false,
        },
    }
}

/// The settings of [`PfConfig::from_settings`], a filter on its own: 1000 particles, the
/// optimal proposal, systematic resampling at every step (κ = 1). Samplers declare their own
/// `particles` and `ess_threshold` defaults with [`p_particles`] and [`p_ess_threshold`].
pub const PF_PARAMS: [ParamSpec; 4] = [
    p_particles(1000),
    P_PROPOSAL,
    P_RESAMPLING,
    p_ess_threshold(1.0),
];

/// Filter settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfConfig {
    /// Number of particles N ≥ 1.
    pub particles: usize,
    /// Proposal.
    pub proposal: Proposal,
    /// Resampling scheme.
    pub resampling: Resampling,
    /// Resample when ESS < κN; κ ∈ (0, 1], κ = 1 resamples at every step.
    pub ess_threshold: f64,
}

impl PfConfig {
    /// Validated settings.
    pub fn new(
        particles: usize,
        proposal: Proposal,
        resampling: Resampling,
        ess_threshold: f64,
    ) -> Result<Self, Error> {
        if particles == 0 {
            return Err(Error::setting("particles", "must be at least 1"));
        }
        if particles > MAX_PARTICLES {
            return Err(Error::setting("particles", "must be at most 1000000"));
        }
        if !(ess_threshold > 0.0 && ess_threshold <= 1.0) {
            return Err(Error::setting("ess_threshold", "must be in (0, 1]"));
        }
        Ok(PfConfig {
            particles,
            proposal,
            resampling,
            ess_threshold,
        })
    }

    /// From settings ([`PF_PARAMS`]): `particles` (default 1000, 1..=10⁶),
    /// `proposal=optimal|bootstrap` (default `optimal`), `resampling` (`systematic|stratified|residual|multinomial`, default
    /// `systematic`), `ess_threshold` (κ ∈ (0, 1], default 1 = resample every step).
    pub fn from_settings(settings: &crate::settings::Settings) -> Result<Self, Error> {
        let [particles, proposal, resampling, kappa] = &PF_PARAMS;
        Self::new(
            particles.int(settings)?,
            Proposal::from_name(proposal.choice(settings)?)?,
            Resampling::from_name(resampling.choice(settings)?)?,
            kappa.real(settings)?,
        )
    }

    /// N particles, bootstrap proposal, systematic resampling at every step.
    pub fn bootstrap(particles: usize) -> Result<Self, Error> {
        Self::new(particles, Proposal::Bootstrap, Resampling::Systematic, 1.0)
    }
}

/// What to accumulate in the score: per-step weights cₜ and the initial-law weight c₀.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoreSpec<'a> {
    /// cₜ for t = 1..T (`weights[t−1]`, length T); `None` means all 1.
    pub weights: Option<&'a [f64]>,
    /// c₀, the weight of ∇θ log ν(x₀) (0 leaves the initial law out, as the thesis does).
    pub initial: f64,
}

impl ScoreSpec<'static> {
    /// The full-sequence score Σₜ hₜ + ∇ log ν(x₀) (the gradient of log p(y₁:T|θ)).
    pub fn full() -> Self {
        ScoreSpec {
            weights: None,
            initial: 1.0,
        }
    }
    /// The Fisher sum Σₜ hₜ without the initial-law term.
    pub fn without_initial() -> Self {
        ScoreSpec {
            weights: None,
            initial: 0.0,
        }
    }
}

/// Result of one filter run (the score and the ESS path are read from the filter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PfSummary {
    /// log p̂(y₁:T|θ).
    pub log_lik: f64,
    /// Particle propagations N·T (the cost unit of particle methods).
    pub cost: u64,
    /// Number of resampling events.
    pub resamples: usize,
}

/// A particle filter with its work buffers (reused across runs, no allocation per run after the
/// first of a given size).
#[derive(Debug, Clone)]
pub struct ParticleFilter {
    config: PfConfig,
    eta: Vec<f64>,
    x: Vec<State>,
    x_new: Vec<State>,
    logw: Vec<f64>,
    logw_new: Vec<f64>,
    w: Vec<f64>,
    anc: Vec<usize>,
    h: Vec<f64>,
    h_new: Vec<f64>,
    score: Vec<f64>,
    ess: Vec<f64>,
    batch: OptimalBatch,
    step_grads: Vec<f64>,
}

impl ParticleFilter {
    /// A filter with the given settings.
    pub fn new(config: PfConfig) -> Result<Self, Error> {
        let config = PfConfig::new(
            config.particles,
            config.proposal,
            config.resampling,
            config.ess_threshold,
        )?;
        Ok(ParticleFilter {
            config,
            eta: Vec::new(),
            x: Vec::new(),
            x_new: Vec::new(),
            logw: Vec::new(),
            logw_new: Vec::new(),
            w: Vec::new(),
            anc: Vec::new(),
            h: Vec::new(),
            h_new: Vec::new(),
            score: Vec::new(),
            ess: Vec::new(),
            batch: OptimalBatch::default(),
            step_grads: Vec::new(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &PfConfig {
        &self.config
    }

    /// The score estimate of the last run (empty if it ran without a [`ScoreSpec`]).
    pub fn score(&self) -> &[f64] {
        &self.score
    }

    /// ESS of the weights after weighting at t = 1..T of the last run (before any resampling at
    /// t + 1); length T.
    pub fn ess(&self) -> &[f64] {
        &self.ess
    }

    /// Final particles (x component) of the last run.
    pub fn particles(&self) -> impl Iterator<Item = f64> + '_ {
        self.x.iter().map(|s| s[0])
    }

    /// Normalised final weights of the last run.
    pub fn weights(&self) -> &[f64] {
        &self.w
    }

    /// Run the filter on `y` at θ. With `score` set, the score estimate is left in
    /// [`score`](ParticleFilter::score). Errors only on dimension mismatches (θ length ≠ p,
    /// score weights length ≠ T).
    pub fn run<M: StateSpaceModel + ?Sized>(
        &mut self,
        model: &M,
        theta: &[f64],
        y: &[f64],
        score: Option<ScoreSpec<'_>>,
        rng: &mut ChainRng,
    ) -> Result<PfSummary, Error> {
        let p = model.dim();
        Error::check_dim("theta", p, theta.len())?;
        if let Some(ScoreSpec {
            weights: Some(w), ..
        }) = score
        {
            Error::check_dim("score weights", y.len(), w.len())?;
        }
        let n = self.config.particles;
        let nf = n as f64;
        self.eta.resize(model.natural_dim(), 0.0);
        model.natural(theta, &mut self.eta);
        let eta = &self.eta;
        let optimal = self.config.proposal == Proposal::Optimal && model.has_optimal_proposal();
        let always = self.config.ess_threshold >= 1.0;
        let threshold = self.config.ess_threshold * nf;

        self.x.clear();
        self.x_new.clear();
        self.x_new.resize(n, [0.0; STATE_LEN]);
        self.logw.clear();
        self.logw.resize(n, -math::ln(nf));
        self.logw_new.clear();
        self.logw_new.resize(n, 0.0);
        self.w.clear();
        self.w.resize(n, 1.0 / nf);
        self.ess.clear();
        self.score.clear();
        let with_score = score.is_some();
        let hp = if with_score { p } else { 0 };
        self.h.clear();
        self.h.resize(n * hp, 0.0);
        self.h_new.clear();
        self.h_new.resize(n * hp, 0.0);

        let mut step_grad = vec![0.0; hp];
        for i in 0..n {
            let x0 = model.sample_initial(eta, rng);
            if let Some(s) = score {
                if s.initial != 0.0 {
                    step_grad.iter_mut().for_each(|g| *g = 0.0);
                    model.grad_log_initial(eta, &x0, &mut step_grad);
                    for k in 0..p {
                        self.h[i * p + k] = s.initial * step_grad[k];
                    }
                }
            }
            self.x.push(x0);
        }

        let mut log_lik = 0.0;
        let mut resamples = 0usize;
        let mut current_ess = nf;
        for (t, &yt) in y.iter().enumerate() {
            // 1. resample (never needed at t = 1: weights are uniform)
            let resample = t > 0 && (always || current_ess < threshold);
            if resample {
                self.config
                    .resampling
                    .resample(&self.w, n, rng, &mut self.anc);
                resamples += 1;
                let lu = -math::ln(nf);
                for v in self.logw.iter_mut() {
                    *v = lu;
                }
            } else {
                self.anc.clear();
                self.anc.extend(0..n);
            }
            let ct = match score {
                Some(ScoreSpec {
                    weights: Some(w), ..
                }) => w[t],
                _ => 1.0,
            };
            // 2.–4. propagate, weight, accumulate the score
            // each particle's previous state (its ancestor's): the batched proposal and the
            // batched score read it
            let step_score = with_score && ct != 0.0;
            if optimal || step_score {
                self.batch.prev.clear();
                self.batch.prev.extend(self.anc.iter().map(|&a| self.x[a]));
            }
            let batched = optimal && model.sample_optimal_batch(eta, yt, rng, &mut self.batch);
            debug_assert!(!batched || (self.batch.out.len() == n && self.batch.log_w.len() == n));
            for i in 0..n {
                let a = self.anc[i];
                let prev = self.x[a];
                let (new, lw) = if batched {
                    (self.batch.out[i], self.batch.log_w[i])
                } else if optimal {
                    match model.sample_optimal(eta, &prev, yt, rng) {
                        Some(d) => (d.state, d.log_weight),
                        None => {
                            let s = model.sample_transition(eta, &prev, rng);
                            (s, model.log_observation(eta, &s, yt))
                        }
                    }
                } else {
                    let s = model.sample_transition(eta, &prev, rng);
                    (s, model.log_observation(eta, &s, yt))
                };
                self.x_new[i] = new;
                self.logw_new[i] = self.logw[a] + if lw.is_nan() { f64::NEG_INFINITY } else { lw };
                if with_score {
                    self.h_new[i * p..(i + 1) * p].copy_from_slice(&self.h[a * p..(a + 1) * p]);
                }
            }
            if step_score {
                // hᵢ += cₜ ∇θ log f g at (ancestor, new state), for all particles at once
                self.step_grads.clear();
                self.step_grads.resize(n * p, 0.0);
                model.grad_log_joint_batch(
                    eta,
                    &self.batch.prev,
                    &self.x_new,
                    yt,
                    &mut self.step_grads,
                );
                for (dst, g) in self.h_new.iter_mut().zip(&self.step_grads) {
                    *dst += ct * g;
                }
            }
            // normalise with one exp per particle: wᵢ = exp(lᵢ − max), lse = max + ln Σ wᵢ (the
            // exps in a loop of their own, which vectorises; the sum in particle order)
            let mut mx = f64::NEG_INFINITY;
            for &l in self.logw_new.iter() {
                if l > mx {
                    mx = l;
                }
            }
            let mut sum = 0.0;
            if mx.is_finite() {
                crate::on_cpu!(
                    exp_shifted_avx2(&self.logw_new, mx, &mut self.w),
                    exp_shifted(&self.logw_new, mx, &mut self.w)
                );
                for &wi in &self.w {
                    sum += wi;
                }
            }
            if sum > 0.0 && sum.is_finite() {
                let lse = mx + math::ln(sum);
                log_lik += lse;
                let inv = 1.0 / sum;
                for i in 0..n {
                    self.w[i] *= inv;
                    self.logw_new[i] -= lse;
                }
            } else {
                // every particle has zero (or NaN/∞) weight: the estimate is 0; continue from
                // uniform weights so the run still finishes
                log_lik = f64::NEG_INFINITY;
                for i in 0..n {
                    self.logw_new[i] = -math::ln(nf);
                    self.w[i] = 1.0 / nf;
                }
            }
            current_ess = ess(&self.w);
            self.ess.push(current_ess);
            core::mem::swap(&mut self.x, &mut self.x_new);
            core::mem::swap(&mut self.logw, &mut self.logw_new);
            core::mem::swap(&mut self.h, &mut self.h_new);
        }

        if with_score {
            self.score.resize(p, 0.0);
            for i in 0..n {
                let wi = self.w[i];
                if wi > 0.0 {
                    for k in 0..p {
                        self.score[k] += wi * self.h[i * p + k];
                    }
                }
            }
        }
        Ok(PfSummary {
            log_lik,
            cost: (n as u64) * (y.len() as u64),
            resamples,
        })
    }
}

/// wᵢ = exp(lᵢ − mx) for every particle, with [`math::fast_exp`] (within 1 ulp of `libm`'s;
/// 0 below e⁻⁷⁰⁸·³ where `libm` gives a subnormal, and for lᵢ = −∞), branch-free so that the
/// loop vectorises.
#[inline(always)]
fn exp_shifted_body(log_w: &[f64], mx: f64, w: &mut [f64]) {
    for (wi, &l) in w.iter_mut().zip(log_w) {
        *wi = math::fast_exp(l - mx);
    }
}

/// [`exp_shifted_body`] compiled for the baseline CPU.
fn exp_shifted(log_w: &[f64], mx: f64, w: &mut [f64]) {
    exp_shifted_body(log_w, mx, w)
}

/// [`exp_shifted_body`] compiled with AVX2 (the same operations, so the same bits).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn exp_shifted_avx2(log_w: &[f64], mx: f64, w: &mut [f64]) {
    exp_shifted_body(log_w, mx, w)
}
