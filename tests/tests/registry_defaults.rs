//! Every default the registry shows is the default the sampler or model uses: for each sampler
//! (and each model), each parameter of its schema is given explicitly at its schema default
//! (`auto` for automatic ones) and the chain must run exactly as with no setting at all —
//! the same draws, bit for bit. A parameter whose schema default differs from its parser's
//! default, or whose default the parser refuses, fails here. A parameter that only applies with
//! another setting (refused alone, as having no effect) must be listed in [`CONDITIONS`] and
//! round-trips under that setting: (condition + default) draws as (condition) alone.

use std::sync::Arc;
use tallmc_core::chain::{run_chain, Chain};
use tallmc_core::data::DesignSpec;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{
    build_model, build_reported_chain, models, samplers, ChainConfig, ParamKind, ParamSpec,
};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::settings::Settings;
use tallmc_tests::realdata::{load, runs_on};

const WARMUP: usize = 30;
const DRAWS: usize = 20;

/// (sampler or model, key, the setting under which the key applies); `*`: any owner.
const CONDITIONS: &[(&str, &str, &str)] = &[
    ("smh-1", "rho", "proposal=pcn"),
    ("smh-2", "rho", "proposal=pcn"),
    ("austere-mh", "error_bound", "design=conservative"),
    ("hmc-ecs", "max_depth", "trajectory=nuts"),
    ("hmc-ecs-signed", "max_depth", "trajectory=nuts"),
    ("*", "schedule_b", "schedule=decreasing"),
    ("*", "schedule_gamma", "schedule=decreasing"),
    ("*", "initial_var", "initial=normal"),
    ("*", "phi_prior_scale", "prior=thesis"),
    ("*", "inv_shape", "prior=thesis"),
    ("*", "inv_scale", "prior=thesis"),
    ("linear", "noise_prior_shape", "noise=gamma"),
    ("linear", "noise_prior_rate", "noise=gamma"),
];

/// Settings a key needs beside it (key, value pairs).
type Condition = Vec<(&'static str, &'static str)>;

/// The condition under which `key` of `owner` applies, if it is conditional.
fn condition(owner: &str, key: &str) -> Condition {
    CONDITIONS
        .iter()
        .filter(|(o, k, _)| (*o == owner || *o == "*") && *k == key)
        .map(|(_, _, c)| c.split_once('=').unwrap())
        .collect()
}

/// The schema default as a user would type it.
fn default_text(p: &ParamSpec) -> String {
    match p.kind {
        ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. }
            if default.is_nan() =>
        {
            "auto".into()
        }
        ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
            format!("{default:?}")
        }
        ParamKind::Int {
            default: 0, min, ..
        } if min > 0 => "auto".into(),
        ParamKind::Int { default, .. } => default.to_string(),
        ParamKind::Choice(c) => c[0].into(),
        ParamKind::Bool(b) => b.to_string(),
    }
}

fn settings(kv: &[(&str, &str)]) -> Settings {
    let mut s = Settings::new();
    for (k, v) in kv {
        s.insert(k, v);
    }
    s
}

/// A seeded chain built through the registry with settings `kv`, and its generator.
fn chain(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[(&str, &str)],
) -> Result<(Box<dyn Chain>, ChainRng), String> {
    let s = settings(kv);
    let config = ChainConfig {
        sampler,
        warmup: WARMUP,
        settings: &s,
    };
    let mut rng = chain_rng(3, 0);
    let chain =
        build_reported_chain(&config, model.clone(), &mut rng).map_err(|e| e.to_string())?;
    Ok((chain, rng))
}

/// The bits of every position of a short seeded run.
fn draws(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[(&str, &str)],
) -> Result<Vec<u64>, String> {
    let (mut chain, mut rng) = chain(model, sampler, kv)?;
    let mut out = Vec::new();
    run_chain(chain.as_mut(), &mut rng, DRAWS, |_, _, th, _| {
        out.extend(th.iter().map(|x| x.to_bits()))
    });
    Ok(out)
}

