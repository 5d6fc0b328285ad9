//! SMH (spec 004 §5.2) T3 — exactness against quadrature: logistic regression, d = 2, n = 32,
//! flat prior. MH (SMH with R = 0, i.e. always the full-data fallback), SMH-1 and SMH-2 with and
//! without truncation, pCN ρ = 0.5 for SMH-2 and for SMH-1 (whose first factor is not 1, so the
//! q-ratio must be right), and the π̂₁-reversible proposal (17) (σ = 4, θ̂ moved off the mode so
//! that ∇U(θ̂) ≠ 0 and the proposal's drift and q-ratio matter) for SMH-2 (R = n) and SMH-1
//! (R = ∞). Every posterior mean within 4 MCSE of quadrature, every sd within 4 %; the Laplace
//! mean is far (≥ 20 MCSE of MH) from the truth (power).
//!
//! pCN with ρ = 0 (the independence proposal N(μ̂, H⁻¹)) is tested differently, because a long
//! chain's MCSE is meaningless for it here. This n = 32 posterior has exponential tails
//! (logistic, flat prior) while the proposal is Gaussian, so the importance weight
//! w = π/π̂₂ is unbounded: the independence sampler is then not geometrically ergodic
//! (Mengersen & Tweedie 1996, Thm 2.1), SMH's acceptance is below MH's (Prop. 2.1), and
//! E_π[w] = ∫π²/π̂₂ = ∞, so θ has no finite asymptotic variance and no √T CLT: a chain spends
//! long stretches stuck in the tail (a 2·10⁶-iteration run: sd +51 %). `t3_pcn_rho0_weight_is_unbounded`
//! measures this: ∫_{box} π²/π̂₂ grows without bound with the box. What can be tested honestly
//! is the kernel's π-invariance: `t3_pcn_rho0_invariance` draws 10⁵ exact independent posterior
//! samples (rejection from a Student-t envelope), applies 3 SMH-2 steps (ρ = 0, R = ∞) to each,
//! and checks that the moments of the result equal those of the input (paired z ≤ 4, an i.i.d.
//! CLT with finite variance) and of quadrature; a kernel with the wrong sign of the q-ratio
//! (spec pitfall 17) fails the same check by a wide margin (its z is asserted > 8).

#![allow(clippy::needless_range_loop)]

use crate::smh_common;

use std::sync::{Arc, OnceLock};
use tallmc_core::dist::std_normal;
use tallmc_core::kernel::smh::{Smh, SmhOptions, SmhProposal, SmhState};
use tallmc_core::model::DataModel;
use tallmc_core::optim::{find_mode, ModeOptions};
use tallmc_core::rng::{chain_rng, uniform};
use tallmc_core::sampler::smh::SmhChain;
use tallmc_tests::{mcse_mean, mean, run, run_sampler, sd};

const N: usize = 32;
const ITERS: usize = 400_000;

struct Truth {
    model: Arc<dyn DataModel>,
    mode: Vec<f64>,
    mean: [f64; 2],
    sd: [f64; 2],
    /// Laplace covariance H⁻¹ (row-major 2 × 2).
    cov: Vec<f64>,
    /// The quadrature grid: lower corner, steps, cells per side, log-likelihood − its max.
    lo: [f64; 2],
    h: [f64; 2],
    g: usize,
    lp: Vec<f64>,
}

