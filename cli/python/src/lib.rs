//! `tallmc._tallmc`: the extension module behind the `tallmc` Python package
//! (cli/python/tallmc/__init__.py turns DataFrames into columns and the result into ArviZ
//! `InferenceData`).
//!
//! - `samplers()`, `models()`: the core registry with every setting's key, description,
//!   default and range.
//! - `sample(...)`: the model and chain 0 are built with the GIL released; the chains then run
//!   on threads (one each) while the calling thread, every 100 ms, reports progress to a Python
//!   callback and checks for signals: on Ctrl-C (or an exception from the callback) it sets the
//!   chains' stop flag, joins them and re-raises. Returns the draws and statistics as bytes of
//!   native f64 (NumPy reads them without a copy) and the run's costs and resolved settings.
#![warn(missing_docs)]

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tallmc_core::chain::Cost;
use tallmc_core::diag;
use tallmc_core::registry::{self, ParamKind, ParamSpec};
use tallmc_core::settings::Settings;

/// The system allocator, advising large blocks to use transparent huge pages when
/// `TALLMC_HUGE_PAGES=1` (by default a long stochastic-gradient run's design is moved onto them
/// after chain 0's set-up instead: `tallmc_cli::hugepages`).
#[cfg(not(target_arch = "wasm32"))]
#[global_allocator]
static ALLOC: tallmc_cli::hugepages::HugePages = tallmc_cli::hugepages::HugePages;

mod run;
use run::{ChainResult, Request, STAT_NAMES};

/// One parameter of a schema as a dict: key, description, type, default, range.
fn param_dict<'py>(py: Python<'py>, p: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("key", p.key)?;
    d.set_item("description", p.description)?;
    match p.kind {
        ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
            d.set_item("type", "real")?;
            if default.is_nan() {
                d.set_item("default", "auto")?;
            } else {
                d.set_item("default", default)?;
            }
            if let Some(r) = p.kind.real_range() {
                d.set_item("min", r.min)?;
                d.set_item("max", r.max)?;
                d.set_item("min_open", r.min_open)?;
                d.set_item("max_open", r.max_open)?;
                d.set_item("range", r.to_string())?;
            }
        }
        ParamKind::Int { default, min, max } => {
            d.set_item("type", "int")?;
            if default == 0 && min > 0 {
                d.set_item("default", "auto")?;
            } else {
                d.set_item("default", default)?;
            }
            d.set_item("min", min)?;
            if max == usize::MAX {
                d.set_item("max", f64::INFINITY)?;
                d.set_item("range", format!("[{min}, inf)"))?;
            } else {
                d.set_item("max", max)?;
                d.set_item("range", format!("[{min}, {max}]"))?;
            }
        }
        ParamKind::Choice(words) => {
            d.set_item("type", "choice")?;
            d.set_item("default", words.first().copied().unwrap_or(""))?;
            d.set_item("choices", words.to_vec())?;
            d.set_item("range", words.join(" | "))?;
        }
        ParamKind::Bool(b) => {
            d.set_item("type", "bool")?;
            d.set_item("default", b)?;
            d.set_item("range", "true | false")?;
        }
    }
    Ok(d)
}

fn params_list<'py>(py: Python<'py>, params: &[ParamSpec]) -> PyResult<Bound<'py, PyList>> {
    let list = PyList::empty(py);
    for p in params {
        list.append(param_dict(py, p)?)?;
    }
    Ok(list)
}

/// Every sampler of the registry: name, description, exact, signed, models (empty: every data
/// model) and params (one dict per setting).
#[pyfunction]
fn samplers(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for s in registry::samplers() {
        let d = PyDict::new(py);
        d.set_item("name", s.name)?;
        d.set_item("description", s.description)?;
        d.set_item("exact", s.exact)?;
        d.set_item("signed", s.signed)?;
        d.set_item("models", s.models.to_vec())?;
        d.set_item("params", params_list(py, s.params)?)?;
        list.append(d)?;
    }
    Ok(list)
}

