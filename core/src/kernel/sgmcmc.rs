//! Stochastic-gradient Langevin dynamics: minibatch gradient estimators (naive and control
//! variate) and the `sgld` / `sgld-cv` chains with a constant step size.
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
//! θ + ε∇log π + √(2ε)ξ is this one with h = 2ε.)
//!
//! # Formula
//! Naive minibatch (S a batch of m indices, with or without replacement):
//! ĝ(θ) = ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ).
//! Control variate around the mode θ̂ (thesis eq. (4.2.5)):
//! ĝ(θ) = ∇ log p(θ) + Σᵢ ∇ℓᵢ(θ̂) + (n/m) Σ_{i∈S} [∇ℓᵢ(θ) − ∇ℓᵢ(θ̂)],
//! with Σᵢ ∇ℓᵢ(θ̂) computed once (one full pass) at construction.
//!
//! Default step size (setting `step_size` = auto): h = 0.1 / tr(A), A = −∇² log π(θ̂) the
//! Laplace precision at the mode. Since tr(A) ≥ λ_max(A), hλ ≤ 0.1 for every eigenvalue, so
//! with exact gradients the stationary variance is inflated by at most 1/(1 − 0.025) ≈ 2.6%.
//!
//! Cost: a naive step evaluates m per-datum gradients, a control-variate step 2m (at θ and at
//! θ̂); a value-and-gradient call counts in both `lik_evals` and `grad_evals`. Mode finding and
//! the full-data gradient at θ̂ are reported as [`Chain::setup_cost`]. SGLD is not exact: it
//! has no Metropolis correction, so every step is "accepted" with probability 1.
//!
//! ## References
//! S. Putcha (2024), *Scalable Bayesian inference using stochastic gradient MCMC*, PhD thesis,
//! Lancaster University, Algorithms 4 and 7; M. Welling, Y. W. Teh (2011), *Bayesian learning
//! via stochastic gradient Langevin dynamics*, ICML.

use super::StepInfo;
use crate::chain::{Chain, Cost};
use crate::dist::{self, IndexSampler};
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::optim::{find_mode, ModeOptions};
use crate::registry::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::rng::{uniform, ChainRng, Rng};
use alloc::boxed::Box;
use alloc::string::String;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// Default step size factor c in h = c / tr(A).
pub const AUTO_STEP_FACTOR: f64 = 0.1;

/// An unbiased minibatch estimator of ∇ log π(θ).
#[derive(Debug, Clone)]
pub struct GradientEstimator {
    sampler: IndexSampler,
    /// Control-variate centre θ̂ and Σᵢ ∇ℓᵢ(θ̂); `None` for the naive estimator.
    centre: Option<(Vec<f64>, Vec<f64>)>,
    idx: Vec<usize>,
    buf: Vec<f64>,
    buf_centre: Vec<f64>,
}

impl GradientEstimator {
    /// The naive estimator ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ) for a `model` of dimension `d`
    /// with `n` data. Fails as [`IndexSampler::new`].
    pub fn naive(n: usize, d: usize, batch: usize, with_replacement: bool) -> Result<Self, Error> {
        Ok(GradientEstimator {
            sampler: IndexSampler::new(n, batch, with_replacement)?,
            centre: None,
            idx: Vec::with_capacity(batch),
            buf: vec![0.0; d],
            buf_centre: vec![0.0; d],
        })
    }

    /// The control-variate estimator centred at `centre` (normally the mode). Computes
    /// Σᵢ ∇ℓᵢ(θ̂) with one full pass and returns its cost. Fails on a centre of the wrong
    /// length, a non-finite full-data gradient there, or as [`IndexSampler::new`].
    pub fn control_variate(
        model: &dyn DataModel,
        centre: &[f64],
        batch: usize,
        with_replacement: bool,
    ) -> Result<(Self, Cost), Error> {
        let d = model.dim();
        if centre.len() != d {
            return Err(Error::Dimension {
                what: "control-variate centre",
                expected: d,
                got: centre.len(),
            });
        }
        let n = model.n();
        let sampler = IndexSampler::new(n, batch, with_replacement)?;
        let mut full = vec![0.0; d];
        model.log_lik_grad_all(centre, &mut full);
        if full.iter().chain(centre.iter()).any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        let cost = Cost {
            lik_evals: n as u64,
            grad_evals: n as u64,
        };
        Ok((
            GradientEstimator {
                sampler,
                centre: Some((centre.to_vec(), full)),
                idx: Vec::with_capacity(batch),
                buf: vec![0.0; d],
                buf_centre: vec![0.0; d],
            },
            cost,
        ))
    }

