//! Synthetic data for every available model, reproducible from a seed.
//!
//! One stream `chain_rng(seed, 0)` draws the true parameters first, then the data row by row,
//! so [`true_parameters`] returns exactly the θ that [`simulate`] used for the same `d` and `seed`
//! (whatever `n`).
//!
//! Regression models (`d` = number of coefficients, intercept included, d ≥ 1): columns `y`,
//! `x1` … `x{d−1}`, features xᵢⱼ ~ N(0, 1), θ = (intercept, slopes), ηᵢ = θ₀ + Σⱼ θⱼ xᵢⱼ:
//! - `logistic`: θ₀ ~ N(0, 0.5²), θⱼ ~ N(0, 1.5²/(d−1)) (so sd(η) ≈ 1.5), yᵢ ~ Bernoulli(σ(ηᵢ)).
//! - `linear`: θ ~ N(0, 1) each, yᵢ = ηᵢ + σεᵢ, εᵢ ~ N(0, 1), σ = `noise_sd` (default 1).
//! - `robust`: as `linear` with εᵢ ~ Student-t(ν), ν = `nu` (default 4), scale `noise_sd`.
//! - `poisson`: θ₀ ~ N(1, 0.25²), θⱼ ~ N(0, 0.5²/(d−1)), yᵢ ~ Poisson(e^ηᵢ).
//!
//! `gmm`: column `x`, xᵢ ~ ½N(0, σₓ²) + ½N(1, σₓ²) (θ = (0, 1), σₓ² = `noise_var`, default 2);
//! `d` is ignored. `gaussian`: columns `x1` … `x{d}`, μⱼ ~ N(0, 1), yᵢ ~ N(μ, Σ) with Σ from
//! `correlation`, `rho`, `sd` as in [`crate::model::gaussian`].
//!
//! Time series (`d` is ignored; `n` = T time points; one column `y`, the state started from its
//! stationary law one step before y₁): `lgssm` and `sv` at (φ, σ, τ) = settings `phi`, `sigma`,
//! `tau` (defaults: the thesis' truths (0.9, 0.7, 1) and (0.9, 0.5, 0.5)); `garch` at settings
//! `alpha`, `beta`, `gamma`, `tau` (default (0.1, 0.8, 0.05, 0.3)). [`true_parameters`] returns
//! the defaults on the samplers' unconstrained scale ((φ, log σ, log τ), or
//! (log μ, logit φ, logit λ, log τ) for `garch`).
//!
//! `pmf` (`d` = rank k): columns `user`, `item`, `rating`; U = `users` (default 50) users and
//! I = `items` (default 40) items, true factors uᵢ, vⱼ ~ N(0, k^{−1/2} I) (so sd(uᵢᵀvⱼ) = 1),
//! drawn users first then items (the model's θ layout); each row picks a user and an item
//! uniformly (with replacement) and rating = 3 + uᵢᵀvⱼ + σε, σ = `noise_sd` (default √½, the
//! model's default precision β = 2). Ratings are continuous (not rounded to 1..5).
//! [`true_parameters`] uses the default U and I.

use crate::data::Table;
use crate::dist::{bernoulli, gamma, normal, poisson, std_normal};
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::math;
use crate::model::gaussian::{self, Correlation};
use crate::model::gmm;
use crate::rng::{chain_rng, uniform, ChainRng};
use crate::settings::Settings;
use crate::ssm::{Garch, Lgssm, StateSpaceModel, StochasticVolatility};
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// Largest number of parameters a simulator accepts.
pub const MAX_D: usize = 10_000;

/// Models [`simulate`] can produce data for.
pub const SIMULATED_MODELS: &[&str] = &[
    "logistic", "linear", "robust", "poisson", "gmm", "gaussian", "pmf", "lgssm", "sv", "garch",
];

/// Default number of users of the `pmf` simulator (`users`).
pub const PMF_DEFAULT_USERS: usize = 50;
/// Default number of items of the `pmf` simulator (`items`).
pub const PMF_DEFAULT_ITEMS: usize = 40;
/// Offset of simulated `pmf` ratings.
pub const PMF_OFFSET: f64 = 3.0;

/// True `pmf` factors: (users + items) · k entries N(0, k^{−1/2}).
fn pmf_theta(k: usize, users: usize, items: usize, rng: &mut ChainRng) -> Vec<f64> {
    let sd = math::pow(k as f64, -0.25);
    (0..(users + items) * k)
        .map(|_| normal(rng, 0.0, sd))
        .collect()
}

