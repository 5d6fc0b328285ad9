//! `tallmc repro EXPERIMENT [--quick] --out DIR`: paper reproductions.
//!
//! `hmc-ecs`: Dang, Quiroz, Kohn, Tran & Villani (2019), HIGGS experiment (§6, Tables 1–2), on
//! HIGGS-like synthetic logistic data (the real HIGGS file is 2.6 GB): perturbed and signed
//! HMC-ECS against full-data HMC and NUTS, with the paper's cost CT = IF × evaluations and the
//! relative cost RCT = CT_other/CT_perturbed (min / median / max over parameters).

mod hmc_ecs;
mod minibatch_mh;
mod pf_sgld;
mod qnhmc;
mod sgmcmc;
mod smh;

use super::{io_msg, CliError};
use clap::Args;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tallmc_core::chain::{run_chain, Phase};
use tallmc_core::data::DesignSpec;
use tallmc_core::diag;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{self, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;

/// Arguments of `tallmc repro`.
#[derive(Args, Debug)]
pub struct ReproArgs {
    /// Experiment name; omit to list the experiments.
    pub experiment: Option<String>,
    /// A shorter version of the experiment (fewer data, draws and repetitions).
    #[arg(long)]
    pub quick: bool,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override the number of rows (for tests).
    #[arg(long, hide = true)]
    pub n: Option<usize>,
    /// Override the kept draws per sampler (warm-up is half of it; for tests).
    #[arg(long, hide = true)]
    pub draws: Option<usize>,
}

/// Every experiment: (name, description).
const EXPERIMENTS: &[(&str, &str)] = &[
    (
        "pf-sgld",
        "Putcha 2024 Table 3.5.1 / A.2.4: SGLD with full-sequence, unbuffered and buffered \
         (S = 40, B = 10) particle and Kalman gradients on synthetic LGSSM and SV series, \
         T = 10^4 and 10^5 (--quick: 10^3, 10^4), log10 KSD at equal compute",
    ),
    (
        "hmc-ecs",
        "Dang et al. 2019 Tables 1-2: perturbed/signed HMC-ECS vs full-data HMC and NUTS, HIGGS-like \
         logistic regression (n = 10^6, d = 29; --quick: n = 10^5)",
    ),
    (
        "smh",
        "Cornish et al. 2019 Fig. 3-4: SMH-1, SMH-2 and full-data MH on logistic regression, d = 10, \
         n = 2^12..2^20 (--quick: 2^12..2^16): likelihood evaluations / iteration, acceptance, ESS \
         per 1000 evaluations and per second",
    ),
    (
        "minibatch-mh",
        "Seita et al. 2017 Tables 1-2: average final minibatch size of MHminibatch, AustereMH (c, nc) and \
         MHSubLhd on the Gaussian mixture (N = 10^6, K = 10^4; --quick: N = 10^5, K = 10^3) and on \
         logistic regression, synthetic MNIST-like 1 vs 7 (N = 13 000, K = 100)",
    ),
    (
        "sgmcmc",
        "Putcha 2024 Ch.4-5: SGLD, SGLD-CV and their preferential / DPP variants on imbalanced \
         (95/5) logistic regression, N = 10^3: gradient pseudo-variance and KSD at equal data \
         passes vs exact NUTS (200 passes, 4 chains; --quick: 20 passes, 2 chains)",
    ),
    (
        "qnhmc",
        "Fu et al. 2016 Table 1: QNHMC vs HMC at the paper's step, tuned HMC, tuned QNHMC and \
         preconditioned HMC on the 100-d Gaussian 11^T + 4I: lag-1 autocorrelation and ESS along 1 \
         and orthogonal, gradients per ESS (--quick: 2000 + 5000 iterations)",
    ),
];

/// `tallmc repro`.
pub fn repro(a: &ReproArgs) -> Result<(), CliError> {
    let Some(name) = &a.experiment else {
        let mut text = String::new();
        for (n, d) in EXPERIMENTS {
            text.push_str(&format!("{n}  {d}\n"));
        }
        return crate::cmd::list::emit(&text);
    };
    if !EXPERIMENTS.iter().any(|(n, _)| n == name) {
        let names: Vec<&str> = EXPERIMENTS.iter().map(|(n, _)| *n).collect();
        return Err(CliError::input(format!(
            "unknown experiment `{name}` (available: {})",
            names.join(", ")
        )));
    }
    let Some(out) = &a.out else {
        return Err(CliError::input(
            "--out DIR is required to run an experiment",
        ));
    };
    if a.n == Some(0) {
        return Err(CliError::input("--n: must be at least 1"));
    }
    if a.draws.is_some_and(|d| d < 10) {
        return Err(CliError::input("--draws: must be at least 10"));
    }
    std::fs::create_dir_all(out)
        .map_err(|e| CliError::input(format!("--out {}: {}", out.display(), io_msg(&e))))?;
    match name.as_str() {
        "hmc-ecs" => hmc_ecs::run(a, out),
        "smh" => smh::run(a, out),
        "minibatch-mh" => minibatch_mh::run(a, out),
        "qnhmc" => qnhmc::run(a, out),
        "pf-sgld" => pf_sgld::run(a, out),
        "sgmcmc" => sgmcmc::run(a, out),
        _ => Err(CliError::internal(format!(
            "experiment `{name}` is listed but not implemented"
        ))),
    }
}

pub(crate) fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

pub(crate) fn fmt(x: f64) -> String {
    if x.is_nan() {
        "–".into()
    } else if x.fract() == 0.0 && x.abs() < 1e9 {
        format!("{x:.0}")
    } else if x != 0.0 && (x.abs() >= 1e5 || x.abs() < 1e-3) {
        format!("{x:.3e}")
    } else {
        format!("{x:.4}")
    }
}

pub(crate) fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::input(format!("cannot write {}: {}", path.display(), io_msg(&e))))
}

