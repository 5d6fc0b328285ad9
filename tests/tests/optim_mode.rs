//! Mode finding (`tallmc_core::optim`): Newton and L-BFGS on GLMs with simulated data, checked
//! against first principles (zero gradient, finite-difference Hessian, closed-form ridge).

use tallmc_core::data::{Design, DesignSpec, Table};
use tallmc_core::dist;
use tallmc_core::linalg::Cholesky;
use tallmc_core::math;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm, Logistic};
use tallmc_core::optim::{
    find_mode, find_mode_subset, lbfgs_maximize, LbfgsOptions, ModeMethod, ModeOptions,
};
use tallmc_core::rng::chain_rng;
use tallmc_core::Error;

const BETA: [f64; 4] = [0.5, -1.0, 0.8, 0.3];

/// A table with columns y, x1, x2, x3 (standard normal features, x2 correlated with x1).
fn simulate(
    n: usize,
    seed: u64,
    mut response: impl FnMut(f64, &mut tallmc_core::rng::ChainRng) -> f64,
) -> Table {
    let mut r = chain_rng(seed, 0);
    let mut cols: Vec<Vec<f64>> = (0..4).map(|_| Vec::with_capacity(n)).collect();
    for _ in 0..n {
        let x1 = dist::std_normal(&mut r);
        let x2 = 0.6 * x1 + 0.8 * dist::std_normal(&mut r);
        let x3 = dist::std_normal(&mut r);
        let eta = BETA[0] + BETA[1] * x1 + BETA[2] * x2 + BETA[3] * x3;
        let y = response(eta, &mut r);
        cols[0].push(y);
        cols[1].push(x1);
        cols[2].push(x2);
        cols[3].push(x3);
    }
    let names = ["y", "x1", "x2", "x3"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    Table::new(names, cols).unwrap()
}

fn design(t: &Table) -> Design {
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    Design::from_table(t, &spec).unwrap()
}

fn logistic_model(n: usize, seed: u64) -> Glm<Logistic> {
    let t = simulate(n, seed, |eta, r| {
        f64::from(u8::from(dist::bernoulli(r, math::sigmoid(eta))))
    });
    Glm::new(design(&t), Logistic, Prior::Normal { scale: 10.0 })
}

/// ∇ log π(θ) computed datum by datum, and Σᵢ ‖∇ℓᵢ(θ)‖∞ + ‖∇ log p‖∞ as its natural scale.
fn gradient_and_scale(m: &dyn DataModel, theta: &[f64]) -> (Vec<f64>, f64) {
    let d = m.dim();
    let mut g = vec![0.0; d];
    let mut gp = vec![0.0; d];
    m.log_prior_grad(theta, &mut gp);
    let mut scale = gp.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for k in 0..d {
        g[k] += gp[k];
    }
    let mut gi = vec![0.0; d];
    for i in 0..m.n() {
        gi.iter_mut().for_each(|v| *v = 0.0);
        m.log_lik_grad(theta, i, &mut gi);
        scale += gi.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for k in 0..d {
            g[k] += gi[k];
        }
    }
    (g, scale)
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
}

#[test]
fn newton_logistic_mode_gradient_and_hessian() {
    let model = logistic_model(3000, 1);
    let n = model.n();
    let d = model.dim();
    let res = find_mode(&model, &model.initial_point(), &ModeOptions::default()).unwrap();
    assert!(res.converged, "Newton did not converge: {res:?}");
    assert!(res.iterations <= 20, "{} iterations", res.iterations);

    // Gradient at the mode is zero relative to the size of its terms.
    let (g, scale) = gradient_and_scale(&model, &res.mode);
    let rel = g.iter().fold(0.0f64, |a, v| a.max(v.abs())) / scale;
    eprintln!(
        "newton logistic: {} iterations, relative gradient {rel:.2e}, evals lik/grad/hess {}/{}/{}",
        res.iterations, res.lik_evals, res.grad_evals, res.hess_evals
    );
    assert!(rel <= 1e-8, "relative gradient {rel}");
    assert!(max_abs_diff(&g, &res.grad) <= 1e-9 * scale);

    // The mode is near the truth (n = 3000): a sanity check within 5 Laplace sds.
    let cov = res.covariance().unwrap();
    for k in 0..d {
        let sd = cov[k * d + k].sqrt();
        assert!((res.mode[k] - BETA[k]).abs() < 5.0 * sd, "coef {k}");
    }

    // neg_hessian = −∇² log π: central differences of the gradient.
    let h = 1e-5;
    let hnorm = res.neg_hessian.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    for j in 0..d {
        let mut tp = res.mode.clone();
        let mut tm = res.mode.clone();
        tp[j] += h;
        tm[j] -= h;
        let (gp, _) = gradient_and_scale(&model, &tp);
        let (gm, _) = gradient_and_scale(&model, &tm);
        for k in 0..d {
            let fd = -(gp[k] - gm[k]) / (2.0 * h);
            let err = (fd - res.neg_hessian[k * d + j]).abs() / hnorm;
            assert!(
                err <= 1e-6,
                "H[{k},{j}]: fd {fd} vs {}",
                res.neg_hessian[k * d + j]
            );
        }
    }
    // Symmetric and positive definite.
    for j in 0..d {
        for k in 0..d {
            assert_eq!(res.neg_hessian[j * d + k], res.neg_hessian[k * d + j]);
        }
    }
    assert!(Cholesky::new(&res.neg_hessian, d).is_ok());

    // Cost accounting: one value-and-gradient and one Hessian pass per accepted point.
    let passes = res.iterations as u64 + 1;
    assert_eq!(res.hess_evals, passes * n as u64);
    assert_eq!(res.grad_evals % n as u64, 0);
    assert!(res.grad_evals >= passes * n as u64);
    assert!(res.lik_evals >= res.grad_evals);
    assert_eq!(res.cost().grad_evals, res.grad_evals);

    // The log density reported is log π at the mode.
    let lp = model.log_prior(&res.mode) + model.log_lik_all(&res.mode);
    assert!((res.log_density - lp).abs() <= 1e-9 * lp.abs());
}

#[test]
fn lbfgs_agrees_with_newton_on_logistic() {
    let model = logistic_model(3000, 2);
    let start = model.initial_point();
    let newton = find_mode(&model, &start, &ModeOptions::default()).unwrap();
    let opts = ModeOptions {
        method: ModeMethod::Lbfgs,
        ..ModeOptions::default()
    };
    let lb = find_mode(&model, &start, &opts).unwrap();
    assert!(lb.converged, "L-BFGS did not converge: {lb:?}");
    let diff = max_abs_diff(&newton.mode, &lb.mode);
    eprintln!(
        "lbfgs logistic: {} iterations, grad evals {}, max |Newton - L-BFGS| {diff:.2e}",
        lb.iterations, lb.grad_evals
    );
    assert!(diff <= 1e-6, "Newton vs L-BFGS: {diff}");
    // The Hessian is evaluated once, at the end.
    assert_eq!(lb.hess_evals, model.n() as u64);
    let hd = max_abs_diff(&newton.neg_hessian, &lb.neg_hessian);
    let hn = newton
        .neg_hessian
        .iter()
        .fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(hd <= 1e-6 * hn);
}

#[test]
fn gaussian_noise_mode_is_closed_form_ridge() {
    let sd = 0.7;
    let t = simulate(500, 3, |eta, r| eta + sd * dist::std_normal(r));
    let s = 2.0;
    let model = Glm::new(design(&t), GaussianNoise { sd }, Prior::Normal { scale: s });
    let d = model.dim();
    // (XᵀX/σ² + I/s²) θ = Xᵀy/σ².
    let x = &model.design.x;
    let y = &model.design.y;
    let mut a = vec![0.0; d * d];
    let mut b = vec![0.0; d];
    for i in 0..model.n() {
        let row = &x[i * d..(i + 1) * d];
        for j in 0..d {
            b[j] += row[j] * y[i] / (sd * sd);
            for k in 0..d {
                a[j * d + k] += row[j] * row[k] / (sd * sd);
            }
        }
    }
    for j in 0..d {
        a[j * d + j] += 1.0 / (s * s);
    }
    let ch = Cholesky::new(&a, d).unwrap();
    let mut ridge = b.clone();
    ch.solve(&mut ridge);

    for method in [ModeMethod::Newton, ModeMethod::Lbfgs] {
        let opts = ModeOptions {
            method,
            ..ModeOptions::default()
        };
        let res = find_mode(&model, &[3.0, -2.0, 1.0, 5.0], &opts).unwrap();
        assert!(res.converged, "{method:?}");
        let scale = ridge.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let err = max_abs_diff(&res.mode, &ridge) / scale;
        eprintln!(
            "ridge {method:?}: relative error {err:.2e}, {} iterations",
            res.iterations
        );
        let tol = if method == ModeMethod::Newton {
            1e-9
        } else {
            1e-7
        };
        assert!(err <= tol, "{method:?}: relative error {err}");
        let an = a.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!(max_abs_diff(&res.neg_hessian, &a) <= 1e-12 * an);
        if method == ModeMethod::Newton {
            // A quadratic: one Newton step lands on the mode.
            assert!(res.iterations <= 2, "{} iterations", res.iterations);
        }
    }
}

#[test]
fn subset_mode() {
    let model = logistic_model(2000, 4);
    let n = model.n();
    let start = model.initial_point();
    let opts = ModeOptions::default();
    let full = find_mode(&model, &start, &opts).unwrap();
    let all: Vec<usize> = (0..n).collect();
    let sub = find_mode_subset(&model, &all, &start, &opts).unwrap();
    assert!(sub.converged);
    assert!(max_abs_diff(&full.mode, &sub.mode) <= 1e-12);
    assert!(max_abs_diff(&full.neg_hessian, &sub.neg_hessian) <= 1e-9);

    // A subsample of m = 300: the mode of log p + (n/m) Σ_{subset} ℓᵢ, computed independently.
    let mut r = chain_rng(5, 0);
    let mut idx = Vec::new();
    dist::sample_without_replacement(&mut r, n, 300, &mut idx).unwrap();
    let res = find_mode_subset(&model, &idx, &start, &opts).unwrap();
    assert!(res.converged);
    let d = model.dim();
    let w = n as f64 / idx.len() as f64;
    let mut g = vec![0.0; d];
    model.log_prior_grad(&res.mode, &mut g);
    let mut gl = vec![0.0; d];
    let mut scale = 0.0;
    for &i in &idx {
        let mut gi = vec![0.0; d];
        model.log_lik_grad(&res.mode, i, &mut gi);
        scale += w * gi.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for k in 0..d {
            gl[k] += gi[k];
        }
    }
    for k in 0..d {
        g[k] += w * gl[k];
    }
    let rel = g.iter().fold(0.0f64, |a, v| a.max(v.abs())) / scale;
    assert!(rel <= 1e-8, "subset relative gradient {rel}");
    // Costs count only the subset.
    assert_eq!(
        res.hess_evals,
        (res.iterations as u64 + 1) * idx.len() as u64
    );
    // Not the full-data mode, but close to it (a subsample estimate).
    assert!(max_abs_diff(&res.mode, &full.mode) > 1e-6);

    // Bad subsets are errors.
    assert!(find_mode_subset(&model, &[], &start, &opts).is_err());
    assert!(find_mode_subset(&model, &[0, n], &start, &opts).is_err());
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let model = logistic_model(200, 6);
    let opts = ModeOptions::default();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let start = [0.0, bad, 0.0, 0.0];
        assert_eq!(find_mode(&model, &start, &opts), Err(Error::NonFiniteStart));
        let lb = ModeOptions {
            method: ModeMethod::Lbfgs,
            ..opts
        };
        assert_eq!(find_mode(&model, &start, &lb), Err(Error::NonFiniteStart));
    }
    // Finite start, non-finite log density (the prior overflows).
    assert_eq!(
        find_mode(&model, &[1e200, 0.0, 0.0, 0.0], &opts),
        Err(Error::NonFiniteStart)
    );
    assert!(matches!(
        find_mode(&model, &[0.0; 3], &opts),
        Err(Error::Dimension { .. })
    ));
    let bad = ModeOptions {
        grad_tol: f64::NAN,
        ..opts
    };
    assert!(find_mode(&model, &[0.0; 4], &bad).is_err());
    let bad = ModeOptions {
        max_iter: 0,
        ..opts
    };
    assert!(find_mode(&model, &[0.0; 4], &bad).is_err());
    // Running out of iterations is reported, not an error.
    let short = ModeOptions {
        max_iter: 1,
        grad_tol: 0.0,
        ..opts
    };
    let r = find_mode(&model, &[0.0; 4], &short).unwrap();
    assert!(!r.converged);
    assert_eq!(r.iterations, 1);
    let mut calls = 0;
    assert_eq!(
        lbfgs_maximize(
            |_, _| {
                calls += 1;
                f64::NAN
            },
            &[1.0],
            &LbfgsOptions::default()
        ),
        Err(Error::NonFiniteStart)
    );
    assert!(lbfgs_maximize(|_, _| 0.0, &[], &LbfgsOptions::default()).is_err());
}

