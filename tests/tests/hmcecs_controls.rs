//! Spec 000 (HMC-ECS) Test 3: negative controls. A poor fixed centre with a small m shows
//! σ̂² > 1 and a bias that shrinks with m; zeroth-order control variates collapse the u-step.
//!
//! Deviation from the spec, calibrated once (not per seed): with our 1%-subset centre the bias
//! at m = 100 is only ≈ 0.09 sd (the numpy prototype saw 0.57), too close to the m = 1600 run
//! (≈ 0.08) to separate by MCSE (≈ 0.03). The bias comparison therefore uses m = 25 (G = 25),
//! where it is ≈ 0.4 sd; σ̂² > 1 is still asserted at m = 100 as the spec says.
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_controls:: -- --nocapture`

use crate::hmcecs_common::*;
use std::sync::Arc;
use tallmc_core::model::DataModel;

const N: usize = 50_000;
const D: usize = 8;

fn max_bias(run: &EcsRun, rf: &Reference) -> f64 {
    (0..D)
        .map(|j| {
            let (m, _) = mean_var(&column(&run.draws, j));
            (m - rf.mean[j]).abs() / rf.sd[j]
        })
        .fold(0.0, f64::max)
}

#[test]
fn a_poor_fixed_centre_small_m_is_biased() {
    let (glm, _) = logistic_data(N, D, 2024);
    let rf = logistic_reference(&glm, 2024, 4_000);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let fixed = ["recentre=false", "order=2", "eps=0.2", "L=6"];
    let run = |m: usize, g: usize| {
        let (ms, gs) = (format!("m={m}"), format!("G={g}"));
        let mut s = fixed.to_vec();
        s.push(&ms);
        s.push(&gs);
        // same seed: the same 1%-subset centre in every run
        run_ecs(model.clone(), false, &s, 500, 4_000, 3)
    };
    let (r25, r100, r1600) = (run(25, 25), run(100, 100), run(1600, 100));
    for (m, r) in [(25, &r25), (100, &r100), (1600, &r1600)] {
        println!(
            "fixed subset-mode centre, m = {m}: σ̂² median {:.3}, α_θ {:.3}, α_u {:.3}, max|Δmean|/sd {:.3}",
            median(&r.extra0),
            r.accept,
            r.u_accept,
            max_bias(r, &rf)
        );
    }
    let s100 = median(&r100.extra0);
    let (b25, b1600) = (max_bias(&r25, &rf), max_bias(&r1600, &rf));
    assert!(s100 > 1.0, "median σ̂² at m = 100: {s100}");
    assert!(
        b25 > 0.15,
        "m = 25 should show a bias beyond Test 2's tolerance: {b25}"
    );
    assert!(b25 > b1600, "bias m=25 {b25} vs m=1600 {b1600}");
}

#[test]
fn b_zeroth_order_control_variates_collapse_u_acceptance() {
    let (glm, _) = logistic_data(N, D, 2024);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let run = run_ecs(
        model,
        false,
        &[
            "recentre=false",
            "order=0",
            "m=5000",
            "G=100",
            "eps=0.2",
            "L=6",
        ],
        200,
        1_000,
        4,
    );
    let s2 = median(&run.extra0);
    println!(
        "order 0, m = 5000: α_u {:.3}, σ̂² median {s2:.1}, α_θ {:.3}",
        run.u_accept, run.accept
    );
    assert!(run.u_accept < 0.5, "α_u {}", run.u_accept);
    assert!(s2 > 10.0, "median σ̂² {s2}");
}
