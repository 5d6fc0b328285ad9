//! The model registry builds every model from a simulated table, rejects bad data and settings
//! with errors naming the row, column or key; the linear and Gaussian closed-form posteriors
//! agree with direct computations; simulators are reproducible and recover their parameters.

// Index loops mirror the equations they implement.
#![allow(clippy::needless_range_loop)]

use tallmc_core::data::{Design, DesignSpec, Table};
use tallmc_core::error::Error;
use tallmc_core::model::linear::conjugate_posterior;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, FullData, LogDensity};
use tallmc_core::registry::models::gaussian_from_table;
use tallmc_core::registry::{build_model, models, ParamKind};
use tallmc_core::settings::Settings;
use tallmc_core::simulate::{simulate, true_parameters};

fn spec(response: &str) -> DesignSpec {
    DesignSpec {
        response: response.into(),
        features: None,
        intercept: true,
        standardize: false,
    }
}

fn settings(pairs: &[&str]) -> Settings {
    let mut s = Settings::new();
    for p in pairs {
        s.insert_pair(p).unwrap();
    }
    s
}

fn table(names: &[&str], cols: Vec<Vec<f64>>) -> Table {
    Table {
        names: names.iter().map(|s| s.to_string()).collect(),
        columns: cols,
    }
}

/// Solve A x = b by Gaussian elimination with partial pivoting (independent of the core's
/// Cholesky). A is row-major d × d.
fn gauss_solve(a: &[f64], b: &[f64], d: usize) -> Vec<f64> {
    let mut m: Vec<Vec<f64>> = (0..d)
        .map(|i| {
            let mut r = a[i * d..(i + 1) * d].to_vec();
            r.push(b[i]);
            r
        })
        .collect();
    for c in 0..d {
        let p = (c..d)
            .max_by(|&x, &y| m[x][c].abs().partial_cmp(&m[y][c].abs()).unwrap())
            .unwrap();
        m.swap(c, p);
        for r in 0..d {
            if r != c {
                let f = m[r][c] / m[c][c];
                for k in c..=d {
                    m[r][k] -= f * m[c][k];
                }
            }
        }
    }
    (0..d).map(|i| m[i][d] / m[i][i]).collect()
}

fn gauss_inverse(a: &[f64], d: usize) -> Vec<f64> {
    let mut inv = vec![0.0; d * d];
    for j in 0..d {
        let mut e = vec![0.0; d];
        e[j] = 1.0;
        let col = gauss_solve(a, &e, d);
        for i in 0..d {
            inv[i * d + j] = col[i];
        }
    }
    inv
}

fn max_rel(a: &[f64], b: &[f64]) -> f64 {
    let s = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
        / s
}

#[test]
fn registry_lists_every_model_with_unique_keys() {
    let names: Vec<&str> = models().iter().map(|m| m.name).collect();
    assert_eq!(
        names,
        [
            "logistic", "linear", "robust", "poisson", "gmm", "gaussian", "pmf", "lgssm", "sv",
            "garch"
        ]
    );
    for m in models() {
        for (i, p) in m.params.iter().enumerate() {
            assert!(
                m.params[..i].iter().all(|q| q.key != p.key),
                "{}: duplicate key {}",
                m.name,
                p.key
            );
            if let (
                ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. },
                Some(r),
            ) = (p.kind, p.kind.real_range())
            {
                assert!(
                    default.is_nan() || r.contains(default),
                    "{}: {}",
                    m.name,
                    p.key
                );
            }
        }
    }
}