/// Location of a Student-t sample (ν = 1, Cauchy): log-likelihood not concave, so Newton must
/// fall back from the Newton direction in the tails.
struct CauchyLocation {
    y: Vec<f64>,
}

impl DataModel for CauchyLocation {
    fn dim(&self) -> usize {
        1
    }
    fn n(&self) -> usize {
        self.y.len()
    }
    fn param_names(&self) -> Vec<String> {
        vec!["mu".into()]
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        grad[0] -= theta[0] / 1e4;
        self.log_prior(theta)
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        -0.5 * theta[0] * theta[0] / 1e4
    }
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        let r = self.y[i] - theta[0];
        -(1.0 + r * r).ln()
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let r = self.y[i] - theta[0];
        grad[0] += 2.0 * r / (1.0 + r * r);
        -(1.0 + r * r).ln()
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let r = self.y[i] - theta[0];
        let q = 1.0 + r * r;
        hess[0] += 2.0 * (r * r - 1.0) / (q * q);
    }
}

#[test]
fn newton_falls_back_where_not_concave() {
    let model = CauchyLocation {
        y: vec![-0.4, -0.1, 0.0, 0.2, 0.3, 0.5, 6.0, -7.0],
    };
    // At μ = 30 every residual exceeds 1: ∇² log π > 0 (convex), a pure Newton step would go
    // downhill towards a minimum.
    let mut h = [0.0];
    for i in 0..model.n() {
        model.log_lik_hess(&[30.0], i, &mut h);
    }
    assert!(h[0] > 0.0);
    let res = find_mode(&model, &[30.0], &ModeOptions::default()).unwrap();
    eprintln!(
        "cauchy location: mode {} after {} iterations",
        res.mode[0], res.iterations
    );
    assert!(res.converged, "{res:?}");
    assert!(res.grad[0].abs() <= 1e-10 * model.n() as f64);
    assert!(res.neg_hessian[0] > 0.0, "not a maximum");
    let start_lp = model.log_prior(&[30.0]) + model.log_lik_all(&[30.0]);
    assert!(res.log_density > start_lp);
    // The global mode sits in the central cluster; from 30 the ascent reaches it or the local
    // mode near 6 — either way a maximum of log π.
    assert!(res.mode[0] > -1.0 && res.mode[0] < 7.0);
}

