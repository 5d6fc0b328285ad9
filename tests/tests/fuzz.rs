//! Fuzz and property tests on generated input (stable Rust, the seeded driver of
//! `tallmc_tests::fuzz`): CSV parsing, `--set` settings through every sampler's and model's
//! schema and the registry, and the browser bindings' native halves. Every target checks that
//! nothing panics or hangs and that every error is one short line (≤ 300 characters, no echo of
//! a huge input). `cargo test` runs a short run of each; `make fuzz` runs 10⁶ cases per target
//! (`TALLMC_FUZZ_CASES`).

use std::sync::{Arc, OnceLock};
use tallmc_cli::csvdata::parse_csv_located;
use tallmc_core::data::{DesignSpec, Table};
use tallmc_core::registry::{
    build_model, build_reported_chain, compatible, models, samplers, ChainConfig, ParamKind,
    ParamSpec,
};
use tallmc_core::settings::Settings;
use tallmc_tests::fuzz::{check_message, run, Case};
use tallmc_web::chain::ChainCore;
use tallmc_web::config::RunConfig;
use tallmc_web::diag::DrawStore;
use tallmc_web::ksd::KsdCore;

/// Cases per target in `cargo test` (a few seconds in all).
const SHORT: u64 = 3_000;
/// Chains the settings and web targets build and step, about (a chain's set-up — mode searches,
/// step-size heuristics, particle-count trials — costs milliseconds to seconds, e.g. 11 s for
/// `hmc-ecs` on the 12-row `pmf` table; the parsing and validation before it, microseconds):
/// at most 2% of the cases, and about 2 000 per target in a long run.
fn build_fraction() -> f64 {
    (2_000.0 / tallmc_tests::fuzz::cases(SHORT) as f64).min(0.02)
}

// ------------------------------------------------------------------------------------------------
// Generators

/// Text that breaks parsers: empty, spaces, long, non-ASCII, control characters.
fn junk(c: &mut Case) -> String {
    match c.below(10) {
        0 => String::new(),
        1 => " ".repeat(c.below(4) + 1),
        2 => "x".repeat(1000 + c.below(5000)),
        3 => "9".repeat(300 + c.below(400)),
        4 => "é∑\u{1F600}\u{0}".into(),
        5 => "a\nb\rc\td".into(),
        6 => "=,;\"'\\".into(),
        7 => format!("{}", c.word()),
        8 => "-".into(),
        _ => {
            let n = c.below(12);
            (0..n)
                .map(|_| char::from_u32(c.below(0x3000) as u32).unwrap_or('?'))
                .collect()
        }
    }
}

/// A float written one of the ways a user might.
fn float_text(c: &mut Case, x: f64) -> String {
    match c.below(4) {
        0 => format!("{x}"),
        1 => format!("{x:e}"),
        2 => format!("{x:?}"),
        _ => format!(" {x} "),
    }
}

/// The neighbours of a bound: itself, the next floats each side, ±1, halves and doubles.
fn near(c: &mut Case, b: f64) -> f64 {
    let up = |x: f64| if x.is_finite() { x.next_up() } else { x };
    let down = |x: f64| if x.is_finite() { x.next_down() } else { x };
    match c.below(8) {
        0 | 1 => b,
        2 => up(b),
        3 => down(b),
        4 => b + 1.0,
        5 => b - 1.0,
        6 => b * 0.5,
        _ => b * 2.0,
    }
}

