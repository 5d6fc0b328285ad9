//! `tallmc repro qnhmc` at tiny hidden sizes: the table and CSV are written, one row per method,
//! with the lag-1 / ESS / gradients-per-ESS / sampling-time columns, and QNHMC at the paper's
//! step accepts almost every proposal; `tallmc run` warns when a configuration is not exact.

mod common;
use common::{tallmc, TempDir};

#[test]
fn qnhmc_writes_table_and_csv() {
    let dir = TempDir::new("repro-qnhmc");
    let out = dir.0.display().to_string();
    let o = tallmc(&["repro", "qnhmc", "--quick", "--draws", "60", "--out", &out]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let table = std::fs::read_to_string(dir.0.join("qnhmc_table.md")).expect("table written");
    assert!(table.starts_with("# tallmc repro qnhmc"));
    // The closed-form lag-1 is labelled as valid at acceptance 1 only; ESS/s is per sampling
    // second (warm-up excluded).
    assert!(table.contains("(pred@a=1)") && table.contains("ESS/s (sampling)"));
    assert_eq!(String::from_utf8_lossy(&o.stdout), table);
    let text = std::fs::read_to_string(dir.0.join("qnhmc.csv")).expect("csv written");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for col in [
        "method",
        "sampler",
        "accept",
        "lag1_one",
        "lag1_one_pred",
        "lag1_orth",
        "lag1_orth_pred",
        "ess_one",
        "ess_orth",
        "grads_per_ess",
        "ess_per_second",
        "sampling_seconds",
        "chi2_per_d",
    ] {
        assert!(header.contains(&col), "missing column {col}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(
        rows.len(),
        5,
        "QNHMC, HMC, tuned HMC, tuned QNHMC, preconditioned HMC"
    );
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let qn = &rows[0];
    assert!(qn[col("sampler")] == "qnhmc" && qn[col("settings")].contains("step_size=0.01"));
    for r in &rows {
        let (total, samp): (f64, f64) = (
            r[col("seconds")].parse().unwrap(),
            r[col("sampling_seconds")].parse().unwrap(),
        );
        assert!(samp > 0.0 && samp <= total, "{samp} vs {total}");
    }
    let accept: f64 = qn[col("accept")].parse().unwrap();
    assert!(
        accept > 0.9,
        "QNHMC at ε = 0.01 accepts almost always: {accept}"
    );
    // The closed-form predictions of the paper-step rows are the spec's numbers.
    let p: f64 = qn[col("lag1_one_pred")].parse().unwrap();
    assert!((p - 0.52316).abs() < 1e-4, "{p}");
    let p: f64 = rows[1][col("lag1_orth_pred")].parse().unwrap();
    assert!((p - 0.99875).abs() < 1e-4, "{p}");
}

/// `tallmc run` warns on stderr when the configuration is not exact (qnhmc adapt=continuous)
/// and records it in run.json; the default (freeze) configuration runs without the warning.
#[test]
fn run_warns_when_not_exact() {
    let dir = TempDir::new("qnhmc-not-exact");
    let data = dir.join("data.csv");
    let o = tallmc(&[
        "simulate", "--model", "logistic", "--n", "200", "--d", "3", "--seed", "5", "--out", &data,
    ]);
    assert_eq!(o.status.code(), Some(0));
    for (extra, exact) in [(None, true), (Some("adapt=continuous"), false)] {
        let out = dir.join(if exact { "exact" } else { "continuous" });
        let mut args = vec![
            "run",
            "--data",
            &data,
            "--model",
            "logistic",
            "--response",
            "y",
            "--sampler",
            "qnhmc",
            "--chains",
            "1",
            "--warmup",
            "20",
            "--draws",
            "20",
            "--out",
            &out,
        ];
        if let Some(kv) = extra {
            args.extend(["--set", kv]);
        }
        let o = tallmc(&args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{stderr}");
        assert_eq!(stderr.contains("not exact"), !exact, "{extra:?}: {stderr}");
        let json = std::fs::read_to_string(std::path::Path::new(&out).join("run.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(v["sampler"]["exact"], exact, "{extra:?}");
    }
}
