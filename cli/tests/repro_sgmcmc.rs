//! `tallmc repro sgmcmc` at a tiny hidden size: the table, the variance CSV and the method CSV
//! are written, NUTS and every SG-MCMC sampler of the registry have a row with a finite KSD,
//! the closed-form pseudo-variances order as the thesis says (CV ≪ naive, approximate PS below
//! uniform, the optimum below both) and the empirical DPP rows are finite.

mod common;
use common::{tallmc, TempDir};

#[test]
fn sgmcmc_writes_table_and_csvs() {
    let dir = TempDir::new("repro-sgmcmc");
    let out = dir.0.display().to_string();
    let o = tallmc(&[
        "repro", "sgmcmc", "--quick", "--n", "300", "--draws", "100", "--out", &out,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let table = std::fs::read_to_string(dir.0.join("sgmcmc_table.md")).unwrap();
    assert!(table.starts_with("# tallmc repro sgmcmc"));
    assert_eq!(String::from_utf8_lossy(&o.stdout), table);

    let csv = std::fs::read_to_string(dir.0.join("sgmcmc.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let samplers: Vec<&str> = rows.iter().map(|r| r[col("sampler")]).collect();
    assert_eq!(samplers[0], "nuts");
    for s in ["sgld", "sgld-cv"] {
        assert!(samplers.contains(&s), "{s} missing: {samplers:?}");
    }
    for r in &rows {
        let k: f64 = r[col("ksd_joint")].parse().unwrap();
        assert!(k.is_finite() && k > 0.0, "{r:?}");
    }

    let v = std::fs::read_to_string(dir.0.join("sgmcmc_variance.csv")).unwrap();
    assert!(v.starts_with("method,weights,batch,pseudo_variance,se,ratio_to_sgld\n"));
    // The weights field is quoted and may hold commas: read the numbers from the right.
    let vals: Vec<f64> = v
        .lines()
        .skip(1)
        .map(|l| l.rsplit(',').nth(2).unwrap().parse().unwrap())
        .collect();
    // Rows: SGLD WOR, SGLD WR, SGLD-PS, SGLD optimal, CV WOR, CV-PS, CV optimal (closed
    // forms), then five empirical DPP rows (w = 0.1, 0.4, 0.7, 1 with 1/πᵢ; w = 0.1 thesis).
    assert_eq!(vals.len(), 12);
    assert!(vals[3] <= vals[2] && vals[2] < vals[1], "{vals:?}");
    assert!(vals[6] <= vals[5] && vals[5] < vals[4], "{vals:?}");
    assert!(vals[4] < vals[0], "{vals:?}");
    assert!(
        vals[7..].iter().all(|v| v.is_finite() && *v > 0.0),
        "{vals:?}"
    );
}
