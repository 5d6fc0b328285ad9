//! `tallmc bench [--full]`: the speed and cost ratios claimed in BENCHMARKS.md, each measured
//! and printed from one run on this machine (`make bench` adds the wasm/native ratio and the
//! playground's stop latency from the browser).
//!
//! 1. HMC-ECS vs full-data NUTS: ESS per second (smallest bulk ESS over the parameters, warm-up
//!    and set-up included in the time), logistic regression, d = 10, n = 10⁵ (`--full`: 10⁶).
//! 2. SGLD vs a full-data gradient: per-iteration per-datum gradient evaluations and wall time,
//!    logistic regression, d = 10, batch 100, n = 10⁵ (`--full`: 10⁶).
//! 3. SMH-2 vs MH: ESS(θ₁) per likelihood evaluation and per second, spec 004 T7's set-up
//!    (logistic, d = 10, n = 2¹⁶, random-walk proposal; MH = SMH-2 with `truncation=0`).
//! 4. Minibatch MH vs AustereMH: average final batch size on the Welling–Teh mixture at
//!    temperature 10⁴ (spec 002 T4), N = 10⁶, 1 000 iterations (`--full`: 3 000).
//!
//! Timings are measurements, never test criteria; the printed lines start with `ratio` so a
//! script can pick them out.

use super::repro::{run_simple, SimpleRun};
use super::CliError;
use clap::Args;
use std::sync::Arc;
use std::time::Instant;
use tallmc_core::data::DesignSpec;
use tallmc_core::diag;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{self, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;

/// Arguments of `tallmc bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// The full sizes (n = 10⁶ for the HMC-ECS and SGLD ratios, longer minibatch-MH runs).
    #[arg(long)]
    pub full: bool,
    /// Only the gradient-pass measurement (GB/s against a triad).
    #[arg(long)]
    pub pass: bool,
    /// Only the subsampled-gradient measurement (an SGLD batch against reading its bytes).
    #[arg(long)]
    pub gather: bool,
    /// Only the CSV parse speed of this file (a plain CSV: a one-line header, then numbers),
    /// from memory, on the cores the process may use (`taskset -c 0 tallmc bench --csv F`
    /// for one core).
    #[arg(long, value_name = "FILE")]
    pub csv: Option<std::path::PathBuf>,
}

fn model(name: &str, n: usize, d: usize, seed: u64) -> Result<Arc<dyn DataModel>, CliError> {
    let table = tallmc_core::simulate::simulate(name, n, d, seed, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))?;
    let spec = DesignSpec {
        response: if name == "gmm" { "x" } else { "y" }.into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    registry::build_model(name, &table, &spec, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))
}

fn kv(xs: &[&str]) -> Vec<String> {
    xs.iter().map(|s| s.to_string()).collect()
}

/// Smallest bulk ESS over the parameters of one chain.
fn min_ess(r: &SimpleRun) -> f64 {
    let d = r.draws.first().map_or(0, |t| t.len());
    (0..d)
        .map(|j| {
            let c: Vec<f64> = r.draws.iter().map(|t| t[j]).collect();
            diag::ess_bulk(&[&c])
        })
        .fold(f64::INFINITY, f64::min)
}

fn ess_of(r: &SimpleRun, j: usize) -> f64 {
    let c: Vec<f64> = r.draws.iter().map(|t| t[j]).collect();
    diag::ess_bulk(&[&c])
}