fn truth() -> &'static Truth {
    static T: OnceLock<Truth> = OnceLock::new();
    T.get_or_init(|| {
        let model = smh_common::logistic(N, 2, 3);
        let m = find_mode(model.as_ref(), &[0.0, 0.0], &ModeOptions::default()).expect("mode");
        // A separable data set has no mode (the flat-prior posterior would be improper).
        assert!(m.converged, "data set is separable");
        let cov = m.covariance().expect("pd");
        let lsd = [cov[0].sqrt(), cov[3].sqrt()];
        let g = 1200;
        let (lo0, lo1) = (m.mode[0] - 30.0 * lsd[0], m.mode[1] - 30.0 * lsd[1]);
        let (h0, h1) = (60.0 * lsd[0] / g as f64, 60.0 * lsd[1] / g as f64);
        let mut lp = vec![0.0; (g + 1) * (g + 1)];
        let mut mx = f64::NEG_INFINITY;
        for a in 0..=g {
            for b in 0..=g {
                let th = [lo0 + a as f64 * h0, lo1 + b as f64 * h1];
                let v = model.log_lik_all(&th);
                lp[a * (g + 1) + b] = v;
                mx = mx.max(v);
            }
        }
        let (mut z, mut s0, mut s1, mut q0, mut q1, mut edge) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for a in 0..=g {
            for b in 0..=g {
                let w = (lp[a * (g + 1) + b] - mx).exp();
                let th = [lo0 + a as f64 * h0, lo1 + b as f64 * h1];
                z += w;
                s0 += w * th[0];
                s1 += w * th[1];
                q0 += w * th[0] * th[0];
                q1 += w * th[1] * th[1];
                if a == 0 || b == 0 || a == g || b == g {
                    edge = f64::max(edge, w);
                }
            }
        }
        assert!(edge < 1e-12, "grid too small: edge weight {edge}");
        let mean = [s0 / z, s1 / z];
        let sd = [
            (q0 / z - mean[0] * mean[0]).sqrt(),
            (q1 / z - mean[1] * mean[1]).sqrt(),
        ];
        eprintln!(
            "quadrature mean {mean:?} sd {sd:?}; Laplace mode {:?} sd {lsd:?}",
            m.mode
        );
        for v in lp.iter_mut() {
            *v -= mx;
        }
        Truth {
            model,
            mode: m.mode.clone(),
            mean,
            sd,
            cov: cov.clone(),
            lo: [lo0, lo1],
            h: [h0, h1],
            g,
            lp,
        }
    })
}

/// Run one configuration and check it against quadrature; returns the MCSEs of the means.
fn check(sampler: &str, settings: &[&str], seed: u64) -> [f64; 2] {
    let t = truth();
    let r = run_sampler(
        sampler,
        t.model.clone(),
        &smh_common::paper(settings),
        seed,
        0,
        ITERS,
    );
    check_run(sampler, settings, r)
}

fn check_run(sampler: &str, settings: &[&str], r: tallmc_tests::Run) -> [f64; 2] {
    let t = truth();
    let iters = r.stats.len();
    let acc = r.stats.iter().filter(|s| s.accepted).count() as f64 / iters as f64;
    let fb = r.stats.iter().map(|s| s.extra[1]).sum::<f64>() / iters as f64;
    let evals = r.stats.iter().map(|s| s.lik_evals as f64).sum::<f64>() / iters as f64;
    let mut mcse = [0.0; 2];
    for j in 0..2 {
        let x = r.col(j);
        let (m, s, e) = (mean(&x), sd(&x), mcse_mean(&x));
        mcse[j] = e;
        let z = (m - t.mean[j]) / e;
        let rel = s / t.sd[j] - 1.0;
        eprintln!(
            "{sampler} {settings:?}: acc {acc:.3} fallback {fb:.3} evals/it {evals:.1}; θ{j} mean {m:.4} (z {z:+.2}) sd {s:.4} ({:+.2}%)",
            100.0 * rel
        );
        assert!(z.abs() <= 4.0, "{sampler} {settings:?} θ{j}: z = {z}");
        assert!(
            rel.abs() <= 0.04,
            "{sampler} {settings:?} θ{j}: sd off by {rel}"
        );
    }
    mcse
}

#[test]
fn t3_mh_reference_and_power() {
    let mcse = check("smh-2", &["truncation=0"], 101);
    let t = truth();
    for j in 0..2 {
        let gap = (t.mode[j] - t.mean[j]).abs() / mcse[j];
        assert!(
            gap >= 20.0,
            "θ{j}: Laplace mode only {gap} MCSE from the mean"
        );
    }
}

#[test]
fn t3_smh1_rw() {
    check("smh-1", &[], 102);
    check("smh-1", &["truncation=inf"], 103);
}

#[test]
fn t3_smh2_rw() {
    check("smh-2", &[], 104);
    check("smh-2", &["truncation=inf"], 105);
}

