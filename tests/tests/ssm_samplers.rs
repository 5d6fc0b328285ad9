//! The time-series samplers `pf-sgld` and `pmmh` (Putcha 2024, ch. 3), run through the registry
//! like the CLI and the browser do:
//! - AT8: buffered PF-SGLD (B = 10) on a synthetic LGSSM with T = 10⁴ matches the posterior
//!   mean of φ of a long exact Kalman-likelihood MH chain within 0.01 and 4 MCSE; B = 0 is
//!   measurably worse in the mean and has a larger KSD;
//! - `pmmh` (particle likelihood) on `lgssm` agrees with the Kalman-likelihood MH chain within
//!   4 MCSE on every coordinate;
//! - routing: time-series samplers refuse i.i.d. models and vice versa, the exact samplers
//!   refuse models without an exact likelihood, and costs are reported as documented.

use std::sync::Arc;
use tallmc_core::chain::{run_chain, Cost, Phase};
use tallmc_core::data::{DesignSpec, Table};
use tallmc_core::diag;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_chain, build_model, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::simulate::simulate;

fn settings(pairs: &[&str]) -> Settings {
    let mut s = Settings::new();
    for p in pairs {
        s.insert_pair(p).unwrap();
    }
    s
}

fn spec() -> DesignSpec {
    DesignSpec {
        response: "y".into(),
        features: None,
        intercept: false,
        standardize: false,
    }
}

fn series(model: &str, t: usize, seed: u64) -> Table {
    simulate(model, t, 1, seed, &Settings::new()).unwrap()
}

struct Run {
    /// draws[j][k]
    draws: Vec<Vec<f64>>,
    cost: Cost,
    accept: f64,
    extras: Vec<[f64; 4]>,
}

fn build_err(model: &Arc<dyn DataModel>, sampler: &str, pairs: &[&str]) -> String {
    let s = settings(pairs);
    let config = ChainConfig {
        sampler,
        warmup: 10,
        settings: &s,
    };
    match build_chain(&config, model.clone(), &mut chain_rng(1, 0)) {
        Ok(_) => panic!("{sampler} {pairs:?} should not build"),
        Err(e) => e.to_string(),
    }
}

/// A chain of `sampler` on `model` with settings `pairs`, built with the stream of `seed`
/// (chain 0), and that stream to run it with.
fn chain_of(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    pairs: &[&str],
    warmup: usize,
    seed: u64,
) -> (
    Box<dyn tallmc_core::chain::Chain>,
    tallmc_core::rng::ChainRng,
) {
    let s = settings(pairs);
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    let mut rng = chain_rng(seed, 0);
    let chain = build_chain(&config, model.clone(), &mut rng).unwrap();
    (chain, rng)
}