/// A value for parameter `p`: inside, at and beyond its declared range, or junk.
fn value_for(c: &mut Case, p: &ParamSpec) -> String {
    if c.chance(0.1) {
        return junk(c);
    }
    if c.chance(0.1) {
        return c
            .pick(&[
                "auto", "nan", "NaN", "inf", "-inf", "1e309", "-0", "0", "1e-320", "0x10", "+1",
                "1_0", "1,5", "true", "",
            ])
            .to_string();
    }
    match p.kind {
        ParamKind::Real { default, min, max }
        | ParamKind::RealOpen {
            default, min, max, ..
        } => {
            let x = match c.below(5) {
                0 => near(c, min),
                1 => near(c, max),
                2 if default.is_finite() => near(c, default),
                3 if min.is_finite() && max.is_finite() => min + (max - min) * c.unit(),
                _ => *c.pick(&[0.0, 1.0, -1.0, 0.1, 10.0, 1e300, -1e300, 1e-300, 5e-324]),
            };
            float_text(c, x)
        }
        ParamKind::Int { default, min, max } => {
            let v: i128 = match c.below(6) {
                0 => min as i128 + c.below(4) as i128 - 1,
                1 => max as i128 - c.below(4) as i128 + 1,
                2 => default as i128,
                3 => min as i128 + c.below(20) as i128,
                4 => *c.pick(&[0, 1, 2, 3, -1, 1 << 40, 1 << 70]),
                _ => {
                    return c
                        .pick(&["1.5", "1e3", "2.0", " 3 ", "+4", "0x5"])
                        .to_string()
                }
            };
            v.to_string()
        }
        ParamKind::Choice(choices) => match c.below(5) {
            0 => choices[0].to_uppercase(),
            1 => format!(" {} ", c.pick(choices)),
            _ => c.pick(choices).to_string(),
        },
        ParamKind::Bool(_) => c
            .pick(&["true", "false", "1", "0", "yes", "TRUE", "on", "no"])
            .to_string(),
    }
}

