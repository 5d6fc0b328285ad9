//! Shared helpers for tallmc's statistical tests: ESS / MCSE, moment summaries, data simulation
//! and closed-form posteriors.

pub mod fuzz;
pub mod realdata;
use std::sync::Arc;
use tallmc_core::chain::{run_chain, Chain, Phase};
use tallmc_core::data::Design;
use tallmc_core::dist;
use tallmc_core::kernel::StepInfo;
use tallmc_core::linalg::Cholesky;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_chain, ChainConfig};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::settings::Settings;

/// Sample mean.
pub fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance (n − 1 denominator).
pub fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

/// Sample standard deviation.
pub fn sd(x: &[f64]) -> f64 {
    var(x).sqrt()
}

/// Effective sample size of one chain for the mean: `tallmc_core::diag::ess_mean` (ArviZ's
/// split-chain Geyer estimator, checked against ArviZ fixtures).
pub fn ess(x: &[f64]) -> f64 {
    tallmc_core::diag::ess_mean(&[x])
}

/// Monte Carlo standard error of the mean: sd / √ESS.
pub fn mcse_mean(x: &[f64]) -> f64 {
    sd(x) / ess(x).sqrt()
}

/// Column `j` of a draws matrix stored as rows.
pub fn column(draws: &[Vec<f64>], j: usize) -> Vec<f64> {
    draws.iter().map(|r| r[j]).collect()
}

/// Draws and per-step statistics of a run's sampling phase.
pub struct Run {
    /// Kept draws (rows).
    pub draws: Vec<Vec<f64>>,
    /// Kept step infos.
    pub stats: Vec<StepInfo>,
}

impl Run {
    /// Column j.
    pub fn col(&self, j: usize) -> Vec<f64> {
        column(&self.draws, j)
    }
    /// Mean acceptance statistic of the kept draws.
    pub fn mean_accept(&self) -> f64 {
        self.stats.iter().map(|s| s.accept_prob).sum::<f64>() / self.stats.len() as f64
    }
    /// Divergent transitions among the kept draws.
    pub fn divergences(&self) -> usize {
        self.stats.iter().filter(|s| s.divergent).count()
    }
}

/// Run a chain: warm-up then `draws` kept iterations.
pub fn run(chain: &mut dyn Chain, rng: &mut ChainRng, draws: usize) -> Run {
    let mut out = Run {
        draws: Vec::with_capacity(draws),
        stats: Vec::with_capacity(draws),
    };
    run_chain(chain, rng, draws, |phase, _, theta, info| {
        if phase == Phase::Sampling {
            out.draws.push(theta.to_vec());
            out.stats.push(*info);
        }
    });
    out
}

/// Build a chain from the registry with `key=value` settings and run it.
pub fn run_sampler(
    sampler: &str,
    model: Arc<dyn DataModel>,
    settings: &[&str],
    seed: u64,
    warmup: usize,
    draws: usize,
) -> Run {
    let mut s = Settings::new();
    for kv in settings {
        s.insert_pair(kv).expect("setting");
    }
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    let mut rng = chain_rng(seed, 0);
    let mut chain = build_chain(&config, model, &mut rng).expect("build chain");
    run(chain.as_mut(), &mut rng, draws)
}

/// A design with an intercept and `d − 1` standard-normal features, response left empty.
pub fn gaussian_design(n: usize, d: usize, rng: &mut ChainRng) -> Design {
    let mut x = vec![1.0; n * d];
    for row in x.chunks_mut(d) {
        for v in row.iter_mut().skip(1) {
            *v = dist::std_normal(rng);
        }
    }
    let mut names = vec![String::from("intercept")];
    names.extend((1..d).map(|j| format!("x{j}")));
    Design {
        n,
        d,
        x,
        y: vec![0.0; n],
        names,
    }
}

/// xᵢᵀβ.
pub fn linear_predictor(design: &Design, beta: &[f64], i: usize) -> f64 {
    design
        .row(i)
        .iter()
        .zip(beta)
        .map(|(a, b)| a * b)
        .sum::<f64>()
}

/// The conjugate posterior of β in y = Xβ + N(0, σ²), β ~ N(0, s² I):
/// Λ = XᵀX/σ² + I/s², mean = Λ⁻¹ Xᵀy/σ², covariance Λ⁻¹ (row-major).
pub fn linear_posterior(design: &Design, noise_sd: f64, prior_scale: f64) -> (Vec<f64>, Vec<f64>) {
    let (n, d) = (design.n, design.d);
    let s2 = noise_sd * noise_sd;
    let mut prec = vec![0.0; d * d];
    let mut xty = vec![0.0; d];
    for i in 0..n {
        let r = design.row(i);
        for a in 0..d {
            xty[a] += r[a] * design.y[i] / s2;
            for b in 0..d {
                prec[a * d + b] += r[a] * r[b] / s2;
            }
        }
    }
    for a in 0..d {
        prec[a * d + a] += 1.0 / (prior_scale * prior_scale);
    }
    let ch = Cholesky::new(&prec, d).expect("posterior precision is SPD");
    let mut m = xty;
    ch.solve(&mut m);
    (m, ch.inverse())
}

/// z-score of the variance estimate against the truth: with sⱼ = (xⱼ − μ)², (mean(s) − σ²) / MCSE(s),
/// the MCSE from the ESS of s itself (NUTS is often antithetic for x but not for x²).
pub fn variance_z(x: &[f64], true_mean: f64, true_var: f64) -> f64 {
    let s: Vec<f64> = x
        .iter()
        .map(|v| (v - true_mean) * (v - true_mean))
        .collect();
    (mean(&s) - true_var) / mcse_mean(&s)
}

