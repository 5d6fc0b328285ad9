//! AT4 (spec 003 §5.2): pseudo-variance closed forms and orderings of the minibatch gradient
//! estimators (Putcha 2024, Ch.4), on a synthetic imbalanced logistic regression (N = 1000,
//! d = 5: intercept + 4 N(0, 1) features, ≈ 95% ones, prior N(0, 10 I)).
//!
//! - Closed form vs Monte Carlo: at 3 candidates θ ~ N(θ̂, Σ̂) and batch sizes n ∈ {10, 50, 200},
//!   for uniform with / without replacement, approximate PS, optimal, and their control-variate
//!   versions, the mean of ‖ĝ − g‖² over R = 2000 draws of the sampler's own estimator is within
//!   4 standard errors (sd/√R) of [`GradientEstimator::pseudo_variance`]. The relative errors are
//!   printed (the spec's ±10% holds when 4 SE < 10%).
//! - Without replacement follows the finite-population formula: at n = 200 its Monte Carlo value
//!   is more than 4 SE below the with-replacement formula.
//! - Orderings of the closed forms averaged over 10 candidates, for every n:
//!   V_opt ≤ V_PS < V_uniform; V_CV-opt ≤ V_CV-PS < V_CV-uniform; V_CV-uniform < V_uniform.
//! - Gaussian-mean model: the control-variate estimate is the full gradient (error < 1e−9‖g‖).
//! - The GLM closed forms of the SGLD-CV-PS weights (logistic, linear) equal the per-datum
//!   Hessian formula √tr(∇²ℓᵢ Σ̂ ∇²ℓᵢ).
//! - k-DPP batches (Ch.5): Horvitz–Thompson weights are unbiased (each coordinate within 4 SE);
//!   the thesis's weights 1/(k·Lᵢᵢ/tr L) and the DPP's variance against uniform are printed.

use std::sync::Arc;
use tallmc_core::dist::{self, AliasTable, IndexSampler};
use tallmc_core::estimator::gradient::{
    cv_ps_weights, optimal_weights, per_datum_gradients, ps_weights,
};
use tallmc_core::linalg::Cholesky;
use tallmc_core::model::gaussian::GaussianMean;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, Glm, Logistic};
use tallmc_core::optim::{find_mode, ModeOptions};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::sampler::sgmcmc::{GradientEstimator, KDpp, Subsampler};
use tallmc_tests::*;

fn imbalanced_logistic(n: usize, seed: u64) -> Arc<dyn DataModel> {
    let d = 5;
    let mut rng = chain_rng(seed, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    let beta = [4.0, 1.0, -1.0, 0.5, -0.5];
    for i in 0..n {
        let eta = linear_predictor(&design, &beta, i);
        let p = 1.0 / (1.0 + (-eta).exp());
        design.y[i] = if dist::bernoulli(&mut rng, p) {
            1.0
        } else {
            0.0
        };
    }
    let ones = design.y.iter().sum::<f64>() / n as f64;
    eprintln!("logistic: N = {n}, fraction of ones {ones:.3}");
    Arc::new(Glm::new(
        design,
        Logistic,
        Prior::Normal {
            scale: 10f64.sqrt(),
        },
    ))
}

fn full_gradient(model: &dyn DataModel, theta: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; theta.len()];
    model.log_prior_grad(theta, &mut g);
    model.log_lik_grad_all(theta, &mut g);
    g
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    UniformWr,
    UniformWor,
    Ps,
    Optimal,
}

fn estimator(
    model: &dyn DataModel,
    kind: Kind,
    cv: Option<(&[f64], &[f64])>,
    theta: &[f64],
    m: usize,
) -> GradientEstimator {
    let n = model.n();
    let d = model.dim();
    let sub = match kind {
        Kind::UniformWr => Subsampler::Uniform(IndexSampler::new(n, m, true).unwrap()),
        Kind::UniformWor => Subsampler::Uniform(IndexSampler::new(n, m, false).unwrap()),
        Kind::Ps => {
            let w = match cv {
                Some((mode, cov)) => cv_ps_weights(model, mode, cov).unwrap(),
                None => {
                    // SGLD-PS: weights at the mode.
                    let mode = find_mode(model, &model.initial_point(), &ModeOptions::default())
                        .unwrap()
                        .mode;
                    ps_weights(model, &mode)
                }
            };
            Subsampler::Preferential {
                table: AliasTable::new(&w).unwrap(),
                batch: m,
            }
        }
        Kind::Optimal => {
            let a = per_datum_gradients(model, theta, cv.map(|c| c.0));
            Subsampler::Preferential {
                table: AliasTable::new(&optimal_weights(&a, d)).unwrap(),
                batch: m,
            }
        }
    };
    GradientEstimator::new(model, sub, cv.map(|c| c.0))
        .unwrap()
        .0
}

