//! QNHMC AT-2 (exactness with a frozen C on non-Gaussian targets) and AT-5 (the paper's
//! continuous adaptation is detectably biased; the default mode is not continuous), spec 001
//! §5.3. Targets: the 1-D quartic U = x²/2 + x⁴/4 (a test-only `LogDensity`, E[x²] by
//! quadrature) and a d = 10 Bayesian logistic regression with correlated features (reference:
//! a long NUTS run). Tolerances are k·MCSE from the chains' own ESS.

use std::sync::Arc;
use tallmc_core::chain::Chain;
use tallmc_core::data::Design;
use tallmc_core::kernel::qnhmc::{Adapt, InitScale, InverseHessian, PairSource, Store};
use tallmc_core::model::{DataModel, Glm, LogDensity, Logistic, Prior};
use tallmc_core::registry::{build_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::qnhmc::{options_from_settings, QnhmcChain, QnhmcOptions};
use tallmc_core::settings::Settings;
use tallmc_tests::{ess, mean, run, run_sampler, var};

/// π(x) ∝ exp(−x²/2 − x⁴/4).
struct Quartic;

impl LogDensity for Quartic {
    fn dim(&self) -> usize {
        1
    }
    fn log_density(&self, x: &[f64]) -> f64 {
        -0.5 * x[0] * x[0] - 0.25 * x[0].powi(4)
    }
    fn log_density_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        g[0] = -x[0] - x[0].powi(3);
        self.log_density(x)
    }
}

/// E[x²] under the quartic target by Simpson's rule on [−8, 8] (the tails are < e⁻¹⁰⁰⁰).
fn quartic_second_moment() -> f64 {
    second_moment_weighted(|_| 1.0)
}

/// E[x²] under π(x)·w(x), π the quartic target, by Simpson's rule on [−8, 8].
fn second_moment_weighted(weight: impl Fn(f64) -> f64) -> f64 {
    let n = 20_000;
    let (a, b) = (-8.0f64, 8.0f64);
    let h = (b - a) / n as f64;
    let (mut z, mut m2) = (0.0, 0.0);
    for i in 0..=n {
        let x = a + i as f64 * h;
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let p = (-0.5 * x * x - 0.25 * x.powi(4)).exp() * weight(x);
        z += w * p;
        m2 += w * p * x * x;
    }
    m2 / z
}

/// E[x²] estimate and its MCSE from the ESS of the x² series.
fn second_moment(draws: &[Vec<f64>]) -> (f64, f64) {
    let sq: Vec<f64> = draws.iter().map(|x| x[0] * x[0]).collect();
    (mean(&sq), (var(&sq) / ess(&sq)).sqrt())
}

