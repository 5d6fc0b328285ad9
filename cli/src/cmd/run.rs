//! `tallmc run`: chains on threads over a CSV data set, then draws.csv, summary.csv, stats.csv
//! and run.json in the output directory.
//!
//! Chain c uses the stream `chain_rng(seed, c)` both to build (its starting point) and to step,
//! so the same seed gives the same draws whatever the thread scheduling.

use super::{io_msg, settings_from, unknown, CliError, ErrorContext};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;
use tallmc_cli::csvdata::{parse_csv_located, push_f64, push_field, write_header};
use tallmc_core::chain::{run_chain, Chain, Cost, Phase};
use tallmc_core::data::DesignSpec;
use tallmc_core::diag;
use tallmc_core::kernel::StepInfo;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{self, ChainConfig, ParamKind, ParamSpec};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::settings::Settings;

/// Arguments of `tallmc run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// CSV data file with a header row.
    #[arg(long, value_name = "FILE")]
    pub data: PathBuf,
    /// Model (see `tallmc models`).
    #[arg(long)]
    pub model: String,
    /// Response column (required by regression models).
    #[arg(long, value_name = "COLUMN")]
    pub response: Option<String>,
    /// Sampler (see `tallmc samplers`).
    #[arg(long)]
    pub sampler: String,
    /// Number of chains, each on its own thread.
    #[arg(long, default_value_t = 4)]
    pub chains: usize,
    /// Warm-up (adaptation) iterations per chain, discarded.
    #[arg(long, default_value_t = 1000)]
    pub warmup: usize,
    /// Kept draws per chain.
    #[arg(long, default_value_t = 1000)]
    pub draws: usize,
    /// Seed; chain c uses stream (seed, c).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Model or sampler setting, repeatable (see `tallmc models`, `tallmc samplers`).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Centre and scale every feature to mean 0, sd 1.
    #[arg(long)]
    pub standardize: bool,
    /// Do not add an intercept column.
    #[arg(long)]
    pub no_intercept: bool,
    /// Feature columns to use, comma-separated (default: every column except the response).
    #[arg(long, value_delimiter = ',', value_name = "A,B,...")]
    pub features: Option<Vec<String>>,
    /// Output directory (created if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Kept draws (all chains, evenly thinned) from which run.json's kernel Stein discrepancy
    /// is computed with exact scores (cost: K·n per-datum gradients and O(K²d)); 0 skips it.
    /// Default: K = min(1000, max(100, ⌊10⁹/(n·d)⌋)), which bounds the score cost at about
    /// 5 s of CPU for tall data (1000 up to n·d = 10⁶; 100 at n = 10⁶, d = 10).
    #[arg(long, value_name = "K")]
    pub ksd_draws: Option<usize>,
}

/// Upper bound on `--chains`: one thread each.
const MAX_CHAINS: usize = 1024;

