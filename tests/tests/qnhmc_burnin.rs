//! QNHMC AT-6 (spec 001 §5.3): burn-in on the paper's Gaussian N(0, 11ᵀ + 4I), d = 100, at
//! ε = 0.01, L = 10 with continuous adaptation during burn-in. The paper's "hundreds of
//! iterations" holds only for sample pairs with Nocedal–Wright initial scaling; the literal
//! Algorithm 2 (trajectory pairs, B₀ = I) is reported, not asserted; HMC at the same ε from 30·1
//! needs more than 20 000 iterations (the spec's [sim] value) (the slow direction 1 has IAT ≈ 41 600).

use tallmc_core::chain::Chain;
use tallmc_core::kernel::qnhmc::{Adapt, InitScale, PairSource, Store};
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::qnhmc::{QnhmcChain, QnhmcOptions};

use tallmc_tests::PaperGaussian;

const D: usize = tallmc_tests::PAPER_D;

fn names() -> Vec<String> {
    (1..=D).map(|j| format!("x{j}")).collect()
}

fn options(step: f64, adapt: Adapt, pairs: PairSource, init: InitScale) -> QnhmcOptions {
    QnhmcOptions {
        step_size: step,
        n_steps: 10,
        store: Store::Dense,
        init,
        pairs,
        adapt,
        ..QnhmcOptions::default()
    }
}

/// Iterations until θᵀΣ⁻¹θ ≤ d + 3√(2d) (the χ²_d mean + 3 sd), at most `max`.
fn burn_in(opts: QnhmcOptions, start: &[f64], max: usize, seed: u64) -> usize {
    let mut rng = chain_rng(seed, 0);
    let mut chain = QnhmcChain::new(PaperGaussian, start, names(), opts, 0, &mut rng).unwrap();
    let thr = D as f64 + 3.0 * (2.0 * D as f64).sqrt();
    for t in 1..=max {
        chain.step(&mut rng);
        let x = chain.position();
        let s: f64 = x.iter().sum();
        let q = 0.25 * (x.iter().map(|v| v * v).sum::<f64>() - s * s / (4.0 + D as f64));
        if q <= thr {
            return t;
        }
    }
    max + 1
}

#[test]
fn at6_burn_in_hundreds_of_iterations_only_with_sample_pairs_and_scaling() {
    let mut rng = chain_rng(61, 7);
    let far: Vec<f64> = (0..D)
        .map(|_| 30.0 * tallmc_core::dist::std_normal(&mut rng))
        .collect();
    let starts = [("30·1", vec![30.0; D]), ("N(0, 30²I)", far)];
    let sample_nw = options(
        0.01,
        Adapt::Continuous,
        PairSource::Sample,
        InitScale::Scaled,
    );
    let traj_id = options(
        0.01,
        Adapt::Continuous,
        PairSource::Trajectory,
        InitScale::Fixed(1.0),
    );
    let hmc = options(0.01, Adapt::Off, PairSource::Sample, InitScale::Fixed(1.0));
    for (label, start) in &starts {
        let a = burn_in(sample_nw, start, 5000, 62);
        let b = burn_in(traj_id, start, 20_000, 63);
        eprintln!(
            "start {label}: QNHMC sample pairs + NW {a}, trajectory pairs + B₀ = I {b} iterations"
        );
        assert!(
            a <= 1000,
            "{label}: sample pairs + NW scaling took {a} iterations"
        );
    }
    // HMC at the same ε from 30·1 (C = I): the slow direction 1 has IAT ≈ 41 600.
    // The spec's [sim] value is > 20 000 iterations.
    let h = burn_in(hmc, &starts[0].1, 20_000, 64);
    eprintln!("start 30·1: HMC > {} iterations", h - 1);
    assert!(h > 20_000, "HMC reached the HPD region in {h} iterations");
}
