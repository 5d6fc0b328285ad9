#![allow(clippy::needless_range_loop)]
//! The particle filter on the non-linear stochastic volatility model, against a near-exact
//! reference: a 1-d grid (quadrature) filter with 600 nodes on [−9, 9] (spacing 0.03, i.e. 17
//! nodes per transition sd σ = 0.5), T = 50. Checks:
//! - the bootstrap PF likelihood is unbiased on the exp scale against the grid likelihood;
//! - the path-space Fisher score (with the initial-law term) agrees within 3 SE with the central
//!   finite difference of the grid log-likelihood (so the SV complete-data score, including the
//!   e^{−x/2} normaliser the thesis drops, is right);
//! - the buffered particle gradient with B covering the series is unbiased for the full gradient
//!   when averaged over the subsequence start.

use tallmc_core::rng::chain_rng;
use tallmc_core::ssm::buffered::{BufferConfig, BufferedGradient};
use tallmc_core::ssm::pf::{ParticleFilter, PfConfig, Proposal};
use tallmc_core::ssm::resample::Resampling;
use tallmc_core::ssm::sv::{StochasticVolatility, TRUTH};
use tallmc_core::ssm::{state, State, StateSpaceModel};
use tallmc_tests::{mean, sd};

/// log p(y₁:T|θ) by quadrature on a grid of 600 nodes on [−9, 9], using the model's own log
/// densities ([`tallmc_tests::grid_log_lik`]).
fn grid_log_lik(model: &StochasticVolatility, theta: &[f64], y: &[f64]) -> f64 {
    tallmc_tests::grid_log_lik(model, theta, y, 600, 9.0)
}

fn setup() -> (StochasticVolatility, Vec<f64>, Vec<f64>) {
    let model = StochasticVolatility::default();
    let theta = tallmc_core::ssm::Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]).to_vec();
    let mut rng = chain_rng(31, 0);
    let (_, y) = model.simulate(&theta, 50, &mut rng);
    (model, theta, y)
}

#[test]
fn sv_particle_likelihood_and_score_match_quadrature() {
    likelihood_and_score_match_quadrature(Proposal::Bootstrap, 32);
}

/// The same with the default `optimal` proposal (the Laplace approximation mixed with the prior
/// kernel): the likelihood stays unbiased and the score consistent.
#[test]
fn sv_laplace_proposal_likelihood_and_score_match_quadrature() {
    likelihood_and_score_match_quadrature(Proposal::Optimal, 34);
}

fn likelihood_and_score_match_quadrature(proposal: Proposal, seed: u64) {
    let (model, theta, y) = setup();
    let exact = grid_log_lik(&model, &theta, &y);
    let h = 1e-4;
    let mut fd = [0.0; 3];
    for k in 0..3 {
        let mut tp = theta.clone();
        let mut tm = theta.clone();
        tp[k] += h;
        tm[k] -= h;
        fd[k] = (grid_log_lik(&model, &tp, &y) - grid_log_lik(&model, &tm, &y)) / (2.0 * h);
    }
    let cfg = PfConfig::new(1000, proposal, Resampling::Systematic, 1.0).unwrap();
    let mut pf = ParticleFilter::new(cfg).unwrap();
    let mut rng = chain_rng(seed, 0);
    let reps = 200;
    let (z, sc) = tallmc_tests::pf_replicates(&mut pf, &model, &theta, &y, exact, reps, &mut rng);
    let se = sd(&z) / (reps as f64).sqrt();
    eprintln!(
        "SV ({proposal:?}): grid log-lik {exact:.4}, mean Z {:.4} ± {se:.4}, sd log Z {:.3}",
        mean(&z),
        sd(&z.iter().map(|v| v.ln()).collect::<Vec<_>>())
    );
    assert!(
        (mean(&z) - 1.0).abs() < 3.0 * se,
        "mean Z {} ± {se}",
        mean(&z)
    );
    for k in 0..3 {
        let se = sd(&sc[k]) / (reps as f64).sqrt();
        eprintln!(
            "SV score ({proposal:?}) [{k}]: PF {:.3} ± {se:.3} vs grid FD {:.3}",
            mean(&sc[k]),
            fd[k]
        );
        assert!(
            (mean(&sc[k]) - fd[k]).abs() < 3.0 * se,
            "[{k}] {} ± {se} vs {}",
            mean(&sc[k]),
            fd[k]
        );
    }
}

/// With B ≥ T every window is the whole series, so averaging the buffered estimate over starts
/// (here: over random starts) estimates the full gradient without buffering bias.
#[test]
fn sv_fully_buffered_gradient_is_unbiased() {
    let (model, theta, y) = setup();
    let h = 1e-4;
    let mut fd = [0.0; 3];
    for k in 0..3 {
        let mut tp = theta.clone();
        let mut tm = theta.clone();
        tp[k] += h;
        tm[k] -= h;
        fd[k] = (grid_log_lik(&model, &tp, &y) - grid_log_lik(&model, &tm, &y)) / (2.0 * h);
    }
    let cfg = PfConfig::new(500, Proposal::Bootstrap, Resampling::Stratified, 0.5).unwrap();
    let mut est = BufferedGradient::new(BufferConfig::new(5, 50).unwrap(), cfg).unwrap();
    let mut rng = chain_rng(33, 0);
    let reps = 600;
    let mut sc = vec![Vec::new(); 3];
    for _ in 0..reps {
        let mut g = [0.0; 3];
        let info = est.estimate(&model, &theta, &y, &mut rng, &mut g).unwrap();
        assert_eq!(info.window.len(), 50);
        assert_eq!(est.filter().ess().len(), 50);
        for k in 0..3 {
            sc[k].push(g[k]);
        }
    }
    for k in 0..3 {
        let se = sd(&sc[k]) / (reps as f64).sqrt();
        eprintln!(
            "SV buffered [{k}]: {:.3} ± {se:.3} vs grid FD {:.3}",
            mean(&sc[k]),
            fd[k]
        );
        assert!(
            (mean(&sc[k]) - fd[k]).abs() < 3.0 * se,
            "[{k}] {} ± {se} vs {}",
            mean(&sc[k]),
            fd[k]
        );
    }
}

