//! Every model's per-datum gradient and Hessian, and its prior's, match central finite
//! differences (relative error ≤ 1e-6) at random points; GLM families' η-derivatives and their
//! stated bounds are checked the same way.
//!
//! Relative error of a vector (or matrix) a against a finite-difference estimate b:
//! maxₖ |aₖ − bₖ| / max(1, maxₖ |bₖ|).

use std::sync::Arc;
use tallmc_core::data::DesignSpec;
use tallmc_core::dist::normal;
use tallmc_core::model::glm::{GaussianNoise, GlmFamily, Logistic, Poisson, StudentT};
use tallmc_core::model::DataModel;
use tallmc_core::registry::build_model;
use tallmc_core::rng::{chain_rng, uniform_index};
use tallmc_core::settings::Settings;
use tallmc_core::simulate::{simulate, true_parameters};

const TOL: f64 = 1e-6;

fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / scale
}

fn step(t: f64) -> f64 {
    1e-5 * (1.0 + t.abs())
}

/// Central differences of a scalar function.
fn fd_grad(f: &dyn Fn(&[f64]) -> f64, theta: &[f64]) -> Vec<f64> {
    let mut t = theta.to_vec();
    (0..theta.len())
        .map(|j| {
            let h = step(theta[j]);
            t[j] = theta[j] + h;
            let fp = f(&t);
            t[j] = theta[j] - h;
            let fm = f(&t);
            t[j] = theta[j];
            (fp - fm) / (2.0 * h)
        })
        .collect()
}

/// Central differences of a vector function (its Jacobian, row-major: [k][j] = ∂gₖ/∂θⱼ).
fn fd_jac(g: &dyn Fn(&[f64]) -> Vec<f64>, theta: &[f64]) -> Vec<f64> {
    let d = theta.len();
    let mut t = theta.to_vec();
    let mut jac = vec![0.0; d * d];
    for j in 0..d {
        let h = step(theta[j]);
        t[j] = theta[j] + h;
        let gp = g(&t);
        t[j] = theta[j] - h;
        let gm = g(&t);
        t[j] = theta[j];
        for k in 0..d {
            jac[k * d + j] = (gp[k] - gm[k]) / (2.0 * h);
        }
    }
    jac
}

fn spec() -> DesignSpec {
    DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    }
}

fn settings(pairs: &[&str]) -> Settings {
    let mut s = Settings::new();
    for p in pairs {
        s.insert_pair(p).unwrap();
    }
    s
}

fn build(model: &str, d: usize, pairs: &[&str]) -> Arc<dyn DataModel> {
    let s = settings(pairs);
    let table = simulate(model, 300, d, 11, &s).unwrap();
    let m = build_model(model, &table, &spec(), &s).unwrap();
    s.check_all_used().unwrap();
    m
}