/// Tiny data for every model, simulated once (the registry's own simulators).
fn tables() -> &'static Vec<(&'static str, Table)> {
    static T: OnceLock<Vec<(&'static str, Table)>> = OnceLock::new();
    T.get_or_init(|| {
        models()
            .iter()
            .map(|m| {
                // pmf with few users and items (the default 50 × 40 gives ≈ 900 parameters,
                // whose dense mode search takes seconds: 11.7 s for `sgld-cv`).
                let mut s = Settings::new();
                if m.name == "pmf" {
                    s.insert("users", "4");
                    s.insert("items", "3");
                }
                let t = tallmc_core::simulate::simulate(m.name, 12, 2, 1, &s)
                    .unwrap_or_else(|e| panic!("simulate {}: {e}", m.name));
                (m.name, t)
            })
            .collect()
    })
}

/// A model, a sampler (usually one that runs on the model), and `--set` pairs drawn from both
/// schemas (keys near and beyond their ranges, junk keys and values).
fn settings_case(c: &mut Case) -> (&'static str, String, Vec<String>) {
    let m = c.pick(models());
    let runs: Vec<&'static str> = samplers()
        .iter()
        .map(|s| s.name)
        .filter(|s| compatible(s, m.name))
        .collect();
    let sampler = if c.chance(0.9) && !runs.is_empty() {
        c.pick(&runs).to_string()
    } else if c.chance(0.5) {
        c.pick(samplers()).name.to_string()
    } else {
        junk(c)
    };
    let s_params = tallmc_core::registry::sampler(&sampler)
        .map(|s| s.params)
        .unwrap_or(&[]);
    let mut pairs = Vec::new();
    for _ in 0..c.below(5) {
        let r = c.unit();
        let (key, value) = if r < 0.55 && !s_params.is_empty() {
            let p = c.pick(s_params);
            (p.key.to_string(), value_for(c, p))
        } else if r < 0.85 && !m.params.is_empty() {
            let p = c.pick(m.params);
            (p.key.to_string(), value_for(c, p))
        } else {
            (junk(c), junk(c))
        };
        let pair = match c.below(12) {
            0 => key,
            1 => format!("={value}"),
            2 => format!(" {key} = {value} "),
            _ => format!("{key}={value}"),
        };
        pairs.push(pair);
    }
    (m.name, sampler, pairs)
}

/// CSV bytes: raw bytes, CSV-ish token soup, or a table with anomalies (ragged rows, BOM, CRLF
/// and lone CR, quotes, NaN/inf, huge numbers, blank lines, non-UTF-8).
fn csv_bytes(c: &mut Case) -> Vec<u8> {
    match c.below(3) {
        0 => (0..c.below(80)).map(|_| c.word() as u8).collect(),
        1 => {
            const TOKENS: &[&[u8]] = &[
                b",",
                b"\n",
                b"\r\n",
                b"\r",
                b"\"",
                b" ",
                b"1",
                b"-2.5",
                b"e",
                b"y",
                b"x",
                b"\xEF\xBB\xBF",
                b"\xFF",
                b"\0",
                b"\t",
                b"nan",
                b"inf",
                b"1e400",
                b"\"\"",
            ];
            let mut out = Vec::new();
            for _ in 0..c.below(60) {
                out.extend_from_slice(c.pick::<&[u8]>(TOKENS));
            }
            out
        }
        _ => {
            const NAMES: &[&[u8]] = &[
                b"y",
                b"x",
                b"a",
                b"b",
                b"x1",
                b"",
                b"1",
                b"2.5",
                b"nan",
                b"\"q\"",
                b"  y  ",
                "é".as_bytes(),
                b"\xFF\xFE",
                b"y",
            ];
            const CELLS: &[&[u8]] = &[
                b"0",
                b"1",
                b"-1.5",
                b"1e308",
                b"1e309",
                b"-1e309",
                b"4.9e-324",
                b"1e-400",
                b"NaN",
                b"nan",
                b"inf",
                b"-inf",
                b"Infinity",
                b"+3",
                b"0x10",
                b"1_0",
                b" 2 ",
                b"\"3\"",
                b"\"4",
                b"",
                b"abc",
                b".5",
                b"5.",
                b"-0",
                b"\"1,5\"",
                b"\xC3\x28",
                b"1e99999",
            ];
            let ncol = 1 + c.below(4);
            let mut out = Vec::new();
            if c.chance(0.2) {
                out.extend_from_slice(b"\xEF\xBB\xBF");
            }
            let eol: &[u8] = c.pick::<&[u8]>(&[&b"\n"[..], b"\r\n", b"\r"]);
            let row = |c: &mut Case, out: &mut Vec<u8>, cells: &[&[u8]]| {
                let k = match c.below(10) {
                    0 => ncol.saturating_sub(1),
                    1 => ncol + 1,
                    _ => ncol,
                };
                for j in 0..k {
                    if j > 0 {
                        out.push(b',');
                    }
                    if c.chance(0.02) {
                        out.extend(std::iter::repeat_n(b'7', 500 + c.below(2000)));
                    } else {
                        out.extend_from_slice(c.pick::<&[u8]>(cells));
                    }
                }
            };
            if c.chance(0.1) {
                out.extend_from_slice(eol);
            }
            row(c, &mut out, NAMES);
            for _ in 0..c.below(6) {
                out.extend_from_slice(eol);
                if c.chance(0.1) {
                    out.extend_from_slice(eol);
                }
                row(c, &mut out, CELLS);
            }
            if c.chance(0.5) {
                out.extend_from_slice(eol);
            }
            out
        }
    }
}

/// A valid table written with random spacing, quoting, line endings, blank lines and BOM:
/// (bytes, names, columns, file line of each data row).
type Written = (Vec<u8>, Vec<String>, Vec<Vec<f64>>, Vec<u64>);
fn valid_csv(c: &mut Case) -> Written {
    let ncol = 1 + c.below(4);
    let nrow = 1 + c.below(6);
    let names: Vec<String> = (0..ncol)
        .map(|j| format!("c{j}_{}", c.below(100)))
        .collect();
    let names: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(j, n)| format!("{n}{j}"))
        .collect();
    let columns: Vec<Vec<f64>> = (0..ncol)
        .map(|_| {
            (0..nrow)
                .map(|_| match c.below(3) {
                    0 => c.below(3) as f64,
                    1 => (c.unit() - 0.5) * 1e3,
                    _ => {
                        let x = f64::from_bits(c.word());
                        if x.is_finite() {
                            x
                        } else {
                            -1.25
                        }
                    }
                })
                .collect()
        })
        .collect();
    let eol: &[u8] = c.pick::<&[u8]>(&[&b"\n"[..], b"\r\n", b"\r"]);
    let blank = 0.1;
    let mut out = Vec::new();
    let mut line = 1u64;
    if c.chance(0.3) {
        out.extend_from_slice(b"\xEF\xBB\xBF");
    }
    let cell = |c: &mut Case, out: &mut Vec<u8>, text: &str| {
        let pad = if c.chance(0.2) { " " } else { "" };
        if c.chance(0.2) {
            // Spaces inside the quotes: `, "1"` is a cell with quote characters for the reader.
            out.extend_from_slice(format!("\"{pad}{text}{pad}\"").as_bytes());
        } else {
            out.extend_from_slice(format!("{pad}{text}{pad}").as_bytes());
        }
    };
    while c.chance(blank) {
        out.extend_from_slice(eol);
        line += 1;
    }
    for (j, n) in names.iter().enumerate() {
        if j > 0 {
            out.push(b',');
        }
        cell(c, &mut out, n);
    }
    let mut lines = Vec::new();
    for r in 0..nrow {
        out.extend_from_slice(eol);
        line += 1;
        while c.chance(blank) {
            out.extend_from_slice(eol);
            line += 1;
        }
        lines.push(line);
        for (j, col) in columns.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            let x = col[r];
            let text = match c.below(3) {
                0 => format!("{x}"),
                1 => format!("{x:e}"),
                _ => format!("{x:?}"),
            };
            cell(c, &mut out, &text);
        }
    }
    if c.chance(0.5) {
        out.extend_from_slice(eol);
    }
    (out, names, columns, lines)
}

