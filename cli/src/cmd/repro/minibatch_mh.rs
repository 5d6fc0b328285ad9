//! `tallmc repro minibatch-mh`: Seita et al. (2017) Tables 1–2. The Welling–Teh Gaussian
//! mixture (N = 10⁶, K = 10⁴) and logistic regression on a synthetic MNIST-like "1 vs 7" data
//! set (N = 13 000, 784 pixels, K = 100): average final minibatch size of MHminibatch,
//! AustereMH (conservative and non-conservative designs) and MHSubLhd.

use super::*;
use tallmc_core::chain::Chain;
use tallmc_core::kernel::minibatch_mh::baselines::{AustereMh, MhSubLhd};
use tallmc_core::kernel::minibatch_mh::digits::{accuracy, one_vs_seven};
use tallmc_core::kernel::minibatch_mh::xcorr::Correction;
use tallmc_core::kernel::minibatch_mh::{MinibatchMh, MinibatchTest};
use tallmc_core::sampler::minibatch_mh::MinibatchMhChain;

pub(crate) fn run(a: &ReproArgs, out: &Path) -> Result<(), CliError> {
    let t0 = Instant::now();
    let mut md = String::new();
    let mut csv = String::from(
        "experiment,method,sampler,n,temperature,iterations,avg_batch_size,avg_batch_fraction,lik_evals_per_iter,accept,test_accuracy,paper_avg_batch_size,seconds\n",
    );
    let _ = writeln!(
        md,
        "# tallmc repro minibatch-mh{}\n",
        if a.quick { " --quick" } else { "" }
    );
    gmm(a, &mut md, &mut csv)?;
    logistic(a, &mut md, &mut csv)?;
    let _ = writeln!(md, "\nTotal time {:.1} s.", t0.elapsed().as_secs_f64());
    write(&out.join("minibatch_mh_table.md"), &md)?;
    write(&out.join("minibatch_mh.csv"), &csv)?;
    crate::cmd::list::emit(&md)
}

fn gmm(a: &ReproArgs, md: &mut String, csv: &mut String) -> Result<(), CliError> {
    use tallmc_core::model::Gmm;
    use tallmc_core::rng::uniform;
    let n = a.n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    let draws = a.draws.unwrap_or(if a.quick { 1000 } else { 3000 });
    let warmup = (draws / 10).max(10);
    // N/K = 100 as in the paper (K = 10^4 at N = 10^6).
    let temperature = (n as f64 / 100.0).max(1.0);
    let seed = 2017;
    eprintln!("simulating the Gaussian mixture: N = {n}, θ = (0, 1), σₓ² = 2; K = {temperature}");
    let mut rng = chain_rng(seed, 0);
    let sd = 2f64.sqrt();
    let x: Vec<f64> = (0..n)
        .map(|_| {
            let m = if uniform(&mut rng) >= 0.5 { 1.0 } else { 0.0 };
            m + sd * tallmc_core::dist::std_normal(&mut rng)
        })
        .collect();
    let model: Arc<dyn DataModel> = Arc::new(
        // Untempered model: the samplers apply the temperature (setting `temperature`).
        Gmm::new(x, [10.0, 1.0], 2.0, 1.0).map_err(|e| CliError::internal(e.to_string()))?,
    );
    let common = vec![
        "step_size=0.15".to_string(),
        "batch_step=50".into(),
        format!("temperature={temperature}"),
        "init=zero".into(),
    ];
    let methods: [(&str, &str, &[&str], f64); 3] = [
        ("MHminibatch", "mh-minibatch", &[], 182.3),
        ("AustereMH(c)", "austere-mh", &["epsilon=0.005"], 13540.5),
        (
            "MHSubLhd",
            "mh-sublhd",
            &["gamma=1.5", "delta=0.01", "p=2"],
            65758.9,
        ),
    ];
    let _ = writeln!(
        md,
        "## Table 1: Gaussian mixture\n\nWelling & Teh mixture, θ = (0, 1), σₓ² = 2, prior N(0, diag(10, 1)), N = {n}, temperature K = {temperature} (N/K = 100), seed {seed}.\n\
         Random-walk proposal, std 0.15 per coordinate; batch step m = 50; start at θ = (0, 0); {warmup} warm-up + {draws} kept iterations, one chain per method.\n\
         AustereMH(c) uses the authors' code's fixed design for this experiment (m = 50, ε = 0.005); MHSubLhd γ = 1.5, p = 2, δ = 0.01.\n\
         Average final batch size = mean of the `batch_size` extra over kept iterations; lik evals / iter counts every per-datum evaluation \
         (2 per datum read; MHSubLhd's full-data range C adds 2N per iteration).\n"
    );
    md.push_str("| method | sampler | avg final batch size | batch / N | lik evals / iter | accept | seconds | paper Table 1 (N = 10^6) |\n|---|---|---|---|---|---|---|---|\n");
    let mut sizes = Vec::new();
    for (label, sampler, extra, paper) in methods {
        eprintln!("{label}: {warmup} warm-up + {draws} draws");
        let mut kv = common.clone();
        kv.extend(extra.iter().map(|s| s.to_string()));
        let r = run_simple(&model, sampler, &kv, "batch_size", warmup, draws, seed)?;
        let lpi = r.lik_evals as f64 / r.draws.len().max(1) as f64;
        let _ = writeln!(
            md,
            "| {label} | {sampler} | {} | {} | {} | {} | {} | {} |",
            fmt(r.extra_mean),
            fmt(r.extra_mean / n as f64),
            fmt(lpi),
            fmt(r.accept),
            fmt(r.seconds),
            fmt(paper)
        );
        let _ = writeln!(
            csv,
            "gmm,{label},{sampler},{n},{temperature},{},{},{},{lpi},{},,{paper},{}",
            r.draws.len(),
            r.extra_mean,
            r.extra_mean / n as f64,
            r.accept,
            r.seconds
        );
        sizes.push(r.extra_mean);
    }
    let _ = writeln!(
        md,
        "\nRatios of average batch sizes: AustereMH(c) / MHminibatch = {:.1}× (issue 6 requires ≥ 50×; paper 74×), \
         MHSubLhd / MHminibatch = {:.1}× (paper 361×).\n\
         Paper Table 1 (10 trials × 3000 samples, N = 10^6): MHminibatch 182.3 ± 11.4, AustereMH(c) 13,540.5 ± 1,521.4, MHSubLhd 65,758.9 ± 3,222.6.\n",
        sizes[1] / sizes[0],
        sizes[2] / sizes[0]
    );
    Ok(())
}

