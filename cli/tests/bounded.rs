//! Bounded resources and outputs that cannot be mistaken (issue 19): runs too long or too large
//! are refused before anything is allocated, draws are streamed to disk, and a run that did not
//! finish leaves no output of an earlier run behind and says so in run.json.

mod common;
use common::{assert_input_error, tallmc, TempDir, BIN};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn simulate(dir: &TempDir) -> String {
    let data = dir.join("data.csv");
    let out = tallmc(&[
        "simulate", "--model", "logistic", "--n", "300", "--d", "2", "--seed", "3", "--out", &data,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    data
}

fn run_args<'a>(data: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "run",
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--sampler",
        "rwmh",
        "--seed",
        "1",
        "--out",
        out,
    ];
    v.extend_from_slice(extra);
    v
}

/// Exit 2 and one `error:` line containing every needle (no allocation abort, no panic).
fn refused(args: &[&str], needles: &[&str]) {
    assert_input_error(args, needles, &[]);
}

/// `--draws 10⁹` (and 10¹⁰, 10¹²) aborted with "memory allocation of 88000000000 bytes failed"
/// (exit 134): now refused before the data is read, naming the option and the limit.
#[test]
fn huge_draws_are_refused_not_aborted() {
    let dir = TempDir::new("huge-draws");
    let data = simulate(&dir);
    let out = dir.join("out");
    for draws in ["1000000000", "10000000000", "1000000000000"] {
        refused(
            &run_args(&data, &out, &["--draws", draws]),
            &[&format!("--draws {draws}"), "--max-iterations"],
        );
    }
    assert!(
        !dir.path().join("out").exists(),
        "a refused run creates nothing"
    );
}

/// `--draws 10⁸` ran on silently towards 80 GB of output: refused with the estimate.
/// `--warmup 10¹²` ran on silently: refused, naming --warmup.
#[test]
fn long_runs_are_refused_with_an_estimate() {
    let dir = TempDir::new("long-runs");
    let data = simulate(&dir);
    let out = dir.join("out");
    refused(
        &run_args(&data, &out, &["--draws", "100000000"]),
        &["--draws 100000000", "GB", "--max-output-gb"],
    );
    refused(
        &run_args(&data, &out, &["--warmup", "1000000000000"]),
        &["--warmup 1000000000000", "--max-iterations"],
    );
    refused(
        &run_args(
            &data,
            &out,
            &[
                "--draws",
                "100000000",
                "--max-output-gb",
                "1e6",
                "--chains",
                "1024",
            ],
        ),
        &["in memory", "--max-memory-gb"],
    );
    refused(
        &run_args(&data, &out, &["--max-memory-gb", "0"]),
        &["--max-memory-gb"],
    );
}

/// A run's summary works from draws thinned in memory when the chain is longer than the
/// in-memory budget, while draws.csv and stats.csv still hold every draw, streamed.
#[test]
fn long_chains_are_streamed_and_thinned_for_the_summary() {
    let dir = TempDir::new("streamed");
    let data = simulate(&dir);
    let out = dir.join("out");
    let args = run_args(
        &data,
        &out,
        &["--chains", "2", "--warmup", "100", "--draws", "3000"],
    );
    let o = Command::new(BIN)
        .args(&args)
        .env("TALLMC_KEEP_VALUES", "3000")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let draws = std::fs::read_to_string(dir.path().join("out/draws.csv")).unwrap();
    let stats = std::fs::read_to_string(dir.path().join("out/stats.csv")).unwrap();
    assert_eq!(draws.lines().count(), 1 + 2 * 3000);
    assert_eq!(stats.lines().count(), 1 + 2 * 3000);
    assert!(draws.lines().nth(3000).unwrap().starts_with("0,2999,"));
    assert!(draws.lines().nth(3001).unwrap().starts_with("1,0,"));
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["complete"], true);
    // 3000 values per chain over d + 1 columns: 3000 / (d + 1) draws kept.
    let d = run["params"].as_array().unwrap().len();
    let every = 3000usize.div_ceil(3000 / (d + 1));
    assert!(every > 1);
    assert_eq!(run["summary_draws"]["every"], every);
    assert!(run["min_ess_bulk"].as_f64().unwrap() > 0.0);
    // Same seed without thinning: the same draws.csv, byte for byte.
    let out2 = dir.join("out2");
    let o = tallmc(&run_args(
        &data,
        &out2,
        &["--chains", "2", "--warmup", "100", "--draws", "3000"],
    ));
    assert!(o.status.success());
    assert_eq!(
        draws,
        std::fs::read_to_string(dir.path().join("out2/draws.csv")).unwrap()
    );
    let run2: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out2/run.json")).unwrap())
            .unwrap();
    assert_eq!(run2["summary_draws"]["every"], 1);
    // No part or temporary file is left.
    for d in [&out, &out2] {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["draws.csv", "run.json", "stats.csv", "summary.csv"]);
    }
}