// ------------------------------------------------------------------------------------------------
// (a) CSV parsing

fn csv_case(c: &mut Case) -> Result<bool, String> {
    if c.chance(0.25) {
        // Property: a valid table round-trips exactly, with the right file line for every row.
        let (bytes, names, columns, lines) = valid_csv(c);
        c.input(|| format!("{:?}", String::from_utf8_lossy(&bytes)));
        let (t, rl) = parse_csv_located(&bytes, "fuzz.csv")
            .map_err(|e| format!("a valid table was refused: {e}"))?;
        if t.names != names {
            return Err(format!("names {:?}, expected {names:?}", t.names));
        }
        for (got, want) in t.columns.iter().zip(&columns) {
            if got
                .iter()
                .map(|x| x.to_bits())
                .ne(want.iter().map(|x| x.to_bits()))
            {
                return Err(format!("values {got:?}, expected {want:?}"));
            }
        }
        for (r, &l) in lines.iter().enumerate() {
            if rl.line_of_row(r + 1) != l {
                return Err(format!(
                    "row {} is on line {l}, reported {}",
                    r + 1,
                    rl.line_of_row(r + 1)
                ));
            }
        }
        return Ok(true);
    }
    let bytes = csv_bytes(c);
    c.input(|| format!("{:?}", String::from_utf8_lossy(&bytes)));
    // Property: the plain-file path changes nothing (same table bits, lines and messages as
    // the general reader alone).
    let (fast, general) = (
        parse_csv_located(&bytes, "fuzz.csv"),
        tallmc_cli::csvdata::parse_csv_general(&bytes, "fuzz.csv"),
    );
    let same = match (&fast, &general) {
        (Ok((a, la)), Ok((b, lb))) => {
            a.names == b.names
                && la == lb
                && a.columns.iter().zip(&b.columns).all(|(x, y)| {
                    x.len() == y.len() && x.iter().zip(y).all(|(u, v)| u.to_bits() == v.to_bits())
                })
        }
        (Err(a), Err(b)) => a.to_string() == b.to_string(),
        _ => false,
    };
    if !same {
        return Err(format!(
            "plain path {:?} vs general reader {:?}",
            fast.as_ref()
                .map(|(t, _)| t.nrows())
                .map_err(|e| e.to_string()),
            general
                .as_ref()
                .map(|(t, _)| t.nrows())
                .map_err(|e| e.to_string())
        ));
    }
    match fast {
        Ok((t, rl)) => {
            let n = t.nrows();
            if t.names.is_empty() || n == 0 || t.columns.iter().any(|col| col.len() != n) {
                return Err("an accepted table is empty or ragged".into());
            }
            if t.columns.iter().flatten().any(|v| !v.is_finite()) {
                return Err("an accepted table holds a non-finite value".into());
            }
            let lines: Vec<u64> = (1..=n).map(|r| rl.line_of_row(r)).collect();
            if lines[0] < 2 || lines.windows(2).any(|w| w[0] >= w[1]) {
                return Err(format!("row lines not increasing from 2: {lines:?}"));
            }
            Ok(true)
        }
        Err(e) => check_message(&e.to_string()).map(|_| false),
    }
}

