//! `tallmc repro EXPERIMENT [--quick] --out DIR`: paper reproductions.
//!
//! `hmc-ecs`: Dang, Quiroz, Kohn, Tran & Villani (2019), HIGGS experiment (§6, Tables 1–2), on
//! HIGGS-like synthetic logistic data (the real HIGGS file is 2.6 GB): perturbed and signed
//! HMC-ECS against full-data HMC and NUTS, with the paper's cost CT = IF × evaluations and the
//! relative cost RCT = CT_other/CT_perturbed (min / median / max over parameters).

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
        "Seita et al. 2017 Table 1: average final minibatch size of MHminibatch, AustereMH and \
         MHSubLhd on the Gaussian mixture (N = 10^6, K = 10^4; --quick: N = 10^5, K = 10^3)",
    ),
];

/// `tallmc repro`.
pub fn repro(a: &ReproArgs) -> Result<(), CliError> {
    let Some(name) = &a.experiment else {
        let mut text = String::new();
        for (n, d) in EXPERIMENTS {
            text.push_str(&format!("{n}  {d}\n"));
        }
        return super::list::emit(&text);
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
        "hmc-ecs" => hmc_ecs(a, out),
        "smh" => smh(a, out),
        "minibatch-mh" => minibatch_mh(a, out),
        _ => Err(CliError::internal(format!(
            "experiment `{name}` is listed but not implemented"
        ))),
    }
}