/// Check value, gradient and Hessian of the likelihood (several data) and of the prior at
/// `points` random points around `centre` (spread `spread`).
fn check_model(name: &str, m: &dyn DataModel, centre: &[f64], spread: f64) {
    let d = m.dim();
    assert_eq!(centre.len(), d, "{name}: centre length");
    let mut rng = chain_rng(2024, 3);
    for _ in 0..5 {
        let theta: Vec<f64> = centre
            .iter()
            .map(|&c| normal(&mut rng, c, spread))
            .collect();
        for _ in 0..6 {
            let i = uniform_index(&mut rng, m.n());
            // value consistency
            let mut g = vec![0.0; d];
            let v = m.log_lik_grad(&theta, i, &mut g);
            let v0 = m.log_lik(&theta, i);
            assert!(
                (v - v0).abs() <= 1e-12 * (1.0 + v0.abs()),
                "{name}: log_lik_grad value {v} vs log_lik {v0}"
            );
            // gradient
            let fd = fd_grad(&|t| m.log_lik(t, i), &theta);
            let e = rel_err(&g, &fd);
            assert!(
                e <= TOL,
                "{name}: log_lik_grad rel err {e:e} at datum {i}, θ={theta:?}\n{g:?}\n{fd:?}"
            );
            // Hessian
            let mut h = vec![0.0; d * d];
            m.log_lik_hess(&theta, i, &mut h);
            let fdh = fd_jac(
                &|t| {
                    let mut gg = vec![0.0; d];
                    m.log_lik_grad(t, i, &mut gg);
                    gg
                },
                &theta,
            );
            let e = rel_err(&h, &fdh);
            assert!(
                e <= TOL,
                "{name}: log_lik_hess rel err {e:e} at datum {i}\n{h:?}\n{fdh:?}"
            );
            // accumulation: a second call adds the same again
            m.log_lik_grad(&theta, i, &mut g);
            let twice: Vec<f64> = fd.iter().map(|x| 2.0 * x).collect();
            assert!(
                rel_err(&g, &twice) <= TOL,
                "{name}: gradient must accumulate"
            );
        }
        // prior
        let mut g = vec![0.0; d];
        let v = m.log_prior_grad(&theta, &mut g);
        let v0 = m.log_prior(&theta);
        assert!(
            (v - v0).abs() <= 1e-12 * (1.0 + v0.abs()),
            "{name}: prior value"
        );
        let fd = fd_grad(&|t| m.log_prior(t), &theta);
        let e = rel_err(&g, &fd);
        assert!(e <= TOL, "{name}: log_prior_grad rel err {e:e}");
        let mut h = vec![0.0; d * d];
        m.log_prior_hess(&theta, &mut h);
        let fdh = fd_jac(
            &|t| {
                let mut gg = vec![0.0; d];
                m.log_prior_grad(t, &mut gg);
                gg
            },
            &theta,
        );
        let e = rel_err(&h, &fdh);
        assert!(e <= TOL, "{name}: log_prior_hess rel err {e:e}");
        // full-data sum equals the per-datum sum
        let mut ga = vec![0.0; d];
        let va = m.log_lik_grad_all(&theta, &mut ga);
        let mut gs = vec![0.0; d];
        let mut vs = 0.0;
        for i in 0..m.n() {
            vs += m.log_lik_grad(&theta, i, &mut gs);
        }
        assert!(
            (va - vs).abs() <= 1e-9 * (1.0 + vs.abs()),
            "{name}: sum value"
        );
        assert!(rel_err(&ga, &gs) <= 1e-12, "{name}: sum gradient");
        assert!((m.log_lik_all(&theta) - vs).abs() <= 1e-9 * (1.0 + vs.abs()));
    }
}

fn truth(model: &str, d: usize) -> Vec<f64> {
    true_parameters(model, d, 11).unwrap()
}

#[test]
fn logistic_gradients() {
    let m = build("logistic", 5, &[]);
    check_model("logistic", &*m, &truth("logistic", 5), 0.5);
    let m = build("logistic", 3, &["prior_scale=2.5"]);
    check_model("logistic s=2.5", &*m, &truth("logistic", 3), 1.0);
}

#[test]
fn poisson_gradients() {
    let m = build("poisson", 4, &[]);
    check_model("poisson", &*m, &truth("poisson", 4), 0.3);
}

#[test]
fn linear_known_noise_gradients() {
    let m = build("linear", 5, &["noise_sd=0.7"]);
    check_model("linear", &*m, &truth("linear", 5), 0.5);
    let m = build("linear", 3, &["prior=flat"]);
    check_model("linear flat", &*m, &truth("linear", 3), 0.5);
}

#[test]
fn linear_unknown_noise_gradients() {
    let m = build(
        "linear",
        4,
        &["noise=gamma", "noise_prior_shape=2", "noise_prior_rate=0.5"],
    );
    assert_eq!(m.dim(), 5);
    let mut c = truth("linear", 4);
    c.push(0.0); // log τ at τ = 1 = 1/noise_sd²
    check_model("linear gamma", &*m, &c, 0.4);
}

#[test]
fn robust_gradients() {
    let m = build("robust", 4, &[]);
    check_model("robust ν=4", &*m, &truth("robust", 4), 0.8);
    let m = build("robust", 3, &["nu=2.5", "noise_sd=1.7"]);
    check_model("robust ν=2.5", &*m, &truth("robust", 3), 1.5);
}

