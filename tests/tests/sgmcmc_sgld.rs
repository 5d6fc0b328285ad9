//! SGLD and SGLD-CV (issue 7, first slice).
//!
//! - AT5: with the full batch the SGLD step θ ← θ + (h/2)∇log π + √h ξ is ULA; on the Gaussian
//!   posterior N(μ, λ⁻¹) of `gaussian` (d = 1) its stationary law is N(μ, 1/(λ(1 − hλ/4))).
//!   Checked at hλ = 1 (variance 4/(3λ)) and hλ = 2 (variance 2/λ) within 4 MCSE, and shown to
//!   be far (> 10 MCSE) from the posterior variance 1/λ.
//! - Minibatch (m = 10, with and without replacement) on the same model: the gradient noise is
//!   independent of θ, so the stationary variance (h + h²V_g/4)/(1 − (1 − hλ/2)²) is exact.
//! - SGLD-CV with the automatic small step on `linear` with known noise matches the conjugate
//!   posterior mean within 0.1 posterior sd (500k draws: MCSE ≈ 0.02 sd, so 0.1 sd ≈ 5 MCSE).
//! - Cost per iteration at n = 10⁵, batch 100: 100 gradient evaluations for `sgld`, 200 for
//!   `sgld-cv` (current point and centre), and the setup (mode + one full pass) in `setup_cost`.

