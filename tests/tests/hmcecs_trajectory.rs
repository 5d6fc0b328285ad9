//! HMC-ECS's sampling trajectory with L automatic (DESIGN.md, departures: "000 §3 default
//! trajectory"): warm-up adapts ε̄ by dual averaging with L = round(T/ε), then sampling uses
//! L = ⌈T/ε̄⌉ and ε = T/L (`traj_exact`, the default), so that εL is T itself; with
//! `traj_exact=false` it keeps ε̄ and L = round(T/ε̄) (the paper's).
//!
//! - The two settings share warm-up (same seed, same draws until its end): the default's ε and
//!   L follow from the other's ε̄ by the rule, and ε ≤ ε̄.
//! - NUTS inside (`trajectory=nuts`) chooses its own length and keeps ε̄ either way.
//! - On a whitened logistic posterior (near N(0, I) in the metric) T = π/2 is a quarter period:
//!   an accepted θ-step is close to an independent draw, so each coordinate's lag-1
//!   autocorrelation is about the rejection rate, 1 − accept. Measured (seeds 4–6): at most
//!   0.055 against a bound of 0.13; the same run with `traj_exact=false` (ε̄ = 0.716, L = 2,
//!   εL = 1.43) gives 0.17–0.20 against its bound of 0.19, and fails.
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
    let run = run_ecs(model, false, &[], 1_000, draws, 4);
    let rho: Vec<f64> = (0..run.draws[0].len())
        .map(|k| lag1(&run.draws, k))
        .collect();
    // 1 − accept: a rejected θ-step repeats the draw; an accepted one is close to independent.
    // 4/√N: four standard errors of a lag-1 autocorrelation of independent draws.
    let bound = (1.0 - run.accept) + 4.0 / (draws as f64).sqrt();
    println!(
        "ε = {:.4}, L = {}, accept {:.3}; lag-1 autocorrelations {rho:.3?} (bound {bound:.3})",
        run.eps, run.n_leapfrog, run.accept
    );
    for (k, r) in rho.iter().enumerate() {
        assert!(
            r.abs() <= bound,
            "coordinate {k}: lag-1 autocorrelation {r:.3} > {bound:.3}"
        );
    }
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
