//! The `smh-1` / `smh-2` samplers: the SMH kernel ([`crate::kernel::smh`]) frozen from the
//! first iteration and started at θ̂, its settings schema and parsing.

use super::driver::{Driver, NoWarmup};
use crate::chain::Chain;
use crate::error::Error;
use crate::kernel::smh::{BoundNorm, Smh, SmhOptions, SmhProposal};
use crate::model::DataModel;
use crate::optim::{ModeOptions, P_MODE_MAX_ITER, P_MODE_MEMORY, P_MODE_METHOD, P_MODE_TOL};
use crate::schema::{ChainConfig, ParamKind, ParamSpec, SamplerInfo};
use crate::settings::Settings;
use alloc::boxed::Box;
use alloc::sync::Arc;

/// A running SMH chain: the frozen kernel from the first iteration (θ̂, bounds and proposal
/// are fixed at construction, so warm-up iterations are ordinary SMH steps), started at θ̂.
pub type SmhChain = Driver<Smh, Arc<dyn DataModel>, NoWarmup>;

impl Driver<Smh, Arc<dyn DataModel>, NoWarmup> {
    /// Build the kernel for `model` and start at θ̂.
    pub fn new(model: Arc<dyn DataModel>, opts: &SmhOptions, warmup: usize) -> Result<Self, Error> {
        let kernel = Smh::new(model.as_ref(), opts)?;
        Ok(Self::from_kernel(kernel, model, warmup))
    }

    /// [`SmhChain::new`] with the kernel shared between a run's chains
    /// ([`crate::sampler::share::Sharing::smh_kernel`]): the same chain.
    pub fn new_sharing(
        model: Arc<dyn DataModel>,
        opts: &SmhOptions,
        warmup: usize,
        mut sharing: crate::sampler::share::Sharing<'_>,
    ) -> Result<Self, Error> {
        let kernel = sharing.smh_kernel(&model, opts)?;
        Ok(Self::from_kernel(kernel, model, warmup))
    }

    /// Run a given kernel (e.g. one from [`Smh::with_theta_hat`]), starting at its θ̂.
    pub fn from_kernel(kernel: Smh, model: Arc<dyn DataModel>, warmup: usize) -> Self {
        let state = kernel.init_state();
        let names = model.param_names();
        let setup = kernel.setup_cost();
        Driver::from_parts(kernel, model, state, NoWarmup, names, warmup, setup)
    }
}

const P_PROPOSAL: ParamSpec = ParamSpec {
    key: "proposal",
    description: "rw: θ + σ·N(0, H⁻¹); pcn: reversible w.r.t. the Laplace approximation; pi1: θ − (σ/2n)∇U(θ̂) + N(0, (σ/n)I), reversible w.r.t. the first-order Taylor approximation (paper eq. 17)",
    kind: ParamKind::Choice(&["rw", "pcn", "pi1"]),
};

const P_SCALE: ParamSpec = ParamSpec {
    key: "scale",
    description: "rw: scale σ relative to the Laplace covariance (auto: 2.38/√d, acceptance ≈ 0.23; the paper: 1); pi1: σ in the covariance (σ/n)·I (default 1)",
    kind: ParamKind::Real {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
    },
};

const P_RHO: ParamSpec = ParamSpec {
    key: "rho",
    description: "pCN autocorrelation ρ ∈ [0, 1) (0: independence proposal from the Laplace fit)",
    kind: ParamKind::Real {
        default: 0.0,
        min: 0.0,
        max: 0.999_999,
    },
};

const P_TRUNC: ParamSpec = ParamSpec {
    key: "truncation",
    description: "full-data MH step when the bound Λ exceeds R (automatic: R = n; inf: never)",
    kind: ParamKind::RealOpen {
        default: f64::NAN,
        min: 0.0,
        max: f64::INFINITY,
        min_open: false,
        max_open: false,
    },
};

