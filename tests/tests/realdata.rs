//! Real data as users bring it (issue 17): samplers with their default settings on raw,
//! unscaled tables that ship inside registry packages (`tests/fixtures/realdata/`, made by
//! `make_realdata.py`), against NumPyro NUTS references (`make_reference.py`, committed).
//!
//! Each case runs 2 chains (one thread each) of the sampler with defaults only; the run lengths
//! are the only choice made here. Asserted per case:
//! - exact samplers: max over parameters of |mean − reference mean| ≤ 0.1 reference sd, with a
//!   bulk ESS ≥ 1 000 in every parameter, so that 0.1 sd is at least 3.2 Monte Carlo standard
//!   errors (the reference's own MCSE is below 0.01 sd) and the check can fail for a biased
//!   sampler but not by chance alone;
//! - approximate samplers (`exact: false`: minibatch tests, SG-MCMC): ≤ 0.25 sd with ESS ≥ 200
//!   (again ≥ 3.5 MCSE);
//! - every sampler: max R-hat < 1.05;
//! - on flights (327 346 × 14): the data fraction read per iteration is below 1% for SMH-2 and
//!   HMC-ECS and below 5% for minibatch MH (the bounds; measured 1.5·10⁻⁵, 6·10⁻⁴ and
//!   3·10⁻⁴).
//!
//! Every regression sampler of the registry is in [`SMALL`] (checked by
//! `every_regression_sampler_is_covered`). Time series: `pmmh` on `dax` (200 daily DAX returns,
//! stochastic volatility, DESIGN.md's default priors) in `dax_sv_pmmh`, and `pf-sgld` there in
//! `dax_sv_pf_sgld`. `realdata_status` prints
//! the whole grid.

use tallmc_tests::realdata::{assess, load, runs_on, RealTable};

