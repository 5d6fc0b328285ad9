//! Spec 000 (HMC-ECS) Test 6, the energy-conservation contrast: the naive scheme (`energy=full`:
//! a fresh subsample u each iteration, the same fixed-u leapfrog trajectory, accepted with the
//! full-data Hamiltonian) is exact but loses acceptance when the estimator is crude, while HMC-ECS
//! (accepted with the estimated Hamiltonian that the trajectory conserves) keeps it.
//! Run: `cargo test -p tallmc-tests --release --test hmcecs_naive -- --nocapture`

mod hmcecs_common;
use hmcecs_common::*;
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
