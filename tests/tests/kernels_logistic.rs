//! `logistic` (n = 5000, d = 5): the four exact samplers agree with each other within 4 MCSE
//! (MCSE of a difference = √(mcse₁² + mcse₂²)).

use std::sync::Arc;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, Glm, Logistic};
use tallmc_core::rng::{chain_rng, uniform};
use tallmc_tests::*;

fn model() -> Arc<dyn DataModel> {
    let (n, d) = (5000, 5);
    let mut rng = chain_rng(77, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [-0.5, 1.0, -0.75, 0.5, 0.0];
    for i in 0..n {
        let eta = linear_predictor(&design, &beta, i);
        let p = 1.0 / (1.0 + (-eta).exp());
        design.y[i] = if uniform(&mut rng) < p { 1.0 } else { 0.0 };
    }
    Arc::new(Glm::new(design, Logistic, Prior::Normal { scale: 10.0 }))
}

#[test]
fn exact_samplers_agree_on_logistic() {
    let m = model();
    let runs = [
        (
            "rwmh",
            run_sampler("rwmh", m.clone(), &[], 21, 1000, 30_000),
        ),
        ("mala", run_sampler("mala", m.clone(), &[], 22, 1000, 8000)),
        (
            "hmc",
            run_sampler("hmc", m.clone(), &["L=8", "jitter=0.2"], 23, 500, 3000),
        ),
        ("nuts", run_sampler("nuts", m.clone(), &[], 24, 500, 2000)),
    ];
    let d = m.dim();
    let summary: Vec<Vec<(f64, f64)>> = runs
        .iter()
        .map(|(name, r)| {
            eprintln!(
                "{name}: accept {:.3}, divergences {}, leapfrogs/iter {:.1}",
                r.mean_accept(),
                r.divergences(),
                r.stats.iter().map(|s| s.n_leapfrog as f64).sum::<f64>() / r.stats.len() as f64
            );
            (0..d)
                .map(|j| {
                    let x = r.col(j);
                    eprintln!(
                        "  {j}: mean {:.5} mcse {:.5} ess {:.0}",
                        mean(&x),
                        mcse_mean(&x),
                        ess(&x)
                    );
                    (mean(&x), mcse_mean(&x))
                })
                .collect()
        })
        .collect();
    for a in 0..runs.len() {
        assert_eq!(runs[a].1.divergences(), 0, "{}", runs[a].0);
        for b in a + 1..runs.len() {
            for (j, (&(ma, sa), &(mb, sb))) in summary[a].iter().zip(&summary[b]).enumerate() {
                let se = (sa * sa + sb * sb).sqrt();
                assert!(
                    (ma - mb).abs() <= 4.0 * se,
                    "{} vs {} coord {j}: {ma} vs {mb} (se {se})",
                    runs[a].0,
                    runs[b].0
                );
            }
        }
    }
}