/// tallmc's defaults (the ℓ2 bound and σ = 2.38/√d, not the paper's ℓ1 bound and σ = 1) are
/// exact too, with and without truncation.
#[test]
fn t3_defaults_l2_bound_auto_scale() {
    let t = truth();
    for (kv, seed) in [(&[][..], 111), (&["truncation=inf"][..], 112)] {
        for sampler in ["smh-2", "smh-1"] {
            let r = run_sampler(sampler, t.model.clone(), kv, seed, 0, ITERS);
            check_run(sampler, kv, r);
        }
    }
}

#[test]
fn t3_pcn() {
    check("smh-2", &["proposal=pcn", "rho=0.5", "truncation=inf"], 107);
    check("smh-1", &["proposal=pcn", "rho=0.5", "truncation=inf"], 108);
}

/// Proposal (17), C = (σ/n)·I with σ = 4, around a θ̂ half a Laplace sd off the mode (so the
/// drift −(C/2)∇U(θ̂) and the q-ratio are not negligible): SMH-2 with R = n, SMH-1 with R = ∞.
#[test]
fn t3_pi1_proposal() {
    let t = truth();
    let theta_hat = [
        t.mode[0] + 0.5 * t.cov[0].sqrt(),
        t.mode[1] - 0.5 * t.cov[3].sqrt(),
    ];
    for (order, trunc, seed) in [(2, None, 109u64), (1, Some(f64::INFINITY), 110)] {
        let opts = SmhOptions {
            order,
            proposal: SmhProposal::Pi1 { scale: 4.0 },
            truncation: trunc,
            ..SmhOptions::default()
        };
        let kernel = Smh::with_theta_hat(t.model.as_ref(), &opts, &theta_hat).expect("setup");
        // The drift is really there: ∇U(θ̂) ≠ 0 at the perturbed point.
        let probe = [theta_hat[0] + 0.1, theta_hat[1] - 0.2];
        let lq = kernel.log_q_ratio(&theta_hat, &probe);
        assert!(lq.abs() > 1e-3, "q-ratio {lq}: no drift");
        if order == 1 {
            // Flat prior: the π̂₁-reversible proposal makes SMH-1's first factor exactly 1.
            let l0 = kernel.log_first_factor(t.model.as_ref(), &theta_hat, &probe);
            assert!(l0.abs() < 1e-9, "first factor {l0}");
        }
        let mut chain = SmhChain::from_kernel(kernel, t.model.clone(), 0);
        let mut rng = chain_rng(seed, 0);
        let r = run(&mut chain, &mut rng, ITERS);
        let label = format!("smh-{order}");
        check_run(&label, &["proposal=pi1", "scale=4", "θ̂ perturbed"], r);
    }
}

/// log q(θ) of the Laplace fit N(mode, H⁻¹) (the pCN ρ = 0 proposal, up to a constant).
fn log_laplace(t: &Truth, th: [f64; 2]) -> f64 {
    let (a, b, c) = (t.cov[0], t.cov[1], t.cov[3]);
    let det = a * c - b * b;
    let (d0, d1) = (th[0] - t.mode[0], th[1] - t.mode[1]);
    -0.5 * (c * d0 * d0 - 2.0 * b * d0 * d1 + a * d1 * d1) / det
}

