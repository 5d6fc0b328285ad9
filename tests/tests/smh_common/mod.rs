//! Shared data generators of the SMH tests (spec 004 §5.2): x_ij ~ N(0, 1), θ₀ = 1_d, flat prior.
#![allow(dead_code)]

use std::sync::Arc;
use tallmc_core::data::Design;
use tallmc_core::dist;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, Glm, Logistic, Poisson, StudentT};
use tallmc_core::rng::{chain_rng, uniform};

fn design(n: usize, d: usize, seed: u64) -> (Design, tallmc_core::rng::ChainRng) {
    let mut rng = chain_rng(seed, 0);
    let x: Vec<f64> = (0..n * d).map(|_| dist::std_normal(&mut rng)).collect();
    let names = (0..d).map(|j| format!("x{j}")).collect();
    (
        Design {
            n,
            d,
            x,
            y: vec![0.0; n],
            names,
        },
        rng,
    )
}

/// Logistic regression, y ∈ {0, 1} with P(1) = σ(xᵀ1), flat prior.
pub fn logistic(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    let (mut des, mut rng) = design(n, d, seed);
    for i in 0..n {
        let eta: f64 = des.row(i).iter().sum();
        let p = 1.0 / (1.0 + (-eta).exp());
        des.y[i] = if uniform(&mut rng) < p { 1.0 } else { 0.0 };
    }
    Arc::new(Glm::new(des, Logistic, Prior::Flat))
}

/// Robust (Student-t, ν = 4) regression fitted to y = xᵀ1 + N(0, 1), flat prior.
pub fn robust(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    let (mut des, mut rng) = design(n, d, seed);
    for i in 0..n {
        let eta: f64 = des.row(i).iter().sum();
        des.y[i] = eta + dist::std_normal(&mut rng);
    }
    Arc::new(Glm::new(des, StudentT::default(), Prior::Flat))
}

/// Poisson regression, y ~ Poisson(exp(0.2·xᵀ1)), flat prior (no finite third-derivative
/// bound).
pub fn poisson(n: usize, d: usize, seed: u64) -> Arc<dyn DataModel> {
    let (mut des, mut rng) = design(n, d, seed);
    for i in 0..n {
        let eta: f64 = 0.2 * des.row(i).iter().sum::<f64>();
        // Knuth's product of uniforms (small means)
        let (l, mut k, mut p) = ((-eta.exp()).exp(), 0.0, 1.0);
        loop {
            p *= uniform(&mut rng);
            if p <= l {
                break;
            }
            k += 1.0;
        }
        des.y[i] = k;
    }
    Arc::new(Glm::new(des, Poisson, Prior::Flat))
}

/// Least-squares slope of y on x.
pub fn slope(x: &[f64], y: &[f64]) -> f64 {
    let n = x.len() as f64;
    let mx = x.iter().sum::<f64>() / n;
    let my = y.iter().sum::<f64>() / n;
    let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
    let sxx: f64 = x.iter().map(|a| (a - mx) * (a - mx)).sum();
    sxy / sxx
}

/// The paper's SMH settings added to `kv`: the ℓ1 bound of eq. 13 (`bound=l1`) and, for the
/// random-walk proposal, σ = 1 (`scale=1`). Spec 004's thresholds (evaluations per iteration,
/// acceptance rates, Λ) are calibrated with them; tallmc's defaults are the tighter ℓ2 bound and
/// σ = 2.38/√d, tested on real data in `realdata`.
#[allow(dead_code)]
pub fn paper<'a>(kv: &[&'a str]) -> Vec<&'a str> {
    let mut v = kv.to_vec();
    v.push("bound=l1");
    let rw = !kv
        .iter()
        .any(|p| p.starts_with("proposal=") && *p != "proposal=rw");
    if rw && !kv.iter().any(|p| p.starts_with("scale=")) {
        v.push("scale=1");
    }
    v
}