use std::sync::Arc;
use tallmc_core::dist;
use tallmc_core::model::gaussian::GaussianMean;
use tallmc_core::model::linear::conjugate_posterior;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm};
use tallmc_core::registry::{build_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_tests::*;

const PRIOR_SCALE: f64 = 10.0;

/// y ~ N(1, 1), n data, d = 1, prior N(0, 10²): posterior N(Σy/λ, 1/λ), λ = n + 1/100.
fn gaussian_1d(n: usize, seed: u64) -> (Arc<dyn DataModel>, f64, f64) {
    let mut rng = chain_rng(seed, 0);
    let y: Vec<f64> = (0..n).map(|_| 1.0 + dist::std_normal(&mut rng)).collect();
    let lambda = n as f64 + 1.0 / (PRIOR_SCALE * PRIOR_SCALE);
    let mean = y.iter().sum::<f64>() / lambda;
    let model = GaussianMean::new(
        y,
        1,
        vec![String::from("mu")],
        vec![1.0],
        Prior::Normal { scale: PRIOR_SCALE },
    )
    .expect("model");
    (Arc::new(model), mean, lambda)
}

fn at5(h_lambda: f64, seed: u64) {
    let n = 1000;
    let (model, mu, lambda) = gaussian_1d(n, 7);
    let h = h_lambda / lambda;
    let step = format!("step_size={h}");
    let batch = format!("batch_size={n}");
    let r = run_sampler("sgld", model, &[&step, &batch], seed, 200, 20_000);
    let x = r.col(0);
    let v_theory = 1.0 / (lambda * (1.0 - h_lambda / 4.0));
    let vz = variance_z(&x, mu, v_theory);
    let vz_post = variance_z(&x, mu, 1.0 / lambda);
    let (m, se) = (mean(&x), mcse_mean(&x));
    eprintln!(
        "hλ = {h_lambda}: var {:.4e} theory {v_theory:.4e} (z {vz:+.2}), posterior 1/λ {:.4e} (z {vz_post:+.2}); mean z {:+.2}, ess {:.0}",
        var(&x),
        1.0 / lambda,
        (m - mu) / se,
        ess(&x)
    );
    assert!(vz.abs() <= 4.0, "stationary variance off by {vz} MCSE");
    assert!(vz_post > 10.0, "not distinguishable from 1/λ: z {vz_post}");
    assert!((m - mu).abs() <= 4.0 * se, "mean {m} vs {mu} (mcse {se})");
    assert!(r
        .stats
        .iter()
        .all(|s| s.grad_evals == n as u64 && s.accepted));
}

#[test]
fn at5_full_batch_stationary_variance_h_lambda_1() {
    at5(1.0, 31);
}

#[test]
fn at5_full_batch_stationary_variance_h_lambda_2() {
    at5(2.0, 32);
}

#[test]
fn sgld_cv_matches_linear_conjugate_mean() {
    const NOISE_SD: f64 = 1.5;
    let (n, d) = (10_000, 5);
    let mut rng = chain_rng(2025, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [0.5, -1.0, 0.25, 1.5, 0.0];
    for i in 0..n {
        let eta = linear_predictor(&design, &beta, i);
        design.y[i] = eta + NOISE_SD * dist::std_normal(&mut rng);
    }
    let prior = Prior::Normal { scale: PRIOR_SCALE };
    let (m, cov) = conjugate_posterior(&design, NOISE_SD, &prior).expect("posterior");
    let model: Arc<dyn DataModel> =
        Arc::new(Glm::new(design, GaussianNoise { sd: NOISE_SD }, prior));
    let r = run_sampler("sgld-cv", model, &["batch_size=100"], 41, 1000, 500_000);
    assert!(r.stats.iter().all(|s| s.grad_evals == 200));
    for j in 0..d {
        let x = r.col(j);
        let sd_post = cov[j * d + j].sqrt();
        let (est, se) = (mean(&x), mcse_mean(&x));
        eprintln!(
            "  {j}: mean {est:.5} truth {:.5} err/sd {:+.3} mcse/sd {:.3} ess {:.0} sd ratio {:.3}",
            m[j],
            (est - m[j]) / sd_post,
            se / sd_post,
            ess(&x),
            sd(&x) / sd_post
        );
        assert!(
            (est - m[j]).abs() <= 0.1 * sd_post,
            "coord {j}: mean {est} vs {} (posterior sd {sd_post})",
            m[j]
        );
    }
}

#[test]
fn cost_per_iteration_is_batch_sized() {
    let n = 100_000;
    let (model, _, _) = gaussian_1d(n, 9);
    for (sampler, per_step) in [("sgld", 100u64), ("sgld-cv", 200)] {
        let mut s = Settings::new();
        s.insert("batch_size", "100");
        let config = ChainConfig {
            sampler,
            warmup: 0,
            settings: &s,
        };
        let mut rng = chain_rng(5, 0);
        let mut chain = build_chain(&config, model.clone(), &mut rng).expect("chain");
        assert!(!chain.exact());
        let setup = chain.setup_cost();
        let r = run(chain.as_mut(), &mut rng, 100);
        eprintln!(
            "{sampler}: setup grad evals {} ({:.2} passes), per step {}",
            setup.grad_evals,
            setup.full_passes(n),
            r.stats[0].grad_evals
        );
        assert!(r.stats.iter().all(|st| st.grad_evals == per_step
            && st.accepted
            && st.accept_prob == 1.0
            && st.extra[0] == 100.0));
        if sampler == "sgld-cv" {
            assert!(
                setup.grad_evals >= n as u64,
                "CV setup must include a full pass"
            );
        }
    }
}

/// On the Gaussian mean model ∇ℓᵢ(μ) = yᵢ − μ, so the naive estimator's noise
/// (n/m) Σ_{i∈S} yᵢ − Σᵢ yᵢ does not depend on μ and has variance V_g = (n²/m)·s²
/// (with replacement; s² the population variance of y) or (n²/m)·s²·(n − m)/(n − 1)
/// (without). The chain is then an AR(1) with stationary variance
/// (h + h²V_g/4) / (1 − (1 − hλ/2)²) (spec 003 §2.0), checked within 4 MCSE at hλ = 1, m = 10.
fn minibatch_variance(with_replacement: bool, seed: u64) {
    let (n, m) = (1000usize, 10usize);
    let (model, mu, lambda) = gaussian_1d(n, 8);
    // ∇ℓᵢ(0) = yᵢ (unit noise variance).
    let y: Vec<f64> = (0..n)
        .map(|i| {
            let mut g = [0.0];
            model.log_lik_grad(&[0.0], i, &mut g);
            g[0]
        })
        .collect();
    let ybar = mean(&y);
    let s2 = y.iter().map(|v| (v - ybar) * (v - ybar)).sum::<f64>() / n as f64;
    let fpc = if with_replacement {
        1.0
    } else {
        (n - m) as f64 / (n - 1) as f64
    };
    let v_g = (n * n) as f64 / m as f64 * s2 * fpc;
    let h = 1.0 / lambda;
    let a = 1.0 - h * lambda / 2.0;
    let v_theory = (h + h * h * v_g / 4.0) / (1.0 - a * a);
    let step = format!("step_size={h}");
    let wr = format!("with_replacement={with_replacement}");
    let r = run_sampler(
        "sgld",
        model,
        &[&step, "batch_size=10", &wr, "init=model"],
        seed,
        200,
        20_000,
    );
    let x = r.col(0);
    let vz = variance_z(&x, mu, v_theory);
    let (mx, se) = (mean(&x), mcse_mean(&x));
    eprintln!(
        "with_replacement={with_replacement}: var {:.4e} theory {v_theory:.4e} (z {vz:+.2}), exact-gradient {:.4e}; mean z {:+.2}",
        var(&x),
        4.0 / (3.0 * lambda),
        (mx - mu) / se
    );
    assert!(vz.abs() <= 4.0, "stationary variance off by {vz} MCSE");
    assert!((mx - mu).abs() <= 4.0 * se, "mean {mx} vs {mu} (mcse {se})");
    assert!(r.stats.iter().all(|s| s.grad_evals == m as u64));
}

#[test]
fn minibatch_stationary_variance_with_replacement() {
    minibatch_variance(true, 51);
}

#[test]
fn minibatch_stationary_variance_without_replacement() {
    minibatch_variance(false, 52);
}

/// At the centre the control-variate estimate is the exact gradient ∇ log π(θ̂) (the minibatch
/// terms cancel), and averaged over many batches the naive estimate at any θ approaches
/// ∇ log π(θ) (unbiasedness, within 4 standard errors).
#[test]
fn gradient_estimators_centre_exactness_and_unbiasedness() {
    use tallmc_core::kernel::sgmcmc::GradientEstimator;
    use tallmc_core::optim::{find_mode, ModeOptions};
    let n = 2000;
    let (model, _, _) = gaussian_1d(n, 10);
    let exact = |theta: f64| {
        let mut g = [0.0];
        model.log_prior_grad(&[theta], &mut g);
        model.log_lik_grad_all(&[theta], &mut g);
        g[0]
    };
    let mode = find_mode(model.as_ref(), &[0.0], &ModeOptions::default()).expect("mode");
    let (mut cv, cost) =
        GradientEstimator::control_variate(model.as_ref(), &mode.mode, 50, false).expect("cv");
    assert_eq!(cost.grad_evals, n as u64);
    let mut rng = chain_rng(3, 0);
    let mut g = [0.0];
    assert_eq!(
        cv.estimate(&mut rng, model.as_ref(), &mode.mode, &mut g),
        100
    );
    let g_exact = exact(mode.mode[0]);
    assert!((g[0] - g_exact).abs() <= 1e-9 * (1.0 + g_exact.abs()));
    for with_replacement in [true, false] {
        let mut naive = GradientEstimator::naive(n, 1, 50, with_replacement).expect("naive");
        let theta = 0.3;
        let draws: Vec<f64> = (0..20_000)
            .map(|_| {
                naive.estimate(&mut rng, model.as_ref(), &[theta], &mut g);
                g[0]
            })
            .collect();
        let (m, se) = (mean(&draws), sd(&draws) / (draws.len() as f64).sqrt());
        let truth = exact(theta);
        eprintln!(
            "naive (wr={with_replacement}): mean {m:.3} truth {truth:.3} z {:+.2}",
            (m - truth) / se
        );
        assert!((m - truth).abs() <= 4.0 * se);
    }
}
