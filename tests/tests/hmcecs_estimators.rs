//! Spec 000 (HMC-ECS) Test 1 (a)–(e): the estimators.
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_estimators::`

use crate::hmcecs_common::*;

use tallmc_core::estimator::{BlockPoisson, ControlVariates, DiffEstimator, DiffEval, PoissonEval};
use tallmc_core::model::DataModel;
use tallmc_core::rng::chain_rng;

/// A point about `k` posterior sds (per coordinate) away from the mode.
fn offset(mode: &[f64], prec: &[f64], k: f64) -> Vec<f64> {
    let d = mode.len();
    (0..d)
        .map(|j| {
            let sd = 1.0 / prec[j * d + j].sqrt();
            mode[j] + k * sd * if j % 2 == 0 { 1.0 } else { -0.7 }
        })
        .collect()
}

fn brute_proxy_sum(model: &dyn DataModel, centre: &[f64], theta: &[f64], order: usize) -> f64 {
    let d = model.dim();
    let delta: Vec<f64> = theta.iter().zip(centre).map(|(a, b)| a - b).collect();
    let mut s = 0.0;
    let mut g = vec![0.0; d];
    let mut h = vec![0.0; d * d];
    for k in 0..model.n() {
        g.iter_mut().for_each(|x| *x = 0.0);
        h.iter_mut().for_each(|x| *x = 0.0);
        let l = model.log_lik_grad(centre, k, &mut g);
        model.log_lik_hess(centre, k, &mut h);
        let mut q = l;
        if order >= 1 {
            q += (0..d).map(|i| g[i] * delta[i]).sum::<f64>();
        }
        if order == 2 {
            for i in 0..d {
                for j in 0..d {
                    q += 0.5 * delta[i] * h[i * d + j] * delta[j];
                }
            }
        }
        s += q;
    }
    s
}

#[test]
fn a_proxy_sum_matches_brute_force() {
    let (model, _) = logistic_data(5_000, 8, 11);
    let (mode, prec) = posterior_mode(&model);
    let centre = offset(&mode, &prec, 3.0);
    let theta = offset(&mode, &prec, -2.0);
    for order in 0..=2 {
        for m in [
            &model as &dyn DataModel,
            &Opaque(logistic_data(5_000, 8, 11).0),
        ] {
            let cv = ControlVariates::new(m, &centre, order).unwrap();
            let fast = cv.proxy_sum(&theta, None);
            let brute = brute_proxy_sum(m, &centre, &theta, order);
            let rel = ((fast - brute) / brute).abs();
            println!("order {order}: summary {fast:.10e} brute {brute:.10e} rel {rel:.2e}");
            assert!(rel <= 1e-10, "order {order}: rel err {rel}");
            // Σq + Σd over all data reproduces ℓ(θ)
            let idx: Vec<usize> = (0..m.n()).collect();
            let mut ds = vec![0.0; m.n()];
            cv.diffs(m, &theta, &idx, &mut ds, &mut []);
            let ell = m.log_lik_all(&theta);
            let rec = fast + ds.iter().sum::<f64>();
            assert!(((rec - ell) / ell).abs() < 1e-10);
        }
    }
}

fn fd_grad(f: &dyn Fn(&[f64]) -> f64, theta: &[f64], h: f64) -> Vec<f64> {
    let mut t = theta.to_vec();
    (0..theta.len())
        .map(|j| {
            t[j] = theta[j] + h;
            let fp = f(&t);
            t[j] = theta[j] - h;
            let fm = f(&t);
            t[j] = theta[j];
            (fp - fm) / (2.0 * h)
        })
        .collect()
}

#[test]
fn b_gradients_match_finite_differences() {
    let (glm, _) = logistic_data(50_000, 8, 12);
    let (mode, prec) = posterior_mode(&glm);
    // a poor centre so that σ̂² and its gradient are far from zero
    let centre = offset(&mode, &prec, 4.0);
    let theta = offset(&mode, &prec, -1.5);
    let opaque = Opaque(logistic_data(50_000, 8, 12).0);
    for (name, model) in [("glm", &glm as &dyn DataModel), ("general", &opaque)] {
        for order in 0..=2 {
            let cv = ControlVariates::new(model, &centre, order).unwrap();
            let est = DiffEstimator::new(model.n(), 200, 10).unwrap();
            let mut rng = chain_rng(5, 0);
            let u = est.draw(&mut rng);
            let mut e = DiffEval::default();
            est.evaluate(model, &cv, &theta, &u, true, &mut e);
            let f = |t: &[f64]| {
                let mut e = DiffEval::default();
                est.evaluate(model, &cv, t, &u, false, &mut e);
                e.log_lhat
            };
            let fd = fd_grad(&f, &theta, 1e-6);
            let rel = rel_err(&e.grad, &fd);
            println!(
                "{name} order {order}: σ̂² = {:.3e}, grad rel err {rel:.2e}",
                e.sigma2
            );
            assert!(e.sigma2 > 0.0);
            assert!(rel <= 1e-5, "{name} order {order}: {rel}");
        }
    }
    // block-Poisson: ∇log|L̂|
    let cv = ControlVariates::new(&glm, &centre, 2).unwrap();
    let all: Vec<usize> = (0..glm.n()).collect();
    let mut ds = vec![0.0; glm.n()];
    cv.diffs(&glm, &theta, &all, &mut ds, &mut []);
    let dsum: f64 = ds.iter().sum();
    let bp = BlockPoisson::new(glm.n(), 30, 20, dsum - 20.0).unwrap();
    let mut rng = chain_rng(6, 0);
    let u = bp.draw(&mut rng);
    let mut e = PoissonEval::default();
    bp.evaluate(&glm, &cv, &theta, &u, true, &mut e);
    let f = |t: &[f64]| {
        let mut e = PoissonEval::default();
        bp.evaluate(&glm, &cv, t, &u, false, &mut e);
        e.log_abs
    };
    let fd = fd_grad(&f, &theta, 1e-6);
    let rel = rel_err(&e.grad, &fd);
    println!(
        "block-Poisson: log|L̂| = {:.4}, sign {}, grad rel err {rel:.2e}",
        e.log_abs, e.sign
    );
    assert!(rel <= 1e-5, "block-Poisson grad: {rel}");
}

#[test]
fn c_difference_estimator_is_unbiased_and_sigma2_is_its_variance() {
    let (model, _) = logistic_data(50_000, 8, 13);
    let (mode, prec) = posterior_mode(&model);
    // centre at a subset-quality point, θ one sd away: σ̂² of order 1
    let centre = offset(&mode, &prec, 3.0);
    let theta = offset(&mode, &prec, -2.0);
    let cv = ControlVariates::new(&model, &centre, 2).unwrap();
    let est = DiffEstimator::new(model.n(), 200, 1).unwrap();
    let ell = model.log_lik_all(&theta);
    let mut rng = chain_rng(7, 0);
    let n_rep = 20_000;
    let mut lh = Vec::with_capacity(n_rep);
    let mut s2 = Vec::with_capacity(n_rep);
    let mut e = DiffEval::default();
    for _ in 0..n_rep {
        let u = est.draw(&mut rng);
        est.evaluate(&model, &cv, &theta, &u, false, &mut e);
        lh.push(e.ell_hat - ell);
        s2.push(e.sigma2);
    }
    let (mean, var) = mean_var(&lh);
    let se = (var / n_rep as f64).sqrt();
    let ms2 = s2.iter().sum::<f64>() / n_rep as f64;
    println!(
        "mean(ℓ̂ − ℓ) = {mean:.4e} (SE {se:.2e}); Var(ℓ̂) = {var:.4}, mean σ̂² = {ms2:.4}, ratio {:.4}",
        ms2 / var
    );
    assert!(mean.abs() <= 4.0 * se);
    assert!((0.9..=1.1).contains(&(ms2 / var)));
}

#[test]
fn d_exact_for_gaussian_regression_and_at_centre() {
    let glm = linear_data(10_000, 6, 14);
    let opaque = Opaque(linear_data(10_000, 6, 14));
    let mut rng = chain_rng(8, 0);
    for model in [&glm as &dyn DataModel, &opaque] {
        let centre: Vec<f64> = (0..6)
            .map(|_| tallmc_core::dist::std_normal(&mut rng))
            .collect();
        let cv = ControlVariates::new(model, &centre, 2).unwrap();
        let est = DiffEstimator::new(model.n(), 100, 10).unwrap();
        for _ in 0..5 {
            let theta: Vec<f64> = (0..6)
                .map(|_| tallmc_core::dist::std_normal(&mut rng))
                .collect();
            let u = est.draw(&mut rng);
            let mut e = DiffEval::default();
            est.evaluate(model, &cv, &theta, &u, false, &mut e);
            let ell = model.log_lik_all(&theta);
            let rel = ((e.ell_hat - ell) / ell).abs();
            assert!(rel <= 1e-9, "ℓ̂ rel err {rel}");
            assert!(e.sigma2 <= 1e-9 * ell.abs(), "σ̂² = {}", e.sigma2);
        }
    }
    // any model at θ = θ*: dₖ = 0
    let (logit, _) = logistic_data(5_000, 8, 15);
    let centre = vec![0.3; 8];
    for order in 0..=2 {
        let cv = ControlVariates::new(&logit, &centre, order).unwrap();
        let est = DiffEstimator::new(logit.n(), 100, 10).unwrap();
        let u = est.draw(&mut rng);
        let mut e = DiffEval::default();
        est.evaluate(&logit, &cv, &centre, &u, true, &mut e);
        assert_eq!(e.sigma2, 0.0);
        let ell = logit.log_lik_all(&centre);
        assert!(((e.ell_hat - ell) / ell).abs() < 1e-12);
    }
}

#[test]
fn e_block_poisson_is_unbiased_with_predicted_variance() {
    let (model, _) = logistic_data(50_000, 8, 16);
    let (mode, prec) = posterior_mode(&model);
    let centre = offset(&mode, &prec, 2.0);
    let cv = ControlVariates::new(&model, &centre, 2).unwrap();
    let n = model.n();
    let all: Vec<usize> = (0..n).collect();
    let mut ds = vec![0.0; n];
    let m = 30;
    // choose θ on a fixed grid of offsets so that σ² = Var(d̂) is near 6 (relative variance ≈ 0.35)
    let mut best = (f64::INFINITY, vec![], 0.0, 0.0);
    for k in [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0] {
        let theta = offset(&mode, &prec, -k);
        cv.diffs(&model, &theta, &all, &mut ds, &mut []);
        let (mu, _) = mean_var(&ds);
        let pv = ds.iter().map(|x| (x - mu) * (x - mu)).sum::<f64>() / n as f64;
        let sigma2 = (n as f64).powi(2) * pv / m as f64;
        if (sigma2.ln() - 6f64.ln()).abs() < best.0 {
            best = (
                (sigma2.ln() - 6f64.ln()).abs(),
                theta,
                sigma2,
                mu * n as f64,
            );
        }
    }
    let (_, theta, sigma2, dsum) = best;
    let lambda = 20;
    let a = dsum - lambda as f64;
    let bp = BlockPoisson::new(n, m, lambda, a).unwrap();
    let ell = model.log_lik_all(&theta);
    let mut rng = chain_rng(9, 0);
    let reps = 100_000;
    let mut r = Vec::with_capacity(reps);
    let mut e = PoissonEval::default();
    let mut pos = 0usize;
    for _ in 0..reps {
        let u = bp.draw(&mut rng);
        bp.evaluate(&model, &cv, &theta, &u, false, &mut e);
        r.push((e.log_abs - ell).exp() * e.sign);
        pos += usize::from(e.sign > 0.0);
    }
    let (mean, var) = mean_var(&r);
    let se = (var / reps as f64).sqrt();
    let l = lambda as f64;
    let predicted = (l * ((dsum - a) / l - 1.0).powi(2) + sigma2 / l).exp() - 1.0;
    println!(
        "σ² = {sigma2:.3}: mean(L̂/L) = {mean:.4} ± {se:.4}; Var = {var:.4} vs predicted {predicted:.4}; τ̂ = {:.4}",
        pos as f64 / reps as f64
    );
    assert!((mean - 1.0).abs() <= 4.0 * se);
    assert!((var / predicted - 1.0).abs() <= 0.15);
}

#[test]
fn f_leapfrog_is_reversible_and_second_order() {
    use tallmc_core::kernel::hmcecs::{EcsEstimator, HmcEcs};
    use tallmc_core::sampler::hmcecs::metric_from_precision;
    let (model, _) = logistic_data(50_000, 8, 17);
    let (mode, prec) = posterior_mode(&model);
    let centre = offset(&mode, &prec, 2.0);
    let theta0 = offset(&mode, &prec, -1.0);
    let cv = ControlVariates::new(&model, &centre, 2).unwrap();
    let est = DiffEstimator::new(model.n(), 200, 10).unwrap();
    let metric = metric_from_precision(&prec, 8);
    let kernel = HmcEcs::new(cv, EcsEstimator::Perturbed(est), metric, 0.2, 6).unwrap();
    let mut rng = chain_rng(10, 0);
    let (st, _) = kernel.init_with(&mut rng, &model, &theta0, None).unwrap();
    let mut v = vec![0.0; 8];
    // reversibility: L steps forward, negate p, L steps back
    let mut p0 = vec![0.0; 8];
    kernel.metric.sample_momentum(&mut rng, &mut p0);
    let mut theta = theta0.clone();
    let mut p = p0.clone();
    let mut mid = st.point.clone();
    let (_, ok) = kernel.leapfrog(
        &model, &st.u, &mut theta, &mut p, &st.point, &mut mid, 0.2, 6, &mut v,
    );
    assert!(ok);
    p.iter_mut().for_each(|x| *x = -*x);
    let mut back = mid.clone();
    let (_, ok) = kernel.leapfrog(
        &model, &st.u, &mut theta, &mut p, &mid, &mut back, 0.2, 6, &mut v,
    );
    assert!(ok);
    let dtheta = theta
        .iter()
        .zip(&theta0)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let dp = p
        .iter()
        .zip(&p0)
        .map(|(a, b)| (a + b).abs())
        .fold(0.0, f64::max);
    println!("reversibility: max|Δθ| = {dtheta:.2e}, max|Δp| = {dp:.2e}");
    assert!(dtheta <= 1e-10 && dp <= 1e-10);
    // energy error at fixed u is O(ε²): same trajectory length 1.2 with ε and ε/2
    let mut err = [0.0; 2];
    for rep in 0..50 {
        kernel.metric.sample_momentum(&mut rng, &mut p0);
        for (k, (eps, steps)) in [(0.2, 6), (0.1, 12)].into_iter().enumerate() {
            let mut theta = theta0.clone();
            let mut p = p0.clone();
            let mut end = st.point.clone();
            let h0 = st.point.potential + kernel.metric.kinetic(&p0);
            kernel.leapfrog(
                &model, &st.u, &mut theta, &mut p, &st.point, &mut end, eps, steps, &mut v,
            );
            let h1 = end.potential + kernel.metric.kinetic(&p);
            err[k] += (h1 - h0).abs() / 50.0;
        }
        let _ = rep;
    }
    println!(
        "mean |ΔĤ|: ε = 0.2: {:.3e}, ε = 0.1: {:.3e}, ratio {:.2}",
        err[0],
        err[1],
        err[0] / err[1]
    );
    assert!((3.0..=5.0).contains(&(err[0] / err[1])));
}

/// Spec Test 1(g): the inefficiency-factor estimator used for HMC-ECS cost comparisons
/// (`diag::inefficiency_factor`) recovers the AR(1) integrated autocorrelation time
/// IF = (1+φ)/(1−φ) within 5% at N = 2·10⁵.
#[test]
fn inefficiency_factor_on_ar1() {
    use tallmc_core::dist::std_normal;
    let n = 200_000;
    for (k, &phi) in [0.0f64, 0.5, 0.9].iter().enumerate() {
        let mut rng = chain_rng(20_261_123, k as u64);
        let mut x = Vec::with_capacity(n);
        // Start in the stationary distribution N(0, 1/(1−φ²)).
        let mut v = std_normal(&mut rng) / (1.0 - phi * phi).sqrt();
        for _ in 0..n {
            v = phi * v + std_normal(&mut rng);
            x.push(v);
        }
        let est = tallmc_core::diag::inefficiency_factor(&[&x]);
        let truth = (1.0 + phi) / (1.0 - phi);
        println!("phi = {phi}: IF = {est:.3}, truth {truth:.3}");
        assert!(
            (est / truth - 1.0).abs() <= 0.05,
            "phi = {phi}: IF {est} vs {truth}"
        );
    }
}

/// The θ-step's gathered subsample (`ControlVariates::gather`, `diffs_gathered`, and
/// `diffs_gathered_at` for a mini-batch inside it) gives the
/// same bits as reading the rows through the indices: plain and whitened (offset) logistic
/// and linear models, orders 0–2, with and without gradients; after a block of indices is
/// replaced, after the centre moves, and when the buffers are stale (not gathered again) or do
/// not apply (a model that is not a GLM), in which case it must read the rows directly.
#[test]
fn g_gathered_subsample_gives_the_same_bits() {
    use tallmc_core::estimator::Gathered;
    use tallmc_core::rng::uniform_index;
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let logistic = logistic_data(4_000, 7, 5).0;
    let models: Vec<(&str, Box<dyn DataModel>)> = vec![
        ("logistic", Box::new(logistic_data(4_000, 7, 5).0)),
        ("logistic whitened", Box::new(logistic.whiten())),
        ("linear", Box::new(linear_data(3_000, 5, 6))),
    ];
    let mut rng = chain_rng(9, 0);
    for (name, model) in &models {
        let m = &**model;
        let (d, n) = (m.dim(), m.n());
        let (mode, prec) = posterior_mode(m);
        let centres = [offset(&mode, &prec, 1.5), offset(&mode, &prec, -1.0)];
        let theta = offset(&mode, &prec, 2.5);
        for order in 0..=2 {
            let mut g = Gathered::default();
            let mut idx: Vec<usize> = (0..301).map(|_| uniform_index(&mut rng, n)).collect();
            for (step, centre) in centres.iter().enumerate() {
                let cv = ControlVariates::new(m, centre, order).unwrap();
                for round in 0..3 {
                    if round > 0 {
                        // a u-step's refresh: one block of indices replaced
                        for k in &mut idx[40 * round..40 * round + 40] {
                            *k = uniform_index(&mut rng, n);
                        }
                    }
                    let stale = round == 2;
                    if !stale {
                        assert!(cv.gather(m, &idx, &mut g), "{name}: gather refused");
                    }
                    let (mut d0, mut g0) = (vec![0.0; idx.len()], vec![0.0; idx.len() * d]);
                    let (mut d1, mut g1) = (d0.clone(), g0.clone());
                    cv.diffs(m, &theta, &idx, &mut d0, &mut g0);
                    cv.diffs_gathered(m, &theta, &idx, &g, &mut d1, &mut g1);
                    let what = format!("{name}, order {order}, centre {step}, round {round}");
                    assert_eq!(bits(&d0), bits(&d1), "{what}: differences");
                    assert_eq!(bits(&g0), bits(&g1), "{what}: gradients");
                    cv.diffs(m, &theta, &idx, &mut d0, &mut []);
                    cv.diffs_gathered(m, &theta, &idx, &g, &mut d1, &mut []);
                    assert_eq!(bits(&d0), bits(&d1), "{what}: differences without gradient");
                    assert!(d0.iter().all(|v| v.is_finite()), "{what}");
                    // a mini-batch inside the gathered indices (the signed estimator's)
                    let sub = &idx[90..120];
                    let (mut d2, mut g2) = (vec![0.0; 30], vec![0.0; 30 * d]);
                    cv.diffs_gathered_at(m, &theta, sub, &g, 90, &mut d2, &mut g2);
                    assert_eq!(bits(&d0[90..120]), bits(&d2), "{what}: mini-batch");
                    assert_eq!(bits(&g0[90 * d..120 * d]), bits(&g2), "{what}: mini-batch");
                    // at the wrong position the indices do not match: read directly
                    cv.diffs_gathered_at(m, &theta, sub, &g, 91, &mut d2, &mut g2);
                    assert_eq!(
                        bits(&d0[90..120]),
                        bits(&d2),
                        "{what}: misplaced mini-batch"
                    );
                    // The difference estimator on the gathered subsample (its block sums take
                    // each gradient as cₖ xₖ from the gathered rows) against the indexed
                    // evaluation: ℓ̂, σ̂², log L̂ and the gradient, for several block counts.
                    for blocks in [1, 7, 301] {
                        let est = DiffEstimator::new(n, idx.len(), blocks).unwrap();
                        let (mut e0, mut e1) = (DiffEval::default(), DiffEval::default());
                        for with_grad in [true, false] {
                            est.evaluate(m, &cv, &theta, &idx, with_grad, &mut e0);
                            est.evaluate_gathered(
                                m,
                                &cv,
                                &theta,
                                &idx,
                                Some(&g),
                                with_grad,
                                &mut e1,
                            );
                            let w = format!("{what}, {blocks} blocks, gradient {with_grad}");
                            let scalars = |e: &DiffEval| bits(&[e.ell_hat, e.sigma2, e.log_lhat]);
                            assert_eq!(scalars(&e0), scalars(&e1), "{w}: estimates");
                            assert_eq!(bits(&e0.grad), bits(&e1.grad), "{w}: gradient");
                            assert!(e0.log_lhat.is_finite(), "{w}");
                            assert_eq!(e0.grad.len(), if with_grad { d } else { 0 }, "{w}");
                        }
                    }
                }
            }
        }
    }
    // not a GLM: nothing to gather, the rows are read directly
    let opaque = Opaque(logistic_data(2_000, 4, 8).0);
    let (mode, _) = posterior_mode(&opaque);
    let cv = ControlVariates::new(&opaque, &mode, 2).unwrap();
    let idx: Vec<usize> = (0..50).map(|k| k * 37).collect();
    let mut g = Gathered::default();
    assert!(!cv.gather(&opaque, &idx, &mut g));
    let theta: Vec<f64> = mode.iter().map(|x| x + 0.1).collect();
    let (mut d0, mut d1) = (vec![0.0; 50], vec![0.0; 50]);
    cv.diffs(&opaque, &theta, &idx, &mut d0, &mut []);
    cv.diffs_gathered(&opaque, &theta, &idx, &g, &mut d1, &mut []);
    assert_eq!(bits(&d0), bits(&d1));
}
