//! T2 of spec 002: the test noise X_nc + X_corr is Logistic(0, 1) (KS distance ≤ L∞ + 1e-3 with
//! 10⁷ draws; the MC 95% KS noise is ≈ 4.3e-4), and the acceptance probability of the minibatch
//! test is S(Δ): for the idealised Δ* ~ N(Δ, s²) (10⁶ trials, within 2e-3), and through the
//! kernel's own `test` on a model with controlled per-point ratios — the s² = 0 path, a
//! subsampled path (b = 500, s² ≈ 0.5) and the exact fallback when s² ≥ σ² with all data.

use crate::minibatch_mh_common::{normal_scores, Linear1};
use tallmc_core::dist::std_normal;
use tallmc_core::kernel::minibatch_mh::xcorr::{cdf_error, logistic_cdf, Correction};
use tallmc_core::kernel::minibatch_mh::MinibatchMh;
use tallmc_core::rng::chain_rng;

#[test]
fn t2_noise_is_logistic() {
    for (ci, c) in [Correction::sigma_1(), Correction::sigma_1_2()]
        .into_iter()
        .enumerate()
    {
        let sigma = c.sigma();
        let linf = cdf_error(&c.atoms(), sigma, 0.002, 10_000);
        for (k, &frac) in [0.0, 0.5, 0.99].iter().enumerate() {
            let s2 = frac * sigma * sigma;
            let mut rng = chain_rng(2002, (10 * ci + k) as u64);
            let n = 10_000_000;
            let sd_nc = (sigma * sigma - s2).sqrt();
            let sd_norm = s2.sqrt();
            // X_norm (what Δ* carries) + X_nc + X_corr.
            let mut x: Vec<f64> = (0..n)
                .map(|_| {
                    sd_norm * std_normal(&mut rng)
                        + sd_nc * std_normal(&mut rng)
                        + c.sample(&mut rng)
                })
                .collect();
            x.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap());
            let mut ks: f64 = 0.0;
            for (i, &v) in x.iter().enumerate() {
                let f = logistic_cdf(v);
                ks = ks.max((f - i as f64 / n as f64).abs());
                ks = ks.max(((i + 1) as f64 / n as f64 - f).abs());
            }
            println!("σ = {sigma}, s² = {s2:.3}: KS = {ks:.2e} (L∞ = {linf:.2e})");
            assert!(ks <= linf + 1e-3, "KS {ks}");
        }
    }
}

#[test]
fn t2_idealised_acceptance() {
    let c = Correction::sigma_1();
    let mut rng = chain_rng(2002, 100);
    let trials = 1_000_000;
    for &delta in &[-4.0, -1.0, 0.0, 0.5, 3.0] {
        for &s2 in &[0.0, 0.5, 0.99] {
            let s: f64 = f64::sqrt(s2);
            let mut acc = 0usize;
            for _ in 0..trials {
                let d_star = delta + s * std_normal(&mut rng);
                let x = d_star + (1.0 - s2).sqrt() * std_normal(&mut rng) + c.sample(&mut rng);
                acc += (x > 0.0) as usize;
            }
            let rate = acc as f64 / trials as f64;
            let p = logistic_cdf(delta);
            println!("Δ = {delta}, s² = {s2}: rate {rate:.4}, S(Δ) = {p:.4}");
            assert!(
                (rate - p).abs() < 2e-3,
                "Δ = {delta}, s² = {s2}: {rate} vs {p}"
            );
        }
    }
}

/// Acceptance rate of the kernel's test from θ = 0 to θ' = 1 on ℓᵢ = θ·cᵢ with K = N, so
/// Λᵢ = cᵢ and Δ = mean(c). Returns (rate, mean batch, fallback fraction, binomial sd).
fn kernel_rate(c: Vec<f64>, m: usize, trials: usize, stream: u64) -> (f64, f64, f64, f64) {
    let n = c.len();
    let model = Linear1 { c };
    let k = MinibatchMh::new(0.1, n as f64, m, Correction::sigma_1()).unwrap();
    let mut perm: Vec<usize> = (0..n).collect();
    let mut rng = chain_rng(2002, stream);
    let (mut acc, mut b, mut fb) = (0usize, 0usize, 0usize);
    for _ in 0..trials {
        let o = k.test(&mut rng, &model, &[0.0], &[1.0], 0.0, 0.0, &mut perm);
        assert!(!o.divergent);
        acc += o.accepted as usize;
        b += o.batch;
        fb += o.exact_fallback as usize;
    }
    let rate = acc as f64 / trials as f64;
    let p = rate.clamp(0.01, 0.99);
    (
        rate,
        b as f64 / trials as f64,
        fb as f64 / trials as f64,
        (p * (1.0 - p) / trials as f64).sqrt(),
    )
}

#[test]
fn t2_kernel_acceptance() {
    for (j, &delta) in [-2.0, 0.0, 1.0].iter().enumerate() {
        let p = logistic_cdf(delta);
        // s² = 0: constant ratios, one chunk, Gaussian + correction noise.
        let (rate, b, fb, sd) = kernel_rate(vec![delta; 10_000], 50, 200_000, j as u64);
        println!("Δ = {delta}, s² = 0: rate {rate:.4} (S = {p:.4}), b = {b}, fallback {fb}");
        assert_eq!(b, 50.0);
        assert_eq!(fb, 0.0);
        assert!((rate - p).abs() < 4.0 * sd + 1e-5, "{rate} vs {p}");
        // Subsampled: sd(Λᵢ) = √250, b = 500 → s² ≈ 0.5.
        let c: Vec<f64> = normal_scores(10_000)
            .into_iter()
            .map(|z| delta + 250f64.sqrt() * z)
            .collect();
        let (rate, b, fb, sd) = kernel_rate(c, 500, 50_000, 10 + j as u64);
        println!("Δ = {delta}, s² ≈ 0.5: rate {rate:.4} (S = {p:.4}), b = {b}, fallback {fb}");
        assert_eq!(fb, 0.0);
        assert!((rate - p).abs() < 4.0 * sd + 1e-5, "{rate} vs {p}");
        // Exact fallback: Var(Λᵢ) = 4N so s² ≥ 1 even at b = N; the exact Barker test decides.
        let c: Vec<f64> = normal_scores(1_000)
            .into_iter()
            .map(|z| delta + 2.0 * 1000f64.sqrt() * z)
            .collect();
        let (rate, b, fb, sd) = kernel_rate(c, 100, 50_000, 20 + j as u64);
        println!("Δ = {delta}, fallback: rate {rate:.4} (S = {p:.4}), b = {b}, fallback {fb}");
        assert_eq!(b, 1000.0);
        assert_eq!(fb, 1.0);
        assert!((rate - p).abs() < 4.0 * sd, "{rate} vs {p}");
    }
}
