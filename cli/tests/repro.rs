//! `tallmc repro smh` and `tallmc repro minibatch-mh` at tiny hidden sizes: the output files
//! exist and carry the expected columns, one row per method.

mod common;
use common::{tallmc, TempDir};

/// Run an experiment and return (header columns, data rows) of `csv`, checking `md` exists.
fn run(experiment: &str, n: &str, draws: &str, csv: &str, md: &str) -> (Vec<String>, Vec<String>) {
    let dir = TempDir::new(experiment);
    let out = dir.0.display().to_string();
    let o = tallmc(&[
        "repro", experiment, "--quick", "--n", n, "--draws", draws, "--out", &out,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let table = std::fs::read_to_string(dir.0.join(md)).expect("markdown table written");
    assert!(table.starts_with(&format!("# tallmc repro {experiment}")));
    assert_eq!(String::from_utf8_lossy(&o.stdout), table);
    let text = std::fs::read_to_string(dir.0.join(csv)).expect("csv written");
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    (header, lines.map(String::from).collect())
}

#[test]
fn smh_writes_table_and_csv() {
    let (header, rows) = run("smh", "512", "100", "smh.csv", "smh_table.md");
    for col in [
        "n",
        "method",
        "sampler",
        "lik_evals_per_iter",
        "accept",
        "ess_per_1000_lik_evals",
        "ess_per_second",
    ] {
        assert!(header.iter().any(|h| h == col), "missing column {col}");
    }
    assert_eq!(
        rows.len(),
        7,
        "MH (rw, pcn), SMH-1 (rw), SMH-2 (rw, pcn ρ = 0.9, 0.5, 0)"
    );
    // Full-data MH (truncation=0) evaluates all n points per iteration.
    let mh = rows.iter().find(|r| r.contains("truncation=0")).unwrap();
    let j = header
        .iter()
        .position(|h| h == "lik_evals_per_iter")
        .unwrap();
    let lpi: f64 = mh.split(',').nth(j).unwrap().parse().unwrap();
    assert!(lpi >= 512.0, "MH evaluates the full data: {lpi}");
}

#[test]
fn minibatch_mh_writes_table_and_csv() {
    let (header, rows) = run(
        "minibatch-mh",
        "2000",
        "50",
        "minibatch_mh.csv",
        "minibatch_mh_table.md",
    );
    for col in [
        "method",
        "sampler",
        "avg_batch_size",
        "paper_avg_batch_size",
        "lik_evals_per_iter",
    ] {
        assert!(header.iter().any(|h| h == col), "missing column {col}");
    }
    // Table 1 (Gaussian mixture): 3 methods; Table 2 (logistic 1 vs 7): 4 methods.
    assert_eq!(rows.len(), 7);
    let j = header.iter().position(|h| h == "avg_batch_size").unwrap();
    for r in &rows {
        let b: f64 = r.split(',').nth(j).unwrap().parse().unwrap();
        assert!((1.0..=2000.0).contains(&b), "batch size {b} in [1, N]: {r}");
    }
}