#[test]
fn builds_every_model_from_a_simulated_table() {
    let cases: &[(&str, &[&str], usize, &[&str])] = &[
        ("logistic", &[], 4, &["intercept", "x1", "x2", "x3"]),
        ("poisson", &["prior_scale=3"], 3, &["intercept", "x1", "x2"]),
        ("linear", &["noise_sd=2"], 3, &["intercept", "x1", "x2"]),
        (
            "linear",
            &["noise=gamma", "noise_prior_shape=2"],
            3,
            &["intercept", "x1", "x2", "log_tau"],
        ),
        ("robust", &["nu=3", "prior=flat"], 2, &["intercept", "x1"]),
        ("gmm", &["temperature=2"], 2, &["theta1", "theta2"]),
        ("gaussian", &["rho=0.9"], 3, &["x1", "x2", "x3"]),
    ];
    for (model, pairs, d, names) in cases {
        let s = settings(pairs);
        let t = simulate(model, 250, *d, 5, &s).unwrap();
        assert_eq!(t.nrows(), 250);
        let m = build_model(model, &t, &spec("y"), &s).unwrap_or_else(|e| panic!("{model}: {e}"));
        s.check_all_used()
            .unwrap_or_else(|e| panic!("{model}: {e}"));
        assert_eq!(m.n(), 250, "{model}");
        assert_eq!(m.dim(), names.len(), "{model}");
        assert_eq!(m.param_names(), *names, "{model}");
        let x0 = m.initial_point();
        assert_eq!(x0.len(), m.dim());
        let fd = FullData::new(&*m);
        let mut g = vec![0.0; m.dim()];
        assert!(fd.log_density_grad(&x0, &mut g).is_finite(), "{model}");
        assert!(g.iter().all(|v| v.is_finite()), "{model}");
        assert_eq!(
            m.as_glm().is_some(),
            !matches!(*model, "gmm" | "gaussian") && !pairs.contains(&"noise=gamma"),
            "{model}"
        );
    }
}

#[test]
fn no_intercept_and_feature_selection() {
    let s = Settings::new();
    let t = simulate("logistic", 50, 4, 1, &s).unwrap();
    let mut sp = spec("y");
    sp.intercept = false;
    sp.features = Some(vec!["x3".into(), "x1".into()]);
    let m = build_model("logistic", &t, &sp, &s).unwrap();
    assert_eq!(m.param_names(), ["x3", "x1"]);
}