/// The measurement behind leaving ρ = 0 out of the long-chain checks: ∫_box π²/π̂₂ (π and π̂₂
/// normalised on the grid) over boxes of growing half-width r (in Laplace sds around the mode)
/// grows without bound, so E_π[w] = ∞ for the independence proposal's weight w = π/π̂₂.
#[test]
fn t3_pcn_rho0_weight_is_unbounded() {
    let t = truth();
    let g = t.g;
    let lsd = [t.cov[0].sqrt(), t.cov[3].sqrt()];
    let cell = t.h[0] * t.h[1];
    // log normalisers of π (grid) and of the Laplace density.
    let mut lz = f64::NEG_INFINITY;
    for v in &t.lp {
        lz = tallmc_core::math::log_add_exp(lz, *v);
    }
    lz += cell.ln();
    let det = t.cov[0] * t.cov[3] - t.cov[1] * t.cov[1];
    let lzq = (2.0 * std::f64::consts::PI).ln() + 0.5 * det.ln();
    let radii = [2.0, 5.0, 10.0, 15.0, 20.0, 29.0];
    let mut out = Vec::new();
    for &r in &radii {
        let mut acc = f64::NEG_INFINITY;
        let mut wmax = f64::NEG_INFINITY;
        for a in 0..=g {
            for b in 0..=g {
                let th = [t.lo[0] + a as f64 * t.h[0], t.lo[1] + b as f64 * t.h[1]];
                let z0 = (th[0] - t.mode[0]).abs() / lsd[0];
                let z1 = (th[1] - t.mode[1]).abs() / lsd[1];
                if z0 > r || z1 > r {
                    continue;
                }
                let lpi = t.lp[a * (g + 1) + b] - lz;
                let lq = log_laplace(t, th) - lzq;
                acc = tallmc_core::math::log_add_exp(acc, 2.0 * lpi - lq);
                wmax = wmax.max(lpi - lq);
            }
        }
        out.push((r, acc + cell.ln(), wmax));
    }
    for (r, li, lw) in &out {
        eprintln!(
            "box ±{r} Laplace sd: log ∫ π²/π̂₂ = {li:.2}, log max w = {lw:.2} (w = π/π̂₂ = {:.3e})",
            lw.exp()
        );
    }
    // Bounded w would cap log max w; here it keeps growing, by hundreds of nats.
    for w in out.windows(2) {
        assert!(w[1].2 > w[0].2, "weight stopped growing: {out:?}");
    }
    assert!(out[5].2 - out[2].2 > 50.0, "{out:?}");
    assert!(out[5].1 > out[2].1 + 50.0, "{out:?}");
}

/// Exact posterior draws by rejection from a Student-t (ν = 4) envelope around the mode with
/// 1.5× the Laplace scale. The bound M is the grid maximum of π/q plus 10 %; a draw above it
/// would make the draws inexact, so the count of such draws is returned (and must be 0).
fn exact_draws(t: &Truth, m: usize, seed: u64) -> (Vec<[f64; 2]>, usize) {
    let s2 = 1.5f64 * 1.5;
    let (a, b, c) = (t.cov[0] * s2, t.cov[1] * s2, t.cov[3] * s2);
    let det = a * c - b * b;
    let l00 = a.sqrt();
    let l10 = b / l00;
    let l11 = (c - l10 * l10).sqrt();
    let nu = 4.0;
    let log_q = |th: [f64; 2]| -> f64 {
        let (d0, d1) = (th[0] - t.mode[0], th[1] - t.mode[1]);
        let q = (c * d0 * d0 - 2.0 * b * d0 * d1 + a * d1 * d1) / det;
        -0.5 * (nu + 2.0) * (1.0 + q / nu).ln()
    };
    let mut log_m = f64::NEG_INFINITY;
    for i in 0..=t.g {
        for j in 0..=t.g {
            let th = [t.lo[0] + i as f64 * t.h[0], t.lo[1] + j as f64 * t.h[1]];
            log_m = log_m.max(t.lp[i * (t.g + 1) + j] - log_q(th));
        }
    }
    log_m += 0.1f64.ln_1p();
    let mx = t.model.log_lik_all(&t.mode) - t.lp.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    let mut rng = chain_rng(seed, 0);
    let mut out = Vec::with_capacity(m);
    let mut over = 0;
    while out.len() < m {
        let (z0, z1) = (std_normal(&mut rng), std_normal(&mut rng));
        let chi: f64 = (0..4).map(|_| std_normal(&mut rng).powi(2)).sum();
        let sc = (nu / chi).sqrt();
        let th = [
            t.mode[0] + sc * l00 * z0,
            t.mode[1] + sc * (l10 * z0 + l11 * z1),
        ];
        let lr = t.model.log_lik_all(&th) - mx - log_q(th) - log_m;
        if lr > 0.0 {
            over += 1;
        }
        if uniform(&mut rng).ln() < lr {
            out.push(th);
        }
    }
    (out, over)
}

/// Moments (θ₁, θ₂, θ₁², θ₂²) of a draw.
fn moments(th: [f64; 2]) -> [f64; 4] {
    [th[0], th[1], th[0] * th[0], th[1] * th[1]]
}