/// One sampler's run in the `hmc-ecs` experiment.
struct Row {
    label: &'static str,
    sampler: &'static str,
    settings: Vec<String>,
    /// Kept draws, `draws[k][j]`.
    draws: Vec<Vec<f64>>,
    signs: Vec<f64>,
    accept: f64,
    /// Mean u-acceptance (HMC-ECS), NaN otherwise.
    u_accept: f64,
    /// Mean subsample size / n per kept iteration (HMC-ECS), NaN otherwise.
    subsample_fraction: f64,
    /// Sampling-phase full-data passes per kept iteration, max(lik, grad) evaluations / n.
    passes_per_iter: f64,
    /// Density + gradient evaluations of the whole run (setup, warm-up, sampling).
    evals_total: u64,
    seconds: f64,
    resolved: Vec<(&'static str, f64)>,
    /// IF per parameter (raw draws).
    ifs: Vec<f64>,
    tau: f64,
}

impl Row {
    fn if_mean(&self) -> f64 {
        self.ifs.iter().sum::<f64>() / self.ifs.len().max(1) as f64
    }
    /// 1/(2τ̂ − 1)² for signed samplers, 1 otherwise.
    fn sign_factor(&self) -> f64 {
        if self.tau.is_nan() {
            1.0
        } else {
            let s = 2.0 * self.tau - 1.0;
            1.0 / (s * s)
        }
    }
    /// CT of parameter j: IF_j/(2τ̂−1)² × evaluations.
    fn ct(&self, j: usize) -> f64 {
        self.ifs[j] * self.sign_factor() * self.evals_total as f64
    }
    fn ct_mean(&self) -> f64 {
        self.if_mean() * self.sign_factor() * self.evals_total as f64
    }
    fn ess(&self) -> f64 {
        self.draws.len() as f64 / self.if_mean()
    }
}

#[allow(clippy::too_many_arguments)]
fn run_sampler(
    model: &Arc<dyn DataModel>,
    label: &'static str,
    sampler: &'static str,
    kv: Vec<String>,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> Result<Row, CliError> {
    let mut s = Settings::new();
    for p in &kv {
        s.insert_pair(p)
            .map_err(|e| CliError::internal(format!("{sampler}: {e}")))?;
    }
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    let n = model.n();
    let mut rng = chain_rng(seed, 0);
    let t0 = Instant::now();
    let mut chain = registry::build_chain(&config, model.clone(), &mut rng)
        .map_err(|e| CliError::internal(format!("{sampler}: {e}")))?;
    let extra = chain.extra_names();
    let iu = extra.iter().position(|e| *e == "u_accept");
    let idf = extra.iter().position(|e| *e == "data_fraction");
    let signed = chain.signed();
    let mut out = Vec::with_capacity(draws);
    let mut signs = Vec::with_capacity(draws);
    let (mut acc, mut ua, mut df) = (0.0, 0.0, 0.0);
    let (samp, warm) = run_chain(chain.as_mut(), &mut rng, draws, |ph, _, th, info| {
        if ph == Phase::Sampling {
            out.push(th.to_vec());
            signs.push(info.sign);
            acc += info.accept_prob;
            if let Some(i) = iu {
                ua += info.extra.get(i).copied().unwrap_or(f64::NAN);
            }
            if let Some(i) = idf {
                df += info.extra.get(i).copied().unwrap_or(f64::NAN);
            }
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    let setup = chain.setup_cost();
    let evals_total = setup.lik_evals
        + setup.grad_evals
        + warm.lik_evals
        + warm.grad_evals
        + samp.lik_evals
        + samp.grad_evals;
    let k = out.len().max(1) as f64;
    let d = model.dim();
    let ifs = (0..d)
        .map(|j| {
            let col: Vec<f64> = out.iter().map(|t| t[j]).collect();
            diag::inefficiency_factor(&[&col])
        })
        .collect();
    let tau = if signed {
        signs.iter().filter(|&&s| s >= 0.0).count() as f64 / k
    } else {
        f64::NAN
    };
    Ok(Row {
        label,
        sampler,
        settings: kv,
        accept: acc / k,
        u_accept: if iu.is_some() { ua / k } else { f64::NAN },
        subsample_fraction: if idf.is_some() { df / k } else { f64::NAN },
        passes_per_iter: samp.full_passes(n) / k,
        evals_total,
        seconds,
        resolved: chain.resolved(),
        ifs,
        tau,
        draws: out,
        signs,
    })
}

fn median(v: &mut [f64]) -> f64 {
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

fn fmt(x: f64) -> String {
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

fn write(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::input(format!("cannot write {}: {}", path.display(), io_msg(&e))))
}

fn hmc_ecs(a: &ReproArgs, out: &Path) -> Result<(), CliError> {
    let d = 29;
    let n = a.n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    let draws_ecs = a.draws.unwrap_or(if a.quick { 1000 } else { 2000 });
    let warm_ecs = draws_ecs / 2;
    // Full-data runs are n times dearer per iteration: fewer draws (IF is per draw, so the
    // comparison stays fair; only its Monte Carlo error grows).
    let draws_full = a.draws.unwrap_or(if a.quick { 500 } else { 1000 });
    let warm_full = draws_full / 2;
    let seed = 2019;
    let t0 = Instant::now();
    eprintln!(
        "simulating HIGGS-like logistic data: n = {n}, d = {d} (intercept + 28 N(0,1) covariates)"
    );
    let table = tallmc_core::simulate::simulate("logistic", n, d, seed, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))?;
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let model = registry::build_model("logistic", &table, &spec, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))?;
    drop(table);

    let mut rows = Vec::new();
    eprintln!("perturbed HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws");
    rows.push(run_sampler(
        &model,
        "HMC-ECS (perturbed)",
        "hmc-ecs",
        vec![],
        warm_ecs,
        draws_ecs,
        seed,
    )?);
    // The paper runs full HMC with the trajectory of HMC-ECS (same L).
    let l = rows[0]
        .resolved
        .iter()
        .find(|(k, _)| *k == "L")
        .map(|&(_, v)| v as usize)
        .filter(|&v| v >= 1)
        .unwrap_or(6);
    eprintln!("signed HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws");
    rows.push(run_sampler(
        &model,
        "HMC-ECS (signed)",
        "hmc-ecs-signed",
        vec![],
        warm_ecs,
        draws_ecs,
        seed,
    )?);
    eprintln!("full-data HMC (L = {l}, dense metric): {warm_full} warm-up + {draws_full} draws");
    rows.push(run_sampler(
        &model,
        "HMC (full data)",
        "hmc",
        vec![format!("L={l}"), "metric=dense".into(), "init=zero".into()],
        warm_full,
        draws_full,
        seed,
    )?);
    eprintln!("full-data NUTS (dense metric): {warm_full} warm-up + {draws_full} draws");
    rows.push(run_sampler(
        &model,
        "NUTS (full data)",
        "nuts",
        vec!["metric=dense".into(), "init=zero".into()],
        warm_full,
        draws_full,
        seed,
    )?);

    // Accuracy against full-data NUTS: max |Δmean|/sd over parameters (sign-weighted for signed).
    let reference = &rows[3];
    let ref_mean: Vec<f64> = (0..d)
        .map(|j| reference.draws.iter().map(|t| t[j]).sum::<f64>() / reference.draws.len() as f64)
        .collect();
    let ref_sd: Vec<f64> = (0..d)
        .map(|j| {
            let m = ref_mean[j];
            let v = reference
                .draws
                .iter()
                .map(|t| (t[j] - m).powi(2))
                .sum::<f64>()
                / (reference.draws.len().max(2) - 1) as f64;
            v.sqrt()
        })
        .collect();
    let dmean = |r: &Row| {
        let w: Vec<f64> = if r.tau.is_nan() {
            vec![1.0; r.draws.len()]
        } else {
            r.signs.clone()
        };
        let sw: f64 = w.iter().sum();
        (0..d)
            .map(|j| {
                let m = r.draws.iter().zip(&w).map(|(t, w)| t[j] * w).sum::<f64>() / sw;
                (m - ref_mean[j]).abs() / ref_sd[j]
            })
            .fold(0.0, f64::max)
    };

    // Table 2-like: per-sampler statistics.
    let mut csv = String::from(
        "sampler,settings,draws,accept,u_accept,L,eps,m_or_lambda,IF_mean,ESS,tau_hat,subsample_fraction_pct,full_passes_per_iter,evals_total,seconds,ess_per_second,CT,CT_over_perturbed,max_abs_dmean_over_sd_vs_nuts\n",
    );
    let ct0 = rows[0].ct_mean();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# tallmc repro hmc-ecs{}\n\nHIGGS-like synthetic logistic regression, n = {n}, d = {d}, seed {seed}; one chain per sampler.\n\
         HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws; full-data HMC/NUTS: {warm_full} warm-up + {draws_full} draws.\n\
         Evaluations = per-datum density + gradient evaluations of the whole run (setup, warm-up, sampling);\n\
         CT = IF × evaluations (signed: IF/(2τ̂−1)² × evaluations); IF from raw draws (`diag::inefficiency_factor`).\n",
        if a.quick { " --quick" } else { "" }
    );
    md.push_str("| sampler | accept α_θ | α_u | L | ε | m (perturbed) / λ (signed) | IF (mean) | ESS | τ̂ | 100·(subsample/n) | full-data passes / iter | evaluations | seconds | ESS/s | CT | CT / CT_perturbed | max abs Δmean/sd vs NUTS |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let get = |k: &str| {
            r.resolved
                .iter()
                .find(|(n, _)| *n == k)
                .map(|&(_, v)| v)
                .unwrap_or(f64::NAN)
        };
        let m_or_l = if r.sampler == "hmc-ecs-signed" {
            get("lambda")
        } else {
            get("m")
        };
        let l = if r.sampler == "nuts" {
            f64::NAN
        } else if r.sampler == "hmc" {
            l as f64
        } else {
            get("L")
        };
        let ess = r.ess();
        let cells = [
            fmt(r.accept),
            fmt(r.u_accept),
            fmt(l),
            fmt(get("eps")),
            fmt(m_or_l),
            fmt(r.if_mean()),
            fmt(ess),
            fmt(r.tau),
            fmt(100.0 * r.subsample_fraction),
            fmt(r.passes_per_iter),
            format!("{}", r.evals_total),
            fmt(r.seconds),
            fmt(ess / r.seconds),
            fmt(r.ct_mean()),
            fmt(r.ct_mean() / ct0),
            fmt(dmean(r)),
        ];
        let _ = writeln!(md, "| {} | {} |", r.label, cells.join(" | "));
        let _ = writeln!(
            csv,
            "{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.sampler,
            r.settings.join(" "),
            r.draws.len(),
            r.accept,
            r.u_accept,
            l,
            get("eps"),
            m_or_l,
            r.if_mean(),
            ess,
            r.tau,
            100.0 * r.subsample_fraction,
            r.passes_per_iter,
            r.evals_total,
            r.seconds,
            ess / r.seconds,
            r.ct_mean(),
            r.ct_mean() / ct0,
            dmean(r)
        );
    }

    // Table 1-like: RCT = CT_A/CT_perturbed per parameter, min / median / max.
    let rct: Vec<[f64; 3]> = rows[1..]
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = (0..d).map(|j| r.ct(j) / rows[0].ct(j)).collect();
            let med = median(&mut v);
            [v[0], med, v[v.len() - 1]]
        })
        .collect();
    md.push_str("\nRelative cost RCT = CT_A / CT_perturbed-HMC-ECS over the 29 parameters (> 1: perturbed HMC-ECS is cheaper), as in the paper's Table 1.\n\n");
    md.push_str("| RCT | Signed HMC-ECS | HMC (full data) | NUTS (full data) | SG-HMC | SGLD |\n|---|---|---|---|---|---|\n");
    let mut rct_csv = String::from("stat,signed_hmc_ecs,hmc_full,nuts_full,sghmc,sgld\n");
    for (i, stat) in ["min", "median", "max"].iter().enumerate() {
        let _ = writeln!(
            md,
            "| {stat} | {} | {} | {} | not implemented | not implemented |",
            fmt(rct[0][i]),
            fmt(rct[1][i]),
            fmt(rct[2][i])
        );
        let _ = writeln!(
            rct_csv,
            "{stat},{},{},{},,",
            rct[0][i], rct[1][i], rct[2][i]
        );
    }
    let _ = writeln!(
        md,
        "\nSG-HMC and SGLD are not implemented in tallmc yet, so their columns are empty.\n\
         Paper (HIGGS, n = 10.5M, m = 1,300): RCT signed 0.8 / 1.15 / 1.95, SG-HMC 2.43 / 2.97 / 4.08, SGLD 3.58 / 12.46 / 326.80;\n\
         IF 2.185 (perturbed), 2.192 (signed), 2.084 (full HMC); α_θ 0.980 / 0.979 / 0.980; L = 6; τ̂ = 1;\n\
         100·(m/n) = 0.012 (perturbed), 0.029 (signed); full HMC is 642.8× (perturbed) and 554.1× (signed) more expensive in CT.\n\
         Total time {:.1} s.",
        t0.elapsed().as_secs_f64()
    );
    write(&out.join("hmc_ecs_table.md"), &md)?;
    write(&out.join("hmc_ecs_samplers.csv"), &csv)?;
    write(&out.join("hmc_ecs_rct.csv"), &rct_csv)?;
    super::list::emit(&md)
}