/// Everything one chain produced.
struct ChainOutput {
    /// `draws[j][k]`: parameter j at kept draw k.
    draws: Vec<Vec<f64>>,
    signs: Vec<f64>,
    stats: Vec<StepInfo>,
    sampling: Cost,
    warmup: Cost,
    setup: Cost,
    /// The sampler's own choices, final after warm-up ([`Chain::resolved`]).
    resolved: Vec<(&'static str, f64)>,
    /// Seconds: building the chain, warm-up, sampling.
    t_setup: f64,
    t_warmup: f64,
    t_sampling: f64,
}

/// `tallmc run`.
pub fn run(a: &RunArgs) -> Result<(), CliError> {
    let t0 = Instant::now();
    let settings = settings_from(&a.set)?;
    if a.chains == 0 || a.chains > MAX_CHAINS {
        return Err(CliError::input(format!(
            "--chains: {} is outside [1, {MAX_CHAINS}]",
            a.chains
        )));
    }
    if a.draws == 0 {
        return Err(CliError::input("--draws: must be at least 1"));
    }
    if a.draws.checked_add(a.warmup).is_none() {
        return Err(CliError::input("--warmup: too large"));
    }

    // Data first: its errors name the file, line and column.
    let data_name = a.data.display().to_string();
    let bytes = std::fs::read(&a.data).map_err(|e| {
        CliError::input(format!("cannot read data file {data_name}: {}", io_msg(&e)))
    })?;
    let (table, lines) =
        parse_csv_located(&bytes, &data_name).map_err(|e| CliError::input(e.to_string()))?;
    drop(bytes);
    let columns = || table.names.join(", ");
    if let Some(r) = &a.response {
        if table.column_index(r).is_none() {
            return Err(CliError::input(format!(
                "{data_name}: no column \"{r}\" for --response (columns: {})",
                columns()
            )));
        }
    }
    if let Some(fs) = &a.features {
        for (k, f) in fs.iter().enumerate() {
            if table.column_index(f).is_none() {
                return Err(CliError::input(format!(
                    "{data_name}: no column \"{f}\" for --features (columns: {})",
                    columns()
                )));
            }
            if fs[..k].contains(f) {
                return Err(CliError::input(format!(
                    "--features: \"{f}\" is listed twice"
                )));
            }
            if a.response.as_ref() == Some(f) {
                return Err(CliError::input(format!(
                    "--features: \"{f}\" is the response column"
                )));
            }
        }
    }

    // Names.
    let model_info = registry::models()
        .iter()
        .find(|m| m.name == a.model)
        .ok_or_else(|| CliError::input(unknown("model", &a.model)))?;
    let sampler_info = registry::sampler(&a.sampler)
        .map_err(|_| CliError::input(unknown("sampler", &a.sampler)))?;
    registry::check_compatible(sampler_info.name, model_info.name)
        .map_err(|e| CliError::input(e.to_string()))?;
    if model_info.regression && a.response.is_none() {
        return Err(CliError::input(format!(
            "--response COLUMN is required for model `{}`",
            model_info.name
        )));
    }

    let ctx = ErrorContext {
        data: Some(&data_name),
        lines: Some(&lines),
        model: Some(&a.model),
        sampler: Some(&a.sampler),
        settings: Some(&settings),
    };
    let spec = DesignSpec {
        response: a.response.clone().unwrap_or_default(),
        features: a.features.clone(),
        intercept: !a.no_intercept,
        standardize: a.standardize,
    };
    let t_model = Instant::now();
    let mut model =
        registry::build_model(&a.model, &table, &spec, &settings).map_err(|e| ctx.describe(&e))?;
    let model_seconds = t_model.elapsed().as_secs_f64();
    // Cores beyond one per chain split each full-data pass (bit-identical results).
    let pass_threads = pass_threads(a.chains);
    if pass_threads > 1 {
        if let Some(m) = std::sync::Arc::get_mut(&mut model) {
            m.set_parallel(std::sync::Arc::new(tallmc_cli::parallel::Threads::new(
                pass_threads,
            )));
        }
    }
    let n = model.n();
    drop(table);
    if let Some(info) = model.reparam_info() {
        if info.kind == "failed" {
            eprintln!("warning: reparam: {}", info.note);
        }
    }

    // Chain 0 is built here: it validates the sampler settings before any thread starts.
    let t_build = Instant::now();
    let mut rng0 = chain_rng(a.seed, 0);
    let config = ChainConfig {
        sampler: &a.sampler,
        warmup: a.warmup,
        settings: &settings,
    };
    let chain0 = registry::build_reported_chain(&config, model.clone(), &mut rng0)
        .map_err(|e| ctx.describe(&e))?;
    let t_setup0 = t_build.elapsed().as_secs_f64();
    settings.check_all_used().map_err(|e| ctx.describe(&e))?;
    let param_names = chain0.param_names();
    let extra_names: Vec<&'static str> = chain0.extra_names().into_iter().take(4).collect();
    let signed = chain0.signed();
    let exact = chain0.exact();
    if !exact {
        eprintln!(
            "warning: sampler {} with these settings is not exact (its draws do not target the \
             posterior exactly; run.json records \"exact\": false)",
            a.sampler
        );
    }

    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::input(format!("--out {}: {}", a.out.display(), io_msg(&e))))?;

