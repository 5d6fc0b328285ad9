//! `linear` with known noise: every exact sampler against the conjugate posterior
//! (means within 4 MCSE, sds within 5%), d = 5, n = 1000.
//! Chain lengths give ESS ≳ 5000 per coordinate, so 5% on the sd is ≈ 5 standard errors
//! (the relative sd error of an sd estimate is ≈ 1/√(2·ESS)).

use std::sync::Arc;
use tallmc_core::dist;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm};
use tallmc_core::rng::chain_rng;
use tallmc_tests::*;

const NOISE_SD: f64 = 1.5;
const PRIOR_SCALE: f64 = 10.0;

fn problem() -> (Arc<dyn DataModel>, Vec<f64>, Vec<f64>) {
    let (n, d) = (1000, 5);
    let mut rng = chain_rng(2024, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [0.5, -1.0, 0.25, 1.5, 0.0];
    for i in 0..n {
        let eta = linear_predictor(&design, &beta, i);
        design.y[i] = eta + NOISE_SD * dist::std_normal(&mut rng);
    }
    let (m, cov) = linear_posterior(&design, NOISE_SD, PRIOR_SCALE);
    let model = Glm::new(
        design,
        GaussianNoise { sd: NOISE_SD },
        Prior::Normal { scale: PRIOR_SCALE },
    );
    (Arc::new(model), m, cov)
}

fn check(sampler: &str, settings: &[&str], seed: u64, warmup: usize, draws: usize) {
    let (model, m, cov) = problem();
    let d = m.len();
    let r = run_sampler(sampler, model, settings, seed, warmup, draws);
    eprintln!(
        "{sampler}: accept {:.3}, step {:.4}, divergences {}, mean leapfrogs {:.1}",
        r.mean_accept(),
        r.stats[0].step_size,
        r.divergences(),
        r.stats.iter().map(|s| s.n_leapfrog as f64).sum::<f64>() / r.stats.len() as f64
    );
    for j in 0..d {
        let x = r.col(j);
        let (est, se, ess) = (mean(&x), mcse_mean(&x), ess(&x));
        let true_sd = cov[j * d + j].sqrt();
        let rel_sd = sd(&x) / true_sd - 1.0;
        eprintln!(
            "  {j}: mean {est:.5} truth {:.5} z {:+.2} ess {ess:.0}  sd rel err {rel_sd:+.4}",
            m[j],
            (est - m[j]) / se
        );
        assert!(
            (est - m[j]).abs() <= 4.0 * se,
            "{sampler} coord {j}: mean {est} vs {} (mcse {se})",
            m[j]
        );
        assert!(
            rel_sd.abs() <= 0.05,
            "{sampler} coord {j}: sd rel err {rel_sd}"
        );
    }
    assert_eq!(r.divergences(), 0, "{sampler}: divergences");
}

#[test]
fn rwmh_matches_conjugate_posterior() {
    check("rwmh", &[], 11, 2000, 100_000);
}

#[test]
fn mala_matches_conjugate_posterior() {
    check("mala", &[], 12, 2000, 30_000);
}

#[test]
fn hmc_matches_conjugate_posterior() {
    check("hmc", &["jitter=0.2", "L=10"], 13, 1000, 20_000);
}

#[test]
fn nuts_matches_conjugate_posterior() {
    check("nuts", &[], 14, 1000, 6000);
}

#[test]
fn nuts_dense_metric_matches_conjugate_posterior() {
    check("nuts", &["metric=dense"], 15, 1000, 6000);
}
