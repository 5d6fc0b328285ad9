//! `tallmc run`: chains on threads over a CSV data set, then draws.csv, summary.csv, stats.csv
//! and run.json in the output directory. This file validates the arguments and runs the steps;
//! `budget` checks the resource limits, `chains` runs the chains (streaming their rows to
//! disk), `outputs` writes the CSV files in an order that cannot be mistaken for a finished
//! run, `run_json` and `ksd` write run.json, `report` prints the warnings.
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
use tallmc_cli::csvdata::{push_f64, push_field, shorten, write_header};
use tallmc_cli::csvfile::{read_csv_data, CsvFileError, Data};
use tallmc_core::chain::{run_chain, Chain, Cost, Phase};
use tallmc_core::data::DesignSpec;
use tallmc_core::diag;
use tallmc_core::kernel::StepInfo;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{self, ChainConfig, ParamKind, ParamSpec};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::settings::Settings;

mod budget;
mod chains;
mod ksd;
mod outputs;
mod report;
mod run_json;
use budget::*;
use chains::*;
use ksd::*;
use outputs::*;
use report::*;
use run_json::*;

/// Arguments of `tallmc run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// Data file: CSV with a header row, NumPy `.npz`/`.npy`, Parquet, or Arrow IPC
    /// (Feather v2 file or stream); recognised by its first bytes, not its name.
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
    /// 5 s of CPU for tall data (1000 up to n·d = 10⁶; 100 at n = 10⁶, d = 10), and at most
    /// max(10, ⌊run evaluations/n⌋), so the scores cost no more than the run itself.
    #[arg(long, value_name = "K", conflicts_with = "no_ksd")]
    pub ksd_draws: Option<usize>,
    /// Skip run.json's kernel Stein discrepancy (the same as `--ksd-draws 0`).
    #[arg(long)]
    pub no_ksd: bool,
    /// Refuse more warm-up + draws per chain than this.
    #[arg(long, value_name = "N", default_value_t = MAX_ITERATIONS)]
    pub max_iterations: u64,
    /// Refuse a run estimated to hold more memory than this many gigabytes (10⁹ bytes).
    #[arg(long, value_name = "GB", default_value_t = MAX_MEMORY_GB)]
    pub max_memory_gb: f64,
    /// Refuse a run whose draws.csv and stats.csv are estimated above this many gigabytes.
    #[arg(long, value_name = "GB", default_value_t = MAX_OUTPUT_GB)]
    pub max_output_gb: f64,
}

/// Upper bound on `--chains`: one thread each.
const MAX_CHAINS: usize = 1024;

/// Everything one chain produced, beside the rows it streamed to disk.
struct ChainOutput {
    /// `draws[j][k]`: parameter j at the k-th draw kept in memory (every draw, or every
    /// [`keep_stride`]-th of a very long chain).
    draws: Vec<Vec<f64>>,
    /// The signs of the draws kept in memory.
    signs: Vec<f64>,
    /// Acceptance and divergences over every draw.
    totals: StepTotals,
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
    // Large blocks on huge pages from their allocation only when the environment asks
    // (`TALLMC_HUGE_PAGES=1`); by default the design is moved onto them after chain 0's
    // set-up when the run's minibatches will read enough rows (`tallmc_cli::hugepages`).
    tallmc_cli::hugepages::set_enabled(tallmc_cli::hugepages::at_allocation());
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
    // Before anything else about sizes: names the option (`--draws` or `--warmup`) that makes
    // the run too long (u128 arithmetic: no overflow).
    check_iterations(a)?;
    if a.warmup
        .checked_add(a.draws)
        .and_then(|t| t.checked_mul(a.chains))
        .is_none()
    {
        return Err(CliError::input(format!(
            "--warmup: {} iterations are too many to count",
            a.warmup
        )));
    }
    for (opt, v) in [
        ("--max-memory-gb", a.max_memory_gb),
        ("--max-output-gb", a.max_output_gb),
    ] {
        if !(v > 0.0 && v.is_finite()) {
            return Err(CliError::input(format!(
                "{opt}: {v} is not a positive number of gigabytes"
            )));
        }
    }