    // Sampling.
    let total_iters = (a.chains * (a.warmup + a.draws)) as u64;
    let bar = progress_bar(total_iters);
    let t_run = Instant::now();
    let mut first = Some((chain0, rng0, t_setup0));
    let outputs: Vec<Result<ChainOutput, CliError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..a.chains)
            .map(|c| {
                let prebuilt = if c == 0 { first.take() } else { None };
                let settings = settings.clone();
                let model = model.clone();
                let bar = bar.clone();
                let sampler = a.sampler.as_str();
                let (warmup, draws, seed) = (a.warmup, a.draws, a.seed);
                scope.spawn(move || {
                    let (mut chain, mut rng, t_setup) = match prebuilt {
                        Some(p) => p,
                        None => {
                            let t = Instant::now();
                            let mut rng = chain_rng(seed, c as u64);
                            let config = ChainConfig {
                                sampler,
                                warmup,
                                settings: &settings,
                            };
                            let chain = registry::build_reported_chain(&config, model, &mut rng)
                                .map_err(|e| CliError::input(format!("chain {c}: {e}")))?;
                            (chain, rng, t.elapsed().as_secs_f64())
                        }
                    };
                    Ok(run_one(chain.as_mut(), &mut rng, draws, t_setup, &bar))
                })
            })
            .collect();
        handles
            .into_iter()
            .enumerate()
            .map(|(c, h)| {
                h.join().unwrap_or_else(|_| {
                    Err(CliError::internal(format!(
                        "chain {c} stopped by an internal error (reported above)"
                    )))
                })
            })
            .collect()
    });
    bar.finish_and_clear();
    let wall_sampling = t_run.elapsed().as_secs_f64();
    let outputs: Vec<ChainOutput> = outputs.into_iter().collect::<Result<_, _>>()?;

    // Output files.
    let out = &a.out;
    write_draws(out, &param_names, signed, &outputs)?;
    let summaries = write_summary(out, &param_names, signed, &outputs)?;
    write_stats(out, &extra_names, &outputs)?;
    let ksd = ksd_json(model.as_ref(), &outputs, signed, a.ksd_draws);
    let warnings = health_warnings(&param_names, &summaries, &outputs);
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let wall_total = t0.elapsed().as_secs_f64();
    let report = RunReport {
        a,
        settings: &settings,
        model_info_params: model_info.params,
        sampler_info_params: sampler_info.params,
        model: model.as_ref(),
        n,
        param_names: &param_names,
        signed,
        exact,
        outputs: &outputs,
        summaries: &summaries,
        wall_sampling,
        wall_total,
        model_seconds,
        ksd,
        warnings: &warnings,
    };
    write_run_json(out, &report)?;
    Ok(())
}

fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "sampling {elapsed_precise} [{bar:40}] {pos}/{len} iterations (eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Drive one chain, keeping post-warm-up draws and step records.
fn run_one(
    chain: &mut dyn Chain,
    rng: &mut ChainRng,
    draws: usize,
    t_setup: f64,
    bar: &ProgressBar,
) -> ChainOutput {
    let d = chain.dim();
    let setup = chain.setup_cost();
    let total = (chain.warmup() + draws) as u64;
    // Touch the shared bar about 200 times per chain, not every iteration.
    let stride = (total / 200).max(1);
    let mut pending = 0u64;
    let mut out_draws = vec![Vec::with_capacity(draws); d];
    let mut signs = Vec::with_capacity(draws);
    let mut stats = Vec::with_capacity(draws);
    let t_start = Instant::now();
    let mut t_warm_end: Option<Instant> = None;
    let (sampling, warmup) = run_chain(chain, rng, draws, |phase, _k, theta, info| {
        if phase == Phase::Sampling {
            if t_warm_end.is_none() {
                t_warm_end = Some(Instant::now());
            }
            for (col, &v) in out_draws.iter_mut().zip(theta) {
                col.push(v);
            }
            signs.push(info.sign);
            stats.push(*info);
        }
        pending += 1;
        if pending >= stride {
            bar.inc(pending);
            pending = 0;
        }
    });
    bar.inc(pending);
    let t_end = Instant::now();
    let t_warm_end = t_warm_end.unwrap_or(t_end);
    ChainOutput {
        draws: out_draws,
        signs,
        stats,
        sampling,
        warmup,
        setup,
        resolved: chain.resolved(),
        t_setup,
        t_warmup: t_warm_end.duration_since(t_start).as_secs_f64(),
        t_sampling: t_end.duration_since(t_warm_end).as_secs_f64(),
    }
}

fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, CliError> {
    std::fs::File::create(path)
        .map(|f| std::io::BufWriter::with_capacity(1 << 16, f))
        .map_err(|e| CliError::input(format!("--out {}: {}", path.display(), io_msg(&e))))
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |e| CliError::input(format!("cannot write {}: {}", path.display(), io_msg(&e)))
}

