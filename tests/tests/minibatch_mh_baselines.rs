//! The baselines `austere-mh` and `mh-sublhd` (spec 002 §2.9–2.10): the Student-t tail, the
//! 1-D Gaussian posterior N(x̄, K/N) within 4 MCSE (their approximation error is far below it at
//! these settings), and T4's batch-size comparison on the Welling–Teh mixture at the paper's
//! scale (N = 10⁶, K = 10⁴, std 0.15 random walk from (0.5, 0), 3000 iterations): MHminibatch
//! uses ≥ 50× fewer points per test than AustereMH(c) (m = 50, ε = 0.005). MHSubLhd at that
//! scale is an `#[ignore]`d test (a full data scan per iteration).

use crate::minibatch_mh_common::GaussMean;
use std::sync::Arc;
use tallmc_core::dist::std_normal;
use tallmc_core::kernel::minibatch_mh::baselines::student_t_upper;
use tallmc_core::model::{DataModel, Gmm};
use tallmc_core::rng::chain_rng;
use tallmc_tests::*;

#[test]
fn student_t_tail() {
    // Cauchy (ν = 1): 1 − F(1) = 1/4; ν = 2: 1 − F(t) = ½(1 − t/√(2 + t²)).
    assert!((student_t_upper(1.0, 1.0) - 0.25).abs() < 1e-12);
    for &t in &[0.0, 0.5, 1.7, 4.0, 30.0] {
        let exact = 0.5 * (1.0 - t / (2.0f64 + t * t).sqrt());
        assert!((student_t_upper(t, 2.0) - exact).abs() < 1e-12, "t = {t}");
        assert!((student_t_upper(-t, 2.0) - exact).abs() < 1e-12);
    }
    // Large ν approaches the normal tail.
    let z = 1.96;
    let normal = 1.0 - tallmc_core::math::norm_cdf(z);
    assert!((student_t_upper(z, 1e7) - normal).abs() < 1e-6);
}

fn gaussian(sampler: &str, extra: &[&str], n: usize, k: f64, iters: usize) -> f64 {
    let mut rng = chain_rng(5005, 0);
    let x: Vec<f64> = (0..n).map(|_| std_normal(&mut rng)).collect();
    let xbar = mean(&x);
    let target_var = k / n as f64;
    let step = (target_var.sqrt()).to_string();
    let kk = k.to_string();
    let mut s = vec!["init=zero", "step_size", "temperature"];
    let st = format!("step_size={step}");
    let tt = format!("temperature={kk}");
    s[1] = &st;
    s[2] = &tt;
    s.extend_from_slice(extra);
    let run = run_sampler(sampler, Arc::new(GaussMean { x }), &s, 1, 500, iters);
    let th = run.col(0);
    let sq: Vec<f64> = th.iter().map(|t| (t - xbar) * (t - xbar)).collect();
    let b_avg = run.stats.iter().map(|s| s.extra[0]).sum::<f64>() / iters as f64;
    let evals: u64 = run.stats.iter().map(|s| s.lik_evals).sum();
    println!(
        "{sampler}: mean − x̄ = {:.4} (MCSE {:.4}), var ratio {:.3} (MCSE {:.3}), avg b {b_avg:.1}, \
         acceptance {:.3}, lik evals / iteration {:.0}",
        mean(&th) - xbar,
        mcse_mean(&th),
        mean(&sq) / target_var,
        mcse_mean(&sq) / target_var,
        run.stats.iter().filter(|s| s.accepted).count() as f64 / iters as f64,
        evals as f64 / iters as f64
    );
    assert!((mean(&th) - xbar).abs() < 4.0 * mcse_mean(&th));
    assert!((mean(&sq) - target_var).abs() < 4.0 * mcse_mean(&sq));
    b_avg
}

#[test]
fn austere_gaussian() {
    gaussian(
        "austere-mh",
        &["batch_step=50", "epsilon=0.005"],
        100_000,
        1000.0,
        20_000,
    );
}

#[test]
fn sublhd_gaussian() {
    gaussian("mh-sublhd", &["batch_step=50"], 10_000, 100.0, 5_000);
}

fn gmm_batch(sampler: &str, extra: &[&str], iters: usize) -> f64 {
    // The paper's scale: N = 10⁶, K = 10⁴ (N/K = 100), start (0.5, 0), std-0.15 random walk.
    let mut rng = chain_rng(4004, 1);
    let x: Vec<f64> = (0..1_000_000)
        .map(|_| {
            let c = if tallmc_core::rng::uniform(&mut rng) < 0.5 {
                0.0
            } else {
                1.0
            };
            c + 2f64.sqrt() * std_normal(&mut rng)
        })
        .collect();
    let model: Arc<dyn DataModel> = Arc::new(Gmm::welling_teh(x).unwrap());
    let kernel_settings = [
        "step_size=0.15",
        "temperature=10000",
        "init=model",
        "batch_step=50",
    ];
    let mut s = kernel_settings.to_vec();
    s.extend_from_slice(extra);
    // `init=model`: Gmm's own starting point is the paper's (0.5, 0).
    let run = run_sampler(sampler, model, &s, 7, 0, iters);
    let b: Vec<f64> = run.stats.iter().map(|s| s.extra[0]).collect();
    let mut sorted = b.clone();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let acc = run.stats.iter().filter(|s| s.accepted).count() as f64 / iters as f64;
    println!(
        "{sampler}: average b {:.1}, median {}, p99 {}, max {}, acceptance {acc:.3}",
        mean(&b),
        sorted[iters / 2],
        sorted[iters * 99 / 100],
        sorted[iters - 1]
    );
    mean(&b)
}

