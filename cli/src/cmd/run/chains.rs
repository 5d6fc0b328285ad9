//! Running the chains: one thread per chain with its progress bar, each streaming its rows of
//! draws.csv and stats.csv to a part file as it samples (so the run's memory does not grow with
//! `--draws`); the threads left for full-data passes are `tallmc_cli::parallel::pass_threads`.

use super::*;

pub(super) fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "sampling {elapsed_precise} [{bar:40}] {pos}/{len} iterations (eta {eta})",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// A spinner on a terminal while the model is built (a GLM's whitening runs a mode search)
/// and chain 0 is set up (mode search, automatic step size, pilot runs); hidden otherwise.
/// `d` is None until the model is built.
pub(super) fn setup_spinner(sampler: &str, d: Option<usize>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed_precise}") {
        bar.set_style(style);
    }
    set_setup_message(&bar, sampler, d);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// The set-up spinner's message: the phase, and d once known.
pub(super) fn set_setup_message(bar: &ProgressBar, sampler: &str, d: Option<usize>) {
    bar.set_message(setup_message(sampler, d));
}

/// "building the model (whitening: mode search)" before d is known, then "setting up {sampler}
/// (d = …: mode, step size, pilot runs)".
pub(super) fn setup_message(sampler: &str, d: Option<usize>) -> String {
    match d {
        None => "building the model (whitening: mode search)".to_string(),
        Some(d) => format!("setting up {sampler} (d = {d}: mode, step size, pilot runs)"),
    }
}

/// Where one chain writes its rows while it samples.
pub(super) struct ChainSink<'a> {
    /// The output directory.
    pub(super) dir: &'a Path,
    /// The chain's index (the first field of every row).
    pub(super) chain: usize,
    /// Whether draws.csv rows end with the sign.
    pub(super) signed: bool,
    /// How many of the kernel's extras stats.csv has.
    pub(super) extras: usize,
    /// Keep every `stride`-th draw in memory for the summary ([`keep_stride`]).
    pub(super) stride: usize,
}

/// Drive one chain: every post-warm-up draw and step record goes to the chain's part files
/// ([`part_path`]); every `sink.stride`-th draw is also kept in memory for the summary, the
/// KSD and the warnings; acceptance and divergences are totalled over every draw.
pub(super) fn run_one(
    chain: &mut dyn Chain,
    rng: &mut ChainRng,
    draws: usize,
    t_setup: f64,
    bar: &ProgressBar,
    sink: &ChainSink<'_>,
) -> Result<ChainOutput, CliError> {
    let d = chain.dim();
    let setup = chain.setup_cost();
    let total = (chain.warmup() + draws) as u64;
    // Touch the shared bar about 200 times per chain, not every iteration.
    let bar_stride = (total / 200).max(1);
    let mut pending = 0u64;
    let kept = draws.div_ceil(sink.stride);
    let mut out_draws = vec![Vec::with_capacity(kept); d];
    let mut signs = Vec::with_capacity(kept);
    let mut totals = StepTotals::default();
    let draws_path = part_path(sink.dir, "draws.csv", sink.chain);
    let stats_path = part_path(sink.dir, "stats.csv", sink.chain);
    let mut draws_w = create(&draws_path)?;
    let mut stats_w = create(&stats_path)?;
    let mut io_error: Option<CliError> = None;
    let mut line = String::new();
    let t_start = Instant::now();
    let mut t_warm_end: Option<Instant> = None;
    let mut k = 0usize;
    let (sampling, warmup) = run_chain(chain, rng, draws, |phase, _, theta, info| {
        if phase == Phase::Sampling {
            if t_warm_end.is_none() {
                t_warm_end = Some(Instant::now());
            }
            if k.is_multiple_of(sink.stride) {
                for (col, &v) in out_draws.iter_mut().zip(theta) {
                    col.push(v);
                }
                signs.push(info.sign);
            }
            totals.add(info);
            if io_error.is_none() {
                draw_row(
                    &mut line,
                    sink.chain,
                    k,
                    theta,
                    sink.signed.then_some(info.sign),
                );
                let r = draws_w
                    .write_all(line.as_bytes())
                    .map_err(write_err(&draws_path));
                let r = r.and_then(|()| {
                    stats_row(&mut line, sink.chain, k, info, sink.extras);
                    stats_w
                        .write_all(line.as_bytes())
                        .map_err(write_err(&stats_path))
                });
                io_error = r.err();
            }
            k += 1;
        }
        pending += 1;
        if pending >= bar_stride {
            bar.inc(pending);
            pending = 0;
        }
    });
    bar.inc(pending);
    if let Some(e) = io_error {
        return Err(e);
    }
    draws_w.flush().map_err(write_err(&draws_path))?;
    stats_w.flush().map_err(write_err(&stats_path))?;
    let t_end = Instant::now();
    let t_warm_end = t_warm_end.unwrap_or(t_end);
    Ok(ChainOutput {
        draws: out_draws,
        signs,
        totals,
        sampling,
        warmup,
        setup,
        resolved: chain.resolved(),
        t_setup,
        t_warmup: t_warm_end.duration_since(t_start).as_secs_f64(),
        t_sampling: t_end.duration_since(t_warm_end).as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::setup_message;

    /// The spinner starts before the model is built (a GLM's whitening is a mode search) and
    /// names d once the model exists.
    #[test]
    fn the_setup_message_covers_the_model_build_then_names_d() {
        assert_eq!(
            setup_message("sgld", None),
            "building the model (whitening: mode search)"
        );
        assert_eq!(
            setup_message("sgld", Some(7000)),
            "setting up sgld (d = 7000: mode, step size, pilot runs)"
        );
    }
}