    /// Batch size m.
    pub fn batch(&self) -> usize {
        self.sampler.batch()
    }

    /// Whether this is the control-variate estimator.
    pub fn is_control_variate(&self) -> bool {
        self.centre.is_some()
    }

    /// Write an estimate of ∇ log π(`theta`) into `out` (length d) and return the number of
    /// per-datum gradient evaluations (m naive, 2m control variate). `theta` and `out` must have
    /// the model's dimension (extra entries are ignored, missing ones are left untouched).
    pub fn estimate<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        model: &dyn DataModel,
        theta: &[f64],
        out: &mut [f64],
    ) -> u64 {
        self.sampler.sample(rng, &mut self.idx);
        let m = self.idx.len();
        let scale = self.sampler.n() as f64 / m.max(1) as f64;
        self.buf.iter_mut().for_each(|v| *v = 0.0);
        for &i in &self.idx {
            model.log_lik_grad(theta, i, &mut self.buf);
        }
        out.iter_mut().for_each(|v| *v = 0.0);
        model.log_prior_grad(theta, out);
        let mut evals = m as u64;
        match &self.centre {
            None => {
                for (o, b) in out.iter_mut().zip(&self.buf) {
                    *o += scale * b;
                }
            }
            Some((c, full)) => {
                self.buf_centre.iter_mut().for_each(|v| *v = 0.0);
                for &i in &self.idx {
                    model.log_lik_grad(c, i, &mut self.buf_centre);
                }
                evals *= 2;
                for ((o, b), (bc, f)) in out
                    .iter_mut()
                    .zip(&self.buf)
                    .zip(self.buf_centre.iter().zip(full))
                {
                    *o += f + scale * (b - bc);
                }
            }
        }
        evals
    }
}

/// Options of an SGLD chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SgldOptions {
    /// Step size h (NaN: automatic, h = 0.1 / tr(A) at the mode).
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

/// Where an SGLD chain starts.
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

/// An SGLD chain (naive or control-variate gradient) with a constant step size.
pub struct SgldChain {
    model: Arc<dyn DataModel>,
    names: Vec<String>,
    est: GradientEstimator,
    theta: Vec<f64>,
    grad: Vec<f64>,
    next: Vec<f64>,
    h: f64,
    iter: usize,
    warmup: usize,
    setup: Cost,
}

impl SgldChain {
    /// Build the chain: find the mode when the step size is automatic, the estimator is a
    /// control variate or `init` is the mode; compute the full-data gradient at the mode for
    /// the control variate. Errors: an invalid step size or batch size, a failed mode search,
    /// a non-finite start or Laplace precision with non-positive trace.
    pub fn new(
        model: Arc<dyn DataModel>,
        opts: &SgldOptions,
        warmup: usize,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        let d = model.dim();
        let n = model.n();
        if d == 0 || n == 0 {
            return Err(Error::data(
                "SGLD needs at least one parameter and one datum",
            ));
        }
        if !(opts.step_size.is_nan() || (opts.step_size.is_finite() && opts.step_size > 0.0)) {
            return Err(Error::setting(
                "step_size",
                "must be a finite number > 0 (or auto)",
            ));
        }
        if opts.batch == 0 {
            return Err(Error::setting("batch_size", "must be ≥ 1"));
        }
        let batch = opts.batch.min(n);
        let need_mode =
            opts.step_size.is_nan() || opts.control_variate || opts.init == SgldInit::Mode;
        let mut setup = Cost::default();
        let mode = if need_mode {
            let r = find_mode(
                model.as_ref(),
                &model.initial_point(),
                &ModeOptions::default(),
            )?;
            let c = r.cost();
            setup.lik_evals += c.lik_evals;
            setup.grad_evals += c.grad_evals;
            Some(r)
        } else {
            None
        };
        let h = match (&mode, opts.step_size.is_nan()) {
            (Some(r), true) => {
                let tr: f64 = (0..d).filter_map(|j| r.neg_hessian.get(j * d + j)).sum();
                if !(tr.is_finite() && tr > 0.0) {
                    return Err(Error::setting(
                        "step_size",
                        "automatic step size needs a Laplace precision with positive trace; give step_size",
                    ));
                }
                AUTO_STEP_FACTOR / tr
            }
            _ => opts.step_size,
        };
        let est = match (&mode, opts.control_variate) {
            (Some(r), true) => {
                let (e, c) = GradientEstimator::control_variate(
                    model.as_ref(),
                    &r.mode,
                    batch,
                    opts.with_replacement,
                )?;
                setup.lik_evals += c.lik_evals;
                setup.grad_evals += c.grad_evals;
                e
            }
            _ => GradientEstimator::naive(n, d, batch, opts.with_replacement)?,
        };
        let theta: Vec<f64> = match (opts.init, &mode) {
            (SgldInit::Mode, Some(r)) => r.mode.clone(),
            (SgldInit::Zero, _) => vec![0.0; d],
            (SgldInit::Random, _) => (0..d).map(|_| 4.0 * uniform(rng) - 2.0).collect(),
            _ => model.initial_point(),
        };
        if theta.len() != d || theta.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Ok(SgldChain {
            names: model.param_names(),
            model,
            est,
            theta,
            grad: vec![0.0; d],
            next: vec![0.0; d],
            h,
            iter: 0,
            warmup,
            setup,
        })
    }