/// `draws.csv`: chain, draw, every parameter, then `sign` for signed samplers.
fn write_draws(
    dir: &Path,
    names: &[String],
    signed: bool,
    outputs: &[ChainOutput],
) -> Result<(), CliError> {
    let path = dir.join("draws.csv");
    let mut w = create(&path)?;
    let mut header: Vec<&str> = vec!["chain", "draw"];
    header.extend(names.iter().map(|s| s.as_str()));
    if signed {
        header.push("sign");
    }
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let mut line = String::new();
    for (c, o) in outputs.iter().enumerate() {
        for k in 0..o.signs.len() {
            line.clear();
            line.push_str(&format!("{c},{k}"));
            for col in &o.draws {
                line.push(',');
                push_f64(&mut line, col[k]);
            }
            if signed {
                line.push(',');
                push_f64(&mut line, o.signs[k]);
            }
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        }
    }
    w.flush().map_err(write_err(&path))
}

/// `summary.csv`: one row per parameter.
fn write_summary(
    dir: &Path,
    names: &[String],
    signed: bool,
    outputs: &[ChainOutput],
) -> Result<Vec<diag::Summary>, CliError> {
    let path = dir.join("summary.csv");
    let mut w = create(&path)?;
    let header: Vec<&str> = core::iter::once("param")
        .chain(diag::Summary::COLUMNS)
        .collect();
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let signs: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
    let mut all = Vec::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        let chains: Vec<&[f64]> = outputs.iter().map(|o| o.draws[j].as_slice()).collect();
        let s = if signed {
            diag::summarize_signed(&chains, &signs)
        } else {
            diag::summarize(&chains)
        };
        let mut line = String::new();
        push_field(&mut line, name);
        for v in s.values() {
            line.push(',');
            push_f64(&mut line, v);
        }
        line.push('\n');
        w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        all.push(s);
    }
    w.flush().map_err(write_err(&path))?;
    Ok(all)
}

/// Threads per full-data pass: the cores left over when each chain has one
/// (`TALLMC_PASS_THREADS` overrides; 1 = no splitting).
fn pass_threads(chains: usize) -> usize {
    if let Some(t) = std::env::var("TALLMC_PASS_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return t.max(1);
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    (cores / chains.max(1)).max(1)
}

/// The run's convergence warnings ([`diag::health::warnings`]): R-hat, ESS, divergences and
/// stuck chains, each one line naming the worst parameters with a suggestion.
fn health_warnings(
    names: &[String],
    summaries: &[diag::Summary],
    outputs: &[ChainOutput],
) -> Vec<String> {
    let chains: Vec<diag::health::ChainHealth> = outputs
        .iter()
        .map(|o| {
            let cols: Vec<&[f64]> = o.draws.iter().map(Vec::as_slice).collect();
            let divergent = o.stats.iter().filter(|s| s.divergent).count();
            diag::health::ChainHealth::from_columns(&cols, divergent)
        })
        .collect();
    diag::health::warnings(names, summaries, &chains)
}

/// `stats.csv`: one row per kept draw.
fn write_stats(dir: &Path, extras: &[&str], outputs: &[ChainOutput]) -> Result<(), CliError> {
    let path = dir.join("stats.csv");
    let mut w = create(&path)?;
    let mut header = vec![
        "chain",
        "draw",
        "accept_prob",
        "divergent",
        "lik_evals",
        "grad_evals",
        "n_leapfrog",
        "step_size",
        "energy",
    ];
    header.extend_from_slice(extras);
    write_header(&mut w, &header).map_err(write_err(&path))?;
    let mut line = String::new();
    for (c, o) in outputs.iter().enumerate() {
        for (k, s) in o.stats.iter().enumerate() {
            line.clear();
            line.push_str(&format!("{c},{k},"));
            push_f64(&mut line, s.accept_prob);
            line.push_str(&format!(
                ",{},{},{},{},",
                u8::from(s.divergent),
                s.lik_evals,
                s.grad_evals,
                s.n_leapfrog
            ));
            push_f64(&mut line, s.step_size);
            line.push(',');
            push_f64(&mut line, s.energy);
            for e in s.extra.iter().take(extras.len()) {
                line.push(',');
                push_f64(&mut line, *e);
            }
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(write_err(&path))?;
        }
    }
    w.flush().map_err(write_err(&path))
}

/// What run.json reports.
struct RunReport<'a> {
    a: &'a RunArgs,
    settings: &'a Settings,
    model_info_params: &'static [ParamSpec],
    sampler_info_params: &'static [ParamSpec],
    model: &'a dyn DataModel,
    n: usize,
    param_names: &'a [String],
    signed: bool,
    exact: bool,
    outputs: &'a [ChainOutput],
    summaries: &'a [diag::Summary],
    wall_sampling: f64,
    wall_total: f64,
    /// Seconds to build the model (design, and the reparametrisation's mode search).
    model_seconds: f64,
    /// The `ksd` block ([`ksd_json`]).
    ksd: serde_json::Value,
    /// Convergence warnings ([`health_warnings`]), also printed on stderr.
    warnings: &'a [String],
}

