//! The stochastic-gradient samplers of the registry (issue 7): `sgld`, `sgld-cv`, `sghmc`,
//! `sgnht`, `sgld-ps`, `sgld-cv-ps`, `asgld-cv-ps`, `dpp-sgld`.
//!
//! - Defaults run on a small logistic regression and (unless the sampler declares `models`) on
//!   a non-GLM model; draws are finite, `exact()` is false, the per-step gradient count is the
//!   documented one and the extras are named.
//! - `dpp-sgld` on a non-regression model is a clear error.
//! - Exact means: on `linear` with known noise the posterior is Gaussian and every one of these
//!   chains is linear (SGNHT: odd in (θ − μ, u)) with zero-mean gradient noise, so the stationary
//!   mean is exactly the conjugate posterior mean whatever the step; checked within 4 MCSE for
//!   each coordinate with the automatic step. (The thesis's DPP weights are biased and are not
//!   the default.)
//! - ASGLD-CV-PS: n_t = min(n, max(1, ⌈n₀‖θ_t − θ̂‖²/q⌉)) step by step, the closed-form
//!   pseudo-variance at the visited θ_t with batch n_t stays below the reported V₀, and the mean
//!   batch is below n₀ (fewer data passes than fixed-n SGLD-CV-PS).

use std::sync::Arc;
use tallmc_core::chain::Chain;
use tallmc_core::dist;
use tallmc_core::kernel::sgmcmc::{
    build_sg_chain, AdaptiveBatch, Batching, Dynamics, SgOptions, SgldInit, StepSchedule,
};
use tallmc_core::model::gaussian::GaussianMean;
use tallmc_core::model::linear::conjugate_posterior;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm, Logistic};
use tallmc_core::registry::{build_chain, samplers, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_tests::*;

const SG: &[&str] = &[
    "sgld",
    "sgld-cv",
    "sghmc",
    "sgnht",
    "sgld-ps",
    "sgld-cv-ps",
    "asgld-cv-ps",
    "dpp-sgld",
];

fn logistic(n: usize, seed: u64) -> Arc<dyn DataModel> {
    let d = 3;
    let mut rng = chain_rng(seed, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [0.3, 1.0, -0.7];
    for i in 0..n {
        let p = 1.0 / (1.0 + (-linear_predictor(&design, &beta, i)).exp());
        design.y[i] = if dist::bernoulli(&mut rng, p) {
            1.0
        } else {
            0.0
        };
    }
    Arc::new(Glm::new(design, Logistic, Prior::Normal { scale: 10.0 }))
}

fn gaussian(n: usize, seed: u64) -> Arc<dyn DataModel> {
    let mut rng = chain_rng(seed, 0);
    let y: Vec<f64> = (0..2 * n).map(|_| dist::std_normal(&mut rng)).collect();
    Arc::new(
        GaussianMean::new(
            y,
            2,
            vec!["a".into(), "b".into()],
            vec![1.0, 0.3, 0.3, 1.0],
            Prior::Normal { scale: 10.0 },
        )
        .unwrap(),
    )
}

fn build(sampler: &str, model: Arc<dyn DataModel>, kv: &[&str]) -> Result<Box<dyn Chain>, String> {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup: 20,
        settings: &s,
    };
    let mut rng = chain_rng(1, 0);
    build_chain(&config, model, &mut rng).map_err(|e| e.to_string())
}

#[test]
fn defaults_run_everywhere_they_claim() {
    for name in SG {
        let info = samplers()
            .iter()
            .find(|s| s.name == *name)
            .expect("in registry");
        assert!(!info.exact && !info.signed);
        let mut models = vec![("logistic", logistic(500, 1))];
        if info.models.is_empty() {
            models.push(("gaussian", gaussian(500, 2)));
        }
        for (label, model) in models {
            let mut chain = build(name, model, &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(!chain.exact());
            let extras = chain.extra_names();
            assert!(!extras.is_empty() && extras.len() <= 4 && extras[0] == "batch_size");
            let mut rng = chain_rng(3, 0);
            let r = run(chain.as_mut(), &mut rng, 100);
            assert!(
                r.draws.iter().flatten().all(|v| v.is_finite()),
                "{name} on {label}"
            );
            assert_eq!(r.divergences(), 0, "{name} on {label}");
            let setup = chain.setup_cost();
            assert!(setup.grad_evals > 0, "{name}: setup cost");
            for s in &r.stats {
                let m = s.extra[0] as u64;
                let per = match *name {
                    "sgld-cv" | "sgld-cv-ps" | "asgld-cv-ps" => 2 * m,
                    _ => m,
                };
                assert_eq!(s.grad_evals, per, "{name}: evals");
                let want_m = match *name {
                    "asgld-cv-ps" => s.extra[0] as usize,
                    "dpp-sgld" => 20,
                    _ => 100,
                };
                assert_eq!(m as usize, want_m, "{name}: batch");
            }
            let res = chain.resolved();
            assert!(res.iter().any(|(k, v)| *k == "step_size" && *v > 0.0));
            eprintln!("{name} on {label}: extras {extras:?}, resolved {res:?}");
        }
    }
    let err = build("dpp-sgld", gaussian(100, 4), &[])
        .err()
        .expect("must fail");
    assert!(err.contains("regression"), "{err}");
    let err = build("sghmc", logistic(100, 5), &["friction=1.5"])
        .err()
        .expect("must fail");
    assert!(err.contains("friction"), "{err}");
    let err = build("sgld-ps", logistic(100, 5), &["dpp_w=0.5"])
        .err()
        .expect("must fail");
    assert!(err.contains("dpp_w"), "{err}");
}

#[test]
fn linear_posterior_mean_is_exact_for_every_sg_sampler() {
    const NOISE_SD: f64 = 1.0;
    let (n, d) = (2000, 3);
    let mut rng = chain_rng(77, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [1.0, -0.5, 0.25];
    for i in 0..n {
        design.y[i] = linear_predictor(&design, &beta, i) + NOISE_SD * dist::std_normal(&mut rng);
    }
    let prior = Prior::Normal { scale: 10.0 };
    let (mu, cov) = conjugate_posterior(&design, NOISE_SD, &prior).unwrap();
    let model: Arc<dyn DataModel> =
        Arc::new(Glm::new(design, GaussianNoise { sd: NOISE_SD }, prior));
    for (k, name) in SG.iter().enumerate() {
        let kv: &[&str] = match *name {
            "asgld-cv-ps" => &["pilot_iters=400"],
            // Each exact k-DPP draw costs O(n k (k + d)) flops and n·(k − d − 1) normal draws.
            "dpp-sgld" => &["batch_size=5"],
            _ => &[],
        };
        let r = run_sampler(name, model.clone(), kv, 100 + k as u64, 500, 20_000);
        for j in 0..d {
            let x = r.col(j);
            let sd_post = cov[j * d + j].sqrt();
            let (m, se) = (mean(&x), mcse_mean(&x));
            eprintln!(
                "{name} {j}: err/sd {:+.4}, z {:+.2}, sd ratio {:.3}, ess {:.0}",
                (m - mu[j]) / sd_post,
                (m - mu[j]) / se,
                sd(&x) / sd_post,
                ess(&x)
            );
            assert!((m - mu[j]).abs() <= 4.0 * se, "{name} coord {j}");
        }
    }
}

#[test]
fn asgld_batch_rule_and_variance_bound() {
    let model = logistic(2000, 9);
    let opts = SgOptions {
        step_size: f64::NAN,
        schedule: StepSchedule::Constant(1.0),
        batch: 50,
        batching: Batching::Preferential { defensive: 0.0 },
        control_variate: true,
        dynamics: Dynamics::Langevin,
        adaptive: Some(AdaptiveBatch {
            pilot_chains: 3,
            pilot_iters: 1000,
        }),
        init: SgldInit::Mode,
    };
    let mut rng = chain_rng(10, 0);
    let mut chain = build_sg_chain(model.clone(), &opts, 0, &mut rng).unwrap();
    let q = chain.adaptive_q();
    let v0 = chain.v0();
    assert!(q > 0.0 && v0 > 0.0, "q {q} v0 {v0}");
    let mode = chain.estimator().centre().unwrap().to_vec();
    let n = model.n();
    let mut batches = Vec::new();
    let mut worst = 0.0f64;
    for t in 0..5000 {
        let theta = chain.position().to_vec();
        let info = chain.step(&mut rng);
        let dist2: f64 = theta
            .iter()
            .zip(&mode)
            .map(|(a, b)| (a - b) * (a - b))
            .sum();
        let want = ((50.0 * dist2 / q).ceil().max(1.0) as usize).min(n);
        assert_eq!(info.extra[0] as usize, want, "t {t}");
        assert!((info.extra[1] - dist2).abs() <= 1e-12 * dist2.max(1e-300));
        assert_eq!(info.grad_evals, 2 * want as u64);
        batches.push(want as f64);
        if t % 100 == 0 && want < n {
            let v = chain
                .estimator()
                .pseudo_variance(model.as_ref(), &theta)
                .unwrap();
            worst = worst.max(v / v0);
            assert!(v <= v0, "t {t}: V {v} > V0 {v0}");
        }
    }
    let mb = mean(&batches);
    eprintln!(
        "ASGLD-CV-PS: q95 {q:.3e}, V0 {v0:.3e}, max V/V0 at visited θ {worst:.3}, mean n_t {mb:.1} (n₀ = 50), setup passes {:.1}",
        chain.setup_cost().full_passes(n)
    );
    assert!(mb < 50.0);
}
