//! Particle marginal Metropolis–Hastings (`pmmh`, Andrieu, Doucet & Holenstein 2010): the
//! exact reference sampler for non-linear state-space models, and with `likelihood = kalman`
//! the exact Kalman-likelihood random-walk MH chain for `lgssm`.
//!
//! # Formula
//! Proposal θ′ = θ + ε·(s ⊙ z), z ~ N(0, I), accepted with probability
//!
//! min{1, p(θ′) p̂(y₁:T|θ′) / (p(θ) p̂(y₁:T|θ))},
//!
//! where p̂ is the particle filter's likelihood estimate (unbiased on the exp scale) and the
//! estimate of the current state is **kept** (never recomputed), so the chain targets the exact
//! posterior whatever N (pseudo-marginal argument); N only affects mixing (aim at
//! Var log p̂ ≈ 1–2). With `likelihood = kalman` p̂ is the exact Kalman likelihood.
//!
//! Adaptation (only with `step_size` = auto, only in warm-up): log ε by Robbins–Monro towards
//! `target_accept` (auto: 0.234 for the Kalman likelihood, 0.15 for the particle one, which
//! cannot reach high rates when p̂ is noisy); the per-coordinate scales s start at 1/√T and are
//! set to the sample standard deviations of the draws from the second quarter of warm-up at
//! its midpoint. Everything is frozen after warm-up. A fixed `step_size` gives the proposal
//! N(θ, ε²I) with no adaptation.
//!
//! Particles (`particles` = auto, the default with the particle likelihood): the chain starts
//! with [`AUTO_PARTICLES_START`] particles, estimates Var log p̂ at its position from
//! [`AUTO_PARTICLES_RUNS`] independent filter runs, and sets N ← ⌈N·Var/[`AUTO_LOG_LIK_VAR`]⌉
//! (Var log p̂ ∝ 1/N), once at the start (at most [`AUTO_PARTICLES_START_MAX`]) and again at
//! the warm-up midpoint, when the chain is in the posterior (at most [`AUTO_PARTICLES_MAX`]);
//! the current state's estimate is then recomputed with the new N. N is fixed after warm-up,
//! so the pseudo-marginal chain is exact. The target Var log p̂ ≈ 1 is the recommendation of
//! Doucet, Pitt, Deligiannidis & Kohn (2015, Biometrika) and Sherlock et al. (2015): with a
//! fixed N = 100 on 500 real daily returns (`dax`) Var log p̂ was far above it and the chains
//! stuck (ESS 3–7 in 2 × 2 000 draws, R-hat 1.3–1.7).
//!
//! # Cost
//! A particle run is N·T per-datum evaluations (one observation or predictive density per
//! particle and time point), a Kalman run T; counted in `lik_evals`. No gradients.
//!
//! # Extras
//! All four describe the **current state's** filter run (the one whose estimate is kept, so a
//! rejected step repeats the previous values): `log_lik` (its estimate log p̂(y₁:T|θ)), `ess_min`
//! and `ess_mean` (its effective sample size over time, of N; NaN for Kalman), `resample_rate`
//! (the fraction of time steps it resampled). The window trace is the same run's ESS path.

use crate::chain::Chain;
use crate::dist::std_normal;
use crate::error::Error;
use crate::kernel::StepInfo;
use crate::math;
use crate::model::SeriesModel;
use crate::rng::{uniform, ChainRng};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::ssm::buffered::Window;
use crate::ssm::kalman;
use crate::ssm::pf::{ParticleFilter, PfConfig};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use super::pfsgld::{
    p_ess_threshold, p_particles, particle_or_kalman, series_of, start_point, WindowTrace, P_INIT,
    P_PROPOSAL, P_RESAMPLING,
};
use crate::cost::Cost;

