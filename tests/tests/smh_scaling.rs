//! SMH (spec 004 §5.2) T5 — cost scaling over n = 2¹², 2¹⁴, …, 2²⁰: SMH-2's mean bound Λ falls
//! like n^{-1/2} (log-log slope in [−0.62, −0.40]), its evaluations per iteration fall strictly,
//! are < 80 at 2¹² and < 6 at 2²⁰, with no fallback from 2¹⁴; SMH-1's is flat (slope in
//! [−0.12, 0.12], within 1.5×, 150–900 evaluations per iteration);
//! T6 — acceptance: MH (RW σ = 1, H⁻¹ preconditioned) in [0.10, 0.20] at d = 10, SMH-2 ≥ 0.85 ×
//! MH, SMH-1 in [0.01, 0.06]; SMH-2 with pCN ρ = 0 ≥ 0.92 at n = 2¹⁶ and rising with n, ordered
//! ρ = 0.9 > 0.5 > 0, with its first factor ≡ 1, and ≥ 0.97 at n = 2²⁰; and pCN ρ = 0 agrees
//! with SMH-2-RW at n = 2¹³.
//! Logistic regression, d = 10, flat prior, chains start at θ̂.

use crate::smh_common;

use std::sync::Arc;
use tallmc_core::model::DataModel;
use tallmc_tests::{mcse_mean, mean, run_sampler, Run};

const D: usize = 10;
const ITERS: usize = 20_000;

fn model(log2n: u32) -> Arc<dyn DataModel> {
    smh_common::logistic(1 << log2n, D, 40 + log2n as u64)
}

fn acc(r: &Run) -> f64 {
    r.stats.iter().filter(|s| s.accepted).count() as f64 / r.stats.len() as f64
}

fn avg(r: &Run, f: impl Fn(&tallmc_core::kernel::StepInfo) -> f64) -> f64 {
    r.stats.iter().map(f).sum::<f64>() / r.stats.len() as f64
}

#[test]
fn t5_cost_scaling() {
    let grid = [12u32, 14, 16, 18, 20];
    let logn: Vec<f64> = grid.iter().map(|&k| (k as f64) * 2f64.ln()).collect();
    let mut lam2 = Vec::new();
    let mut lam1 = Vec::new();
    let mut evals2 = Vec::new();
    for &k in &grid {
        let m = model(k);
        let r2 = run_sampler(
            "smh-2",
            m.clone(),
            &smh_common::paper(&[]),
            200 + k as u64,
            0,
            ITERS,
        );
        let r1 = run_sampler(
            "smh-1",
            m.clone(),
            &smh_common::paper(&[]),
            300 + k as u64,
            0,
            ITERS,
        );
        let (l2, l1) = (avg(&r2, |s| s.extra[0]), avg(&r1, |s| s.extra[0]));
        let (e2, e1) = (
            avg(&r2, |s| s.lik_evals as f64),
            avg(&r1, |s| s.lik_evals as f64),
        );
        let (f2, f1) = (avg(&r2, |s| s.extra[1]), avg(&r1, |s| s.extra[1]));
        eprintln!(
            "n=2^{k}: SMH-2 Λ {l2:.2} evals/it {e2:.2} fallback {f2:.4} acc {:.3} | SMH-1 Λ {l1:.1} evals/it {e1:.1} fallback {f1:.4} acc {:.3}",
            acc(&r2),
            acc(&r1)
        );
        if k >= 14 {
            assert_eq!(f2, 0.0, "SMH-2 fell back at n = 2^{k}");
        }
        assert!((150.0..=900.0).contains(&e1), "SMH-1 evals/it {e1}");
        if k == 12 {
            assert!(e2 < 80.0, "SMH-2 evals/it {e2} at 2^12");
        }
        if k == 20 {
            assert!(e2 < 6.0, "SMH-2 evals/it {e2} at 2^20");
            // T6 at 2^20: SMH-2 with the independence pCN proposal accepts ≥ 97 %.
            let p = run_sampler(
                "smh-2",
                m.clone(),
                &smh_common::paper(&["proposal=pcn", "rho=0"]),
                520,
                0,
                ITERS,
            );
            eprintln!(
                "n=2^20: SMH-2 pCN ρ=0 acc {:.4}, evals/it {:.2}",
                acc(&p),
                avg(&p, |s| s.lik_evals as f64)
            );
            assert!(acc(&p) >= 0.97, "pCN ρ = 0 acceptance {} at 2^20", acc(&p));
        }
        lam2.push(l2.ln());
        lam1.push(l1.ln());
        evals2.push(e2);
    }
    let s2 = smh_common::slope(&logn, &lam2);
    let s1 = smh_common::slope(&logn, &lam1);
    eprintln!("slopes: SMH-2 {s2:.3}, SMH-1 {s1:.3}");
    assert!((-0.62..=-0.40).contains(&s2), "SMH-2 slope {s2}");
    assert!((-0.12..=0.12).contains(&s1), "SMH-1 slope {s1}");
    let (lo, hi) = lam1
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
            (a.min(x), b.max(x))
        });
    assert!(hi - lo <= 1.5f64.ln(), "SMH-1 mean Λ varies more than 1.5×");
    assert!(
        evals2.windows(2).all(|w| w[1] < w[0]),
        "SMH-2 evals/it not decreasing: {evals2:?}"
    );
}

