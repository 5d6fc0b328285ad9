#![allow(clippy::needless_range_loop)]
//! GARCH with almost no observation noise has a near-closed-form likelihood: as τ → 0, xₜ = yₜ
//! for t ≥ 1 and only x₀ stays latent, so
//!
//! p(y₁:T|θ) → ∫ N(x₀; 0, v₀) Πₜ N(yₜ; 0, σₜ²) dx₀,  σ₁² = μ(1−φ) + φ(λx₀² + (1−λ)v₀),
//! σₜ² = μ(1−φ) + φ(λyₜ₋₁² + (1−λ)σₜ₋₁²),
//!
//! a 1-d integral done here by quadrature (θ-free initial law x₀ ~ N(0, v₀), σ₀² = v₀). With
//! τ = 10⁻³ (error O(τ²)) the particle filter with the locally optimal proposal must reproduce
//! this likelihood (exp scale, 3 SE) and, through Fisher's identity and the recursive derivative
//! Dₜ = dσₜ²/dθ carried in the state, its θ-gradient (3 SE per coordinate), at parameters where
//! γ = φ(1−λ) = 0.63 is large. The thesis' direct-only score (σₜ₋₁² held fixed) fails there.

use tallmc_core::rng::chain_rng;
use tallmc_core::ssm::pf::{ParticleFilter, PfConfig, Proposal};
use tallmc_core::ssm::resample::Resampling;
use tallmc_core::ssm::{Garch, InitialLaw, StateSpaceModel};
use tallmc_tests::{mean, sd};

const V0: f64 = 0.5;

/// The τ → 0 log-likelihood by quadrature over x₀ (4001 nodes on ±10 sd).
fn reference_log_lik(theta: &[f64], y: &[f64]) -> f64 {
    let sig = |v: f64| 1.0 / (1.0 + (-v).exp());
    let (mu, phi, lambda) = (theta[0].exp(), sig(theta[1]), sig(theta[2]));
    let nodes = 4001;
    let half = 10.0 * V0.sqrt();
    let dz = 2.0 * half / (nodes - 1) as f64;
    let mut terms = Vec::with_capacity(nodes);
    for k in 0..nodes {
        let x0 = -half + k as f64 * dz;
        let mut lp = -0.5 * ((2.0 * std::f64::consts::PI * V0).ln() + x0 * x0 / V0) + dz.ln();
        let (mut xp, mut s2) = (x0, V0);
        for &yt in y {
            s2 = mu * (1.0 - phi) + phi * (lambda * xp * xp + (1.0 - lambda) * s2);
            lp += -0.5 * ((2.0 * std::f64::consts::PI * s2).ln() + yt * yt / s2);
            xp = yt;
        }
        terms.push(lp);
    }
    let m = terms.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + terms.iter().map(|t| (t - m).exp()).sum::<f64>().ln()
}

#[test]
fn garch_particle_filter_matches_the_noise_free_limit() {
    let model = Garch::new(InitialLaw::Normal { var: V0 }).unwrap();
    let tau: f64 = 1e-3;
    // μ = 0.5, φ = 0.9, λ = 0.3: β = 0.27, γ = 0.63
    let theta = Garch::theta(0.5, 0.9, 0.3, tau);
    let mut rng = chain_rng(41, 0);
    let (_, y) = model.simulate(&theta, 60, &mut rng);
    let exact = reference_log_lik(&theta, &y);
    let h = 1e-5;
    let mut fd = [0.0; 3];
    for k in 0..3 {
        let mut tp = theta.to_vec();
        let mut tm = theta.to_vec();
        tp[k] += h;
        tm[k] -= h;
        fd[k] = (reference_log_lik(&tp, &y) - reference_log_lik(&tm, &y)) / (2.0 * h);
    }
    let cfg = PfConfig::new(1000, Proposal::Optimal, Resampling::Systematic, 1.0).unwrap();
    let mut pf = ParticleFilter::new(cfg).unwrap();
    let reps = 100;
    let (z, sc) = tallmc_tests::pf_replicates(&mut pf, &model, &theta, &y, exact, reps, &mut rng);
    let se = sd(&z) / (reps as f64).sqrt();
    eprintln!(
        "GARCH τ→0: reference log-lik {exact:.4}, mean Z {:.5} ± {se:.5}",
        mean(&z)
    );
    assert!(
        (mean(&z) - 1.0).abs() < 3.0 * se + 1e-9,
        "mean Z {} ± {se}",
        mean(&z)
    );
    for k in 0..3 {
        let se = sd(&sc[k]) / (reps as f64).sqrt();
        eprintln!(
            "GARCH score [{k}]: PF {:.4} ± {se:.4} vs quadrature FD {:.4}",
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

    // The complete-data score on one noise-free path (x₀ = 0, xₜ = yₜ): the model's (recursive)
    // score against the thesis' direct-only one, which drops γDₜ₋₁.
    let eta = model.natural_vec(&theta);
    let (mu, phi, lambda) = (eta[0], eta[1], eta[2]);
    let mut direct = [0.0; 3];
    let mut full = [0.0; 3];
    let mut prev = model.with_value(&eta, None, 0.0);
    for t in 0..y.len() {
        let cur = model.with_value(&eta, Some(&prev), y[t]);
        let mut g = [0.0; 4];
        model.grad_log_joint(&eta, &prev, &cur, y[t], &mut g);
        let s2 = cur[1];
        let c = (y[t] * y[t] - s2) / (2.0 * s2 * s2);
        let xp2 = prev[0] * prev[0];
        let d = [
            mu * (1.0 - phi),
            (lambda * xp2 + (1.0 - lambda) * prev[1] - mu) * phi * (1.0 - phi),
            phi * (xp2 - prev[1]) * lambda * (1.0 - lambda),
        ];
        for k in 0..3 {
            direct[k] += c * d[k];
            full[k] += g[k];
        }
        prev = cur;
    }
    eprintln!("path x₀ = 0: recursive score {full:.3?}, thesis direct-only {direct:.3?}");
    let rel = (0..3)
        .map(|k| (full[k] - direct[k]).abs() / full[k].abs().max(1.0))
        .fold(0.0, f64::max);
    assert!(
        rel > 0.2,
        "the recursion term should matter at γ = 0.63 (max rel. difference {rel})"
    );
}
