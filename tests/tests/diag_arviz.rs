//! Diagnostics against ArviZ 0.23.4: every case of `tests/fixtures/diag/arviz.json` (made by
//! `tests/fixtures/make_diag_fixture.py`) gives R-hat, bulk/tail/mean ESS, MCSE of the mean and
//! of quantiles, quantiles and the autocorrelation equal to ArviZ's to 1e-10 relative (the issue
//! asks for 1%), and NaN exactly where ArviZ gives NaN.

use serde_json::Value;
use tallmc_core::diag;

/// Relative tolerance against ArviZ. Differences come only from summation order (numpy sums
/// pairwise), the FFT length and the Φ⁻¹ / Beta⁻¹ implementations.
const REL: f64 = 1e-10;
/// Absolute tolerance for autocorrelations (bounded by 1, near 0 at long lags).
const ACF_ABS: f64 = 1e-10;

fn fixture() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/diag/arviz.json");
    let text = std::fs::read_to_string(path).expect("fixture readable");
    serde_json::from_str(&text).expect("fixture is JSON")
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(f64::NAN)
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(num)
        .collect::<Vec<_>>()
}

/// Checks `got` against ArviZ's `want` (NaN = null); returns the relative error.
fn check(case: &str, what: &str, got: f64, want: f64, failures: &mut Vec<String>) -> f64 {
    if want.is_nan() || got.is_nan() {
        if want.is_nan() != got.is_nan() {
            failures.push(format!("{case}: {what} = {got}, ArviZ {want}"));
        }
        return 0.0;
    }
    let err = if want == got {
        0.0
    } else {
        (got - want).abs() / want.abs().max(f64::MIN_POSITIVE)
    };
    if err.is_nan() || err > REL {
        failures.push(format!(
            "{case}: {what} = {got}, ArviZ {want} (rel {err:.2e})"
        ));
    }
    err
}