#[test]
fn gmm_gradients() {
    let m = build("gmm", 2, &[]);
    check_model("gmm", &*m, &[0.0, 1.0], 1.0);
    let m = build(
        "gmm",
        2,
        &[
            "temperature=3",
            "noise_var=1.5",
            "prior_var_1=4",
            "prior_var_2=2",
        ],
    );
    check_model("gmm tempered", &*m, &[1.0, -1.0], 1.0);
}

#[test]
fn gaussian_gradients() {
    let m = build("gaussian", 4, &["rho=0.8"]);
    check_model("gaussian equi", &*m, &truth("gaussian", 4), 1.0);
    let m = build("gaussian", 5, &["correlation=ar1", "rho=-0.6", "sd=2"]);
    check_model("gaussian ar1", &*m, &truth("gaussian", 5), 1.0);
}

/// f′, f″, f‴ of every family against central differences, on a grid of (y, η).
#[test]
fn family_derivatives() {
    let fams: Vec<(Box<dyn GlmFamily>, Vec<f64>)> = vec![
        (Box::new(Logistic), vec![0.0, 1.0]),
        (Box::new(Poisson), vec![0.0, 1.0, 3.0, 17.0]),
        (Box::new(GaussianNoise { sd: 0.6 }), vec![-2.0, 0.5, 3.0]),
        (Box::new(StudentT::default()), vec![-2.0, 0.5, 3.0]),
        (
            Box::new(StudentT {
                nu: 1.5,
                scale: 2.5,
            }),
            vec![-4.0, 0.0, 7.0],
        ),
    ];
    for (f, ys) in &fams {
        for &y in ys {
            for k in 0..41 {
                let eta = -4.0 + 0.2 * k as f64 + 0.013;
                let h = 1e-5;
                let (v, d1) = f.value_d1(y, eta);
                assert!((v - f.value(y, eta)).abs() <= 1e-14 * (1.0 + v.abs()));
                let fd1 = (f.value(y, eta + h) - f.value(y, eta - h)) / (2.0 * h);
                let fd2 = (f.value_d1(y, eta + h).1 - f.value_d1(y, eta - h).1) / (2.0 * h);
                let fd3 = (f.d2(y, eta + h) - f.d2(y, eta - h)) / (2.0 * h);
                let name = f.name();
                assert!(rel_err(&[d1], &[fd1]) <= TOL, "{name} d1 y={y} η={eta}");
                assert!(
                    rel_err(&[f.d2(y, eta)], &[fd2]) <= TOL,
                    "{name} d2 y={y} η={eta}"
                );
                assert!(
                    rel_err(&[f.d3(y, eta)], &[fd3]) <= TOL,
                    "{name} d3 y={y} η={eta}: {} vs {fd3}",
                    f.d3(y, eta)
                );
            }
        }
    }
}

/// The stated sup |f″| and sup |f‴| hold on a fine grid and are attained (within 1e-4).
#[test]
fn family_bounds_are_tight() {
    let fams: Vec<Box<dyn GlmFamily>> = vec![
        Box::new(Logistic),
        Box::new(GaussianNoise { sd: 0.6 }),
        Box::new(StudentT::default()),
        Box::new(StudentT {
            nu: 1.5,
            scale: 2.5,
        }),
    ];
    for f in &fams {
        let (b2, b3) = (f.d2_bound().unwrap(), f.d3_bound().unwrap());
        let (mut m2, mut m3) = (0.0f64, 0.0f64);
        for k in 0..=400_000 {
            let eta = -20.0 + 1e-4 * k as f64;
            m2 = m2.max(f.d2(0.0, eta).abs());
            m3 = m3.max(f.d3(0.0, eta).abs());
        }
        let name = f.name();
        assert!(
            m2 <= b2 * (1.0 + 1e-12),
            "{name}: sup|f″| {m2} > bound {b2}"
        );
        assert!(
            m3 <= b3 * (1.0 + 1e-12) + 1e-300,
            "{name}: sup|f‴| {m3} > bound {b3}"
        );
        assert!(
            m2 >= b2 * (1.0 - 1e-4),
            "{name}: bound {b2} not attained ({m2})"
        );
        assert!(
            m3 >= b3 * (1.0 - 1e-4),
            "{name}: bound {b3} not attained ({m3})"
        );
    }
    assert!(Poisson.d2_bound().is_none());
}