#[test]
fn lbfgs_on_rosenbrock_and_ill_conditioned_quadratic() {
    // Maximise −Rosenbrock: maximum 0 at (1, 1).
    let rosen = |x: &[f64], g: &mut [f64]| {
        let (a, b) = (x[0], x[1]);
        g[0] = 2.0 * (1.0 - a) + 400.0 * a * (b - a * a);
        g[1] = -200.0 * (b - a * a);
        -((1.0 - a).powi(2) + 100.0 * (b - a * a).powi(2))
    };
    let opts = LbfgsOptions {
        grad_tol: 1e-9,
        ..LbfgsOptions::default()
    };
    let r = lbfgs_maximize(rosen, &[-1.2, 1.0], &opts).unwrap();
    assert!(r.converged, "{r:?}");
    assert!(max_abs_diff(&r.x, &[1.0, 1.0]) < 1e-8, "{:?}", r.x);
    assert!(r.iterations < 200);

    // d = 60, eigenvalues 1 … 1e4, maximum at c.
    let d = 60;
    let lam: Vec<f64> = (0..d)
        .map(|k| 10f64.powf(4.0 * k as f64 / (d - 1) as f64))
        .collect();
    let c: Vec<f64> = (0..d).map(|k| (k as f64 * 0.37).sin()).collect();
    let quad = |x: &[f64], g: &mut [f64]| {
        let mut v = 0.0;
        for k in 0..d {
            let r = x[k] - c[k];
            g[k] = -lam[k] * r;
            v -= 0.5 * lam[k] * r * r;
        }
        v
    };
    let opts = LbfgsOptions {
        grad_tol: 1e-8,
        ..LbfgsOptions::default()
    };
    let r = lbfgs_maximize(quad, &vec![0.0; d], &opts).unwrap();
    assert!(r.converged);
    assert!(max_abs_diff(&r.x, &c) < 1e-8);
}

