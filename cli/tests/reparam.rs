//! `--set reparam=none` runs every sampler's own kernel on the untransformed model (no map, no
//! wrapper), bit for bit, and the default (`reparam=auto`) reports draws, summaries and run.json
//! on the user's scale. `tests/fixtures/before_reparam/data.csv` is 400 rows of raw-scale
//! features (age in years, income, a dummy, two correlated education columns).
//!
//! History: at commit 9eba46a the first test compared `reparam=none` with `draws.csv` files
//! written by the binary of commit e0ab5ca (the last one without the reparametrisation) and
//! they agreed bit for bit. The next commit changed the logistic family's exp/log1p (a faster
//! evaluation within 1 ulp), SG-MCMC's automatic step and SMH's bound on purpose, so those
//! files no longer describe the code; the test now rebuilds the untransformed chain in-process
//! through the kernel registry and compares it with the CLI's draws.

mod common;
use common::{tallmc, TempDir};
use std::path::Path;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/before_reparam");
const SAMPLERS: [&str; 8] = [
    "rwmh",
    "mala",
    "nuts",
    "hmc-ecs",
    "smh-2",
    "sgld-cv",
    "mh-minibatch",
    "sghmc",
];

fn run(dir: &TempDir, name: &str, sampler: &str, iters: [&str; 2], extra: &[&str]) -> String {
    let data = format!("{FIXTURES}/data.csv");
    let out = dir.join(name);
    let mut args = vec![
        "run",
        "--data",
        &data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--sampler",
        sampler,
        "--chains",
        "1",
        "--warmup",
        iters[0],
        "--draws",
        iters[1],
        "--seed",
        "3",
        "--ksd-draws",
        "0",
        "--out",
        &out,
    ];
    args.extend_from_slice(extra);
    let o = tallmc(&args);
    assert!(
        o.status.success(),
        "{sampler}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

#[test]
fn reparam_none_is_the_untransformed_kernel() {
    use std::sync::Arc;
    use tallmc_core::chain::{run_chain, Phase};
    use tallmc_core::data::DesignSpec;
    use tallmc_core::registry::{build_model, ChainConfig};
    use tallmc_core::rng::chain_rng;
    use tallmc_core::settings::Settings;
    let dir = TempDir::new("reparam-none");
    let bytes = std::fs::read(format!("{FIXTURES}/data.csv")).unwrap();
    let table = tallmc_cli::csvdata::parse_csv(&bytes, "data.csv").unwrap();
    let design = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    for s in SAMPLERS {
        let out = run(
            &dir,
            &format!("{s}-none"),
            s,
            ["100", "50"],
            &["--set", "reparam=none"],
        );
        let got = std::fs::read_to_string(Path::new(&out).join("draws.csv")).unwrap();
        let rj: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(Path::new(&out).join("run.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(rj["reparam"]["kind"], "none");
        // The same chain in-process: the model with reparam=none has no map, and the kernel
        // is built directly (no user-scale wrapper).
        let mut settings = Settings::new();
        settings.insert("reparam", "none");
        let model = build_model("logistic", &table, &design, &settings).unwrap();
        assert!(model.user_map().is_none(), "{s}");
        let config = ChainConfig {
            sampler: s,
            warmup: 100,
            settings: &settings,
        };
        let mut rng = chain_rng(3, 0);
        let mut chain =
            tallmc_core::registry::samplers::build(&config, Arc::clone(&model), &mut rng).unwrap();
        let mut want: Vec<Vec<f64>> = Vec::new();
        run_chain(chain.as_mut(), &mut rng, 50, |ph, _, th, _| {
            if ph == Phase::Sampling {
                want.push(th.to_vec());
            }
        });
        let rows: Vec<Vec<f64>> = got
            .lines()
            .skip(1)
            .map(|l| l.split(',').skip(2).map(|v| v.parse().unwrap()).collect())
            .collect();
        assert_eq!(rows.len(), want.len(), "{s}");
        for (k, (a, b)) in rows.iter().zip(&want).enumerate() {
            assert!(a == b, "{s} draw {k}: CLI {a:?} vs kernel {b:?}");
        }
    }
}

#[test]
fn reparam_auto_reports_the_user_scale() {
    let dir = TempDir::new("reparam-auto");
    let out = run(&dir, "auto", "nuts", ["1000", "1000"], &[]);
    let rj: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(Path::new(&out).join("run.json")).unwrap())
            .unwrap();
    assert_eq!(rj["reparam"]["kind"], "whiten", "{}", rj["reparam"]);
    assert!(rj["reparam"]["grad_evals"].as_u64().unwrap() > 0);
    // The set-up cost includes the mode search, once.
    assert!(
        rj["grad_evals"]["setup"].as_u64().unwrap()
            >= rj["reparam"]["grad_evals"].as_u64().unwrap()
    );
    let draws = std::fs::read_to_string(Path::new(&out).join("draws.csv")).unwrap();
    let header: Vec<&str> = draws.lines().next().unwrap().split(',').collect();
    assert_eq!(
        header,
        [
            "chain",
            "draw",
            "intercept",
            "age",
            "income",
            "female",
            "educ",
            "educ2"
        ]
    );
    // User scale: the age coefficient is a per-year effect ≈ 0.05 (the simulation's value),
    // not a whitened coordinate of order 1.
    let age: Vec<f64> = draws
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap().parse().unwrap())
        .collect();
    let m = age.iter().sum::<f64>() / age.len() as f64;
    assert!(m.abs() < 0.5, "age coefficient mean {m}");
    let none = run(
        &dir,
        "none",
        "nuts",
        ["1000", "1000"],
        &["--set", "reparam=none", "--set", "metric=dense"],
    );
    let sum = |d: &str| std::fs::read_to_string(Path::new(d).join("summary.csv")).unwrap();
    let (sa, sn) = (sum(&out), sum(&none));
    for (la, ln) in sa.lines().zip(sn.lines()).skip(1) {
        let a: Vec<&str> = la.split(',').collect();
        let b: Vec<&str> = ln.split(',').collect();
        assert_eq!(a[0], b[0]);
        let (ma, sda, mcse_a): (f64, f64, f64) = (
            a[1].parse().unwrap(),
            a[2].parse().unwrap(),
            a[7].parse().unwrap(),
        );
        let (mb, mcse_b): (f64, f64) = (b[1].parse().unwrap(), b[7].parse().unwrap());
        // Same posterior: the means agree within 5 combined MCSE (short chains) and within
        // half a posterior sd.
        let z = (ma - mb) / (mcse_a * mcse_a + mcse_b * mcse_b).sqrt();
        assert!(
            z.abs() < 5.0 && (ma - mb).abs() < 0.5 * sda,
            "{}: {ma} vs {mb} ({z} MCSE)",
            a[0]
        );
    }
}