#[test]
fn bad_responses_are_named() {
    let s = Settings::new();
    let t = table(
        &["x1", "y"],
        vec![vec![0.1, 0.2, 0.3, 0.4], vec![0.0, 1.0, 2.0, 1.0]],
    );
    match build_model("logistic", &t, &spec("y"), &s) {
        Err(Error::InvalidData {
            row: Some(3),
            column: Some(c),
            msg,
        }) => {
            assert_eq!(c, "y");
            assert!(msg.contains("0 or 1"), "{msg}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
    let t = table(&["y"], vec![vec![0.0, 3.0, 1.5]]);
    assert!(matches!(
        build_model("poisson", &t, &spec("y"), &s),
        Err(Error::InvalidData { row: Some(3), column: Some(c), .. }) if c == "y"
    ));
    let t = table(&["y"], vec![vec![0.0, -1.0, 1.0]]);
    assert!(matches!(
        build_model("poisson", &t, &spec("y"), &s),
        Err(Error::InvalidData { row: Some(2), column: Some(c), .. }) if c == "y"
    ));
    // missing response column
    let t = table(&["a", "b"], vec![vec![0.0, 1.0], vec![1.0, 0.0]]);
    for model in ["logistic", "linear", "robust", "poisson"] {
        let e = build_model(model, &t, &spec("target"), &s).err().unwrap();
        assert!(
            matches!(&e, Error::InvalidData { column: Some(c), .. } if c == "target"),
            "{model}: {e}"
        );
        assert!(e.to_string().contains("target"));
    }
    assert!(matches!(
        build_model("gmm", &t, &spec("target"), &s),
        Err(Error::InvalidData { column: Some(c), .. }) if c == "target"
    ));
    // non-finite values (a table built without Table::new's checks)
    let t = table(
        &["y", "x1"],
        vec![vec![1.0, 0.0, 1.0], vec![0.5, f64::NAN, 0.1]],
    );
    for model in ["logistic", "linear", "gaussian"] {
        assert!(matches!(
            build_model(model, &t, &spec("y"), &s),
            Err(Error::InvalidData { row: Some(2), column: Some(c), .. }) if c == "x1"
        ));
    }
    // zero rows
    let t = table(&["y", "x1"], vec![vec![], vec![]]);
    for model in ["logistic", "linear", "robust", "poisson", "gmm", "gaussian"] {
        assert!(
            matches!(
                build_model(model, &t, &spec("y"), &s),
                Err(Error::InvalidData { .. })
            ),
            "{model}"
        );
    }
    // no parameters at all
    let t = table(&["y"], vec![vec![1.0, 0.0]]);
    let mut sp = spec("y");
    sp.intercept = false;
    assert!(build_model("logistic", &t, &sp, &s).is_err());
}

#[test]
fn bad_settings_and_names() {
    let t = simulate("linear", 20, 2, 1, &Settings::new()).unwrap();
    let key_of = |model: &str, pairs: &[&str]| -> String {
        match build_model(model, &t, &spec("y"), &settings(pairs)) {
            Err(Error::InvalidSetting { key, .. }) => key,
            other => panic!("{model} {pairs:?}: {:?}", other.map(|_| ())),
        }
    };
    assert_eq!(key_of("linear", &["prior_scale=-1"]), "prior_scale");
    assert_eq!(key_of("linear", &["prior_scale=abc"]), "prior_scale");
    assert_eq!(key_of("linear", &["prior=cauchy"]), "prior");
    assert_eq!(
        key_of("linear", &["prior=flat", "prior_scale=3"]),
        "prior_scale"
    );
    assert_eq!(key_of("linear", &["noise_sd=0"]), "noise_sd");
    assert_eq!(key_of("linear", &["noise=gamma", "noise_sd=1"]), "noise_sd");
    assert_eq!(
        key_of("linear", &["noise_prior_rate=1"]),
        "noise_prior_rate"
    );
    assert_eq!(
        key_of("linear", &["noise=gamma", "noise_prior_shape=0"]),
        "noise_prior_shape"
    );
    assert_eq!(key_of("robust", &["nu=-2"]), "nu");
    assert_eq!(key_of("gmm", &["temperature=0.5"]), "temperature");
    assert_eq!(key_of("gaussian", &["rho=1"]), "rho");
    // equicorrelation needs ρ > −1/(d−1): −0.4 is fine for d = 2 columns, not for d = 3
    let g3 = simulate("gaussian", 20, 3, 1, &Settings::new()).unwrap();
    assert!(build_model("gaussian", &g3, &spec("y"), &settings(&["rho=-0.6"])).is_err());
    let g2 = simulate("gaussian", 20, 2, 1, &Settings::new()).unwrap();
    build_model("gaussian", &g2, &spec("y"), &settings(&["rho=-0.6"])).unwrap();
    assert!(simulate("gaussian", 20, 3, 1, &settings(&["rho=-0.6"])).is_err());
    build_model("gaussian", &g3, &spec("y"), &settings(&["rho=-0.45"])).unwrap();
    // an unknown key is left for the caller and caught by check_all_used
    let s = settings(&["prior_scal=3"]);
    build_model(
        "logistic",
        &simulate("logistic", 20, 2, 1, &s).unwrap(),
        &spec("y"),
        &s,
    )
    .unwrap();
    assert!(
        matches!(s.check_all_used(), Err(Error::UnknownSetting { key }) if key == "prior_scal")
    );
    // unknown models
    assert!(matches!(
        build_model("lasso", &t, &spec("y"), &Settings::new()),
        Err(Error::Unknown { what: "model", name }) if name == "lasso"
    ));
    assert!(simulate("lasso", 10, 2, 1, &Settings::new()).is_err());
    assert!(simulate("logistic", 0, 2, 1, &Settings::new()).is_err());
    assert!(simulate("logistic", 10, 0, 1, &Settings::new()).is_err());
}

/// The closed form against the normal equations solved independently, and against the model's
/// own gradient (zero at the mean) and Hessian (−covariance⁻¹).
#[test]
fn linear_conjugate_posterior_matches_normal_equations() {
    for (prior, sd, pairs) in [
        (Prior::Normal { scale: 10.0 }, 1.0, vec!["noise_sd=1"]),
        (
            Prior::Normal { scale: 0.3 },
            2.0,
            vec!["noise_sd=2", "prior_scale=0.3"],
        ),
        (Prior::Flat, 0.5, vec!["noise_sd=0.5", "prior=flat"]),
    ] {
        // The model's own coordinates θ (the whitened path is tested in tests/reparam.rs).
        let s = settings(&[pairs.as_slice(), &["reparam=none"]].concat());
        let t = simulate("linear", 1000, 5, 3, &s).unwrap();
        let design = Design::from_table(&t, &spec("y")).unwrap();
        let (mean, cov) = conjugate_posterior(&design, sd, &prior).unwrap();
        let d = design.d;
        // (XᵀX + (σ²/s²) I) m = Xᵀy,  V = σ² (XᵀX + (σ²/s²) I)⁻¹
        let ridge = match prior {
            Prior::Normal { scale } => sd * sd / (scale * scale),
            Prior::Flat => 0.0,
        };
        let mut a = vec![0.0; d * d];
        let mut b = vec![0.0; d];
        for i in 0..design.n {
            let r = design.row(i);
            for j in 0..d {
                b[j] += r[j] * design.y[i];
                for k in 0..d {
                    a[j * d + k] += r[j] * r[k];
                }
            }
        }
        for j in 0..d {
            a[j * d + j] += ridge;
        }
        let m2 = gauss_solve(&a, &b, d);
        let v2: Vec<f64> = gauss_inverse(&a, d).iter().map(|v| v * sd * sd).collect();
        assert!(max_rel(&mean, &m2) < 1e-10, "{prior:?}: {mean:?} vs {m2:?}");
        assert!(max_rel(&cov, &v2) < 1e-10, "{prior:?}");
        // the model built by the registry has zero gradient at the mean, Hessian −V⁻¹
        let m = build_model("linear", &t, &spec("y"), &s).unwrap();
        let mut g = vec![0.0; d];
        m.log_prior_grad(&mean, &mut g);
        m.log_lik_grad_all(&mean, &mut g);
        let gs = g.iter().fold(0.0f64, |x, v| x.max(v.abs()));
        assert!(gs < 1e-8, "{prior:?}: gradient at mean {g:?}");
        let mut h = vec![0.0; d * d];
        m.log_prior_hess(&mean, &mut h);
        for i in 0..m.n() {
            m.log_lik_hess(&mean, i, &mut h);
        }
        let vinv = gauss_inverse(&cov, d);
        let neg: Vec<f64> = h.iter().map(|v| -v).collect();
        assert!(max_rel(&neg, &vinv) < 1e-8, "{prior:?}: Hessian");
    }
}

#[test]
fn gaussian_posterior_is_stationary_point() {
    for pairs in [
        vec!["rho=0.9"],
        vec!["correlation=ar1", "rho=0.7", "prior=flat", "sd=3"],
    ] {
        let s = settings(&pairs);
        let t = simulate("gaussian", 400, 4, 9, &s).unwrap();
        let m = build_model("gaussian", &t, &spec("y"), &s).unwrap();
        // the concrete type has the closed form; check it against Σ written out here
        let gm = gaussian_from_table(&t, &spec("y"), &s).unwrap();
        let cov = m_cov(&pairs);
        assert!(max_rel(&gm.cov, &cov) < 1e-14);
        let (mean, post) = gm.posterior().unwrap();
        let mut g = vec![0.0; 4];
        m.log_prior_grad(&mean, &mut g);
        m.log_lik_grad_all(&mean, &mut g);
        assert!(g.iter().all(|v| v.abs() < 1e-8), "{g:?}");
        let mut h = vec![0.0; 16];
        m.log_prior_hess(&mean, &mut h);
        for i in 0..m.n() {
            m.log_lik_hess(&mean, i, &mut h);
        }
        let pinv = gauss_inverse(&post, 4);
        let neg: Vec<f64> = h.iter().map(|v| -v).collect();
        assert!(max_rel(&neg, &pinv) < 1e-8);
        // flat prior: the mean is the column means
        if pairs.contains(&"prior=flat") {
            for (j, c) in t.columns.iter().enumerate() {
                let cm = c.iter().sum::<f64>() / c.len() as f64;
                assert!((cm - mean[j]).abs() < 1e-10);
            }
        }
    }
}

fn m_cov(pairs: &[&str]) -> Vec<f64> {
    // Σ written out independently of the core: sd² ρ^{|j−k|} (ar1) or sd² ρ (equi)
    let ar1 = pairs.contains(&"correlation=ar1");
    let get = |k: &str, def: f64| {
        pairs
            .iter()
            .find_map(|p| p.strip_prefix(&format!("{k}=")).map(|v| v.parse().unwrap()))
            .unwrap_or(def)
    };
    let (rho, sd): (f64, f64) = (get("rho", 0.5), get("sd", 1.0));
    let mut c = vec![0.0; 16];
    for j in 0..4 {
        for k in 0..4 {
            let r = if j == k {
                1.0
            } else if ar1 {
                rho.powi((j as i32 - k as i32).abs())
            } else {
                rho
            };
            c[j * 4 + k] = sd * sd * r;
        }
    }
    c
}

#[test]
fn simulations_are_reproducible() {
    for model in ["logistic", "linear", "robust", "poisson", "gmm", "gaussian"] {
        let s = Settings::new();
        let a = simulate(model, 100, 3, 42, &s).unwrap();
        let b = simulate(model, 100, 3, 42, &s).unwrap();
        let c = simulate(model, 100, 3, 43, &s).unwrap();
        assert_eq!(a, b, "{model}");
        assert_ne!(a, c, "{model}");
        // bit-identical, not just equal
        for (x, y) in a.columns.iter().flatten().zip(b.columns.iter().flatten()) {
            assert_eq!(x.to_bits(), y.to_bits());
        }
        assert_eq!(
            true_parameters(model, 3, 42).unwrap(),
            true_parameters(model, 3, 42).unwrap()
        );
        // a shorter table is a prefix of a longer one (θ first, then rows)
        let short = simulate(model, 40, 3, 42, &s).unwrap();
        for (cs, ca) in short.columns.iter().zip(&a.columns) {
            assert_eq!(cs[..], ca[..40], "{model}");
        }
    }
    let t = simulate("logistic", 10, 4, 1, &Settings::new()).unwrap();
    assert_eq!(t.names, ["y", "x1", "x2", "x3"]);
    assert!(t.columns[0].iter().all(|&y| y == 0.0 || y == 1.0));
    let t = simulate("gmm", 10, 7, 1, &Settings::new()).unwrap();
    assert_eq!(t.names, ["x"]);
    let t = simulate("gaussian", 10, 3, 1, &Settings::new()).unwrap();
    assert_eq!(t.names, ["x1", "x2", "x3"]);
}

/// Newton's method on the model's own gradient and Hessian (the posterior mode) and the inverse
/// negative Hessian there.
fn mode_and_cov(m: &dyn DataModel, start: Vec<f64>) -> (Vec<f64>, Vec<f64>) {
    let d = m.dim();
    let mut th = start;
    let mut h = vec![0.0; d * d];
    for _ in 0..50 {
        let mut g = vec![0.0; d];
        m.log_prior_grad(&th, &mut g);
        m.log_lik_grad_all(&th, &mut g);
        h.iter_mut().for_each(|v| *v = 0.0);
        m.log_prior_hess(&th, &mut h);
        for i in 0..m.n() {
            m.log_lik_hess(&th, i, &mut h);
        }
        let neg: Vec<f64> = h.iter().map(|v| -v).collect();
        let step = gauss_solve(&neg, &g, d);
        for k in 0..d {
            th[k] += step[k];
        }
        if step.iter().all(|s| s.abs() < 1e-12) {
            break;
        }
    }
    let neg: Vec<f64> = h.iter().map(|v| -v).collect();
    (th, gauss_inverse(&neg, d))
}

/// The simulated data identify the parameters they were drawn with: each true coefficient
/// lies within 4 posterior sd of the posterior mode (Laplace approximation), n = 5000, d = 5.
/// Each z-score is N(0, 1) under a correct simulator, so |z| > 4 has probability 6e-5.
#[test]
fn simulated_data_recover_true_parameters() {
    for (model, pairs) in [
        ("logistic", vec![]),
        ("linear", vec!["noise_sd=1.5"]),
        ("robust", vec!["nu=4"]),
        ("poisson", vec![]),
        ("linear", vec!["noise=gamma"]),
    ] {
        // The model's own coordinates θ (the whitened path is tested in tests/reparam.rs).
        let s = settings(&[pairs.as_slice(), &["reparam=none"]].concat());
        let t = simulate(model, 5000, 5, 7, &s).unwrap();
        let m = build_model(model, &t, &spec("y"), &s).unwrap();
        // Student-t and (β, log τ) are not log-concave: start Newton at the least-squares fit
        // (and log τ at minus the log of the mean squared residual)
        let start = if model == "robust" || m.dim() == 6 {
            let lin = build_model("linear", &t, &spec("y"), &settings(&["reparam=none"])).unwrap();
            let mut b = mode_and_cov(&*lin, lin.initial_point()).0;
            if m.dim() == 6 {
                let msr =
                    (0..lin.n()).map(|i| -2.0 * lin.log_lik(&b, i)).sum::<f64>() / lin.n() as f64;
                b.push(-msr.ln());
            }
            b
        } else {
            m.initial_point()
        };
        let (mode, cov) = mode_and_cov(&*m, start);
        let mut truth = true_parameters(model, 5, 7).unwrap();
        if m.dim() == 6 {
            truth.push(-2.0 * 1.0f64.ln()); // log τ for noise_sd = 1 (the default)
        }
        for k in 0..m.dim() {
            let z = (mode[k] - truth[k]) / cov[k * m.dim() + k].sqrt();
            assert!(z.abs() < 4.0, "{model} {pairs:?}: param {k} z = {z}");
        }
    }
    // gmm: x̄ estimates θ₁ + θ₂/2 = 0.5, sd √(2 + ¼)/√n
    let t = simulate("gmm", 20000, 2, 7, &Settings::new()).unwrap();
    let x = &t.columns[0];
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    let z = (mean - 0.5) / (2.25f64 / x.len() as f64).sqrt();
    assert!(z.abs() < 4.0, "gmm z = {z}");
    // gaussian: column means estimate μ with sd 1/√n
    let mu = true_parameters("gaussian", 3, 7).unwrap();
    let t = simulate("gaussian", 5000, 3, 7, &Settings::new()).unwrap();
    for (j, c) in t.columns.iter().enumerate() {
        let m = c.iter().sum::<f64>() / c.len() as f64;
        let z = (m - mu[j]) * (c.len() as f64).sqrt();
        assert!(z.abs() < 4.0, "gaussian col {j} z = {z}");
    }
}

#[test]
fn design_rejects_clashing_columns() {
    let s = Settings::new();
    let t = table(
        &["y", "x1", "intercept"],
        vec![vec![0.0, 1.0], vec![0.5, 0.1], vec![1.0, 1.0]],
    );
    let named = |sp: &DesignSpec| match build_model("linear", &t, sp, &s) {
        Err(Error::InvalidData {
            column: Some(c), ..
        }) => c,
        other => panic!("{:?}", other.map(|_| ())),
    };
    assert_eq!(named(&spec("y")), "intercept");
    let mut sp = spec("y");
    sp.intercept = false;
    assert!(build_model("linear", &t, &sp, &s).is_ok());
    sp.features = Some(vec!["x1".into(), "y".into()]);
    assert_eq!(named(&sp), "y");
    sp.features = Some(vec!["x1".into(), "x1".into()]);
    assert_eq!(named(&sp), "x1");
    sp.features = Some(vec!["x9".into()]);
    assert_eq!(named(&sp), "x9");
    // duplicate header names
    let t2 = table(
        &["y", "x1", "x1"],
        vec![vec![0.0, 1.0], vec![0.5, 0.1], vec![1.0, 1.0]],
    );
    assert!(matches!(
        build_model("logistic", &t2, &spec("y"), &s),
        Err(Error::InvalidData { column: Some(c), .. }) if c == "x1"
    ));
}
