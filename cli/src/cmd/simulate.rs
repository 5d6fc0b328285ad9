//! `tallmc simulate`: synthetic data for a model, written as CSV at full precision, or by the
//! `--out` file's extension as NumPy's uncompressed `.npz` (one f64 array per column), Parquet
//! (`.parquet`: one float64 column per table column, snappy, row groups of 2²⁰ rows) or an
//! Arrow IPC file (`.arrow`, `.feather`: Feather v2, uncompressed, batches of 2²⁰ rows).

use super::{io_msg, settings_from, CliError, ErrorContext};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;

/// Arguments of `tallmc simulate`.
#[derive(Args, Debug)]
pub struct SimulateArgs {
    /// Model to simulate from (see `tallmc models`).
    #[arg(long)]
    pub model: String,
    /// Number of rows.
    #[arg(long)]
    pub n: usize,
    /// Number of parameters (regression coefficients, intercept included; `pmf`: the rank).
    #[arg(long, default_value_t = 5)]
    pub d: usize,
    /// Seed of the random stream.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Simulation option, repeatable (`noise_sd`, `nu`, ...).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Output file: CSV, or by its extension NumPy `.npz`, Parquet `.parquet` (snappy) or an
    /// Arrow IPC file `.arrow`/`.feather` (Feather v2); every column float64.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// `tallmc simulate`.
pub fn simulate(a: &SimulateArgs) -> Result<(), CliError> {
    let settings = settings_from(&a.set)?;
    let ctx = ErrorContext {
        model: Some(&a.model),
        settings: Some(&settings),
        ..Default::default()
    };
    // The table is built in memory: refuse a size the machine cannot hold (the cells of the
    // table, and as much again for the rows being drawn) instead of aborting.
    let columns = match a.model.as_str() {
        "gmm" | "lgssm" | "sv" | "garch" => 1,
        "pmf" => 3,
        _ => a.d.saturating_add(1),
    };
    let bytes = a.n.checked_mul(columns).and_then(|c| c.checked_mul(16));
    if !super::fits_in_memory(bytes) {
        return Err(CliError::input(format!(
            "--n: {} rows of {columns} columns do not fit in memory",
            a.n
        )));
    }
    let table = tallmc_core::simulate::simulate(&a.model, a.n, a.d, a.seed, &settings)
        .map_err(|e| ctx.describe(&e))?;
    settings.check_all_used().map_err(|e| ctx.describe(&e))?;
    let name = a.out.display().to_string();
    if let Some(parent) = a.out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| CliError::input(format!("--out {name}: {}", io_msg(&e))))?;
    }
    let file = std::fs::File::create(&a.out)
        .map_err(|e| CliError::input(format!("--out {name}: {}", io_msg(&e))))?;
    let mut w = std::io::BufWriter::new(file);
    let ext = a
        .out
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase());
    match ext.as_deref() {
        Some("npz") => tallmc_cli::npy::write_npz(&mut w, &table),
        Some("parquet") => tallmc_cli::columnar::write_parquet(&mut w, &table),
        Some("arrow" | "feather") => tallmc_cli::columnar::write_arrow(&mut w, &table),
        _ => tallmc_cli::csvdata::write_table(&mut w, &table),
    }
    .and_then(|_| w.flush())
    .map_err(|e| CliError::input(format!("--out {name}: {}", io_msg(&e))))?;
    Ok(())
}
