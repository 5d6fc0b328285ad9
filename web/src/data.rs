//! Data sets: CSV bytes parsed by the CLI's parser (same errors), typed-array columns, or the
//! core's simulators.

use crate::js_err;
use js_sys::{Array, Float64Array};
use tallmc_core::data::Table;
use wasm_bindgen::prelude::*;

/// A numeric table in wasm memory.
#[wasm_bindgen]
pub struct DataSet {
    pub(crate) table: Table,
}

/// Largest simulated table, in cells (8 bytes each): 400 MB.
pub const MAX_CELLS: usize = 50_000_000;

/// Parse a data file's bytes exactly as `tallmc run` does: NumPy `.npz`/`.npy` (recognised by
/// their first bytes), else CSV; Parquet and Arrow files (read natively only) are refused by
/// name.
pub fn parse_csv(bytes: &[u8], source: &str) -> Result<Table, String> {
    if let Some(e) = tallmc_cli::messages::columnar_not_here(bytes, source) {
        return Err(e);
    }
    if tallmc_cli::npy::is_numpy(bytes) {
        return tallmc_cli::npy::read_numpy(bytes, source);
    }
    tallmc_cli::parse_csv(bytes, source).map_err(|e| e.to_string())
}

/// Simulate the built-in data set of `model` (`n` rows, `d` features) with `seed`, exactly as
/// `tallmc simulate` does.
pub fn simulate_table(model: &str, n: usize, d: usize, seed: u64) -> Result<Table, String> {
    if n.saturating_mul(d.saturating_add(1)) > MAX_CELLS {
        return Err(format!(
            "a simulated data set of {n} rows × {d} columns is too large for the browser \
             (at most {MAX_CELLS} cells)"
        ));
    }
    let settings = tallmc_core::settings::Settings::new();
    tallmc_core::simulate::simulate(model, n, d, seed, &settings).map_err(|e| e.to_string())
}

/// A table from column-major values (`ncols` columns of `values.len() / ncols` rows).
pub fn table_from_columns(names: Vec<String>, values: &[f64]) -> Result<Table, String> {
    let k = names.len();
    if k == 0 {
        return Err("data: no columns".into());
    }
    if (values.len() / k) * k != values.len() {
        return Err(format!(
            "data: {} values do not fill {k} columns of equal length",
            values.len()
        ));
    }
    let n = values.len() / k;
    let columns = values
        .chunks(n.max(1))
        .take(k)
        .map(|c| c.to_vec())
        .collect();
    let columns = if n == 0 { vec![Vec::new(); k] } else { columns };
    Table::new(names, columns).map_err(|e| e.to_string())
}

#[wasm_bindgen]
impl DataSet {
    /// Parse CSV bytes (header row of column names, numeric cells), or a NumPy `.npz` (one
    /// column per array) or `.npy` table. `source` names the file in error messages, which give
    /// the line (CSV) or row (NumPy) and column of the first bad cell.
    #[wasm_bindgen(js_name = fromCsv)]
    pub fn from_csv(bytes: &[u8], source: &str) -> Result<DataSet, JsError> {
        crate::init();
        parse_csv(bytes, source)
            .map(|table| DataSet { table })
            .map_err(js_err)
    }

    /// A table from names and column-major values.
    #[wasm_bindgen(js_name = fromColumns)]
    pub fn from_columns(names: Vec<String>, values: &[f64]) -> Result<DataSet, JsError> {
        crate::init();
        table_from_columns(names, values)
            .map(|table| DataSet { table })
            .map_err(js_err)
    }

    /// The built-in simulated data set of `model`.
    pub fn simulate(model: &str, n: usize, d: usize, seed: u64) -> Result<DataSet, JsError> {
        crate::init();
        simulate_table(model, n, d, seed)
            .map(|table| DataSet { table })
            .map_err(js_err)
    }

    /// Column names.
    pub fn names(&self) -> Array {
        self.table
            .names
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect()
    }

    /// Number of rows.
    pub fn nrows(&self) -> usize {
        self.table.nrows()
    }

    /// Number of columns.
    pub fn ncols(&self) -> usize {
        self.table.names.len()
    }

    /// All values, column-major (`ncols × nrows`), one copy.
    pub fn values(&self) -> Float64Array {
        let n = self.table.nrows();
        let out = Float64Array::new_with_length((n * self.table.names.len()) as u32);
        for (j, c) in self.table.columns.iter().enumerate() {
            out.subarray((j * n) as u32, ((j + 1) * n) as u32)
                .copy_from(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_round_trip_and_errors() {
        let t = table_from_columns(vec!["a".into(), "b".into()], &[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(t.columns, vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert!(table_from_columns(vec!["a".into(), "b".into()], &[1.0, 2.0, 3.0]).is_err());
        assert!(table_from_columns(vec![], &[]).is_err());
        assert!(table_from_columns(vec!["a".into()], &[f64::NAN]).is_err());
    }

    #[test]
    fn numpy_files_parse_as_in_the_cli() {
        let t = Table::new(
            vec!["y".into(), "x".into()],
            vec![vec![0.0, 1.0], vec![0.5, -2.0]],
        )
        .unwrap();
        let mut npz = Vec::new();
        tallmc_cli::npy::write_npz(&mut npz, &t).unwrap();
        assert_eq!(parse_csv(&npz, "t.npz").unwrap(), t);
        let e = parse_csv(&npz[..npz.len() / 2], "t.npz").unwrap_err();
        assert!(e.starts_with("t.npz: "), "{e}");
        // Parquet and Arrow IPC are the command line's only: refused by name, not as CSV.
        for (head, what) in [
            (&b"PAR1\x15\x04"[..], "a Parquet file"),
            (&b"ARROW1\0\0"[..], "an Arrow IPC (Feather) file"),
            (
                &b"\xff\xff\xff\xff\x10\0\0\0"[..],
                "an Arrow IPC (Feather) file",
            ),
        ] {
            let e = parse_csv(head, "t.parquet").unwrap_err();
            assert!(e.starts_with(&format!("t.parquet: {what};")), "{e}");
        }
    }
}