/// Mean and standard error of ‖ĝ − g‖² over `r` draws.
fn monte_carlo(
    est: &mut GradientEstimator,
    model: &dyn DataModel,
    theta: &[f64],
    g: &[f64],
    r: usize,
    rng: &mut ChainRng,
) -> (f64, f64) {
    let mut out = vec![0.0; theta.len()];
    let s: Vec<f64> = (0..r)
        .map(|_| {
            est.estimate(rng, model, theta, &mut out);
            out.iter().zip(g).map(|(a, b)| (a - b) * (a - b)).sum()
        })
        .collect();
    (mean(&s), sd(&s) / (r as f64).sqrt())
}

struct Setup {
    model: Arc<dyn DataModel>,
    mode: Vec<f64>,
    cov: Vec<f64>,
    candidates: Vec<Vec<f64>>,
}

fn setup() -> Setup {
    let model = imbalanced_logistic(1000, 404);
    let r = find_mode(
        model.as_ref(),
        &model.initial_point(),
        &ModeOptions::default(),
    )
    .unwrap();
    let cov = r.covariance().unwrap();
    let d = model.dim();
    let ch = Cholesky::new(&cov, d).unwrap();
    let mut rng = chain_rng(405, 0);
    let candidates = (0..10)
        .map(|_| {
            let z: Vec<f64> = (0..d).map(|_| dist::std_normal(&mut rng)).collect();
            let mut lz = vec![0.0; d];
            ch.mul_l(&z, &mut lz);
            r.mode.iter().zip(&lz).map(|(m, e)| m + e).collect()
        })
        .collect();
    Setup {
        model,
        mode: r.mode,
        cov,
        candidates,
    }
}

#[test]
fn at4_closed_form_matches_monte_carlo() {
    let s = setup();
    let model = s.model.as_ref();
    let mut rng = chain_rng(406, 0);
    let r = 2000;
    let mut within10 = 0;
    let mut total = 0;
    for theta in s.candidates.iter().take(3) {
        let g = full_gradient(model, theta);
        for m in [10usize, 50, 200] {
            for cv in [false, true] {
                let centre = cv.then_some((s.mode.as_slice(), s.cov.as_slice()));
                for kind in [Kind::UniformWr, Kind::UniformWor, Kind::Ps, Kind::Optimal] {
                    let mut est = estimator(model, kind, centre, theta, m);
                    let v = est.pseudo_variance(model, theta).unwrap();
                    let (mc, se) = monte_carlo(&mut est, model, theta, &g, r, &mut rng);
                    let z = (mc - v) / se;
                    total += 1;
                    if (mc / v - 1.0).abs() <= 0.1 {
                        within10 += 1;
                    }
                    eprintln!(
                        "m {m:3} cv {cv:5} {kind:?}: closed {v:.4e} MC {mc:.4e} (rel {:+.3}, z {z:+.2})",
                        mc / v - 1.0
                    );
                    assert!(z.abs() <= 4.0, "{kind:?} cv={cv} m={m}: z = {z}");
                    if kind == Kind::UniformWor && m == 200 {
                        // The with-replacement formula is clearly wrong here.
                        let wr = est_wr_formula(model, theta, centre.map(|c| c.0), m);
                        assert!(
                            (wr - mc) / se > 4.0,
                            "WOR at m = 200 not distinguishable from WR: {wr} vs {mc} ± {se}"
                        );
                    }
                }
            }
        }
    }
    eprintln!("{within10}/{total} closed forms within ±10% of the Monte Carlo value");
}

fn est_wr_formula(model: &dyn DataModel, theta: &[f64], centre: Option<&[f64]>, m: usize) -> f64 {
    let a = per_datum_gradients(model, theta, centre);
    tallmc_core::estimator::gradient::pseudo_variance_uniform(&a, model.dim(), m, true)
}