    /// The step size h in use.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// The batch size m in use.
    pub fn batch(&self) -> usize {
        self.est.batch()
    }
}

impl Chain for SgldChain {
    fn dim(&self) -> usize {
        self.theta.len()
    }
    fn param_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn extra_names(&self) -> Vec<&'static str> {
        vec!["batch_size"]
    }
    fn exact(&self) -> bool {
        false
    }
    fn step(&mut self, rng: &mut ChainRng) -> StepInfo {
        self.iter += 1;
        let evals = self
            .est
            .estimate(rng, self.model.as_ref(), &self.theta, &mut self.grad);
        let sqrt_h = math::sqrt(self.h);
        for ((x, t), g) in self.next.iter_mut().zip(&self.theta).zip(&self.grad) {
            *x = t + 0.5 * self.h * g + sqrt_h * dist::std_normal(rng);
        }
        let ok = self.next.iter().all(|v| v.is_finite());
        if ok {
            core::mem::swap(&mut self.theta, &mut self.next);
        }
        let mut extra = [f64::NAN; 4];
        extra[0] = self.est.batch() as f64;
        StepInfo {
            accept_prob: if ok { 1.0 } else { 0.0 },
            accepted: ok,
            divergent: !ok,
            lik_evals: evals,
            grad_evals: evals,
            n_leapfrog: 0,
            step_size: self.h,
            energy: f64::NAN,
            sign: 1.0,
            extra,
        }
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
    fn setup_cost(&self) -> Cost {
        self.setup
    }
    fn resolved(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("step_size", self.h),
            ("batch_size", self.est.batch() as f64),
        ]
    }
}

const P_STEP: ParamSpec = ParamSpec {
    key: "step_size",
    description:
        "constant step h in θ ← θ + (h/2)ĝ + √h ξ; auto (NaN) = 0.1 / tr(Laplace precision)",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_BATCH: ParamSpec = ParamSpec {
    key: "batch_size",
    description: "minibatch size m (clamped to n)",
    kind: ParamKind::Int {
        default: 100,
        min: 1,
        max: usize::MAX,
    },
};

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

const SGLD_PARAMS: &[ParamSpec] = &[P_STEP, P_BATCH, P_WR, P_INIT];

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

/// Build an `sgld` or `sgld-cv` chain from the user's settings.
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
) -> Result<Box<dyn Chain>, Error> {
    let control_variate = match config.sampler {
        "sgld" => false,
        "sgld-cv" => true,
        other => {
            return Err(Error::Unknown {
                what: "sampler",
                name: other.into(),
            })
        }
    };
    let s = config.settings;
    let step_size = match s.get_str("step_size") {
        None | Some("auto") | Some("nan") | Some("NaN") => f64::NAN,
        Some(_) => {
            let v = s.f64_or("step_size", f64::NAN)?;
            if !(v > 0.0 && v.is_finite()) {
                return Err(Error::setting(
                    "step_size",
                    "must be a finite number > 0 (or auto)",
                ));
            }
            v
        }
    };
    let batch = s.usize_in("batch_size", 100, 1, usize::MAX)?;
    let with_replacement = s.bool_or("with_replacement", false)?;
    let init = match s.choice("init", "mode", &["mode", "model", "zero", "random"])? {
        "model" => SgldInit::Model,
        "zero" => SgldInit::Zero,
        "random" => SgldInit::Random,
        _ => SgldInit::Mode,
    };
    s.check_all_used()?;
    let opts = SgldOptions {
        step_size,
        batch,
        with_replacement,
        control_variate,
        init,
    };
    Ok(Box::new(SgldChain::new(model, &opts, config.warmup, rng)?))
}
