//! The `tallmc` binary end to end: every bad input gives exit code 2 and one `error:` line
//! naming the file, line, column or option; a run writes the four output files with the
//! specified columns, and the same seed gives the same draws.

mod common;
use common::{tallmc, TempDir};
use std::path::Path;

/// Exit code 2, exactly one stderr line `error: …` containing every `needle`, no panic text.
fn assert_input_error(args: &[&str], needles: &[&str]) -> String {
    common::assert_input_error(args, needles, &[])
}

/// `tallmc run` on `data` with a standard set of options plus `extra`.
fn run_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    sampler_args(data, out, "rwmh", "2", extra)
}

/// [`run_args`] with another sampler and number of chains.
fn sampler_args<'a>(
    data: &'a str,
    out: &'a str,
    sampler: &'a str,
    chains: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--sampler",
        sampler,
        "--chains",
        chains,
        "--warmup",
        "10",
        "--draws",
        "10",
        "--seed",
        "1",
        "--out",
        out,
    ];
    v.extend_from_slice(extra);
    v
}

fn bad_data(name: &str, contents: &str, needles: &[&str]) {
    let dir = TempDir::new(name);
    let data = dir.file("data.csv", contents.as_bytes());
    let out = dir.join("out");
    let mut n = vec!["data.csv"];
    n.extend_from_slice(needles);
    assert_input_error(&run_args(&data, &out, &[]), &n);
    assert!(
        !Path::new(&out).exists(),
        "no output directory is created on bad input"
    );
}

#[test]
fn missing_file() {
    let dir = TempDir::new("missing");
    let data = dir.join("nope.csv");
    let out = dir.join("out");
    assert_input_error(&run_args(&data, &out, &[]), &["nope.csv", "no such file"]);
}

#[test]
fn ragged_row() {
    bad_data(
        "ragged",
        "y,x1,x2\n1,0.5,2\n0,1.5\n",
        &["line 3", "column \"x2\"", "2 fields but the header has 3"],
    );
    bad_data(
        "ragged-long",
        "y,x1\n1,0.5\n0,1.5,7\n",
        &["line 3", "3 fields but the header has 2"],
    );
}

#[test]
fn non_numeric_cell() {
    let mut s = String::from("y,x1,x2\n");
    for _ in 0..5 {
        s.push_str("1,0.5,2\n");
    }
    s.push_str("0,1.5,abc\n");
    let dir = TempDir::new("nonnum");
    let data = dir.file("data.csv", s.as_bytes());
    let line = assert_input_error(&run_args(&data, &dir.join("out"), &[]), &[]);
    assert!(
        line.ends_with("data.csv: line 7, column \"x2\": \"abc\" is not a number"),
        "{line}"
    );
}

#[test]
fn nan_and_infinite_cells() {
    bad_data(
        "nan",
        "y,x\n1,0.5\n0,NaN\n",
        &["line 3", "column \"x\"", "\"NaN\" is not a finite number"],
    );
    bad_data(
        "inf",
        "y,x\n1,inf\n",
        &["line 2", "column \"x\"", "\"inf\" is not a finite number"],
    );
    bad_data(
        "empty-cell",
        "y,x\n1,\n",
        &["line 2", "column \"x\"", "empty cell"],
    );
}

#[test]
fn zero_rows_and_empty_file() {
    bad_data("header-only", "y,x\n", &["no data rows"]);
    bad_data("empty", "", &["the file is empty"]);
}

#[test]
fn duplicate_column() {
    bad_data(
        "dup",
        "y,x,x\n1,2,3\n",
        &["line 1", "column \"x\"", "duplicate column name"],
    );
}

#[test]
fn missing_response_column() {
    let dir = TempDir::new("noresp");
    let data = dir.file("data.csv", b"label,x\n1,2\n");
    assert_input_error(
        &run_args(&data, &dir.join("out"), &[]),
        &["data.csv", "no column \"y\"", "--response"],
    );
}

#[test]
fn unknown_feature_column() {
    let dir = TempDir::new("nofeat");
    let data = dir.file("data.csv", b"y,x\n1,2\n");
    assert_input_error(
        &run_args(&data, &dir.join("out"), &["--features", "x,z"]),
        &["no column \"z\"", "--features"],
    );
}

