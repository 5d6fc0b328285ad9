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

/// Column j of a draw matrix.
pub fn column(draws: &[Vec<f64>], j: usize) -> Vec<f64> {
    draws.iter().map(|t| t[j]).collect()
}

/// Inefficiency factor 1 + 2Σρ_k by Geyer's initial positive sequence.
pub fn inefficiency(x: &[f64]) -> f64 {
    let n = x.len();
    let (m, v) = mean_var(x);
    if v.is_nan() || v <= 0.0 {
        return f64::NAN;
    }
    let rho = |k: usize| -> f64 {
        (0..n - k).map(|i| (x[i] - m) * (x[i + k] - m)).sum::<f64>() / ((n - 1) as f64 * v)
    };
    let mut s = -1.0; // ρ₀ counted once: IF = −1 + 2 Σ_pairs (ρ_{2k} + ρ_{2k+1})
    let mut k = 0;
    while k + 1 < n / 2 {
        let pair = rho(k) + rho(k + 1);
        if pair <= 0.0 {
            break;
        }
        s += 2.0 * pair;
        k += 2;
    }
    s
}

/// Sign-weighted mean and sd.
pub fn weighted_mean_sd(x: &[f64], w: &[f64]) -> (f64, f64) {
    let sw: f64 = w.iter().sum();
    let m = x.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() / sw;
    let v = x
        .iter()
        .zip(w)
        .map(|(a, b)| (a - m) * (a - m) * b)
        .sum::<f64>()
        / sw;
    (m, v.max(0.0).sqrt())
}

/// What one HMC-ECS run records after warm-up.
pub struct EcsRun {
    pub draws: Vec<Vec<f64>>,
    pub signs: Vec<f64>,
    pub accept: f64,
    pub u_accept: f64,
    pub extra0: Vec<f64>,
    pub max_evals: u64,
    pub mean_evals: f64,
    pub warm_evals: u64,
    pub eps: f64,
    pub n_leapfrog: u32,
    pub centre: Vec<f64>,
}

/// Build an HMC-ECS chain with `settings` (key=value pairs) and run it.
pub fn run_ecs(
    model: std::sync::Arc<dyn DataModel>,
    signed: bool,
    settings: &[&str],
    warmup: usize,
    draws: usize,
    seed: u64,
) -> EcsRun {
    use tallmc_core::chain::{run_chain, Chain, Phase};
    use tallmc_core::sampler::hmcecs::{EcsChain, EcsConfig};
    use tallmc_core::settings::Settings;
    let mut s = Settings::new();
    for kv in settings {
        s.insert_pair(kv).unwrap();
    }
    let cfg = EcsConfig::from_settings(&s, signed).unwrap();
    s.check_all_used().unwrap();
    let mut rng = chain_rng(seed, 0);
    let mut chain = EcsChain::new(model, cfg, warmup, &mut rng).unwrap();
    let mut run = EcsRun {
        draws: Vec::with_capacity(draws),
        signs: Vec::with_capacity(draws),
        accept: 0.0,
        u_accept: 0.0,
        extra0: Vec::with_capacity(draws),
        max_evals: 0,
        mean_evals: 0.0,
        warm_evals: 0,
        eps: f64::NAN,
        n_leapfrog: 0,
        centre: Vec::new(),
    };
    let (samp, warm) = run_chain(&mut chain, &mut rng, draws, |phase, _, theta, info| {
        if phase == Phase::Sampling {
            run.draws.push(theta.to_vec());
            run.signs.push(info.sign);
            run.accept += info.accept_prob / draws as f64;
            run.u_accept += info.extra[1] / draws as f64;
            run.extra0.push(info.extra[0]);
            run.max_evals = run.max_evals.max(info.lik_evals.max(info.grad_evals));
            run.eps = info.step_size;
            run.n_leapfrog = info.n_leapfrog;
        }
    });
    run.mean_evals = samp.lik_evals as f64 / draws as f64;
    run.warm_evals = warm.lik_evals + chain.setup_cost().lik_evals;
    run.centre = chain.kernel().cv.centre().to_vec();
    run
}

