//! SMH (spec 004 §5.2) T4 — exactness against MH at d = 10: logistic, n = 1024, flat prior.
//! SMH-1 with RW and SMH-2 with RW, pCN ρ = 0.5 and pCN ρ = 0 agree with full-data MH (same RW
//! proposal) in every coordinate, with the spec's thresholds and length (2·10⁵ iterations each):
//! means within 4 MCSE of the difference, sd ratios in [0.95, 1.05] (SMH-1 runs 10⁶ iterations:
//! see below). Power: MH's mean differs
//! from θ̂ by > 5 MCSE in ≥ 8 coordinates. The sd ratio's standard error (≈ √(1/(2·ESS₁) +
//! 1/(2·ESS₂))) is printed next to it.

#![allow(clippy::needless_range_loop)]

use crate::smh_common;

use tallmc_tests::{ess, mean, run_sampler, sd};

/// A series' mean, sd and ESS (each ESS is two FFTs over the series: computed once).
struct Col {
    mean: f64,
    sd: f64,
    ess: f64,
}

impl Col {
    fn of(x: &[f64]) -> Self {
        Col {
            mean: mean(x),
            sd: sd(x),
            ess: ess(x),
        }
    }
    /// Monte Carlo standard error of the mean: sd / √ESS (`tallmc_tests::mcse_mean`).
    fn mcse(&self) -> f64 {
        self.sd / self.ess.sqrt()
    }
}

const ITERS: usize = 200_000;

#[test]
fn t4_smh2_agrees_with_mh_d10() {
    let d = 10;
    let model = smh_common::logistic(1024, d, 4);
    let mh = run_sampler(
        "smh-2",
        model.clone(),
        &smh_common::paper(&["truncation=0"]),
        801,
        0,
        ITERS,
    );
    let kernel_hat = tallmc_core::kernel::smh::Smh::new(
        model.as_ref(),
        &tallmc_core::kernel::smh::SmhOptions::default(),
    )
    .expect("setup");
    let th = kernel_hat.theta_hat();
    let mh_cols: Vec<Col> = (0..d).map(|j| Col::of(&mh.col(j))).collect();
    let mut far = 0;
    for j in 0..d {
        if (mh_cols[j].mean - th[j]).abs() > 5.0 * mh_cols[j].mcse() {
            far += 1;
        }
    }
    eprintln!("MH: mean differs from θ̂ by > 5 MCSE in {far}/{d} coordinates");
    assert!(far >= 8, "no power: only {far} coordinates");
    for (k, (sampler, kv)) in [
        ("smh-2", &[][..]),
        ("smh-2", &["proposal=pcn", "rho=0.5"][..]),
        ("smh-2", &["proposal=pcn", "rho=0"][..]),
        ("smh-1", &[][..]),
    ]
    .iter()
    .enumerate()
    {
        // SMH-1 accepts rarely (bulk ESS ≈ 760 in 2·10⁵ iterations, measured): the sd ratio's
        // standard error is then ≈ 0.027 and the spec's ±0.05 band only 1.9 se wide, so 10
        // coordinates fail together about half the time whatever the kernel. It runs 5× longer
        // (ESS ≈ 3800, se ≈ 0.012: the band is ≈ 4 se), which keeps the spec's band.
        let iters = if *sampler == "smh-1" {
            5 * ITERS
        } else {
            ITERS
        };
        let r = run_sampler(
            sampler,
            model.clone(),
            &smh_common::paper(kv),
            810 + k as u64,
            0,
            iters,
        );
        let mut zmax = 0.0f64;
        let mut smax = 0.0f64;
        let (mut rlo, mut rhi) = (f64::INFINITY, 0.0f64);
        let mut emin = f64::INFINITY;
        for j in 0..d {
            let (x, y) = (Col::of(&r.col(j)), &mh_cols[j]);
            let z = (x.mean - y.mean) / (x.mcse().powi(2) + y.mcse().powi(2)).sqrt();
            let ratio = x.sd / y.sd;
            let se = (0.5 / x.ess + 0.5 / y.ess).sqrt();
            let zs = (ratio - 1.0) / se;
            zmax = zmax.max(z.abs());
            smax = smax.max(zs.abs());
            emin = emin.min(x.ess);
            assert!(z.abs() <= 4.0, "{sampler} {kv:?} θ{j}: mean z = {z}");
            if !(0.95..=1.05).contains(&ratio) {
                eprintln!(
                    "{sampler} {kv:?} θ{j}: sd ratio {ratio} ({zs} se), ESS {:.0}",
                    x.ess
                );
            }
            assert!(
                (0.95..=1.05).contains(&ratio),
                "{sampler} {kv:?} θ{j}: sd ratio {ratio} ({zs} se)"
            );
            rlo = rlo.min(ratio);
            rhi = rhi.max(ratio);
        }
        eprintln!(
            "{sampler} {kv:?}: max |z| mean {zmax:.2}; sd ratios [{rlo:.3}, {rhi:.3}], max {smax:.2} se; min ESS {emin:.0}"
        );
    }
}