fn simulate_pmf(n: usize, k: usize, seed: u64, settings: &Settings) -> Result<Table, Error> {
    let users = settings.usize_in("users", PMF_DEFAULT_USERS, 1, 1_000_000)?;
    let items = settings.usize_in("items", PMF_DEFAULT_ITEMS, 1, 1_000_000)?;
    let noise = positive(settings, "noise_sd", math::sqrt(0.5))?;
    if (users + items)
        .checked_mul(k)
        .is_none_or(|d| d > 100_000_000)
    {
        return Err(Error::setting("d", "(users + items) × rank is too large"));
    }
    let mut rng = chain_rng(seed, 0);
    let theta = pmf_theta(k, users, items, &mut rng);
    let mut cols: Vec<Vec<f64>> = (0..3).map(|_| Vec::with_capacity(n)).collect();
    for _ in 0..n {
        let i = crate::rng::uniform_index(&mut rng, users);
        let j = crate::rng::uniform_index(&mut rng, items);
        let (a, b) = (i * k, (users + j) * k);
        let uv: f64 = (0..k).map(|c| theta[a + c] * theta[b + c]).sum();
        cols[0].push(i as f64);
        cols[1].push(j as f64);
        cols[2].push(PMF_OFFSET + uv + noise * std_normal(&mut rng));
    }
    let names = ["user", "item", "rating"]
        .iter()
        .map(|s| String::from(*s))
        .collect();
    Table::new(names, cols)
}

fn check_model(model: &str) -> Result<(), Error> {
    if SIMULATED_MODELS.contains(&model) {
        Ok(())
    } else {
        Err(Error::Unknown {
            what: "model",
            name: model.into(),
        })
    }
}

fn check_d(d: usize) -> Result<(), Error> {
    if d == 0 || d > MAX_D {
        return Err(Error::setting(
            "d",
            alloc::format!("{d} is outside [1, {MAX_D}]"),
        ));
    }
    Ok(())
}

/// Draw the true parameters from the start of `rng`.
fn draw_theta(model: &str, d: usize, rng: &mut ChainRng) -> Vec<f64> {
    let slopes = d.saturating_sub(1).max(1) as f64;
    match model {
        "logistic" => (0..d)
            .map(|j| {
                if j == 0 {
                    normal(rng, 0.0, 0.5)
                } else {
                    normal(rng, 0.0, 1.5 / math::sqrt(slopes))
                }
            })
            .collect(),
        "poisson" => (0..d)
            .map(|j| {
                if j == 0 {
                    normal(rng, 1.0, 0.25)
                } else {
                    normal(rng, 0.0, 0.5 / math::sqrt(slopes))
                }
            })
            .collect(),
        "gmm" => gmm::TRUE_THETA.to_vec(),
        "lgssm" => {
            let t = crate::ssm::lgssm::TRUTH;
            Lgssm::theta(t[0], t[1], t[2]).to_vec()
        }
        "sv" => {
            let t = crate::ssm::sv::TRUTH;
            Lgssm::theta(t[0], t[1], t[2]).to_vec()
        }
        "garch" => {
            let t = crate::ssm::garch::TRUTH_ABG;
            Garch::theta_from_abg(t[0], t[1], t[2], t[3]).to_vec()
        }
        // linear, robust, gaussian
        _ => (0..d).map(|_| std_normal(rng)).collect(),
    }
}

/// The parameters [`simulate`] uses for `model`, `d` and `seed` (intercept first for
/// regressions; for `linear` with `noise=gamma` the coefficients only, log τ = −2 log noise_sd
/// is not included; for `gmm` always (0, 1)).
pub fn true_parameters(model: &str, d: usize, seed: u64) -> Result<Vec<f64>, Error> {
    check_model(model)?;
    if !matches!(model, "gmm" | "lgssm" | "sv" | "garch") {
        check_d(d)?;
    }
    let mut rng = chain_rng(seed, 0);
    if model == "pmf" {
        return Ok(pmf_theta(d, PMF_DEFAULT_USERS, PMF_DEFAULT_ITEMS, &mut rng));
    }
    Ok(draw_theta(model, d, &mut rng))
}

fn positive(settings: &Settings, key: &str, default: f64) -> Result<f64, Error> {
    let v = settings.f64_or(key, default)?;
    if v > 0.0 {
        Ok(v)
    } else {
        Err(Error::setting(
            key,
            alloc::format!("{} must be > 0", crate::settings::number(v)),
        ))
    }
}

/// A Student-t(ν) draw: z / √(χ²_ν/ν), with χ²_ν/ν ~ Gamma(ν/2, scale 2/ν).
fn student_t(rng: &mut ChainRng, nu: f64) -> f64 {
    let z = std_normal(rng);
    let g = gamma(rng, 0.5 * nu, 2.0 / nu);
    z / math::sqrt(g)
}

