//! draws.csv, summary.csv and stats.csv, and the order in which a run's outputs appear: an
//! unfinished run can never be mistaken for a finished one.
//!
//! 1. [`start_outputs`] removes an earlier run's four outputs from the folder and writes a
//!    run.json with `"complete": false`.
//! 2. Each chain streams its rows to `draws.csv.part<c>` and `stats.csv.part<c>` ([`run_one`]).
//! 3. [`assemble`] joins the parts under a temporary name and renames it; summary.csv is
//!    written the same way; run.json, with `"complete": true`, is written last.

use super::*;

/// The output files a run writes, run.json last.
pub(super) const OUTPUTS: [&str; 4] = ["draws.csv", "summary.csv", "stats.csv", "run.json"];

/// Values (draws × (parameters + sign)) each chain keeps in memory for the summary: 2²⁴ values,
/// 128 MiB. Longer chains are thinned evenly for summary.csv, the KSD and the warnings (draws.csv
/// and stats.csv still hold every draw). `TALLMC_KEEP_VALUES` overrides it (tests).
const KEEP_VALUES: usize = 1 << 24;

/// Keep every `stride`-th draw in memory: 1 unless `draws × (d + 1)` exceeds [`KEEP_VALUES`].
pub(super) fn keep_stride(draws: usize, d: usize) -> usize {
    let keep_values = std::env::var("TALLMC_KEEP_VALUES")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(KEEP_VALUES)
        .max(1);
    let per_chain = (keep_values / (d + 1)).max(1);
    draws.div_ceil(per_chain).max(1)
}

/// Totals over every kept draw of a chain (the in-memory draws may be thinned; these are not).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct StepTotals {
    /// Kept draws.
    pub(super) kept: usize,
    /// Divergent transitions among them.
    pub(super) divergences: usize,
    /// Σ acceptance probability, in draw order.
    pub(super) accept_sum: f64,
}

impl StepTotals {
    pub(super) fn add(&mut self, info: &StepInfo) {
        self.kept += 1;
        self.divergences += usize::from(info.divergent);
        self.accept_sum += info.accept_prob;
    }

    /// Mean acceptance probability (NaN when no draw was kept).
    pub(super) fn mean_accept(&self) -> f64 {
        self.accept_sum / self.kept.max(1) as f64
    }
}

pub(super) fn create(path: &Path) -> Result<std::io::BufWriter<std::fs::File>, CliError> {
    std::fs::File::create(path)
        .map(|f| std::io::BufWriter::with_capacity(1 << 16, f))
        .map_err(|e| CliError::input(format!("--out {}: {}", path.display(), io_msg(&e))))
}

pub(super) fn write_err(path: &Path) -> impl Fn(std::io::Error) -> CliError + '_ {
    move |e| CliError::input(format!("cannot write {}: {}", path.display(), io_msg(&e)))
}

/// `<dir>/<name>.part<chain>`: chain `chain`'s rows of `name` while the run goes on.
pub(super) fn part_path(dir: &Path, name: &str, chain: usize) -> PathBuf {
    dir.join(format!("{name}.part{chain}"))
}

/// `<dir>/<name>.tmp`: a finished file before it takes its name.
fn tmp_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.tmp"))
}

/// Write `name` under a temporary name with `write`, then rename it into place.
pub(super) fn write_atomically<T>(
    dir: &Path,
    name: &str,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>, &Path) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let tmp = tmp_path(dir, name);
    let mut w = create(&tmp)?;
    let out = write(&mut w, &tmp)?;
    w.flush().map_err(write_err(&tmp))?;
    drop(w);
    let path = dir.join(name);
    std::fs::rename(&tmp, &path).map_err(write_err(&path))?;
    Ok(out)
}

/// Before sampling: remove an earlier run's outputs from `dir` (so that none of them outlives
/// an interrupted run) and write run.json saying this run has not finished.
pub(super) fn start_outputs(dir: &Path, started: &serde_json::Value) -> Result<(), CliError> {
    for name in OUTPUTS {
        let path = dir.join(name);
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(write_err(&path)(e)),
        }
    }
    write_atomically(dir, "run.json", |w, path| {
        serde_json::to_writer_pretty(&mut *w, started)
            .map_err(|e| CliError::input(format!("cannot write {}: {e}", path.display())))?;
        w.write_all(b"\n").map_err(write_err(path))
    })
}

/// Remove the chains' part files (after [`assemble`], or when the run failed).
pub(super) fn remove_parts(dir: &Path, chains: usize) {
    for c in 0..chains {
        for name in ["draws.csv", "stats.csv"] {
            let _ = std::fs::remove_file(part_path(dir, name, c));
        }
    }
}

