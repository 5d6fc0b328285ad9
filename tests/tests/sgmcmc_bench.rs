//! Benchmark (not a test of correctness; timings never decide a test): per-iteration cost of
//! `sgld` and `sgld-cv` with batch 100 against one full-data gradient, on a logistic regression
//! with n = 10⁶ and d = 10 (intercept + 9 N(0, 1) features). Reports, from one run, the ratio of
//! per-datum gradient evaluations (exact: n/m = 10⁴ for SGLD and for SGLD-CV, which stores
//! ∇ℓᵢ(θ̂) at set-up, spec 003 §2.3 step 2) and the ratio of wall times (full gradient
//! averaged over 20 evaluations; SG steps averaged over 20 000 iterations, set-up excluded and
//! reported separately).
//! Run: `cargo test -p tallmc-tests --release --test all sgmcmc_bench:: -- --ignored --nocapture`
//! (SGMCMC_BENCH_N overrides n).

use std::sync::Arc;
use std::time::Instant;
use tallmc_core::dist;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, Glm, Logistic};
use tallmc_core::registry::{build_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_tests::*;

#[test]
#[ignore]
fn per_iteration_cost_vs_full_gradient() {
    let n: usize = std::env::var("SGMCMC_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let d = 10;
    let batch = 100;
    let mut rng = chain_rng(1, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta: Vec<f64> = (0..d).map(|j| 0.5 - 0.1 * j as f64).collect();
    for i in 0..n {
        let p = 1.0 / (1.0 + (-linear_predictor(&design, &beta, i)).exp());
        design.y[i] = if dist::bernoulli(&mut rng, p) {
            1.0
        } else {
            0.0
        };
    }
    let model: Arc<dyn DataModel> =
        Arc::new(Glm::new(design, Logistic, Prior::Normal { scale: 10.0 }));

    // Full-data gradient ∇ log π at a fixed θ.
    let theta = beta.clone();
    let reps = 20;
    let t0 = Instant::now();
    let mut g = vec![0.0; d];
    let mut sink = 0.0;
    for _ in 0..reps {
        g.iter_mut().for_each(|v| *v = 0.0);
        model.log_prior_grad(&theta, &mut g);
        model.log_lik_grad_all(&theta, &mut g);
        sink += g[0];
    }
    let full_secs = t0.elapsed().as_secs_f64() / reps as f64;
    println!(
        "n = {n}, d = {d}: full-data gradient {:.3} ms, {n} per-datum gradient evaluations (checksum {sink:.3e})",
        1e3 * full_secs
    );

    for sampler in ["sgld", "sgld-cv"] {
        let mut s = Settings::new();
        s.insert("batch_size", &batch.to_string());
        let config = ChainConfig {
            sampler,
            warmup: 0,
            settings: &s,
        };
        let mut rng = chain_rng(2, 0);
        let t_setup = Instant::now();
        let mut chain = build_chain(&config, model.clone(), &mut rng).expect("chain");
        let setup_secs = t_setup.elapsed().as_secs_f64();
        let iters = 20_000;
        let t = Instant::now();
        let mut evals = 0u64;
        for _ in 0..iters {
            evals += chain.step(&mut rng).grad_evals;
        }
        let step_secs = t.elapsed().as_secs_f64() / iters as f64;
        let per_iter = evals as f64 / iters as f64;
        println!(
            "{sampler}: {per_iter:.0} gradient evaluations / iteration, {:.2} µs / iteration; \
             full gradient / iteration: evaluations ×{:.0}, wall time ×{:.0}; \
             set-up {:.2} s ({:.1} full passes: mode + centre and stored ∇ℓᵢ(θ̂))",
            1e6 * step_secs,
            n as f64 / per_iter,
            full_secs / step_secs,
            setup_secs,
            chain.setup_cost().full_passes(n)
        );
        assert!(chain.position().iter().all(|v| v.is_finite()));
    }
}