/// T4 batch sizes at the paper's scale. Spec ranges: MHminibatch [120, 260] (paper 182.3),
/// AustereMH(c) (m = 50, ε = 0.005) [8 000, 30 000] (paper 13 540); the issue asks for ≥ 50×.
#[test]
fn gmm_batch_sizes() {
    let mb = gmm_batch("mh-minibatch", &[], 3000);
    let au = gmm_batch("austere-mh", &["epsilon=0.005"], 3000);
    println!("ratio AustereMH(c) / MHminibatch = {:.1}", au / mb);
    assert!((120.0..=260.0).contains(&mb), "MHminibatch {mb}");
    assert!((8000.0..=30000.0).contains(&au), "AustereMH {au}");
    assert!(au / mb >= 50.0);
}

/// MHSubLhd (γ = 1.5, p = 2, δ = 0.01) at the paper's scale: spec range [40 000, 100 000]
/// (paper 65 759) and ≥ 200× MHminibatch. Every iteration scans all 10⁶ data for the range C,
/// so this takes minutes: `cargo test --release --test all minibatch_mh_baselines:: -- --ignored`.
#[test]
#[ignore]
fn gmm_batch_sizes_sublhd() {
    let mb = gmm_batch("mh-minibatch", &[], 3000);
    let sl = gmm_batch("mh-sublhd", &["gamma=1.5"], 1000);
    println!("ratio MHSubLhd / MHminibatch = {:.1}", sl / mb);
    assert!((40_000.0..=100_000.0).contains(&sl), "MHSubLhd {sl}");
    assert!(sl / mb >= 200.0);
}

/// AustereMH's two searched designs on the 1-D Gaussian posterior N(x̄, K/N): the
/// conservative design (one search at μ_std = 0, Δ* = 0.1) and the per-iteration design
/// (Δ* = 0.05, a full scan per iteration for μ_std). Both within 4 MCSE of the exact answer.
#[test]
fn austere_designs_gaussian() {
    let bc = gaussian(
        "austere-mh",
        &["design=conservative", "error_bound=0.1"],
        20_000,
        200.0,
        10_000,
    );
    let bn = gaussian(
        "austere-mh",
        &["design=nonconservative", "error_bound=0.05"],
        2_000,
        20.0,
        10_000,
    );
    println!("average batch: conservative {bc:.1}, non-conservative {bn:.1}");
}

/// The design settings: the conservative search reports its (m, ε) through `resolved()`;
/// settings that the chosen design ignores are refused.
#[test]
fn austere_design_settings() {
    use tallmc_core::registry::{build_chain, ChainConfig};
    use tallmc_core::settings::Settings;
    let mut rng = chain_rng(3, 0);
    let x: Vec<f64> = (0..13_000).map(|_| std_normal(&mut rng)).collect();
    let model: Arc<dyn DataModel> = Arc::new(GaussMean { x });
    let build = |kv: &[&str]| {
        let mut s = Settings::new();
        for p in kv {
            s.insert_pair(p).unwrap();
        }
        let config = ChainConfig {
            sampler: "austere-mh",
            warmup: 0,
            settings: &s,
        };
        let mut rng = chain_rng(3, 0);
        build_chain(&config, model.clone(), &mut rng)
    };
    let c = build(&["design=conservative", "error_bound=0.1", "init=zero"]).unwrap();
    let r = c.resolved();
    println!("conservative design at N = 13 000: {r:?}");
    let get = |k: &str| r.iter().find(|(n, _)| *n == k).map(|p| p.1);
    assert_eq!(get("batch_step"), Some(450.0));
    assert_eq!(get("epsilon"), Some(0.01));
    assert!(build(&["design=nonconservative", "init=zero"]).is_ok());
    for (kv, key) in [
        (&["design=conservative", "epsilon=0.01"][..], "epsilon"),
        (
            &["design=nonconservative", "batch_step=100"][..],
            "batch_step",
        ),
        (&["error_bound=0.1"][..], "error_bound"),
        (
            &["design=conservative", "error_bound=0.7"][..],
            "error_bound",
        ),
        (&["design=sometimes"][..], "design"),
    ] {
        let e = build(kv).err().expect("refused").to_string();
        assert!(e.contains(key), "{kv:?}: {e}");
    }
}