#[test]
fn at4_orderings() {
    let s = setup();
    let model = s.model.as_ref();
    let centre = Some((s.mode.as_slice(), s.cov.as_slice()));
    for m in [10usize, 50, 200] {
        let mut avg = [0.0f64; 6];
        for theta in &s.candidates {
            let v = |kind, cv: bool| {
                estimator(model, kind, if cv { centre } else { None }, theta, m)
                    .pseudo_variance(model, theta)
                    .unwrap()
                    / s.candidates.len() as f64
            };
            avg[0] += v(Kind::UniformWr, false);
            avg[1] += v(Kind::Ps, false);
            avg[2] += v(Kind::Optimal, false);
            avg[3] += v(Kind::UniformWr, true);
            avg[4] += v(Kind::Ps, true);
            avg[5] += v(Kind::Optimal, true);
        }
        eprintln!(
            "m {m}: SGLD uniform {:.3e} PS {:.3e} opt {:.3e}; CV uniform {:.3e} PS {:.3e} opt {:.3e}",
            avg[0], avg[1], avg[2], avg[3], avg[4], avg[5]
        );
        assert!(
            avg[2] <= avg[1] && avg[1] < avg[0],
            "SGLD: opt ≤ PS < uniform"
        );
        assert!(
            avg[5] <= avg[4] && avg[4] < avg[3],
            "CV: opt ≤ PS < uniform"
        );
        assert!(avg[3] < avg[0], "CV-uniform < SGLD-uniform");
    }
}

#[test]
fn at4_control_variate_exact_for_gaussian_mean() {
    let (n, d) = (1000, 2);
    let cov = vec![1e5, 6e4, 6e4, 2e5];
    let ch = Cholesky::new(&cov, d).unwrap();
    let mut rng = chain_rng(407, 0);
    let mut y = Vec::with_capacity(n * d);
    for _ in 0..n {
        let z = [dist::std_normal(&mut rng), dist::std_normal(&mut rng)];
        let mut lz = [0.0; 2];
        ch.mul_l(&z, &mut lz);
        y.extend_from_slice(&[lz[0], 1.0 + lz[1]]);
    }
    let model = GaussianMean::new(
        y,
        d,
        vec!["t1".into(), "t2".into()],
        cov,
        Prior::Normal {
            scale: 1e3f64.sqrt(),
        },
    )
    .unwrap();
    let mode = find_mode(&model, &[0.0, 0.0], &ModeOptions::default())
        .unwrap()
        .mode;
    let sub = Subsampler::Uniform(IndexSampler::new(n, 10, false).unwrap());
    let (mut est, _) = GradientEstimator::new(&model, sub, Some(&mode)).unwrap();
    let mut out = [0.0; 2];
    for _ in 0..20 {
        let theta = [
            mode[0] + 30.0 * dist::std_normal(&mut rng),
            mode[1] + 30.0 * dist::std_normal(&mut rng),
        ];
        est.estimate(&mut rng, &model, &theta, &mut out);
        let g = full_gradient(&model, &theta);
        let norm = (g[0] * g[0] + g[1] * g[1]).sqrt();
        let err = ((out[0] - g[0]).powi(2) + (out[1] - g[1]).powi(2)).sqrt();
        assert!(err <= 1e-9 * norm, "CV error {err} vs ‖g‖ {norm}");
    }
    assert!(est.pseudo_variance(&model, &mode).unwrap().abs() < 1e-12);
}

