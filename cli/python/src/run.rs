//! One `tallmc.sample` call without Python: the data table, the model, the chains on threads.
//!
//! The steps and the random streams are those of `tallmc run` (cli/src/cmd/run): the model is
//! built by [`registry::build_model`] from the same table and design, chain c is built by
//! [`registry::build_reported_chain_sharing`] on the stream `chain_rng(seed, c)` (chain 0
//! first, on the calling thread, so that bad settings are refused before any thread starts;
//! the others reuse its set-up's mode search or SMH kernel), and each chain
//! runs warm-up then sampling as [`tallmc_core::chain::run_chain`] does. So the same seed gives
//! the same draws as the command line (cli/python/tests/test_cli_parity.py checks it bit for bit).
//! Unlike `run_chain`, the loop here also reads a stop flag between iterations (Ctrl-C).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;
pub use tallmc_cli::messages::STAT_NAMES;
use tallmc_cli::messages::{push_data_error, unknown};
use tallmc_core::chain::{Chain, Cost};
use tallmc_core::data::{DesignSpec, Table};
use tallmc_core::model::DataModel;
use tallmc_core::registry::{self, ChainConfig, ModelInfo, SamplerInfo};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::settings::Settings;
use tallmc_core::Error;

/// Upper bound on chains (one thread each), as on the command line.
pub const MAX_CHAINS: usize = 1024;

/// What the caller asks for (the arguments of `tallmc run`, data as columns).
pub struct Request {
    pub names: Vec<String>,
    pub columns: Vec<Vec<f64>>,
    pub model: String,
    pub response: Option<String>,
    pub features: Option<Vec<String>>,
    pub intercept: bool,
    pub standardize: bool,
    pub sampler: String,
    pub chains: usize,
    pub warmup: usize,
    pub draws: usize,
    pub seed: u64,
    /// Chain c of this call runs on the stream of chain `first_chain + c` (a run split into
    /// calls, e.g. one chain per Dask task, gives the draws of one call with every chain).
    pub first_chain: u64,
    pub settings: Vec<(String, String)>,
}

/// Everything built before the chains start.
pub struct Prepared {
    pub model_info: &'static ModelInfo,
    pub sampler_info: &'static SamplerInfo,
    pub settings: Settings,
    pub model: Arc<dyn DataModel>,
    pub chain0: Box<dyn Chain>,
    pub rng0: ChainRng,
    pub t_setup0: f64,
    /// What the first chain's set-up kept for the others ([`registry::Sharing::Reuse`]).
    pub setup_share: Arc<registry::SetupShare>,
    pub param_names: Vec<String>,
    pub extra_names: Vec<&'static str>,
    pub signed: bool,
    pub exact: bool,
    pub n: usize,
    pub model_seconds: f64,
    /// Seconds spent moving the design onto huge pages after the first chain's set-up, when
    /// it was moved ([`tallmc_cli::hugepages::after_setup`]).
    pub huge_move: Option<f64>,
}