/// One run of a simple (non-signed) sampler: kept draws, acceptance and sampling-phase cost.
struct SimpleRun {
    draws: Vec<Vec<f64>>,
    accept: f64,
    /// Sampling-phase likelihood evaluations (`Cost::lik_evals`).
    lik_evals: u64,
    /// Mean over kept iterations of the `extra` column named in [`run_simple`] (NaN if absent).
    extra_mean: f64,
    seconds: f64,
}

impl SimpleRun {
    /// Minimum over parameters of `diag::ess_bulk`.
    fn ess_min(&self) -> f64 {
        let d = self.draws.first().map_or(0, Vec::len);
        (0..d)
            .map(|j| {
                let col: Vec<f64> = self.draws.iter().map(|t| t[j]).collect();
                diag::ess_bulk(&[&col])
            })
            .fold(f64::INFINITY, f64::min)
    }
}

#[allow(clippy::too_many_arguments)]
fn run_simple(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[String],
    extra_name: &str,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> Result<SimpleRun, CliError> {
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
    let mut rng = chain_rng(seed, 0);
    let t0 = Instant::now();
    let mut chain = registry::build_chain(&config, model.clone(), &mut rng)
        .map_err(|e| CliError::internal(format!("{sampler}: {e}")))?;
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
        extra_mean: if ix.is_some() { ex / k } else { f64::NAN },
        seconds,
    })
}

