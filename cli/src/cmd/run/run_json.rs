//! run.json: the run's settings, resolved values, costs, diagnostics and warnings.

use super::*;

/// What run.json reports.
pub(super) struct RunReport<'a> {
    pub(super) a: &'a RunArgs,
    pub(super) settings: &'a Settings,
    pub(super) model_info_params: &'static [ParamSpec],
    pub(super) sampler_info_params: &'static [ParamSpec],
    pub(super) model: &'a dyn DataModel,
    pub(super) n: usize,
    pub(super) param_names: &'a [String],
    pub(super) signed: bool,
    pub(super) exact: bool,
    pub(super) outputs: &'a [ChainOutput],
    pub(super) summaries: &'a [diag::Summary],
    pub(super) wall_sampling: f64,
    pub(super) wall_total: f64,
    /// Seconds to build the model (design, and the reparametrisation's mode search).
    pub(super) model_seconds: f64,
    /// Seconds to read and parse the data file.
    pub(super) data_seconds: f64,
    /// What the data file was read into: `"design"` (a plain CSV parsed straight into a
    /// regression design's rows) or `"table"`.
    pub(super) read_into: &'static str,
    /// Seconds spent moving the design onto huge pages after chain 0's set-up, when it was
    /// moved ([`tallmc_cli::hugepages::after_setup`]).
    pub(super) huge_move: Option<f64>,
    /// Seconds of the kernel Stein discrepancy (0 when skipped).
    pub(super) ksd_seconds: f64,
    /// The `ksd` block ([`ksd_json`]).
    pub(super) ksd: serde_json::Value,
    /// Convergence warnings ([`health_warnings`]), also printed on stderr.
    pub(super) warnings: &'a [String],
    /// Every how many draws the summary's in-memory draws were kept ([`keep_stride`]).
    pub(super) stride: usize,
}

/// Every schema parameter with the value in force: the user's, or the default (`auto` when the
/// sampler chooses it).
pub(super) fn resolved(
    params: &[ParamSpec],
    settings: &Settings,
) -> serde_json::Map<String, serde_json::Value> {
    let given: std::collections::BTreeMap<&str, &str> = settings.iter().collect();
    let mut m = serde_json::Map::new();
    for p in params {
        let v = match given.get(p.key) {
            Some(v) => json!(v),
            None => match p.kind {
                ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. }
                    if default.is_nan() =>
                {
                    json!("auto")
                }
                ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
                    json!(default)
                }
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
pub(super) fn num(x: f64) -> serde_json::Value {
    if x.is_finite() {
        json!(x)
    } else {
        serde_json::Value::Null
    }
}

pub(super) fn write_run_json(dir: &Path, r: &RunReport<'_>) -> Result<(), CliError> {
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
        divergences += o.totals.divergences as u64;
        accept += o.totals.accept_sum;
        kept += o.totals.kept;
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
                "divergences": o.totals.divergences,
                "mean_accept_prob": num(o.totals.mean_accept()),
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
        "complete": true,
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
            "no_ksd": a.no_ksd,
            "out": a.out.display().to_string(),
            "settings": settings,
            "model_settings": resolved(r.model_info_params, r.settings),
            "sampler_settings": resolved(r.sampler_info_params, r.settings),
        },
        "data": {"n": n, "d": r.model.dim(), "read_into": r.read_into,
                     "huge_pages": tallmc_cli::hugepages::asked() || r.huge_move.is_some(),
                     "huge_pages_move_seconds": r.huge_move},
        "params": r.param_names,
        "sampler": {"exact": r.exact, "signed": r.signed},
        "wall_time_seconds": {
            "total": r.wall_total,
            "data_load": r.data_seconds,
            "model_build": r.model_seconds,
            "chains": r.wall_sampling,
            "sampling_max_over_chains": t_sampling,
            "ksd": r.ksd_seconds,
        },
        "peak_memory_bytes": peak_memory_bytes(),
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
            "_total": "counts setup (mode finding, centring, the reparametrisation's mode search) and warm-up as well; the set-up work the chains share (mode searches, control variates' passes, SMH's kernel: DESIGN.md) is counted once, in chain 0's setup",
            "full_data_passes": "max(lik_evals, grad_evals) / n",
            "data_fraction_per_iteration": "sampling-phase full-data passes per kept iteration",
            "data": "n rows, d parameters; read_into: design when a plain CSV was parsed straight into the regression design's rows (one copy of the data), table when into the file's columns (the model then makes its own copy); huge_pages: whether the run asked Linux for transparent huge pages (a request the kernel may decline): for the design, moved after chain 0's set-up when a stochastic-gradient run's minibatches read at least 64 times the data's rows (huge_pages_move_seconds: how long the move took, else null), or for every large block from its allocation with TALLMC_HUGE_PAGES=1",
            "wall_time_seconds": "total: the whole run up to run.json; data_load: reading and parsing the data file; model_build: the model, with the reparametrisation's mode search; chains: every chain's set-up, warm-up and sampling (in parallel); ksd: the kernel Stein discrepancy",
            "peak_memory_bytes": "the process's peak resident memory when run.json was written (null where the system does not report it)",
        },
        "chain_details": chains,
        "reparam": reparam,
        "ksd": r.ksd,
        "warnings": r.warnings,
        "summary_draws": {
            "every": r.stride,
            "note": "summary.csv, ksd and warnings use every draw, or for chains too long to hold in memory every `every`-th draw (draws.csv and stats.csv hold every draw)",
        },
    });
    if r.signed {
        if let Some(m) = doc.as_object_mut() {
            m.insert("signed".into(), signed_json(r.outputs, r.param_names.len()));
        }
    }
    write_atomically(dir, "run.json", |w, path| {
        serde_json::to_writer_pretty(&mut *w, &doc)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
        w.write_all(b"\n").map_err(write_err(path))
    })
}

/// `{"eps": 0.1, "L": 12, ...}` from [`Chain::resolved`] pairs (non-finite values become null).
pub(super) fn resolved_json(pairs: &[(&'static str, f64)]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (k, v) in pairs {
        m.insert((*k).to_string(), num(*v));
    }
    serde_json::Value::Object(m)
}

/// τ̂: the fraction of non-negative signs over the kept draws of the given chains (NaN if none).
pub(super) fn tau_hat(signs: &[&[f64]]) -> f64 {
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
pub(super) fn signed_json(outputs: &[ChainOutput], d: usize) -> serde_json::Value {
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

/// The process's peak resident memory so far (Linux: `VmHWM` of /proc/self/status), or `None`
/// where the system does not say.
pub(super) fn peak_memory_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kb.checked_mul(1024)
}
