//! `tallmc run` reports what the sampler chose itself (`resolved` per chain in run.json) and,
//! for signed samplers, the sign column of draws.csv with τ̂ and the cost factor IF/(2τ̂−1)².

mod common;
use common::{tallmc, TempDir};
use std::path::Path;
use std::process::Output;

fn ok(o: &Output) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn simulate(dir: &TempDir, n: &str) -> String {
    let data = dir.join("data.csv");
    ok(&tallmc(&[
        "simulate", "--model", "logistic", "--n", n, "--d", "3", "--seed", "7", "--out", &data,
    ]));
    data
}

fn run(data: &str, out: &str, sampler: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "run",
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--sampler",
        sampler,
        "--chains",
        "2",
        "--warmup",
        "300",
        "--draws",
        "400",
        "--seed",
        "3",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    ok(&tallmc(&args));
    let text = std::fs::read_to_string(Path::new(out).join("run.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn resolved(doc: &serde_json::Value, chain: usize) -> &serde_json::Map<String, serde_json::Value> {
    doc["chain_details"][chain]["resolved"]
        .as_object()
        .unwrap_or_else(|| panic!("chain {chain}: no resolved object in {doc}"))
}

#[test]
fn resolved_settings_per_chain() {
    let dir = TempDir::new("resolved");
    let data = simulate(&dir, "2000");

    // Adaptive full-data kernel: the adapted step size.
    let doc = run(&data, &dir.join("nuts"), "nuts", &[]);
    for c in 0..2 {
        let r = resolved(&doc, c);
        let eps = r["eps"].as_f64().unwrap();
        assert!(eps > 0.0 && eps.is_finite(), "nuts eps {eps}");
    }
    // A fixed step size is reported as given.
    let doc = run(&data, &dir.join("hmc"), "hmc", &["--set", "step_size=0.05"]);
    for c in 0..2 {
        assert_eq!(resolved(&doc, c)["eps"].as_f64(), Some(0.05));
    }

    // Perturbed HMC-ECS: ε, L, the CV order, m and G, frozen after warm-up.
    let doc = run(&data, &dir.join("ecs"), "hmc-ecs", &[]);
    for c in 0..2 {
        let r = resolved(&doc, c);
        for k in ["eps", "L", "order", "m", "G"] {
            let v = r[k]
                .as_f64()
                .unwrap_or_else(|| panic!("hmc-ecs resolved.{k}: {r:?}"));
            assert!(v.is_finite() && v > 0.0, "{k} = {v}");
        }
        assert_eq!(r["G"].as_f64(), Some(100.0));
        assert_eq!(r["order"].as_f64(), Some(2.0));
        let m = r["m"].as_f64().unwrap();
        assert!((1.0..=2000.0).contains(&m) && m.fract() == 0.0, "m = {m}");
    }
    assert!(
        doc.get("signed").is_none(),
        "perturbed run has no signed block"
    );
}

#[test]
fn signed_run_reports_signs_tau_and_cost_factor() {
    let dir = TempDir::new("signed");
    let data = simulate(&dir, "2000");
    let out = dir.join("signed");
    // A small λ with a = 0 (above d(θ) ≈ 0 under second-order control variates) makes some
    // factors d̂ − a negative, so the sign column and τ̂ are non-trivial.
    let doc = run(
        &data,
        &out,
        "hmc-ecs-signed",
        &["--set", "lambda=3", "--set", "a=0"],
    );
    assert_eq!(doc["sampler"]["signed"], serde_json::json!(true));
    for c in 0..2 {
        let r = resolved(&doc, c);
        for k in ["eps", "L", "m", "lambda", "a", "kappa"] {
            assert!(r[k].as_f64().is_some(), "signed resolved.{k}: {r:?}");
        }
        assert_eq!(r["lambda"].as_f64(), Some(3.0));
        assert_eq!(r["a"].as_f64(), Some(0.0));
        assert_eq!(r["m"].as_f64(), Some(30.0));
    }

    // draws.csv: the last column is the sign, ±1.
    let draws = std::fs::read_to_string(Path::new(&out).join("draws.csv")).unwrap();
    let mut lines = draws.lines();
    assert_eq!(lines.next().unwrap(), "chain,draw,intercept,x1,x2,sign");
    let mut signs: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut theta: [[Vec<f64>; 3]; 2] = Default::default();
    for l in lines {
        let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        let c = v[0] as usize;
        assert!(v[5] == 1.0 || v[5] == -1.0, "sign {}", v[5]);
        signs[c].push(v[5]);
        for j in 0..3 {
            theta[c][j].push(v[2 + j]);
        }
    }
    assert_eq!(signs[0].len(), 400);
    assert_eq!(signs[1].len(), 400);

    // τ̂ = fraction of + signs, per chain and overall; the mean sign is 2τ̂ − 1.
    let frac = |s: &[f64]| s.iter().filter(|&&x| x > 0.0).count() as f64 / s.len() as f64;
    let s = &doc["signed"];
    let tau = s["tau_hat"].as_f64().unwrap();
    let all: Vec<f64> = signs.concat();
    assert!(
        all.contains(&-1.0) && all.contains(&1.0),
        "both signs occur"
    );
    assert!((tau - frac(&all)).abs() < 1e-12);
    for c in 0..2 {
        let tc = s["tau_hat_per_chain"][c].as_f64().unwrap();
        assert!((tc - frac(&signs[c])).abs() < 1e-12);
        assert_eq!(doc["chain_details"][c]["tau_hat"].as_f64(), Some(tc));
    }
    let mean_sign = all.iter().sum::<f64>() / all.len() as f64;
    assert!((s["mean_sign"].as_f64().unwrap() - mean_sign).abs() < 1e-12);

    // IF = draws / ESS_mean of the raw draws, max over parameters; factor IF/(2τ̂−1)².
    let if_max = (0..3)
        .map(|j| {
            let ch: Vec<&[f64]> = vec![&theta[0][j], &theta[1][j]];
            tallmc_core::diag::inefficiency_factor(&ch)
        })
        .fold(f64::NEG_INFINITY, f64::max);
    let got_if = s["if_max"].as_f64().unwrap();
    assert!(
        (got_if - if_max).abs() <= 1e-9 * if_max,
        "{got_if} vs {if_max}"
    );
    assert!(if_max >= 0.5, "IF {if_max}");
    let factor = s["cost_factor"].as_f64().unwrap();
    let want = if_max / (mean_sign * mean_sign);
    assert!((factor - want).abs() <= 1e-9 * want, "{factor} vs {want}");
    assert!(factor >= if_max);
}

#[test]
fn repro_hmc_ecs_tiny() {
    // Listing names the experiment; running it without --out is an input error.
    let o = tallmc(&["repro"]);
    ok(&o);
    assert!(String::from_utf8_lossy(&o.stdout).contains("hmc-ecs"));
    let o = tallmc(&["repro", "hmc-ecs"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--out DIR is required"));

    // A tiny hidden size: the tables are written and every sampler has a row.
    let dir = TempDir::new("repro");
    let out = dir.join("r");
    let o = tallmc(&[
        "repro", "hmc-ecs", "--quick", "--n", "2000", "--draws", "60", "--out", &out,
    ]);
    ok(&o);
    let stdout = String::from_utf8_lossy(&o.stdout).to_string();
    for label in [
        "HMC-ECS (perturbed)",
        "HMC-ECS (signed)",
        "HMC (full data)",
        "NUTS (full data)",
        "SG-HMC (CV)",
        "SGLD (CV)",
    ] {
        assert!(stdout.contains(label), "{label} missing in\n{stdout}");
    }
    let md = std::fs::read_to_string(Path::new(&out).join("hmc_ecs_table.md")).unwrap();
    assert_eq!(md, stdout);
    let csv = std::fs::read_to_string(Path::new(&out).join("hmc_ecs_samplers.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 6);
    assert!(!stdout.contains("not implemented"), "{stdout}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let cells = |row: &str| -> Vec<String> {
        // the settings column is quoted and has no commas
        row.split(',').map(str::to_string).collect()
    };
    // Perturbed HMC-ECS is the cost unit; full-data samplers touch all n rows per gradient.
    let r0 = cells(rows[0]);
    assert_eq!(r0[col("CT_over_perturbed")].parse::<f64>().unwrap(), 1.0);
    for r in &rows[2..4] {
        let v = cells(r);
        assert!(v[col("full_passes_per_iter")].parse::<f64>().unwrap() >= 1.0);
    }
    // SG-HMC and SGLD: control-variate gradients on minibatches, a finite relative cost.
    for (r, name) in rows[4..].iter().zip(["sghmc", "sgld-cv"]) {
        let v = cells(r);
        assert_eq!(v[col("sampler")], name);
        assert!(v[col("full_passes_per_iter")].parse::<f64>().unwrap() < 1.0);
        assert!(v[col("CT_over_perturbed")]
            .parse::<f64>()
            .unwrap()
            .is_finite());
    }
    for r in &rows[..2] {
        let v = cells(r);
        let f: f64 = v[col("subsample_fraction_pct")].parse().unwrap();
        assert!(f > 0.0 && f <= 100.0, "subsample % {f}");
    }
    let rct = std::fs::read_to_string(Path::new(&out).join("hmc_ecs_rct.csv")).unwrap();
    assert_eq!(rct.lines().count(), 4);
    for line in rct.lines().skip(1) {
        let v: Vec<&str> = line.split(',').collect();
        assert_eq!(v.len(), 6, "{line}");
        assert!(v[1..].iter().all(|x| x.parse::<f64>().is_ok()), "{line}");
    }
}
