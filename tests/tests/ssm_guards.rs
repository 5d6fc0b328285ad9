//! Guards of the time-series code (review items 5, 6, 7, 9 of the state-space review):
//! - a dead particle filter (every weight zero: p̂(y_{S*}|θ) = 0) makes a `pf-sgld` step
//!   divergent and leaves θ unchanged;
//! - the `lgssm` likelihood of a θ of the wrong length is NaN, never a panic;
//! - particle counts are capped at 10⁶ everywhere (filter, `pf-sgld`, `pmmh`, registry);
//! - the series models read the initial law and the prior from the model settings, and the
//!   registry lists those settings;
//! - `pmmh`'s extras and window trace describe the current state's filter run (a rejected
//!   step repeats them).

use std::sync::Arc;
use tallmc_core::data::{DesignSpec, Table};
use tallmc_core::model::series::{SeriesModel, SsmKind};
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_chain, build_model, models, samplers, ChainConfig, ParamKind};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::simulate::simulate;
use tallmc_core::ssm::pf::{PfConfig, Proposal, MAX_PARTICLES};
use tallmc_core::ssm::resample::Resampling;
use tallmc_core::ssm::InitialLaw;

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

/// An observation no particle can explain (y = 10²⁰⁰: every log weight is −∞) kills the
/// filter on any window that contains it; the step must be divergent with θ unchanged, the
/// window log-likelihood reported as not finite.
#[test]
fn dead_filter_makes_a_divergent_pf_sgld_step() {
    let mut y: Vec<f64> = (0..50).map(|i| (i as f64 * 0.7).sin()).collect();
    y[20] = 1e200;
    for name in ["lgssm", "sv"] {
        let kind = SsmKind::from_name(name, InitialLaw::Stationary).unwrap();
        let model: Arc<dyn DataModel> = Arc::new(SeriesModel::new(kind, y.clone(), "y").unwrap());
        for proposal in ["optimal", "bootstrap"] {
            // S = T: every window contains y₂₁
            let s = settings(&[
                "subseq_len=50",
                "buffer=0",
                "particles=20",
                "init=zero",
                &format!("proposal={proposal}"),
            ]);
            let config = ChainConfig {
                sampler: "pf-sgld",
                warmup: 0,
                settings: &s,
            };
            let mut rng = chain_rng(3, 0);
            let mut chain = build_chain(&config, model.clone(), &mut rng).unwrap();
            let before = chain.position().to_vec();
            for _ in 0..5 {
                let info = chain.step(&mut rng);
                assert!(info.divergent, "{name} {proposal}: {info:?}");
                assert!(!info.accepted, "{name} {proposal}");
                assert!(!info.extra[3].is_finite(), "{name} {proposal}: {info:?}");
                assert_eq!(chain.position(), &before[..], "{name} {proposal}");
            }
        }
    }
    // the outlier in the buffer (y₁, S = 40, B = 10, T = 50: in the left buffer for every start
    // but the first): no score term of its own, so only the dead filter's −∞ window
    // likelihood flags the step (the scores over S are finite)
    let mut z: Vec<f64> = (0..50).map(|i| (i as f64 * 0.7).sin()).collect();
    z[0] = 1e200;
    let kind = SsmKind::from_name("lgssm", InitialLaw::Stationary).unwrap();
    let model: Arc<dyn DataModel> = Arc::new(SeriesModel::new(kind, z, "y").unwrap());
    let s = settings(&["subseq_len=40", "buffer=10", "particles=20", "init=zero"]);
    let config = ChainConfig {
        sampler: "pf-sgld",
        warmup: 0,
        settings: &s,
    };
    let mut rng = chain_rng(4, 0);
    let mut chain = build_chain(&config, model, &mut rng).unwrap();
    let before = chain.position().to_vec();
    let mut in_buffer = 0;
    for _ in 0..30 {
        let info = chain.step(&mut rng);
        assert!(info.divergent && !info.extra[3].is_finite(), "{info:?}");
        assert_eq!(chain.position(), &before[..]);
        if info.extra[0] > 1.0 {
            in_buffer += 1;
        }
    }
    assert!(in_buffer > 10, "{in_buffer}");
    // the same series without the outlier steps normally
    y[20] = 0.3;
    let kind = SsmKind::from_name("lgssm", InitialLaw::Stationary).unwrap();
    let model: Arc<dyn DataModel> = Arc::new(SeriesModel::new(kind, y, "y").unwrap());
    let s = settings(&["subseq_len=50", "buffer=0", "particles=20"]);
    let config = ChainConfig {
        sampler: "pf-sgld",
        warmup: 0,
        settings: &s,
    };
    let mut rng = chain_rng(3, 0);
    let mut chain = build_chain(&config, model, &mut rng).unwrap();
    let before = chain.position().to_vec();
    let info = chain.step(&mut rng);
    assert!(!info.divergent && info.extra[3].is_finite(), "{info:?}");
    assert_ne!(chain.position(), &before[..]);
}

