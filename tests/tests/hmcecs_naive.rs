//! Spec 000 (HMC-ECS) Test 6, the energy-conservation contrast: the naive scheme (`energy=full`:
//! a fresh subsample u each iteration, the same fixed-u leapfrog trajectory, accepted with the
//! full-data Hamiltonian) is exact but loses acceptance when the estimator is crude, while HMC-ECS
//! (accepted with the estimated Hamiltonian that the trajectory conserves) keeps it.
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_naive:: -- --nocapture`

use crate::hmcecs_common::*;
use std::sync::Arc;
use tallmc_core::model::DataModel;

/// The naive scheme targets the exact posterior: its means agree with full-data HMC within
/// 4 combined MCSE (each from the chain's own inefficiency factor).
#[test]
fn naive_scheme_is_exact() {
    const N: usize = 5_000;
    const D: usize = 5;
    const R: usize = 4_000;
    let (glm, _) = logistic_data(N, D, 31);
    let rf = logistic_reference(&glm, 31, R);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let run = run_ecs(
        model,
        false,
        &["energy=full", "m=200", "eps=0.2", "L=6"],
        500,
        R,
        5,
    );
    let mut worst: f64 = 0.0;
    for j in 0..D {
        let c = column(&run.draws, j);
        let (m, v) = mean_var(&c);
        let mcse = (v * inefficiency(&c).max(1.0) / R as f64).sqrt();
        let mcse_ref = rf.sd[j] * (rf.mean_if.max(1.0) / R as f64).sqrt();
        let z = (m - rf.mean[j]) / (mcse * mcse + mcse_ref * mcse_ref).sqrt();
        worst = worst.max(z.abs());
        println!(
            "θ{j}: naive {m:.5} ± {mcse:.5}, reference {:.5} ± {mcse_ref:.5}, z {z:.2}, sd ratio {:.3}",
            rf.mean[j],
            v.sqrt() / rf.sd[j]
        );
    }
    println!(
        "naive acceptance {:.3}, evaluations per iteration {:.0} (2n = {})",
        run.accept,
        run.mean_evals,
        2 * N
    );
    assert!(worst <= 4.0, "largest |z| {worst}");
    // The full-data accept step costs 2n likelihood evaluations per iteration.
    assert!(run.mean_evals >= 2.0 * N as f64, "{}", run.mean_evals);
}

/// With a crude estimator (no control variates, m = 200) at the same ε and L, HMC-ECS's
/// θ-acceptance stays high and the naive scheme's falls by at least 0.2 (d = 32, as the spec says).
#[test]
fn energy_conservation_keeps_acceptance() {
    const N: usize = 5_000;
    const D: usize = 32;
    let (glm, _) = logistic_data(N, D, 32);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let settings = ["order=0", "m=200", "eps=0.2", "L=6"];
    let ecs = run_ecs(model.clone(), false, &settings, 500, 1_000, 6);
    let mut naive_settings = settings.to_vec();
    naive_settings.push("energy=full");
    let naive = run_ecs(model, false, &naive_settings, 500, 1_000, 6);
    println!(
        "acceptance: HMC-ECS {:.3} (u-step {:.3}, mean σ̂² {:.1}), naive {:.3}",
        ecs.accept,
        ecs.u_accept,
        ecs.extra0.iter().sum::<f64>() / ecs.extra0.len() as f64,
        naive.accept
    );
    assert!(
        ecs.accept - naive.accept >= 0.2,
        "HMC-ECS {} vs naive {}",
        ecs.accept,
        naive.accept
    );
}

/// The `refreshed_block` extra (the playground's "refreshed blocks" view): each iteration it is
/// the index g ∈ 0..G of the block of u the u-step replaced, or −1 when the refresh was rejected.
/// So its values are integers in {−1} ∪ 0..G, the refreshed fraction matches the mean u-step
/// acceptance probability (binomial, 4 SE), and every block gets refreshed. The naive scheme has
/// no block u-step, so it does not report the extra.
#[test]
fn refreshed_block_extra_reports_the_u_step() {
    use tallmc_core::chain::{run_chain, Chain, Phase};
    use tallmc_core::sampler::hmcecs::{EcsChain, EcsConfig};
    use tallmc_core::settings::Settings;
    let (glm, _) = logistic_data(2_000, 3, 7);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let build = |kv: &[&str], rng: &mut tallmc_core::rng::ChainRng| {
        let mut s = Settings::new();
        for p in kv {
            s.insert_pair(p).unwrap();
        }
        let cfg = EcsConfig::from_settings(&s, false).unwrap();
        EcsChain::new(model.clone(), cfg, 200, rng).unwrap()
    };
    let mut rng = tallmc_core::rng::chain_rng(3, 0);
    // First-order control variates with m = 40 make the u-step reject about 8% of refreshes.
    let mut chain = build(&["m=40", "G=4", "order=1"], &mut rng);
    let names = chain.extra_names();
    let ix = names.iter().position(|n| *n == "refreshed_block").unwrap();
    let g_blocks = chain
        .resolved()
        .iter()
        .find(|(k, _)| *k == "G")
        .map(|(_, v)| *v as usize)
        .unwrap();
    let (mut refreshed, mut p_sum, mut k) = (0usize, 0.0, 0usize);
    let mut seen = vec![false; g_blocks];
    run_chain(&mut chain, &mut rng, 2_000, |ph, _, _, info| {
        if ph != Phase::Sampling {
            return;
        }
        let b = info.extra[ix];
        assert!(
            b == -1.0 || (b >= 0.0 && b.fract() == 0.0 && (b as usize) < g_blocks),
            "{b}"
        );
        if b >= 0.0 {
            refreshed += 1;
            seen[b as usize] = true;
        }
        p_sum += info.extra[1];
        k += 1;
    });
    let frac = refreshed as f64 / k as f64;
    let p = p_sum / k as f64;
    let se = (p * (1.0 - p) / k as f64).sqrt();
    println!("refreshed fraction {frac:.4}, mean u-accept {p:.4} ± {se:.4}, G = {g_blocks}");
    assert!((frac - p).abs() < 4.0 * se + 1e-12, "{frac} vs {p} ± {se}");
    assert!(seen.iter().all(|s| *s), "blocks never refreshed: {seen:?}");
    let naive = build(&["energy=full", "m=100"], &mut rng);
    assert!(!naive.extra_names().contains(&"refreshed_block"));
}
