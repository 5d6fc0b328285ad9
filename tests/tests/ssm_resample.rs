#![allow(clippy::needless_range_loop)]
//! Resampling schemes: offspring counts are unbiased (E[Oᵢ] = N Wᵢ within 4 SE for every
//! scheme), systematic and residual counts always lie in {⌊NWᵢ⌋, ⌈NWᵢ⌉}, stratified and systematic
//! have smaller count variance than multinomial, and the output is N sorted valid indices.

use tallmc_core::rng::{chain_rng, uniform};
use tallmc_core::ssm::resample::{ess, offspring_counts, Resampling};

fn weights(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = chain_rng(seed, 0);
    // skewed weights with a few zeros and one dominant particle
    let mut w: Vec<f64> = (0..n)
        .map(|i| {
            if i % 7 == 3 {
                0.0
            } else {
                (-3.0 * uniform(&mut rng).ln()).exp().min(50.0)
            }
        })
        .collect();
    w[1] += 20.0;
    let s: f64 = w.iter().sum();
    w.iter_mut().for_each(|v| *v /= s);
    w
}

#[test]
fn offspring_counts_are_unbiased() {
    let n = 23;
    let w = weights(n, 1);
    let reps = 20_000;
    for scheme in Resampling::ALL {
        let mut rng = chain_rng(2, 0);
        let mut sum = vec![0.0; n];
        let mut sum2 = vec![0.0; n];
        let mut anc = Vec::new();
        for _ in 0..reps {
            scheme.resample(&w, n, &mut rng, &mut anc);
            assert_eq!(anc.len(), n);
            assert!(
                anc.windows(2).all(|p| p[0] <= p[1]),
                "{scheme:?} not sorted"
            );
            let c = offspring_counts(&anc, n);
            for i in 0..n {
                sum[i] += c[i] as f64;
                sum2[i] += (c[i] * c[i]) as f64;
            }
        }
        let mut total_var = 0.0;
        for i in 0..n {
            let m = sum[i] / reps as f64;
            let v = sum2[i] / reps as f64 - m * m;
            total_var += v;
            let expect = n as f64 * w[i];
            if w[i] == 0.0 {
                assert_eq!(sum[i], 0.0, "{scheme:?}: zero-weight particle {i} selected");
                continue;
            }
            let se = (v / reps as f64).sqrt();
            assert!(
                (m - expect).abs() < 4.0 * se + 1e-12,
                "{scheme:?} particle {i}: mean count {m} vs N·W = {expect} (se {se})"
            );
        }
        // multinomial has the largest variance Σ N Wᵢ(1 − Wᵢ)
        let multi: f64 = w.iter().map(|wi| n as f64 * wi * (1.0 - wi)).sum();
        match scheme {
            Resampling::Multinomial => {
                assert!(
                    (total_var / multi - 1.0).abs() < 0.05,
                    "{total_var} vs {multi}"
                )
            }
            _ => assert!(
                total_var < 0.5 * multi,
                "{scheme:?}: {total_var} vs {multi}"
            ),
        }
    }
}

#[test]
fn systematic_and_residual_stay_within_floor_and_ceil() {
    for seed in 0..50 {
        let n = 5 + (seed as usize * 7) % 200;
        let w = weights(n, 100 + seed);
        let mut rng = chain_rng(seed, 1);
        let mut anc = Vec::new();
        for scheme in [Resampling::Systematic, Resampling::Residual] {
            for _ in 0..20 {
                scheme.resample(&w, n, &mut rng, &mut anc);
                let c = offspring_counts(&anc, n);
                for i in 0..n {
                    let nw = n as f64 * w[i];
                    // allow rounding of N·Wᵢ at an exact integer
                    let lo = (nw - 1e-9).floor().max(0.0) as usize;
                    let hi = (nw + 1e-9).ceil() as usize;
                    assert!(
                        c[i] >= lo && c[i] <= hi,
                        "{scheme:?} n={n} i={i}: {} not in [{lo}, {hi}] (N·W = {nw})",
                        c[i]
                    );
                }
            }
        }
    }
}

#[test]
fn different_output_size_and_degenerate_weights() {
    let w = [0.0, 0.0, 1.0, 0.0];
    let mut rng = chain_rng(3, 0);
    let mut anc = Vec::new();
    for scheme in Resampling::ALL {
        scheme.resample(&w, 10, &mut rng, &mut anc);
        assert_eq!(anc, vec![2; 10], "{scheme:?}");
        scheme.resample(&[], 10, &mut rng, &mut anc);
        assert!(anc.is_empty());
    }
    assert_eq!(ess(&[0.25; 4]), 4.0);
    assert_eq!(ess(&w), 1.0);
    for name in Resampling::NAMES {
        assert_eq!(Resampling::from_name(name).unwrap().name(), name);
    }
    assert!(Resampling::from_name("bogus").is_err());
}
