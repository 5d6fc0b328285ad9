//! run.json's kernel Stein discrepancy block (issue 7): present with exact scores for every run,
//! equal to the KSD recomputed here from draws.csv and the same model, bounded by `--ksd-draws`
//! or by default by the score budget (`ksd::budget_draws`), absent with `--ksd-draws 0`, and larger for a crude approximate chain than for NUTS.

mod common;
use common::{tallmc, TempDir};
use std::path::Path;
use tallmc_core::data::DesignSpec;
use tallmc_core::diag::ksd;
use tallmc_core::settings::Settings;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn simulate(dir: &TempDir) -> String {
    let data = dir.join("data.csv");
    let o = tallmc(&[
        "simulate", "--model", "logistic", "--n", "400", "--d", "3", "--seed", "21", "--out", &data,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    data
}

fn run(data: &str, out: &str, sampler: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
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
        "2",
        "--warmup",
        "200",
        "--draws",
        "300",
        "--seed",
        "3",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    let o = tallmc(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_str(&read(&Path::new(out).join("run.json"))).unwrap()
}

#[test]
fn run_json_reports_ksd_with_exact_scores() {
    let dir = TempDir::new("ksd");
    let data = simulate(&dir);
    let out = dir.join("nuts");
    let j = run(&data, &out, "nuts", &[]);
    let k = &j["ksd"];
    assert_eq!(k["scores"], "exact");
    assert_eq!(k["draws"], 600, "2 × 300 draws ≤ the default 1000");
    assert_eq!(k["kernel"]["c"], 1.0);
    assert_eq!(k["kernel"]["beta"], -0.5);
    // No --ksd-draws: the budget rule, 1000 for this small n·d; the cost is reported.
    assert!(j["config"]["ksd_draws"].is_null());
    assert_eq!(k["max_draws"], ksd::budget_draws(400, 3));
    assert_eq!(k["max_draws"], 1000);
    assert!(k["max_draws_rule"].as_str().unwrap().starts_with("default"));
    assert_eq!(k["score_grad_evals"], 600 * 400);
    assert!(k["score_seconds"].as_f64().unwrap() <= k["seconds"].as_f64().unwrap());
    let joint = k["joint"].as_f64().unwrap();
    let thesis = k["thesis"].as_f64().unwrap();
    assert!(joint > 0.0 && thesis >= joint, "{joint} {thesis}");

    // Recompute from draws.csv: same thinning order does not matter for the V-statistic.
    let bytes = std::fs::read(&data).unwrap();
    let table = tallmc_cli::parse_csv(&bytes, "data.csv").unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let model =
        tallmc_core::registry::build_model("logistic", &table, &spec, &Settings::new()).unwrap();
    let draws = read(&Path::new(&out).join("draws.csv"));
    let points: Vec<f64> = draws
        .lines()
        .skip(1)
        .flat_map(|l| {
            l.split(',')
                .skip(2)
                .map(|v| v.parse::<f64>().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    let scores = ksd::exact_scores(model.as_ref(), &points).unwrap();
    let r = ksd::ksd(&ksd::Imq::DEFAULT, &points, &scores, model.dim()).unwrap();
    assert!(
        (r.joint - joint).abs() <= 1e-9 * joint,
        "{} vs {joint}",
        r.joint
    );
    assert!((r.thesis - thesis).abs() <= 1e-9 * thesis);

    // Thinning bound and switch.
    let j = run(&data, &dir.join("thin"), "nuts", &["--ksd-draws", "100"]);
    assert_eq!(j["ksd"]["draws"], 100);
    assert_eq!(j["ksd"]["max_draws"], 100);
    assert_eq!(j["ksd"]["max_draws_rule"], "--ksd-draws");
    assert_eq!(j["config"]["ksd_draws"], 100);
    let j = run(&data, &dir.join("off"), "nuts", &["--ksd-draws", "0"]);
    assert!(j["ksd"].is_null());
    let j = run(&data, &dir.join("no-ksd"), "nuts", &["--no-ksd"]);
    assert!(j["ksd"].is_null());
    assert_eq!(j["config"]["no_ksd"], true);
    // The whole run's time split (issue 21) and its peak memory.
    let w = &j["wall_time_seconds"];
    for key in ["total", "data_load", "model_build", "chains", "ksd"] {
        assert!(w[key].as_f64().is_some_and(|t| t >= 0.0), "{key}: {w}");
    }
    let parts: f64 = ["data_load", "model_build", "chains", "ksd"]
        .iter()
        .map(|k| w[*k].as_f64().unwrap())
        .sum();
    assert!(parts <= w["total"].as_f64().unwrap(), "{w}");
    if cfg!(target_os = "linux") {
        assert!(j["peak_memory_bytes"].as_u64().is_some_and(|b| b > 1 << 20));
    }

    // A crude SGLD chain (batch 1, large step) is further from the posterior than NUTS.
    let j = run(
        &data,
        &dir.join("sgld"),
        "sgld",
        &["--set", "batch_size=1", "--set", "step_size=0.02"],
    );
    let crude = j["ksd"]["joint"].as_f64().unwrap();
    println!("KSD: NUTS {joint:.4}, crude SGLD {crude:.4}");
    assert!(crude > 2.0 * joint, "{crude} vs {joint}");
}

/// By default the KSD's scores cost no more than the run (issue 21): a cheap SGLD run on
/// 5 000 rows (2 × 500 iterations of batch 10: 10⁴ evaluations, the scores of two draws)
/// takes the floor of 10 draws, and the joint KSD comes with its standard error.
#[test]
fn the_default_ksd_costs_no_more_than_the_run() {
    let dir = TempDir::new("ksd-cost");
    let data = dir.join("data.csv");
    let o = tallmc(&[
        "simulate", "--model", "logistic", "--n", "5000", "--d", "3", "--seed", "2", "--out", &data,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let j = run(
        &data,
        &dir.join("sgld"),
        "sgld",
        &["--set", "batch_size=10", "--set", "init=zero"],
    );
    let k = &j["ksd"];
    let run_evals: u64 = ["warmup", "sampling"]
        .iter()
        .map(|p| {
            j["grad_evals"][*p]
                .as_u64()
                .unwrap()
                .max(j["lik_evals"][*p].as_u64().unwrap())
        })
        .sum();
    assert!(run_evals < 10 * 5000, "{run_evals}");
    assert_eq!(k["max_draws"], 10, "{k}");
    assert_eq!(k["draws"], 10);
    assert!(k["max_draws_rule"].as_str().unwrap().starts_with("default"));
    let (joint, se) = (
        k["joint"].as_f64().unwrap(),
        k["joint_se"].as_f64().unwrap(),
    );
    assert!(se > 0.0 && se < joint, "joint {joint} se {se}");
    // A run that costs more than the budget keeps the budget rule (the NUTS test above).
}
