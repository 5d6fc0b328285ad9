//! The HMC-ECS chain: warm-up that needs no babysitting, then a frozen HMC-ECS kernel.
//!
//! Warm-up (spec 000 §2.7, §3):
//! 1. θ* = posterior mode of a random subset (default 1% of the data, at least 10·d + 100
//!    points) by damped Newton with the likelihood scaled by n/ñ; the chain starts there. A model
//!    whitened from at least as many rows (`reparam`) starts at the whitening's centre instead
//!    (z = 0: the mode of all rows, or on tall data within about one sd of the mode of an evenly
//!    spaced subset) and skips the search: a mode of ñ rows is ≈ √(d(n/ñ − 1)) posterior sds
//!    from the full data's, so the larger subset gives the closer start.
//! 2. One full pass at θ* gives the control variates and M = −∇²log π(θ*) (full data, precision).
//! 3. m is chosen so that σ² = n²·Var_k(d_k(θ))/m meets `sigma2_target` at representative θ
//!    (Laplace draws at first, then warm-up draws; never at θ* where d_k ≡ 0), estimated from a
//!    pilot of 1000 random data at 5 such θ, and clamped to [max(G, 100), n].
//! 4. The warm-up is split into `windows` equal windows; at the end of each window but the last,
//!    θ* ← mean of the second half of the window's draws, then control variates, M and m are
//!    recomputed (a full pass each, counted in the cost) and dual averaging restarts. The
//!    perturbed variant re-centres only when the mean σ̂² of the window's recent half, scaled to
//!    the m chosen for the next window (σ̂² ∝ 1/m), is above `recentre_above` (default 0.01; 0:
//!    every window, as the paper): a centre already good enough for that is not worth a full
//!    pass (m is re-chosen either way).
//! 5. ε by dual averaging (δ = `target_accept`) with L = max(1, round(`traj_len`/ε)) (`traj_len`
//!    π/2 by default where the paper has 1.2: DESIGN.md, departures) unless
//!    `eps`/`L` are set; ε̄ is frozen at the end of warm-up. With L automatic, ε adapted (`eps`
//!    automatic, warm-up > 0) and a static trajectory, sampling then uses L = ⌈`traj_len`/ε̄⌉
//!    and ε = `traj_len`/L (`traj_exact`, default; DESIGN.md, departures): εL is `traj_len`
//!    itself rather than anywhere in (0.8·T, 4T/3] (L ≥ 2). A fixed `eps`, or no warm-up, keeps
//!    L = round(`traj_len`/ε).
//! 6. Signed variant: at the end of warm-up, with θ̄ the mean of the last window, a = d(θ̄) − λ
//!    (one full pass) and λ ≈ σ²(θ) at warm-up draws for the mini-batch size m (default 30);
//!    then the kernel switches to the block-Poisson estimator.
//!
//! Every setting can be overridden: `order`, `m`, `G`, `eps` (alias `step_size`), `L`,
//! `lambda`, `a`, `kappa`, `sigma2_target`, `target_accept`, `traj_len`, `traj_exact`, `recentre`,
//! `recentre_above` (perturbed only),
//! `centre_subset`, `windows`, `trajectory` (`static` | `nuts`), `max_depth`, `m_warmup`
//! (signed only), and the initial centre's mode search (`mode_method`, `mode_max_iter`,
//! `mode_tol`, `mode_memory`).
//!
//! ## References
//! Dang et al. (2019), JMLR 20(100), §6.3; Hoffman & Gelman (2014), JMLR 15, Algorithm 5.

use super::driver::{Description, Driver, Warmup};
use crate::adapt::dual_averaging::DualAveraging;
use crate::chain::{Chain, Cost};
use crate::error::Error;
use crate::estimator::{BlockPoisson, ControlVariates, DiffEstimator};
use crate::kernel::hmcecs::{EcsEstimator, HmcEcs, HmcEcsState};
use crate::kernel::{HasPosition, Metric, StepInfo};
use crate::linalg::Cholesky;
use crate::math;
use crate::model::DataModel;
use crate::optim::{ModeOptions, P_MODE_MAX_ITER, P_MODE_MEMORY, P_MODE_METHOD, P_MODE_TOL};
use crate::rng::{uniform_index, ChainRng};
use crate::sampler::share::Sharing;
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

const NAN: f64 = f64::NAN;

const P_ORDER: ParamSpec = ParamSpec {
    key: "order",
    description: "control-variate order (0, 1, 2)",
    kind: ParamKind::Int {
        default: 2,
        min: 0,
        max: 2,
    },
};

const P_M: ParamSpec = ParamSpec {
    key: "m",
    description:
        "subsample size (perturbed; automatic from sigma2_target) or mini-batch size (signed; 30)",
    kind: ParamKind::Int {
        default: 0,
        min: 1,
        max: usize::MAX,
    },
};

const P_G: ParamSpec = ParamSpec {
    key: "G",
    description: "number of blocks of the subsample (correlation ≈ 1 − 1/G)",
    kind: ParamKind::Int {
        default: 100,
        min: 1,
        max: usize::MAX,
    },
};