/// The batched Laplace proposal (what the particle filter calls: passes without random
/// numbers branch-free with `fast_exp`/`fast_ln`, vectorised) draws from the same law as the
/// per-particle `laplace_mixture`: from the batch's random numbers (n uniforms, then n normals
/// from `fill_std_normal`), every draw and log weight agrees within rounding with
/// `laplace_mixture_given` at the same (uᵢ, zᵢ), on calm and outlying observations, y = 0,
/// extreme ancestors, and two θ where the curvature is not finite (the prior-kernel fallback,
/// weighted by g alone): τ = e⁻⁴⁰⁰ (τ² underflows, c = y²/(2τ²) = ∞, so g = 0 for y ≠ 0) and
/// σ = e⁻⁴⁰⁰ (1/σ² = ∞; g finite). Both the defensive component (uᵢ < α) and the Laplace
/// component are drawn.
#[test]
fn laplace_batch_matches_the_per_particle_proposal() {
    use tallmc_core::dist::fill_std_normal;
    use tallmc_core::rng::uniform;
    use tallmc_core::ssm::sv::{laplace_mixture_batch, laplace_mixture_given, DEFENSIVE_WEIGHT};
    use tallmc_core::ssm::OptimalBatch;
    let model = StochasticVolatility::default();
    let thetas = [
        [0.9, 0.5f64.ln(), 0.5f64.ln()],
        [0.98, 0.1f64.ln(), 1.5f64.ln()],
        [-0.5, 1.2f64.ln(), 0.05f64.ln()],
        // τ = e⁻⁴⁰⁰: τ² underflows to 0, c = ∞ (NaN at y = 0), every particle falls back
        [0.5, 0.3f64.ln(), -400.0],
        // σ = e⁻⁴⁰⁰: 1/σ² = ∞, every particle falls back with a finite weight g
        [0.5, -400.0, 0.5f64.ln()],
    ];
    let ys = [0.0, 0.3, -1.2, 4.0, 60.0, -300.0];
    let mut prev_rng = chain_rng(5, 0);
    let prev: Vec<State> = (0..257)
        .map(|i| {
            let x = match i % 5 {
                0 => -30.0,
                1 => 25.0,
                _ => 3.0 * tallmc_core::dist::std_normal(&mut prev_rng),
            };
            state(x)
        })
        .collect();
    let mut batch = OptimalBatch::default();
    let mut fallbacks = 0;
    let mut defensive = 0;
    for (k, theta) in thetas.iter().enumerate() {
        let eta = model.natural_vec(theta);
        for (j, &y) in ys.iter().enumerate() {
            let seed = (100 * k + j) as u64;
            let mut rng = chain_rng(seed, 1);
            let u: Vec<f64> = prev.iter().map(|_| uniform(&mut rng)).collect();
            let mut z = vec![0.0; prev.len()];
            fill_std_normal(&mut rng, &mut z);
            let one: Vec<_> = prev
                .iter()
                .enumerate()
                .map(|(i, p)| laplace_mixture_given(&eta, p, y, u[i], z[i]))
                .collect();
            defensive += u.iter().filter(|&&ui| ui < DEFENSIVE_WEIGHT).count();
            let mut rng = chain_rng(seed, 1);
            batch.prev.clone_from(&prev);
            laplace_mixture_batch(&eta, y, &mut rng, &mut batch);
            assert_eq!(batch.out.len(), prev.len());
            for (i, d) in one.iter().enumerate() {
                let (a, b) = (d.state[0], batch.out[i][0]);
                assert!(
                    (a - b).abs() <= 1e-9 * (1.0 + a.abs()),
                    "θ {theta:?} y {y} particle {i}: draw {a} vs batched {b}"
                );
                let (a, b) = (d.log_weight, batch.log_w[i]);
                assert!(
                    (a - b).abs() <= 1e-8 * (1.0 + a.abs()) || a == b || (a.is_nan() && b.is_nan()),
                    "θ {theta:?} y {y} particle {i}: log weight {a} vs batched {b}"
                );
                if k >= 3 {
                    // the fallback: a prior-kernel draw weighted by g alone
                    let g = model.log_observation(&eta, &batch.out[i], y);
                    assert!(
                        b == g || (b.is_nan() && g.is_nan()),
                        "fallback weight {b} vs g {g}"
                    );
                    if k == 4 {
                        assert!(g.is_finite(), "σ = e⁻⁴⁰⁰, y {y}: g {g}");
                    }
                    fallbacks += 1;
                }
            }
        }
    }
    assert_eq!(fallbacks, 2 * ys.len() * prev.len());
    // about α of the draws come from the defensive component (binomial: 4 sd)
    let total = (thetas.len() * ys.len() * prev.len()) as f64;
    let sd = (total * DEFENSIVE_WEIGHT * (1.0 - DEFENSIVE_WEIGHT)).sqrt();
    assert!(
        (defensive as f64 - total * DEFENSIVE_WEIGHT).abs() < 4.0 * sd,
        "{defensive} defensive draws of {total}"
    );
}