fn model(table: &str, name: &str, kv: &[(&str, &str)]) -> Result<Arc<dyn DataModel>, String> {
    let rt = load(table);
    let spec = DesignSpec {
        response: rt.response.into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let s = settings(kv);
    let m = build_model(name, &rt.table, &spec, &s).map_err(|e| e.to_string())?;
    s.check_all_used().map_err(|e| e.to_string())?;
    Ok(m)
}

#[test]
fn every_sampler_default_round_trips() {
    let (mut bad, mut checked, mut conditional) = (Vec::new(), 0, Vec::new());
    for info in samplers() {
        let (table, name) = if runs_on(info.name, "logistic") {
            ("hmda", "logistic")
        } else {
            ("dax", "sv")
        };
        assert!(runs_on(info.name, name), "{} runs on neither", info.name);
        let m = model(table, name, &[]).unwrap();
        // The run without the key, once per condition (most keys share the empty one).
        let mut bases: Vec<(Condition, Vec<u64>)> = Vec::new();
        for p in info.params {
            let v = default_text(p);
            let cond = condition(info.name, p.key);
            let base = match bases.iter().find(|b| b.0 == cond) {
                Some(b) => &b.1,
                None => {
                    let d = draws(&m, info.name, &cond).unwrap();
                    bases.push((cond.clone(), d));
                    &bases.last().unwrap().1
                }
            };
            let mut kv = cond.clone();
            kv.push((p.key, &v));
            match draws(&m, info.name, &kv) {
                Ok(d) if &d == base => {
                    checked += 1;
                    if !cond.is_empty() {
                        conditional.push(format!("{} {}", info.name, p.key));
                    }
                }
                Ok(_) => bad.push(format!("{} {kv:?}: draws differ from {cond:?}", info.name)),
                Err(e) => bad.push(format!("{} {kv:?}: refused: {e}", info.name)),
            }
            // Alone, a conditional key is refused with a message naming it (never ignored).
            if !cond.is_empty() {
                match draws(&m, info.name, &[(p.key, &v)]) {
                    Err(e) if e.contains(p.key) && e.contains("with") => {}
                    other => bad.push(format!(
                        "{} {}={v} alone: expected a refusal naming it, got {other:?}",
                        info.name, p.key
                    )),
                }
            }
        }
    }
    eprintln!("{checked} sampler parameters round-trip; under their condition: {conditional:?}");
    assert!(
        bad.is_empty(),
        "{} defaults do not round-trip:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn every_model_default_round_trips() {
    let tables = [
        ("logistic", "hmda"),
        ("poisson", "rwm1984"),
        ("robust", "cps1985"),
        ("linear", "cps1985"),
        ("sv", "dax"),
        ("lgssm", "dax"),
        ("garch", "dax"),
    ];
    let (mut bad, mut checked, mut conditional) = (Vec::new(), 0, Vec::new());
    for info in models() {
        let Some((_, table)) = tables.iter().find(|t| t.0 == info.name) else {
            eprintln!(
                "model {} needs data of its own shape: not covered here",
                info.name
            );
            continue;
        };
        let sampler = if runs_on("rwmh", info.name) {
            "rwmh"
        } else {
            "pmmh"
        };
        for p in info.params {
            let v = default_text(p);
            let cond = condition(info.name, p.key);
            let base = draws(&model(table, info.name, &cond).unwrap(), sampler, &[]).unwrap();
            let mut kv = cond.clone();
            kv.push((p.key, &v));
            match model(table, info.name, &kv).and_then(|m| draws(&m, sampler, &[])) {
                Ok(d) if d == base => {
                    checked += 1;
                    if !cond.is_empty() {
                        conditional.push(format!("{} {}", info.name, p.key));
                    }
                }
                Ok(_) => bad.push(format!("{} {kv:?}: draws differ from {cond:?}", info.name)),
                Err(e) => bad.push(format!("{} {kv:?}: refused: {e}", info.name)),
            }
        }
    }
    eprintln!("{checked} model parameters round-trip; under their condition: {conditional:?}");
    assert!(
        bad.is_empty(),
        "{} defaults do not round-trip:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Values at and just beyond a parameter's declared range, exactly as declared: a closed
/// bound is accepted and a value just beyond it refused; an open bound is refused and a value
/// just inside it (1% of a finite range in, or 1e-9 beyond the bound) accepted. Infinite bounds
/// are not probed (only finite numbers are read). (value, must be accepted).
fn range_probes(p: &ParamSpec) -> Vec<(String, bool)> {
    if let Some(r) = p.kind.real_range() {
        let mut v = Vec::new();
        let width = r.max - r.min;
        let inside = |bound: f64, toward: f64| {
            if width.is_finite() {
                bound + toward * 0.01 * width
            } else {
                bound + toward * (bound.abs().max(1.0) * 1e-9)
            }
        };
        if r.min.is_finite() {
            let below = r.min - r.min.abs() * 1e-6 - 1e-12;
            v.push((format!("{below:?}"), false));
            v.push((format!("{:?}", r.min), !r.min_open));
            if r.min_open {
                v.push((format!("{:?}", inside(r.min, 1.0)), true));
            }
        }
        if r.max.is_finite() {
            v.push((format!("{:?}", r.max), !r.max_open));
            if r.max_open {
                v.push((format!("{:?}", inside(r.max, -1.0)), true));
            }
            v.push((format!("{:?}", r.max + r.max.abs() * 1e-6 + 1e-12), false));
        }
        return v;
    }
    match p.kind {
        ParamKind::Int { min, max, .. } => {
            let mut v = vec![(min.to_string(), true)];
            if min > 0 {
                v.push(((min - 1).to_string(), false));
            }
            if max < 100_000 {
                v.push((max.to_string(), true));
                v.push(((max + 1).to_string(), false));
            }
            v
        }
        _ => Vec::new(),
    }
}

/// Range probes that need another setting to be meaningful: (sampler, key, setting).
const PROBE_WITH: &[(&str, &str, &str)] = &[
    ("hmc-ecs", "m", "G=1"),
    ("hmc-ecs-signed", "m_warmup", "G=1"),
    ("qnhmc", "max_eig", "min_eig=1e-9"),
    // With no nugget the DPP kernel has the rank of the design: a small k.
    ("dpp-sgld", "dpp_nugget", "batch_size=2"),
];

/// The range a sampler's schema declares is the range its parser validates: the bounds are
/// accepted when the chain is built and values just beyond them are refused naming the key;
/// open bounds are refused and values just inside them accepted ([`range_probes`]).
#[test]
fn every_sampler_range_is_validated() {
    let mut bad = Vec::new();
    let mut checked = 0;
    for info in samplers() {
        let (table, name) = if runs_on(info.name, "logistic") {
            ("hmda", "logistic")
        } else {
            ("dax", "sv")
        };
        let m = model(table, name, &[]).unwrap();
        for p in info.params {
            let mut cond = condition(info.name, p.key);
            cond.extend(
                PROBE_WITH
                    .iter()
                    .filter(|(o, k, _)| *o == info.name && *k == p.key)
                    .map(|(_, _, c)| c.split_once('=').unwrap()),
            );
            for (v, ok) in range_probes(p) {
                let mut kv = cond.clone();
                kv.push((p.key, &v));
                let s = settings(&kv);
                let config = ChainConfig {
                    sampler: info.name,
                    warmup: 2,
                    settings: &s,
                };
                let r = build_reported_chain(&config, m.clone(), &mut chain_rng(1, 0));
                checked += 1;
                match (r, ok) {
                    (Ok(_), true) => {}
                    (Err(e), false) if e.to_string().contains(p.key) => {}
                    (Err(e), true) => {
                        bad.push(format!("{} {}={v}: refused: {e}", info.name, p.key))
                    }
                    (Err(e), false) => bad.push(format!(
                        "{} {}={v}: refused without naming it: {e}",
                        info.name, p.key
                    )),
                    (Ok(_), false) => bad.push(format!(
                        "{} {}={v}: accepted outside the declared range",
                        info.name, p.key
                    )),
                }
            }
        }
    }
    eprintln!("{checked} range probes");
    assert!(
        bad.is_empty(),
        "{} range probes disagree with the schema:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The same for every model's parameters: the range `tallmc models` shows is the range the
/// model's builder validates (issue 19: help said `[0, inf]` where 0 is refused).
#[test]
fn every_model_range_is_validated() {
    let tables = [
        ("logistic", "hmda"),
        ("poisson", "rwm1984"),
        ("robust", "cps1985"),
        ("linear", "cps1985"),
        ("sv", "dax"),
        ("lgssm", "dax"),
        ("garch", "dax"),
    ];
    let (mut bad, mut checked) = (Vec::new(), 0);
    for info in models() {
        let Some((_, table)) = tables.iter().find(|t| t.0 == info.name) else {
            continue;
        };
        for p in info.params {
            let cond = condition(info.name, p.key);
            for (v, ok) in range_probes(p) {
                let mut kv = cond.clone();
                kv.push((p.key, &v));
                checked += 1;
                match (model(table, info.name, &kv), ok) {
                    (Ok(_), true) => {}
                    (Err(e), false) if e.to_string().contains(p.key) => {}
                    (Err(e), true) => {
                        bad.push(format!("{} {}={v}: refused: {e}", info.name, p.key))
                    }
                    (Err(e), false) => bad.push(format!(
                        "{} {}={v}: refused without naming it: {e}",
                        info.name, p.key
                    )),
                    (Ok(_), false) => bad.push(format!(
                        "{} {}={v}: accepted outside the declared range",
                        info.name, p.key
                    )),
                }
            }
        }
    }
    eprintln!("{checked} model range probes");
    assert!(
        bad.is_empty(),
        "{} model range probes disagree with the schema:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// Small synthetic data of every model's own shape (the simulator's defaults), so each model
/// is covered, not only those with a bundled real table.
fn simulated(name: &str) -> (tallmc_core::data::Table, DesignSpec) {
    let (n, d) = match name {
        "pmf" => (300, 2),
        "lgssm" | "sv" | "garch" => (60, 1),
        _ => (120, 3),
    };
    let table = tallmc_core::simulate::simulate(name, n, d, 11, &Settings::new()).unwrap();
    let response = if table.column_index("y").is_some() && name != "gaussian" {
        "y"
    } else {
        ""
    };
    let spec = DesignSpec {
        response: response.into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    (table, spec)
}

/// What a built model is, bit for bit: its dimension and names, the log prior and full
/// log-likelihood at a few points (NaN for the particle-filter series models), and for a
/// time-series model its whole configuration (initial law and prior, by `Debug`).
fn fingerprint(m: &Arc<dyn DataModel>) -> Vec<String> {
    let mut f = vec![m.dim().to_string(), m.param_names().join(",")];
    let base = m.initial_point();
    for k in 0..3 {
        let theta: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(j, v)| v + 0.1 * k as f64 * (1.0 + j as f64 % 3.0))
            .collect();
        f.push(format!(
            "{:x} {:x}",
            m.log_prior(&theta).to_bits(),
            m.log_lik_all(&theta).to_bits()
        ));
    }
    if let Some(s) = m.as_series() {
        f.push(format!("{s:?}"));
    }
    f
}

/// A valid value of `p` other than its default (None when the kind has only one value).
fn other_value(p: &ParamSpec) -> Option<String> {
    match p.kind {
        ParamKind::Choice(c) => c.get(1).map(|v| v.to_string()),
        ParamKind::Bool(b) => Some((!b).to_string()),
        ParamKind::Int { default, min, max } => [default.checked_add(1), default.checked_sub(1)]
            .into_iter()
            .flatten()
            .find(|v| (min..=max).contains(v) && *v > 0)
            .map(|v| v.to_string()),
        _ => {
            let (ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. }) = p.kind
            else {
                unreachable!()
            };
            let r = p.kind.real_range()?;
            [default * 2.0, default / 2.0, default + 1.0, default - 1.0]
                .into_iter()
                .find(|v| v.is_finite() && *v != default && r.contains(*v))
                .map(|v| format!("{v:?}"))
        }
    }
}

/// Settings parsing of every model is driven by its schema (issue 18: each default written
/// once). For every model, on data of its own shape:
/// - every key its builder reads is declared in its schema, and every declared key is read
///   (alone, or under the setting it needs, [`CONDITIONS`]);
/// - each parameter given explicitly at its schema default builds the same model, bit for bit,
///   as leaving it out (a parser default that drifts from the schema fails);
/// - each parameter at another valid value builds a different model (the setting is read and
///   used, not shadowed by a second literal default);
/// - a key of another model's schema is not accepted.
#[test]
fn every_model_reads_exactly_its_schema() {
    let mut bad = Vec::new();
    let all_keys: Vec<&str> = models()
        .iter()
        .flat_map(|m| m.params.iter().map(|p| p.key))
        .collect();
    for info in models() {
        let (table, spec) = simulated(info.name);
        let build = |kv: &[(&str, &str)]| -> Result<(Arc<dyn DataModel>, Vec<String>), String> {
            let s = settings(kv);
            let m = build_model(info.name, &table, &spec, &s).map_err(|e| e.to_string())?;
            s.check_all_used().map_err(|e| e.to_string())?;
            Ok((m, s.used_keys()))
        };
        let declared: Vec<&str> = info.params.iter().map(|p| p.key).collect();
        // The keys read with no setting and under each condition: exactly the schema.
        let mut read: Vec<String> = Vec::new();
        let mut conds: Vec<Vec<(&str, &str)>> = vec![vec![]];
        conds.extend(info.params.iter().map(|p| condition(info.name, p.key)));
        for cond in &conds {
            match build(cond) {
                Ok((_, used)) => read.extend(used),
                Err(e) => bad.push(format!("{} {cond:?}: refused: {e}", info.name)),
            }
        }
        read.sort();
        read.dedup();
        for k in &read {
            if !declared.contains(&k.as_str()) {
                bad.push(format!("{} reads `{k}`, not in its schema", info.name));
            }
        }
        for k in &declared {
            if !read.iter().any(|r| r == k) {
                bad.push(format!("{} declares `{k}`, never read", info.name));
            }
        }
        for p in info.params {
            let cond = condition(info.name, p.key);
            let Ok((base, _)) = build(&cond) else {
                continue;
            };
            let base = fingerprint(&base);
            let v = default_text(p);
            let mut kv = cond.clone();
            kv.push((p.key, &v));
            match build(&kv) {
                Ok((m, _)) if fingerprint(&m) == base => {}
                Ok(_) => bad.push(format!("{} {kv:?}: differs from {cond:?}", info.name)),
                Err(e) => bad.push(format!("{} {kv:?}: refused: {e}", info.name)),
            }
            let Some(w) = other_value(p) else {
                bad.push(format!("{} {}: no other value to probe", info.name, p.key));
                continue;
            };
            let mut kv = cond.clone();
            kv.push((p.key, &w));
            match build(&kv) {
                Ok((m, _)) if fingerprint(&m) != base => {}
                Ok(_) => bad.push(format!(
                    "{} {kv:?}: builds the same model as {cond:?} (setting ignored)",
                    info.name
                )),
                Err(e) => bad.push(format!("{} {kv:?}: refused: {e}", info.name)),
            }
        }
        for k in all_keys.iter().filter(|k| !declared.contains(k)) {
            if build(&[(k, "1")]).is_ok() {
                bad.push(format!("{} accepts `{k}`, not in its schema", info.name));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} model settings disagree with the schema:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

/// The set-up cost of a chain built with `kv` (the mode search's evaluations among it).
fn setup_evals(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    kv: &[(&str, &str)],
) -> Result<u64, String> {
    let c = chain(model, sampler, kv)?.0.setup_cost();
    Ok(c.lik_evals + c.grad_evals)
}

/// The `mode_*` settings reach the mode search of every sampler that declares them (issue 18:
/// the schema drives the parsing): with `mode_max_iter=1` the search stops after one step, so
/// the set-up costs less than by default (the search runs to its tolerance), and an
/// out-of-range value is refused naming the key. The samplers with a mode search: smh-1/2 (the
/// Taylor centre), the minibatch MH family (the control variates' centre), hmc-ecs (the
/// subset mode), and the SG family (`init=mode`, control variates, automatic step and batch).
#[test]
fn mode_settings_reach_every_mode_search() {
    // Not whitened: a whitened model starts the search at its mode (z = 0, nothing to search).
    let m = model("hmda", "logistic", &[("reparam", "none")]).unwrap();
    let (mut bad, mut reached) = (Vec::new(), Vec::new());
    for info in samplers() {
        if !runs_on(info.name, "logistic") || !info.params.iter().any(|p| p.key == "mode_max_iter")
        {
            continue;
        }
        let base = setup_evals(&m, info.name, &[]).unwrap();
        let one = setup_evals(&m, info.name, &[("mode_max_iter", "1")]);
        match one {
            Ok(c) if c < base => reached.push(format!("{} {base} -> {c}", info.name)),
            other => bad.push(format!(
                "{} mode_max_iter=1: set-up {other:?}, default {base}",
                info.name
            )),
        }
        match setup_evals(&m, info.name, &[("mode_max_iter", "0")]) {
            Err(e) if e.contains("mode_max_iter") => {}
            other => bad.push(format!("{} mode_max_iter=0: {other:?}", info.name)),
        }
    }
    eprintln!("set-up evaluations, default -> mode_max_iter=1: {reached:?}");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert_eq!(reached.len(), 15, "{reached:?}");
}