const P_EPS: ParamSpec = ParamSpec {
    key: "eps",
    description: "leapfrog step size (automatic: dual averaging in warm-up)",
    kind: ParamKind::Real {
        default: NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_L: ParamSpec = ParamSpec {
    key: "L",
    description:
        "leapfrog steps (automatic: round(traj_len / eps), and ceil(traj_len / eps) for sampling where traj_exact applies)",
    kind: ParamKind::Int {
        default: 0,
        min: 1,
        max: 10_000,
    },
};

const P_SIGMA2: ParamSpec = ParamSpec {
    key: "sigma2_target",
    description: "target variance of the log-likelihood estimator when choosing m",
    kind: ParamKind::Real {
        default: 1.0,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_ACCEPT: ParamSpec = ParamSpec {
    key: "target_accept",
    description: "dual-averaging acceptance target",
    kind: ParamKind::Real {
        default: 0.8,
        min: 0.01,
        max: 0.999,
    },
};

const P_TRAJ: ParamSpec = ParamSpec {
    key: "traj_len",
    description: "trajectory length eps·L when L is automatic (default π/2, a quarter period of the Laplace approximation in the metric M)",
    kind: ParamKind::Real {
        default: core::f64::consts::FRAC_PI_2,
        min: 1e-6,
        max: 1e6,
    },
};

const P_TRAJ_EXACT: ParamSpec = ParamSpec {
    key: "traj_exact",
    description: "when L is automatic, eps adapted (eps auto, warm-up > 0) and the trajectory static, sample with L = ceil(traj_len / eps) and eps = traj_len / L, so that eps·L is traj_len exactly with a step no longer than warm-up's (false: warm-up's eps and L = round(traj_len / eps), as the paper)",
    kind: ParamKind::Bool(true),
};

const P_RECENTRE: ParamSpec = ParamSpec {
    key: "recentre",
    description: "move the control-variate centre to the mean of warm-up draws",
    kind: ParamKind::Bool(true),
};

const P_RECENTRE_ABOVE: ParamSpec = ParamSpec {
    key: "recentre_above",
    description: "re-centre at a warm-up window's end only when the mean σ̂² of the window's recent half (scaled to the next window's m) is above this (0: at every window's end, as the paper; the signed variant always re-centres)",
    kind: ParamKind::Real {
        default: 0.01,
        min: 0.0,
        max: 1e6,
    },
};

const P_SUBSET: ParamSpec = ParamSpec {
    key: "centre_subset",
    description: "fraction of the data whose mode is the initial centre (a model whitened at the mode of at least as many rows starts at that mode instead)",
    kind: ParamKind::Real {
        default: 0.01,
        min: 0.0,
        max: 1.0,
    },
};

const P_WINDOWS: ParamSpec = ParamSpec {
    key: "windows",
    description:
        "warm-up windows (centre, metric and m refreshed between windows; hmc-ecs: the centre only when recentre_above says so)",
    kind: ParamKind::Int {
        default: 5,
        min: 1,
        max: 1000,
    },
};

const P_LAMBDA: ParamSpec = ParamSpec {
    key: "lambda",
    description: "block-Poisson products (signed; automatic ≈ σ² of a mini-batch)",
    kind: ParamKind::Int {
        default: 0,
        min: 1,
        max: 1_000_000,
    },
};

const P_A: ParamSpec = ParamSpec {
    key: "a",
    description: "block-Poisson soft lower bound (signed; automatic d(θ̄) − λ)",
    kind: ParamKind::Real {
        default: NAN,
        min: f64::NEG_INFINITY,
        max: f64::INFINITY,
    },
};

const P_KAPPA: ParamSpec = ParamSpec {
    key: "kappa",
    description: "block-Poisson products redrawn per u-update (signed)",
    kind: ParamKind::Int {
        default: 1,
        min: 1,
        max: 1_000_000,
    },
};

const P_M_WARMUP: ParamSpec = ParamSpec {
    key: "m_warmup",
    description: "subsample size of the perturbed warm-up of the signed sampler (automatic)",
    kind: ParamKind::Int {
        default: 0,
        min: 1,
        max: usize::MAX,
    },
};

const P_TRAJECTORY: ParamSpec = ParamSpec {
    key: "trajectory",
    description: "θ-step given u: static (L leapfrog steps) or nuts",
    kind: ParamKind::Choice(&["static", "nuts"]),
};

const P_MAX_DEPTH: ParamSpec = ParamSpec {
    key: "max_depth",
    description: "maximum NUTS tree depth (trajectory=nuts)",
    kind: ParamKind::Int {
        default: 10,
        min: 1,
        max: 30,
    },
};

const P_ENERGY: ParamSpec = ParamSpec {
    key: "energy",
    description: "Hamiltonian of the accept step: estimated (energy conserving, the paper) or full \
                  (the naive scheme: fresh u each iteration, full-data H; exact, 2n evaluations per iteration)",
    kind: ParamKind::Choice(&["estimated", "full"]),
};

const P_M_SIGNED: ParamSpec = ParamSpec {
    key: "m",
    description: "block-Poisson mini-batch size",
    kind: ParamKind::Int {
        default: 30,
        min: 1,
        max: usize::MAX,
    },
};

/// Registry entry of `hmc-ecs`.
pub const HMC_ECS_INFO: SamplerInfo = SamplerInfo {
    name: "hmc-ecs",
    description: "HMC with energy-conserving subsampling, perturbed (Dang et al. 2019)",
    exact: false,
    signed: false,
    models: &[],
    params: &[
        P_ORDER,
        P_M,
        P_G,
        P_EPS,
        P_L,
        P_TRAJECTORY,
        P_MAX_DEPTH,
        P_SIGMA2,
        P_ACCEPT,
        P_TRAJ,
        P_TRAJ_EXACT,
        P_RECENTRE,
        P_RECENTRE_ABOVE,
        P_SUBSET,
        P_WINDOWS,
        P_ENERGY,
        P_MODE_METHOD,
        P_MODE_MAX_ITER,
        P_MODE_TOL,
        P_MODE_MEMORY,
    ],
};

/// Registry entry of `hmc-ecs-signed`.
pub const HMC_ECS_SIGNED_INFO: SamplerInfo = SamplerInfo {
    name: "hmc-ecs-signed",
    description: "HMC with energy-conserving subsampling, signed block-Poisson (Dang et al. 2019)",
    exact: true,
    signed: true,
    models: &[],
    params: &[
        P_ORDER,
        P_M_SIGNED,
        P_LAMBDA,
        P_A,
        P_KAPPA,
        P_G,
        P_EPS,
        P_L,
        P_TRAJECTORY,
        P_MAX_DEPTH,
        P_SIGMA2,
        P_ACCEPT,
        P_TRAJ,
        P_TRAJ_EXACT,
        P_RECENTRE,
        P_SUBSET,
        P_WINDOWS,
        P_M_WARMUP,
        P_MODE_METHOD,
        P_MODE_MAX_ITER,
        P_MODE_TOL,
        P_MODE_MEMORY,
    ],
};

/// Resolved HMC-ECS configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct EcsConfig {
    /// Block-Poisson (signed) instead of the perturbed estimator.
    pub signed: bool,
    /// Control-variate order.
    pub order: usize,
    /// Perturbed subsample size (None: automatic).
    pub m: Option<usize>,
    /// Blocks G.
    pub blocks: usize,
    /// σ² target for the automatic m.
    pub sigma2_target: f64,
    /// Fixed ε (None: dual averaging).
    pub eps: Option<f64>,
    /// Fixed L (None: round(traj_len/ε), or ⌈traj_len/ε̄⌉ for sampling with `traj_exact`).
    pub n_leapfrog: Option<usize>,
    /// Dual-averaging target.
    pub target_accept: f64,
    /// ε·L when L is automatic.
    pub traj_len: f64,
    /// Automatic L: sample with εL = `traj_len` exactly ([`crate::kernel::hmc::exact_steps`]).
    pub traj_exact: bool,
    /// Recentre θ* during warm-up.
    pub recentre: bool,
    /// Perturbed: re-centre only when the window's recent σ̂² (at the next m) exceeds this.
    pub recentre_above: f64,
    /// Fraction of the data for the initial centre.
    pub centre_subset: f64,
    /// Warm-up windows.
    pub windows: usize,
    /// Block-Poisson mini-batch size.
    pub m_signed: usize,
    /// λ (None: automatic).
    pub lambda: Option<usize>,
    /// a (None: automatic).
    pub a: Option<f64>,
    /// κ.
    pub kappa: usize,
    /// NUTS with this maximum depth instead of a static trajectory.
    pub nuts_depth: Option<usize>,
    /// The naive scheme: accept with the full-data Hamiltonian, fresh u each iteration.
    pub full_energy: bool,
    /// The search for the initial centre (the subset posterior's mode; `mode_*` settings).
    pub mode: ModeOptions,
}

impl EcsConfig {
    /// Read the settings (marking keys used).
    pub fn from_settings(s: &Settings, signed: bool) -> Result<Self, Error> {
        let order = P_ORDER.int(s)?;
        let (m, m_signed) = if signed {
            (P_M_WARMUP.int_or_auto(s)?, P_M_SIGNED.int(s)?)
        } else {
            (P_M.int_or_auto(s)?, 30)
        };
        let blocks = P_G.int(s)?;
        let sigma2_target = P_SIGMA2.real(s)?;
        // `eps` (alias `step_size`): a number > 0, or auto (absent, `auto`): adapted.
        let eps_key = match (s.get_str("eps"), s.get_str("step_size")) {
            (None, Some(_)) => "step_size",
            _ => "eps",
        };
        let eps = Some(s.positive_or_auto(eps_key)?).filter(|e| !e.is_nan());
        let n_leapfrog = P_L.int_or_auto(s)?;
        let target_accept = P_ACCEPT.real(s)?;
        let traj_len = P_TRAJ.real(s)?;
        let traj_exact = P_TRAJ_EXACT.flag(s)?;
        let recentre = P_RECENTRE.flag(s)?;
        let recentre_above = if signed {
            0.0
        } else {
            P_RECENTRE_ABOVE.real(s)?
        };
        let centre_subset = P_SUBSET.real(s)?;
        let windows = P_WINDOWS.int(s)?;
        let lambda = if signed {
            P_LAMBDA.int_or_auto(s)?
        } else {
            None
        };
        // `a` (signed only): a number, or auto (absent, `auto`): chosen by the estimator.
        let a = match signed.then(|| s.get_str("a")).flatten() {
            Some(v) if v != "auto" => Some(s.f64_or("a", 0.0)?),
            _ => None,
        };
        let kappa = if signed { P_KAPPA.int(s)? } else { 1 };
        let nuts_depth = match P_TRAJECTORY.choice(s)? {
            "nuts" => Some(P_MAX_DEPTH.int(s)?),
            _ if s.contains("max_depth") => {
                return Err(Error::setting(
                    "max_depth",
                    "only used with trajectory=nuts",
                ))
            }
            _ => None,
        };
        let full_energy = !signed && P_ENERGY.choice(s)? == "full";
        if full_energy && nuts_depth.is_some() {
            return Err(Error::setting("energy", "full needs trajectory=static"));
        }
        if let (Some(l), true) = (lambda, signed) {
            if kappa > l {
                return Err(Error::setting("kappa", "must not exceed lambda"));
            }
        }
        if let Some(m) = m {
            if blocks > m {
                return Err(Error::setting(
                    "G",
                    alloc::format!("{blocks} blocks exceed the subsample size m = {m}"),
                ));
            }
        }
        Ok(EcsConfig {
            signed,
            order,
            m,
            blocks,
            sigma2_target,
            eps,
            n_leapfrog,
            target_accept,
            traj_len,
            traj_exact,
            recentre,
            recentre_above,
            centre_subset,
            windows,
            m_signed,
            lambda,
            a,
            kappa,
            nuts_depth,
            full_energy,
            mode: ModeOptions::from_settings(s)?,
        })
    }
}

/// M⁻¹ from a precision matrix (dense), or the identity when it is not positive definite.
pub fn metric_from_precision(prec: &[f64], d: usize) -> Metric {
    match Cholesky::new(prec, d) {
        Ok(c) => Metric::dense(c.inverse(), d).unwrap_or(Metric::Identity(d)),
        Err(_) => Metric::Identity(d),
    }
}

/// Average over `thetas` of the sample variance of d_k(θ) over `pilot` indices.
fn pilot_var(
    model: &dyn DataModel,
    cv: &ControlVariates,
    thetas: &[Vec<f64>],
    pilot: &[usize],
) -> f64 {
    let mut ds = vec![0.0; pilot.len()];
    let mut tot = 0.0;
    let mut cnt = 0.0;
    for th in thetas {
        cv.diffs(model, th, pilot, &mut ds, &mut []);
        let k = ds.len() as f64;
        if k < 2.0 {
            continue;
        }
        let mean = ds.iter().sum::<f64>() / k;
        let v = ds.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (k - 1.0);
        if v.is_finite() {
            tot += v;
            cnt += 1.0;
        }
    }
    if cnt > 0.0 {
        tot / cnt
    } else {
        f64::NAN
    }
}

const PILOT: usize = 1000;
const N_REP: usize = 5;

/// HMC-ECS's warm-up: dual averaging of ε (and L = traj_len/ε when automatic), a window of
/// recent draws; at each window's end the centre θ* moves to their mean (new control
/// variates and metric) and m is re-chosen; at the end of warm-up the step size is frozen (and
/// shortened to traj_len/L with `traj_exact`) and,
/// for `hmc-ecs-signed`, the kernel switches to the block-Poisson estimator.
pub struct EcsWarmup {
    cfg: EcsConfig,
    warmup: usize,
    // Its own dual averaging, not `adapt::StepSizeWarmup`: every update and the final ε are
    // clamped to [1e-10, 1e3] (the subsampled energy can push the iterate far out early on,
    // and L = traj_len/ε follows ε at every step), and each re-centring restarts it at the
    // current ε without the doubling heuristic (StepSizeWarmup::restart runs the heuristic,
    // which costs gradient evaluations and changes the draws). Moving to StepSizeWarmup would
    // change hmc-ecs's golden draws wherever the clamp or the restart differ.
    da: Option<DualAveraging>,
    window: Vec<Vec<f64>>,
    /// σ̂² of the window's iterations (+∞ where it was not finite).
    window_s2: Vec<f64>,
    /// The control variates replaced at the last re-centring, whose buffers the next one reuses
    /// (dropped when warm-up ends).
    spare_cv: Option<ControlVariates>,
}

/// A running HMC-ECS chain (perturbed or signed): [`HmcEcs`] with [`EcsWarmup`] on the
/// generic driver.
pub type EcsChain = Driver<HmcEcs, Arc<dyn DataModel>, EcsWarmup>;

impl Driver<HmcEcs, Arc<dyn DataModel>, EcsWarmup> {
    /// Build a chain: subset mode, control variates, metric, m, initial subsample.
    pub fn new(
        model: Arc<dyn DataModel>,
        cfg: EcsConfig,
        warmup: usize,
        rng: &mut ChainRng,
    ) -> Result<Self, Error> {
        Self::new_sharing(model, cfg, warmup, rng, Sharing::Off)
    }

    /// [`new`](Self::new), the control variates at the centre shared between a run's chains
    /// as `sharing` says ([`Sharing::control_variates`]) on a whitened model, where every
    /// chain's centre is its start, so one full pass serves them all. The same chain either
    /// way.
    pub fn new_sharing(
        model: Arc<dyn DataModel>,
        cfg: EcsConfig,
        warmup: usize,
        rng: &mut ChainRng,
        mut sharing: Sharing<'_>,
    ) -> Result<Self, Error> {
        let d = model.dim();
        let n = model.n();
        if d == 0 || n == 0 {
            return Err(Error::data("the model has no parameters or no data"));
        }
        let mut setup = Cost::default();
        // 1. initial centre: mode of a random subset
        let sub_n = ((cfg.centre_subset * n as f64) as usize)
            .max(10 * d + 100)
            .min(n);
        let sub: Vec<usize> = if sub_n >= n {
            (0..n).collect()
        } else {
            (0..sub_n).map(|_| uniform_index(rng, n)).collect()
        };
        let start = model.initial_point();
        // A model whitened at the mode of at least as many rows already starts at that mode
        // (z = 0, precision ≈ I): a closer centre than the subset's, for nothing.
        let whitened = model
            .reparam_info()
            .is_some_and(|r| r.kind == "whiten" && r.rows_used >= sub_n);
        // The subset posterior's mode and negative Hessian by the shared Newton (its value and
        // gradient evaluations are the set-up cost, as for every mode-started sampler); a
        // numerical failure falls back to the model's start.
        // (The subset is drawn either way: a chain's random stream does not depend on whether
        // its model is whitened.) The `mode_*` settings are those of the subset's search.
        let (centre, sub_prec) = if whitened {
            (vec![0.0; d], crate::linalg::identity(d))
        } else {
            match crate::optim::find_mode_subset(&*model, &sub, &start, &cfg.mode) {
                Ok(r) => {
                    setup += r.cost();
                    (r.mode, r.neg_hessian)
                }
                Err(Error::Numerical(_)) => (start.clone(), crate::linalg::identity(d)),
                Err(e) => return Err(e),
            }
        };
        // 2. control variates and the full-data metric at θ*
        // Shared only where another chain can have the same centre (a whitened model's z = 0:
        // a subset's mode differs per chain, and keeping one would only hold its memory).
        let (cv, computed) = if whitened {
            sharing.control_variates(&model, &centre, cfg.order)?
        } else {
            (ControlVariates::new(&*model, &centre, cfg.order)?, true)
        };
        if computed {
            setup.lik_evals += cv.full_pass_cost();
            setup.grad_evals += cv.full_pass_cost();
        }
        let metric = metric_at(&*model, &cv, &sub_prec);
        // 3. m from Laplace draws around θ*
        let reps = laplace_draws(&metric, &centre, rng);
        let m = match cfg.m {
            Some(m) => m,
            None => {
                let (m, ev) = choose_m(&*model, &cv, &reps, &cfg, rng);
                setup.lik_evals += ev;
                setup.grad_evals += ev;
                m
            }
        };
        let est = DiffEstimator::new(n, m, cfg.blocks.min(m))?;
        let eps0 = cfg
            .eps
            .unwrap_or_else(|| math::pow(d as f64, -0.25).min(1.0));
        let l0 = cfg
            .n_leapfrog
            .unwrap_or_else(|| crate::kernel::hmc::auto_steps(cfg.traj_len, eps0));
        let mut kernel = HmcEcs::new(cv, EcsEstimator::Perturbed(est), metric, eps0, l0)?;
        if cfg.full_energy {
            kernel = kernel.with_full_energy()?;
        }
        if let Some(depth) = cfg.nuts_depth {
            kernel = kernel.with_nuts(depth)?;
        }
        let (mut state, ev) = kernel.init_with(rng, &*model, &centre, None)?;
        setup.lik_evals += ev;
        setup.grad_evals += ev;
        let da = if cfg.eps.is_none() && warmup > 0 {
            Some(DualAveraging::new(cfg.target_accept, eps0))
        } else {
            None
        };
        if warmup == 0 && cfg.signed {
            let reps = laplace_draws(&kernel.metric, &centre, rng);
            let ev = switch_to_signed(&cfg, &mut kernel, &*model, &mut state, rng, &centre, &reps)?;
            setup.lik_evals += ev;
            setup.grad_evals += ev;
        }
        let names = model.param_names();
        let schedule = EcsWarmup {
            cfg,
            warmup,
            da,
            window: Vec::new(),
            window_s2: Vec::new(),
            spare_cv: None,
        };
        Ok(Driver::from_parts(
            kernel, model, state, schedule, names, warmup, setup,
        ))
    }
}

fn metric_at(model: &dyn DataModel, cv: &ControlVariates, fallback_prec: &[f64]) -> Metric {
    let d = model.dim();
    let mut h = cv.sum_hess().to_vec();
    model.log_prior_hess(cv.centre(), &mut h);
    let prec: Vec<f64> = h.iter().map(|x| -x).collect();
    match Cholesky::new(&prec, d) {
        Ok(_) => metric_from_precision(&prec, d),
        Err(_) => metric_from_precision(fallback_prec, d),
    }
}

fn laplace_draws(metric: &Metric, centre: &[f64], rng: &mut ChainRng) -> Vec<Vec<f64>> {
    let d = centre.len();
    let mut z = vec![0.0; d];
    let mut x = vec![0.0; d];
    (0..N_REP)
        .map(|_| {
            for v in z.iter_mut() {
                *v = crate::dist::std_normal(rng);
            }
            metric.scale_noise(&z, &mut x);
            (0..d).map(|i| centre[i] + x[i]).collect()
        })
        .collect()
}

fn choose_m(
    model: &dyn DataModel,
    cv: &ControlVariates,
    reps: &[Vec<f64>],
    cfg: &EcsConfig,
    rng: &mut ChainRng,
) -> (usize, u64) {
    let pilot = draw_pilot(model.n(), rng);
    m_from_pilot(model, cv, reps, cfg, &pilot)
}

/// The pilot's random data for [`m_from_pilot`].
fn draw_pilot(n: usize, rng: &mut ChainRng) -> Vec<usize> {
    (0..PILOT.min(n)).map(|_| uniform_index(rng, n)).collect()
}

/// m for σ² = `sigma2_target` from the differences at `reps` over `pilot`, and the evaluations.
fn m_from_pilot(
    model: &dyn DataModel,
    cv: &ControlVariates,
    reps: &[Vec<f64>],
    cfg: &EcsConfig,
    pilot: &[usize],
) -> (usize, u64) {
    let n = model.n();
    let v = pilot_var(model, cv, reps, pilot);
    let nf = n as f64;
    let m = nf * nf * v / cfg.sigma2_target;
    let lo = cfg.blocks.max(100).min(n);
    let m = if m.is_finite() {
        (math::ceil(m) as usize).clamp(lo, n)
    } else {
        n
    };
    (m, (pilot.len() * reps.len()) as u64)
}

/// Switch the kernel to the block-Poisson estimator: λ from σ² at `reps`, a = d(θ̄) − λ.
fn switch_to_signed(
    cfg: &EcsConfig,
    kernel: &mut HmcEcs,
    model: &dyn DataModel,
    state: &mut HmcEcsState,
    rng: &mut ChainRng,
    theta_bar: &[f64],
    reps: &[Vec<f64>],
) -> Result<u64, Error> {
    let n = model.n();
    let ms = cfg.m_signed;
    let mut evals = 0u64;
    let lambda = match cfg.lambda {
        Some(l) => l,
        None => {
            let k = PILOT.min(n);
            let pilot: Vec<usize> = (0..k).map(|_| uniform_index(rng, n)).collect();
            let v = pilot_var(model, &kernel.cv, reps, &pilot);
            evals += (k * reps.len()) as u64;
            let s2 = (n as f64) * (n as f64) * v / ms as f64;
            if s2.is_finite() {
                (math::ceil(s2) as usize).clamp(10, 100_000)
            } else {
                100_000
            }
        }
    };
    let a = match cfg.a {
        Some(a) => a,
        None => {
            let all: Vec<usize> = (0..n).collect();
            let mut ds = vec![0.0; n];
            kernel.cv.diffs(model, theta_bar, &all, &mut ds, &mut []);
            evals += n as u64;
            ds.iter().sum::<f64>() - lambda as f64
        }
    };
    let est = BlockPoisson::new(n, ms, lambda, a)?;
    let kappa = cfg.kappa.min(lambda);
    kernel.estimator = EcsEstimator::Signed { est, kappa };
    evals += kernel.refresh(rng, model, state);
    Ok(evals)
}

/// The mean of the recent half of the warm-up window and [`N_REP`] representative draws from it
/// (evenly spaced); `None` when it is empty.
fn recent_mean_and_reps(window: &[Vec<f64>], d: usize) -> Option<(Vec<f64>, Vec<Vec<f64>>)> {
    let recent = &window[window.len() / 2..];
    if recent.is_empty() {
        return None;
    }
    let mut mean = vec![0.0; d];
    for t in recent {
        for i in 0..d {
            mean[i] += t[i] / recent.len() as f64;
        }
    }
    let reps = (0..N_REP)
        .map(|j| recent[(j * recent.len()) / N_REP].clone())
        .collect();
    Some((mean, reps))
}

/// Whether a window's end should re-centre: the mean σ̂² of the window's recent half (`s2`
/// holds one per iteration), times m_now/m_next when the next window's m is known (σ̂² ∝ 1/m),
/// is above `bar`; always when `bar` is 0 or that mean is not finite.
fn recentre_worth(s2: &[f64], m_now: Option<usize>, m_next: Option<usize>, bar: f64) -> bool {
    let recent = &s2[s2.len() / 2..];
    let mut v = recent.iter().sum::<f64>() / recent.len().max(1) as f64;
    if let (Some(a), Some(b)) = (m_now, m_next) {
        v *= a as f64 / b.max(1) as f64;
    }
    let below = v <= bar;
    bar == 0.0 || !below
}

impl EcsWarmup {
    /// End of a warm-up window: recentre, new metric, new m, restart dual averaging.
    fn end_window(
        &mut self,
        kernel: &mut HmcEcs,
        model: &dyn DataModel,
        state: &mut HmcEcsState,
        rng: &mut ChainRng,
    ) -> u64 {
        let d = model.dim();
        let Some((mean, reps)) = recent_mean_and_reps(&self.window, d) else {
            return 0;
        };
        let mut evals = 0u64;
        // The automatic m's pilot data, drawn once: m is chosen at the centre the next window
        // uses, and also at the current one when that decides on the re-centring.
        let pilot = self.cfg.m.is_none().then(|| draw_pilot(model.n(), rng));
        let m_at = |cv: &ControlVariates, evals: &mut u64| {
            pilot.as_ref().map(|p| {
                let (m, ev) = m_from_pilot(model, cv, &reps, &self.cfg, p);
                *evals += ev;
                m
            })
        };
        // A window whose σ̂² stayed under `recentre_above` gains little from a new centre (the
        // perturbation is already small): the full pass is skipped (DESIGN.md, departures).
        // σ̂² of the window's recent half (where the new centre would come from), at the m the
        // next window runs with (σ̂² ∝ 1/m); a non-finite σ̂² re-centres. `recentre_above` = 0
        // (the paper's rule, and always for the signed variant) needs no decision.
        let mut m_here = None;
        let worth = self.cfg.recentre
            && (self.cfg.recentre_above == 0.0 || {
                m_here = m_at(&kernel.cv, &mut evals);
                let m_now = match &kernel.estimator {
                    EcsEstimator::Perturbed(e) => Some(e.m()),
                    EcsEstimator::Signed { .. } => None,
                };
                recentre_worth(&self.window_s2, m_now, m_here, self.cfg.recentre_above)
            });
        let mut moved = false;
        if worth {
            // The new cache in the buffers of the centre before the current one (the current
            // one stays in use until the new one is built).
            let spare = self.spare_cv.take();
            if let Ok(cv) = ControlVariates::new_reusing(model, &mean, self.cfg.order, spare) {
                evals += cv.full_pass_cost();
                let d_prec = {
                    let mut h = cv.sum_hess().to_vec();
                    model.log_prior_hess(&mean, &mut h);
                    h.iter().map(|x| -x).collect::<Vec<f64>>()
                };
                if Cholesky::new(&d_prec, d).is_ok() {
                    kernel.metric = metric_from_precision(&d_prec, d);
                }
                self.spare_cv = Some(core::mem::replace(&mut kernel.cv, cv));
                moved = true;
            }
        }
        let m_new = if moved || m_here.is_none() {
            m_at(&kernel.cv, &mut evals)
        } else {
            m_here
        };
        if let Some(m) = m_new {
            if let EcsEstimator::Perturbed(e) = &kernel.estimator {
                if e.m() != m {
                    if let Ok(ne) = DiffEstimator::new(model.n(), m, self.cfg.blocks.min(m)) {
                        kernel.estimator = EcsEstimator::Perturbed(ne);
                    }
                }
            }
        }
        evals += kernel.refresh(rng, model, state);
        if self.da.is_some() {
            self.da = Some(DualAveraging::new(self.cfg.target_accept, kernel.step_size));
        }
        self.window.clear();
        self.window_s2.clear();
        evals
    }

    fn finish_warmup(
        &mut self,
        kernel: &mut HmcEcs,
        model: &dyn DataModel,
        state: &mut HmcEcsState,
        rng: &mut ChainRng,
    ) -> u64 {
        let mut evals = 0;
        self.spare_cv = None;
        if let Some(da) = &self.da {
            let eps = da.final_step_size().clamp(1e-10, 1e3);
            kernel.step_size = eps;
            match self.cfg.n_leapfrog {
                // NUTS chooses its own length: it keeps ε̄.
                None if self.cfg.traj_exact && self.cfg.nuts_depth.is_none() => {
                    (kernel.n_leapfrog, kernel.step_size) =
                        crate::kernel::hmc::exact_steps(self.cfg.traj_len, eps);
                }
                None => kernel.n_leapfrog = crate::kernel::hmc::auto_steps(self.cfg.traj_len, eps),
                Some(_) => {}
            }
        }
        self.da = None;
        if self.cfg.signed {
            let (mean, reps) = recent_mean_and_reps(&self.window, model.dim())
                .unwrap_or_else(|| (state.position().to_vec(), vec![state.position().to_vec()]));
            // an error keeps the perturbed kernel; cannot happen with validated settings
            if let Ok(ev) = switch_to_signed(&self.cfg, kernel, model, state, rng, &mean, &reps) {
                evals += ev;
            }
        }
        self.window.clear();
        self.window_s2.clear();
        evals
    }
}

impl Warmup<HmcEcs, Arc<dyn DataModel>> for EcsWarmup {
    fn adapt(
        &mut self,
        t: usize,
        kernel: &mut HmcEcs,
        model: &Arc<dyn DataModel>,
        state: &mut HmcEcsState,
        info: &mut StepInfo,
        rng: &mut ChainRng,
    ) -> Cost {
        let mut extra = 0u64;
        if let Some(da) = &mut self.da {
            let eps = da.update(info.accept_prob).clamp(1e-10, 1e3);
            kernel.step_size = eps;
            if self.cfg.n_leapfrog.is_none() {
                kernel.n_leapfrog = crate::kernel::hmc::auto_steps(self.cfg.traj_len, eps);
            }
        }
        self.window.push(state.position().to_vec());
        let s2 = info.extra[0];
        self.window_s2
            .push(if s2.is_finite() { s2 } else { f64::INFINITY });
        let iter = t + 1;
        let w = self.cfg.windows.min(self.warmup).max(1);
        let k = (iter * w) / self.warmup;
        let boundary = (k * self.warmup) / w == iter;
        if iter == self.warmup {
            extra += self.finish_warmup(kernel, &**model, state, rng);
        } else if boundary {
            extra += self.end_window(kernel, &**model, state, rng);
        }
        Cost {
            lik_evals: extra,
            grad_evals: extra,
        }
    }
    /// The configured kind decides: a signed chain's kernel switches to the block-Poisson
    /// estimator only at the end of warm-up.
    fn describe(&self) -> Option<Description> {
        let cfg = &self.cfg;
        let mut v = if cfg.signed {
            vec!["n_batches", "u_accept", "data_fraction"]
        } else {
            vec!["sigma2", "u_accept", "data_fraction"]
        };
        if cfg.nuts_depth.is_some() {
            v.push("tree_depth");
        } else if !cfg.signed && !cfg.full_energy {
            // Which of the G blocks of u the u-step refreshed (−1: refresh rejected).
            v.push("refreshed_block");
        }
        Some(Description {
            extra_names: v,
            signed: cfg.signed,
            exact: cfg.signed || cfg.full_energy,
        })
    }
}

/// Build an `hmc-ecs` (`signed = false`) or `hmc-ecs-signed` chain from registry settings
/// (every key must be one of the sampler's; an unknown key is an error).
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    rng: &mut ChainRng,
    signed: bool,
    sharing: Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let cfg = EcsConfig::from_settings(config.settings, signed)?;
    config.settings.check_all_used()?;
    // A subsample (drawn with replacement) larger than the data costs more than a full pass
    // and would be allocated up front: refuse it.
    let n = model.n();
    let sizes = [
        (if signed { "m_warmup" } else { "m" }, cfg.m.unwrap_or(0)),
        ("m", if signed { cfg.m_signed } else { 0 }),
    ];
    if let Some((key, m)) = sizes.into_iter().find(|&(_, m)| m > n) {
        return Err(Error::setting(
            key,
            alloc::format!("{m} is more than the {n} rows of the data (m ≤ n)"),
        ));
    }
    Ok(Box::new(EcsChain::new_sharing(
        model,
        cfg,
        config.warmup,
        rng,
        sharing,
    )?))
}

#[cfg(test)]
mod tests {
    use super::recentre_worth;

    #[test]
    fn recentre_worth_reads_the_recent_half_at_the_next_m() {
        // Only the recent half counts: a large σ̂² in the first half does not re-centre.
        assert!(!recentre_worth(&[5.0, 5.0, 0.001, 0.001], None, None, 0.01));
        assert!(recentre_worth(&[0.0, 0.0, 0.02, 0.02], None, None, 0.01));
        // Odd lengths: the recent half is the longer one (window[len/2..], as the mean's).
        assert!(recentre_worth(&[0.0, 0.02, 0.02], None, None, 0.01));
        // σ̂² ∝ 1/m: 0.004 at m = 1 300 is 0.052 at the next window's m = 100.
        assert!(!recentre_worth(
            &[0.004, 0.004],
            Some(1300),
            Some(1300),
            0.01
        ));
        assert!(recentre_worth(&[0.004, 0.004], Some(1300), Some(100), 0.01));
        assert!(!recentre_worth(
            &[0.004, 0.004],
            Some(100),
            Some(1300),
            0.01
        ));
        // A non-finite σ̂², and the paper's rule (bar 0), always re-centre.
        assert!(recentre_worth(&[0.0, f64::INFINITY], None, None, 0.01));
        assert!(recentre_worth(&[0.0, f64::NAN], None, None, 0.01));
        assert!(recentre_worth(&[0.0, 0.0], None, None, 0.0));
        // No iteration recorded: re-centre only under the paper's rule.
        assert!(!recentre_worth(&[], Some(100), Some(100), 0.01));
    }
}
