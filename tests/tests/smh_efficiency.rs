//! SMH (spec 004 §5.2) T7 — efficiency at n = 2¹⁶, d = 10 (logistic, flat prior, start at θ̂):
//! ESS(θ₁) per likelihood evaluation of SMH-2 with the RW proposal is ≥ 100× MH's, and SMH-2
//! with pCN ρ = 0 is the most efficient configuration. Likelihood evaluations as in the paper's
//! code: 2 per processed point, n per full-data potential. Timings are printed, never asserted.
//! T6 at n = 2¹⁶ with the RW proposal (the same runs): MH acceptance in [0.10, 0.20], SMH-2's
//! ≥ 0.85 × MH's, SMH-1's in [0.01, 0.06].

use crate::smh_common;

use std::time::Instant;
use tallmc_tests::{ess, run_sampler};

#[test]
fn t7_ess_per_evaluation() {
    let model = smh_common::logistic(1 << 16, 10, 56);
    let configs: [(&str, &[&str], usize); 5] = [
        ("smh-2", &["truncation=0"], 3000), // MH: every step is the full-data fallback
        ("smh-1", &[], 20_000),
        ("smh-2", &[], 20_000),
        ("smh-2", &["proposal=pcn", "rho=0.5"], 20_000),
        ("smh-2", &["proposal=pcn", "rho=0"], 20_000),
    ];
    let mut eff = Vec::new();
    let mut accs = Vec::new();
    for (k, (sampler, kv, iters)) in configs.iter().enumerate() {
        let t0 = Instant::now();
        let r = run_sampler(
            sampler,
            model.clone(),
            &smh_common::paper(kv),
            700 + k as u64,
            0,
            *iters,
        );
        let secs = t0.elapsed().as_secs_f64();
        let evals: f64 = r.stats.iter().map(|s| s.lik_evals as f64).sum();
        let e = ess(&r.col(0));
        let per_eval = e / evals;
        eprintln!(
            "{sampler} {kv:?}: {iters} its, ESS(θ₁) {e:.0}, evals/it {:.1}, ESS per 10³ evals {:.4}, ESS/s {:.1}",
            evals / *iters as f64,
            1e3 * per_eval,
            e / secs
        );
        eff.push(per_eval);
        accs.push(r.stats.iter().filter(|s| s.accepted).count() as f64 / *iters as f64);
    }
    eprintln!(
        "acceptance at 2^16 (RW): MH {:.3}, SMH-1 {:.3}, SMH-2 {:.3}",
        accs[0], accs[1], accs[2]
    );
    assert!(
        (0.10..=0.20).contains(&accs[0]),
        "MH acceptance {}",
        accs[0]
    );
    assert!(
        accs[2] >= 0.85 * accs[0],
        "SMH-2 acceptance {} vs MH {}",
        accs[2],
        accs[0]
    );
    assert!(
        (0.01..=0.06).contains(&accs[1]),
        "SMH-1 acceptance {}",
        accs[1]
    );
    let ratio = eff[2] / eff[0];
    eprintln!("SMH-2-RW / MH ESS per evaluation: {ratio:.0}×");
    assert!(ratio >= 100.0, "SMH-2-RW only {ratio}× MH");
    let best = eff.iter().cloned().fold(0.0, f64::max);
    assert_eq!(eff[4], best, "pCN ρ = 0 is not the most efficient: {eff:?}");
}
