//! Benchmark (not a test of correctness; timings never decide a test): the per-iteration cost
//! of `pf-sgld` does not depend on the series length T. Runs the same chain (S = 40, B = 10,
//! N = 100) on synthetic LGSSM series of T = 10⁴ and T = 10⁶ in one process and prints the
//! per-datum evaluations per iteration (N·|S*| observation densities, N·|S| scores) and the
//! wall time per iteration, with their ratio.
//! Run: `cargo test -p tallmc-tests --release --test all ssm_bench:: -- --ignored --nocapture`.

use std::time::Instant;
use tallmc_core::chain::run_chain;
use tallmc_core::data::DesignSpec;
use tallmc_core::registry::{build_chain, build_model, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::simulate::simulate;

#[test]
#[ignore]
fn pf_sgld_cost_is_independent_of_t() {
    let iters = 2000;
    let mut per_iter = Vec::new();
    for t in [10_000usize, 1_000_000] {
        let table = simulate("lgssm", t, 1, 1, &Settings::new()).unwrap();
        let spec = DesignSpec {
            response: "y".into(),
            features: None,
            intercept: false,
            standardize: false,
        };
        let model = build_model("lgssm", &table, &spec, &Settings::new()).unwrap();
        let mut s = Settings::new();
        for p in ["particles=100", "subseq_len=40", "buffer=10"] {
            s.insert_pair(p).unwrap();
        }
        let config = ChainConfig {
            sampler: "pf-sgld",
            warmup: 0,
            settings: &s,
        };
        let mut rng = chain_rng(1, 0);
        let mut chain = build_chain(&config, model, &mut rng).unwrap();
        let t0 = Instant::now();
        let (cost, _) = run_chain(chain.as_mut(), &mut rng, iters, |_, _, _, _| {});
        let secs = t0.elapsed().as_secs_f64() / iters as f64;
        let lik = cost.lik_evals as f64 / iters as f64;
        let grad = cost.grad_evals as f64 / iters as f64;
        println!(
            "T = {t:>8}: {lik:.1} observation densities/iter, {grad:.1} scores/iter, {:.1} µs/iter",
            secs * 1e6
        );
        per_iter.push((lik, secs));
    }
    println!(
        "ratio T=10^6 / T=10^4: evaluations {:.4}, wall time {:.3}",
        per_iter[1].0 / per_iter[0].0,
        per_iter[1].1 / per_iter[0].1
    );
    // evaluations per iteration are (S + 2B)·N except at the series' edges
    assert!((per_iter[1].0 / per_iter[0].0 - 1.0).abs() < 0.01);
}