#[test]
fn unknown_command_line_option() {
    let dir = TempDir::new("badopt");
    let data = dir.file("data.csv", b"y,x\n1,2\n");
    assert_input_error(
        &run_args(&data, &dir.join("out"), &["--bogus"]),
        &["--bogus"],
    );
    let out = dir.join("out");
    let mut args = run_args(&data, &out, &[]);
    args[10] = "two";
    assert_input_error(&args, &["--chains", "two"]);
    assert_input_error(&["run", "--data", &data], &["required", "--model"]);
}

#[test]
fn malformed_set_option() {
    let dir = TempDir::new("badset");
    let data = dir.file("data.csv", b"y,x\n1,2\n");
    assert_input_error(
        &run_args(&data, &dir.join("out"), &["--set", "step_size"]),
        &["--set step_size", "key=value"],
    );
}

#[test]
fn unknown_model() {
    let dir = TempDir::new("badmodel");
    let data = dir.file("data.csv", b"y,x\n1,2\n");
    let out = dir.join("out");
    let mut args = run_args(&data, &out, &[]);
    args[4] = "nosuchmodel";
    assert_input_error(&args, &["unknown model `nosuchmodel`"]);
}

#[test]
fn bad_counts() {
    let dir = TempDir::new("badcounts");
    let data = dir.file("data.csv", b"y,x\n1,2\n");
    let out = dir.join("out");
    let mut args = run_args(&data, &out, &[]);
    args[10] = "0";
    assert_input_error(&args, &["--chains"]);
    let mut args = run_args(&data, &out, &[]);
    args[14] = "0";
    assert_input_error(&args, &["--draws"]);
}