/// GB/s of the full-data value-and-gradient pass of a whitened logistic GLM (n × d; the bytes
/// of the design, the response and the offsets read once per pass) against a STREAM-style
/// triad a = b + s·c over arrays of the same total size, measured in the same run.
pub fn gradient_pass(n: usize, d: usize) -> Result<(), CliError> {
    let m = model("logistic", n, d, 3)?;
    let theta = vec![0.01; m.dim()];
    let mut g = vec![0.0; m.dim()];
    let mut sink = 0.0;
    // warm up, then time
    for _ in 0..3 {
        g.iter_mut().for_each(|v| *v = 0.0);
        sink += m.log_lik_grad_all(&theta, &mut g);
    }
    let reps = 20;
    let t0 = Instant::now();
    for _ in 0..reps {
        g.iter_mut().for_each(|v| *v = 0.0);
        sink += m.log_lik_grad_all(&theta, &mut g);
    }
    let pass = t0.elapsed().as_secs_f64() / reps as f64;
    let offsets = m.user_map().is_some();
    let bytes = (n * m.dim() + n * if offsets { 2 } else { 1 }) * 8;
    // triad over the same number of bytes in three arrays
    let len = (bytes / 8 / 3).max(1);
    let b: Vec<f64> = (0..len).map(|i| i as f64).collect();
    let c: Vec<f64> = (0..len).map(|i| 0.5 * i as f64).collect();
    let mut av = vec![0.0; len];
    let t0 = Instant::now();
    for r in 0..reps {
        let s = 1.0 + r as f64 * 1e-9;
        for ((x, y), z) in av.iter_mut().zip(&b).zip(&c) {
            *x = y + s * z;
        }
        sink += av[len / 2];
    }
    let triad = t0.elapsed().as_secs_f64() / reps as f64;
    let pass_gbs = bytes as f64 / pass / 1e9;
    let triad_gbs = (3 * len * 8) as f64 / triad / 1e9;
    println!(
        "gradient pass: logistic n = {n}, d = {} (whitened: {offsets}), {:.2} ms per value-and-gradient \
         pass, {:.1} ns per row, {pass_gbs:.2} GB/s; triad {triad_gbs:.2} GB/s (checksum {sink:.3e})",
        m.dim(),
        1e3 * pass,
        1e9 * pass / n as f64,
    );
    println!(
        "ratio gradient pass / triad, bandwidth: {:.3}",
        pass_gbs / triad_gbs
    );
    // The same pass split across every core (what `tallmc run` does with cores to spare).
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if cores > 1 {
        let mut mp = model("logistic", n, d, 3)?;
        if let Some(inner) = std::sync::Arc::get_mut(&mut mp) {
            inner.set_parallel(std::sync::Arc::new(tallmc_cli::parallel::Threads::new(
                cores,
            )));
        }
        let mut gp = vec![0.0; mp.dim()];
        for _ in 0..3 {
            gp.iter_mut().for_each(|v| *v = 0.0);
            sink += mp.log_lik_grad_all(&theta, &mut gp);
        }
        let t0 = Instant::now();
        for _ in 0..reps {
            gp.iter_mut().for_each(|v| *v = 0.0);
            sink += mp.log_lik_grad_all(&theta, &mut gp);
        }
        let par = t0.elapsed().as_secs_f64() / reps as f64;
        let same = gp.iter().zip(&g).all(|(a, b)| a.to_bits() == b.to_bits());
        println!(
            "gradient pass on {cores} threads: {:.2} ms, {:.2} GB/s (bit-identical to one thread: {same}; checksum {sink:.3e})",
            1e3 * par,
            bytes as f64 / par / 1e9
        );
        println!(
            "ratio gradient pass, {cores} threads / 1 thread, speed: {:.2}",
            pass / par
        );
    }
    Ok(())
}

