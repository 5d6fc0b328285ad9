//! NumPy input (issue 21, fixed costs): `tallmc run --data` reads numpy.savez's `.npz` (one
//! named column per array) and `.npy` tables (columns x0, x1, …) written by numpy itself
//! (fixtures/numpy/make_numpy.py), giving the same draws as the same table in CSV;
//! a regression model's design is decoded straight from the arrays (run.json `data.read_into`);
//! `tallmc simulate --out F.npz` writes a file numpy reads; compressed archives are refused
//! with one clear line.

mod common;
use common::{mala_draws as draws, refused_file as refused, tallmc, TempDir};

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/numpy");

#[test]
fn npz_and_npy_tables_give_the_csv_tables_draws() {
    let dir = TempDir::new("numpy-input");
    let csv = draws(&format!("{FIX}/table.csv"), "y", &dir.join("csv"));
    let npz = draws(&format!("{FIX}/table.npz"), "y", &dir.join("npz"));
    assert_eq!(
        csv, npz,
        "int8, int64, bool, float64 and float32 columns read as in CSV"
    );
    // The .npz went straight into the design's rows, the small CSV into a table.
    let read_into = |out: &str| {
        let json = std::fs::read_to_string(std::path::Path::new(out).join("run.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        v["data"]["read_into"].as_str().unwrap_or("").to_string()
    };
    assert_eq!(read_into(&dir.join("npz")), "design");
    assert_eq!(read_into(&dir.join("csv")), "table");
    let c = draws(&format!("{FIX}/matrix.npy"), "x0", &dir.join("c"));
    let f = draws(&format!("{FIX}/fortran.npy"), "x0", &dir.join("f"));
    assert_eq!(c, f, "C and Fortran order");
    assert!(c.starts_with("chain,draw,intercept,x1,x2"), "{}", &c[..40]);
}

#[test]
fn simulate_writes_npz_that_runs_like_its_csv() {
    let dir = TempDir::new("numpy-simulate");
    for ext in ["csv", "npz"] {
        let out = dir.join(&format!("sim.{ext}"));
        let o = tallmc(&[
            "simulate", "--model", "logistic", "--n", "300", "--d", "3", "--seed", "8", "--out",
            &out,
        ]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let a = draws(&dir.join("sim.csv"), "y", &dir.join("a"));
    let b = draws(&dir.join("sim.npz"), "y", &dir.join("b"));
    assert_eq!(a, b);
}

#[test]
fn compressed_and_damaged_archives_are_refused_in_one_line() {
    let dir = TempDir::new("numpy-refused");
    let err = refused(&format!("{FIX}/compressed.npz"), &dir.join("o"));
    assert!(err.contains("compressed (numpy.savez_compressed)"), "{err}");
    let mut bytes = std::fs::read(format!("{FIX}/table.npz")).unwrap();
    bytes.truncate(bytes.len() - 30);
    let bad = dir.join("bad.npz");
    std::fs::write(&bad, &bytes).unwrap();
    let err = refused(&bad, &dir.join("p"));
    assert!(err.contains("bad.npz: "), "{err}");
}