/// Every model of the registry: name, description, regression (reads a response and feature
/// columns) and params.
#[pyfunction]
fn models(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for m in registry::models() {
        let d = PyDict::new(py);
        d.set_item("name", m.name)?;
        d.set_item("description", m.description)?;
        d.set_item("regression", m.regression)?;
        d.set_item("params", params_list(py, m.params)?)?;
        list.append(d)?;
    }
    Ok(list)
}

/// The version of the Rust crates (the CLI's `tallmc_version`).
#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Every schema parameter with the value in force, as run.json's `model_settings` and
/// `sampler_settings`: the user's (as given), or the default (`"auto"` when chosen by the
/// sampler).
fn resolved_settings<'py>(
    py: Python<'py>,
    params: &[ParamSpec],
    settings: &Settings,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for p in params {
        if let Some(v) = settings.get_str(p.key) {
            d.set_item(p.key, v)?;
            continue;
        }
        match p.kind {
            ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
                if default.is_nan() {
                    d.set_item(p.key, "auto")?;
                } else {
                    d.set_item(p.key, default)?;
                }
            }
            ParamKind::Int { default, min, .. } if default == 0 && min > 0 => {
                d.set_item(p.key, "auto")?
            }
            ParamKind::Int { default, .. } => d.set_item(p.key, default)?,
            ParamKind::Choice(words) => d.set_item(p.key, words.first().copied().unwrap_or(""))?,
            ParamKind::Bool(b) => d.set_item(p.key, b)?,
        }
    }
    Ok(d)
}

/// f64 values as native-endian bytes (`numpy.frombuffer(b, dtype=float64)`).
fn f64_bytes<'py>(py: Python<'py>, parts: &[&[f64]]) -> Bound<'py, PyBytes> {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut bytes = Vec::with_capacity(len * 8);
    for p in parts {
        for v in *p {
            bytes.extend_from_slice(&v.to_ne_bytes());
        }
    }
    PyBytes::new(py, &bytes)
}

fn cost_dict<'py>(
    py: Python<'py>,
    setup: u64,
    warmup: u64,
    sampling: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("setup", setup)?;
    d.set_item("warmup", warmup)?;
    d.set_item("sampling", sampling)?;
    d.set_item("total", setup + warmup + sampling)?;
    Ok(d)
}

/// Run `chains` chains of `sampler` on `model` over the columns (`names[j]` ↔ `columns[j]`,
/// each a C-contiguous float64 buffer such as a NumPy array, read once into the core's table).
/// `settings` are (key, value) strings as `--set key=value`. Chain c uses the random stream
/// (seed, first_chain + c). `progress(done, total)` is called
/// from this thread about every 100 ms with the iterations done.
#[pyfunction]
#[pyo3(signature = (names, columns, model, sampler, response=None, features=None,
                    intercept=true, standardize=false, chains=4, warmup=1000, draws=1000,
                    seed=1, first_chain=0, settings=Vec::new(), progress=None))]