fn quartic_run(
    c: Option<f64>,
    adapt: Adapt,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> (f64, f64, bool, f64) {
    let mut rng = chain_rng(seed, 0);
    let opts = QnhmcOptions {
        step_size: 0.1,
        n_steps: 10,
        store: Store::Dense,
        init: InitScale::Fixed(1.0),
        pairs: PairSource::Trajectory,
        adapt,
        ..QnhmcOptions::default()
    };
    let names = vec!["x".to_string()];
    let mut chain = match c {
        Some(c) => {
            let b = InverseHessian::from_dense(vec![c], 1, 1e-8).unwrap();
            QnhmcChain::with_precond(Quartic, &[0.5], names, opts, b, warmup, &mut rng).unwrap()
        }
        None => QnhmcChain::new(Quartic, &[0.5], names, opts, warmup, &mut rng).unwrap(),
    };
    let r = run(&mut chain, &mut rng, draws);
    let (m, se) = second_moment(&r.draws);
    (m, se, chain.exact(), r.mean_accept())
}

#[test]
fn at2_quartic_exact_with_frozen_c() {
    let truth = quartic_second_moment();
    assert!((truth - 0.46793).abs() < 5e-5, "quadrature {truth}");
    // Fixed C = 0.3 and C = 3 (adapt off), and the default adapt-then-freeze after 2000
    // warm-up iterations (the literal Algorithm 2 pairs and B₀ = I during warm-up).
    for (label, c, adapt) in [
        ("C = 0.3", Some(0.3), Adapt::Off),
        ("C = 3", Some(3.0), Adapt::Off),
        ("freeze", None, Adapt::Freeze),
    ] {
        let (m, se, exact, _) = quartic_run(c, adapt, 2000, 100_000, 61);
        eprintln!("{label}: E[x²] = {m:.4} ± {se:.4} (truth {truth:.5})");
        assert!(exact);
        assert!(
            (m - truth).abs() < 4.0 * se,
            "{label}: {m} ± {se} vs {truth}"
        );
    }
}

#[test]
fn at5_continuous_adaptation_is_biased_and_not_default() {
    let truth = quartic_second_moment();
    // The paper's Algorithm 2: B keeps adapting on the accepted trajectories.
    let (m, se, exact, accept) = quartic_run(None, Adapt::Continuous, 0, 100_000, 62);
    // Spec 001 §6.1: in 1-D, BFGS makes B ≈ 1/U''(x) at the end of the accepted trajectory, a
    // position-dependent step with no correction; the chain then targets ≈ π(x)·U''(x)² =
    // π(x)(1 + 3x²)² (spec [sim]: 1.358 ± 0.013 against 1.338 for that density). The density
    // is a heuristic model of the bias, not an exact law, so the comparison allows a model
    // tolerance of 0.1 (7%) on top of 4 MCSE; it is far from the truth 0.468 and from a
    // stuck chain (x₀² = 0.25), which the acceptance check rules out as well.
    let biased = second_moment_weighted(|x| (1.0 + 3.0 * x * x).powi(2));
    eprintln!(
        "continuous: E[x²] = {m:.4} ± {se:.4}, acceptance {accept:.3} (truth {truth:.5}; \
         π(x)(1 + 3x²)² by quadrature {biased:.4})"
    );
    assert!((biased - 1.338).abs() < 5e-3, "quadrature {biased}");
    assert!(!exact);
    assert!(accept > 0.5, "continuous chain stuck: acceptance {accept}");
    assert!(
        (m - biased).abs() < 4.0 * se + 0.1,
        "continuous adaptation E[x²] = {m} ± {se}, model {biased}"
    );
    assert!(
        (m - truth).abs() > 0.2,
        "continuous adaptation not detectably biased: {m}"
    );
    assert!((m - truth).abs() > 10.0 * se);
    // The library default is freeze, and it is exact; continuous reports itself as not exact.
    let s = Settings::new();
    assert_eq!(options_from_settings(&s, 3).unwrap().adapt, Adapt::Freeze);
    let model = logistic_model(200, 3, 7);
    for (kv, exact) in [
        (None, true),
        (Some("adapt=continuous"), false),
        (Some("adapt=off"), true),
    ] {
        let mut s = Settings::new();
        if let Some(kv) = kv {
            s.insert_pair(kv).unwrap();
        }
        let config = ChainConfig {
            sampler: "qnhmc",
            warmup: 10,
            settings: &s,
        };
        let chain = build_chain(&config, model.clone(), &mut chain_rng(1, 0)).unwrap();
        assert_eq!(chain.exact(), exact, "{kv:?}");
    }
    let info = tallmc_core::registry::sampler("qnhmc").unwrap();
    assert!(
        info.exact,
        "the registry entry describes the default (freeze) configuration"
    );
}

/// Logistic regression with an intercept and d − 1 equicorrelated (ρ = 0.7) features, prior
/// N(0, 10²) on every coefficient.
fn logistic_model(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    let mut rng = chain_rng(seed, 0);
    let normal = tallmc_core::dist::std_normal;
    let beta: Vec<f64> = (0..d)
        .map(|j| {
            if j == 0 {
                0.3
            } else {
                1.2 / (d as f64).sqrt() * normal(&mut rng)
            }
        })
        .collect();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    for i in 0..n {
        let common = normal(&mut rng);
        x[i * d] = 1.0;
        for j in 1..d {
            x[i * d + j] = 0.7f64.sqrt() * common + 0.3f64.sqrt() * normal(&mut rng);
        }
        let eta: f64 = (0..d).map(|j| x[i * d + j] * beta[j]).sum();
        y[i] = if tallmc_core::rng::uniform(&mut rng) < 1.0 / (1.0 + (-eta).exp()) {
            1.0
        } else {
            0.0
        };
    }
    let names = (0..d).map(|j| format!("b{j}")).collect();
    let design = Design { n, d, x, y, names };
    Arc::new(Glm::new(design, Logistic, Prior::normal(10.0).unwrap()))
}

#[test]
fn at2_logistic_regression_lbfgs_freeze_matches_nuts() {
    let d = 10;
    let model = logistic_model(200, d, 71);
    // QNHMC: L-BFGS m = 7, L = 5, adapt in 2000 warm-up iterations then frozen; auto ε.
    let qn = run_sampler(
        "qnhmc",
        model.clone(),
        &["store=lbfgs", "memory=7", "L=5", "init=zero"],
        72,
        2000,
        20_000,
    );
    // The control: HMC with M⁻¹ = the same (dense) BFGS estimate, frozen after warm-up.
    let mass = run_sampler(
        "qnhmc",
        model.clone(),
        &["precondition=mass", "L=5", "init=zero"],
        74,
        2000,
        10_000,
    );
    // Reference: a long NUTS run with a dense metric.
    let nuts = run_sampler(
        "nuts",
        model,
        &["metric=dense", "init=zero"],
        73,
        1000,
        20_000,
    );
    let mut max_z: f64 = 0.0;
    for (j, run) in (0..d).flat_map(|j| [(j, &qn), (j, &mass)]) {
        let (a, b) = (run.col(j), nuts.col(j));
        let se = (var(&a) / ess(&a) + var(&b) / ess(&b)).sqrt();
        let z = (mean(&a) - mean(&b)) / se;
        max_z = max_z.max(z.abs());
        assert!(
            z.abs() < 4.0,
            "b{j}: QNHMC {} vs NUTS {} (se {se})",
            mean(&a),
            mean(&b)
        );
        // Standard deviations: ratio within k·(its delta-method SE from the squared series).
        let (va, vb) = (var(&a), var(&b));
        let ca: Vec<f64> = a.iter().map(|v| (v - mean(&a)).powi(2)).collect();
        let cb: Vec<f64> = b.iter().map(|v| (v - mean(&b)).powi(2)).collect();
        let se_v = (var(&ca) / ess(&ca) + var(&cb) / ess(&cb)).sqrt();
        assert!(
            (va - vb).abs() < 4.0 * se_v,
            "b{j}: var {va} vs {vb} (se {se_v})"
        );
    }
    eprintln!(
        "logistic d = 10: max |z| of means {max_z:.2}; QNHMC accept {:.3}, ESS(b1) {:.0}; \
         mass control accept {:.3}, ESS(b1) {:.0}",
        qn.mean_accept(),
        ess(&qn.col(1)),
        mass.mean_accept(),
        ess(&mass.col(1))
    );
    assert!(qn.divergences() == 0 && mass.divergences() == 0);
}