/// Every schema parameter with the value in force: the user's, or the default (`auto` when the
/// sampler chooses it).
fn resolved(
    params: &[ParamSpec],
    settings: &Settings,
) -> serde_json::Map<String, serde_json::Value> {
    let given: std::collections::BTreeMap<&str, &str> = settings.iter().collect();
    let mut m = serde_json::Map::new();
    for p in params {
        let v = match given.get(p.key) {
            Some(v) => json!(v),
            None => match p.kind {
                ParamKind::Real { default, .. } if default.is_nan() => json!("auto"),
                ParamKind::Real { default, .. } => json!(default),
                ParamKind::Int { default, min, .. } if default == 0 && min > 0 => json!("auto"),
                ParamKind::Int { default, .. } => json!(default),
                ParamKind::Choice(words) => json!(words.first().copied().unwrap_or("")),
                ParamKind::Bool(b) => json!(b),
            },
        };
        m.insert(p.key.to_string(), v);
    }
    m
}

/// A finite number, or null (JSON has no NaN or infinity).
fn num(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

fn write_run_json(dir: &Path, r: &RunReport<'_>) -> Result<(), CliError> {
    let a = r.a;
    let n = r.n;
    let mut samp = Cost::default();
    let mut warm = Cost::default();
    let mut setup = Cost::default();
    let mut divergences = 0u64;
    let mut accept = 0.0;
    let mut kept = 0usize;
    for o in r.outputs {
        samp.lik_evals += o.sampling.lik_evals;
        samp.grad_evals += o.sampling.grad_evals;
        warm.lik_evals += o.warmup.lik_evals;
        warm.grad_evals += o.warmup.grad_evals;
        setup.lik_evals += o.setup.lik_evals;
        setup.grad_evals += o.setup.grad_evals;
        divergences += o.stats.iter().filter(|s| s.divergent).count() as u64;
        accept += o.stats.iter().map(|s| s.accept_prob).sum::<f64>();
        kept += o.stats.len();
    }
    // The reparametrisation's mode search is done once for all chains: set-up cost.
    let reparam = match r.model.reparam_info() {
        Some(info) => {
            setup.lik_evals += info.cost.lik_evals;
            setup.grad_evals += info.cost.grad_evals;
            json!({
                "kind": info.kind,
                "note": info.note,
                "rows_used": info.rows_used,
                "lik_evals": info.cost.lik_evals,
                "grad_evals": info.cost.grad_evals,
                "hess_evals": info.hess_evals,
                "model_build_seconds": r.model_seconds,
            })
        }
        None => json!({"kind": "none", "note": "this model is sampled in its own coordinates"}),
    };
    let total = Cost {
        lik_evals: samp.lik_evals + warm.lik_evals + setup.lik_evals,
        grad_evals: samp.grad_evals + warm.grad_evals + setup.grad_evals,
    };
    let min_of = |f: fn(&diag::Summary) -> f64| {
        r.summaries.iter().map(f).fold(
            f64::INFINITY,
            |m, v| if v.is_nan() { f64::NAN } else { m.min(v) },
        )
    };
    let min_bulk = min_of(|s| s.ess_bulk);
    let min_tail = min_of(|s| s.ess_tail);
    let max_rhat = r
        .summaries
        .iter()
        .map(|s| s.rhat)
        .fold(f64::NEG_INFINITY, f64::max);
    let t_sampling = r.outputs.iter().map(|o| o.t_sampling).fold(0.0, f64::max);
    let per = |ess: f64, work: f64| if work > 0.0 { ess / work } else { f64::NAN };
    let per_iter_passes = samp.full_passes(n) / kept.max(1) as f64;

    let mut settings = serde_json::Map::new();
    for (k, v) in r.settings.iter() {
        settings.insert(k.to_string(), json!(v));
    }
    let chains: Vec<serde_json::Value> = r
        .outputs
        .iter()
        .enumerate()
        .map(|(c, o)| {
            let mut v = json!({
                "chain": c,
                "setup_seconds": o.t_setup,
                "warmup_seconds": o.t_warmup,
                "sampling_seconds": o.t_sampling,
                "lik_evals": {"setup": o.setup.lik_evals, "warmup": o.warmup.lik_evals, "sampling": o.sampling.lik_evals},
                "grad_evals": {"setup": o.setup.grad_evals, "warmup": o.warmup.grad_evals, "sampling": o.sampling.grad_evals},
                "divergences": o.stats.iter().filter(|s| s.divergent).count(),
                "mean_accept_prob": num(o.stats.iter().map(|s| s.accept_prob).sum::<f64>() / o.stats.len().max(1) as f64),
                "resolved": resolved_json(&o.resolved),
            });
            if r.signed {
                if let Some(m) = v.as_object_mut() {
                    m.insert("tau_hat".into(), num(tau_hat(&[o.signs.as_slice()])));
                }
            }
            v
        })
        .collect();
    let mut doc = json!({
        "tallmc_version": env!("CARGO_PKG_VERSION"),
        "config": {
            "data": a.data.display().to_string(),
            "model": a.model,
            "response": a.response,
            "features": a.features,
            "intercept": !a.no_intercept,
            "standardize": a.standardize,
            "sampler": a.sampler,
            "chains": a.chains,
            "warmup": a.warmup,
            "draws": a.draws,
            "seed": a.seed,
            "ksd_draws": a.ksd_draws,
            "out": a.out.display().to_string(),
            "settings": settings,
            "model_settings": resolved(r.model_info_params, r.settings),
            "sampler_settings": resolved(r.sampler_info_params, r.settings),
        },
        "data": {"n": n, "d": r.model.dim()},
        "params": r.param_names,
        "sampler": {"exact": r.exact, "signed": r.signed},
        "wall_time_seconds": {
            "total": r.wall_total,
            "chains": r.wall_sampling,
            "sampling_max_over_chains": t_sampling,
        },
        "lik_evals": {"setup": setup.lik_evals, "warmup": warm.lik_evals, "sampling": samp.lik_evals, "total": total.lik_evals},
        "grad_evals": {"setup": setup.grad_evals, "warmup": warm.grad_evals, "sampling": samp.grad_evals, "total": total.grad_evals},
        "full_data_passes": {
            "setup": setup.full_passes(n),
            "warmup": warm.full_passes(n),
            "sampling": samp.full_passes(n),
            "total": total.full_passes(n),
        },
        "data_fraction_per_iteration": num(per_iter_passes),
        "divergences": divergences,
        "mean_accept_prob": num(accept / kept.max(1) as f64),
        "min_ess_bulk": num(min_bulk),
        "min_ess_tail": num(min_tail),
        "max_rhat": num(max_rhat),
        "ess_per_second": num(per(min_bulk, t_sampling)),
        "ess_per_second_total": num(per(min_bulk, r.wall_sampling)),
        "ess_per_1000_grad_evals": num(per(min_bulk, samp.grad_evals as f64 / 1000.0)),
        "ess_per_1000_grad_evals_total": num(per(min_bulk, total.grad_evals as f64 / 1000.0)),
        "ess_per_1000_lik_evals": num(per(min_bulk, samp.lik_evals as f64 / 1000.0)),
        "ess_per_full_data_pass": num(per(min_bulk, samp.full_passes(n))),
        "ess_per_full_data_pass_total": num(per(min_bulk, total.full_passes(n))),
        "definitions": {
            "ess": "minimum over parameters of the bulk ESS of the kept draws",
            "ess_per_second": "ESS / sampling-phase seconds (slowest chain; chains run in parallel)",
            "ess_per_second_total": "ESS / wall seconds of setup, warm-up and sampling of all chains",
            "ess_per_1000_grad_evals": "ESS per 1000 per-datum gradient evaluations of the sampling phase, all chains",
            "_total": "counts setup (mode finding, centring, the reparametrisation's mode search) and warm-up as well",
            "full_data_passes": "max(lik_evals, grad_evals) / n",
            "data_fraction_per_iteration": "sampling-phase full-data passes per kept iteration",
        },
        "chain_details": chains,
        "reparam": reparam,
        "ksd": r.ksd,
        "warnings": r.warnings,
    });
    if r.signed {
        if let Some(m) = doc.as_object_mut() {
            m.insert("signed".into(), signed_json(r.outputs, r.param_names.len()));
        }
    }
    let path = dir.join("run.json");
    let mut w = create(&path)?;
    serde_json::to_writer_pretty(&mut w, &doc)
        .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
    w.write_all(b"\n").map_err(write_err(&path))?;
    w.flush().map_err(write_err(&path))
}

/// The bound K on the KSD's draws and how it was chosen: `--ksd-draws` when given, otherwise
/// [`diag::ksd::budget_draws`]`(n, d)`.
fn ksd_draws_rule(requested: Option<usize>, n: usize, d: usize) -> (usize, &'static str) {
    match requested {
        Some(k) => (k, "--ksd-draws"),
        None => (
            diag::ksd::budget_draws(n, d),
            "default: min(1000, max(100, floor(1e9 / (n d))))",
        ),
    }
}

/// The `ksd` block of run.json: the kernel Stein discrepancy (IMQ kernel, c = 1, β = −½) of
/// at most K kept draws ([`ksd_draws_rule`]), thinned evenly within each chain ([`diag::ksd::thin_chains`]),
/// with exact full-data scores computed on up to two threads; sign-weighted for signed
/// samplers. `null` when `max` is 0; `{"error": …}` when a score is not finite.
fn ksd_json(
    model: &dyn DataModel,
    outputs: &[ChainOutput],
    signed: bool,
    requested: Option<usize>,
) -> serde_json::Value {
    use diag::ksd;
    let (max, rule) = ksd_draws_rule(requested, model.n(), model.dim());
    if max == 0 {
        return serde_json::Value::Null;
    }
    let t0 = Instant::now();
    let d = model.dim();
    let lens: Vec<usize> = outputs.iter().map(|o| o.signs.len()).collect();
    let picks = ksd::thin_chains(&lens, max);
    let mut points = Vec::with_capacity(picks.len() * d);
    let mut weights = Vec::with_capacity(picks.len());
    for &(c, i) in &picks {
        let o = &outputs[c];
        let row: Vec<f64> = o.draws.iter().map(|col| col[i]).collect();
        // The KSD is of the chain's own coordinates (where the scores live): reported draws of
        // time-series models are mapped back first.
        if model.reports_transformed() {
            match model.position_of_reported(&row) {
                Some(theta) => points.extend(theta),
                None => {
                    return json!({"error": "a reported draw is outside the support", "max_draws": max})
                }
            }
        } else {
            points.extend(row);
        }
        weights.push(if signed { o.signs[i] } else { 1.0 });
    }
    let k = picks.len();
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .clamp(1, 2);
    let rows_per = k.div_ceil(threads).max(1);
    let parts: Vec<Result<Vec<f64>, tallmc_core::Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = points
            .chunks(rows_per * d.max(1))
            .map(|chunk| scope.spawn(move || ksd::exact_scores(model, chunk)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(tallmc_core::Error::Numerical("score thread failed".into()))
                })
            })
            .collect()
    });
    let mut scores = Vec::with_capacity(points.len());
    for p in parts {
        match p {
            Ok(s) => scores.extend(s),
            Err(e) => return json!({"error": e.to_string(), "draws": k, "max_draws": max}),
        }
    }
    let score_seconds = t0.elapsed().as_secs_f64();
    let kernel = ksd::Imq::DEFAULT;
    let r = if signed {
        ksd::ksd_weighted(&kernel, &points, &scores, &weights, d)
    } else {
        ksd::ksd(&kernel, &points, &scores, d)
    };
    match r {
        Ok(r) => json!({
            "joint": num(r.joint),
            "thesis": num(r.thesis),
            "u_statistic": num(r.u_statistic),
            "draws": r.draws,
            "max_draws": max,
            "max_draws_rule": rule,
            "kernel": {"name": "imq", "c": kernel.c(), "beta": kernel.beta()},
            "scores": "exact",
            "sign_weighted": signed,
            "score_grad_evals": (k as u64).saturating_mul(model.n() as u64),
            "score_seconds": score_seconds,
            "seconds": t0.elapsed().as_secs_f64(),
            "definitions": {
                "joint": "sqrt(V), V = sum over pairs of thinned draws of the IMQ Stein kernel k0 (summed over coordinates) / K^2 (Gorham & Mackey 2017)",
                "thesis": "sum over coordinates j of sqrt(V_j), V_j the V-statistic of the coordinate-j Stein kernel (Putcha 2024, eq. 4.5.1)",
                "u_statistic": "mean of k0 over distinct pairs; estimates E[k0] under the draws' law, 0 for exact draws (Stein identity)",
                "draws": "kept draws used: evenly thinned within each chain to at most max_draws in total",
                "max_draws": "--ksd-draws K if given, else min(1000, max(100, floor(1e9 / (n d)))), which bounds the score cost",
                "score_grad_evals": "per-datum gradient evaluations of the exact scores: draws x n",
                "score_seconds": "wall time of the exact scores (up to two threads); seconds = scores + kernel sums",
                "scores": "exact = full-data gradient of the log posterior at every used draw",
            },
        }),
        Err(e) => json!({"error": e.to_string(), "draws": k, "max_draws": max}),
    }
}