#[test]
fn fuzz_csv() {
    run("csv", SHORT, csv_case);
}

// ------------------------------------------------------------------------------------------------
// (b) settings through every schema and the registry

/// A `pmf` rank above 50 on the fuzz table (7 users and items: 7·rank parameters) makes the
/// dense mode search of the control-variate samplers take minutes (O(d³) per Newton step at
/// d = 7 000 for the declared maximum 999): slow, not stuck, and not what these targets test.
fn slow_setup(model: &str, s: &Settings) -> bool {
    model == "pmf"
        && s.iter()
            .any(|(k, v)| k == "rank" && v.trim().parse::<f64>().is_ok_and(|r| r > 50.0))
}

fn settings_run(c: &mut Case) -> Result<bool, String> {
    let (model, sampler, pairs) = settings_case(c);
    let warmup = *c.pick(&[0, 1, 2, 5, 20, 1000, 1_000_000_000, usize::MAX]);
    let design = DesignSpec {
        response: if c.chance(0.95) { "y".into() } else { junk(c) },
        features: None,
        intercept: c.chance(0.8),
        standardize: c.chance(0.2),
    };
    c.input(|| {
        format!("model {model:?} sampler {sampler:?} warmup {warmup} {design:?} --set {pairs:?}")
    });
    let table = &tables().iter().find(|(m, _)| *m == model).unwrap().1;
    let mut s = Settings::new();
    for p in &pairs {
        if let Err(e) = s.insert_pair(p) {
            return check_message(&e.to_string()).map(|_| false);
        }
    }
    let refuse = |e: tallmc_core::Error| check_message(&e.to_string()).map(|_| false);
    // Every declared parameter of the sampler and the model through its schema reader.
    let s_params = tallmc_core::registry::sampler(&sampler).map_or(&[][..], |i| i.params);
    let m_params = models()
        .iter()
        .find(|m| m.name == model)
        .map_or(&[][..], |m| m.params);
    for p in s_params.iter().chain(m_params) {
        let r = match p.kind {
            ParamKind::Real { default, .. } if default.is_nan() => {
                p.positive_or_auto(&s).map(|_| ())
            }
            ParamKind::Real { .. } | ParamKind::RealOpen { .. } => p.real(&s).map(|_| ()),
            ParamKind::Int { .. } => p.int_or_auto(&s).map(|_| ()),
            ParamKind::Choice(_) => p.choice(&s).map(|_| ()),
            ParamKind::Bool(_) => p.flag(&s).map(|_| ()),
        };
        if let Err(e) = r {
            check_message(&e.to_string())?;
        }
    }
    let s = {
        // A fresh bag for the registry (the readers above marked every key used).
        let mut fresh = Settings::new();
        for (k, v) in s.iter() {
            fresh.insert(k, v);
        }
        fresh
    };
    let m = match build_model(model, table, &design, &s) {
        Ok(m) => m,
        Err(e) => return refuse(e),
    };
    if !c.chance(build_fraction()) || slow_setup(model, &s) {
        return Ok(true);
    }
    let config = ChainConfig {
        sampler: &sampler,
        warmup,
        settings: &s,
    };
    let mut rng = tallmc_core::rng::chain_rng(1, 0);
    let mut chain = match build_reported_chain(&config, m, &mut rng) {
        Ok(ch) => ch,
        Err(e) => return refuse(e),
    };
    if let Err(e) = s.check_all_used() {
        return refuse(e);
    }
    if chain.param_names().len() != chain.dim() {
        return Err("param_names and dim disagree".into());
    }
    for _ in 0..3 {
        chain.step(&mut rng);
        if chain.position().len() != chain.dim() {
            return Err("position length is not dim".into());
        }
    }
    Ok(true)
}