#[test]
fn repro_unknown_experiment() {
    assert_input_error(
        &["repro", "no-such-experiment"],
        &["unknown experiment `no-such-experiment`"],
    );
    let out = tallmc(&["repro"]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn listings_succeed() {
    for cmd in ["samplers", "models"] {
        let out = tallmc(&[cmd]);
        assert_eq!(out.status.code(), Some(0), "{cmd}");
        assert!(!out.stdout.is_empty(), "{cmd}");
    }
}

#[test]
fn simulate_bad_input() {
    let dir = TempDir::new("simbad");
    let out = dir.join("d.csv");
    assert_input_error(
        &[
            "simulate",
            "--model",
            "nosuchmodel",
            "--n",
            "10",
            "--out",
            &out,
        ],
        &["unknown model `nosuchmodel`"],
    );
    assert_input_error(
        &[
            "simulate", "--model", "logistic", "--n", "ten", "--out", &out,
        ],
        &["--n", "ten"],
    );
}

// ---- Tests that use the model and sampler registries. ----

#[test]
fn non_binary_response_for_logistic() {
    bad_data(
        "nonbinary",
        "y,x\n1,0.5\n0,1\n2,0.3\n",
        &["line 4", "column \"y\"", "0 or 1"],
    );
}

#[test]
fn unknown_sampler() {
    let dir = TempDir::new("badsampler");
    let data = dir.file("data.csv", b"y,x\n1,2\n0,1\n");
    let out = dir.join("out");
    let mut args = run_args(&data, &out, &[]);
    args[8] = "nosuchsampler";
    assert_input_error(&args, &["unknown sampler `nosuchsampler`", "available:"]);
}

#[test]
fn unknown_and_invalid_settings() {
    let dir = TempDir::new("setkeys");
    let data = dir.file("data.csv", b"y,x\n1,2\n0,1\n1,0\n");
    let out = dir.join("out");
    assert_input_error(
        &run_args(&data, &out, &["--set", "no_such_key=1"]),
        &["--set no_such_key", "unknown option"],
    );
    assert_input_error(
        &run_args(&data, &out, &["--set", "prior_scale=abc"]),
        &["--set prior_scale", "abc"],
    );
    assert!(!Path::new(&out).exists());
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn simulate_logistic(dir: &TempDir) -> String {
    let data = dir.join("data.csv");
    let out = tallmc(&[
        "simulate", "--model", "logistic", "--n", "500", "--d", "3", "--seed", "11", "--out", &data,
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    data
}

fn run_ok(data: &str, out: &str, sampler: &str, seed: &str) {
    run_model_ok(data, "logistic", out, sampler, seed)
}

fn run_model_ok(data: &str, model: &str, out: &str, sampler: &str, seed: &str) {
    let o = tallmc(&[
        "run",
        "--data",
        data,
        "--model",
        model,
        "--response",
        "y",
        "--sampler",
        sampler,
        "--chains",
        "2",
        "--warmup",
        "100",
        "--draws",
        "150",
        "--seed",
        seed,
        "--out",
        out,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn run_writes_the_four_files() {
    let dir = TempDir::new("run");
    let data = simulate_logistic(&dir);
    let header = read(Path::new(&data)).lines().next().unwrap().to_string();
    assert_eq!(header, "y,x1,x2");
    let out = dir.path().join("out");
    run_ok(&data, out.to_str().unwrap(), "nuts", "5");

    let params = ["intercept", "x1", "x2"];
    // draws.csv
    let draws = read(&out.join("draws.csv"));
    let mut lines = draws.lines();
    assert_eq!(lines.next().unwrap(), "chain,draw,intercept,x1,x2");
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse::<f64>().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), 2 * 150);
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r.len(), 5);
        assert_eq!(r[0], (i / 150) as f64);
        assert_eq!(r[1], (i % 150) as f64);
        assert!(r[2..].iter().all(|v| v.is_finite()));
    }

    // summary.csv: the means are the means of draws.csv.
    let summary = read(&out.join("summary.csv"));
    let mut lines = summary.lines();
    assert_eq!(
        lines.next().unwrap(),
        "param,mean,sd,q5,q50,q95,mcse_mean,ess_bulk,ess_tail,rhat"
    );
    let srows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(srows.len(), params.len());
    for (j, r) in srows.iter().enumerate() {
        assert_eq!(r[0], params[j]);
        assert_eq!(r.len(), 10);
        let mean: f64 = r[1].parse().unwrap();
        let direct = rows.iter().map(|row| row[2 + j]).sum::<f64>() / rows.len() as f64;
        assert!(
            (mean - direct).abs() <= 1e-12 * (1.0 + direct.abs()),
            "{mean} vs {direct}"
        );
        let (q5, q50, q95): (f64, f64, f64) = (
            r[3].parse().unwrap(),
            r[4].parse().unwrap(),
            r[5].parse().unwrap(),
        );
        assert!(q5 <= q50 && q50 <= q95);
        let ess: f64 = r[7].parse().unwrap();
        assert!(ess > 0.0);
    }

    // stats.csv
    let stats = read(&out.join("stats.csv"));
    let mut lines = stats.lines();
    let h = lines.next().unwrap();
    assert!(
        h.starts_with(
            "chain,draw,accept_prob,divergent,lik_evals,grad_evals,n_leapfrog,step_size,energy"
        ),
        "{h}"
    );
    let ncols = h.split(',').count();
    let srows: Vec<&str> = lines.collect();
    assert_eq!(srows.len(), 2 * 150);
    for l in &srows {
        let f: Vec<&str> = l.split(',').collect();
        assert_eq!(f.len(), ncols);
        let a: f64 = f[2].parse().unwrap();
        assert!((0.0..=1.0).contains(&a), "{l}");
        assert!(f[3] == "0" || f[3] == "1");
        // NUTS uses full-data gradients: a multiple of n per step.
        let g: u64 = f[5].parse().unwrap();
        assert!(g > 0 && (g / 500) * 500 == g, "{l}");
    }

    // run.json
    let json: serde_json::Value = serde_json::from_str(&read(&out.join("run.json"))).unwrap();
    assert_eq!(json["config"]["seed"], 5);
    assert_eq!(json["config"]["sampler"], "nuts");
    assert_eq!(json["config"]["chains"], 2);
    assert_eq!(json["data"]["n"], 500);
    assert!(json["wall_time_seconds"]["total"].as_f64().unwrap() > 0.0);
    let grad_total = json["grad_evals"]["sampling"].as_u64().unwrap();
    let from_stats: u64 = srows
        .iter()
        .map(|l| l.split(',').nth(5).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(grad_total, from_stats);
    assert!(json["full_data_passes"]["total"].as_f64().unwrap() > 0.0);
    assert!(json["data_fraction_per_iteration"].as_f64().unwrap() >= 1.0);
    assert!(json["ess_per_second"].as_f64().unwrap() > 0.0);
    assert!(json["ess_per_1000_grad_evals"].as_f64().unwrap() > 0.0);
}

#[test]
fn same_seed_same_draws() {
    let dir = TempDir::new("seed");
    let data = simulate_logistic(&dir);
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    run_ok(&data, &a, "hmc", "9");
    run_ok(&data, &b, "hmc", "9");
    run_ok(&data, &c, "hmc", "10");
    let da = read(&Path::new(&a).join("draws.csv"));
    let db = read(&Path::new(&b).join("draws.csv"));
    let dc = read(&Path::new(&c).join("draws.csv"));
    assert_eq!(da, db, "same seed, same draws");
    assert_ne!(da, dc, "another seed, other draws");
    // A second simulation with the same seed gives the same file.
    let again = dir.join("again.csv");
    let o = tallmc(&[
        "simulate", "--model", "logistic", "--n", "500", "--d", "3", "--seed", "11", "--out",
        &again,
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(read(Path::new(&data)), read(Path::new(&again)));
}

#[test]
fn feature_selection_and_no_intercept_name_the_columns() {
    let dir = TempDir::new("features");
    let data = simulate_logistic(&dir);
    let out = dir.join("out");
    let o = tallmc(&[
        "run",
        "--data",
        &data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--features",
        "x2",
        "--no-intercept",
        "--standardize",
        "--sampler",
        "rwmh",
        "--chains",
        "1",
        "--warmup",
        "20",
        "--draws",
        "5",
        "--out",
        &out,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let draws = read(&Path::new(&out).join("draws.csv"));
    assert_eq!(draws.lines().next().unwrap(), "chain,draw,x2");
    assert_eq!(draws.lines().count(), 1 + 5);
    let json: serde_json::Value =
        serde_json::from_str(&read(&Path::new(&out).join("run.json"))).unwrap();
    assert_eq!(json["config"]["intercept"], false);
    assert_eq!(json["config"]["standardize"], true);
    assert_eq!(json["config"]["features"][0], "x2");
}

/// Every sampler in the registry is reachable from `tallmc run` (a sampler added to the
/// registry is covered here without new test code): a short logistic run succeeds and writes
/// one draws.csv row per chain and draw, with a `sign` column exactly for signed samplers.
#[test]
fn every_registry_sampler_runs() {
    let dir = TempDir::new("every-sampler");
    let data = simulate_logistic(&dir);
    // time-series samplers run on a simulated `lgssm` series instead
    let series = dir.join("series.csv");
    tallmc(&[
        "simulate", "--model", "lgssm", "--n", "300", "--seed", "11", "--out", &series,
    ]);
    for info in tallmc_core::registry::samplers() {
        let out = dir.join(info.name);
        if info.models.contains(&"lgssm") {
            run_model_ok(&series, "lgssm", &out, info.name, "5");
        } else if !info.models.is_empty() && !info.models.contains(&"logistic") {
            continue;
        } else {
            run_ok(&data, &out, info.name, "5");
        }
        let draws = read(&Path::new(&out).join("draws.csv"));
        let mut lines = draws.lines();
        let header = lines.next().unwrap_or_default();
        assert!(header.starts_with("chain,draw,"), "{}: {header}", info.name);
        assert_eq!(
            header.split(',').any(|c| c == "sign"),
            info.signed,
            "{}: {header}",
            info.name
        );
        assert_eq!(lines.count(), 2 * 150, "{}", info.name);
    }
}

/// Time series end to end: `simulate` writes one column `y` for `lgssm`, `sv` and `garch`;
/// `run` fits it with `pf-sgld`, `pmmh` and (lgssm, Kalman likelihood) `nuts`, with the
/// window/filter extras in stats.csv; mismatched samplers and models fail with clear messages.
#[test]
fn time_series_run_and_simulate() {
    let dir = TempDir::new("series");
    for m in ["lgssm", "sv", "garch"] {
        let f = dir.join(&format!("{m}.csv"));
        let o = tallmc(&["simulate", "--model", m, "--n", "200", "--out", &f]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = read(Path::new(&f));
        assert_eq!(text.lines().next(), Some("y"), "{m}");
        assert_eq!(text.lines().count(), 201, "{m}");
    }
    let lg = dir.join("lgssm.csv");
    let sv = dir.join("sv.csv");
    let run = |data: &str, model: &str, sampler: &str, extra: &[&str]| {
        let out = dir.join(&format!("{model}-{sampler}"));
        let mut args = vec![
            "run",
            "--data",
            data,
            "--model",
            model,
            "--response",
            "y",
            "--sampler",
            sampler,
            "--chains",
            "1",
            "--warmup",
            "50",
            "--draws",
            "50",
            "--out",
        ];
        args.push(&out);
        args.extend_from_slice(extra);
        (tallmc(&args), out)
    };
    let (o, out) = run(&lg, "lgssm", "pf-sgld", &["--set", "particles=20"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stats = read(&Path::new(&out).join("stats.csv"));
    let header = stats.lines().next().unwrap_or_default();
    for col in ["window_start", "ess_min", "ess_mean", "window_log_lik"] {
        assert!(header.contains(col), "{header}");
    }
    // Draws are reported on the natural scale of the DESIGN contract (samplers move log σ).
    let natural = |out: &str, names: &str| -> Vec<Vec<f64>> {
        let draws = read(&Path::new(out).join("draws.csv"));
        let mut lines = draws.lines();
        assert_eq!(lines.next(), Some(format!("chain,draw,{names}").as_str()));
        let summary = read(&Path::new(out).join("summary.csv"));
        let params: Vec<&str> = summary
            .lines()
            .skip(1)
            .filter_map(|l| l.split(',').next())
            .collect();
        assert_eq!(params.join(","), names);
        lines
            .map(|l| l.split(',').skip(2).map(|v| v.parse().unwrap()).collect())
            .collect()
    };
    for row in natural(&out, "phi,sigma,tau") {
        assert!(row[1] > 0.0 && row[2] > 0.0, "{row:?}");
    }
    let (o, out) = run(&sv, "sv", "pmmh", &["--set", "particles=20"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for row in natural(&out, "phi,sigma,tau") {
        assert!(row[1] > 0.0 && row[2] > 0.0, "{row:?}");
    }
    let garch = dir.join("garch.csv");
    let (o, out) = run(&garch, "garch", "pmmh", &["--set", "particles=20"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for row in natural(&out, "alpha,beta,gamma,tau") {
        assert!(
            row.iter().all(|v| *v > 0.0) && row[1] + row[2] < 1.0,
            "{row:?}"
        );
    }
    let (o, out) = run(&lg, "lgssm", "nuts", &[]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    natural(&out, "phi,sigma,tau");
    // The KSD maps the reported draws back to the sampler's coordinates (where scores live).
    let run_json = read(&Path::new(&out).join("run.json"));
    assert!(run_json.contains("\"joint\""), "KSD missing: {run_json}");
    // errors
    let (o, _) = run(&sv, "sv", "nuts", &[]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(e.contains("exact likelihood"), "{e}");
    let (o, _) = run(&lg, "lgssm", "sgld", &[]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(e.contains("time-series model"), "{e}");
    let logistic = simulate_logistic(&dir);
    let (o, _) = run(&logistic, "logistic", "pf-sgld", &[]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(e.contains("does not support model"), "{e}");
    let (o, _) = run(&sv, "sv", "pf-sgld", &["--set", "gradient=kalman"]);
    let e = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0));
    assert!(e.contains("lgssm"), "{e}");
}

/// Convergence warnings: a run far too short for a random walk prints one line per problem
/// (ESS < 100 here) on stderr and records the same lines in run.json; a long NUTS run has none.
#[test]
fn unconverged_runs_warn_and_converged_runs_do_not() {
    let dir = TempDir::new("warnings");
    let data = simulate_logistic(&dir);
    let go = |sampler: &str, warmup: &str, draws: &str| {
        let out = dir.join(&format!("warn-{sampler}"));
        let o = tallmc(&[
            "run",
            "--data",
            &data,
            "--model",
            "logistic",
            "--response",
            "y",
            "--sampler",
            sampler,
            "--chains",
            "2",
            "--warmup",
            warmup,
            "--draws",
            draws,
            "--seed",
            "4",
            "--ksd-draws",
            "0",
            "--out",
            &out,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let j: serde_json::Value =
            serde_json::from_str(&read(&Path::new(&out).join("run.json"))).unwrap();
        let w: Vec<String> = j["warnings"]
            .as_array()
            .expect("run.json warnings")
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        (w, String::from_utf8_lossy(&o.stderr).to_string())
    };
    let (w, stderr) = go("rwmh", "20", "40");
    // These random-walk chains never move after 20 warm-up iterations: their ESS is NaN (not
    // measurable) and they are reported as stuck rather than as short of effective draws.
    assert!(
        w.iter()
            .any(|l| l.starts_with("effective sample size < 100 for ")
                || l.starts_with("chain 0 is stuck")),
        "{w:?}"
    );
    for l in &w {
        assert!(stderr.contains(&format!("warning: {l}")), "{stderr}");
    }
    let (w, _) = go("nuts", "300", "600");
    assert!(w.is_empty(), "{w:?}");
}

/// `tallmc bench --csv F` parses a plain CSV from memory, into columns then into a design's
/// rows, and reports its speed with the row count of the whole file; a file that is not plain,
/// or missing, is an input error.
#[test]
fn bench_csv_reports_the_parse_speed() {
    let dir = TempDir::new("bench-csv");
    let mut text = String::from("a,b,y\n");
    for i in 0..50_000 {
        text.push_str(&format!("{}.25,-{}e-3,{}\n", i, i % 97, i % 2));
    }
    let plain = dir.file("plain.csv", text.as_bytes());
    let out = tallmc(&["bench", "--csv", &plain]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(stdout.contains("3 columns"), "{stdout}");
    let rounds: Vec<&str> = stdout.lines().filter(|l| l.starts_with("round ")).collect();
    assert_eq!(rounds.len(), 5, "{stdout}");
    assert!(rounds[3].starts_with("round 4 (design rows"), "{stdout}");
    assert!(rounds
        .iter()
        .all(|l| l.contains("MB/s") && l.ends_with(" 50000 rows")));
    let quoted = dir.file("quoted.csv", b"a,y\n\"1\",0\n");
    common::assert_input_error(&["bench", "--csv", &quoted], &["not a plain CSV"], &[]);
    common::assert_input_error(
        &["bench", "--csv", &dir.join("none.csv")],
        &["none.csv"],
        &[],
    );
}

/// A regression model on a large plain CSV (32 MB and more: read in blocks) is parsed straight
/// into the design's rows (`read_into: design` in run.json, no table): the same draws as the
/// same numbers read into a table (a quoted header sends the file to the general reader), with
/// every column, with chosen features and no intercept, and the same error for a response that
/// is not 0/1. Other models, and `--standardize`, read the table.
#[test]
fn large_plain_csv_goes_straight_into_the_design() {
    let dir = TempDir::new("csv-design");
    // 10 columns, the response third; about 34.5 MB.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut body = String::new();
    let rows = 185_000;
    for _ in 0..rows {
        for j in 0..10 {
            if j > 0 {
                body.push(',');
            }
            if j == 2 {
                body.push_str(if next() % 3 == 0 { "1" } else { "0" });
            } else {
                let v = (next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
                body.push_str(&format!("{v:.17}"));
            }
        }
        body.push('\n');
    }
    let header = "a,b,y,c,d,e,f,g,h,k\n";
    assert!(header.len() + body.len() > 32 << 20, "{}", body.len());
    let plain = dir.file("plain.csv", format!("{header}{body}").as_bytes());
    let general = dir.file(
        "general.csv",
        format!("\"a\",b,y,c,d,e,f,g,h,k\n{body}").as_bytes(),
    );
    let run = |data: &str, out: &str, extra: &[&str]| {
        let draws = common::mala_draws_with(data, "y", out, extra);
        let json: serde_json::Value =
            serde_json::from_str(&read(&Path::new(out).join("run.json"))).unwrap();
        (
            draws,
            json["data"]["read_into"].as_str().unwrap_or("").to_string(),
        )
    };
    for (k, extra) in [
        &[][..],
        &["--features", "k,a,d", "--no-intercept"][..],
        &["--standardize"][..],
    ]
    .into_iter()
    .enumerate()
    {
        let (a, into_a) = run(&plain, &dir.join(&format!("p{k}")), extra);
        let (b, into_b) = run(&general, &dir.join(&format!("g{k}")), extra);
        assert_eq!(a, b, "{extra:?}: the same draws");
        let want = if k == 2 { "table" } else { "design" };
        assert_eq!(
            (into_a.as_str(), into_b.as_str()),
            (want, "table"),
            "{extra:?}"
        );
    }
    // A response of 2 on data row 100 000: the same error on both paths.
    let bad_body: String = body
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let mut cells: Vec<&str> = l.split(',').collect();
            if i == 99_999 {
                cells[2] = "2";
            }
            cells.join(",") + "\n"
        })
        .collect();
    let bad_plain = dir.file("bad.csv", format!("{header}{bad_body}").as_bytes());
    let sub = dir.join("q");
    std::fs::create_dir_all(&sub).unwrap();
    let bad_general = Path::new(&sub).join("bad.csv");
    std::fs::write(&bad_general, format!("\"a\",b,y,c,d,e,f,g,h,k\n{bad_body}")).unwrap();
    let bad_general = bad_general.to_str().unwrap();
    let needles = ["bad.csv", "line 100001", "column \"y\"", "0 or 1"];
    let e1 = assert_input_error(&run_args(&bad_plain, &dir.join("e1"), &[]), &needles);
    let e2 = assert_input_error(&run_args(bad_general, &dir.join("e2"), &[]), &needles);
    assert_eq!(e1.replace(&bad_plain, "F"), e2.replace(bad_general, "F"));
}

/// Huge pages (run.json `data.huge_pages`): a stochastic-gradient run moves its design onto
/// them after chain 0's set-up when its minibatches read at least 64 times the data's rows
/// (`data.huge_pages_move_seconds`), a short one does not, nor does any other sampler;
/// `TALLMC_HUGE_PAGES=0` asks for none, `1` for every large block at allocation (and moves
/// nothing after). The draws are the same every way. The SG runs read 200 000 rows (a 4.8 MB
/// design: it holds a whole 2 MB page wherever it lies, so a move asks the kernel).
#[test]
fn huge_pages_for_long_sg_runs_and_the_same_draws() {
    let dir = TempDir::new("huge-pages");
    let small = simulate_logistic(&dir);
    let tall = dir.join("tall.csv");
    let o = tallmc(&[
        "simulate", "--model", "logistic", "--n", "200000", "--d", "3", "--seed", "11", "--out",
        &tall,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // (huge_pages, huge_pages_move_seconds, draws.csv)
    let run = |args: &[&str], env: Option<&str>| -> (bool, Option<f64>, String) {
        let out = args[args.iter().position(|&a| a == "--out").unwrap() + 1];
        let mut cmd = std::process::Command::new(common::BIN);
        cmd.args(args);
        match env {
            Some(v) => cmd.env("TALLMC_HUGE_PAGES", v),
            None => cmd.env_remove("TALLMC_HUGE_PAGES"),
        };
        let o = cmd.output().expect("the tallmc binary runs");
        assert_eq!(
            o.status.code(),
            Some(0),
            "stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let doc: serde_json::Value =
            serde_json::from_str(&read(&Path::new(out).join("run.json"))).unwrap();
        let huge = doc["data"]["huge_pages"]
            .as_bool()
            .expect("data.huge_pages");
        let moved = &doc["data"]["huge_pages_move_seconds"];
        assert!(moved.is_null() || moved.is_f64(), "{moved}");
        (
            huge,
            moved.as_f64(),
            read(&Path::new(out).join("draws.csv")),
        )
    };
    let linux = cfg!(target_os = "linux");
    // 40 iterations of 200 000 rows: 40 passes' worth, short; 64 iterations: long.
    let sg = |sampler: &str, draws: &str, out: &str| -> Vec<String> {
        [
            "run",
            "--data",
            &tall,
            "--model",
            "logistic",
            "--response",
            "y",
            "--sampler",
            sampler,
            "--chains",
            "1",
            "--warmup",
            "0",
            "--draws",
            draws,
            "--seed",
            "1",
            "--set",
            "batch_size=200000",
            "--no-ksd",
            "--out",
            out,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    fn v(v: &[String]) -> Vec<&str> {
        v.iter().map(|s| s.as_str()).collect()
    }
    for (sampler, draws, long) in [
        ("sgld", "40", false),
        ("sgld", "64", true),
        ("sgld-cv", "64", true),
    ] {
        let what = format!("{sampler}, {draws} iterations of 200 000 rows");
        let out = |k: &str| dir.join(&format!("{sampler}-{draws}-{k}"));
        let (huge, moved, draws_auto) = run(&v(&sg(sampler, draws, &out("auto"))), None);
        assert_eq!(huge, long && linux, "{what}");
        assert_eq!(moved.is_some(), long && linux, "{what}: moved {moved:?}");
        let (huge, moved, off) = run(&v(&sg(sampler, draws, &out("off"))), Some("0"));
        assert!(!huge && moved.is_none(), "{what} with TALLMC_HUGE_PAGES=0");
        let (huge, moved, on) = run(&v(&sg(sampler, draws, &out("on"))), Some("1"));
        assert!(
            huge == linux && moved.is_none(),
            "{what} with TALLMC_HUGE_PAGES=1"
        );
        assert_eq!(draws_auto, off, "{what}: the draws without huge pages");
        assert_eq!(draws_auto, on, "{what}: the draws with them");
    }
    // Any other sampler: none by default, at allocation with TALLMC_HUGE_PAGES=1.
    let (x, z) = (dir.join("nuts-auto"), dir.join("nuts-on"));
    let (huge, moved, draws) = run(&sampler_args(&small, &x, "nuts", "2", &["--no-ksd"]), None);
    assert!(!huge && moved.is_none(), "nuts");
    let (huge, moved, on) = run(
        &sampler_args(&small, &z, "nuts", "2", &["--no-ksd"]),
        Some("1"),
    );
    assert!(
        huge == linux && moved.is_none(),
        "nuts with TALLMC_HUGE_PAGES=1"
    );
    assert_eq!(draws, on, "nuts: the draws with huge pages");
}

/// `tallmc run` with several stochastic-gradient chains searches the mode of their set-up once:
/// chain 0 counts the search (run.json `chain_details[0].lik_evals.setup`), the others only
/// the rest of their set-up, and every chain's draws are those it has alone
/// (`--chains 1 --seed S` gives chain 0's; the core test
/// `sgmcmc_samplers::chains_sharing_the_mode_search_are_the_chains_built_alone` checks every
/// chain).
#[test]
fn sg_chains_share_one_mode_search() {
    let dir = TempDir::new("sg-share");
    let data = simulate_logistic(&dir);
    let run = |chains: &str, out: &str| -> serde_json::Value {
        let o = tallmc(&sampler_args(&data, out, "sgld", chains, &["--no-ksd"]));
        assert_eq!(
            o.status.code(),
            Some(0),
            "stderr: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_str(&read(&Path::new(out).join("run.json"))).unwrap()
    };
    let (three, one) = (dir.join("three"), dir.join("one"));
    let doc = run("3", &three);
    let setup = |c: usize| {
        doc["chain_details"][c]["lik_evals"]["setup"]
            .as_u64()
            .unwrap()
    };
    for c in 1..3 {
        assert!(
            setup(0) >= setup(c) + 500,
            "chain 0 counts the mode search (at least a pass): {} against chain {c}'s {}",
            setup(0),
            setup(c)
        );
    }
    let alone = run("1", &one);
    assert_eq!(
        alone["chain_details"][0]["lik_evals"]["setup"].as_u64(),
        Some(setup(0))
    );
    let chain0 = |dir: &str| -> Vec<String> {
        read(&Path::new(dir).join("draws.csv"))
            .lines()
            .filter(|l| l.starts_with("0,"))
            .map(String::from)
            .collect()
    };
    assert_eq!(chain0(&three), chain0(&one));
}