/// Wrong-length θ on `lgssm`: NaN likelihoods, no panic.
#[test]
fn lgssm_likelihood_of_a_short_theta_is_nan() {
    let model = build_model("lgssm", &series("lgssm", 30, 1), &spec(), &Settings::new()).unwrap();
    for theta in [&[0.5, 0.1][..], &[][..], &[0.5, 0.1, 0.2, 0.3][..]] {
        assert!(model.log_lik(theta, 5).is_nan(), "{theta:?}");
        assert!(model.log_lik(theta, 0).is_nan(), "{theta:?}");
        assert!(model.log_lik_all(theta).is_nan(), "{theta:?}");
        let mut g = vec![0.0; 3];
        assert!(model.log_lik_grad(theta, 5, &mut g).is_nan(), "{theta:?}");
    }
    assert!(model.log_lik(&[0.5, 0.1, 0.2], 5).is_finite());
    assert!(model.log_lik(&[0.5, 0.1, 0.2], 30).is_nan());
}

/// One cap, 10⁶ particles, for the filter, `pf-sgld`, `pmmh` and their registry entries.
#[test]
fn particle_count_is_capped_at_one_million() {
    assert_eq!(MAX_PARTICLES, 1_000_000);
    assert!(PfConfig::new(
        MAX_PARTICLES + 1,
        Proposal::Optimal,
        Resampling::Systematic,
        1.0
    )
    .is_err());
    assert!(PfConfig::new(
        MAX_PARTICLES,
        Proposal::Optimal,
        Resampling::Systematic,
        1.0
    )
    .is_ok());
    assert!(PfConfig::from_settings(&settings(&["particles=1000001"])).is_err());
    let model = build_model("lgssm", &series("lgssm", 50, 1), &spec(), &Settings::new()).unwrap();
    for sampler in ["pf-sgld", "pmmh"] {
        let info = samplers().iter().find(|s| s.name == sampler).unwrap();
        let p = info.params.iter().find(|p| p.key == "particles").unwrap();
        match p.kind {
            ParamKind::Int { max, .. } => assert_eq!(max, MAX_PARTICLES, "{sampler}"),
            ref k => panic!("{sampler}: particles is {k:?}"),
        }
        for n in ["1000001", "10000000"] {
            let s = settings(&[&format!("particles={n}")]);
            let config = ChainConfig {
                sampler,
                warmup: 0,
                settings: &s,
            };
            let e = match build_chain(&config, model.clone(), &mut chain_rng(1, 0)) {
                Ok(_) => panic!("{sampler} particles={n} should not build"),
                Err(e) => e.to_string(),
            };
            assert!(e.contains("particles"), "{sampler}: {e}");
        }
    }
}