#[test]
fn fuzz_settings() {
    tables();
    run("settings", SHORT, settings_run);
}

// ------------------------------------------------------------------------------------------------
// (c) the browser bindings' native halves

/// A JSON value of a random type.
fn json_value(c: &mut Case) -> serde_json::Value {
    use serde_json::json;
    match c.below(9) {
        0 => json!(null),
        1 => json!(c.chance(0.5)),
        2 => json!(c.below(5)),
        3 => json!(-1),
        4 => json!(1e300),
        5 => json!(u64::MAX),
        6 => json!([1, 2]),
        7 => json!({"a": 1}),
        _ => json!(junk(c)),
    }
}

/// A playground configuration: valid fields mostly, wrong types and unknown fields sometimes,
/// settings from the schemas; then, sometimes, the text is cut or corrupted.
fn config_text(c: &mut Case) -> (String, &'static str) {
    use serde_json::{json, Map, Value};
    let (model, sampler, pairs) = settings_case(c);
    let mut o = Map::new();
    let mut put = |c: &mut Case, k: &str, v: Value| {
        if c.chance(0.05) {
            o.insert(k.into(), json_value(c));
        } else if c.chance(0.95) {
            o.insert(k.into(), v);
        }
    };
    put(c, "model", json!(model));
    put(c, "sampler", json!(sampler));
    let response = if c.chance(0.9) {
        "y".to_string()
    } else {
        junk(c)
    };
    put(c, "response", json!(response));
    if c.chance(0.2) {
        let f = if c.chance(0.5) {
            json!(["x1"])
        } else {
            json!([junk(c)])
        };
        put(c, "features", f);
    }
    let (intercept, standardize) = (c.chance(0.8), c.chance(0.2));
    put(c, "intercept", json!(intercept));
    put(c, "standardize", json!(standardize));
    let w = *c.pick(&[0u64, 1, 5, 20, 1000, 1 << 40, u64::MAX]);
    put(c, "warmup", json!(w));
    let mut settings = Map::new();
    for p in pairs {
        let (k, v) = p.split_once('=').unwrap_or((p.as_str(), ""));
        let v = match c.below(6) {
            0 => json_value(c),
            1 => v
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|x| serde_json::Number::from_f64(x).map(Value::Number))
                .unwrap_or(json!(v)),
            _ => json!(v.trim()),
        };
        settings.insert(k.trim().to_string(), v);
    }
    put(c, "settings", Value::Object(settings));
    let seed = match c.below(4) {
        0 => json!(c.word().to_string()),
        1 => json_value(c),
        _ => json!(c.below(1000)),
    };
    put(c, "seed", seed);
    let chain = c.below(4);
    put(c, "chain", json!(chain));
    if c.chance(0.03) {
        let k = junk(c);
        o.insert(k, json!(1));
    }
    let mut text = Value::Object(o).to_string();
    if c.chance(0.1) {
        let mut b = text.into_bytes();
        match c.below(3) {
            0 => b.truncate(c.below(b.len() + 1)),
            1 if !b.is_empty() => {
                let i = c.below(b.len());
                b[i] = c.word() as u8;
            }
            _ => {
                let i = c.below(b.len() + 1);
                b.insert(i, *c.pick(b"{}[],:\"\\0e-"));
            }
        }
        text = String::from_utf8_lossy(&b).into_owned();
    }
    (text, model)
}