const P_BOUND: ParamSpec = ParamSpec {
    key: "bound",
    description: "norms of the Taylor-remainder bound: l2 = ‖xᵢ‖₂‖θ−θ̂‖₂ (tighter in the whitened coordinates of reparam=auto), l1 = maxⱼ|xᵢⱼ|·‖θ−θ̂‖₁ (the paper's eq. 13)",
    kind: ParamKind::Choice(&["l2", "l1"]),
};

/// The settings of `smh-1` and `smh-2`: the proposal, the bounds, and the mode search that
/// centres the Taylor factors ([`MODE_PARAMS`](crate::optim::MODE_PARAMS)).
const SMH_PARAMS: &[ParamSpec] = &[
    P_PROPOSAL,
    P_SCALE,
    P_RHO,
    P_TRUNC,
    P_BOUND,
    P_MODE_METHOD,
    P_MODE_MAX_ITER,
    P_MODE_TOL,
    P_MODE_MEMORY,
];

/// Registry entry of `smh-1`.
pub const SMH_1_INFO: SamplerInfo = SamplerInfo {
    name: "smh-1",
    description: "Scalable Metropolis–Hastings, first-order Taylor factors (Cornish et al. 2019)",
    exact: true,
    signed: false,
    models: &["logistic", "robust"],
    params: SMH_PARAMS,
};

/// Registry entry of `smh-2`.
pub const SMH_2_INFO: SamplerInfo = SamplerInfo {
    name: "smh-2",
    description: "Scalable Metropolis–Hastings, second-order Taylor factors (Cornish et al. 2019)",
    exact: true,
    signed: false,
    models: &["logistic", "robust"],
    params: SMH_PARAMS,
};

/// Read the SMH settings (`proposal`, `scale`, `rho`, `truncation`, `bound`, the `mode_*` of
/// the mode search) for order `order`.
pub fn options_from_settings(s: &Settings, order: usize) -> Result<SmhOptions, Error> {
    let kind = P_PROPOSAL.choice(s)?;
    let proposal = if kind == "pi1" {
        if s.contains("rho") {
            return Err(Error::setting("rho", "has no effect with proposal=pi1"));
        }
        SmhProposal::Pi1 {
            scale: P_SCALE.real(s)?,
        }
    } else if kind == "pcn" {
        if s.contains("scale") {
            return Err(Error::setting("scale", "has no effect with proposal=pcn"));
        }
        SmhProposal::Pcn {
            rho: P_RHO.real(s)?,
        }
    } else {
        if s.contains("rho") {
            return Err(Error::setting("rho", "has no effect with proposal=rw"));
        }
        SmhProposal::RandomWalk {
            // auto (NaN): 2.38/√d, resolved by the kernel.
            scale: P_SCALE.positive_or_auto(s)?,
        }
    };
    let truncation = match s.get_str("truncation") {
        None | Some("auto") | Some("n") => None,
        Some("inf") | Some("infinity") | Some("none") => Some(f64::INFINITY),
        Some(_) => Some(P_TRUNC.real(s)?),
    };
    let norm = match P_BOUND.choice(s)? {
        "l1" => BoundNorm::L1,
        _ => BoundNorm::L2,
    };
    Ok(SmhOptions {
        order,
        proposal,
        truncation,
        mode: ModeOptions::from_settings(s)?,
        norm,
    })
}

/// Build an `smh-1` / `smh-2` chain from the registry, the kernel shared between a run's
/// chains as `sharing` says ([`crate::sampler::share::Sharing`]; `Sharing::Off`: a chain on
/// its own).
pub fn build_chain(
    config: &ChainConfig<'_>,
    model: Arc<dyn DataModel>,
    sharing: crate::sampler::share::Sharing<'_>,
) -> Result<Box<dyn Chain>, Error> {
    let order = match config.sampler {
        "smh-1" => 1,
        "smh-2" => 2,
        other => {
            return Err(Error::Unknown {
                what: "sampler",
                name: other.into(),
            })
        }
    };
    let s = config.settings;
    let opts = options_from_settings(s, order)?;
    s.check_all_used()?;
    Ok(Box::new(SmhChain::new_sharing(
        model,
        &opts,
        config.warmup,
        sharing,
    )?))
}