/// `name` = the header, then the chains' part files in chain order.
pub(super) fn assemble(
    dir: &Path,
    name: &str,
    header: &[&str],
    chains: usize,
) -> Result<(), CliError> {
    write_atomically(dir, name, |w, path| {
        write_header(w, header).map_err(write_err(path))?;
        for c in 0..chains {
            let part = part_path(dir, name, c);
            let mut f = std::fs::File::open(&part).map_err(|e| {
                CliError::input(format!("cannot read {}: {}", part.display(), io_msg(&e)))
            })?;
            std::io::copy(&mut f, w).map_err(write_err(path))?;
        }
        Ok(())
    })?;
    for c in 0..chains {
        let _ = std::fs::remove_file(part_path(dir, name, c));
    }
    Ok(())
}

/// draws.csv's header: chain, draw, every parameter, then `sign` for signed samplers.
pub(super) fn draws_header(names: &[String], signed: bool) -> Vec<&str> {
    let mut header: Vec<&str> = vec!["chain", "draw"];
    header.extend(names.iter().map(|s| s.as_str()));
    if signed {
        header.push("sign");
    }
    header
}

/// One line of draws.csv into `line` (cleared first).
pub(super) fn draw_row(line: &mut String, c: usize, k: usize, theta: &[f64], sign: Option<f64>) {
    line.clear();
    line.push_str(&format!("{c},{k}"));
    for &v in theta {
        line.push(',');
        push_f64(line, v);
    }
    if let Some(s) = sign {
        line.push(',');
        push_f64(line, s);
    }
    line.push('\n');
}

/// stats.csv's header: the common columns, then the kernel's extras.
pub(super) fn stats_header<'a>(extras: &[&'a str]) -> Vec<&'a str> {
    let mut header = vec!["chain", "draw"];
    header.extend_from_slice(&tallmc_cli::messages::STAT_NAMES);
    header.extend_from_slice(extras);
    header
}

/// One line of stats.csv into `line` (cleared first).
pub(super) fn stats_row(line: &mut String, c: usize, k: usize, s: &StepInfo, extras: usize) {
    line.clear();
    line.push_str(&format!("{c},{k},"));
    push_f64(line, s.accept_prob);
    line.push_str(&format!(
        ",{},{},{},{},",
        u8::from(s.divergent),
        s.lik_evals,
        s.grad_evals,
        s.n_leapfrog
    ));
    push_f64(line, s.step_size);
    line.push(',');
    push_f64(line, s.energy);
    for e in s.extra.iter().take(extras) {
        line.push(',');
        push_f64(line, *e);
    }
    line.push('\n');
}

/// `summary.csv`: one row per parameter, from the draws kept in memory.
pub(super) fn write_summary(
    dir: &Path,
    names: &[String],
    signed: bool,
    outputs: &[ChainOutput],
) -> Result<Vec<diag::Summary>, CliError> {
    let all = summaries(names.len(), signed, outputs);
    write_atomically(dir, "summary.csv", |w, path| {
        let header: Vec<&str> = core::iter::once("param")
            .chain(diag::Summary::COLUMNS)
            .collect();
        write_header(w, &header).map_err(write_err(path))?;
        for (name, s) in names.iter().zip(&all) {
            let mut line = String::new();
            push_field(&mut line, name);
            for v in s.values() {
                line.push(',');
                push_f64(&mut line, v);
            }
            line.push('\n');
            w.write_all(line.as_bytes()).map_err(write_err(path))?;
        }
        Ok(())
    })?;
    Ok(all)
}

/// Each parameter's summary (ESS by FFT, ranks by sorting: independent per parameter), the
/// parameters split over the cores in contiguous runs; the same numbers on any number of
/// threads.
fn summaries(params: usize, signed: bool, outputs: &[ChainOutput]) -> Vec<diag::Summary> {
    let signs: Vec<&[f64]> = outputs.iter().map(|o| o.signs.as_slice()).collect();
    let one = |j: usize| {
        let chains: Vec<&[f64]> = outputs.iter().map(|o| o.draws[j].as_slice()).collect();
        if signed {
            diag::summarize_signed(&chains, &signs)
        } else {
            diag::summarize(&chains)
        }
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |t| t.get())
        .min(params);
    if threads <= 1 {
        return (0..params).map(one).collect();
    }
    let per = params.div_ceil(threads);
    let one = &one;
    std::thread::scope(|s| {
        let handles: Vec<_> = (1..threads)
            .map(|t| s.spawn(move || (t * per..((t + 1) * per).min(params)).map(one).collect()))
            .collect();
        let mut all: Vec<diag::Summary> = (0..per.min(params)).map(one).collect();
        for (t, h) in handles.into_iter().enumerate() {
            // A thread that panicked (reported on stderr) leaves its parameters to this one.
            let range = (t + 1) * per..((t + 2) * per).min(params);
            let part: Vec<diag::Summary> = h.join().unwrap_or_else(|_| range.map(one).collect());
            all.extend(part);
        }
        all
    })
}