fn web_run(c: &mut Case) -> Result<bool, String> {
    use tallmc_web::data::{parse_csv, simulate_table, table_from_columns};
    let (text, model) = config_text(c);
    // The data set, as the data worker makes it.
    let table: Table = match c.below(10) {
        0..=5 => tables()
            .iter()
            .find(|(m, _)| *m == model)
            .unwrap()
            .1
            .clone(),
        6 | 7 => {
            let bytes = if c.chance(0.5) {
                csv_bytes(c)
            } else {
                valid_csv(c).0
            };
            c.input(|| format!("csv {:?}", String::from_utf8_lossy(&bytes)));
            match parse_csv(&bytes, "upload.csv") {
                Ok(t) => t,
                Err(e) => return check_message(&e).map(|_| false),
            }
        }
        8 => {
            let m = if c.chance(0.9) {
                c.pick(models()).name.to_string()
            } else {
                junk(c)
            };
            let n = *c.pick(&[0usize, 1, 2, 10, 1 << 30, usize::MAX]);
            let d = *c.pick(&[0usize, 1, 2, 5, 1 << 30, usize::MAX]);
            c.input(|| format!("simulate {m:?} n {n} d {d}"));
            match simulate_table(&m, n, d, c.word()) {
                Ok(t) => t,
                Err(e) => return check_message(&e).map(|_| false),
            }
        }
        _ => {
            let k = c.below(4);
            let names: Vec<String> = (0..k)
                .map(|j| {
                    if c.chance(0.9) {
                        format!("c{j}")
                    } else {
                        junk(c)
                    }
                })
                .collect();
            let values: Vec<f64> = (0..c.below(13))
                .map(|_| *c.pick(&[0.0, 1.0, -2.5, f64::NAN, f64::INFINITY, 1e308]))
                .collect();
            c.input(|| format!("columns {names:?} {values:?}"));
            match table_from_columns(names, &values) {
                Ok(t) => t,
                Err(e) => return check_message(&e).map(|_| false),
            }
        }
    };
    c.input(|| {
        format!(
            "config {text} on a {}×{} table",
            table.nrows(),
            table.names.len()
        )
    });
    let config = match RunConfig::parse(&text) {
        Ok(cfg) => cfg,
        Err(e) => return check_message(&e).map(|_| false),
    };
    // What ChainCore::new reads before it builds the chain, on every case.
    let settings = match config.settings() {
        Ok(s) => s,
        Err(e) => return check_message(&e).map(|_| false),
    };
    if let Err(e) = config.seed() {
        return check_message(&e).map(|_| false);
    }
    if let Err(e) = build_model(&config.model, &table, &config.design(), &settings) {
        return check_message(&e.to_string()).map(|_| false);
    }
    if !c.chance(build_fraction()) || slow_setup(&config.model, &settings) {
        return Ok(true);
    }
    let mut chain = match ChainCore::new(&config, &table) {
        Ok(ch) => ch,
        Err(e) => return check_message(&e).map(|_| false),
    };
    let d = chain.dim();
    let b = chain.run(c.below(4));
    if b.draws.len() != b.n * d || b.sign.len() != b.n {
        return Err("batch shape".into());
    }
    // The diagnostics worker: a draw store fed this batch and junk batches.
    let chains = 1 + c.below(3);
    let signed = chain.chain().signed();
    let mut store =
        DrawStore::try_new(chains, d, signed).map_err(|e| format!("draw store: {e}"))?;
    let junk_batch: Vec<f64> = (0..c.below(7)).map(|_| c.unit()).collect();
    for (draws, signs) in [(&b.draws, &b.sign), (&junk_batch, &junk_batch)] {
        if let Err(e) = store.push_draws(c.below(chains + 1), draws, signs) {
            check_message(&e)?;
        }
    }
    let _ = store.summary_rows();
    let names: Vec<String> = (0..c.below(d + 2)).map(|j| format!("p{j}")).collect();
    for w in store.warning_lines(&names, &[c.below(3) as u32]) {
        // A warning names up to three parameters and what to do: one line, not an error.
        if w.contains('\n') || w.chars().count() > 600 {
            return Err(format!("warning is not one line: {w:?}"));
        }
    }
    let _ = store.acf_values(c.below(d + 1), c.below(50));
    // The plain diagnostics on flat arrays with chain lengths.
    let lengths: Vec<u32> = (0..c.below(4)).map(|_| c.below(4) as u32).collect();
    match tallmc_web::diag::split(&b.draws, &lengths) {
        Ok(parts) => {
            let _ = tallmc_core::diag::summarize(&parts);
            let _ = tallmc_core::diag::rhat(&parts);
        }
        Err(e) => check_message(&e)?,
    }
    // The KSD worker: its own copy of the model, the kept draws, the discrepancy.
    let mut ksd = match KsdCore::new(&config, &table, chains, signed, c.below(6)) {
        Ok(k) => k,
        Err(e) => return check_message(&e).map(|_| true),
    };
    if let Err(e) = ksd.push(c.below(chains + 1), &b.draws, &b.sign) {
        check_message(&e)?;
    }
    if let Err(e) = ksd.compute() {
        check_message(&e)?;
    }
    Ok(true)
}