#[test]
fn diagnostics_match_arviz() {
    let fx = fixture();
    assert_eq!(fx["arviz"], "0.23.4");
    let cases = fx["cases"].as_array().expect("cases");
    assert!(cases.len() >= 20);
    let mut failures = Vec::new();
    let mut worst = 0.0_f64;
    for c in cases {
        let name = c["name"].as_str().expect("name");
        let owned: Vec<Vec<f64>> = c["draws"]
            .as_array()
            .expect("draws")
            .iter()
            .map(nums)
            .collect();
        let chains: Vec<&[f64]> = owned.iter().map(|v| v.as_slice()).collect();
        let has_nan = owned.iter().flatten().any(|v| v.is_nan());
        let mut e = |what: &str, got: f64, want: &Value, f: &mut Vec<String>| {
            worst = worst.max(check(name, what, got, num(want), f));
        };
        e("rhat", diag::rhat(&chains), &c["rhat"], &mut failures);
        e(
            "ess_bulk",
            diag::ess_bulk(&chains),
            &c["ess_bulk"],
            &mut failures,
        );
        e(
            "ess_tail",
            diag::ess_tail(&chains),
            &c["ess_tail"],
            &mut failures,
        );
        e(
            "ess_mean",
            diag::ess_mean(&chains),
            &c["ess_mean"],
            &mut failures,
        );
        e(
            "mcse_mean",
            diag::mcse_mean(&chains),
            &c["mcse_mean"],
            &mut failures,
        );
        let probs = nums(&c["probs"]);
        for (i, &p) in probs.iter().enumerate() {
            e(
                &format!("mcse_quantile({p})"),
                diag::mcse_quantile(&chains, p),
                &c["mcse_quantile"][i],
                &mut failures,
            );
            let q = diag::quantile(&chains, p);
            if has_nan {
                // Documented deviation: ArviZ's mquantiles sorts NaN last and returns a number.
                assert!(q.is_nan(), "{name}: quantile with NaN input must be NaN");
            } else {
                e(
                    &format!("quantile({p})"),
                    q,
                    &c["quantile"][i],
                    &mut failures,
                );
            }
        }
        // summarize agrees with the standalone functions and with numpy's mean / sd.
        let s = diag::summarize(&chains);
        if !has_nan && !diag::mixing_measurable(&chains) {
            // Documented deviation: a constant chain's summary has NaN ESS, R-hat and MCSE.
            assert!(s.ess_bulk.is_nan() && s.rhat.is_nan() && s.mcse_mean.is_nan());
            e("summary.mean", s.mean, &c["mean"], &mut failures);
            e("summary.sd", s.sd, &c["sd"], &mut failures);
        } else if has_nan {
            assert!(s.mean.is_nan() && s.rhat.is_nan() && s.ess_bulk.is_nan());
        } else {
            e("summary.mean", s.mean, &c["mean"], &mut failures);
            e("summary.sd", s.sd, &c["sd"], &mut failures);
            e("summary.q5", s.q5, &c["quantile"][0], &mut failures);
            e("summary.q50", s.q50, &c["quantile"][1], &mut failures);
            e("summary.q95", s.q95, &c["quantile"][2], &mut failures);
            e(
                "summary.mcse_mean",
                s.mcse_mean,
                &c["mcse_mean"],
                &mut failures,
            );
            e(
                "summary.ess_bulk",
                s.ess_bulk,
                &c["ess_bulk"],
                &mut failures,
            );
            e(
                "summary.ess_tail",
                s.ess_tail,
                &c["ess_tail"],
                &mut failures,
            );
            e("summary.rhat", s.rhat, &c["rhat"], &mut failures);
        }
        // Autocorrelation of the first chain.
        let want = nums(&c["acf_chain0"]);
        let got = diag::autocorrelation(&owned[0]);
        assert_eq!(got.len(), owned[0].len(), "{name}: acf length");
        for (k, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let ok = if w.is_nan() {
                g.is_nan()
            } else {
                (g - w).abs() <= ACF_ABS
            };
            if !ok {
                failures.push(format!("{name}: acf[{k}] = {g}, ArviZ {w}"));
            }
        }
        // The inefficiency factor is total draws over the mean-ESS.
        let n_total: usize = owned.iter().map(|v| v.len()).sum();
        let ess_mean = num(&c["ess_mean"]);
        let iff = diag::inefficiency_factor(&chains);
        if ess_mean.is_nan() {
            assert!(iff.is_nan(), "{name}: IF must be NaN");
        } else {
            let want_if = n_total as f64 / ess_mean;
            worst = worst.max(check(name, "IF", iff, want_if, &mut failures));
        }
    }
    eprintln!("worst relative error against ArviZ: {worst:.2e}");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The edge cases the issue names, spelled out (the fixture loop above covers them too).
#[test]
fn edge_cases_follow_arviz() {
    let fx = fixture();
    let find = |name: &str| -> Vec<Vec<f64>> {
        let c = fx["cases"]
            .as_array()
            .expect("cases")
            .iter()
            .find(|c| c["name"] == name)
            .expect("case present");
        c["draws"]
            .as_array()
            .expect("draws")
            .iter()
            .map(nums)
            .collect()
    };
    // Constant: R-hat NaN, ESS = number of (split) draws, MCSE 0.
    let constant = find("constant_4x100");
    let cs: Vec<&[f64]> = constant.iter().map(|v| v.as_slice()).collect();
    assert!(diag::rhat(&cs).is_nan());
    assert_eq!(diag::ess_bulk(&cs), 400.0);
    assert_eq!(diag::ess_tail(&cs), 400.0);
    assert_eq!(diag::mcse_mean(&cs), 0.0);
    // NaN anywhere: every diagnostic NaN.
    let with_nan = find("nan_4x100");
    let ns: Vec<&[f64]> = with_nan.iter().map(|v| v.as_slice()).collect();
    assert!(diag::rhat(&ns).is_nan() && diag::ess_bulk(&ns).is_nan());
    assert!(diag::ess_tail(&ns).is_nan() && diag::mcse_quantile(&ns, 0.5).is_nan());
    // One chain: R-hat NaN, ESS defined.
    let one = find("one_chain_1x1000");
    let os: Vec<&[f64]> = one.iter().map(|v| v.as_slice()).collect();
    assert!(diag::rhat(&os).is_nan());
    assert!(diag::ess_bulk(&os) > 100.0);
    // Three draws per chain: too short for everything.
    let short = find("too_short_4x3");
    let ss: Vec<&[f64]> = short.iter().map(|v| v.as_slice()).collect();
    assert!(diag::rhat(&ss).is_nan() && diag::ess_mean(&ss).is_nan());
    // Two chains with different means: R-hat well above 1.01.
    let bad = find("bad_rhat_2x500");
    let bs: Vec<&[f64]> = bad.iter().map(|v| v.as_slice()).collect();
    assert!(diag::rhat(&bs) > 1.1);
    // Ragged chains: NaN rather than a panic.
    assert!(diag::rhat(&[&bad[0][..], &bad[1][..400]]).is_nan());
}

/// Signed draws (signed HMC-ECS style): x from a stationary AR(1) chain on π̃ = N(0, 1), sign
/// +1 with probability τ(x) = ½ + 0.35·σ(x), so the signed target is π(x) ∝ φ(x)σ(x).
/// Over independent replications the sign-weighted mean must be unbiased for E_π[x] and its
/// delta-method MCSE calibrated (z-scores with mean 0 and sd 1), and the sign-weighted median
/// unbiased for π's median to within its replication standard error.
#[test]
fn signed_summary_is_calibrated() {
    use tallmc_core::math::sigmoid;
    use tallmc_core::{dist, rng};

    // Exact E_π[x] and median by the trapezoid rule on [−12, 12] (error far below 1e-8).
    let (lo, hi, m) = (-12.0_f64, 12.0_f64, 240_000usize);
    let h = (hi - lo) / m as f64;
    let dens = |x: f64| (-0.5 * x * x).exp() * sigmoid(x);
    let mut cdf = vec![0.0; m + 1];
    let mut first = 0.0;
    for i in 1..=m {
        let (a, b) = (lo + (i - 1) as f64 * h, lo + i as f64 * h);
        cdf[i] = cdf[i - 1] + 0.5 * h * (dens(a) + dens(b));
        first += 0.5 * h * (a * dens(a) + b * dens(b));
    }
    let z = cdf[m];
    let true_mean = first / z;
    let k = cdf
        .iter()
        .position(|&c| c >= 0.5 * z)
        .expect("median inside grid");
    let frac = (0.5 * z - cdf[k - 1]) / (cdf[k] - cdf[k - 1]);
    let true_median = lo + (k as f64 - 1.0 + frac) * h;

    let (reps, n_chain, n_draw, rho) = (200usize, 4usize, 500usize, 0.5_f64);
    let mut zs = Vec::with_capacity(reps);
    let mut medians = Vec::with_capacity(reps);
    let mut neg_frac = 0.0;
    for r in 0..reps {
        let mut xs = Vec::new();
        let mut ss = Vec::new();
        for c in 0..n_chain {
            let mut g = rng::chain_rng(20261123 + r as u64, c as u64);
            let mut x = dist::std_normal(&mut g);
            let (mut xc, mut sc) = (Vec::new(), Vec::new());
            for _ in 0..n_draw {
                x = rho * x + (1.0 - rho * rho).sqrt() * dist::std_normal(&mut g);
                let tau = 0.5 + 0.35 * sigmoid(x);
                let s = if rng::uniform(&mut g) < tau {
                    1.0
                } else {
                    -1.0
                };
                xc.push(x);
                sc.push(s);
            }
            xs.push(xc);
            ss.push(sc);
        }
        let xv: Vec<&[f64]> = xs.iter().map(|v| v.as_slice()).collect();
        let sv: Vec<&[f64]> = ss.iter().map(|v| v.as_slice()).collect();
        let s = diag::summarize_signed(&xv, &sv);
        assert!(s.mcse_mean > 0.0 && s.ess_bulk > 0.0 && s.ess_tail > 0.0);
        // The sign penalty makes the signed ESS far smaller than the draw count.
        assert!(s.ess_bulk < (n_chain * n_draw) as f64);
        zs.push((s.mean - true_mean) / s.mcse_mean);
        medians.push(s.q50);
        neg_frac += ss.iter().flatten().filter(|&&v| v < 0.0).count() as f64;
    }
    neg_frac /= (reps * n_chain * n_draw) as f64;
    assert!(
        neg_frac > 0.2,
        "the test must have many negative signs ({neg_frac})"
    );
    let rf = reps as f64;
    let zbar = zs.iter().sum::<f64>() / rf;
    let zsd = (zs.iter().map(|z| (z - zbar) * (z - zbar)).sum::<f64>() / (rf - 1.0)).sqrt();
    // mean of z: SE 1/√R; sd of z: SE ≈ 1/√(2R). Four standard errors each.
    assert!(zbar.abs() <= 4.0 / rf.sqrt(), "mean z = {zbar}");
    assert!((zsd - 1.0).abs() <= 4.0 / (2.0 * rf).sqrt(), "sd z = {zsd}");
    let mbar = medians.iter().sum::<f64>() / rf;
    let msd = (medians.iter().map(|m| (m - mbar) * (m - mbar)).sum::<f64>() / (rf - 1.0)).sqrt();
    assert!(
        (mbar - true_median).abs() <= 4.0 * msd / rf.sqrt(),
        "median {mbar} vs {true_median} (sd {msd})"
    );
    eprintln!(
        "signed: mean z {zbar:.3}, sd z {zsd:.3}, median bias {:.4}",
        mbar - true_median
    );
}
