//! Benchmark (not a test of correctness; timings never decide a test): ESS per second of
//! perturbed HMC-ECS against full-data NUTS on a HIGGS-like synthetic logistic regression
//! (d = 29: intercept + 28 N(0,1) covariates). Wall time includes warm-up and setup for both.
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_bench:: -- --ignored --nocapture`
//! (n = 10^5; set HMCECS_BENCH_N=1000000 for the full size).

use crate::hmcecs_common::*;
use std::sync::Arc;
use std::time::Instant;
use tallmc_core::chain::{run_chain, Phase};
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;

fn run(
    model: Arc<dyn DataModel>,
    sampler: &str,
    kv: &[&str],
    warmup: usize,
    draws: usize,
) -> (Vec<Vec<f64>>, f64, f64, f64) {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    let mut rng = chain_rng(1, 0);
    let t0 = Instant::now();
    let mut chain = build_chain(&config, model, &mut rng).unwrap();
    let mut out = Vec::new();
    let mut acc = 0.0;
    let (samp, _) = run_chain(&mut *chain, &mut rng, draws, |ph, _, th, info| {
        if ph == Phase::Sampling {
            out.push(th.to_vec());
            acc += info.accept_prob / draws as f64;
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    (
        out,
        secs,
        acc,
        samp.lik_evals.max(samp.grad_evals) as f64 / draws as f64,
    )
}

#[test]
#[ignore]
fn ess_per_second_vs_full_nuts() {
    let n: usize = std::env::var("HMCECS_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let d = 29;
    let (glm, _) = logistic_data(n, d, 29);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let stats = |name: &str, draws: &[Vec<f64>], secs: f64, acc: f64, evals: f64| {
        let ifs: Vec<f64> = (0..d).map(|j| inefficiency(&column(draws, j))).collect();
        let mean_if = ifs.iter().sum::<f64>() / d as f64;
        let ess = draws.len() as f64 / mean_if;
        println!(
            "{name}: {} draws in {secs:.1} s, accept {acc:.3}, mean IF {mean_if:.2}, ESS {ess:.0}, \
             ESS/s {:.1}, evals/iter {evals:.0} ({:.4}% of n)",
            draws.len(),
            ess / secs,
            100.0 * evals / n as f64
        );
        (
            ess / secs,
            draws.iter().fold(vec![0.0; d], |mut m, t| {
                for j in 0..d {
                    m[j] += t[j] / draws.len() as f64;
                }
                m
            }),
        )
    };
    let (de, se, ae, ee) = run(model.clone(), "hmc-ecs", &[], 1000, 2000);
    let (ecs_rate, ecs_mean) = stats("hmc-ecs (defaults)", &de, se, ae, ee);
    let (dn, sn, an, en) = run(
        model.clone(),
        "nuts",
        &["metric=dense", "init=zero"],
        300,
        300,
    );
    let (nuts_rate, nuts_mean) = stats("full-data nuts (dense metric)", &dn, sn, an, en);
    let sd: Vec<f64> = (0..d).map(|j| mean_var(&column(&dn, j)).1.sqrt()).collect();
    let dm = (0..d)
        .map(|j| (ecs_mean[j] - nuts_mean[j]).abs() / sd[j])
        .fold(0.0, f64::max);
    println!(
        "n = {n}: ESS/s ratio hmc-ecs / nuts = {:.1}; max |Δmean|/sd = {dm:.3}",
        ecs_rate / nuts_rate
    );
}
