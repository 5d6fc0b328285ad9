//! SMH (spec 004 §5.2) T1 — the Poisson-thinning stage passes with probability exactly
//! exp(−Σλᵢ) and processes Λ points on average; α_SMH ≤ α_MH (Prop. 2.1).
//! T2 — λᵢ ≤ φψᵢ for every datum at pairs from 10⁻³ to 10 posterior sds from θ̂, for logistic and
//! robust regression, orders 1 and 2; the family sup constants match a grid maximisation.

use crate::smh_common::{logistic, robust};
use tallmc_core::dist;
use tallmc_core::kernel::smh::{BoundNorm, Smh, SmhOptions, SmhProposal};
use tallmc_core::linalg::Cholesky;
use tallmc_core::model::glm::{GlmFamily, Logistic, StudentT};
use tallmc_core::model::DataModel;
use tallmc_core::rng::{chain_rng, uniform};

fn smh(model: &dyn DataModel, order: usize, start: &[f64], norm: BoundNorm) -> Smh {
    let opts = SmhOptions {
        order,
        proposal: SmhProposal::RandomWalk { scale: 1.0 },
        norm,
        ..SmhOptions::default()
    };
    Smh::with_start(model, &opts, start).expect("smh setup")
}

/// Posterior sds of the Laplace approximation.
fn laplace_sd(k: &Smh) -> Vec<f64> {
    let d = k.theta_hat().len();
    let cov = Cholesky::new(k.neg_hessian(), d).expect("pd").inverse();
    (0..d).map(|j| cov[j * d + j].sqrt()).collect()
}

#[test]
fn t1_thinning_identity() {
    let (n, d) = (1000, 10);
    let model = logistic(n, d, 1);
    let view = model.as_glm().expect("glm");
    let mut rng = chain_rng(11, 0);
    for (order, norm) in [
        (1usize, BoundNorm::L1),
        (2, BoundNorm::L1),
        (1, BoundNorm::L2),
        (2, BoundNorm::L2),
    ] {
        let k = smh(model.as_ref(), order, &vec![0.0; d], norm);
        let th = k.theta_hat().to_vec();
        let mut tested = 0;
        let mut attempt = 0;
        while tested < 5 && attempt < 200 {
            attempt += 1;
            let u: Vec<f64> = (0..d).map(|_| 2.0 * dist::std_normal(&mut rng)).collect();
            let v: Vec<f64> = (0..d).map(|_| 2.0 * dist::std_normal(&mut rng)).collect();
            // Shrink the pair until the exact pass probability is in [0.05, 0.95].
            let mut s = 1.0 / (n as f64).sqrt();
            let mut found = None;
            for _ in 0..60 {
                let a: Vec<f64> = (0..d).map(|j| th[j] + s * u[j]).collect();
                let b: Vec<f64> = (0..d).map(|j| th[j] + s * v[j]).collect();
                let tot: f64 = (0..n).map(|i| k.lambda_i(view, &a, &b, i)).sum();
                let alpha = (-tot).exp();
                if (0.05..=0.95).contains(&alpha) {
                    found = Some((a, b, alpha));
                    break;
                }
                s *= if alpha < 0.05 { 0.8 } else { 1.25 };
            }
            let Some((a, b, alpha)) = found else { continue };
            tested += 1;
            let big = k.bound(&a, &b);
            // Each pass costs up to Λ points; keep the total work near 5·10⁶ points.
            let reps = (5e6 / big.max(1.0)).clamp(1e4, 1e6) as usize;
            let mut pass = 0usize;
            for _ in 0..reps {
                if k.thinning(&mut rng, view, &a, &b, true).0 {
                    pass += 1;
                }
            }
            let p = pass as f64 / reps as f64;
            let tol = 4.0 * (alpha * (1.0 - alpha) / reps as f64).sqrt();
            eprintln!("k={order} α*={alpha:.4} p̂={p:.4} tol={tol:.4} Λ={big:.1} reps={reps}");
            assert!((p - alpha).abs() <= tol, "k={order}: p̂ {p} vs α* {alpha}");
            let reps2 = (2.5e6 / big.max(1.0)).clamp(1e3, 1e5) as usize;
            let mut pts = 0u64;
            for _ in 0..reps2 {
                pts += k.thinning(&mut rng, view, &a, &b, false).1;
            }
            let m = pts as f64 / reps2 as f64;
            let tol2 = 4.0 * (big / reps2 as f64).sqrt();
            assert!(
                (m - big).abs() <= tol2,
                "k={order}: mean points {m} vs Λ {big}"
            );
        }
        assert_eq!(
            tested, 5,
            "k={order}: could not find 5 pairs with α* in [0.05, 0.95]"
        );

        // Prop. 2.1: α_SMH ≤ α_MH on random pairs around θ̂.
        let sd = laplace_sd(&k);
        for _ in 0..2000 {
            let a: Vec<f64> = (0..d)
                .map(|j| th[j] + sd[j] * dist::std_normal(&mut rng))
                .collect();
            let b: Vec<f64> = (0..d)
                .map(|j| a[j] + sd[j] * dist::std_normal(&mut rng))
                .collect();
            let l0 = k.log_first_factor(model.as_ref(), &a, &b).min(0.0);
            let tot: f64 = (0..n).map(|i| k.lambda_i(view, &a, &b, i)).sum();
            let log_smh = l0 - tot;
            let log_mh = (model.log_lik_all(&b) - model.log_lik_all(&a)).min(0.0);
            assert!(log_smh <= log_mh + 1e-9, "α_SMH {log_smh} > α_MH {log_mh}");
        }
    }
}

