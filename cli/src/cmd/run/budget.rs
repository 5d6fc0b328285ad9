//! Resource limits checked before anything large is allocated or written: iterations per
//! chain, memory, and the size of the output files. Each limit has an option that raises it.

use super::*;

/// Default `--max-iterations`: warm-up + draws per chain.
pub(super) const MAX_ITERATIONS: u64 = 1_000_000_000;
/// Default `--max-memory-gb`.
pub(super) const MAX_MEMORY_GB: f64 = 8.0;
/// Default `--max-output-gb`: draws.csv and stats.csv together.
pub(super) const MAX_OUTPUT_GB: f64 = 20.0;

/// Bytes as a person reads them: `512 B`, `3.4 MB`, `1.2 TB` (powers of 1000).
pub(super) fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 7] = ["B", "kB", "MB", "GB", "TB", "PB", "EB"];
    let mut v = b;
    let mut u = 0;
    while v >= 999.95 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The option a too-long run is blamed on: the larger of `--warmup` and `--draws`.
fn longer(a: &RunArgs) -> String {
    if a.warmup > a.draws {
        format!("--warmup {}", a.warmup)
    } else {
        format!("--draws {}", a.draws)
    }
}

/// Refuse more than `--max-iterations` warm-up + draws per chain (checked before the data is
/// read: a run that long would not finish).
pub(super) fn check_iterations(a: &RunArgs) -> Result<(), CliError> {
    let per_chain = (a.warmup as u128) + (a.draws as u128);
    if per_chain > a.max_iterations as u128 {
        return Err(CliError::input(format!(
            "{}: {} warm-up + {} draws = {per_chain} iterations per chain is above the limit of \
             {} (--max-iterations raises it)",
            longer(a),
            a.warmup,
            a.draws,
            a.max_iterations
        )));
    }
    Ok(())
}

/// What a run of `d` parameters on `n` rows holds in memory and writes to disk, estimated
/// before sampling.
#[derive(Debug, Clone, Copy)]
pub(super) struct Estimate {
    /// Bytes held: the model's design, and each chain's in-memory (thinned) draws with the
    /// summary's working copies.
    pub(super) memory: f64,
    /// Bytes written to draws.csv and stats.csv.
    pub(super) output: f64,
}

/// The estimate for `a`'s chains and draws, `d` parameters, `n` rows of a table of `columns`
/// columns, `extras` stats columns.
pub(super) fn estimate(
    a: &RunArgs,
    n: usize,
    d: usize,
    columns: usize,
    signed: bool,
    extras: usize,
) -> Estimate {
    let chains = a.chains as f64;
    let kept = a.draws.div_ceil(keep_stride(a.draws, d)) as f64;
    // The model's data: a regression's design (n × d, d at most the columns and an intercept),
    // the response and the whitening's offsets; a model with more parameters than columns
    // (pmf: one vector per user and item) holds its n rows of the table's columns.
    let width = d.min(columns + 1) as f64 + 2.0;
    let data = n as f64 * width * 8.0;
    // Draws and signs kept per chain, then up to four working copies of one parameter over
    // all chains while summary.csv is computed (pooled draws, sorted copy, ranks).
    let draws = chains * kept * (d as f64 + 1.0) * 8.0;
    let summary = 4.0 * chains * kept * 8.0;
    // A full-precision number takes up to about 22 characters with its comma.
    let draws_row = 16.0 + (d as f64 + f64::from(u8::from(signed))) * 22.0;
    let stats_row = 40.0 + (4.0 + extras as f64) * 22.0;
    Estimate {
        memory: data + draws + summary,
        output: chains * a.draws as f64 * (draws_row + stats_row),
    }
}

/// Refuse a run whose [`Estimate`] is above `--max-memory-gb` or `--max-output-gb`.
pub(super) fn check_estimate(a: &RunArgs, e: &Estimate) -> Result<(), CliError> {
    let gb = 1e9;
    if e.memory > a.max_memory_gb * gb {
        return Err(CliError::input(format!(
            "--draws {} with --chains {}: the run would hold about {} in memory (limit {}; \
             --max-memory-gb raises it)",
            a.draws,
            a.chains,
            human_bytes(e.memory),
            human_bytes(a.max_memory_gb * gb)
        )));
    }
    if e.output > a.max_output_gb * gb {
        return Err(CliError::input(format!(
            "--draws {} with --chains {}: draws.csv and stats.csv would take about {} (limit {}; \
             --max-output-gb raises it)",
            a.draws,
            a.chains,
            human_bytes(e.output),
            human_bytes(a.max_output_gb * gb)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        a: RunArgs,
    }

    fn args(draws: &str) -> RunArgs {
        Wrap::parse_from([
            "run",
            "--data",
            "x.csv",
            "--model",
            "logistic",
            "--sampler",
            "hmc",
            "--out",
            "o",
            "--draws",
            draws,
        ])
        .a
    }

    /// Draws are streamed: the memory of a run does not grow with `--draws` beyond the
    /// in-memory budget (a `--draws 10⁸` run on 10⁵ rows and 14 parameters holds < 1 GB).
    #[test]
    fn memory_is_bounded_whatever_the_draws() {
        let e8 = estimate(&args("100000000"), 100_000, 14, 14, false, 4);
        let e9 = estimate(&args("1000000000"), 100_000, 14, 14, false, 4);
        assert!(e8.memory < 1e9, "{}", e8.memory);
        assert!((e8.memory - e9.memory).abs() < 0.01 * e8.memory);
        assert!(e9.output > 9.0 * e8.output);
        let small = estimate(&args("1000"), 100_000, 14, 14, false, 4);
        assert!(small.memory < 20e6, "{}", small.memory);
    }

    /// A model with far more parameters than columns (pmf: 30 000 parameters on 200 000
    /// ratings of 3 columns) holds its table, not n × d values (48 GB: the false refusal
    /// found by a re-run of issue 19's cases at large d).
    #[test]
    fn parameters_beyond_the_columns_hold_no_n_by_d_data() {
        let pmf = estimate(&args("100"), 200_000, 30_000, 3, false, 4);
        assert!(pmf.memory < 1e9, "{}", pmf.memory);
        let glm = estimate(&args("100"), 200_000, 15, 14, false, 4);
        assert!(glm.memory >= 200_000.0 * 17.0 * 8.0, "{}", glm.memory);
    }

    #[test]
    fn bytes_read_as_a_person_reads_them() {
        assert_eq!(human_bytes(0.0), "0 B");
        assert_eq!(human_bytes(999.0), "999 B");
        assert_eq!(human_bytes(1000.0), "1.0 kB");
        assert_eq!(human_bytes(88e9), "88.0 GB");
        assert_eq!(human_bytes(1.234e12), "1.2 TB");
        assert_eq!(human_bytes(1e30), "1000000000000.0 EB");
    }
}