#[test]
fn fuzz_web() {
    tables();
    run("web", SHORT, web_run);
}

/// The tables shared by the targets are well-formed for their models (else the settings and
/// web targets would only exercise error paths).
#[test]
fn fuzz_tables_build_every_model() {
    for (m, t) in tables() {
        let d = DesignSpec {
            response: "y".into(),
            features: None,
            intercept: true,
            standardize: false,
        };
        let model = build_model(m, t, &d, &Settings::new());
        assert!(model.is_ok(), "{m}: {:?}", model.err());
        let _ = Arc::clone(&model.unwrap());
    }
}

/// Found by `fuzz_settings`: `pmf` with `rank=999` on 12 rows had ≈ 88 000 parameters, and the
/// mode search of `sghmc` allocated a dense 88 000² Hessian (62 GB) and aborted. It became an
/// error; since the stochastic-gradient set-up went matrix-free above d = 2 000 (issue 19) the
/// chain sets up and steps without any d × d matrix, and a sampler that needs the dense Laplace
/// covariance (`sgld-cv-ps`) refuses in one line.
#[test]
fn a_mode_search_too_large_is_an_error_not_an_abort() {
    // The simulator's default 50 users × 40 items.
    let table = tallmc_core::simulate::simulate("pmf", 12, 2, 1, &Settings::new()).unwrap();
    let table = &table;
    let mut s = Settings::new();
    s.insert("rank", "999");
    let design = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let m = build_model("pmf", table, &design, &s).unwrap();
    let config = ChainConfig {
        sampler: "sghmc",
        warmup: 20,
        settings: &s,
    };
    let mut rng = tallmc_core::rng::chain_rng(1, 0);
    let mut chain = build_reported_chain(&config, m.clone(), &mut rng)
        .unwrap_or_else(|e| panic!("sghmc at d = {}: {e}", m.dim()));
    assert!(m.dim() > 80_000);
    for _ in 0..3 {
        chain.step(&mut rng);
    }
    assert!(chain.position().iter().all(|v| v.is_finite()));
    let dense = ChainConfig {
        sampler: "sgld-cv-ps",
        warmup: 20,
        settings: &s,
    };
    let e = build_reported_chain(&dense, m, &mut rng)
        .err()
        .expect("sgld-cv-ps needs a dense covariance")
        .to_string();
    assert!(e.contains("dense"), "{e}");
    check_message(&e).unwrap();
}

/// Found by `fuzz_web`: a configuration with `"chain": 18446744073709551615` hung the chain's
/// constructor (`chain_rng` jumps the stream once per chain index). Now an error.
#[test]
fn a_huge_chain_index_is_an_error_not_a_hang() {
    let table = &tables().iter().find(|(m, _)| *m == "logistic").unwrap().1;
    let config = RunConfig::parse(
        r#"{"model":"logistic","sampler":"rwmh","warmup":5,"chain":18446744073709551615}"#,
    )
    .unwrap();
    let e = ChainCore::new(&config, table).err().unwrap();
    assert!(e.contains("`chain`"), "{e}");
    check_message(&e).unwrap();
}

/// Found by `fuzz_csv`: a blank line before the header or before the first data row was not
/// counted in row line numbers (row 1 of "y\n\n1" was reported on line 2).
#[test]
fn blank_lines_before_the_first_row_are_counted() {
    for (text, line) in [("y\n\n1\n2", 3), ("\r\ny\r\n1\r\n2", 3), ("y\r\r1\r2", 3)] {
        let (_, rl) = parse_csv_located(text.as_bytes(), "t.csv").unwrap();
        assert_eq!(rl.line_of_row(1), line, "{text:?}");
        assert_eq!(rl.line_of_row(2), line + 1, "{text:?}");
    }
}