fn check_bounds(model: &dyn DataModel, order: usize, start: &[f64], seed: u64) {
    for norm in [BoundNorm::L1, BoundNorm::L2] {
        check_bounds_norm(model, order, start, seed, norm);
    }
}

fn check_bounds_norm(
    model: &dyn DataModel,
    order: usize,
    start: &[f64],
    seed: u64,
    norm: BoundNorm,
) {
    let view = model.as_glm().expect("glm");
    let k = smh(model, order, start, norm);
    let th = k.theta_hat().to_vec();
    let d = th.len();
    let sd = laplace_sd(&k);
    let mut rng = chain_rng(seed, 0);
    let mut worst = 0.0f64;
    for _ in 0..2000 {
        // Distances log-uniform in [10⁻³, 10] posterior sds, independently for θ and θ′.
        let sa = 10f64.powf(-3.0 + 4.0 * uniform(&mut rng));
        let sb = 10f64.powf(-3.0 + 4.0 * uniform(&mut rng));
        let a: Vec<f64> = (0..d)
            .map(|j| th[j] + sa * sd[j] * dist::std_normal(&mut rng))
            .collect();
        let b: Vec<f64> = (0..d)
            .map(|j| th[j] + sb * sd[j] * dist::std_normal(&mut rng))
            .collect();
        let phi = k.phi(&a, &b);
        for (i, &psi) in k.psi().iter().enumerate() {
            let lam = k.lambda_i(view, &a, &b, i);
            let lbar = phi * psi;
            assert!(
                lam <= lbar * (1.0 + 1e-9) + 1e-300,
                "k={order} datum {i}: λ {lam} > bound {lbar}"
            );
            if lbar > 0.0 {
                worst = worst.max(lam / lbar);
            }
        }
    }
    eprintln!("k={order} {norm:?}: max λᵢ/(φψᵢ) = {worst:.3}");
}

#[test]
fn t2_bounds_hold_logistic() {
    let (n, d) = (2000, 10);
    let model = logistic(n, d, 2);
    for order in [1, 2] {
        check_bounds(model.as_ref(), order, &vec![0.0; d], 20 + order as u64);
    }
}

#[test]
fn t2_bounds_hold_robust() {
    let (n, d) = (2000, 10);
    let model = robust(n, d, 3);
    for order in [1, 2] {
        // Start the mode search at the generating θ₀ (Newton from 0 can stall, spec §6.16).
        check_bounds(model.as_ref(), order, &vec![1.0; d], 30 + order as u64);
    }
}

fn grid_sup(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let m = 2_000_000;
    (0..=m)
        .map(|k| f(lo + (hi - lo) * k as f64 / m as f64).abs())
        .fold(0.0, f64::max)
}

#[test]
fn t2_sup_constants() {
    let lg = Logistic;
    let s3 = grid_sup(|e| lg.d3(1.0, e), -20.0, 20.0);
    assert!((s3 - lg.d3_bound().unwrap()).abs() < 1e-6, "{s3}");
    assert!((s3 - 1.0 / (6.0 * 3f64.sqrt())).abs() < 1e-6);
    let s2 = grid_sup(|e| lg.d2(1.0, e), -20.0, 20.0);
    assert!((s2 - 0.25).abs() < 1e-6);
    let st = StudentT::default();
    let g2 = grid_sup(|e| st.d2(0.0, e), -50.0, 50.0);
    let g3 = grid_sup(|e| st.d3(0.0, e), -50.0, 50.0);
    assert!((g2 - 1.25).abs() < 1e-6, "{g2}");
    assert!((g3 - 0.910_70).abs() < 1e-5, "{g3}");
    assert!((g2 - st.d2_bound().unwrap()).abs() < 1e-6);
    assert!((g3 - st.d3_bound().unwrap()).abs() < 1e-6);
}
