//! `tallmc repro pf-sgld` at a tiny hidden size: the Table 3.5.1-form markdown and the CSV are
//! written, every row (6 LGSSM rows with Kalman, 3 SV rows) has a finite log10 KSD.

mod common;
use common::{tallmc, TempDir};

#[test]
fn pf_sgld_writes_table_and_csv() {
    let dir = TempDir::new("repro-pf-sgld");
    let out = dir.0.display().to_string();
    let o = tallmc(&[
        "repro", "pf-sgld", "--quick", "--n", "200", "--draws", "20", "--out", &out,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let table = std::fs::read_to_string(dir.0.join("pf_sgld.md")).unwrap();
    assert!(table.starts_with("# pf-sgld"));
    assert!(table.contains("## lgssm") && table.contains("## sv"));
    let csv = std::fs::read_to_string(dir.0.join("pf_sgld.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 9);
    assert_eq!(
        rows.iter().filter(|r| r[col("model")] == "lgssm").count(),
        6
    );
    for r in &rows {
        let k: f64 = r[col("log10_ksd")].parse().unwrap();
        assert!(k.is_finite(), "{r:?}");
    }
}
