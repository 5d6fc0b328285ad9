//! Spec 000 (HMC-ECS) Test 2: perturbed HMC-ECS matches full-data HMC (n = 50 000, d = 8), and
//! variant 2b (first-order control variates).
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_perturbed:: -- --nocapture`

use crate::hmcecs_common::*;
use std::sync::Arc;
use tallmc_core::model::DataModel;

const N: usize = 50_000;
const D: usize = 8;
const R: usize = 10_000;
/// Reference draws (full-data HMC; IF ≈ 2.2, so MCSE of a mean ≈ 0.023 sd).
const R_REF: usize = 4_000;

fn check(order: usize, min_u_accept: f64) {
    let (glm, _) = logistic_data(N, D, 2024);
    let rf = logistic_reference(&glm, 2024, R_REF);
    let (ref_mean, ref_sd, ref_acc, ref_if) = (rf.mean, rf.sd, rf.accept, rf.mean_if);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let order_s = format!("order={order}");
    let run = run_ecs(
        model.clone(),
        false,
        &["m=500", "G=100", "eps=0.2", "L=6", &order_s],
        1000,
        R,
        7,
    );
    let mut max_dm: f64 = 0.0;
    let mut sd_lo: f64 = f64::INFINITY;
    let mut sd_hi: f64 = 0.0;
    let mut ifs = 0.0;
    for j in 0..D {
        let c = column(&run.draws, j);
        let (m, v) = mean_var(&c);
        max_dm = max_dm.max((m - ref_mean[j]).abs() / ref_sd[j]);
        let r = v.sqrt() / ref_sd[j];
        sd_lo = sd_lo.min(r);
        sd_hi = sd_hi.max(r);
        ifs += inefficiency(&c) / D as f64;
    }
    let med_s2 = median(&run.extra0);
    let mean_s2 = run.extra0.iter().sum::<f64>() / R as f64;
    println!(
        "order {order}: reference HMC acc {ref_acc:.3} IF {ref_if:.2} | HMC-ECS α_θ {:.3} α_u {:.3} \
         IF {ifs:.2} σ̂² median {med_s2:.2e} mean {mean_s2:.2e} | max|Δmean|/sd {max_dm:.3} \
         sd ratio [{sd_lo:.3}, {sd_hi:.3}] | evals/iter mean {:.0} max {} (bound {}), warm-up+setup {}",
        run.accept,
        run.u_accept,
        run.mean_evals,
        run.max_evals,
        7 * 500 + 5,
        run.warm_evals
    );
    assert!(max_dm <= 0.15, "max |Δmean|/sd = {max_dm}");
    assert!(sd_lo >= 0.9 && sd_hi <= 1.1, "sd ratios [{sd_lo}, {sd_hi}]");
    assert!(run.accept >= 0.95, "θ acceptance {}", run.accept);
    assert!(
        run.u_accept >= min_u_accept,
        "u acceptance {}",
        run.u_accept
    );
    assert!((1.7..=2.8).contains(&ifs), "IF {ifs}");
    assert!(
        (ifs / ref_if - 1.0).abs() <= 0.25,
        "IF {ifs} vs reference {ref_if}"
    );
    // no full-data work after warm-up: (L+1)·m + m/G per iteration at most
    assert!(run.max_evals <= 7 * 500 + 5);
}

#[test]
fn second_order_matches_full_hmc() {
    check(2, 0.95);
}

#[test]
fn first_order_matches_full_hmc() {
    check(1, 0.9);
}

/// No settings at all: subset-mode centre, recentring, automatic m, dual averaging (δ = 0.8).
#[test]
fn defaults_need_no_tuning() {
    let (glm, _) = logistic_data(N, D, 2024);
    let rf = logistic_reference(&glm, 2024, R_REF);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let run = run_ecs(model, false, &[], 1000, 4_000, 8);
    let mut max_dm: f64 = 0.0;
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for j in 0..D {
        let (m, v) = mean_var(&column(&run.draws, j));
        max_dm = max_dm.max((m - rf.mean[j]).abs() / rf.sd[j]);
        lo = lo.min(v.sqrt() / rf.sd[j]);
        hi = hi.max(v.sqrt() / rf.sd[j]);
    }
    println!(
        "defaults: ε {:.3}, L {}, α_θ {:.3}, α_u {:.3}, σ̂² median {:.2e}, evals/iter {:.0}, \
         warm-up+setup evals {} ({:.1} full passes), max|Δmean|/sd {max_dm:.3}, sd ratio [{lo:.3}, {hi:.3}]",
        run.eps,
        run.n_leapfrog,
        run.accept,
        run.u_accept,
        median(&run.extra0),
        run.mean_evals,
        run.warm_evals,
        run.warm_evals as f64 / N as f64
    );
    assert!(max_dm <= 0.15 && lo >= 0.9 && hi <= 1.1);
    assert!(run.accept >= 0.6, "α_θ {}", run.accept);
    assert!(run.u_accept >= 0.9, "α_u {}", run.u_accept);
    // no full-data work after warm-up
    assert!(run.max_evals < N as u64 / 2);
}

/// The θ-step by NUTS on the same fixed-u Hamiltonian (`trajectory=nuts`), otherwise defaults.
#[test]
fn nuts_trajectory_matches_full_hmc() {
    let (glm, _) = logistic_data(N, D, 2024);
    let rf = logistic_reference(&glm, 2024, R_REF);
    let model: Arc<dyn DataModel> = Arc::new(glm);
    let run = run_ecs(model, false, &["trajectory=nuts"], 1000, 4_000, 9);
    let mut max_dm: f64 = 0.0;
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    let mut ifs = 0.0;
    for j in 0..D {
        let c = column(&run.draws, j);
        let (m, v) = mean_var(&c);
        max_dm = max_dm.max((m - rf.mean[j]).abs() / rf.sd[j]);
        lo = lo.min(v.sqrt() / rf.sd[j]);
        hi = hi.max(v.sqrt() / rf.sd[j]);
        ifs += inefficiency(&c) / D as f64;
    }
    println!(
        "nuts: ε {:.3}, mean accept stat {:.3}, α_u {:.3}, IF {ifs:.2}, evals/iter {:.0}, \
         max|Δmean|/sd {max_dm:.3}, sd ratio [{lo:.3}, {hi:.3}]",
        run.eps, run.accept, run.u_accept, run.mean_evals
    );
    assert!(max_dm <= 0.15 && lo >= 0.9 && hi <= 1.1);
    assert!(run.u_accept >= 0.9, "α_u {}", run.u_accept);
}