/// Synthetic data for `model`: `n` rows, `d` parameters (`pmf`: the rank), reproducible from
/// `seed`. Simulation options are read from `settings` (`noise_sd`, `nu`, `noise_var`,
/// `correlation`, `rho`, `sd`, `users`, `items`;
/// keys read are marked used; other keys are left for the caller to check).
pub fn simulate(
    model: &str,
    n: usize,
    d: usize,
    seed: u64,
    settings: &Settings,
) -> Result<Table, Error> {
    check_model(model)?;
    if n == 0 {
        return Err(Error::setting("n", "the number of rows must be at least 1"));
    }
    if matches!(model, "lgssm" | "sv" | "garch") {
        return simulate_series(model, n, seed, settings);
    }
    let gmm = model == "gmm";
    if !gmm {
        check_d(d)?;
        if n.checked_mul(d).is_none() {
            return Err(Error::setting("n", "n × d is too large"));
        }
    }
    if model == "pmf" {
        return simulate_pmf(n, d, seed, settings);
    }
    let mut rng = chain_rng(seed, 0);
    let theta = draw_theta(model, d, &mut rng);
    match model {
        "gmm" => {
            let nv = positive(settings, "noise_var", gmm::DEFAULT_NOISE_VAR)?;
            let sd = math::sqrt(nv);
            let x = (0..n)
                .map(|_| {
                    let second = uniform(&mut rng) >= 0.5;
                    let m = if second {
                        theta[0] + theta[1]
                    } else {
                        theta[0]
                    };
                    normal(&mut rng, m, sd)
                })
                .collect();
            Table::new(vec![String::from("x")], vec![x])
        }
        "gaussian" => {
            let corr = match settings.choice("correlation", "equi", &["equi", "ar1"])? {
                "ar1" => Correlation::Ar1,
                _ => Correlation::Equi,
            };
            let rho = settings.f64_or("rho", gaussian::DEFAULT_RHO)?;
            let sd = settings.f64_or("sd", gaussian::DEFAULT_SD)?;
            let cov = gaussian::covariance(d, corr, rho, sd)?;
            let chol = Cholesky::new(&cov, d)?;
            let mut cols = vec![Vec::with_capacity(n); d];
            let mut z = vec![0.0; d];
            let mut e = vec![0.0; d];
            for _ in 0..n {
                z.iter_mut().for_each(|v| *v = std_normal(&mut rng));
                chol.mul_l(&z, &mut e);
                for j in 0..d {
                    cols[j].push(theta[j] + e[j]);
                }
            }
            let names = (1..=d).map(|j| alloc::format!("x{j}")).collect();
            Table::new(names, cols)
        }
        _ => {
            let noise = match model {
                "linear" => positive(settings, "noise_sd", crate::model::linear::DEFAULT_NOISE_SD)?,
                "robust" => positive(settings, "noise_sd", 1.0)?,
                _ => 1.0,
            };
            let nu = if model == "robust" {
                positive(settings, "nu", 4.0)?
            } else {
                4.0
            };
            let mut cols = vec![Vec::with_capacity(n); d];
            let mut x = vec![0.0; d];
            for _ in 0..n {
                let mut eta = theta[0];
                for j in 1..d {
                    x[j] = std_normal(&mut rng);
                    eta += theta[j] * x[j];
                }
                let y = match model {
                    "logistic" => {
                        if bernoulli(&mut rng, math::sigmoid(eta)) {
                            1.0
                        } else {
                            0.0
                        }
                    }
                    "poisson" => poisson(&mut rng, math::exp(eta)) as f64,
                    "robust" => eta + noise * student_t(&mut rng, nu),
                    _ => eta + noise * std_normal(&mut rng),
                };
                cols[0].push(y);
                for j in 1..d {
                    cols[j].push(x[j]);
                }
            }
            let mut names = vec![String::from("y")];
            names.extend((1..d).map(|j| alloc::format!("x{j}")));
            Table::new(names, cols)
        }
    }
}

/// A time series from `lgssm`, `sv` or `garch` (see the module docs), column `y`.
fn simulate_series(model: &str, n: usize, seed: u64, settings: &Settings) -> Result<Table, Error> {
    let mut rng = chain_rng(seed, 0);
    let y = if model == "garch" {
        let t = crate::ssm::garch::TRUTH_ABG;
        let alpha = positive(settings, "alpha", t[0])?;
        let beta = positive(settings, "beta", t[1])?;
        let gamma = positive(settings, "gamma", t[2])?;
        let tau = positive(settings, "tau", t[3])?;
        if beta + gamma >= 1.0 {
            return Err(Error::setting(
                "beta",
                "beta + gamma must be < 1 (stationarity)",
            ));
        }
        let theta = Garch::theta_from_abg(alpha, beta, gamma, tau);
        Garch::default().simulate(&theta, n, &mut rng).1
    } else {
        let t = if model == "sv" {
            crate::ssm::sv::TRUTH
        } else {
            crate::ssm::lgssm::TRUTH
        };
        let phi = settings.f64_or("phi", t[0])?;
        if !(phi.is_finite() && math::abs(phi) < 1.0) {
            return Err(Error::setting("phi", "must be in (−1, 1) (stationarity)"));
        }
        let sigma = positive(settings, "sigma", t[1])?;
        let tau = positive(settings, "tau", t[2])?;
        let theta = Lgssm::theta(phi, sigma, tau);
        if model == "sv" {
            StochasticVolatility::default()
                .simulate(&theta, n, &mut rng)
                .1
        } else {
            Lgssm::default().simulate(&theta, n, &mut rng).1
        }
    };
    Table::new(vec![String::from("y")], vec![y])
}
