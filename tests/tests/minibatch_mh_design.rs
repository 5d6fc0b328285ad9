//! AustereMH's test design (spec 002 §2.9; Korattikara et al. 2014, App. A): the dynamic
//! programme reproduces the authors' design table (N = 13 000: E(0, 450, 0.01) = 0.0997 and
//! mean_j = 25.78, the chosen design for Δ* = 0.1), the error falls with |μ_std|, and the
//! design's error is confirmed by simulating the Gaussian random walk of the z-statistics.

use tallmc_core::dist::std_normal;
use tallmc_core::kernel::minibatch_mh::design::{evaluate, search, NcTable, DEFAULT_BINS};
use tallmc_core::math;
use tallmc_core::rng::chain_rng;

#[test]
fn reproduces_the_authors_design_table() {
    let t0 = std::time::Instant::now();
    let d = evaluate(13_000, 450, 0.01, 0.0, DEFAULT_BINS);
    println!(
        "E(0, 450, 0.01) = {:.4} (authors 0.0997), mean_j = {:.2} (25.78), data {:.0} (11 603)",
        d.error, d.mean_looks, d.data
    );
    assert!((d.error - 0.0997).abs() < 0.003, "error {}", d.error);
    assert!(
        (d.mean_looks - 25.78).abs() < 0.3,
        "mean_j {}",
        d.mean_looks
    );
    let best = search(13_000, 0.0, 0.1, DEFAULT_BINS).expect("a design meets Δ* = 0.1");
    println!(
        "conservative design for N = 13 000, Δ* = 0.1: {best:?} ({:?})",
        t0.elapsed()
    );
    assert_eq!((best.batch_step, best.epsilon), (450, 0.01));
    // Error falls, and data use falls, as the signal |μ_std| grows.
    let e: Vec<SeqDesign> = [0.0, 0.5, 1.0, 2.0, 4.0]
        .iter()
        .map(|&mu| evaluate(13_000, 100, 0.05, mu, DEFAULT_BINS))
        .collect();
    for w in e.windows(2) {
        assert!(w[1].error < w[0].error, "{e:?}");
    }
    assert!(e[4].data < e[0].data);
    // Symmetry in μ_std.
    let (a, b) = (
        evaluate(13_000, 100, 0.05, 1.3, DEFAULT_BINS),
        evaluate(13_000, 100, 0.05, -1.3, DEFAULT_BINS),
    );
    assert!((a.error - b.error).abs() < 1e-12 && (a.data - b.data).abs() < 1e-6);
    let t = NcTable::new(13_000, 0.05, DEFAULT_BINS);
    let near0 = t.design(0.01).expect("design");
    let far = t.design(6.0).expect("design");
    println!(
        "nc designs: |μ_std| ≈ 0: {near0:?}; 6: {far:?} ({:?})",
        t0.elapsed()
    );
    assert!(far.data < near0.data);
}

use tallmc_core::kernel::minibatch_mh::design::SeqDesign;

/// Monte Carlo of the random walk itself: stop at |zⱼ| > G, wrong sign counted.
fn simulate(n: usize, m: usize, eps: f64, mu: f64, reps: usize) -> (f64, f64) {
    let mut rng = chain_rng(77, 0);
    let g = math::norm_quantile(1.0 - eps);
    let looks = n.div_ceil(m);
    let pi = |j: usize| ((j * m).min(n)) as f64 / n as f64;
    let (mut wrong, mut data) = (0.0, 0.0);
    for _ in 0..reps {
        let mut z = mu * (pi(1) / (1.0 - pi(1))).sqrt() + std_normal(&mut rng);
        let mut j = 1;
        loop {
            if z.abs() > g || j == looks - 1 {
                break;
            }
            j += 1;
            let (a, b) = (pi(j - 1), pi(j));
            let shift = mu * (b - a) / ((1.0 - a) * (b * (1.0 - b)).sqrt());
            let coef = (a * (1.0 - b) / (b * (1.0 - a))).sqrt();
            let sd = ((b - a) / (b * (1.0 - a))).sqrt();
            z = shift + coef * z + sd * std_normal(&mut rng);
        }
        if z.abs() > g {
            // μ ≥ 0: a stop below −G is wrong (at μ = 0 half of all early stops, as E(0)).
            if mu >= 0.0 && z < 0.0 {
                wrong += 1.0;
            }
            data += (j * m).min(n) as f64;
        } else {
            data += n as f64;
        }
    }
    (wrong / reps as f64, data / reps as f64)
}

#[test]
fn dynamic_programme_matches_simulation() {
    let reps = 100_000;
    for &(m, eps, mu) in &[(200, 0.05, 0.0), (100, 0.01, 0.7), (450, 0.01, 0.0)] {
        let d = evaluate(13_000, m, eps, mu, DEFAULT_BINS);
        let (e, data) = simulate(13_000, m, eps, mu, reps);
        let se = (e * (1.0 - e) / reps as f64).sqrt();
        println!(
            "m {m} ε {eps} μ {mu}: DP error {:.4} data {:.0}; simulated {e:.4} ± {se:.4}, data {data:.0}",
            d.error, d.data
        );
        assert!((d.error - e).abs() <= 4.0 * se + 0.003, "error");
        assert!((d.data - data).abs() <= 0.03 * data, "data");
    }
}