/// The stochastic-gradient step's data access (issue 21): per iteration, an SGLD batch of
/// `batch` rows drawn without replacement from a logistic n × d design (whitened, as `tallmc
/// run` builds it) against two floors measured in the same run on the same indices: reading
/// the batch's bytes (one value of every cache line of each drawn row, and its response) from
/// memory, and from cache (the same rows read a second time right after the first).
pub fn gather(n: usize, d: usize, batch: usize) -> Result<(), CliError> {
    use tallmc_core::estimator::GradientEstimator;
    let m = model("logistic", n, d, 3)?;
    // The design on huge pages, as a long SGLD run moves it (`TALLMC_HUGE_PAGES=0` measures
    // 4 kB pages).
    if tallmc_cli::hugepages::forced() != Some(false) {
        if let Some(g) = m.as_glm() {
            tallmc_cli::hugepages::move_to_huge_pages(&g.design().x);
            tallmc_cli::hugepages::move_to_huge_pages(&g.design().y);
            if let Some(o) = g.offset() {
                tallmc_cli::hugepages::move_to_huge_pages(o);
            }
        }
    }
    let dim = m.dim();
    let design = m
        .as_glm()
        .map(|g| g.design())
        .ok_or_else(|| CliError::internal("logistic is a GLM"))?;
    let mut est = GradientEstimator::naive(n, dim, batch, false)
        .map_err(|e| CliError::internal(e.to_string()))?;
    let theta = vec![0.01; dim];
    let mut out = vec![0.0; dim];
    let mut rng = chain_rng(7, 0);
    let iters = 4000;
    let mut sink = 0.0;
    for _ in 0..200 {
        est.estimate(&mut rng, m.as_ref(), &theta, &mut out);
    }
    let t0 = Instant::now();
    for _ in 0..iters {
        est.estimate(&mut rng, m.as_ref(), &theta, &mut out);
        sink += out[0];
    }
    let step = t0.elapsed().as_secs_f64() / iters as f64;
    // The index draw alone.
    let mut idx = Vec::with_capacity(batch);
    let mut sampler = tallmc_core::dist::IndexSampler::new(n, batch, false)
        .map_err(|e| CliError::internal(e.to_string()))?;
    let t0 = Instant::now();
    for _ in 0..iters {
        sampler.sample(&mut rng, &mut idx);
        sink += idx[0] as f64;
    }
    let draw = t0.elapsed().as_secs_f64() / iters as f64;
    // Reading the batch's bytes: one value of every cache line of each drawn row (its first
    // value, every eighth after it, its last) and its response, in a loop of loads alone (the
    // fastest of the loops measured on 2026-11-28: one sum over every value of the rows took
    // 1.3× as long, the eight rows in step of issue 21's kernel 1.55×).
    let read = |idx: &[usize], sink: &mut f64| {
        let mut acc = 0.0f64;
        for &i in idx {
            let row = &design.x[i * dim..(i + 1) * dim];
            let mut k = 0;
            while k < dim {
                acc += row[k];
                k += 8;
            }
            acc += row[dim - 1] + design.y[i];
        }
        *sink += acc;
    };
    let (mut mem, mut cached) = (0.0, 0.0);
    for _ in 0..iters {
        sampler.sample(&mut rng, &mut idx);
        let t0 = Instant::now();
        read(&idx, &mut sink);
        mem += t0.elapsed().as_secs_f64();
        let t0 = Instant::now();
        read(&idx, &mut sink);
        cached += t0.elapsed().as_secs_f64();
    }
    let (mem, cached) = (mem / iters as f64, cached / iters as f64);
    // The same floor on both cores: 1 000 batches drawn first, then read at once by two
    // threads, one the first half of every batch, the other the second half (no waiting
    // between them: a lower bound for an iteration that splits its batch across the cores, as
    // `tallmc run` does). The one-core read of the same batches alongside.
    let nb = 1000;
    let mut batches = Vec::with_capacity(nb * batch);
    for _ in 0..nb {
        sampler.sample(&mut rng, &mut idx);
        batches.extend_from_slice(&idx);
    }
    let half = batch / 2;
    let read_part = |lo: usize, hi: usize| {
        let mut s = 0.0;
        for b in batches.chunks_exact(batch) {
            read(&b[lo..hi], &mut s);
        }
        s
    };
    let t0 = Instant::now();
    sink += read_part(0, batch);
    let one_core = t0.elapsed().as_secs_f64() / nb as f64;
    let t0 = Instant::now();
    sink += std::thread::scope(|sc| {
        let other = sc.spawn(|| read_part(half, batch));
        read_part(0, half) + other.join().unwrap_or(0.0)
    });
    let two_cores = t0.elapsed().as_secs_f64() / nb as f64;
    // The same batches datum by datum (one call per row: the estimator's loop before issue 21).
    let mut g = vec![0.0; dim];
    let t0 = Instant::now();
    for _ in 0..iters {
        sampler.sample(&mut rng, &mut idx);
        g.iter_mut().for_each(|v| *v = 0.0);
        for &i in &idx {
            m.log_lik_grad(&theta, i, &mut g);
        }
        sink += g[0];
    }
    let per_datum = t0.elapsed().as_secs_f64() / iters as f64 - draw;
    // The batch gradient alone (the model's call SGLD's estimator makes, `grad_batch`: the
    // gradient without the values, on a fresh batch, no estimator around it).
    let mut alone = 0.0;
    for _ in 0..iters {
        sampler.sample(&mut rng, &mut idx);
        g.iter_mut().for_each(|v| *v = 0.0);
        let t0 = Instant::now();
        m.grad_batch(&theta, &idx, &mut g);
        alone += t0.elapsed().as_secs_f64();
        sink += g[0];
    }
    let alone = alone / iters as f64;
    // The same call a second time on the same batch (its rows then in cache): the gradient's
    // arithmetic without the wait on memory.
    let mut warm = 0.0;
    for _ in 0..iters {
        sampler.sample(&mut rng, &mut idx);
        m.grad_batch(&theta, &idx, &mut g);
        g.iter_mut().for_each(|v| *v = 0.0);
        let t0 = Instant::now();
        m.grad_batch(&theta, &idx, &mut g);
        warm += t0.elapsed().as_secs_f64();
        sink += g[0];
    }
    let warm = warm / iters as f64;
    let bytes = batch * (dim + 1) * 8;
    println!(
        "sgld batch gradient: logistic n = {n}, d = {dim}, batch {batch} without replacement: \
         {:.1} µs per iteration ({:.1} µs of it drawing the indices), {:.1} ns per row; \
         reading the batch's {bytes} bytes: {:.1} µs from memory, {:.1} µs from cache \
         (checksum {sink:.3e})",
        1e6 * step,
        1e6 * draw,
        1e9 * step / batch as f64,
        1e6 * mem,
        1e6 * cached,
    );
    println!(
        "of which the model's batch gradient alone (grad_batch): {:.1} µs (the rest: drawing \
         the indices and the estimator); the same call with the batch's rows in cache: {:.1} µs",
        1e6 * alone,
        1e6 * warm
    );
    println!(
        "ratio batch gradient datum by datum / in sweeps (the estimator's loop before and after issue 21): {:.2}",
        per_datum / (step - draw)
    );
    println!(
        "ratio sgld iteration / reading the batch from memory: {:.2}",
        step / mem
    );
    println!(
        "ratio sgld iteration / reading the batch from cache: {:.2}",
        step / cached
    );
    println!("sgld iterations per second: {:.0}", 1.0 / step);
    println!(
        "reading 1000 batches' bytes from memory: {:.1} µs per batch on one core, {:.1} µs on \
         two (each core half of every batch; {} cores here): at most {:.0} batches per second \
         read, whatever the arithmetic",
        1e6 * one_core,
        1e6 * two_cores,
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        1.0 / two_cores.min(one_core)
    );
    Ok(())
}