/// What one logistic-regression chain measured.
struct LrRun {
    iters: usize,
    avg_batch: f64,
    evals_per_iter: f64,
    accept: f64,
    accuracy: f64,
    seconds: f64,
}

fn run_lr<T: MinibatchTest>(
    kernel: T,
    model: &Arc<dyn DataModel>,
    test: &tallmc_core::data::Design,
    iters: usize,
    seed: u64,
) -> Result<LrRun, CliError> {
    use tallmc_core::rng::uniform;
    let t0 = Instant::now();
    let mut rng = chain_rng(seed, 9);
    // θ₀ ~ U(0, 1)^784, as in the authors' code.
    let theta0: Vec<f64> = (0..model.dim()).map(|_| uniform(&mut rng)).collect();
    let mut chain = MinibatchMhChain::new(kernel, model.clone(), &theta0, 0)
        .map_err(|e| CliError::internal(e.to_string()))?;
    let (mut b, mut evals, mut acc) = (0.0, 0.0, 0usize);
    for _ in 0..iters {
        let info = chain.step(&mut rng);
        b += info.extra[0];
        evals += info.lik_evals as f64;
        acc += info.accepted as usize;
    }
    let k = iters.max(1) as f64;
    Ok(LrRun {
        iters,
        avg_batch: b / k,
        evals_per_iter: evals / k,
        accept: acc as f64 / k,
        accuracy: accuracy(chain.position(), test),
        seconds: t0.elapsed().as_secs_f64(),
    })
}