/// Logistic regression data of the SMH paper (spec 004 §5.2): x_ij ~ N(0, 1), no intercept,
/// y_i ~ Bernoulli(σ(x_iᵀ1_d)), flat prior.
fn smh_logistic(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    use tallmc_core::data::Design;
    use tallmc_core::model::{prior::Prior, Glm, Logistic};
    use tallmc_core::rng::uniform;
    let mut rng = chain_rng(seed, 0);
    let x: Vec<f64> = (0..n * d)
        .map(|_| tallmc_core::dist::std_normal(&mut rng))
        .collect();
    let y = (0..n)
        .map(|i| {
            let eta: f64 = x[i * d..(i + 1) * d].iter().sum();
            let p = 1.0 / (1.0 + (-eta).exp());
            if uniform(&mut rng) < p {
                1.0
            } else {
                0.0
            }
        })
        .collect();
    let names = (0..d).map(|j| format!("x{j}")).collect();
    Arc::new(Glm::new(
        Design { n, d, x, y, names },
        Logistic,
        Prior::Flat,
    ))
}

fn smh(a: &ReproArgs, out: &Path) -> Result<(), CliError> {
    let d = 10;
    let seed = 2019;
    let max_log2 = if a.quick { 16 } else { 20 };
    let ns: Vec<usize> = match a.n {
        Some(n) => vec![n],
        None => (12..=max_log2).map(|k| 1usize << k).collect(),
    };
    let draws = a.draws.unwrap_or(if a.quick { 2000 } else { 5000 });
    let warmup = draws / 2;
    let t0 = Instant::now();
    let methods: [(&str, &str, Vec<String>); 4] = [
        ("SMH-1 (rw)", "smh-1", vec!["proposal=rw".into()]),
        ("SMH-2 (rw)", "smh-2", vec!["proposal=rw".into()]),
        ("SMH-2 (pcn)", "smh-2", vec!["proposal=pcn".into()]),
        (
            "MH (rw; full data)",
            "smh-2",
            vec!["proposal=rw".into(), "truncation=0".into()],
        ),
    ];
    let mut csv = String::from(
        "n,method,sampler,settings,draws,lik_evals_per_iter,points_per_iter,accept,ess_min,ess_per_1000_lik_evals,ess_per_second,seconds\n",
    );
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# tallmc repro smh{}\n\nLogistic regression, d = {d}, x_ij ~ N(0,1), θ₀ = 1_d, flat prior, seed {seed}; \
         one chain per method, {warmup} warm-up + {draws} kept iterations.\n\
         lik evals / iter = sampling-phase `lik_evals` per kept iteration (SMH counts 2 per factor \
         evaluated: π̃_i at θ and θ'; points / iter = half of it; full-data MH counts n per iteration, θ's value cached).\n\
         ESS = min over the {d} parameters of `diag::ess_bulk`; ESS / 1000 evals uses sampling-phase evaluations only; ESS / s uses the whole run's wall time (setup with mode search, warm-up, sampling).\n\
         MH is `smh-2` with `truncation=0` (always the full-data MH test, same random-walk proposal).\n",
        if a.quick { " --quick" } else { "" }
    );
    md.push_str("| n | method | lik evals / iter | data points / iter | accept | ESS (min) | ESS / 1000 lik evals | ESS / s |\n");
    md.push_str("|---|---|---|---|---|---|---|---|\n");
    for &n in &ns {
        eprintln!("n = {n}: simulating");
        let model = smh_logistic(n, d, seed);
        for (label, sampler, kv) in &methods {
            eprintln!("n = {n}: {label}");
            let r = run_simple(&model, sampler, kv, "", warmup, draws, seed)?;
            let k = r.draws.len().max(1) as f64;
            let lpi = r.lik_evals as f64 / k;
            // SMH counts 2 evaluations per factor (θ and θ'); full-data MH counts n (θ' only).
            let points = if kv.iter().any(|s| s == "truncation=0") {
                lpi
            } else {
                lpi / 2.0
            };
            let ess = r.ess_min();
            let per_k = ess / (r.lik_evals.max(1) as f64) * 1000.0;
            let per_s = ess / r.seconds;
            let _ = writeln!(
                md,
                "| {n} | {label} | {} | {} | {} | {} | {} | {} |",
                fmt(lpi),
                fmt(points),
                fmt(r.accept),
                fmt(ess),
                fmt(per_k),
                fmt(per_s)
            );
            let _ = writeln!(
                csv,
                "{n},{label},{sampler},\"{}\",{},{lpi},{},{},{ess},{per_k},{per_s},{}",
                kv.join(" "),
                r.draws.len(),
                points,
                r.accept,
                r.seconds
            );
        }
    }
    let _ = writeln!(
        md,
        "\nThe paper (Figs. 3-4) gives plots only: SMH-1 cost per iteration O(1), SMH-2 O(n^-1/2) \
         (decreasing in n), MH O(n); acceptance of SMH-2 with pCN tends to 1. Total time {:.1} s.",
        t0.elapsed().as_secs_f64()
    );
    write(&out.join("smh_table.md"), &md)?;
    write(&out.join("smh.csv"), &csv)?;
    super::list::emit(&md)
}