#[test]
fn t6_acceptance_rw() {
    let m = model(13);
    let mh = run_sampler(
        "smh-2",
        m.clone(),
        &smh_common::paper(&["truncation=0"]),
        401,
        0,
        ITERS,
    );
    let s2 = run_sampler("smh-2", m.clone(), &smh_common::paper(&[]), 402, 0, ITERS);
    let s1 = run_sampler("smh-1", m, &smh_common::paper(&[]), 403, 0, ITERS);
    let (a_mh, a2, a1) = (acc(&mh), acc(&s2), acc(&s1));
    eprintln!(
        "n=2^13 RW: MH acc {a_mh:.3} (evals/it {:.0}), SMH-2 {a2:.3} (evals/it {:.2}), SMH-1 {a1:.3} (evals/it {:.1})",
        avg(&mh, |s| s.lik_evals as f64),
        avg(&s2, |s| s.lik_evals as f64),
        avg(&s1, |s| s.lik_evals as f64)
    );
    assert!((0.10..=0.20).contains(&a_mh), "MH acceptance {a_mh}");
    assert!(a2 >= 0.85 * a_mh, "SMH-2 acceptance {a2} vs MH {a_mh}");
    assert!((0.01..=0.06).contains(&a1), "SMH-1 acceptance {a1}");
}

#[test]
fn t6_acceptance_pcn() {
    let m13 = model(13);
    let m16 = model(16);
    let p13 = run_sampler(
        "smh-2",
        m13.clone(),
        &smh_common::paper(&["proposal=pcn", "rho=0"]),
        501,
        0,
        ITERS,
    );
    let mut accs = Vec::new();
    let mut max_l0 = 0.0f64;
    for (j, rho) in ["rho=0", "rho=0.5", "rho=0.9"].iter().enumerate() {
        let r = run_sampler(
            "smh-2",
            m16.clone(),
            &smh_common::paper(&["proposal=pcn", rho]),
            502 + j as u64,
            0,
            ITERS,
        );
        for s in &r.stats {
            if s.extra[1] == 0.0 {
                max_l0 = max_l0.max(s.extra[3].abs());
            }
        }
        accs.push(acc(&r));
    }
    let a13 = acc(&p13);
    eprintln!(
        "pCN SMH-2: acc(2^13, ρ=0) {a13:.3}; at 2^16 ρ=0/0.5/0.9: {accs:?}; max |log first factor| {max_l0:.2e}"
    );
    assert!(accs[0] >= 0.92, "acceptance {} at 2^16", accs[0]);
    assert!(accs[0] > a13, "acceptance does not rise with n");
    assert!(
        accs[2] > accs[1] && accs[1] > accs[0],
        "ρ ordering {accs:?}"
    );
    assert!(max_l0 <= 1e-9, "first factor under pCN not 1: {max_l0}");

    // Exactness of the independence proposal where the posterior is close to Gaussian.
    let rw = run_sampler("smh-2", m13, &smh_common::paper(&[]), 510, 0, 2 * ITERS);
    for j in 0..D {
        let (x, y) = (p13.col(j), rw.col(j));
        let z = (mean(&x) - mean(&y)) / (mcse_mean(&x).powi(2) + mcse_mean(&y).powi(2)).sqrt();
        assert!(z.abs() <= 4.0, "θ{j}: pCN vs RW z = {z}");
    }
}