    // Data first: its errors name the file, line and column.
    let data_name = a.data.display().to_string();
    let spec = DesignSpec {
        response: a.response.clone().unwrap_or_default(),
        features: a.features.clone(),
        intercept: !a.no_intercept,
        standardize: a.standardize,
    };
    // A regression model's design, laid out from a CSV file's column names: a large plain file
    // is parsed straight into the design's rows (tallmc_cli::csvfile). Without a plan (another
    // model, standardised features, or names the spec does not fit: the table path then
    // reports that), the table.
    let takes_design =
        registry::models::takes_design(&a.model) && a.response.is_some() && !a.standardize;
    let plan = |names: &[String]| {
        if takes_design {
            spec.plan(names).ok()
        } else {
            None
        }
    };
    let t_data = Instant::now();
    let cannot_read = |e: std::io::Error| {
        CliError::input(format!("cannot read data file {data_name}: {}", io_msg(&e)))
    };
    // The format from the file's first bytes: Parquet and Arrow IPC are decoded from the file
    // straight into the table's columns, NumPy's files are read whole first, a CSV in blocks.
    let columnar = {
        use std::io::Read;
        let mut f = std::fs::File::open(&a.data).map_err(cannot_read)?;
        let mut head = [0u8; 8];
        let mut got = 0;
        while got < head.len() {
            match f.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(k) => got += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(cannot_read(e)),
            }
        }
        (
            tallmc_cli::columnar::detect(&head[..got]),
            tallmc_cli::npy::is_numpy(&head[..got]),
        )
    };
    let (data, lines) = match columnar {
        (Some(format), _) => {
            let data = tallmc_cli::columnar::read_columnar_data(&a.data, format, &data_name, &plan)
                .map_err(CliError::input)?;
            (data, None)
        }
        // NumPy's binary .npz/.npy (recognised by their first bytes): decoded from the file
        // mapped into memory (no copy of its bytes into fresh pages), or read whole where it
        // cannot be mapped. A file truncated by another process meanwhile would stop the
        // process (SIGBUS; DESIGN.md, "Command line contract").
        (None, true) => {
            let file = std::fs::File::open(&a.data).map_err(cannot_read)?;
            // SAFETY: read-only, and only read while `map` lives (see above).
            let data = match unsafe { memmap2::Mmap::map(&file) } {
                Ok(map) => tallmc_cli::npy::read_numpy_data(&map, &data_name, &plan),
                Err(_) => {
                    let bytes = std::fs::read(&a.data).map_err(cannot_read)?;
                    tallmc_cli::npy::read_numpy_data(&bytes, &data_name, &plan)
                }
            }
            .map_err(CliError::input)?;
            (data, None)
        }
        // CSV, in blocks when it is plain (tallmc_cli::csvfile).
        (None, false) => {
            let (t, l) = read_csv_data(&a.data, &data_name, &plan).map_err(|e| match e {
                CsvFileError::Io(e) => cannot_read(e),
                CsvFileError::Csv(e) => CliError::input(e.to_string()),
            })?;
            (t, Some(l))
        }
    };
    let names = match &data {
        Data::Table(t) => &t.names,
        Data::Design { names, .. } => names,
    };
    let column_index = |c: &str| names.iter().position(|n| n == c);
    let data_seconds = t_data.elapsed().as_secs_f64();
    // The columns as a short list (a header may have millions, and names may be long).
    let columns = || {
        let mut list: Vec<String> = names.iter().take(10).map(|c| shorten(c)).collect();
        if names.len() > 10 {
            list.push(format!("… {} in all", names.len()));
        }
        list.join(", ")
    };
    if let Some(r) = &a.response {
        if column_index(r).is_none() {
            return Err(CliError::input(format!(
                "{data_name}: no column \"{}\" for --response (columns: {})",
                shorten(r),
                columns()
            )));
        }
    }
    if let Some(fs) = &a.features {
        for (k, f) in fs.iter().enumerate() {
            if column_index(f).is_none() {
                return Err(CliError::input(format!(
                    "{data_name}: no column \"{}\" for --features (columns: {})",
                    shorten(f),
                    columns()
                )));
            }
            if fs[..k].contains(f) {
                return Err(CliError::input(format!(
                    "--features: \"{}\" is listed twice",
                    shorten(f)
                )));
            }
            if a.response.as_ref() == Some(f) {
                return Err(CliError::input(format!(
                    "--features: \"{}\" is the response column",
                    shorten(f)
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
        lines: lines.as_ref(),
        model: Some(&a.model),
        sampler: Some(&a.sampler),
        settings: Some(&settings),
    };
    let t_model = Instant::now();
    // Set-up (a mode search for the whitening, then chain 0's mode search, automatic step size
    // and pilot runs) can take a while at large d: a spinner says so on a terminal from here
    // until chain 0 is built.
    let spinner = setup_spinner(&a.sampler, None);
    // Every core during the build (nothing else runs yet: the whitening's mode search and
    // Hessian split their chunks), then the cores left over by the chains.
    let cores = tallmc_cli::parallel::pass_threads(1);
    let table_columns = names.len();
    let read_into = match data {
        Data::Table(_) => "table",
        Data::Design { .. } => "design",
    };
    let pool = std::sync::Arc::new(tallmc_cli::parallel::Switchable::new(std::sync::Arc::new(
        tallmc_cli::parallel::Pool::new(cores),
    )));
    let model = match data {
        Data::Table(table) => {
            registry::build_model_on(&a.model, &table, &spec, &settings, pool.clone())
        }
        Data::Design { design, .. } => registry::build_model_from_design_on(
            &a.model,
            design,
            &spec.response,
            &settings,
            pool.clone(),
        ),
    };
    if model.is_err() {
        spinner.finish_and_clear();
    }
    let model = model.map_err(|e| ctx.describe(&e))?;
    let model_seconds = t_model.elapsed().as_secs_f64();
    // Cores beyond one per chain split each full-data pass once the chains run (below; chain
    // 0's set-up still has every core). Bit-identical results either way.
    let pass_threads = tallmc_cli::parallel::pass_threads(a.chains);
    let n = model.n();
    if let Some(info) = model.reparam_info() {
        if info.kind == "failed" {
            spinner.suspend(|| eprintln!("warning: reparam: {}", info.note));
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
    set_setup_message(&spinner, &a.sampler, Some(model.dim()));
    // Chain 0 keeps its set-up's deterministic work (a mode search, a control variate's pass,
    // SMH's whole kernel: `sampler::share`) for the other chains: the same chains, the work
    // done once (counted in chain 0's set-up).
    let mut setup_share = registry::SetupShare::default();
    let chain0 = registry::build_reported_chain_sharing(
        &config,
        model.clone(),
        &mut rng0,
        registry::Sharing::Record(&mut setup_share),
    );
    spinner.finish_and_clear();
    let chain0 = chain0.map_err(|e| ctx.describe(&e))?;
    let t_setup0 = t_build.elapsed().as_secs_f64();
    // From here the chains run at once: each pass gets the cores they leave.
    if pass_threads != cores {
        pool.set(std::sync::Arc::new(tallmc_cli::parallel::Pool::new(
            pass_threads,
        )));
    }
    settings.check_all_used().map_err(|e| ctx.describe(&e))?;
    // A long stochastic-gradient run's design onto huge pages (SGLD's rows are drawn at random).
    let huge_move = tallmc_cli::hugepages::after_setup(
        &a.sampler,
        model.as_ref(),
        chain0.as_ref(),
        a.chains,
        a.warmup + a.draws,
    );
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

    let d = param_names.len();
    check_estimate(
        a,
        &estimate(a, n, d, table_columns, signed, extra_names.len()),
    )?;
    let stride = keep_stride(a.draws, d);

    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::input(format!("--out {}: {}", a.out.display(), io_msg(&e))))?;
    start_outputs(
        &a.out,
        &json!({
            "complete": false,
            "status": "started, not finished: this run is still going, or it was interrupted \
                       (the other outputs appear when it finishes)",
            "config": {"data": data_name, "model": a.model, "sampler": a.sampler,
                       "chains": a.chains, "warmup": a.warmup, "draws": a.draws, "seed": a.seed},
        }),
    )?;

    // Sampling.
    let total_iters = (a.chains * (a.warmup + a.draws)) as u64;
    let bar = progress_bar(total_iters);
    let t_run = Instant::now();
    let mut first = Some((chain0, rng0, t_setup0));
    let setup_share = &setup_share;
    let outputs: Vec<Result<ChainOutput, CliError>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..a.chains)
            .map(|c| {
                let prebuilt = if c == 0 { first.take() } else { None };
                let settings = settings.clone();
                let model = model.clone();
                let bar = bar.clone();
                let sampler = a.sampler.as_str();
                let (warmup, draws, seed) = (a.warmup, a.draws, a.seed);
                let sink = ChainSink {
                    dir: &a.out,
                    chain: c,
                    signed,
                    extras: extra_names.len(),
                    stride,
                };
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
                            let chain = registry::build_reported_chain_sharing(
                                &config,
                                model,
                                &mut rng,
                                registry::Sharing::Reuse(setup_share),
                            )
                            .map_err(|e| CliError::input(format!("chain {c}: {e}")))?;
                            (chain, rng, t.elapsed().as_secs_f64())
                        }
                    };
                    run_one(chain.as_mut(), &mut rng, draws, t_setup, &bar, &sink)
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
    let outputs: Vec<ChainOutput> = match outputs.into_iter().collect::<Result<_, _>>() {
        Ok(o) => o,
        Err(e) => {
            remove_parts(&a.out, a.chains);
            return Err(e);
        }
    };

    // Output files: the parts joined, the summary, run.json last.
    let out = &a.out;
    assemble(
        out,
        "draws.csv",
        &draws_header(&param_names, signed),
        a.chains,
    )?;
    assemble(out, "stats.csv", &stats_header(&extra_names), a.chains)?;
    let summaries = write_summary(out, &param_names, signed, &outputs)?;
    let t_ksd = Instant::now();
    let ksd_draws = if a.no_ksd { Some(0) } else { a.ksd_draws };
    let ksd = ksd_json(model.as_ref(), &outputs, signed, ksd_draws, pass_threads);
    let ksd_seconds = t_ksd.elapsed().as_secs_f64();
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
        huge_move,
        data_seconds,
        read_into,
        ksd_seconds,
        ksd,
        warnings: &warnings,
        stride,
    };
    write_run_json(out, &report)?;
    Ok(())
}