/// An interrupted run into a folder holding an earlier run's outputs left the old outputs
/// there, indistinguishable from a finished run. Now the earlier outputs are gone as soon as
/// the new run starts, and run.json says `"complete": false` until the run finishes.
#[test]
fn an_interrupted_run_cannot_be_mistaken_for_a_finished_one() {
    let dir = TempDir::new("interrupted");
    let data = simulate(&dir);
    let out = dir.join("out");
    let o = tallmc(&run_args(&data, &out, &["--chains", "1", "--draws", "50"]));
    assert!(o.status.success());
    let run_json = dir.path().join("out/run.json");
    let first: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    assert_eq!(first["complete"], true);

    // A long run into the same folder, killed once it has started.
    let mut child = Command::new(BIN)
        .args(run_args(
            &data,
            &out,
            &["--chains", "1", "--draws", "20000000"],
        ))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let started = loop {
        if let Ok(s) = std::fs::read_to_string(&run_json) {
            if let Ok(v) = serde_json::from_str::<serde_json::Value>(&s) {
                if v["complete"] == false {
                    break v;
                }
            }
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(started["status"].as_str().unwrap().contains("not finished"));
    for name in ["draws.csv", "summary.csv", "stats.csv"] {
        assert!(
            !dir.path().join("out").join(name).exists(),
            "{name} of the earlier run is still there"
        );
    }
    let after: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&run_json).unwrap()).unwrap();
    assert_eq!(after["complete"], false);
}

/// A table of 200 000 columns and one row: the columns are looked up through one index (was
/// one header scan per column, quadratic; 5 000 000 columns took over 10 minutes) and the
/// whitening steps aside above its dimension limit (its subset size once panicked when the
/// data had fewer than 10·d rows).
#[test]
fn wide_tables_are_read_in_linear_time_and_never_panic() {
    let dir = TempDir::new("wide");
    let k = 200_000;
    let mut text = String::with_capacity(16 * k);
    text.push_str(
        &(0..k)
            .map(|j| format!("c{j}"))
            .collect::<Vec<_>>()
            .join(","),
    );
    text.push('\n');
    text.push_str(&vec!["1"; k].join(","));
    text.push('\n');
    let data = dir.file("wide.csv", text.as_bytes());
    let out = dir.join("out");
    let o = tallmc(&[
        "run",
        "--data",
        &data,
        "--model",
        "logistic",
        "--response",
        "c0",
        "--sampler",
        "rwmh",
        "--chains",
        "1",
        "--warmup",
        "5",
        "--draws",
        "5",
        "--ksd-draws",
        "0",
        "--out",
        &out,
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("internal error"), "{stderr}");
    let run: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("out/run.json")).unwrap())
            .unwrap();
    assert_eq!(run["data"]["d"], k);
    assert_eq!(run["reparam"]["kind"], "none");
    assert!(run["reparam"]["note"]
        .as_str()
        .unwrap()
        .contains("too many to whiten"));
}