/// Apply `steps` kernel moves to each exact draw; returns the largest |z| of the paired
/// differences of the 4 moments, and of the output's means against quadrature.
fn invariance_z(
    draws: &[[f64; 2]],
    steps: usize,
    seed: u64,
    mut step: impl FnMut(&mut tallmc_core::rng::ChainRng, &mut [f64; 2]) -> bool,
) -> (f64, f64, f64) {
    let t = truth();
    let mut rng = chain_rng(seed, 0);
    let m = draws.len() as f64;
    let (mut sd_, mut sd2) = ([0.0; 4], [0.0; 4]);
    let (mut so, mut so2) = ([0.0; 2], [0.0; 2]);
    let mut accepted = 0usize;
    for d0 in draws {
        let mut th = *d0;
        for _ in 0..steps {
            accepted += step(&mut rng, &mut th) as usize;
        }
        let (a, b) = (moments(th), moments(*d0));
        for k in 0..4 {
            let dd = a[k] - b[k];
            sd_[k] += dd;
            sd2[k] += dd * dd;
        }
        for k in 0..2 {
            so[k] += th[k];
            so2[k] += th[k] * th[k];
        }
    }
    let mut zmax = 0.0f64;
    for k in 0..4 {
        let mean = sd_[k] / m;
        let var = sd2[k] / m - mean * mean;
        zmax = zmax.max((mean / (var / m).sqrt()).abs());
    }
    let mut zq = 0.0f64;
    for k in 0..2 {
        let mean = so[k] / m;
        let var = so2[k] / m - mean * mean;
        zq = zq.max(((mean - t.mean[k]) / (var / m).sqrt()).abs());
    }
    (zmax, zq, accepted as f64 / (m * steps as f64))
}

#[test]
fn t3_pcn_rho0_invariance() {
    let t = truth();
    let (draws, over) = exact_draws(t, 100_000, 131);
    assert_eq!(over, 0, "rejection envelope violated: draws not exact");
    // The exact draws themselves agree with quadrature (sanity of the sampler and the grid).
    for k in 0..2 {
        let x: Vec<f64> = draws.iter().map(|d| d[k]).collect();
        let z = (mean(&x) - t.mean[k]) / (sd(&x) / (x.len() as f64).sqrt());
        eprintln!(
            "exact draws θ{k}: mean {:.4} (z {z:+.2}), sd {:.4} vs quadrature {:.4}",
            mean(&x),
            sd(&x),
            t.sd[k]
        );
        assert!(z.abs() <= 4.0);
    }
    let steps = 3;
    for (order, seed) in [(2, 132u64), (1, 133)] {
        let opts = SmhOptions {
            order,
            proposal: SmhProposal::Pcn { rho: 0.0 },
            truncation: Some(f64::INFINITY),
            ..SmhOptions::default()
        };
        let kernel = Smh::new(t.model.as_ref(), &opts).expect("setup");
        let model = t.model.clone();
        let (z, zq, acc) = invariance_z(&draws, steps, seed, |rng, th| {
            let mut st = SmhState {
                theta: th.to_vec(),
                cached_log_post: None,
            };
            let info = kernel.step(rng, model.as_ref(), &mut st);
            th.copy_from_slice(&st.theta);
            info.accepted
        });
        eprintln!(
            "SMH-{order} pCN ρ = 0, R = ∞, {steps} steps from {} exact draws: acceptance {acc:.3}, max paired |z| {z:.2}, max |z| vs quadrature {zq:.2}",
            draws.len()
        );
        assert!(z <= 4.0 && zq <= 4.0, "SMH-{order}: z {z}, {zq}");
    }
    // Power: full-data independence MH from the same proposal with the q-ratio's sign flipped.
    let kernel = Smh::new(
        t.model.as_ref(),
        &SmhOptions {
            proposal: SmhProposal::Pcn { rho: 0.0 },
            ..SmhOptions::default()
        },
    )
    .expect("setup");
    let model = t.model.clone();
    let (z, zq, acc) = invariance_z(&draws, steps, 134, |rng, th| {
        let mut prop = [0.0; 2];
        let lq = kernel.propose(rng, th, &mut prop);
        let la = model.log_lik_all(&prop) - model.log_lik_all(th) - lq;
        if uniform(rng).ln() < la {
            *th = prop;
            true
        } else {
            false
        }
    });
    eprintln!("wrong q-ratio sign (negative control): acceptance {acc:.3}, max paired |z| {z:.1}, vs quadrature {zq:.1}");
    assert!(z > 8.0, "the invariance check has no power: z = {z}");
}
