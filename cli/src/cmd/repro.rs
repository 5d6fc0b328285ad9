//! `tallmc repro EXPERIMENT [--quick] --out DIR`: paper reproductions (none registered yet).

use super::CliError;
use clap::Args;
use std::path::PathBuf;

/// Arguments of `tallmc repro`.
#[derive(Args, Debug)]
pub struct ReproArgs {
    /// Experiment name; omit to list the experiments.
    pub experiment: Option<String>,
    /// A shorter version of the experiment (fewer data, draws and repetitions).
    #[arg(long)]
    pub quick: bool,
    /// Output directory.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Every experiment: (name, description).
const EXPERIMENTS: &[(&str, &str)] = &[];

/// `tallmc repro`.
pub fn repro(a: &ReproArgs) -> Result<(), CliError> {
    let Some(name) = &a.experiment else {
        if EXPERIMENTS.is_empty() {
            println!("no experiments yet");
        }
        for (n, d) in EXPERIMENTS {
            println!("{n}  {d}");
        }
        return Ok(());
    };
    if !EXPERIMENTS.iter().any(|(n, _)| n == name) {
        let avail = if EXPERIMENTS.is_empty() {
            "no experiments yet".to_string()
        } else {
            let names: Vec<&str> = EXPERIMENTS.iter().map(|(n, _)| *n).collect();
            format!("available: {}", names.join(", "))
        };
        return Err(CliError::input(format!(
            "unknown experiment `{name}` ({avail})"
        )));
    }
    if a.out.is_none() {
        return Err(CliError::input(
            "--out DIR is required to run an experiment",
        ));
    }
    Err(CliError::internal(format!(
        "experiment `{name}` is listed but not implemented"
    )))
}
