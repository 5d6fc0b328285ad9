//! Shared fixtures for the HMC-ECS tests: the spec's synthetic logistic data and helpers.
#![allow(dead_code)]

use tallmc_core::data::Design;
use tallmc_core::dist;
use tallmc_core::estimator::ControlVariates;
use tallmc_core::linalg::Cholesky;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm, GlmView, Logistic};
use tallmc_core::rng::{chain_rng, uniform};

/// Spec §6.2: intercept + (d−1) iid N(0,1) covariates, θ_true ~ U(−1,1)^d, y ~ Bernoulli(s(xᵀθ)).
pub fn logistic_data(n: usize, d: usize, seed: u64) -> (Glm<Logistic>, Vec<f64>) {
    let mut rng = chain_rng(seed, 0);
    let theta: Vec<f64> = (0..d).map(|_| 2.0 * uniform(&mut rng) - 1.0).collect();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    for i in 0..n {
        x[i * d] = 1.0;
        for j in 1..d {
            x[i * d + j] = dist::std_normal(&mut rng);
        }
        let eta: f64 = (0..d).map(|j| x[i * d + j] * theta[j]).sum();
        let p = 1.0 / (1.0 + (-eta).exp());
        y[i] = if uniform(&mut rng) < p { 1.0 } else { 0.0 };
    }
    let names = (0..d)
        .map(|j| {
            if j == 0 {
                "intercept".into()
            } else {
                format!("x{j}")
            }
        })
        .collect();
    let design = Design { n, d, x, y, names };
    (
        Glm::new(design, Logistic, Prior::Normal { scale: 10.0 }),
        theta,
    )
}

/// Gaussian linear regression with unit noise, prior N(0, 5²).
pub fn linear_data(n: usize, d: usize, seed: u64) -> Glm<GaussianNoise> {
    let mut rng = chain_rng(seed, 0);
    let theta: Vec<f64> = (0..d).map(|_| dist::std_normal(&mut rng)).collect();
    let mut x = vec![0.0; n * d];
    let mut y = vec![0.0; n];
    for i in 0..n {
        for j in 0..d {
            x[i * d + j] = dist::std_normal(&mut rng);
        }
        let eta: f64 = (0..d).map(|j| x[i * d + j] * theta[j]).sum();
        y[i] = eta + dist::std_normal(&mut rng);
    }
    let names = (0..d).map(|j| format!("x{j}")).collect();
    Glm::new(
        Design { n, d, x, y, names },
        GaussianNoise { sd: 1.0 },
        Prior::Normal { scale: 5.0 },
    )
}

/// A model that hides its GLM structure, so the estimators take their general path.
pub struct Opaque<M>(pub M);

impl<M: DataModel> DataModel for Opaque<M> {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn n(&self) -> usize {
        self.0.n()
    }
    fn param_names(&self) -> Vec<String> {
        self.0.param_names()
    }
    fn log_prior_grad(&self, t: &[f64], g: &mut [f64]) -> f64 {
        self.0.log_prior_grad(t, g)
    }
    fn log_prior(&self, t: &[f64]) -> f64 {
        self.0.log_prior(t)
    }
    fn log_lik(&self, t: &[f64], i: usize) -> f64 {
        self.0.log_lik(t, i)
    }
    fn log_lik_grad(&self, t: &[f64], i: usize, g: &mut [f64]) -> f64 {
        self.0.log_lik_grad(t, i, g)
    }
    fn log_lik_hess(&self, t: &[f64], i: usize, h: &mut [f64]) {
        self.0.log_lik_hess(t, i, h)
    }
    fn as_glm(&self) -> Option<&dyn GlmView> {
        None
    }
}

/// Full-data posterior mode by Newton's method, with the negative Hessian there.
pub fn posterior_mode(model: &dyn DataModel) -> (Vec<f64>, Vec<f64>) {
    let d = model.dim();
    let mut theta = vec![0.0; d];
    let mut prec = vec![0.0; d * d];
    for _ in 0..50 {
        let cv = ControlVariates::new(model, &theta, 2).unwrap();
        let mut g = cv.sum_grad().to_vec();
        model.log_prior_grad(&theta, &mut g);
        let mut h = cv.sum_hess().to_vec();
        model.log_prior_hess(&theta, &mut h);
        for i in 0..d * d {
            prec[i] = -h[i];
        }
        let c = Cholesky::new(&prec, d).unwrap();
        c.solve(&mut g);
        let step: f64 = g.iter().map(|x| x * x).sum::<f64>().sqrt();
        for i in 0..d {
            theta[i] += g[i];
        }
        if step < 1e-12 {
            break;
        }
    }
    (theta, prec)
}

/// Relative error ‖a − b‖ / max(‖b‖, tiny).
pub fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    let den: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt().max(1e-300);
    num / den
}

/// Mean and (n−1) variance.
pub fn mean_var(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (n - 1.0);
    (m, v)
}