fn minibatch_mh(a: &ReproArgs, out: &Path) -> Result<(), CliError> {
    use tallmc_core::model::Gmm;
    use tallmc_core::rng::uniform;
    let n = a.n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    let draws = a.draws.unwrap_or(if a.quick { 1000 } else { 3000 });
    let warmup = (draws / 10).max(10);
    // N/K = 100 as in the paper (K = 10^4 at N = 10^6).
    let temperature = (n as f64 / 100.0).max(1.0);
    let seed = 2017;
    let t0 = Instant::now();
    eprintln!("simulating the Gaussian mixture: N = {n}, θ = (0, 1), σₓ² = 2; K = {temperature}");
    let mut rng = chain_rng(seed, 0);
    let sd = 2f64.sqrt();
    let x: Vec<f64> = (0..n)
        .map(|_| {
            let m = if uniform(&mut rng) >= 0.5 { 1.0 } else { 0.0 };
            m + sd * tallmc_core::dist::std_normal(&mut rng)
        })
        .collect();
    let model: Arc<dyn DataModel> = Arc::new(
        // Untempered model: the samplers apply the temperature (setting `temperature`).
        Gmm::new(x, [10.0, 1.0], 2.0, 1.0).map_err(|e| CliError::internal(e.to_string()))?,
    );
    let common = vec![
        "step_size=0.15".to_string(),
        "batch_step=50".into(),
        format!("temperature={temperature}"),
        "init=zero".into(),
    ];
    let methods: [(&str, &str, &[&str], f64); 3] = [
        ("MHminibatch", "mh-minibatch", &[], 182.3),
        ("AustereMH(c)", "austere-mh", &["epsilon=0.005"], 13540.5),
        (
            "MHSubLhd",
            "mh-sublhd",
            &["gamma=1.5", "delta=0.01", "p=2"],
            65758.9,
        ),
    ];
    let mut csv = String::from(
        "method,sampler,n,temperature,draws,avg_batch_size,avg_batch_fraction,paper_avg_batch_size_n1e6,accept,seconds\n",
    );
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# tallmc repro minibatch-mh{}\n\nGaussian mixture (Welling & Teh), θ = (0, 1), σₓ² = 2, prior N(0, diag(10, 1)), N = {n}, temperature K = {temperature} (N/K = 100), seed {seed}.\n\
         Random-walk proposal, std 0.15 per coordinate; batch step m = 50; start at θ = (0, 0); {warmup} warm-up + {draws} kept iterations, one chain per method.\n\
         Average final batch size = mean of StepInfo extra `batch_size` over kept iterations (MHSubLhd excludes its full-data bound).\n",
        if a.quick { " --quick" } else { "" }
    );
    md.push_str("| method | sampler | avg final batch size | batch / N | accept | seconds | paper Table 1 (N = 10^6) |\n|---|---|---|---|---|---|---|\n");
    for (label, sampler, extra, paper) in methods {
        eprintln!("{label}: {warmup} warm-up + {draws} draws");
        let mut kv = common.clone();
        kv.extend(extra.iter().map(|s| s.to_string()));
        let r = run_simple(&model, sampler, &kv, "batch_size", warmup, draws, seed)?;
        let _ = writeln!(
            md,
            "| {label} | {sampler} | {} | {} | {} | {} | {} |",
            fmt(r.extra_mean),
            fmt(r.extra_mean / n as f64),
            fmt(r.accept),
            fmt(r.seconds),
            fmt(paper)
        );
        let _ = writeln!(
            csv,
            "{label},{sampler},{n},{temperature},{},{},{},{paper},{},{}",
            r.draws.len(),
            r.extra_mean,
            r.extra_mean / n as f64,
            r.accept,
            r.seconds
        );
    }
    let _ = writeln!(
        md,
        "\nPaper Table 1 (10 trials × 3000 samples, N = 10^6): MHminibatch 182.3 ± 11.4, AustereMH(c) 13,540.5 ± 1,521.4, MHSubLhd 65,758.9 ± 3,222.6.\n\
         At N = 10^5 with the same N/K the baselines' sizes are expected to be smaller in absolute terms. Total time {:.1} s.",
        t0.elapsed().as_secs_f64()
    );
    write(&out.join("minibatch_mh_table.md"), &md)?;
    write(&out.join("minibatch_mh.csv"), &csv)?;
    super::list::emit(&md)
}