/// Median of a slice (NaN-free input).
pub fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// Full-data HMC for the logistic GLM with a hand-fused gradient (one exp per datum),
/// M = `prec` (precision), fixed ε and L. Returns (draws, mean acceptance).
#[allow(clippy::too_many_arguments)]
pub fn logistic_full_hmc(
    glm: &Glm<Logistic>,
    start: &[f64],
    prec: &[f64],
    eps: f64,
    n_leapfrog: usize,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> (Vec<Vec<f64>>, f64) {
    use tallmc_core::sampler::hmcecs::metric_from_precision;
    let d = start.len();
    let des = &glm.design;
    let prior_prec = glm.prior.precision();
    // gradient of log π; the value only when asked
    let grad = |t: &[f64], g: &mut [f64], want_value: bool| -> f64 {
        let mut val = 0.0;
        for j in 0..d {
            g[j] = -prior_prec * t[j];
            val -= 0.5 * prior_prec * t[j] * t[j];
        }
        for i in 0..des.n {
            let row = des.row(i);
            let eta: f64 = row.iter().zip(t).map(|(a, b)| a * b).sum();
            let e = (-eta.abs()).exp();
            let s = if eta >= 0.0 {
                1.0 / (1.0 + e)
            } else {
                e / (1.0 + e)
            };
            let r = des.y[i] - s;
            for j in 0..d {
                g[j] += r * row[j];
            }
            if want_value {
                // y η − softplus(η)
                val += des.y[i] * eta - (eta.max(0.0) + e.ln_1p());
            }
        }
        val
    };
    let metric = metric_from_precision(prec, d);
    let mut rng = chain_rng(seed, 0);
    let mut theta = start.to_vec();
    let mut g = vec![0.0; d];
    let mut lp = grad(&theta, &mut g, true);
    let (mut p, mut v) = (vec![0.0; d], vec![0.0; d]);
    let mut out = Vec::with_capacity(draws);
    let mut acc = 0.0;
    for it in 0..warmup + draws {
        metric.sample_momentum(&mut rng, &mut p);
        let h0 = -lp + metric.kinetic(&p);
        let mut t = theta.clone();
        let mut gt = g.clone();
        let mut lpt = f64::NAN;
        for l in 0..n_leapfrog {
            for i in 0..d {
                p[i] += 0.5 * eps * gt[i];
            }
            metric.velocity(&p, &mut v);
            for i in 0..d {
                t[i] += eps * v[i];
            }
            lpt = grad(&t, &mut gt, l + 1 == n_leapfrog);
            for i in 0..d {
                p[i] += 0.5 * eps * gt[i];
            }
        }
        let h1 = -lpt + metric.kinetic(&p);
        let a = if h1.is_finite() {
            (h0 - h1).min(0.0).exp()
        } else {
            0.0
        };
        if uniform(&mut rng) < a {
            theta = t;
            g = gt;
            lp = lpt;
        }
        if it >= warmup {
            acc += a;
            out.push(theta.clone());
        }
    }
    (out, acc / draws as f64)
}

/// Reference posterior summaries from full-data HMC (M = precision at the mode, ε = 0.2, L = 6).
#[derive(Clone)]
pub struct Reference {
    pub mean: Vec<f64>,
    pub sd: Vec<f64>,
    pub accept: f64,
    pub mean_if: f64,
    pub mode: Vec<f64>,
}

/// The reference for the spec's synthetic logistic data (n, d, data seed), computed in this
/// test process (deterministic: fixed seeds) and shared by the tests of the binary. It is never
/// cached between runs: a cache would have to be keyed by the data, the settings and the code of
/// every function involved, and a stale one would silently compare against the wrong posterior.
pub fn logistic_reference(glm: &Glm<Logistic>, data_seed: u64, draws: usize) -> Reference {
    type Key = (usize, usize, u64, usize);
    static CACHE: std::sync::Mutex<Vec<(Key, Reference)>> = std::sync::Mutex::new(Vec::new());
    // tests of one binary run in parallel: the first computes, the others wait and share it
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    let key = (glm.design.n, glm.design.d, data_seed, draws);
    if let Some((_, r)) = cache.iter().find(|(k, _)| *k == key) {
        return r.clone();
    }
    let r = compute_reference(glm, draws);
    cache.push((key, r.clone()));
    r
}

fn compute_reference(glm: &Glm<Logistic>, draws: usize) -> Reference {
    let d = glm.design.d;
    let (mode, prec) = posterior_mode(glm);
    let (draws_v, acc) = logistic_full_hmc(glm, &mode, &prec, 0.2, 6, 200, draws, 101);
    let mut mean = vec![0.0; d];
    let mut sd = vec![0.0; d];
    let mut ifs = 0.0;
    for j in 0..d {
        let c = column(&draws_v, j);
        let (m, v) = mean_var(&c);
        mean[j] = m;
        sd[j] = v.sqrt();
        ifs += inefficiency(&c) / d as f64;
    }
    Reference {
        mean,
        sd,
        accept: acc,
        mean_if: ifs,
        mode,
    }
}