/// The QNHMC paper's d = 100 Gaussian N(0, 11ᵀ + 4I) (spec 001 §5.2): Σ⁻¹ = ¼(I − 11ᵀ/(4 + d)),
/// log density and gradient in O(d).
pub struct PaperGaussian;

/// Dimension of [`PaperGaussian`].
pub const PAPER_D: usize = 100;

impl tallmc_core::model::LogDensity for PaperGaussian {
    fn dim(&self) -> usize {
        PAPER_D
    }
    fn log_density(&self, x: &[f64]) -> f64 {
        let mut g = vec![0.0; PAPER_D];
        self.log_density_grad(x, &mut g)
    }
    fn log_density_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let s: f64 = x.iter().sum();
        let c = s / (4.0 + PAPER_D as f64);
        let mut q = 0.0;
        for j in 0..PAPER_D {
            let px = 0.25 * (x[j] - c);
            g[j] = -px;
            q += x[j] * px;
        }
        -0.5 * q
    }
}

/// `reps` independent particle-filter runs on (model, θ, y): the likelihood ratios
/// Z = exp(log p̂ − `exact_log_lik`) and, per coordinate of θ, the Fisher-identity scores.
pub fn pf_replicates(
    pf: &mut tallmc_core::ssm::pf::ParticleFilter,
    model: &dyn tallmc_core::ssm::StateSpaceModel,
    theta: &[f64],
    y: &[f64],
    exact_log_lik: f64,
    reps: usize,
    rng: &mut ChainRng,
) -> (Vec<f64>, Vec<Vec<f64>>) {
    use tallmc_core::ssm::pf::ScoreSpec;
    let mut z = Vec::with_capacity(reps);
    let mut sc = vec![Vec::with_capacity(reps); theta.len()];
    for _ in 0..reps {
        let out = pf
            .run(model, theta, y, Some(ScoreSpec::full()), rng)
            .unwrap();
        z.push((out.log_lik - exact_log_lik).exp());
        for (k, s) in sc.iter_mut().enumerate() {
            s.push(pf.score()[k]);
        }
    }
    (z, sc)
}

/// `model` fitted through the registry (intercept, unstandardised, the given `reparam`) to a
/// table simulated by `tallmc_core::simulate` with its default settings: n rows, d parameters,
/// `seed`. The raw-scale features leave the whitening work to do.
pub fn simulated_model(
    model: &str,
    n: usize,
    d: usize,
    seed: u64,
    reparam: &str,
) -> Arc<dyn DataModel> {
    let table =
        tallmc_core::simulate::simulate(model, n, d, seed, &Settings::new()).expect("simulate");
    let spec = tallmc_core::data::DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let mut set = Settings::new();
    set.insert("reparam", reparam);
    tallmc_core::registry::build_model(model, &table, &spec, &set).expect("build model")
}

/// log p(y₁:T|θ) of a state-space model with a 1-d state by quadrature: a grid filter with
/// `nodes` nodes on [−`half_width`, `half_width`], the initial law and each transition row
/// normalised on the grid (no mass leaks at the edges), using the model's own log densities.
pub fn grid_log_lik<M: tallmc_core::ssm::StateSpaceModel + ?Sized>(
    model: &M,
    theta: &[f64],
    y: &[f64],
    nodes: usize,
    half_width: f64,
) -> f64 {
    use tallmc_core::ssm::{state, State};
    let g = nodes;
    let eta = model.natural_vec(theta);
    let dz = 2.0 * half_width / (g - 1) as f64;
    let z: Vec<f64> = (0..g).map(|i| -half_width + i as f64 * dz).collect();
    let mut p: Vec<f64> = z
        .iter()
        .map(|&x| model.log_initial(&eta, &state(x)).exp() * dz)
        .collect();
    let s: f64 = p.iter().sum();
    p.iter_mut().for_each(|v| *v /= s);
    // transition matrix rows (normalised so no mass leaks at the edges)
    let mut k = vec![0.0; g * g];
    for i in 0..g {
        let prev: State = state(z[i]);
        let mut row = 0.0;
        for j in 0..g {
            let v = model.log_transition(&eta, &prev, &state(z[j])).exp();
            k[i * g + j] = v;
            row += v;
        }
        for j in 0..g {
            k[i * g + j] /= row;
        }
    }
    let mut ll = 0.0;
    let mut pred = vec![0.0; g];
    for &yt in y {
        pred.iter_mut().for_each(|v| *v = 0.0);
        for i in 0..g {
            if p[i] < 1e-300 {
                continue;
            }
            for j in 0..g {
                pred[j] += p[i] * k[i * g + j];
            }
        }
        let mut tot = 0.0;
        for j in 0..g {
            p[j] = pred[j] * model.log_observation(&eta, &state(z[j]), yt).exp();
            tot += p[j];
        }
        ll += tot.ln();
        p.iter_mut().for_each(|v| *v /= tot);
    }
    ll
}

/// The exact score ∇θ log p(y₁:T|θ) of a state-space model with a 1-d state, by central
/// finite differences (step 10⁻⁴) of [`grid_log_lik`] with its `nodes` and `half_width`.
pub fn grid_score<M: tallmc_core::ssm::StateSpaceModel + ?Sized>(
    model: &M,
    theta: &[f64],
    y: &[f64],
    nodes: usize,
    half_width: f64,
) -> Vec<f64> {
    let h = 1e-4;
    (0..theta.len())
        .map(|k| {
            let (mut tp, mut tm) = (theta.to_vec(), theta.to_vec());
            tp[k] += h;
            tm[k] -= h;
            (grid_log_lik(model, &tp, y, nodes, half_width)
                - grid_log_lik(model, &tm, y, nodes, half_width))
                / (2.0 * h)
        })
        .collect()
}
