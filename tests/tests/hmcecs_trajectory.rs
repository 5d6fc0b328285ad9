//! HMC-ECS's sampling trajectory with L automatic (DESIGN.md, departures: "000 §3 sampling
//! step (`traj_exact`)"): warm-up adapts ε̄ by dual averaging with L = round(T/ε), then sampling uses
//! L = ⌈T/ε̄⌉ and ε = T/L (`traj_exact`, the default), so that εL is T itself; with
//! `traj_exact=false` it keeps ε̄ and L = round(T/ε̄) (the paper's).
//!
//! - The two settings share warm-up (same seed, same draws until its end): the default's ε and
//!   L follow from the other's ε̄ by the rule, and ε ≤ ε̄.
//! - NUTS inside (`trajectory=nuts`) chooses its own length and keeps ε̄ either way.
//! - On a whitened logistic posterior (near N(0, I) in the metric) T = π/2 is a quarter period:
//!   an accepted θ-step is close to an independent draw, so each coordinate's lag-1
//!   autocorrelation is about the rejection rate, 1 − accept, and below the rounding's. Measured
//!   (seeds 4–6): at most 0.054, 0.041, 0.031 against a bound of 0.13; with `traj_exact=false`
//!   (ε̄ 0.716–0.765, L = 2, εL 1.43–1.53) the largest is 0.194, 0.112, 0.104, and the mean over
//!   coordinates is 0.05–0.15 higher than with the rule.
//! - `traj_exact` changes nothing where it does not apply: a fixed `L` or `eps`, no warm-up.
//!
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_trajectory:: -- --nocapture`

use crate::hmcecs_common::run_ecs;
use std::f64::consts::FRAC_PI_2;
use std::sync::Arc;
use tallmc_core::data::DesignSpec;
use tallmc_core::model::DataModel;
use tallmc_core::registry::build_model;
use tallmc_core::settings::Settings;

/// Raw-scale simulated logistic data (an intercept, simulate's defaults), whitened (the
/// default `reparam=auto`).
fn logistic(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    let table = tallmc_core::simulate::simulate("logistic", n, d, seed, &Settings::new()).unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    build_model("logistic", &table, &spec, &Settings::new()).unwrap()
}

/// Lag-1 autocorrelation of coordinate `k` of `draws`.
fn lag1(draws: &[Vec<f64>], k: usize) -> f64 {
    let n = draws.len() as f64;
    let mean = draws.iter().map(|x| x[k]).sum::<f64>() / n;
    let var = draws.iter().map(|x| (x[k] - mean).powi(2)).sum::<f64>() / n;
    let cov = draws
        .windows(2)
        .map(|w| (w[0][k] - mean) * (w[1][k] - mean))
        .sum::<f64>()
        / n;
    cov / var
}

#[test]
fn sampling_runs_the_whole_trajectory() {
    let model = logistic(20_000, 6, 7);
    for seed in [1u64, 2, 3] {
        let exact = run_ecs(model.clone(), false, &[], 500, 200, seed);
        let paper = run_ecs(model.clone(), false, &["traj_exact=false"], 500, 200, seed);
        let eps_bar = paper.eps;
        let want_l = (FRAC_PI_2 / eps_bar).ceil() as u32;
        println!(
            "seed {seed}: ε̄ = {eps_bar:.4}, L = {} (round); exact: ε = {:.4}, L = {}, εL = {:.6}",
            paper.n_leapfrog,
            exact.eps,
            exact.n_leapfrog,
            exact.eps * exact.n_leapfrog as f64
        );
        assert_eq!(
            paper.n_leapfrog,
            ((FRAC_PI_2 / eps_bar).round() as u32).max(1)
        );
        assert_eq!(exact.n_leapfrog, want_l.max(1));
        assert!(exact.eps <= eps_bar, "ε {} above ε̄ {eps_bar}", exact.eps);
        let t = exact.eps * exact.n_leapfrog as f64;
        assert!((t - FRAC_PI_2).abs() < 1e-12, "εL = {t}");
        // Shared warm-up: the same centre (it is only moved in warm-up).
        assert_eq!(exact.centre, paper.centre);
    }
    // The signed variant follows the rule too.
    let signed = run_ecs(model.clone(), true, &[], 500, 100, 1);
    let signed_paper = run_ecs(model, true, &["traj_exact=false"], 500, 100, 1);
    let l = (FRAC_PI_2 / signed_paper.eps).ceil() as u32;
    assert_eq!(signed.n_leapfrog, l.max(1));
    assert!((signed.eps * signed.n_leapfrog as f64 - FRAC_PI_2).abs() < 1e-12);
}

#[test]
fn nuts_inside_keeps_the_adapted_step() {
    let model = logistic(20_000, 6, 7);
    let exact = run_ecs(model.clone(), false, &["trajectory=nuts"], 300, 100, 1);
    let paper = run_ecs(
        model,
        false,
        &["trajectory=nuts", "traj_exact=false"],
        300,
        100,
        1,
    );
    assert_eq!(exact.eps, paper.eps);
    assert_eq!(exact.draws, paper.draws);
}

#[test]
fn a_quarter_period_gives_nearly_independent_draws() {
    let draws = 4_000;
    let model = logistic(20_000, 6, 8);
    let exact = run_ecs(model.clone(), false, &[], 1_000, draws, 4);
    let paper = run_ecs(model, false, &["traj_exact=false"], 1_000, draws, 4);
    let lags = |r: &crate::hmcecs_common::EcsRun| -> Vec<f64> {
        (0..r.draws[0].len()).map(|k| lag1(&r.draws, k)).collect()
    };
    let (rho, rho_paper) = (lags(&exact), lags(&paper));
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    // 1 − accept: a rejected θ-step repeats the draw; an accepted one is close to independent.
    // 4/√N: four standard errors of a lag-1 autocorrelation of independent draws.
    let bound = (1.0 - exact.accept) + 4.0 / (draws as f64).sqrt();
    println!(
        "traj_exact: ε = {:.4}, L = {}, accept {:.3}; lag-1 autocorrelations {rho:.3?} (bound \
         {bound:.3}, mean {:.3})",
        exact.eps,
        exact.n_leapfrog,
        exact.accept,
        mean(&rho)
    );
    println!(
        "traj_exact=false: ε = {:.4}, L = {}, εL = {:.3}, accept {:.3}; lag-1 autocorrelations \
         {rho_paper:.3?} (mean {:.3})",
        paper.eps,
        paper.n_leapfrog,
        paper.eps * paper.n_leapfrog as f64,
        paper.accept,
        mean(&rho_paper)
    );
    for (k, r) in rho.iter().enumerate() {
        assert!(
            r.abs() <= bound,
            "coordinate {k}: lag-1 autocorrelation {r:.3} > {bound:.3}"
        );
    }
    // The rule's gain over the rounding: the mean over coordinates of each run has a standard
    // error of about 1/√(6N) ≈ 0.007, so a gap of 0.03 is about three standard errors of the
    // difference.
    assert!(
        mean(&rho) < mean(&rho_paper) - 0.03,
        "mean lag-1 autocorrelation {:.3} with traj_exact, {:.3} without",
        mean(&rho),
        mean(&rho_paper)
    );
}

#[test]
fn fixed_steps_and_no_warmup_are_left_alone() {
    let model = logistic(20_000, 6, 7);
    for kv in [&["L=5"][..], &["eps=0.3"], &["eps=0.3", "L=4"]] {
        let with: Vec<&str> = kv.to_vec();
        let without: Vec<&str> = kv.iter().copied().chain(["traj_exact=false"]).collect();
        let a = run_ecs(model.clone(), false, &with, 300, 100, 1);
        let b = run_ecs(model.clone(), false, &without, 300, 100, 1);
        assert_eq!((a.eps, a.n_leapfrog), (b.eps, b.n_leapfrog), "{kv:?}");
        assert_eq!(a.draws, b.draws, "{kv:?}");
    }
    // No warm-up: ε₀ and L = round(T/ε₀), with or without the setting.
    let a = run_ecs(model.clone(), false, &[], 0, 100, 1);
    let b = run_ecs(model, false, &["traj_exact=false"], 0, 100, 1);
    assert_eq!(a.draws, b.draws);
    assert_eq!(a.n_leapfrog, ((FRAC_PI_2 / a.eps).round() as u32).max(1));
}

#[test]
fn exact_steps_edges() {
    use tallmc_core::kernel::hmc::{exact_steps, MAX_AUTO_STEPS};
    // ε̄ longer than T: one step of length T (round would keep the longer step).
    assert_eq!(exact_steps(1.2, 3.0), (1, 1.2));
    // T a multiple of ε̄: ε̄ itself.
    assert_eq!(exact_steps(1.5, 0.5), (3, 0.5));
    let (l, e) = exact_steps(FRAC_PI_2, 0.648);
    assert_eq!(l, 3);
    assert!((e - FRAC_PI_2 / 3.0).abs() < 1e-15);
    // Clamped at the cap: the step is not lengthened past ε̄ to reach T.
    assert_eq!(exact_steps(1e6, 1e-3), (MAX_AUTO_STEPS, 1e-3));
}