/// `decrement_tol`: Newton stops once gᵀA⁻¹g (with the Hessian it has) is within the tolerance,
/// without forming another Hessian: fewer Hessians than the default search, a point within
/// √tol posterior sd (Mahalanobis, exact precision) of the exact mode; invalid tolerances are
/// refused.
#[test]
fn newton_decrement_stop_saves_hessians_and_lands_near_the_mode() {
    let model = logistic_model(20_000, 41);
    let d = model.dim();
    let start = vec![0.0; d];
    let exact = find_mode(&model, &start, &ModeOptions::default()).unwrap();
    for tol in [1.0, 1e-2] {
        let opts = ModeOptions {
            method: ModeMethod::Newton,
            decrement_tol: tol,
            ..ModeOptions::default()
        };
        let r = find_mode(&model, &start, &opts).unwrap();
        assert!(r.converged);
        let dx: Vec<f64> = r.mode.iter().zip(&exact.mode).map(|(a, b)| a - b).collect();
        let maha: f64 = (0..d)
            .map(|i| {
                (0..d)
                    .map(|j| dx[i] * exact.neg_hessian[i * d + j] * dx[j])
                    .sum::<f64>()
            })
            .sum();
        println!(
            "tol {tol}: {} iterations, {} Hessian evaluations (default {} and {}), squared distance {maha:.2e}",
            r.iterations, r.hess_evals, exact.iterations, exact.hess_evals
        );
        assert!(maha <= tol, "tol {tol}: squared distance {maha}");
        assert!(r.hess_evals < exact.hess_evals, "tol {tol}");
    }
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let opts = ModeOptions {
            decrement_tol: bad,
            ..ModeOptions::default()
        };
        assert!(find_mode(&model, &start, &opts).is_err(), "{bad}");
    }
}