fn logistic(a: &ReproArgs, md: &mut String, csv: &mut String) -> Result<(), CliError> {
    use tallmc_core::model::{Glm, Logistic, Prior};
    // The hidden --n / --draws (tests) also size this experiment.
    let n = a.n.unwrap_or(13_000).min(13_000);
    // --quick: fewer iterations, and fewer still for the two methods that scan all data every
    // iteration (the early iterations are the transient from θ₀, with larger batches).
    let (iters, scan_iters) = match a.draws {
        Some(d) => (d, d),
        None if a.quick => (1000, 200),
        None => (5000, 5000),
    };
    let (k, step, m) = (100.0, 0.05, 100);
    let seed = 5005;
    eprintln!("simulating the synthetic 1-vs-7 images: {n} train + 2163 test");
    let train = one_vs_seven(n, seed, 0);
    let test = one_vs_seven(2163, seed, 1);
    let model: Arc<dyn DataModel> = Arc::new(Glm::new(train, Logistic, Prior::Flat));
    let internal = |e: tallmc_core::Error| CliError::internal(e.to_string());
    let _ = writeln!(
        md,
        "## Table 2: logistic regression, synthetic MNIST-like 1 vs 7\n\n\
         MNIST cannot be downloaded here: spec 002 §5's generator draws 28×28 images of a \"1\" (one stroke) or a \"7\" (bar and diagonal), \
         N = {n} train + 2163 test, 784 pixels, no intercept, flat prior, seed {seed}.\n\
         Table 5's settings for MNIST-13k: K = {k}, random walk std {step}, m = {m}, θ₀ ~ U(0, 1)^784, one chain per method.\n\
         AustereMH(c): the conservative design search (Δ* = 0.1); AustereMH(nc): the per-iteration design (Δ* = 0.05), its full-data μ_std scan \
         counted in lik evals / iter but not in the batch size (as in the paper); MHSubLhd γ = 2, p = 2, δ = 0.01. \
         Test accuracy is that of the final sample.\n"
    );
    md.push_str("| method | iterations | avg final batch size | lik evals / iter | accept | test accuracy | seconds | paper Table 2 (MNIST-13k) |\n|---|---|---|---|---|---|---|---|\n");
    let mut rows: Vec<(&str, &str, LrRun, f64)> = Vec::new();
    eprintln!("MHminibatch: {iters} iterations");
    let r = run_lr(
        MinibatchMh::new(step, k, m, Correction::sigma_1()).map_err(internal)?,
        &model,
        &test,
        iters,
        seed,
    )?;
    rows.push(("MHminibatch", "mh-minibatch", r, 125.4));
    eprintln!("AustereMH(nc): {scan_iters} iterations");
    let r = run_lr(
        AustereMh::non_conservative(step, k, n, 0.05).map_err(internal)?,
        &model,
        &test,
        scan_iters,
        seed,
    )?;
    rows.push(("AustereMH(nc)", "austere-mh", r, 973.8));
    let c = AustereMh::conservative(step, k, n, 0.1).map_err(internal)?;
    let design = (c.batch_step, c.epsilon);
    eprintln!(
        "AustereMH(c) (m = {}, ε = {}): {iters} iterations",
        design.0, design.1
    );
    let r = run_lr(c, &model, &test, iters, seed)?;
    rows.push(("AustereMH(c)", "austere-mh", r, 1924.3));
    eprintln!("MHSubLhd: {scan_iters} iterations");
    let r = run_lr(
        MhSubLhd::new(step, k, m, 2.0, 0.01, 2.0).map_err(internal)?,
        &model,
        &test,
        scan_iters,
        seed,
    )?;
    rows.push(("MHSubLhd", "mh-sublhd", r, 10783.4));
    for (label, sampler, r, paper) in &rows {
        let _ = writeln!(
            md,
            "| {label} | {} | {} | {} | {} | {} | {} | {} |",
            r.iters,
            fmt(r.avg_batch),
            fmt(r.evals_per_iter),
            fmt(r.accept),
            fmt(r.accuracy),
            fmt(r.seconds),
            fmt(*paper)
        );
        let _ = writeln!(
            csv,
            "logistic-1v7,{label},{sampler},{n},{k},{},{},{},{},{},{},{paper},{}",
            r.iters,
            r.avg_batch,
            r.avg_batch / n as f64,
            r.evals_per_iter,
            r.accept,
            r.accuracy,
            r.seconds
        );
    }
    let b0 = rows[0].2.avg_batch;
    let _ = writeln!(
        md,
        "\nAustereMH(c)'s searched design: m = {}, ε = {} (Table 5: m = 450, ε = 0.01). \
         Ratios to MHminibatch: AustereMH(nc) {:.1}× (paper 7.8×), AustereMH(c) {:.1}× (paper 15.3×), MHSubLhd {:.1}× (paper 86×).\n\
         Paper Table 2, MNIST-13k (10 trials × 5000): MHminibatch 125.4 ± 9.2, AustereMH(nc) 973.8 ± 49.8, AustereMH(c) 1924.3 ± 52.4, MHSubLhd 10783.4 ± 78.9.",
        design.0,
        design.1,
        rows[1].2.avg_batch / b0,
        rows[2].2.avg_batch / b0,
        rows[3].2.avg_batch / b0
    );
    Ok(())
}