/// Particles of the first filter runs with `particles` = auto.
pub const AUTO_PARTICLES_START: usize = 100;
/// Largest N chosen at the start (the start may be far from the posterior, where Var log p̂
/// is large).
pub const AUTO_PARTICLES_START_MAX: usize = 2_000;
/// Largest N chosen at the warm-up midpoint.
pub const AUTO_PARTICLES_MAX: usize = 20_000;
/// Target Var log p̂ of the automatic N.
pub const AUTO_LOG_LIK_VAR: f64 = 1.0;
/// Filter runs behind each variance estimate.
pub const AUTO_PARTICLES_RUNS: usize = 12;

/// Registry entry of `pmmh`.
pub const PMMH_INFO: SamplerInfo = SamplerInfo {
    name: "pmmh",
    description: "particle marginal Metropolis–Hastings (exact, unbiased particle likelihood; kalman = exact MH on lgssm)",
    exact: true,
    signed: false,
    models: crate::model::series::SERIES_MODELS,
    params: &[
        ParamSpec {
            key: "step_size",
            description: "random-walk scale ε; auto (NaN) = adapted with per-coordinate scales in warm-up",
            kind: ParamKind::Real {
                default: f64::NAN,
                min: 0.0,
                max: f64::INFINITY,
            },
        },
        ParamSpec {
            key: "target_accept",
            description: "target acceptance rate of the adaptation; auto (NaN) = 0.234 kalman, 0.15 particle",
            kind: ParamKind::Real {
                default: f64::NAN,
                min: 0.01,
                max: 0.99,
            },
        },
        ParamSpec {
            key: "likelihood",
            description: "particle (unbiased estimate, every model) or kalman (exact, lgssm only)",
            kind: ParamKind::Choice(&["particle", "kalman"]),
        },
        p_particles(0),
        P_PROPOSAL,
        P_RESAMPLING,
        p_ess_threshold(0.5),
        P_INIT,
    ],
};

/// The likelihood a [`PmmhChain`] uses.
#[derive(Debug, Clone)]
pub enum Likelihood {
    /// Particle filter estimate.
    Particle(Box<ParticleFilter>),
    /// Exact Kalman filter (`lgssm`).
    Kalman,
}

/// A PMMH chain.
pub struct PmmhChain {
    model: SeriesModel,
    lik: Likelihood,
    theta: Vec<f64>,
    prop: Vec<f64>,
    log_prior: f64,
    log_lik: f64,
    scale: Vec<f64>,
    log_eps: f64,
    adapt: bool,
    target: f64,
    iter: usize,
    warmup: usize,
    // Welford accumulators over the second quarter of warm-up
    w_n: usize,
    w_mean: Vec<f64>,
    w_m2: Vec<f64>,
    /// ESS path of the filter run that produced the current state's estimate.
    cur_ess: Vec<f64>,
    /// ESS path of the last filter run (the proposal's, until accepted).
    last_ess: Vec<f64>,
    /// `particles` = auto: N is tuned at the start and at the warm-up midpoint.
    auto_particles: bool,
    /// Var log p̂ predicted at the N chosen by the last tuning (NaN before any).
    log_lik_var: f64,
    /// Evaluations spent at construction (start point, particle tuning).
    setup: Cost,
}