/// `tallmc bench --csv FILE`: the plain CSV path of `tallmc run` on the file's bytes held in
/// memory (no disk, no page faults of a file read): cut into the 16 MB blocks of whole lines
/// that `tallmc run` parses one after the other, parsed into the table's columns. Round 1 puts
/// the columns in fresh memory (as a run does); rounds 2 and 3 reuse them (the parser alone).
/// Rounds 4 and 5 parse into a regression design's rows instead (the last column the
/// response), as `tallmc run` does for a regression model: fresh, then reused.
pub fn csv_speed(path: &std::path::Path) -> Result<(), CliError> {
    use tallmc_cli::csvdata::{
        parse_plain_body_into, parse_plain_rows_into, plain_columns, plain_names, DesignRows,
    };
    let bytes = std::fs::read(path)
        .map_err(|e| CliError::input(format!("{}: {}", path.display(), super::io_msg(&e))))?;
    let not_plain = || {
        CliError::input(format!(
            "{}: not a plain CSV (a one-line header, then rows of unquoted numbers)",
            path.display()
        ))
    };
    let head = &bytes[..bytes.len().min(1 << 20)];
    let (names, body_at) = plain_names(head, &path.display().to_string()).ok_or_else(not_plain)?;
    let body = &bytes[body_at..];
    let mut blocks = Vec::new();
    let mut s = 0;
    while s < body.len() {
        let e = (s + (16 << 20)).min(body.len());
        let e = if e == body.len() {
            e
        } else {
            memchr_last_newline(&body[s..e]).map_or(e, |p| s + p + 1)
        };
        blocks.push(&body[s..e]);
        s = e;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mb = body.len() as f64 / 1e6;
    println!(
        "csv parse: {} ({mb:.0} MB of rows, {} columns, {} blocks) from memory on {cores} core(s)",
        path.display(),
        names.len(),
        blocks.len()
    );
    // Zeroed columns for the rows the first line predicts, as `tallmc run` makes them.
    let line = memchr::memchr(b'\n', body)
        .map_or(body.len(), |p| p + 1)
        .max(1);
    let rows = (body.len() / line) * 102 / 100 + 1;
    let mut columns = Vec::new();
    for round in 1..=3 {
        if round == 1 {
            columns = plain_columns(names.len(), rows);
        }
        let mut filled = 0;
        let t = Instant::now();
        for b in &blocks {
            if !parse_plain_body_into(b, &mut columns, &mut filled) {
                return Err(not_plain());
            }
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "round {round} ({}): {dt:.3} s, {:.0} MB/s, {:.0} MB/s per core, {} rows",
            if round == 1 {
                "fresh columns"
            } else {
                "columns reused"
            },
            mb / dt,
            mb / dt / cores as f64,
            filled
        );
    }
    // The path `tallmc run` takes for a regression model: the rows of its design (the last
    // column as the response, every other one a feature, an intercept first).
    drop(columns);
    let spec = tallmc_core::data::DesignSpec {
        response: names.last().cloned().unwrap_or_default(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let plan = spec
        .plan(&names)
        .map_err(|e| CliError::input(format!("{}: {e}", path.display())))?;
    let mut design = DesignRows::new(plan, names.len(), rows).ok_or_else(not_plain)?;
    for round in 4..=5 {
        let mut filled = 0;
        let t = Instant::now();
        for b in &blocks {
            if !parse_plain_rows_into(b, &mut design, &mut filled) {
                return Err(not_plain());
            }
        }
        let dt = t.elapsed().as_secs_f64();
        println!(
            "round {round} (design rows{}): {dt:.3} s, {:.0} MB/s, {:.0} MB/s per core, {} rows",
            if round == 4 { ", fresh" } else { " reused" },
            mb / dt,
            mb / dt / cores as f64,
            filled
        );
    }
    Ok(())
}

/// The offset of the last line break of `b`.
fn memchr_last_newline(b: &[u8]) -> Option<usize> {
    b.iter().rposition(|&c| c == b'\n')
}

/// Run every benchmark and print its ratio.
pub fn bench(a: &BenchArgs) -> Result<(), CliError> {
    if let Some(path) = &a.csv {
        return csv_speed(path);
    }
    let t_all = Instant::now();
    let n_big = if a.full { 1_000_000 } else { 100_000 };
    println!(
        "tallmc bench{} ({} cores)",
        if a.full { " --full" } else { "" },
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    // 0. The full-data gradient pass against memory bandwidth (the table of issue 17's size).
    if !a.gather {
        gradient_pass(327_346, 14)?;
    }
    if a.pass {
        return Ok(());
    }
    // The subsampled gradient against its data access (issue 21's SGLD workload).
    // 10⁶ rows, 29 features and the intercept (30 coefficients): the peers' SGLD workload
    // (bench/peers/run.py reads this measurement as its ceiling).
    gather(1_000_000, 30, 1300)?;
    if a.gather {
        return Ok(());
    }

    // 1. HMC-ECS vs full-data NUTS.
    let m = model("logistic", n_big, 10, 1)?;
    let ecs = run_simple(&m, "hmc-ecs", &[], "", 1000, 2000, 1)?;
    let nuts = run_simple(&m, "nuts", &kv(&["metric=dense"]), "", 500, 500, 1)?;
    let (e_ecs, e_nuts) = (min_ess(&ecs), min_ess(&nuts));
    println!(
        "hmc-ecs: n = {n_big}, d = 10, 1000 + 2000 iterations, min ESS {e_ecs:.0}, {:.2} s, {:.2e} \
         evaluations per kept draw",
        ecs.seconds,
        ecs.grad_evals.max(ecs.lik_evals) as f64 / 2000.0
    );
    println!(
        "nuts (dense metric, full data): 500 + 500 iterations, min ESS {e_nuts:.0}, {:.2} s, {:.2e} \
         evaluations per kept draw",
        nuts.seconds,
        nuts.grad_evals.max(nuts.lik_evals) as f64 / 500.0
    );
    println!(
        "ratio hmc-ecs / nuts, ESS per second: {:.1}",
        (e_ecs / ecs.seconds) / (e_nuts / nuts.seconds)
    );

    // 2. SGLD step vs a full-data gradient.
    let d = m.dim();
    let theta = vec![0.1; d];
    let mut g = vec![0.0; d];
    let reps = 20;
    let t0 = Instant::now();
    let mut sink = 0.0;
    for _ in 0..reps {
        g.iter_mut().for_each(|v| *v = 0.0);
        m.log_prior_grad(&theta, &mut g);
        m.log_lik_grad_all(&theta, &mut g);
        sink += g[0];
    }
    let full_secs = t0.elapsed().as_secs_f64() / reps as f64;
    let s = {
        let mut s = Settings::new();
        s.insert("batch_size", "100");
        s
    };
    let config = ChainConfig {
        sampler: "sgld",
        warmup: 0,
        settings: &s,
    };
    let mut rng = chain_rng(2, 0);
    let mut chain = registry::build_chain(&config, m.clone(), &mut rng)
        .map_err(|e| CliError::internal(e.to_string()))?;
    let iters = 20_000;
    let t0 = Instant::now();
    let mut evals = 0u64;
    for _ in 0..iters {
        evals += chain.step(&mut rng).grad_evals;
    }
    let step_secs = t0.elapsed().as_secs_f64() / iters as f64;
    let per_iter = evals as f64 / iters as f64;
    println!(
        "sgld: batch 100, {per_iter:.0} gradient evaluations and {:.2} µs per iteration; full-data \
         gradient {:.3} ms (checksum {sink:.3e})",
        1e6 * step_secs,
        1e3 * full_secs
    );
    println!(
        "ratio full gradient / sgld step, evaluations: {:.0}",
        n_big as f64 / per_iter
    );
    println!(
        "ratio full gradient / sgld step, wall time: {:.0}",
        full_secs / step_secs
    );
    drop(chain);
    drop(m);

    // 3. SMH-2 vs MH (spec 004 T7 set-up).
    let m = model("logistic", 1 << 16, 10, 56)?;
    let mh = run_simple(&m, "smh-2", &kv(&["truncation=0"]), "", 0, 3000, 700)?;
    let smh = run_simple(&m, "smh-2", &[], "", 0, 20_000, 702)?;
    let (e_mh, e_smh) = (ess_of(&mh, 1), ess_of(&smh, 1));
    println!(
        "mh: n = 65536, d = 10, 3000 iterations, ESS(θ₁) {e_mh:.0}, {:.1} evaluations/iteration, \
         {:.2} s; smh-2: 20000 iterations, ESS(θ₁) {e_smh:.0}, {:.1} evaluations/iteration, {:.2} s",
        mh.lik_evals as f64 / 3000.0,
        mh.seconds,
        smh.lik_evals as f64 / 20_000.0,
        smh.seconds
    );
    println!(
        "ratio smh-2 / mh, ESS per likelihood evaluation: {:.0}",
        (e_smh / smh.lik_evals as f64) / (e_mh / mh.lik_evals as f64)
    );
    println!(
        "ratio smh-2 / mh, ESS per second: {:.0}",
        (e_smh / smh.seconds) / (e_mh / mh.seconds)
    );
    drop(m);

    // 4. Minibatch MH vs AustereMH (spec 002 T4).
    let iters = if a.full { 3000 } else { 1000 };
    let m = model("gmm", 1_000_000, 1, 4004)?;
    let common = [
        "step_size=0.15",
        "temperature=10000",
        "init=model",
        "batch_step=50",
    ];
    let mb = run_simple(&m, "mh-minibatch", &kv(&common), "batch_size", 0, iters, 7)?;
    let mut au_kv = kv(&common);
    au_kv.push("epsilon=0.005".into());
    let au = run_simple(&m, "austere-mh", &au_kv, "batch_size", 0, iters, 7)?;
    println!(
        "mh-minibatch: N = 10^6, {iters} iterations, average batch {:.1}; austere-mh (ε = 0.005): \
         average batch {:.1}",
        mb.extra_mean, au.extra_mean
    );
    println!(
        "ratio austere-mh / mh-minibatch, average batch size: {:.1}",
        au.extra_mean / mb.extra_mean
    );
    println!(
        "tallmc bench: {:.1} s in all",
        t_all.elapsed().as_secs_f64()
    );
    Ok(())
}