/// One run of a simple (non-signed) sampler: kept draws, acceptance and sampling-phase cost.
pub(crate) struct SimpleRun {
    pub(crate) draws: Vec<Vec<f64>>,
    pub(crate) accept: f64,
    /// Sampling-phase likelihood evaluations (`Cost::lik_evals`).
    pub(crate) lik_evals: u64,
    /// Sampling-phase gradient evaluations (`Cost::grad_evals`).
    pub(crate) grad_evals: u64,
    /// Mean over kept iterations of the `extra` column named in [`run_simple`] (NaN if absent).
    pub(crate) extra_mean: f64,
    pub(crate) seconds: f64,
}

/// Chain 0 of `sampler` on `model` with `key=value` settings `kv` (a reproduction's own
/// settings: an error is a bug of the reproduction, not of the user's input).
pub(crate) fn build_chain(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[String],
    warmup: usize,
    rng: &mut tallmc_core::rng::ChainRng,
) -> Result<Box<dyn tallmc_core::chain::Chain>, CliError> {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p)
            .map_err(|e| CliError::internal(format!("{sampler}: {e}")))?;
    }
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    registry::build_chain(&config, model.clone(), rng)
        .map_err(|e| CliError::internal(format!("{sampler}: {e}")))
}

/// The sampler's resolved value of `key` as a whole number ≥ 1, or `default`.
pub(crate) fn resolved_count(resolved: &[(&'static str, f64)], key: &str, default: usize) -> usize {
    resolved
        .iter()
        .find(|(k, _)| *k == key)
        .map(|&(_, v)| v as usize)
        .filter(|&v| v >= 1)
        .unwrap_or(default)
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn run_simple(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[String],
    extra_name: &str,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> Result<SimpleRun, CliError> {
    let mut rng = chain_rng(seed, 0);
    let t0 = Instant::now();
    let mut chain = build_chain(model, sampler, kv, warmup, &mut rng)?;
    let ix = chain.extra_names().iter().position(|e| *e == extra_name);
    let mut out = Vec::with_capacity(draws);
    let (mut acc, mut ex) = (0.0, 0.0);
    let (samp, _warm) = run_chain(chain.as_mut(), &mut rng, draws, |ph, _, th, info| {
        if ph == Phase::Sampling {
            out.push(th.to_vec());
            acc += info.accept_prob;
            if let Some(i) = ix {
                ex += info.extra.get(i).copied().unwrap_or(f64::NAN);
            }
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    let k = out.len().max(1) as f64;
    Ok(SimpleRun {
        draws: out,
        accept: acc / k,
        lik_evals: samp.lik_evals,
        grad_evals: samp.grad_evals,
        extra_mean: if ix.is_some() { ex / k } else { f64::NAN },
        seconds,
    })
}
