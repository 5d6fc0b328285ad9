//! SMH on robust (Student-t, ν = 4) regression, d = 2, n = 256, flat prior: SMH-1 and SMH-2
//! (RW, R = n and R = ∞; pCN ρ = 0.5) agree with quadrature (means within 4 MCSE, sds within
//! 4 %). Also the registry face of `smh-1` / `smh-2`: listed, settings validated, unsupported
//! models rejected with a clear error, setup cost reported.

#![allow(clippy::needless_range_loop)]

use crate::smh_common;

use std::sync::{Arc, OnceLock};
use tallmc_core::data::Design;
use tallmc_core::error::Error;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, Glm, Poisson};
use tallmc_core::optim::{find_mode, ModeOptions};
use tallmc_core::registry::{build_chain, samplers, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_tests::{mcse_mean, mean, run_sampler, sd};

const ITERS: usize = 200_000;

struct Truth {
    model: Arc<dyn DataModel>,
    mean: [f64; 2],
    sd: [f64; 2],
}

fn truth() -> &'static Truth {
    static T: OnceLock<Truth> = OnceLock::new();
    T.get_or_init(|| {
        let model = smh_common::robust(256, 2, 7);
        let m = find_mode(model.as_ref(), &[1.0, 1.0], &ModeOptions::default()).expect("mode");
        assert!(m.converged);
        let cov = m.covariance().expect("pd");
        let lsd = [cov[0].sqrt(), cov[3].sqrt()];
        let g = 400;
        let w = 12.0;
        let lo = [m.mode[0] - w * lsd[0], m.mode[1] - w * lsd[1]];
        let h = [2.0 * w * lsd[0] / g as f64, 2.0 * w * lsd[1] / g as f64];
        let mut lp = vec![0.0; (g + 1) * (g + 1)];
        let mut mx = f64::NEG_INFINITY;
        for a in 0..=g {
            for b in 0..=g {
                let th = [lo[0] + a as f64 * h[0], lo[1] + b as f64 * h[1]];
                let v = model.log_lik_all(&th);
                lp[a * (g + 1) + b] = v;
                mx = mx.max(v);
            }
        }
        let (mut z, mut s, mut q, mut edge) = (0.0, [0.0; 2], [0.0; 2], 0.0f64);
        for a in 0..=g {
            for b in 0..=g {
                let wt = (lp[a * (g + 1) + b] - mx).exp();
                let th = [lo[0] + a as f64 * h[0], lo[1] + b as f64 * h[1]];
                z += wt;
                for j in 0..2 {
                    s[j] += wt * th[j];
                    q[j] += wt * th[j] * th[j];
                }
                if a == 0 || b == 0 || a == g || b == g {
                    edge = edge.max(wt);
                }
            }
        }
        assert!(edge < 1e-12, "grid too small: edge weight {edge}");
        let mean = [s[0] / z, s[1] / z];
        let sd = [
            (q[0] / z - mean[0] * mean[0]).sqrt(),
            (q[1] / z - mean[1] * mean[1]).sqrt(),
        ];
        eprintln!("quadrature mean {mean:?} sd {sd:?}; mode {:?}", m.mode);
        Truth { model, mean, sd }
    })
}

fn check(sampler: &str, settings: &[&str], seed: u64) {
    let t = truth();
    let r = run_sampler(
        sampler,
        t.model.clone(),
        &smh_common::paper(settings),
        seed,
        0,
        ITERS,
    );
    let acc = r.stats.iter().filter(|s| s.accepted).count() as f64 / ITERS as f64;
    let evals = r.stats.iter().map(|s| s.lik_evals as f64).sum::<f64>() / ITERS as f64;
    for j in 0..2 {
        let x = r.col(j);
        let (m, s, e) = (mean(&x), sd(&x), mcse_mean(&x));
        let z = (m - t.mean[j]) / e;
        let rel = s / t.sd[j] - 1.0;
        eprintln!(
            "{sampler} {settings:?}: acc {acc:.3} evals/it {evals:.1}; θ{j} z {z:+.2} sd {:+.2}%",
            100.0 * rel
        );
        assert!(z.abs() <= 4.0, "{sampler} {settings:?} θ{j}: z = {z}");
        assert!(
            rel.abs() <= 0.04,
            "{sampler} {settings:?} θ{j}: sd off by {rel}"
        );
    }
}

#[test]
fn robust_smh2_matches_quadrature() {
    check("smh-2", &[], 61);
    check("smh-2", &["truncation=inf"], 62);
    check("smh-2", &["proposal=pcn", "rho=0.5"], 63);
}

#[test]
fn robust_smh1_matches_quadrature() {
    check("smh-1", &["truncation=inf"], 64);
    check("smh-1", &["proposal=pcn", "rho=0.5", "truncation=inf"], 65);
}

fn build(sampler: &str, model: Arc<dyn DataModel>, kv: &[&str]) -> Result<(), Error> {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup: 0,
        settings: &s,
    };
    let mut rng = chain_rng(1, 0);
    let c = build_chain(&config, model, &mut rng)?;
    assert!(c.setup_cost().lik_evals > 0);
    assert_eq!(
        c.extra_names(),
        ["bound", "fell_back", "points", "log_first_factor"]
    );
    Ok(())
}

#[test]
fn registry_entries_and_errors() {
    for name in ["smh-1", "smh-2"] {
        let info = samplers().iter().find(|s| s.name == name).expect(name);
        assert!(info.exact && !info.signed);
        assert_eq!(info.models, ["logistic", "robust"]);
    }
    let lr = smh_common::logistic(500, 3, 9);
    build("smh-1", lr.clone(), &[]).unwrap();
    build(
        "smh-2",
        lr.clone(),
        &["proposal=pcn", "rho=0.3", "truncation=100"],
    )
    .unwrap();
    for (kv, key) in [
        ("rho=1", "rho"),
        ("scale=0", "scale"),
        ("proposal=mala", "proposal"),
        ("truncation=-1", "truncation"),
    ] {
        let kvs: Vec<&str> = if key == "rho" {
            vec!["proposal=pcn", kv]
        } else {
            vec![kv]
        };
        match build("smh-2", lr.clone(), &kvs) {
            Err(Error::InvalidSetting { key: k, .. }) => assert_eq!(k, key, "{kv}"),
            other => panic!("{kv}: {other:?}"),
        }
    }
    // Proposal (17) (`pi1`) takes `scale`, not `rho`.
    build("smh-1", lr.clone(), &["proposal=pi1", "scale=4"]).unwrap();
    match build("smh-2", lr.clone(), &["proposal=pi1", "rho=0.5"]) {
        Err(Error::InvalidSetting { key, .. }) => assert_eq!(key, "rho"),
        other => panic!("rho with pi1: {other:?}"),
    }
    assert!(matches!(
        build("smh-2", lr.clone(), &["typo=1"]),
        Err(Error::UnknownSetting { .. })
    ));
    // A Poisson GLM has unbounded derivatives: refused, naming the model.
    let n = 50;
    let design = Design {
        n,
        d: 1,
        x: vec![1.0; n],
        y: vec![1.0; n],
        names: vec!["x".into()],
    };
    let pois: Arc<dyn DataModel> = Arc::new(Glm::new(design, Poisson, Prior::Flat));
    match build("smh-2", pois, &[]) {
        Err(Error::InvalidSetting { msg, .. }) => {
            assert!(msg.contains("poisson"), "{msg}");
        }
        other => panic!("poisson accepted: {other:?}"),
    }
}