#[test]
fn dpp_horvitz_thompson_is_unbiased() {
    let s = setup();
    let model = s.model.as_ref();
    let glm = model.as_glm().unwrap();
    let des = glm.design();
    let (n, d) = (des.n, des.d);
    let k = 10;
    let theta = &s.candidates[0];
    let g = full_gradient(model, theta);
    let mut rng = chain_rng(408, 0);
    let r = 2000;
    let uni = estimator(model, Kind::UniformWr, None, theta, k);
    let v_uni = uni.pseudo_variance(model, theta).unwrap();
    for w in [0.1, 0.7] {
        let p = d + 1;
        let mut f = Vec::with_capacity(n * p);
        for i in 0..n {
            f.extend(des.row(i).iter().map(|x| (1.0 - w) * x));
            f.push(w * des.y[i]);
        }
        let dpp = KDpp::linear_kernel(&f, n, p, 0.1, k).unwrap();
        let pi = dpp.inclusion_probabilities().to_vec();
        let lii: Vec<f64> = f
            .chunks(p)
            .map(|r| r.iter().map(|v| v * v).sum::<f64>() + 0.1)
            .collect();
        let tr: f64 = lii.iter().sum();
        for (label, weights) in [
            ("HT 1/π", pi.iter().map(|v| 1.0 / v).collect::<Vec<_>>()),
            (
                "thesis 1/(k Lᵢᵢ/tr L)",
                lii.iter().map(|l| tr / (k as f64 * l)).collect(),
            ),
        ] {
            let sub = Subsampler::Dpp {
                dpp: Box::new(dpp.clone()),
                weights,
            };
            let (mut est, _) = GradientEstimator::new(model, sub, None).unwrap();
            let mut out = vec![0.0; d];
            let draws: Vec<Vec<f64>> = (0..r)
                .map(|_| {
                    est.estimate(&mut rng, model, theta, &mut out);
                    out.clone()
                })
                .collect();
            let zs: Vec<f64> = (0..d)
                .map(|j| {
                    let c = column(&draws, j);
                    (mean(&c) - g[j]) / (sd(&c) / (r as f64).sqrt())
                })
                .collect();
            let v: f64 = draws
                .iter()
                .map(|x| {
                    x.iter()
                        .zip(&g)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f64>()
                })
                .sum::<f64>()
                / r as f64;
            eprintln!(
                "w {w} {label}: bias z {zs:+.2?}; E‖ĝ − g‖² {v:.4e} vs uniform-WR {v_uni:.4e} (ratio {:.2})",
                v / v_uni
            );
            if label.starts_with("HT") {
                assert!(zs.iter().all(|z| z.abs() <= 4.0), "HT biased: {zs:?}");
            }
        }
    }
}

/// The GLM closed forms of the SGLD-CV-PS weights (logistic sᵢ(1 − sᵢ)‖xᵢ‖√(xᵢᵀΣ̂xᵢ), linear
/// ‖xᵢ‖√(xᵢᵀΣ̂xᵢ)/σ²) equal √tr(∇²ℓᵢ Σ̂ ∇²ℓᵢ) from the per-datum Hessians (1e−10 relative).
#[test]
fn cv_ps_closed_forms_match_hessian_formula() {
    use tallmc_core::model::GaussianNoise;
    let s = setup();
    let mut rng = chain_rng(409, 0);
    let mut design = gaussian_design(300, 4, &mut rng);
    for i in 0..300 {
        design.y[i] =
            linear_predictor(&design, &[1.0, 0.5, -0.5, 0.2], i) + 2.0 * dist::std_normal(&mut rng);
    }
    let linear: Arc<dyn DataModel> = Arc::new(Glm::new(
        design,
        GaussianNoise { sd: 2.0 },
        Prior::Normal { scale: 10.0 },
    ));
    for (label, model) in [("logistic", s.model.clone()), ("linear", linear)] {
        let d = model.dim();
        let r = find_mode(
            model.as_ref(),
            &model.initial_point(),
            &ModeOptions::default(),
        )
        .unwrap();
        let cov = r.covariance().unwrap();
        let w = cv_ps_weights(model.as_ref(), &r.mode, &cov).unwrap();
        assert_eq!(w.len(), model.n());
        for (i, &wi) in w.iter().enumerate() {
            let mut h = vec![0.0; d * d];
            model.log_lik_hess(&r.mode, i, &mut h);
            let mut t = 0.0;
            for a in 0..d {
                for b in 0..d {
                    let hs: f64 = (0..d).map(|k| h[a * d + k] * cov[k * d + b]).sum();
                    t += hs * h[b * d + a];
                }
            }
            let want = t.max(0.0).sqrt();
            assert!(
                (wi - want).abs() <= 1e-10 * want.max(1e-300),
                "{label} datum {i}: {wi} vs {want}"
            );
        }
        assert!(cv_ps_weights(model.as_ref(), &r.mode, &cov[1..]).is_err());
    }
}