#[allow(clippy::too_many_arguments)]
fn sample<'py>(
    py: Python<'py>,
    names: Vec<String>,
    columns: Vec<Bound<'py, PyAny>>,
    model: String,
    sampler: String,
    response: Option<String>,
    features: Option<Vec<String>>,
    intercept: bool,
    standardize: bool,
    chains: usize,
    warmup: usize,
    draws: usize,
    seed: u64,
    first_chain: u64,
    settings: Vec<(String, String)>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let t0 = Instant::now();
    // Large blocks on huge pages from their allocation only when the environment asks
    // (`TALLMC_HUGE_PAGES=1`); by default a long stochastic-gradient run's design is moved
    // onto them after chain 0's set-up (`tallmc_cli::hugepages`), as in `tallmc run`.
    #[cfg(not(target_arch = "wasm32"))]
    tallmc_cli::hugepages::set_enabled(tallmc_cli::hugepages::at_allocation());
    if names.len() != columns.len() {
        return Err(PyValueError::new_err(format!(
            "{} column names for {} columns",
            names.len(),
            columns.len()
        )));
    }
    let mut cols = Vec::with_capacity(columns.len());
    for (name, c) in names.iter().zip(&columns) {
        let buf = PyBuffer::<f64>::get(c).map_err(|e| {
            PyTypeError::new_err(format!(
                "column \"{name}\": expected a float64 buffer (a NumPy array): {e}"
            ))
        })?;
        if buf.dimensions() != 1 {
            return Err(PyValueError::new_err(format!(
                "column \"{name}\": expected one dimension, got {}",
                buf.dimensions()
            )));
        }
        // One copy into the core's table (the CSV reader's table is the same), without an
        // intermediate Python object.
        cols.push(buf.to_vec(py)?);
    }
    drop(columns);
    let mut req = Request {
        names,
        columns: cols,
        model,
        response,
        features,
        intercept,
        standardize,
        sampler,
        chains,
        warmup,
        draws,
        seed,
        first_chain,
        settings,
    };
    if first_chain.checked_add(chains as u64).is_none() {
        return Err(PyValueError::new_err("first_chain: too large"));
    }
    let (prep, req) = py.detach(move || {
        let p = run::prepare(&mut req);
        (p, req)
    });
    let prep = prep.map_err(PyValueError::new_err)?;

    // The chains, on threads; this thread watches.
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let total = (req.chains * (req.warmup + req.draws)) as u64;
    let t_run = Instant::now();
    let mut first = Some((prep.chain0, prep.rng0, prep.t_setup0));
    let extras = prep.extra_names.len();
    let handles: Vec<std::thread::JoinHandle<Result<ChainResult, String>>> = (0..req.chains)
        .map(|c| {
            let prebuilt = if c == 0 { first.take() } else { None };
            let model = prep.model.clone();
            let settings = prep.settings.clone();
            let sampler = req.sampler.clone();
            let (warmup, draws, seed) = (req.warmup, req.draws, req.seed);
            let stream = req.first_chain + c as u64;
            let (stop, done) = (stop.clone(), done.clone());
            let share = prep.setup_share.clone();
            std::thread::Builder::new()
                .name(format!("tallmc-chain-{c}"))
                .spawn(move || {
                    run::run_chain_thread(
                        c, prebuilt, model, &sampler, &settings, warmup, draws, seed, stream,
                        extras, &share, &stop, &done,
                    )
                })
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start chain {c}: {e}")))
        })
        .collect::<PyResult<_>>()?;
    let join_all = |handles: Vec<std::thread::JoinHandle<Result<ChainResult, String>>>| {
        handles
            .into_iter()
            .enumerate()
            .map(|(c, h)| {
                h.join()
                    .unwrap_or_else(|_| Err(format!("chain {c} stopped by an internal error")))
            })
            .collect::<Vec<_>>()
    };
    let mut failure: Option<PyErr> = None;
    loop {
        let finished = py.detach(|| {
            let until = Instant::now() + Duration::from_millis(100);
            loop {
                if handles.iter().all(|h| h.is_finished()) {
                    return true;
                }
                if Instant::now() >= until {
                    return false;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        if let Some(cb) = &progress {
            if let Err(e) = cb.call1((done.load(Ordering::Relaxed), total)) {
                failure = Some(e);
            }
        }
        if failure.is_none() {
            if let Err(e) = py.check_signals() {
                failure = Some(e);
            }
        }
        if failure.is_some() || finished {
            break;
        }
    }
    if let Some(e) = failure {
        // Ctrl-C (KeyboardInterrupt) or the callback's exception: stop every chain between two
        // iterations, wait for the threads, and raise.
        stop.store(true, Ordering::Relaxed);
        py.detach(|| drop(join_all(handles)));
        return Err(e);
    }
    let results = py.detach(|| join_all(handles));
    let wall_chains = t_run.elapsed().as_secs_f64();
    let outputs: Vec<ChainResult> = results
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(PyValueError::new_err)?;

    let d = prep.param_names.len();
    let out = PyDict::new(py);
    out.set_item("tallmc_version", env!("CARGO_PKG_VERSION"))?;
    out.set_item("params", prep.param_names.clone())?;
    out.set_item("extra_names", prep.extra_names.clone())?;
    out.set_item("signed", prep.signed)?;
    out.set_item("exact", prep.exact)?;
    out.set_item("n", prep.n)?;
    out.set_item("d", d)?;
    out.set_item("chains", req.chains)?;
    out.set_item("draws", req.draws)?;
    out.set_item("warmup", req.warmup)?;
    out.set_item("seed", req.seed)?;
    out.set_item("first_chain", req.first_chain)?;
    let draw_parts: Vec<&[f64]> = outputs.iter().map(|o| o.draws.as_slice()).collect();
    out.set_item("draws_f64", f64_bytes(py, &draw_parts))?;
    let sign_parts: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
    out.set_item("signs_f64", f64_bytes(py, &sign_parts))?;
    let stats = PyDict::new(py);
    let stat_names: Vec<&str> = STAT_NAMES
        .iter()
        .copied()
        .chain(prep.extra_names.iter().copied())
        .collect();
    for (s, name) in stat_names.iter().enumerate() {
        let parts: Vec<&[f64]> = outputs.iter().map(|o| o.stats[s].as_slice()).collect();
        stats.set_item(*name, f64_bytes(py, &parts))?;
    }
    out.set_item("stats_f64", stats)?;

    // summary.csv's rows, from every draw (the command line's summary uses every draw unless
    // a chain is too long to hold in memory).
    let summary = PyList::empty(py);
    let kept = req.draws;
    let mut columns_j: Vec<Vec<f64>> = vec![Vec::with_capacity(kept); outputs.len()];
    for (j, name) in prep.param_names.iter().enumerate() {
        for (c, o) in outputs.iter().enumerate() {
            columns_j[c].clear();
            columns_j[c].extend(o.draws.chunks_exact(d.max(1)).map(|row| row[j]));
        }
        let chains: Vec<&[f64]> = columns_j.iter().map(|v| v.as_slice()).collect();
        let s = if prep.signed {
            let signs: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
            diag::summarize_signed(&chains, &signs)
        } else {
            diag::summarize(&chains)
        };
        let row = PyDict::new(py);
        row.set_item("param", name)?;
        for (k, v) in diag::Summary::COLUMNS.iter().zip(s.values()) {
            row.set_item(*k, v)?;
        }
        summary.append(row)?;
    }
    out.set_item("summary", summary)?;

    // Costs, as run.json.
    let mut samp = Cost::default();
    let mut warm = Cost::default();
    let mut setup = Cost::default();
    let mut divergences = 0u64;
    let mut accept = 0.0;
    let mut kept_total = 0usize;
    let chain_details = PyList::empty(py);
    for (c, o) in outputs.iter().enumerate() {
        samp += o.sampling;
        warm += o.warmup;
        setup += o.setup;
        let div = o.stats[1].iter().filter(|&&v| v != 0.0).count();
        let acc: f64 = o.stats[0].iter().sum();
        divergences += div as u64;
        accept += acc;
        kept_total += o.kept;
        let cd = PyDict::new(py);
        cd.set_item("chain", c)?;
        cd.set_item("setup_seconds", o.t_setup)?;
        cd.set_item("warmup_seconds", o.t_warmup)?;
        cd.set_item("sampling_seconds", o.t_sampling)?;
        cd.set_item(
            "lik_evals",
            cost_dict(
                py,
                o.setup.lik_evals,
                o.warmup.lik_evals,
                o.sampling.lik_evals,
            )?,
        )?;
        cd.set_item(
            "grad_evals",
            cost_dict(
                py,
                o.setup.grad_evals,
                o.warmup.grad_evals,
                o.sampling.grad_evals,
            )?,
        )?;
        cd.set_item("divergences", div)?;
        cd.set_item("mean_accept_prob", acc / o.kept.max(1) as f64)?;
        let resolved = PyDict::new(py);
        for (k, v) in &o.resolved {
            resolved.set_item(*k, *v)?;
        }
        cd.set_item("resolved", resolved)?;
        chain_details.append(cd)?;
    }
    let reparam = PyDict::new(py);
    match prep.model.reparam_info() {
        Some(info) => {
            setup.lik_evals += info.cost.lik_evals;
            setup.grad_evals += info.cost.grad_evals;
            reparam.set_item("kind", info.kind)?;
            reparam.set_item("note", info.note.as_str())?;
            reparam.set_item("rows_used", info.rows_used)?;
            reparam.set_item("lik_evals", info.cost.lik_evals)?;
            reparam.set_item("grad_evals", info.cost.grad_evals)?;
            reparam.set_item("hess_evals", info.hess_evals)?;
            reparam.set_item("model_build_seconds", prep.model_seconds)?;
        }
        None => {
            reparam.set_item("kind", "none")?;
            reparam.set_item("note", "this model is sampled in its own coordinates")?;
        }
    }
    out.set_item("reparam", reparam)?;
    out.set_item("chain_details", chain_details)?;
    out.set_item(
        "lik_evals",
        cost_dict(py, setup.lik_evals, warm.lik_evals, samp.lik_evals)?,
    )?;
    out.set_item(
        "grad_evals",
        cost_dict(py, setup.grad_evals, warm.grad_evals, samp.grad_evals)?,
    )?;
    let n = prep.n;
    let total_cost = Cost {
        lik_evals: samp.lik_evals + warm.lik_evals + setup.lik_evals,
        grad_evals: samp.grad_evals + warm.grad_evals + setup.grad_evals,
    };
    let passes = PyDict::new(py);
    passes.set_item("setup", setup.full_passes(n))?;
    passes.set_item("warmup", warm.full_passes(n))?;
    passes.set_item("sampling", samp.full_passes(n))?;
    passes.set_item("total", total_cost.full_passes(n))?;
    out.set_item("full_data_passes", passes)?;
    out.set_item(
        "data_fraction_per_iteration",
        samp.full_passes(n) / kept_total.max(1) as f64,
    )?;
    out.set_item("divergences", divergences)?;
    out.set_item("mean_accept_prob", accept / kept_total.max(1) as f64)?;
    let given = PyDict::new(py);
    for (k, v) in prep.settings.iter() {
        given.set_item(k, v)?;
    }
    out.set_item("settings", given)?;
    out.set_item(
        "model_settings",
        resolved_settings(py, prep.model_info.params, &prep.settings)?,
    )?;
    out.set_item(
        "sampler_settings",
        resolved_settings(py, prep.sampler_info.params, &prep.settings)?,
    )?;
    let wall = PyDict::new(py);
    wall.set_item("total", t0.elapsed().as_secs_f64())?;
    wall.set_item("chains", wall_chains)?;
    wall.set_item(
        "sampling_max_over_chains",
        outputs.iter().map(|o| o.t_sampling).fold(0.0, f64::max),
    )?;
    out.set_item("wall_time_seconds", wall)?;
    out.set_item("model_build_seconds", prep.model_seconds)?;
    // As run.json's `data.huge_pages_move_seconds` (None: not moved).
    out.set_item("huge_pages_move_seconds", prep.huge_move)?;
    Ok(out)
}

/// The module.
#[pymodule]
fn _tallmc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(samplers, m)?)?;
    m.add_function(wrap_pyfunction!(models, m)?)?;
    m.add_function(wrap_pyfunction!(sample, m)?)?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    Ok(())
}