fn run(
    model: &Arc<dyn DataModel>,
    sampler: &str,
    pairs: &[&str],
    warmup: usize,
    draws: usize,
    seed: u64,
) -> Run {
    let (mut chain, mut rng) = chain_of(model, sampler, pairs, warmup, seed);
    let d = chain.dim();
    let mut out = vec![Vec::with_capacity(draws); d];
    let mut acc = 0.0;
    let mut extras = Vec::new();
    let (cost, _) = run_chain(chain.as_mut(), &mut rng, draws, |ph, _, th, info| {
        if ph == Phase::Sampling {
            for j in 0..d {
                out[j].push(th[j]);
            }
            acc += info.accept_prob;
            extras.push(info.extra);
        }
    });
    Run {
        draws: out,
        cost,
        accept: acc / draws as f64,
        extras,
    }
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn mcse(x: &[f64]) -> f64 {
    diag::mcse_mean(&[x])
}

/// Batch-means MCSE of the mean with `nb` batches (a check on the ESS-based MCSE for sticky
/// chains).
fn mcse_batch(x: &[f64], nb: usize) -> f64 {
    let len = x.len() / nb;
    let means: Vec<f64> = (0..nb).map(|b| mean(&x[b * len..(b + 1) * len])).collect();
    let m = mean(&means);
    let var = means.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (nb - 1) as f64;
    (var / nb as f64).sqrt()
}

/// log10 of the thesis KSD (Σⱼ √Vⱼ, IMQ, exact Kalman scores) of ≤ `k` evenly thinned draws.
fn log10_ksd(model: &Arc<dyn DataModel>, draws: &[Vec<f64>], k: usize) -> f64 {
    let n = draws[0].len();
    let idx = diag::ksd::thin_indices(n, k);
    let mut pts = Vec::with_capacity(idx.len() * draws.len());
    for &i in &idx {
        for c in draws {
            pts.push(c[i]);
        }
    }
    let sc = diag::ksd::exact_scores(model.as_ref(), &pts).unwrap();
    diag::ksd::ksd(&diag::ksd::Imq::DEFAULT, &pts, &sc, draws.len())
        .unwrap()
        .thesis
        .log10()
}

/// AT8 (spec §5.2): T = 10⁴, S = 40, B = 10 vs B = 0, particle gradients, against a long exact
/// Kalman-likelihood random-walk MH chain (posterior mean of φ) and a Kalman-gradient ("N =
/// ∞") SGLD chain with the same window, step and length (KSD with exact Kalman scores).
///
/// Settings, reduced from the spec's N = 500–1000 and 2·10⁴ iterations to keep the file near
/// 20 s: N = 200, h = 2·10⁻⁶ (the thesis's ε = hT/2 = 0.01, the smaller of its two choices),
/// 3000 warm-up (from the data-based start φ = 0.5) + 9000 draws. At this step SGLD's own O(h)
/// bias of the φ mean is small (reviewer, Kalman gradient, 30k + 60k iterations: −0.0032 at
/// h = 10⁻⁵, −0.0007 at 2·10⁻⁶, −0.0003 at 10⁻⁶), so B = 10 must match the exact posterior
/// mean both within the spec's 0.01 and within 4 combined MCSE; B = 0 must be worse by more
/// than 3 combined MCSE and have a larger KSD than both B = 10 chains.
///
/// Not asserted: the spec's "B = 10 KSD within 2× of the Kalman-gradient chain's". At this
/// length the chains' φ ESS is only ≈ 70–130 and the KSD of 200 thinned draws moves by ±0.2
/// in log10 between runs of the same settings (measured log10 KSD particle/Kalman 1.58/1.83
/// with 1000 + 6000 iterations, 1.86/1.54 with 3000 + 9000), so a factor 2 (0.30) is not
/// resolved; both values are printed. The B = 0 gap (≈ 0.6–0.9) is.
#[test]
fn at8_buffered_pf_sgld_matches_the_kalman_posterior_mean() {
    let table = series("lgssm", 10_000, 8);
    // The window's initial law is the model's: the authors' code N(0, 10) (spec §2.6, pitfall
    // 7). With the stationary law the no-buffer gradient is that of the composite likelihood
    // Σ log p(y_S) of stationary windows, an unbiased estimating equation, so B = 0 shifts
    // the posterior mean much less (its bias shows in the spread instead).
    let model_settings = settings(&["initial=normal", "initial_var=10"]);
    let model = build_model("lgssm", &table, &spec(), &model_settings).unwrap();
    let t0 = std::time::Instant::now();
    let reference = run(&model, "pmmh", &["likelihood=kalman"], 2000, 10_000, 1);
    let ref_phi = mean(&reference.draws[0]);
    let ref_se = mcse(&reference.draws[0]);
    let sd_phi = diag::summarize(&[&reference.draws[0]]).sd;
    println!(
        "reference: phi mean {ref_phi:.5} ± {ref_se:.5} (sd {sd_phi:.4}, accept {:.3}), {:.1} s",
        reference.accept,
        t0.elapsed().as_secs_f64()
    );
    let (warmup, ndraws) = (3000, 9000);
    let h = "step_size=2e-6";
    let np = "particles=200";
    let mut err = [0.0; 3];
    let mut se = [0.0; 3];
    let mut lksd = [0.0; 3];
    for (k, (b, grad)) in [
        ("buffer=10", np),
        ("buffer=0", np),
        ("buffer=10", "gradient=kalman"),
    ]
    .iter()
    .enumerate()
    {
        let t0 = std::time::Instant::now();
        let r = run(
            &model,
            "pf-sgld",
            &[h, b, "subseq_len=40", grad, "init=model"],
            warmup,
            ndraws,
            2,
        );
        let m = mean(&r.draws[0]);
        err[k] = m - ref_phi;
        se[k] = (mcse(&r.draws[0]).powi(2) + ref_se * ref_se).sqrt();
        lksd[k] = log10_ksd(&model, &r.draws, 200);
        println!(
            "{b} {grad}: phi mean {m:.5} (error {:+.5} ± {:.5} = {:.1} se), sd {:.4}, ess {:.0}, log10 ksd {:.3}, {:.1} s",
            err[k],
            se[k],
            err[k] / se[k],
            diag::summarize(&[&r.draws[0]]).sd,
            diag::ess_bulk(&[&r.draws[0]]),
            lksd[k],
            t0.elapsed().as_secs_f64()
        );
    }
    println!(
        "log10 KSD: B = 10 particle {:.3}, Kalman-gradient {:.3} (ratio {:.2}); B = 0 {:.3}",
        lksd[0],
        lksd[2],
        10f64.powf(lksd[0] - lksd[2]),
        lksd[1]
    );
    assert!(
        err[0].abs() < 0.01,
        "B = 10: |error| {} ≥ 0.01",
        err[0].abs()
    );
    assert!(
        err[0].abs() < 4.0 * se[0],
        "B = 10: error {} beyond 4 MCSE {}",
        err[0],
        se[0]
    );
    assert!(
        err[1].abs() > err[0].abs() + 3.0 * (se[0] * se[0] + se[1] * se[1]).sqrt(),
        "B = 0 is not measurably worse: {err:?} ± {se:?}"
    );
    assert!(
        lksd[1] > lksd[0] && lksd[1] > lksd[2],
        "B = 0 KSD is not larger: {lksd:?}"
    );
}

/// `pmmh` with the unbiased particle likelihood targets the exact posterior: on `lgssm` the
/// means of two independent particle chains (pooled, multi-chain MCSE) agree with a long exact
/// Kalman-likelihood MH chain within 4 MCSE. The MCSE is checked on these sticky chains
/// (acceptance ≈ 0.15): a batch-means MCSE (20 batches) must not exceed the ESS-based one by
/// more than 1.5× (measured ratios 0.8–1.2). Earlier this test used one particle chain and a
/// 20 000-draw exact chain and sat at −3.0 MCSE on log σ; measured then: particle seeds 5–8
/// all high in φ and low in log σ against that chain, while four 10⁵-draw exact chains gave
/// φ 0.9053 ± 0.0003, log σ −0.1228 ± 0.0005 (the 20 000-draw chain: 0.9038, −0.1202, 1.5
/// MCSE off) and the particle seeds average 0.9061, −0.1248 — the short reference, not an
/// underestimated MCSE or a pmmh bias.
///
/// Seeds: that earlier version's particle seeds (5, then 6) were picked after seeing results.
/// The seeds are now fixed by a rule written before this version first ran and never changed
/// after: chain k of the test uses seed `PMMH_SEED + k` (k = 0 the exact chain, 1 and 2 the
/// particle chains). The tolerance is 4 of the combined MCSE (each chain's own ESS).
#[test]
fn pmmh_agrees_with_kalman_mh_on_lgssm() {
    const PMMH_SEED: u64 = 7_000;
    let table = series("lgssm", 100, 3);
    let model = build_model("lgssm", &table, &spec(), &Settings::new()).unwrap();
    let exact = run(
        &model,
        "pmmh",
        &["likelihood=kalman"],
        2000,
        60_000,
        PMMH_SEED,
    );
    let t0 = std::time::Instant::now();
    let particle = run(
        &model,
        "pmmh",
        &["particles=50"],
        2000,
        12_000,
        PMMH_SEED + 1,
    );
    let particle2 = run(
        &model,
        "pmmh",
        &["particles=50"],
        2000,
        12_000,
        PMMH_SEED + 2,
    );
    println!("particle pmmh {:.1} s", t0.elapsed().as_secs_f64());
    println!(
        "accept: kalman {:.3}, particle {:.3} / {:.3}",
        exact.accept, particle.accept, particle2.accept
    );
    // cost: N·T observation densities per particle filter run, T per Kalman run, one run per
    // iteration except for proposals outside the prior's support (|φ| ≥ 1 under φ ~ U(−1, 1)),
    // which are rejected without running the filter
    for (cost, per_run, iters) in [
        (particle.cost.lik_evals, 50 * 100, 12_000u64),
        (exact.cost.lik_evals, 100, 60_000),
    ] {
        assert_eq!(cost % per_run, 0, "{cost}");
        let runs = cost / per_run;
        assert!(
            runs <= iters && runs > iters / 2,
            "{runs} filter runs in {iters}"
        );
    }
    assert_eq!(particle.cost.grad_evals, 0);
    for j in 0..3 {
        let a = &exact.draws[j];
        let (b1, b2) = (&particle.draws[j], &particle2.draws[j]);
        let mb = 0.5 * (mean(b1) + mean(b2));
        let se_b = diag::mcse_mean(&[b1, b2]);
        let se = (mcse(a).powi(2) + se_b.powi(2)).sqrt();
        let diff = mb - mean(a);
        println!(
            "param {j}: kalman {:.4} (ess {:.0}), particle {mb:.4} (ess {:.0}; chains {:.4}, {:.4}), diff {diff:+.4} = {:.2} se; mcse kalman {:.5} / batch {:.5}, particle {:.5} / batch {:.5}, {:.5} / batch {:.5}",
            mean(a),
            diag::ess_bulk(&[a]),
            diag::ess_bulk(&[b1, b2]),
            mean(b1),
            mean(b2),
            diff / se,
            mcse(a),
            mcse_batch(a, 20),
            mcse(b1),
            mcse_batch(b1, 20),
            mcse(b2),
            mcse_batch(b2, 20),
        );
        for x in [&a, &b1, &b2] {
            assert!(
                mcse_batch(x, 20) < 1.5 * mcse(x),
                "param {j}: batch-means MCSE {} ≫ ESS-based {}",
                mcse_batch(x, 20),
                mcse(x)
            );
        }
        assert!(diff.abs() < 4.0 * se, "param {j}: {diff} vs 4 × {se}");
        assert!(
            diag::ess_bulk(&[b1]) > 100.0 && diag::ess_bulk(&[b2]) > 100.0,
            "param {j}: particle chain barely mixes"
        );
    }
    // the extras: the current estimate and the filter's ESS over time
    for e in &particle.extras {
        assert!(e[0].is_finite());
        assert!(e[1] > 0.0 && e[1] <= e[2] && e[2] <= 50.0 + 1e-9, "{e:?}");
        assert!((0.0..=1.0).contains(&e[3]));
    }
}

/// pf-sgld's cost and extras per step are as documented: N·|S*| observation densities, N·|S|
/// complete-data gradients (Kalman: |S*| and |S|), the window start in 1..=T−S+1.
#[test]
fn pf_sgld_cost_and_extras() {
    let t = 500;
    let table = series("sv", t, 6);
    let model = build_model("sv", &table, &spec(), &Settings::new()).unwrap();
    let r = run(
        &model,
        "pf-sgld",
        &["particles=30", "subseq_len=20", "buffer=5"],
        0,
        300,
        7,
    );
    let mut lik = 0u64;
    let mut grad = 0u64;
    for e in &r.extras {
        let s0 = e[0] as usize;
        assert!((1..=t - 20 + 1).contains(&s0), "{e:?}");
        let left = (s0 - 1).min(5);
        let right = (t - (s0 - 1 + 20)).min(5);
        lik += 30 * (20 + left + right) as u64;
        grad += 30 * 20;
        assert!(e[1] > 0.0 && e[1] <= e[2] && e[2] <= 30.0 + 1e-9, "{e:?}");
        assert!(e[3].is_finite());
    }
    assert_eq!(r.cost.lik_evals, lik);
    assert_eq!(r.cost.grad_evals, grad);
    assert!(r.draws.iter().all(|c| c.iter().all(|v| v.is_finite())));

    let table = series("lgssm", t, 6);
    let model = build_model("lgssm", &table, &spec(), &Settings::new()).unwrap();
    let r = run(
        &model,
        "pf-sgld",
        &["gradient=kalman", "buffer=0", "subseq_len=40"],
        0,
        50,
        7,
    );
    assert_eq!(r.cost.lik_evals, 50 * 40);
    assert_eq!(r.cost.grad_evals, 50 * 40);
    assert!(r.extras.iter().all(|e| e[1].is_nan()));
}

/// Samplers and models that do not fit each other give clear errors; the exact samplers run
/// on `lgssm` with the Kalman likelihood.
#[test]
fn routing_between_series_and_iid_models() {
    let iid = build_model(
        "logistic",
        &simulate("logistic", 50, 2, 1, &Settings::new()).unwrap(),
        &spec(),
        &Settings::new(),
    )
    .unwrap();
    for s in ["pf-sgld", "pmmh"] {
        let e = build_err(&iid, s, &[]);
        assert!(e.contains("time-series model"), "{s}: {e}");
    }
    let lg = build_model("lgssm", &series("lgssm", 200, 1), &spec(), &Settings::new()).unwrap();
    let sv = build_model("sv", &series("sv", 200, 1), &spec(), &Settings::new()).unwrap();
    let garch = build_model("garch", &series("garch", 200, 1), &spec(), &Settings::new()).unwrap();
    for s in ["sgld", "smh-1", "hmc-ecs", "mh-minibatch"] {
        let e = build_err(&lg, s, &[]);
        assert!(
            e.contains("does not apply to the time-series model"),
            "{s}: {e}"
        );
    }
    for s in ["nuts", "rwmh"] {
        let e = build_err(&sv, s, &[]);
        assert!(e.contains("exact likelihood"), "{s}: {e}");
    }
    let e = build_err(&sv, "pf-sgld", &["gradient=kalman"]);
    assert!(e.contains("lgssm"), "{e}");
    let e = build_err(&garch, "pmmh", &["likelihood=kalman"]);
    assert!(e.contains("lgssm"), "{e}");
    let e = build_err(&lg, "pmmh", &["likelihood=kalman", "particles=10"]);
    assert!(e.contains("no effect with likelihood=kalman"), "{e}");
    let e = build_err(&lg, "pf-sgld", &["gradient=kalman", "resampling=residual"]);
    assert!(e.contains("no effect with gradient=kalman"), "{e}");
    // exact samplers on lgssm: the Kalman likelihood, cost T per evaluation
    let r = run(&lg, "mala", &[], 100, 100, 3);
    assert!(r.cost.lik_evals >= 100 * 200);
    assert!(r.draws[0].iter().all(|v| v.is_finite()));
    // pf-sgld and pmmh run on every time-series model with default settings
    for m in [&lg, &sv, &garch] {
        run(m, "pf-sgld", &[], 10, 20, 2);
        run(m, "pmmh", &["particles=20"], 10, 20, 2);
    }
}

/// `pmmh` with `particles` = auto (the default with the particle likelihood): N is chosen so
/// that the predicted Var log p̂ is about 1 (the recommendation the chain is tuned to), at the
/// start and again at the warm-up midpoint; the measured variance at the chosen N, from
/// independent filter runs here, is within a factor 3 of 1; the tuning's filter runs are
/// counted (set-up cost > 0, more than one run's worth); `particles=auto` may be written; an
/// explicit N is kept.
#[test]
fn pmmh_automatic_particles_target_unit_log_lik_variance() {
    use tallmc_core::ssm::pf::{ParticleFilter, PfConfig, Proposal};
    use tallmc_core::ssm::resample::Resampling;
    let t = 400;
    let table = series("sv", t, 11);
    let model = build_model("sv", &table, &spec(), &Settings::new()).unwrap();
    let resolved = |c: &dyn tallmc_core::chain::Chain, k: &str| {
        c.resolved().iter().find(|(key, _)| *key == k).map(|p| p.1)
    };
    for pairs in [&[][..], &["particles=auto"][..]] {
        let (mut chain, mut rng) = chain_of(&model, "pmmh", pairs, 200, 5);
        assert!(
            chain.setup_cost().lik_evals > (t * 100) as u64,
            "tuning runs counted"
        );
        run_chain(chain.as_mut(), &mut rng, 10, |_, _, _, _| {});
        let n = resolved(chain.as_ref(), "particles").expect("particles resolved") as usize;
        let predicted = resolved(chain.as_ref(), "log_lik_var").expect("variance resolved");
        assert!(n >= 100, "{pairs:?}: N = {n}");
        // measure Var log p̂ at the chain's position with N particles
        let theta = chain.position().to_vec();
        let series = model.as_series().unwrap();
        let cfg = PfConfig::new(n, Proposal::Optimal, Resampling::Systematic, 0.5).unwrap();
        let mut pf = ParticleFilter::new(cfg).unwrap();
        let lls: Vec<f64> = (0..40)
            .map(|_| {
                pf.run(series.ssm(), &theta, series.y(), None, &mut rng)
                    .unwrap()
                    .log_lik
            })
            .collect();
        let m = mean(&lls);
        let var = lls.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 39.0;
        eprintln!("{pairs:?}: N = {n}, predicted Var log p̂ {predicted:.2}, measured {var:.2}");
        assert!(
            (1.0 / 3.0..=3.0).contains(&var),
            "{pairs:?}: Var log p̂ {var} at N = {n}"
        );
    }
    let (mut chain, mut rng) = chain_of(&model, "pmmh", &["particles=100"], 200, 5);
    run_chain(chain.as_mut(), &mut rng, 10, |_, _, _, _| {});
    assert_eq!(resolved(chain.as_ref(), "particles"), Some(100.0));
}

/// `pmmh`'s warm-up sets a full proposal covariance at its midpoint (Haario-style): the
/// Cholesky factor L of the sample covariance of the draws of the second quarter of warm-up
/// (iterations warmup/4 + 1 ..= warmup/2), checked entry by entry against a two-pass covariance
/// of those draws computed here (to 1e-9 relative: only rounding differs from the chain's
/// Welford sums). On `lgssm` (exact Kalman likelihood) the correlation of φ and log σ in LLᵀ
/// then has the sign of that of the post-warm-up draws (−0.49 and −0.76 measured: a quarter
/// of warm-up is a short sample, so only the sign is asserted).
#[test]
fn pmmh_warmup_sets_a_full_proposal_covariance() {
    use tallmc_core::chain::Chain;
    use tallmc_core::linalg::Cholesky;
    use tallmc_core::model::series::{SeriesModel, SsmKind};
    use tallmc_core::sampler::driver::Driver;
    use tallmc_core::sampler::pmmh::Pmmh;
    let table = series("lgssm", 300, 4);
    let kind = SsmKind::from_name("lgssm", tallmc_core::ssm::InitialLaw::Stationary).unwrap();
    let model = SeriesModel::from_table(kind, &table, "y").unwrap();
    let theta = model.initial_point();
    let mut rng = chain_rng(3, 0);
    let warmup = 1000;
    let mut chain =
        Driver::<Pmmh, _, _>::new(model, None, theta, f64::NAN, f64::NAN, warmup, &mut rng)
            .unwrap();
    assert!(
        chain.kernel().chol.is_none(),
        "no covariance before warm-up"
    );
    let draws = 6000;
    let mut warm: Vec<[f64; 3]> = Vec::new();
    let mut xs = vec![Vec::new(); 3];
    run_chain(
        &mut chain as &mut dyn Chain,
        &mut rng,
        draws,
        |ph, _, th, _| {
            if ph == Phase::Sampling {
                for j in 0..3 {
                    xs[j].push(th[j]);
                }
            } else {
                warm.push([th[0], th[1], th[2]]);
            }
        },
    );
    let l = chain
        .kernel()
        .chol
        .clone()
        .expect("covariance set at the midpoint");
    // the second quarter: 0-based warm-up steps t with warmup/4 < t + 1 ≤ warmup/2
    let quarter = &warm[warmup / 4..warmup / 2];
    let n = quarter.len() as f64;
    let m: Vec<f64> = (0..3)
        .map(|j| quarter.iter().map(|x| x[j]).sum::<f64>() / n)
        .collect();
    let mut cov = vec![0.0; 9];
    for x in quarter {
        for j in 0..3 {
            for k in 0..3 {
                cov[j * 3 + k] += (x[j] - m[j]) * (x[k] - m[k]) / (n - 1.0);
            }
        }
    }
    let want = Cholesky::new(&cov, 3).unwrap();
    for (a, b) in l.iter().zip(want.factor()) {
        assert!(
            (a - b).abs() <= 1e-9 * b.abs().max(1e-12),
            "L {l:?} vs {:?}",
            want.factor()
        );
    }
    // Σ = LLᵀ, rows 0 (φ) and 1 (log σ)
    let s = |i: usize, j: usize| (0..3).map(|k| l[i * 3 + k] * l[j * 3 + k]).sum::<f64>();
    let prop_corr = s(0, 1) / (s(0, 0) * s(1, 1)).sqrt();
    let (m0, m1) = (mean(&xs[0]), mean(&xs[1]));
    let c01: f64 = xs[0]
        .iter()
        .zip(&xs[1])
        .map(|(a, b)| (a - m0) * (b - m1))
        .sum();
    let c00: f64 = xs[0].iter().map(|a| (a - m0) * (a - m0)).sum();
    let c11: f64 = xs[1].iter().map(|b| (b - m1) * (b - m1)).sum();
    let draw_corr = c01 / (c00 * c11).sqrt();
    println!("corr(φ, log σ): proposal {prop_corr:.3}, draws {draw_corr:.3}");
    assert!(
        prop_corr * draw_corr > 0.0,
        "proposal {prop_corr} vs draws {draw_corr}"
    );
}

/// `pf-sgld`'s automatic defaults: on a series of at most 500 points the whole series per
/// gradient (`subseq_len` = T) with N = 2.5·T particles, beyond it S = 40 and N = 200; with
/// `step_size` auto the warm-up sets per-coordinate steps hᵢ ≤ 0.4/V̂ᵢ (the gradient-noise
/// bound, V̂ᵢ reported as `grad_noise_i`), which replace the starting 0.1/T; an explicit
/// step, or a warm-up shorter than 100 iterations, is kept as given.
#[test]
fn pf_sgld_automatic_defaults() {
    let resolved = |c: &dyn tallmc_core::chain::Chain, k: &str| {
        c.resolved().iter().find(|(key, _)| *key == k).map(|p| p.1)
    };
    let build = |t: usize, pairs: &[&str], warmup: usize| {
        let table = series("sv", t, 12);
        let model = build_model("sv", &table, &spec(), &Settings::new()).unwrap();
        let s = settings(pairs);
        let config = ChainConfig {
            sampler: "pf-sgld",
            warmup,
            settings: &s,
        };
        let mut rng = chain_rng(3, 0);
        let mut chain = build_chain(&config, model, &mut rng).unwrap();
        run_chain(chain.as_mut(), &mut rng, 5, |_, _, _, _| {});
        chain
    };
    let c = build(200, &[], 400);
    assert_eq!(resolved(c.as_ref(), "subseq_len"), Some(200.0));
    assert_eq!(resolved(c.as_ref(), "particles"), Some(500.0));
    let h0 = 0.1 / 200.0;
    let mut adapted = false;
    for (step, noise) in [
        ("step_size_0", "grad_noise_0"),
        ("step_size_1", "grad_noise_1"),
        ("step_size_2", "grad_noise_2"),
    ] {
        let h = resolved(c.as_ref(), step).expect("per-coordinate step");
        let v = resolved(c.as_ref(), noise).expect("gradient noise");
        assert!(h > 0.0 && v > 0.0, "{step} {h}, {noise} {v}");
        assert!(h <= 0.4 / v * (1.0 + 1e-12), "{step} {h} > 0.4/{v}");
        eprintln!("{step} {h:.3e} {noise} {v:.3}");
        adapted |= (h - h0).abs() > 1e-12;
    }
    assert!(adapted, "every step is still the starting 0.1/T");
    let c = build(600, &[], 100);
    assert_eq!(resolved(c.as_ref(), "subseq_len"), Some(40.0));
    assert_eq!(resolved(c.as_ref(), "particles"), Some(200.0));
    // the shortest warm-up that adapts
    let c = build(200, &[], 100);
    assert!(
        resolved(c.as_ref(), "step_size_0").is_some(),
        "warm-up 100 adapts"
    );
    for (pairs, warmup) in [(&["step_size=0.001"][..], 400), (&[][..], 99)] {
        let c = build(200, pairs, warmup);
        assert_eq!(
            resolved(c.as_ref(), "step_size_0"),
            None,
            "{pairs:?} {warmup}"
        );
        let want = if pairs.is_empty() { h0 } else { 0.001 };
        assert_eq!(resolved(c.as_ref(), "step_size"), Some(want));
    }
}

/// `pf-sgld`'s warm-up measures the gradient noise from pairs of estimates at one θ (the
/// step's own and a second one, from a stream of its own, taken where the step will be): with
/// the exact full-series score (`lgssm`, `gradient=kalman`, `subseq_len` = T) the estimate has
/// no noise, so V̂ᵢ is exactly 0 and the steps come from the posterior's scale alone. The
/// former estimate, from consecutive steps' estimates, saw θ's own movement as noise (V̂ᵢ > 0
/// here; with little noise it set steps far too small: `particles=8000` on dax, ESS 4). The
/// pairs' second estimates are counted in the warm-up's cost: one per iteration of the first
/// window (0.1 to 0.15 of the warm-up, at least 12 iterations) but its last.
#[test]
fn pf_sgld_noise_from_pairs_at_one_point() {
    let t = 200;
    let table = series("lgssm", t, 4);
    let model = build_model("lgssm", &table, &spec(), &Settings::new()).unwrap();
    let (warmup, draws) = (400, 50);
    let pairs = ["gradient=kalman", "subseq_len=200"];
    let (mut chain, mut rng) = chain_of(&model, "pf-sgld", &pairs, warmup, 5);
    let (cost, warm) = run_chain(chain.as_mut(), &mut rng, draws, |_, _, _, _| {});
    let resolved = chain.resolved();
    let get = |k: &str| resolved.iter().find(|(key, _)| *key == k).map(|p| p.1);
    let p = chain.dim();
    for j in 0..p.min(4) {
        let v = get([
            "grad_noise_0",
            "grad_noise_1",
            "grad_noise_2",
            "grad_noise_3",
        ][j]);
        assert_eq!(v, Some(0.0), "coordinate {j}");
        let h = get(["step_size_0", "step_size_1", "step_size_2", "step_size_3"][j]).unwrap();
        assert!(h.is_finite() && h > 0.0, "step {j}: {h}");
    }
    // the first window: iterations 41..=60; a second estimate after each but the last
    let probes = 60 - 41;
    assert_eq!(warm.lik_evals, ((warmup + probes) * t) as u64, "{warm:?}");
    assert_eq!(warm.grad_evals, warm.lik_evals);
    assert_eq!(cost.lik_evals, (draws * t) as u64, "{cost:?}");
}

/// The warm-up's probes (the second estimates of the gradient noise) draw from a stream of
/// their own: until the first steps are set (iteration 60 of a 400-iteration warm-up), a chain
/// with `step_size` auto moves exactly as one given its starting step 0.1/T explicitly, which
/// neither adapts nor probes; after it, the adapted steps move it elsewhere.
#[test]
fn pf_sgld_probes_leave_the_chain_stream_alone() {
    let t = 200;
    let table = series("sv", t, 9);
    let model = build_model("sv", &table, &spec(), &Settings::new()).unwrap();
    let path = |pairs: &[&str]| {
        let (mut chain, mut rng) = chain_of(&model, "pf-sgld", pairs, 400, 11);
        let mut out: Vec<Vec<f64>> = Vec::new();
        while out.len() < 80 {
            chain.step(&mut rng);
            out.push(chain.position().to_vec());
        }
        out
    };
    let h0 = format!("step_size={:?}", 0.1 / t as f64);
    let auto = path(&[]);
    let fixed = path(&[h0.as_str()]);
    assert_eq!(auto[..60], fixed[..60], "the first 60 iterations differ");
    assert_ne!(auto[60..], fixed[60..], "the adapted steps changed nothing");
}

/// `pf-sgld`'s default step is Leimkuhler–Matthews' (`integrator = lm`): with the exact
/// full-series score (`lgssm`, `gradient=kalman`, `subseq_len` = T) and a step near the
/// posterior's smallest variance, its spread matches an exact Kalman-likelihood MH chain, where
/// Euler's (`integrator=euler`) is inflated by its discretisation (≈ h/(4s²) in variance). The
/// step is h = s² for the coordinate j of smallest posterior variance s² (measured on the
/// reference chain), so Euler's sd there is ≈ 15 % too large. Tolerance: 4 standard errors of
/// the sd ratio, √(1/(2·ESS) + 1/(2·ESS_ref)), from each chain's own ESS.
#[test]
fn pf_sgld_leimkuhler_matthews_keeps_the_spread() {
    let table = series("lgssm", 500, 21);
    let model = build_model("lgssm", &table, &spec(), &Settings::new()).unwrap();
    let reference = run(&model, "pmmh", &["likelihood=kalman"], 2000, 40_000, 3);
    let sds: Vec<f64> = reference
        .draws
        .iter()
        .map(|c| diag::summarize(&[c]).sd)
        .collect();
    let j = (0..sds.len())
        .min_by(|&a, &b| sds[a].total_cmp(&sds[b]))
        .unwrap();
    let h = sds[j] * sds[j];
    let ess_ref = diag::ess_bulk(&[&reference.draws[j]]);
    let step = format!("step_size={h:e}");
    let mut ratio = [0.0; 2];
    let mut se = [0.0; 2];
    for (k, integrator) in ["integrator=lm", "integrator=euler"].iter().enumerate() {
        let r = run(
            &model,
            "pf-sgld",
            &[&step, "gradient=kalman", "subseq_len=500", integrator],
            2000,
            40_000,
            4,
        );
        let ess = diag::ess_bulk(&[&r.draws[j]]);
        ratio[k] = diag::summarize(&[&r.draws[j]]).sd / sds[j];
        se[k] = (0.5 / ess + 0.5 / ess_ref).sqrt();
        println!(
            "{integrator}: coordinate {j}, h {h:.3e}: sd ratio {:.4} ± {:.4} (ESS {ess:.0}, reference {ess_ref:.0})",
            ratio[k], se[k]
        );
    }
    assert!(
        (ratio[0] - 1.0).abs() < 4.0 * se[0],
        "lm: sd ratio {} beyond 4 se {}",
        ratio[0],
        se[0]
    );
    assert!(
        ratio[1] - 1.0 > 4.0 * se[1],
        "euler is not measurably inflated here: sd ratio {} ± {}",
        ratio[1],
        se[1]
    );
}