impl PmmhChain {
    /// A chain on `model` at `theta`; `step_size` NaN = adapted. Errors when the likelihood at
    /// `theta` is not finite.
    ///
    /// `filter.particles` = 0 selects the automatic N (module docs).
    pub fn new(
        model: SeriesModel,
        filter: Option<PfConfig>,
        theta: Vec<f64>,
        step_size: f64,
        target_accept: f64,
        warmup: usize,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        let auto_particles = filter.as_ref().is_some_and(|f| f.particles == 0);
        let filter = filter.map(|f| PfConfig {
            particles: if f.particles == 0 {
                AUTO_PARTICLES_START
            } else {
                f.particles
            },
            ..f
        });
        let p = model.ssm().dim();
        if theta.len() != p {
            return Err(Error::Dimension {
                what: "theta",
                expected: p,
                got: theta.len(),
            });
        }
        let lik = match filter {
            Some(f) => Likelihood::Particle(Box::new(ParticleFilter::new(f)?)),
            None => {
                if model.lgssm().is_none() {
                    return Err(Error::setting(
                        "likelihood",
                        alloc::format!(
                            "kalman needs the lgssm model (model `{}` has no Kalman filter)",
                            model.ssm().name()
                        ),
                    ));
                }
                Likelihood::Kalman
            }
        };
        let adapt = step_size.is_nan();
        if !adapt && (step_size <= 0.0 || !step_size.is_finite()) {
            return Err(Error::setting("step_size", "must be a finite number > 0"));
        }
        let target = if target_accept.is_nan() {
            match lik {
                Likelihood::Kalman => 0.234,
                Likelihood::Particle(_) => 0.15,
            }
        } else {
            target_accept
        };
        let t_len = model.y().len() as f64;
        let scale = if adapt {
            vec![1.0 / math::sqrt(t_len); p]
        } else {
            vec![1.0; p]
        };
        let log_eps = if adapt {
            math::ln(2.38 / math::sqrt(p as f64))
        } else {
            math::ln(step_size)
        };
        let mut chain = PmmhChain {
            model,
            lik,
            prop: vec![0.0; p],
            theta,
            log_prior: 0.0,
            log_lik: 0.0,
            scale,
            log_eps,
            adapt,
            target,
            iter: 0,
            warmup,
            w_n: 0,
            w_mean: vec![0.0; p],
            w_m2: vec![0.0; p],
            cur_ess: Vec::new(),
            last_ess: Vec::new(),
            auto_particles,
            log_lik_var: f64::NAN,
            setup: Cost::default(),
        };
        let th = chain.theta.clone();
        let (lp, ll, c) = chain.evaluate(&th, rng);
        chain.setup.lik_evals += c;
        core::mem::swap(&mut chain.cur_ess, &mut chain.last_ess);
        if !(lp.is_finite() && ll.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        chain.log_prior = lp;
        chain.log_lik = ll;
        if auto_particles {
            let c = chain.tune_particles(AUTO_PARTICLES_START_MAX, rng);
            chain.setup.lik_evals += c;
        }
        Ok(chain)
    }

    /// `particles` = auto: measure Var log p̂ at the current position with the current N, set
    /// N ← clamp(⌈N·Var/[`AUTO_LOG_LIK_VAR`]⌉, [`AUTO_PARTICLES_START`], `max`) and recompute
    /// the current state's estimate with it. Returns the evaluations spent.
    fn tune_particles(&mut self, max: usize, rng: &mut ChainRng) -> u64 {
        let n0 = self.particles();
        if n0 == 0 {
            return 0;
        }
        let th = self.theta.clone();
        let mut cost = 0u64;
        let mut lls = Vec::with_capacity(AUTO_PARTICLES_RUNS);
        for _ in 0..AUTO_PARTICLES_RUNS {
            let (_, ll, c) = self.evaluate(&th, rng);
            cost += c;
            if ll.is_finite() {
                lls.push(ll);
            }
        }
        // a run that failed outright counts as infinite variance
        let var = if lls.len() < 2 || lls.len() < AUTO_PARTICLES_RUNS {
            f64::INFINITY
        } else {
            let m = lls.iter().sum::<f64>() / lls.len() as f64;
            lls.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (lls.len() - 1) as f64
        };
        let want = n0 as f64 * var / AUTO_LOG_LIK_VAR;
        let n = if want.is_nan() || want >= max as f64 {
            max
        } else {
            (math::ceil(want) as usize).clamp(AUTO_PARTICLES_START, max)
        };
        // the variance predicted at the chosen N (Var log p̂ ∝ 1/N)
        self.log_lik_var = var * n0 as f64 / n as f64;
        if let Likelihood::Particle(pf) = &mut self.lik {
            if n != n0 {
                let cfg = PfConfig {
                    particles: n,
                    ..*pf.config()
                };
                if let Ok(f) = ParticleFilter::new(cfg) {
                    **pf = f;
                }
            }
        }
        // a fresh estimate at the (possibly new) N for the current state
        let (lp, ll, c) = self.evaluate(&th, rng);
        cost += c;
        if lp.is_finite() && ll.is_finite() {
            self.log_prior = lp;
            self.log_lik = ll;
            core::mem::swap(&mut self.cur_ess, &mut self.last_ess);
        }
        cost
    }

    /// (log prior, log-likelihood estimate, cost) at `theta`; updates the ESS path.
    fn evaluate(&mut self, theta: &[f64], rng: &mut ChainRng) -> (f64, f64, u64) {
        let ssm = self.model.ssm();
        let lp = ssm.log_prior(theta);
        let y = self.model.y();
        if !lp.is_finite() {
            return (lp, f64::NEG_INFINITY, 0);
        }
        match &mut self.lik {
            Likelihood::Kalman => match self.model.lgssm() {
                Some(m) => (lp, kalman::log_lik(m, theta, y), y.len() as u64),
                None => (lp, f64::NEG_INFINITY, 0),
            },
            Likelihood::Particle(pf) => match pf.run(ssm, theta, y, None, rng) {
                Ok(s) => {
                    self.last_ess.clear();
                    self.last_ess.extend_from_slice(pf.ess());
                    (lp, s.log_lik, s.cost)
                }
                Err(_) => (lp, f64::NEG_INFINITY, 0),
            },
        }
    }

    /// The filter's ESS path over time of the current state's particle run (empty for
    /// Kalman).
    pub fn ess_path(&self) -> &[f64] {
        &self.cur_ess
    }

    /// Particles N (0 for the Kalman likelihood).
    pub fn particles(&self) -> usize {
        match &self.lik {
            Likelihood::Particle(pf) => pf.config().particles,
            Likelihood::Kalman => 0,
        }
    }

    /// Warm-up adaptation after a step; returns the evaluations spent (particle tuning at the
    /// midpoint).
    fn adapt_step(&mut self, accept: f64, rng: &mut ChainRng) -> u64 {
        let mut cost = 0;
        if self.auto_particles && self.warmup >= 2 && self.iter == self.warmup / 2 {
            cost += self.tune_particles(AUTO_PARTICLES_MAX, rng);
        }
        if !self.adapt || self.iter > self.warmup {
            return cost;
        }
        let k = self.iter as f64;
        self.log_eps += (accept - self.target) / math::pow(k + 1.0, 0.6);
        self.log_eps = self.log_eps.clamp(-30.0, 10.0);
        let (q1, half) = (self.warmup / 4, self.warmup / 2);
        if self.warmup >= 40 && self.iter > q1 && self.iter <= half {
            self.w_n += 1;
            let n = self.w_n as f64;
            for j in 0..self.theta.len() {
                let d = self.theta[j] - self.w_mean[j];
                self.w_mean[j] += d / n;
                self.w_m2[j] += d * (self.theta[j] - self.w_mean[j]);
            }
            if self.iter == half && self.w_n >= 10 {
                for j in 0..self.theta.len() {
                    let sd = math::sqrt(self.w_m2[j] / (n - 1.0));
                    if sd.is_finite() && sd > 0.0 {
                        self.scale[j] = sd;
                    }
                }
                self.log_eps = math::ln(2.38 / math::sqrt(self.theta.len() as f64));
            }
        }
        cost
    }
}

impl Chain for PmmhChain {
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.model.ssm().param_names()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        vec!["log_lik", "ess_min", "ess_mean", "resample_rate"]
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        self.iter += 1;
        let eps = math::exp(self.log_eps);
        for j in 0..self.theta.len() {
            self.prop[j] = self.theta[j] + eps * self.scale[j] * std_normal(rng);
        }
        let prop = core::mem::take(&mut self.prop);
        let (lp, ll, cost) = self.evaluate(&prop, rng);
        let log_a = (lp + ll) - (self.log_prior + self.log_lik);
        let accept = if log_a.is_nan() {
            0.0
        } else {
            math::exp(log_a.min(0.0))
        };
        let accepted = log_a.is_finite() && math::ln(uniform(rng)) < log_a;
        let mut info = StepInfo {
            accept_prob: accept,
            accepted,
            divergent: !(lp + ll).is_finite(),
            lik_evals: cost,
            step_size: eps,
            ..StepInfo::default()
        };
        self.prop = prop;
        if accepted {
            core::mem::swap(&mut self.theta, &mut self.prop);
            self.log_prior = lp;
            self.log_lik = ll;
            core::mem::swap(&mut self.cur_ess, &mut self.last_ess);
        }
        info.lik_evals += self.adapt_step(accept, rng);
        info.energy = -(self.log_prior + self.log_lik);
        let (emin, emean, rate) = if self.cur_ess.is_empty() {
            (f64::NAN, f64::NAN, f64::NAN)
        } else {
            let n = self.cur_ess.len() as f64;
            let np = self.particles() as f64;
            // resampled at t+1 when ESS after weighting at t fell below κN (κ = threshold)
            let kappa = match &self.lik {
                Likelihood::Particle(pf) => pf.config().ess_threshold,
                Likelihood::Kalman => 1.0,
            };
            let resampled = if kappa >= 1.0 {
                n - 1.0
            } else {
                self.cur_ess[..self.cur_ess.len() - 1]
                    .iter()
                    .filter(|&&e| e < kappa * np)
                    .count() as f64
            };
            (
                self.cur_ess.iter().copied().fold(f64::INFINITY, f64::min),
                self.cur_ess.iter().sum::<f64>() / n,
                resampled / n,
            )
        };
        info.extra = [self.log_lik, emin, emean, rate];
        info
    }
    fn position(&self) -> &[f64] {
        &self.theta
    }
    fn iteration(&self) -> usize {
        self.iter
    }
    fn warmup(&self) -> usize {
        self.warmup
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        let mut r = vec![
            ("step_size", math::exp(self.log_eps)),
            ("target_accept", self.target),
        ];
        if matches!(self.lik, Likelihood::Particle(_)) {
            r.push(("particles", self.particles() as f64));
            if self.log_lik_var.is_finite() {
                r.push(("log_lik_var", self.log_lik_var));
            }
        }
        r
    }
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    fn window_trace(&self) -> Option<WindowTrace> {
        let t = self.model.y().len();
        Some(WindowTrace {
            window: Window {
                start: 0,
                end: t,
                sub_start: 0,
                sub_end: t,
            },
            ess: self.cur_ess.clone(),
            particles: self.particles(),
        })
    }
}

/// Build a `pmmh` chain from the user's settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: &dyn crate::model::DataModel,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let series = series_of(config.sampler, model)?;
    let s = config.settings;
    let step = PMMH_INFO.param("step_size")?.positive_or_auto(s)?;
    let target = match s.get_str("target_accept") {
        None | Some("auto") | Some("nan") | Some("NaN") => f64::NAN,
        Some(_) => PMMH_INFO.param("target_accept")?.real(s)?,
    };
    // particles = auto (absent or `auto`): tuned by the chain (module docs)
    let auto = matches!(s.get_str("particles"), None | Some("auto"));
    let filter = particle_or_kalman(s, &PMMH_INFO, "likelihood", AUTO_PARTICLES_START)?;
    let filter = match filter {
        Some(f) if auto => Some(PfConfig { particles: 0, ..f }),
        f => f,
    };
    let init = PMMH_INFO.param("init")?.choice(s)?;
    s.check_all_used()?;
    let theta = start_point(series, init, rng)?;
    Ok(Box::new(PmmhChain::new(
        series.clone(),
        filter,
        theta,
        step,
        target,
        config.warmup,
        rng,
    )?))
}
