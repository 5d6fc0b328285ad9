//! Running the chains: one thread per chain with its progress bar, and the threads left for
//! full-data passes.

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

/// Drive one chain, keeping post-warm-up draws and step records.
pub(super) fn run_one(
    chain: &mut dyn Chain,
    rng: &mut ChainRng,
    draws: usize,
    t_setup: f64,
    bar: &ProgressBar,
) -> ChainOutput {
    let d = chain.dim();
    let setup = chain.setup_cost();
    let total = (chain.warmup() + draws) as u64;
    // Touch the shared bar about 200 times per chain, not every iteration.
    let stride = (total / 200).max(1);
    let mut pending = 0u64;
    let mut out_draws = vec![Vec::with_capacity(draws); d];
    let mut signs = Vec::with_capacity(draws);
    let mut stats = Vec::with_capacity(draws);
    let t_start = Instant::now();
    let mut t_warm_end: Option<Instant> = None;
    let (sampling, warmup) = run_chain(chain, rng, draws, |phase, _k, theta, info| {
        if phase == Phase::Sampling {
            if t_warm_end.is_none() {
                t_warm_end = Some(Instant::now());
            }
            for (col, &v) in out_draws.iter_mut().zip(theta) {
                col.push(v);
            }
            signs.push(info.sign);
            stats.push(*info);
        }
        pending += 1;
        if pending >= stride {
            bar.inc(pending);
            pending = 0;
        }
    });
    bar.inc(pending);
    let t_end = Instant::now();
    let t_warm_end = t_warm_end.unwrap_or(t_end);
    ChainOutput {
        draws: out_draws,
        signs,
        stats,
        sampling,
        warmup,
        setup,
        resolved: chain.resolved(),
        t_setup,
        t_warmup: t_warm_end.duration_since(t_start).as_secs_f64(),
        t_sampling: t_end.duration_since(t_warm_end).as_secs_f64(),
    }
}

/// Threads per full-data pass: the cores left over when each chain has one
/// (`TALLMC_PASS_THREADS` overrides; 1 = no splitting).
pub(super) fn pass_threads(chains: usize) -> usize {
    if let Some(t) = std::env::var("TALLMC_PASS_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return t.max(1);
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    (cores / chains.max(1)).max(1)
}