/// The registry's series models take the initial law and (lgssm, sv) the prior from the
/// model settings, as `ssm::build` does, and list those settings.
#[test]
fn series_model_settings_reach_the_model() {
    use tallmc_core::ssm::{build, true_theta};
    let table = series("lgssm", 40, 2);
    let thesis = [
        "initial=normal",
        "initial_var=4",
        "prior=thesis",
        "phi_prior_scale=2",
        "inv_shape=3",
        "inv_scale=0.5",
    ];
    let half_normal = [
        "initial=normal",
        "initial_var=4",
        "sigma_prior_scale=0.3",
        "tau_prior_scale=5",
    ];
    for (name, pairs) in [
        ("lgssm", &thesis[..]),
        ("sv", &thesis[..]),
        ("lgssm", &half_normal[..]),
        ("sv", &half_normal[..]),
    ] {
        let s = settings(pairs);
        let model = build_model(name, &table, &spec(), &s).unwrap();
        s.check_all_used().unwrap();
        let reference = build(name, &settings(pairs)).unwrap();
        let default = build(name, &Settings::new()).unwrap();
        let th = true_theta(name).unwrap();
        let lp = model.log_prior(&th);
        assert!(
            (lp - reference.log_prior(&th)).abs() < 1e-12,
            "{name}: {lp} vs {}",
            reference.log_prior(&th)
        );
        assert!((lp - default.log_prior(&th)).abs() > 1e-3, "{name}");
        let series = model.as_series().unwrap();
        let initial = match series.kind() {
            SsmKind::Lgssm(m) => m.initial,
            SsmKind::Sv(m) => m.initial,
            SsmKind::Garch(_) => unreachable!(),
        };
        assert_eq!(initial, InitialLaw::Normal { var: 4.0 }, "{name}");
        let info = models().iter().find(|m| m.name == name).unwrap();
        for k in [
            "initial",
            "initial_var",
            "prior",
            "sigma_prior_scale",
            "tau_prior_scale",
            "phi_prior_scale",
            "inv_shape",
            "inv_scale",
        ] {
            assert!(info.params.iter().any(|p| p.key == k), "{name}: {k}");
        }
    }
    // garch has no such prior: the keys are refused, and not listed
    let garch = series("garch", 40, 2);
    let e = build_model("garch", &garch, &spec(), &settings(&["inv_shape=3"]))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("inv_shape"), "{e}");
    let info = models().iter().find(|m| m.name == "garch").unwrap();
    assert!(!info.params.iter().any(|p| p.key == "inv_shape"));
    // invalid values are refused with the user's key
    for (bad, key) in [
        ("initial_var=0", "initial_var"),
        ("initial_var=nan", "initial_var"),
        ("sigma_prior_scale=-1", "sigma_prior_scale"),
        ("tau_prior_scale=0", "tau_prior_scale"),
        // a key of the other prior family has no effect: refused, naming it
        ("inv_shape=3", "inv_shape"),
    ] {
        let s = settings(&["initial=normal", bad]);
        let e = build_model("lgssm", &table, &spec(), &s)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(key), "{bad}: {e}");
    }
    for (bad, key) in [
        ("phi_prior_scale=-1", "phi_prior_scale"),
        ("inv_scale=inf", "inv_scale"),
        ("sigma_prior_scale=2", "sigma_prior_scale"),
    ] {
        let s = settings(&["prior=thesis", bad]);
        let e = build_model("lgssm", &table, &spec(), &s)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains(key), "{bad}: {e}");
    }
    let e = build_model("lgssm", &table, &spec(), &settings(&["initial_var=3"]))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("initial_var"), "{e}");
}

/// `pmmh` extras (log_lik, ess_min, ess_mean, resample_rate) and the window trace all belong to
/// the filter run of the current state: unchanged by a rejected proposal, and the trace's ESS
/// path gives the reported ess_min / ess_mean.
#[test]
fn pmmh_extras_describe_the_current_state() {
    let model = build_model("sv", &series("sv", 100, 4), &spec(), &Settings::new()).unwrap();
    for kappa in ["ess_threshold=0.5", "ess_threshold=1"] {
        let s = settings(&["particles=30", kappa]);
        let config = ChainConfig {
            sampler: "pmmh",
            warmup: 0,
            settings: &s,
        };
        let mut rng = chain_rng(9, 0);
        let mut chain = build_chain(&config, model.clone(), &mut rng).unwrap();
        let mut prev: Option<[f64; 4]> = None;
        let (mut rejected, mut accepted) = (0, 0);
        for _ in 0..300 {
            let info = chain.step(&mut rng);
            let e = info.extra;
            let tr = chain.window_trace().unwrap();
            let emin = tr.ess.iter().copied().fold(f64::INFINITY, f64::min);
            let emean = tr.ess.iter().sum::<f64>() / tr.ess.len() as f64;
            assert_eq!(tr.ess.len(), 100);
            assert!(
                emin == e[1] && (emean - e[2]).abs() < 1e-9,
                "{kappa}: {e:?}"
            );
            if let Some(p) = prev {
                if info.accepted {
                    accepted += 1;
                } else {
                    rejected += 1;
                    assert_eq!(
                        e.map(f64::to_bits),
                        p.map(f64::to_bits),
                        "{kappa}: rejected step changed the extras"
                    );
                }
            }
            prev = Some(e);
        }
        assert!(
            rejected > 10 && accepted > 10,
            "{kappa}: {accepted} / {rejected}"
        );
    }
}