/// One case: sampler, warm-up, draws per chain.
type Case = (&'static str, usize, usize);

/// Cases shared by the small tables (hmda 2 380 × 14 logistic, rwm1984 3 874 × 10 Poisson,
/// cps1985 534 × 7 robust). Lengths give every parameter an ESS well above the floor.
const SMALL: [Case; 20] = [
    ("rwmh", 2000, 60_000),
    ("mala", 1000, 4000),
    ("hmc", 1000, 1500),
    ("nuts", 1000, 1000),
    ("hmc-ecs", 1000, 2000),
    ("hmc-ecs-signed", 1000, 2000),
    ("qnhmc", 1000, 4000),
    ("mh-minibatch", 2000, 20_000),
    ("austere-mh", 2000, 20_000),
    // The Bernstein range C comes from the Taylor-remainder bound (logistic, robust) or a full
    // scan (Poisson); on tables this small the test still reads every datum.
    ("mh-sublhd", 2000, 60_000),
    ("smh-2", 2000, 60_000),
    // First-order bounds accept less often than smh-2: ESS ≈ 1 200 in 2·10⁵ draws on hmda.
    ("smh-1", 2000, 200_000),
    ("sgld-cv", 2000, 20_000),
    ("sgld-cv-ps", 2000, 20_000),
    ("asgld-cv-ps", 2000, 20_000),
    // Naive minibatch gradients: batch_size = auto grows the batch until the gradient noise no
    // longer limits the step (37–100% of these small tables per iteration).
    ("sgld", 2000, 20_000),
    ("sghmc", 2000, 20_000),
    ("sgnht", 2000, 20_000),
    ("sgld-ps", 2000, 20_000),
    // Exact k-DPP draws cost O(n·k·(k + d)) each (≈ 1–4 ms here): the shortest run with
    // ESS ≥ 200 (measured 439–481).
    ("dpp-sgld", 1000, 5000),
];

fn check(rt: &RealTable, (sampler, warmup, draws): Case, seed: u64) -> f64 {
    let info = tallmc_core::registry::sampler(sampler).expect("sampler");
    let a = assess(rt, sampler, &[], 2, warmup, draws, seed)
        .unwrap_or_else(|e| panic!("{} {sampler}: {e}", rt.name));
    eprintln!("{} {sampler}: {a}", rt.name);
    let (tol, ess_min) = if info.exact {
        (0.1, 1000.0)
    } else {
        (0.25, 200.0)
    };
    assert!(
        a.min_ess >= ess_min,
        "{} {sampler}: min ESS {:.0} < {ess_min} (mixes too slowly for the check)",
        rt.name,
        a.min_ess
    );
    assert!(
        a.max_rhat < 1.05,
        "{} {sampler}: R-hat {}",
        rt.name,
        a.max_rhat
    );
    let worst = a
        .params
        .iter()
        .max_by(|x, y| x.2.total_cmp(&y.2))
        .expect("params");
    assert!(
        a.max_dev_sd <= tol,
        "{} {sampler}: {} is {:.3} reference sd from NumPyro (> {tol})",
        rt.name,
        worst.0,
        worst.2
    );
    a.data_fraction
}

fn small_table(name: &str, seed: u64) {
    let rt = load(name);
    for case in SMALL {
        if runs_on(case.0, rt.model) {
            check(&rt, case, seed);
        }
    }
}

#[test]
fn hmda_logistic() {
    small_table("hmda", 1);
}

#[test]
fn rwm1984_poisson() {
    small_table("rwm1984", 1);
}

#[test]
fn cps1985_robust() {
    small_table("cps1985", 1);
}

/// The largest table: the subsampling samplers, with their data fraction per iteration.
#[test]
fn flights_logistic_subsampling() {
    let rt = load("flights");
    let f = check(&rt, ("hmc-ecs", 1000, 2000), 1);
    assert!(f < 0.01, "hmc-ecs reads {f} of the data per iteration");
    let f = check(&rt, ("smh-2", 2000, 40_000), 1);
    assert!(f < 0.01, "smh-2 reads {f} of the data per iteration");
    let f = check(&rt, ("mh-minibatch", 2000, 20_000), 1);
    assert!(f < 0.05, "mh-minibatch reads {f} of the data per iteration");
    for case in TALL_MORE {
        check(&rt, case, 1);
    }
}

/// The other tall subsampling samplers, on both tall tables.
const TALL_MORE: [Case; 4] = [
    ("austere-mh", 2000, 20_000),
    ("sgld-cv", 2000, 20_000),
    ("sgld-cv-ps", 2000, 20_000),
    ("asgld-cv-ps", 2000, 20_000),
];

/// fertility (254 654 × 8, logistic): the subsampling samplers.
#[test]
fn fertility_logistic_subsampling() {
    let rt = load("fertility");
    let f = check(&rt, ("hmc-ecs", 1000, 2000), 2);
    assert!(f < 0.01, "hmc-ecs reads {f} of the data per iteration");
    let f = check(&rt, ("smh-2", 2000, 40_000), 2);
    assert!(f < 0.01, "smh-2 reads {f} of the data per iteration");
    let f = check(&rt, ("mh-minibatch", 2000, 20_000), 2);
    assert!(f < 0.05, "mh-minibatch reads {f} of the data per iteration");
    for case in TALL_MORE {
        check(&rt, case, 2);
    }
}

/// fertility with the full-data exact samplers the issue found failing on tall tables (QNHMC
/// was 30 sd off on this table before the reparametrisation; NUTS with a dense metric did not
/// finish in 25 minutes on flights). Measured on 2 cores (`tallmc run --chains 2 --seed 1`,
/// defaults): NUTS 1 000 + 1 000 in 52 s, 0.027 sd, min ESS 2 770; QNHMC with L = 10 (the
/// default until 2026-11-26) 1 000 + 4 000 in 206 s, 0.048 sd, min ESS 1 188 (εL ≈ 2π at the
/// adapted ε ≈ 0.66, a full period of the whitened posterior); with the automatic L = 3
/// (round(π/2 / ε)) 1 000 + 1 000 gives min bulk ESS 2 124.
///
/// The runs are shorter since 2026-11-27 (the suite's time): 1 000 + 1 000 gave ESS 2 916
/// (NUTS) and 2 124 (QNHMC) for the 1 000 the check needs. NUTS 500 + 700 at seeds 1, 2, 3:
/// min ESS 2 132 / 2 275 / 2 235, 0.042 / 0.024 / 0.042 sd, 17.4 s (30.7 s); QNHMC 500 + 1 000:
/// min ESS 2 271 / 1 696 / 2 307, 0.042 / 0.027 / 0.027 sd, 10.2 s (14.4 s; 500 + 700 gave
/// ESS 1 149 at seed 2, too close to the bound). The bound (0.1 sd at ESS ≥ 1 000) is unchanged.
#[test]
fn fertility_logistic_full_data() {
    let rt = load("fertility");
    check(&rt, ("nuts", 500, 700), 1);
    check(&rt, ("qnhmc", 500, 1000), 1);
}

/// A sampler added to the registry for regression models must be added to [`SMALL`].
#[test]
fn every_regression_sampler_is_covered() {
    for info in tallmc_core::registry::samplers() {
        let regression = info.models.is_empty()
            || ["logistic", "poisson", "robust"]
                .iter()
                .any(|m| info.models.contains(m));
        if regression {
            assert!(
                SMALL.iter().any(|c| c.0 == info.name),
                "{} runs on regression models but has no real-data case",
                info.name
            );
        }
    }
}

/// dax (200 daily DAX log returns in percent, `sv` with its default priors — DESIGN.md's
/// φ ~ U(−1, 1), σ ~ HalfNormal(1), τ ~ HalfNormal(2)): `pmmh` with defaults (`particles` =
/// auto). Each iteration runs a particle filter over the whole series, so this run is short
/// (1 000 + 8 000 per chain; with the bootstrap filter 376 s on 2 cores, min ESS 177, R-hat
/// 1.008, 0.063 sd; with the Laplace proposal, the default since 2026-11-26, N = 100 and 71 s
/// on 2 loaded cores, min ESS 771, R-hat 1.007, 0.041 sd) and the
/// tolerance is 4 Monte Carlo standard errors of the difference (the chain's, ref sd/√ESS, and
/// the reference's), ≈ 0.3 sd at ESS 160, instead of 0.1 sd with ESS ≥ 1 000. Under the
/// thesis' prior (the default until 2026-11-25, against DESIGN.md) the posterior was tighter:
/// 1 000 + 3 000 gave ESS ≈ 220 in 90 s; with the former fixed N = 100 the chains stuck (ESS
/// 3–7, R-hat 1.3–1.7). Under the default prior, 2 × (1 000 + 3 000): ESS 63–129 with
/// per-coordinate proposal scales, 58–323 with the warm-up covariance (acceptance 0.15 →
/// 0.20; φ and log σ correlate at −0.78); 2 × (1 000 + 6 000) with per-coordinate scales:
/// min ESS 70, R-hat 1.055.
#[test]
fn dax_sv_pmmh() {
    let rt = load("dax");
    let a = assess(&rt, "pmmh", &[], 2, 1000, 8000, 1).unwrap_or_else(|e| panic!("dax pmmh: {e}"));
    eprintln!("dax pmmh: {a}");
    assert!(a.min_ess >= 100.0, "dax pmmh: min ESS {:.0}", a.min_ess);
    assert!(a.max_rhat < 1.05, "dax pmmh: R-hat {}", a.max_rhat);
    for (p, r) in a.params.iter().zip(&rt.reference) {
        let (name, _, dev_sd, _, ess) = p;
        let se = (1.0 / ess + (r.mcse / r.sd).powi(2)).sqrt();
        assert!(
            *dev_sd <= 4.0 * se,
            "dax pmmh: {name} is {dev_sd:.3} reference sd from NumPyro (4 MCSE = {:.3})",
            4.0 * se
        );
    }
}

/// dax with `pf-sgld` and its defaults (`particles`, `subseq_len` and `step_size` auto: the
/// whole 200-point series per gradient, N = 500, per-coordinate steps set in warm-up), the SG
/// bound (0.25 sd, ESS ≥ 200, R-hat < 1.05). Measured (2 × (2 000 + 4 000), 2 cores, 144 s):
/// φ 0.440 ± 0.238 (NumPyro 0.480 ± 0.243), σ 0.903 ± 0.210 (0.881 ± 0.211), τ 0.609 ± 0.059
/// (0.611 ± 0.062), at most 0.16 sd, ESS 264–427, R-hat 1.010; after the review's changes (the
/// Laplace proposal's Lambert-W start, the warm-up's correlation guard and growth cap) 0.168
/// sd, min ESS 238, R-hat 1.010.
///
/// What it took, each measured on the same data: with the bootstrap filter the particle score
/// was biased (the log τ component by ≈ 215/√N at NumPyro's posterior mean: +15 at N = 200),
/// so τ came out 0.95 ± 0.48; `sv`'s Laplace proposal (default `proposal = optimal`) removed
/// that (τ 0.608, max 0.15 sd with the former defaults). Those defaults (S = 40 of T = 200, N =
/// 200, step 0.1/T) then mixed slowly: ESS 71–73 in 2 × (2 000 + 20 000), because the
/// subsequence gradient's noise (variance ≈ 10³ per coordinate) allows no larger step. With
/// the full series per gradient the noise variance falls to ≈ 20 and the warm-up's steps grow
/// 4–20×; N = 2.5|S*| keeps the path-space score's bias in φ (−0.86 ± 0.15 at N = 200,
/// −0.30 ± 0.12 at N = 1 000) near 0.1 sd (at N = 200 φ was 0.29 sd off).
///
/// With the Leimkuhler–Matthews step (the default since 2026-11-28) the draws are 6 000 per
/// chain: at 4 000 the shift fell from 0.219 to 0.144 sd but the min ESS was 165 (Euler's
/// variance inflation along the stiff directions had made its ESS look larger).
#[test]
fn dax_sv_pf_sgld() {
    let rt = load("dax");
    check(&rt, ("pf-sgld", 2000, 6000), 1);
}