/// What one chain produced.
pub struct ChainResult {
    /// `draws × d`, row-major (draw k, parameter j at `k·d + j`).
    pub draws: Vec<f64>,
    /// The sign of every draw (1 for unsigned samplers).
    pub signs: Vec<f64>,
    /// One column per [`STAT_NAMES`] entry then per extra, `draws` values each.
    pub stats: Vec<Vec<f64>>,
    pub sampling: Cost,
    pub warmup: Cost,
    pub setup: Cost,
    pub resolved: Vec<(&'static str, f64)>,
    pub t_setup: f64,
    pub t_warmup: f64,
    pub t_sampling: f64,
    /// Draws done (less than asked for when stopped).
    pub kept: usize,
}

/// A core error as one line naming what to change, with Python's spelling of the options.
pub fn describe(e: &Error, req: &Request, settings: Option<&Settings>) -> String {
    match e {
        Error::InvalidSetting { key, msg } => {
            let given = settings.is_some_and(|s| s.iter().any(|(k, _)| k == key));
            let options = ["chains", "warmup", "draws", "seed", "response", "features"];
            if !given && options.contains(&key.as_str()) {
                format!("{key}: {msg}")
            } else {
                format!("setting {key}={}: {msg}", value_of(settings, key))
            }
        }
        Error::UnknownSetting { key } => format!(
            "unknown setting `{key}` for model `{}` and sampler `{}` (see tallmc.models() and \
             tallmc.samplers())",
            req.model, req.sampler
        ),
        Error::Unknown { what, name } => unknown(what, name),
        Error::InvalidData { row, column, msg } => {
            let mut s = String::from("data: ");
            // Rows are numbered from 1 in the core's messages; say the 0-based index a
            // DataFrame shows.
            push_data_error(&mut s, *row, column.as_deref(), msg, |r| {
                format!("row {}", r.saturating_sub(1))
            });
            s
        }
        other => other.to_string(),
    }
}

fn value_of(settings: Option<&Settings>, key: &str) -> String {
    settings
        .and_then(|s| s.get_str(key).map(String::from))
        .unwrap_or_else(|| "…".into())
}

/// Check the request, build the table, the model and chain 0 (the slow part of set-up: mode
/// search, step-size heuristics, pilot runs). Errors are one line.
pub fn prepare(req: &mut Request) -> Result<Prepared, String> {
    if req.chains == 0 || req.chains > MAX_CHAINS {
        return Err(format!(
            "chains: {} is outside [1, {MAX_CHAINS}]",
            req.chains
        ));
    }
    if req.draws == 0 {
        return Err("draws: must be at least 1".into());
    }
    let per_chain = req.warmup.checked_add(req.draws);
    if per_chain.and_then(|t| t.checked_mul(req.chains)).is_none() {
        return Err(format!("warmup: {} iterations are too many", req.warmup));
    }
    let mut settings = Settings::new();
    for (k, v) in &req.settings {
        settings.insert(k, v);
    }
    let model_info = registry::models()
        .iter()
        .find(|m| m.name == req.model)
        .ok_or_else(|| unknown("model", &req.model))?;
    let sampler_info =
        registry::sampler(&req.sampler).map_err(|_| unknown("sampler", &req.sampler))?;
    registry::check_compatible(sampler_info.name, model_info.name).map_err(|e| e.to_string())?;
    if model_info.regression && req.response.is_none() {
        return Err(format!(
            "response=COLUMN is required for model `{}`",
            model_info.name
        ));
    }
    let names = std::mem::take(&mut req.names);
    let columns = std::mem::take(&mut req.columns);
    let table = Table::new(names, columns).map_err(|e| describe(&e, req, None))?;
    let columns_text = || {
        let mut list: Vec<String> = table.names.iter().take(10).cloned().collect();
        if table.names.len() > 10 {
            list.push(format!("… {} in all", table.names.len()));
        }
        list.join(", ")
    };
    if let Some(r) = &req.response {
        if table.column_index(r).is_none() {
            return Err(format!(
                "data: no column \"{r}\" for response (columns: {})",
                columns_text()
            ));
        }
    }
    if let Some(fs) = &req.features {
        for (k, f) in fs.iter().enumerate() {
            if table.column_index(f).is_none() {
                return Err(format!(
                    "data: no column \"{f}\" for features (columns: {})",
                    columns_text()
                ));
            }
            if fs[..k].contains(f) {
                return Err(format!("features: \"{f}\" is listed twice"));
            }
            if req.response.as_ref() == Some(f) {
                return Err(format!("features: \"{f}\" is the response column"));
            }
        }
    }
    let spec = DesignSpec {
        response: req.response.clone().unwrap_or_default(),
        features: req.features.clone(),
        intercept: req.intercept,
        standardize: req.standardize,
    };
    let t_model = Instant::now();
    // Every core during the build (the whitening's passes) and chain 0's set-up, then the
    // cores the chains leave (as `tallmc run`).
    let cores = tallmc_cli::parallel::pass_threads(1);
    let pool = Arc::new(tallmc_cli::parallel::Switchable::new(Arc::new(
        tallmc_cli::parallel::Pool::new(cores),
    )));
    let model = registry::build_model_on(&req.model, &table, &spec, &settings, pool.clone())
        .map_err(|e| describe(&e, req, Some(&settings)))?;
    let model_seconds = t_model.elapsed().as_secs_f64();
    drop(table);
    let threads = tallmc_cli::parallel::pass_threads(req.chains);
    let n = model.n();
    let t_build = Instant::now();
    let mut rng0 = chain_rng(req.seed, req.first_chain);
    let config = ChainConfig {
        sampler: &req.sampler,
        warmup: req.warmup,
        settings: &settings,
    };
    // The first chain keeps its set-up's deterministic work (a mode search, a control
    // variate's pass, SMH's kernel: `sampler::share`) for the others (as `tallmc run`).
    let mut setup_share = registry::SetupShare::default();
    let chain0 = registry::build_reported_chain_sharing(
        &config,
        model.clone(),
        &mut rng0,
        registry::Sharing::Record(&mut setup_share),
    )
    .map_err(|e| describe(&e, req, Some(&settings)))?;
    let t_setup0 = t_build.elapsed().as_secs_f64();
    if threads != cores {
        pool.set(Arc::new(tallmc_cli::parallel::Pool::new(threads)));
    }
    settings
        .check_all_used()
        .map_err(|e| describe(&e, req, Some(&settings)))?;
    let param_names = chain0.param_names();
    // stats.csv keeps at most four extras.
    let extra_names: Vec<&'static str> = chain0.extra_names().into_iter().take(4).collect();
    let signed = chain0.signed();
    let exact = chain0.exact();
    // Memory for every draw and stat, refused up front rather than aborting later.
    let d = param_names.len();
    let values = req
        .draws
        .checked_mul(d + 1 + STAT_NAMES.len() + extra_names.len())
        .and_then(|v| v.checked_mul(req.chains))
        .and_then(|v| v.checked_mul(16)); // the values, and their copy handed to Python
    if values.is_none_or(|b| Vec::<u8>::new().try_reserve_exact(b).is_err()) {
        return Err(format!(
            "draws: {} chains × {} draws × {} values do not fit in memory",
            req.chains,
            req.draws,
            d + 1 + STAT_NAMES.len() + extra_names.len()
        ));
    }
    // A long stochastic-gradient run's design onto huge pages, as in `tallmc run`.
    let huge_move = tallmc_cli::hugepages::after_setup(
        &req.sampler,
        model.as_ref(),
        chain0.as_ref(),
        req.chains,
        req.warmup + req.draws,
    );
    Ok(Prepared {
        model_info,
        sampler_info,
        settings,
        model,
        chain0,
        rng0,
        t_setup0,
        setup_share: Arc::new(setup_share),
        param_names,
        extra_names,
        signed,
        exact,
        n,
        model_seconds,
        huge_move,
    })
}

/// Build chain `c` on the stream (seed, `stream`) (unless given) and run it: warm-up, then
/// `draws` kept iterations, each iteration added to `done`; returns early (with fewer draws)
/// once `stop` is set.
#[allow(clippy::too_many_arguments)]
pub fn run_chain_thread(
    c: usize,
    prebuilt: Option<(Box<dyn Chain>, ChainRng, f64)>,
    model: Arc<dyn DataModel>,
    sampler: &str,
    settings: &Settings,
    warmup: usize,
    draws: usize,
    seed: u64,
    stream: u64,
    extras: usize,
    share: &registry::SetupShare,
    stop: &AtomicBool,
    done: &AtomicU64,
) -> Result<ChainResult, String> {
    let (mut chain, mut rng, t_setup) = match prebuilt {
        Some(p) => p,
        None => {
            let t = Instant::now();
            let mut rng = chain_rng(seed, stream);
            let config = ChainConfig {
                sampler,
                warmup,
                settings,
            };
            let chain = registry::build_reported_chain_sharing(
                &config,
                model,
                &mut rng,
                registry::Sharing::Reuse(share),
            )
            .map_err(|e| format!("chain {c}: {e}"))?;
            (chain, rng, t.elapsed().as_secs_f64())
        }
    };
    let chain = chain.as_mut();
    let d = chain.dim();
    let setup = chain.setup_cost();
    let total = (chain.warmup() + draws) as u64;
    // Touch the shared counter about 1000 times per chain, not every iteration.
    let stride = (total / 1000).max(1);
    let mut pending = 0u64;
    let mut out = Vec::with_capacity(draws * d);
    let mut signs = Vec::with_capacity(draws);
    let mut stats = vec![Vec::with_capacity(draws); STAT_NAMES.len() + extras];
    let mut warm = Cost::default();
    let mut samp = Cost::default();
    let t_start = Instant::now();
    let tick = |pending: &mut u64| {
        *pending += 1;
        if *pending >= stride {
            done.fetch_add(*pending, Ordering::Relaxed);
            *pending = 0;
        }
    };
    // As `tallmc_core::chain::run_chain`: warm-up while the chain is in it, then the draws.
    while chain.iteration() < chain.warmup() && !stop.load(Ordering::Relaxed) {
        let info = chain.step(&mut rng);
        warm += info.cost();
        tick(&mut pending);
    }
    let t_warm_end = Instant::now();
    let mut kept = 0;
    if !stop.load(Ordering::Relaxed) {
        for _ in 0..draws {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            let info = chain.step(&mut rng);
            samp += info.cost();
            out.extend_from_slice(chain.position());
            signs.push(info.sign);
            let row = [
                info.accept_prob,
                f64::from(u8::from(info.divergent)),
                info.lik_evals as f64,
                info.grad_evals as f64,
                f64::from(info.n_leapfrog),
                info.step_size,
                info.energy,
            ];
            for (col, v) in stats.iter_mut().zip(row.into_iter().chain(info.extra)) {
                col.push(v);
            }
            kept += 1;
            tick(&mut pending);
        }
    }
    done.fetch_add(pending, Ordering::Relaxed);
    let t_end = Instant::now();
    Ok(ChainResult {
        draws: out,
        signs,
        stats,
        sampling: samp,
        warmup: warm,
        setup,
        resolved: chain.resolved(),
        t_setup,
        t_warmup: t_warm_end.duration_since(t_start).as_secs_f64(),
        t_sampling: t_end.duration_since(t_warm_end).as_secs_f64(),
        kept,
    })
}
