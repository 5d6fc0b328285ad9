//! Parquet and Arrow IPC input (issue 21, speed at scale): `tallmc run --data` reads files
//! written by pyarrow (fixtures/parquet/make_parquet.py, from the NumPy fixture table) in every
//! codec this build decodes, with several row groups or record batches and every numeric
//! type, giving the same draws as the same table in CSV (Parquet decoded straight into a
//! regression model's design: run.json `data.read_into`); nulls, strings, dates, NaN, codecs
//! not compiled in and damaged files are refused with one line naming the file and the column
//! or row; `tallmc simulate --out F.parquet` / `F.arrow` write files that run like their CSV.

mod common;
use common::{mala_draws, refused_file, tallmc, TempDir};

fn draws(data: &str, out: &str) -> String {
    mala_draws(data, "y", out)
}

/// `tallmc run` on `data` must exit 2 with one line on stderr naming the file, and write no
/// output; returns the line.
fn refused(data: &str, out: &str) -> String {
    let err = refused_file(data, out);
    assert!(err.contains(data), "names the file: {err}");
    assert!(!Path::new(out).exists(), "no output for a refused file");
    err
}
use std::path::Path;

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/parquet");
const CSV: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/numpy/table.csv"
);

#[test]
fn parquet_and_arrow_files_give_the_csv_tables_draws() {
    let dir = TempDir::new("parquet-input");
    let csv = draws(CSV, &dir.join("csv"));
    assert!(
        csv.starts_with("chain,draw,intercept,age,flag,x1,x2"),
        "{}",
        &csv[..50]
    );
    for (file, what) in [
        (
            "table.parquet",
            "snappy (pyarrow's default), int8/int64/bool/f64/f32",
        ),
        ("zstd.parquet", "zstd (polars' default)"),
        ("lz4.parquet", "lz4"),
        ("gzip.parquet", "gzip"),
        ("row_groups.parquet", "3 row groups"),
        ("mixed.parquet", "uint8, uint32, int8, 4 row groups"),
        ("age_i16.parquet", "int16"),
        ("age_u16.parquet", "uint16"),
        ("age_i32.parquet", "int32"),
        ("age_u64.parquet", "uint64"),
        ("table.arrow", "Arrow IPC file, uncompressed"),
        ("batches.arrow", "Arrow IPC file, 4 record batches"),
        ("lz4.arrow", "Arrow IPC file, lz4 (Feather's default)"),
        ("zstd.arrow", "Arrow IPC file, zstd"),
        ("table.arrows", "Arrow IPC stream"),
    ] {
        let got = draws(&format!("{FIX}/{file}"), &dir.join(file));
        assert!(got == csv, "{file} ({what}): draws differ from the CSV's");
        // Parquet row groups go straight into the design's rows; Arrow IPC into a table.
        let json = std::fs::read_to_string(Path::new(&dir.join(file)).join("run.json")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let want = if file.ends_with(".parquet") {
            "design"
        } else {
            "table"
        };
        assert_eq!(v["data"]["read_into"], want, "{file}");
    }
    // The format comes from the first bytes, not the name.
    for (file, name) in [
        ("table.parquet", "parquet.csv"),
        ("table.arrow", "arrow.npz"),
    ] {
        let path = dir.join(name);
        std::fs::copy(format!("{FIX}/{file}"), &path).unwrap();
        let got = draws(&path, &dir.join(&format!("o-{name}")));
        assert!(
            got == csv,
            "{file} named {name}: draws differ from the CSV's"
        );
    }
}

#[test]
fn nulls_strings_dates_nan_and_unknown_codecs_are_refused_in_one_line() {
    let dir = TempDir::new("parquet-refused");
    for (file, needles) in [
        (
            "null.parquet",
            &["row 7, column \"x1\": null (missing values are not supported)"][..],
        ),
        (
            "null.arrow",
            &["row 7, column \"x1\": null (missing values are not supported)"],
        ),
        (
            "string.parquet",
            &["column \"name\": type Utf8 is not a number type"],
        ),
        (
            "date.parquet",
            &["column \"day\": type Date32 is not a number type"],
        ),
        (
            "nan.parquet",
            &["row 3, column \"x2\": NaN is not a finite number"],
        ),
        (
            "brotli.parquet",
            &[
                "Parquet compression BROTLI is not supported",
                "pyarrow.parquet.write_table(t, f, compression=\"snappy\")",
            ],
        ),
        ("truncated.parquet", &["damaged or truncated Parquet file"]),
        (
            "truncated.arrow",
            &["damaged or truncated Arrow IPC (Feather) file"],
        ),
    ] {
        let err = refused(&format!("{FIX}/{file}"), &dir.join(file));
        for n in needles {
            assert!(err.contains(n), "{file}: {err}");
        }
    }
}

#[test]
fn cut_or_damaged_files_are_refused_in_one_line() {
    let dir = TempDir::new("parquet-damaged");
    for file in [
        "table.parquet",
        "row_groups.parquet",
        "table.arrow",
        "table.arrows",
    ] {
        let bytes = std::fs::read(format!("{FIX}/{file}")).unwrap();
        for cut in [8, bytes.len() / 3, bytes.len() - 9, bytes.len() - 1] {
            let bad = dir.join(&format!("cut{cut}-{file}"));
            std::fs::write(&bad, &bytes[..cut]).unwrap();
            refused(&bad, &dir.join(&format!("o-cut{cut}-{file}")));
        }
    }
    // Damaged pages (the middle third of the file zeroed, the footer intact). (Flipped bits
    // in a page's values go unnoticed: pyarrow writes no page checksums.)
    let mut bytes = std::fs::read(format!("{FIX}/table.parquet")).unwrap();
    let third = bytes.len() / 3;
    bytes[third..2 * third].fill(0);
    let bad = dir.join("damaged.parquet");
    std::fs::write(&bad, &bytes).unwrap();
    let err = refused(&bad, &dir.join("o-damaged"));
    assert!(err.contains("damaged.parquet: "), "{err}");
}

#[test]
fn simulate_writes_parquet_and_arrow_that_run_like_their_csv() {
    let dir = TempDir::new("parquet-simulate");
    for ext in ["csv", "parquet", "arrow", "feather"] {
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
    let head = |ext: &str| std::fs::read(dir.join(&format!("sim.{ext}"))).unwrap()[..6].to_vec();
    assert_eq!(&head("parquet")[..4], b"PAR1");
    assert_eq!(head("arrow"), b"ARROW1");
    assert_eq!(head("feather"), b"ARROW1");
    let csv = draws(&dir.join("sim.csv"), &dir.join("a"));
    for ext in ["parquet", "arrow", "feather"] {
        let got = draws(&dir.join(&format!("sim.{ext}")), &dir.join(ext));
        assert!(
            got == csv,
            "simulate --out sim.{ext}: draws differ from the CSV's"
        );
    }
}