/// `{"eps": 0.1, "L": 12, ...}` from [`Chain::resolved`] pairs (non-finite values become null).
fn resolved_json(pairs: &[(&'static str, f64)]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert((*k).to_string(), num(*v));
    }
    serde_json::Value::Object(m)
}

/// τ̂: the fraction of non-negative signs over the kept draws of the given chains (NaN if none).
fn tau_hat(signs: &[&[f64]]) -> f64 {
    let total: usize = signs.iter().map(|s| s.len()).sum();
    let pos: usize = signs
        .iter()
        .map(|s| s.iter().filter(|&&x| x >= 0.0).count())
        .sum();
    if total == 0 {
        f64::NAN
    } else {
        pos as f64 / total as f64
    }
}

/// The signed-sampler block of run.json: τ̂, the mean sign 2τ̂ − 1, the inefficiency factors of
/// the raw θ draws (IF = draws/ESS_mean per parameter) and the cost factor IF/(2τ̂ − 1)² of
/// Quiroz et al. (eq. 18), which multiplies the evaluation count to give the signed CT.
fn signed_json(outputs: &[ChainOutput], d: usize) -> serde_json::Value {
    let signs: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
    let tau = tau_hat(&signs);
    let mean_sign = 2.0 * tau - 1.0;
    let ifs: Vec<f64> = (0..d)
        .map(|j| {
            let chains: Vec<&[f64]> = outputs.iter().map(|o| o.draws[j].as_slice()).collect();
            diag::inefficiency_factor(&chains)
        })
        .collect();
    let if_max = ifs.iter().copied().fold(f64::NEG_INFINITY, |m, v| {
        if v.is_nan() || m.is_nan() {
            f64::NAN
        } else {
            m.max(v)
        }
    });
    let if_mean = ifs.iter().sum::<f64>() / d.max(1) as f64;
    let factor = |f: f64| f / (mean_sign * mean_sign);
    let per_chain: Vec<serde_json::Value> = signs.iter().map(|s| num(tau_hat(&[s]))).collect();
    json!({
        "tau_hat": num(tau),
        "tau_hat_per_chain": per_chain,
        "mean_sign": num(mean_sign),
        "if_max": num(if_max),
        "if_mean": num(if_mean),
        "cost_factor": num(factor(if_max)),
        "cost_factor_mean_if": num(factor(if_mean)),
        "definitions": {
            "tau_hat": "fraction of kept draws with sign +1 (Pr(L̂ ≥ 0) under the |L̂| chain)",
            "mean_sign": "2 tau_hat - 1, the mean of the sign column",
            "if_max": "max over parameters of draws / ESS_mean of the raw (unweighted) draws, all chains",
            "cost_factor": "IF/(2 tau_hat - 1)^2 with IF = if_max; CT = cost_factor x evaluations (Quiroz et al. eq. 18)",
        },
    })
}
