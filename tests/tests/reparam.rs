//! The exact affine reparametrisation (`reparam=auto`, core/src/model/reparam.rs): a whitened
//! GLM is the same posterior in other coordinates, its map round-trips, its KSD scores are the
//! user-scale scores, and samplers on raw, badly scaled data report θ on the user's scale with
//! the right posterior (a conjugate check and an agreement check against `reparam=none`).
//! Run: `cargo test -p tallmc-tests --release --test all reparam:: -- --nocapture`

use std::sync::Arc;
use tallmc_core::data::{Design, DesignSpec, Table};
use tallmc_core::diag::ksd;
use tallmc_core::dist;
use tallmc_core::model::linear::LinearUnknownNoise;
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm, Logistic};
use tallmc_core::registry::build_model;
use tallmc_core::rng::{chain_rng, uniform};
use tallmc_core::settings::Settings;
use tallmc_tests::*;

/// Raw-scale features as users bring them: age in years, income in thousands (correlated with
/// age), a 0/1 dummy, and two education columns with correlation ≈ 0.95.
fn raw_table(n: usize, seed: u64, linear: bool) -> Table {
    let mut rng = chain_rng(seed, 0);
    let names = ["y", "age", "income", "female", "educ", "educ2"];
    let mut cols = vec![Vec::with_capacity(n); names.len()];
    for _ in 0..n {
        let age = 18.0 + 62.0 * uniform(&mut rng);
        let income = 30.0 + 0.8 * age + 15.0 * dist::std_normal(&mut rng);
        let female = if uniform(&mut rng) < 0.5 { 1.0 } else { 0.0 };
        let educ = 12.0 + 3.0 * dist::std_normal(&mut rng);
        let educ2 = educ + dist::std_normal(&mut rng);
        let eta = -6.0 + 0.05 * age + 0.02 * income - 0.3 * female + 0.1 * educ + 0.05 * educ2;
        let y = if linear {
            eta + dist::std_normal(&mut rng)
        } else if uniform(&mut rng) < 1.0 / (1.0 + (-eta).exp()) {
            1.0
        } else {
            0.0
        };
        for (c, v) in cols.iter_mut().zip([y, age, income, female, educ, educ2]) {
            c.push(v);
        }
    }
    Table::new(names.iter().map(|s| s.to_string()).collect(), cols).unwrap()
}

fn spec() -> DesignSpec {
    DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    }
}

fn design(table: &Table) -> Design {
    Design::from_table(table, &spec()).unwrap()
}

fn log_post(m: &dyn DataModel, x: &[f64]) -> f64 {
    m.log_prior(x) + m.log_lik_all(x)
}

fn grad_post(m: &dyn DataModel, x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    m.log_prior_grad(x, &mut g);
    m.log_lik_grad_all(x, &mut g);
    g
}

fn rel(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den: f64 = b.iter().map(|y| y * y).sum::<f64>().sqrt().max(1e-300);
    num / den
}

/// `w` (whitened) and `raw` are the same posterior at five random z (seeded by `seed`): the
/// map round-trips, equal log density at θ = θ̂ + C⁻ᵀz (the Jacobian is constant: equal, not
/// only up to a constant), ∇_z = C⁻¹∇_θ, the whitened gradient against central differences of
/// the whitened density, and the Hessian C⁻¹H_θC⁻ᵀ.
fn assert_same_posterior(raw: &dyn DataModel, w: &dyn DataModel, seed: u64) {
    same_posterior(raw, w, seed, true);
}

/// [`assert_same_posterior`], with the central differences only when `fd` (on 10⁵ rows and
/// more the log density's rounding, ≈ 10⁻¹¹ of its 10⁵-sized value, swamps a difference
/// quotient; the equalities with the raw model hold there all the same).
fn same_posterior(raw: &dyn DataModel, w: &dyn DataModel, seed: u64, fd: bool) {
    let map = w.user_map().unwrap();
    let d = w.dim();
    let mut rng = chain_rng(seed, 0);
    let mut tmp = vec![0.0; d];
    for _ in 0..5 {
        let z: Vec<f64> = (0..d).map(|_| 2.0 * dist::std_normal(&mut rng)).collect();
        let mut theta = vec![0.0; d];
        map.to_user(&z, &mut theta);
        let mut z2 = vec![0.0; d];
        map.to_sampler(&theta, &mut z2, &mut tmp);
        assert!(rel(&z2, &z) < 1e-10, "round trip {z2:?} vs {z:?}");
        let (lz, lt) = (log_post(w, &z), log_post(raw, &theta));
        assert!((lz - lt).abs() <= 1e-9 * lt.abs().max(1.0), "{lz} vs {lt}");
        let gz = grad_post(w, &z);
        let mut gt = grad_post(raw, &theta);
        map.grad_to_sampler(&mut gt);
        assert!(rel(&gz, &gt) < 1e-8, "gradient {gz:?} vs {gt:?}");
        for j in (0..d).filter(|_| fd) {
            let h = 1e-5;
            let mut zp = z.clone();
            let mut zm = z.clone();
            zp[j] += h;
            zm[j] -= h;
            let fd = (log_post(w, &zp) - log_post(w, &zm)) / (2.0 * h);
            assert!(
                (fd - gz[j]).abs() <= 1e-5 * gz[j].abs().max(1.0),
                "∂/∂z{j}: {fd} vs {}",
                gz[j]
            );
        }
        let mut hz = vec![0.0; d * d];
        let mut ht = vec![0.0; d * d];
        w.log_prior_hess(&z, &mut hz);
        raw.log_prior_hess(&theta, &mut ht);
        for i in 0..w.n() {
            w.log_lik_hess(&z, i, &mut hz);
            raw.log_lik_hess(&theta, i, &mut ht);
        }
        let mut col = vec![0.0; d];
        map.hessian_to_sampler(&mut ht, &mut col);
        assert!(rel(&hz, &ht) < 1e-8, "Hessian");
    }
}

/// The whitened posterior's gradient and Hessian (row-major) at z = 0.
fn at_zero(w: &dyn DataModel) -> (Vec<f64>, Vec<f64>) {
    let d = w.dim();
    let z0 = vec![0.0; d];
    let g0 = grad_post(w, &z0);
    let mut h0 = vec![0.0; d * d];
    w.log_prior_hess(&z0, &mut h0);
    for i in 0..w.n() {
        w.log_lik_hess(&z0, i, &mut h0);
    }
    (g0, h0)
}

#[test]
fn whitened_glm_is_the_same_posterior() {
    let table = raw_table(5000, 1, false);
    let raw = Glm::new(design(&table), Logistic, Prior::Normal { scale: 10.0 });
    let w = Glm::new(design(&table), Logistic, Prior::Normal { scale: 10.0 }).whiten();
    let info = w.reparam_info().unwrap();
    println!("reparam: {} — {}", info.kind, info.note);
    assert_eq!(info.kind, "whiten");
    assert!(info.cost.grad_evals > 0);
    assert_same_posterior(&raw, &w, 2);
    // At z = 0 (the mode) the whitened posterior's gradient is ≈ 0 and its negative Hessian I.
    let d = w.dim();
    let (g0, h0) = at_zero(&w);
    let gmax = g0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let hmax = (0..d * d)
        .map(|k| (h0[k] + if k % (d + 1) == 0 { 1.0 } else { 0.0 }).abs())
        .fold(0.0f64, f64::max);
    println!("at z = 0: max |∇| {gmax:.2e}, max |−∇² − I| {hmax:.2e}");
    assert!(gmax < 1e-6 && hmax < 1e-6);
}

/// `linear` with `noise=gamma` whitened (block-diagonal C: the (β, log τ) cross terms dropped)
/// is the same posterior: equal log density at θ = θ̂ + C⁻ᵀz, ∇_z = C⁻¹∇_θ, the whitened
/// gradient against central differences, the Hessian C⁻¹H_θC⁻ᵀ; at z = 0 the gradient vanishes
/// and the diagonal blocks of −∇² are the identity.
#[test]
fn whitened_linear_unknown_noise_is_the_same_posterior() {
    let table = raw_table(3000, 3, true);
    let prior = Prior::Normal { scale: 10.0 };
    let raw = LinearUnknownNoise::new(design(&table), prior, 2.0, 1.0).unwrap();
    let w = LinearUnknownNoise::new(design(&table), prior, 2.0, 1.0)
        .unwrap()
        .whiten();
    let info = w.reparam_info().unwrap();
    println!("reparam: {} — {}", info.kind, info.note);
    assert_eq!(info.kind, "whiten");
    let d = w.dim();
    assert_eq!(w.initial_point(), vec![0.0; d]);
    assert_same_posterior(&raw, &w, 4);
    let (g0, h0) = at_zero(&w);
    let gmax = g0.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let l = d - 1;
    let hmax = (0..d * d)
        .filter(|k| (k / d == l) == (k % d == l))
        .map(|k| (h0[k] + if k % (d + 1) == 0 { 1.0 } else { 0.0 }).abs())
        .fold(0.0f64, f64::max);
    let cross = (0..l).map(|j| h0[j * d + l].abs()).fold(0.0f64, f64::max);
    println!("at z = 0: max |∇| {gmax:.2e}, max |−∇² − I| (blocks) {hmax:.2e}, cross {cross:.2e}");
    assert!(gmax < 1e-6 && hmax < 1e-6);
}

/// On raw linear data with unknown noise the whitened `mala` (defaults) agrees with unwhitened
/// NUTS with a dense metric within 4 combined MCSE (log τ included).
#[test]
fn auto_and_none_agree_on_raw_linear_unknown_noise() {
    let table = raw_table(2000, 8, true);
    let (ma, _, sa) = moments(&table, "linear", "mala", &["noise=gamma"], 2000, 4000, 2);
    let (mn, _, sn) = moments(
        &table,
        "linear",
        "nuts",
        &["noise=gamma", "reparam=none", "metric=dense"],
        1000,
        2000,
        2,
    );
    for j in 0..ma.len() {
        let z = (ma[j] - mn[j]) / (sa[j] * sa[j] + sn[j] * sn[j]).sqrt();
        println!(
            "θ{j}: auto {:.5} ± {:.5}, none {:.5} ± {:.5} ({z:+.2})",
            ma[j], sa[j], mn[j], sn[j]
        );
        assert!(z.abs() <= 4.0, "θ{j}: {z}");
    }
}

/// KSD scores of a whitened model are the scores of log π(θ) at user-scale points.
#[test]
fn ksd_scores_are_user_scale() {
    let table = raw_table(3000, 3, false);
    let s = Settings::new();
    let w = build_model("logistic", &table, &spec(), &s).unwrap();
    let mut none = Settings::new();
    none.insert("reparam", "none");
    let raw = build_model("logistic", &table, &spec(), &none).unwrap();
    assert!(w.user_map().is_some() && raw.user_map().is_none());
    assert_eq!(raw.reparam_info().unwrap().kind, "none");
    let map = w.user_map().unwrap();
    let d = w.dim();
    let mut rng = chain_rng(4, 0);
    let mut pts = Vec::new();
    for _ in 0..4 {
        let z: Vec<f64> = (0..d).map(|_| dist::std_normal(&mut rng)).collect();
        let mut t = vec![0.0; d];
        map.to_user(&z, &mut t);
        pts.extend(t);
    }
    let a = ksd::exact_scores(w.as_ref(), &pts).unwrap();
    let b = ksd::exact_scores(raw.as_ref(), &pts).unwrap();
    assert!(rel(&a, &b) < 1e-8, "{a:?} vs {b:?}");
}

/// Posterior means and sds of a run through the registry, as `tallmc run` builds it.
fn moments(
    table: &Table,
    model: &str,
    sampler: &str,
    kv: &[&str],
    warmup: usize,
    draws: usize,
    chains: u64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let m: Arc<dyn DataModel> = build_model(model, table, &spec(), &s).unwrap();
    let d = m.dim();
    let mut cols: Vec<Vec<Vec<f64>>> = vec![Vec::new(); d];
    for c in 0..chains {
        // model settings went to build_model; the sampler gets the rest
        let skv: Vec<&str> = kv
            .iter()
            .copied()
            .filter(|p| !p.starts_with("reparam=") && !p.starts_with("noise="))
            .collect();
        let r = run_sampler(sampler, m.clone(), &skv, 100 + c, warmup, draws);
        for (j, col) in cols.iter_mut().enumerate() {
            col.push(r.col(j));
        }
    }
    let mut mean_v = Vec::new();
    let mut sd_v = Vec::new();
    let mut mcse_v = Vec::new();
    for col in &cols {
        let refs: Vec<&[f64]> = col.iter().map(|c| c.as_slice()).collect();
        let all: Vec<f64> = col.concat();
        mean_v.push(mean(&all));
        sd_v.push(sd(&all));
        mcse_v.push(tallmc_core::diag::mcse_mean(&refs));
    }
    (mean_v, sd_v, mcse_v)
}

/// Conjugate check on raw-scale data: linear regression with known noise, NUTS with defaults
/// (whitened), against the closed-form posterior; within 4 MCSE, sds within 4 standard errors.
#[test]
fn whitened_nuts_matches_the_conjugate_posterior() {
    let table = raw_table(2000, 5, true);
    let (mean_true, cov_true) = linear_posterior(&design(&table), 1.0, 10.0);
    let dd = mean_true.len();
    let (m, s, se) = moments(&table, "linear", "nuts", &[], 500, 2000, 2);
    for j in 0..m.len() {
        let z = (m[j] - mean_true[j]) / se[j];
        let sd_true = cov_true[j * dd + j].sqrt();
        println!(
            "θ{j}: mean {:.5} vs {:.5} ({z:+.2} MCSE), sd {:.5} vs {sd_true:.5}",
            m[j], mean_true[j], s[j]
        );
        assert!(z.abs() <= 4.0, "θ{j}: {z} MCSE");
        // se of an sd from ≈ 4000 nearly independent draws: sd/√(2·4000) ≈ 1.1 %
        assert!((s[j] / sd_true - 1.0).abs() <= 0.05, "θ{j}: sd {}", s[j]);
    }
}

/// On raw logistic data the whitened `mala` chains (defaults) agree with unwhitened NUTS with a
/// dense metric (which converges here, slowly), within 4 combined MCSE; the draws are on the
/// same (user) scale. (Unwhitened MALA with 2 000 warm-up iterations does not converge on this
/// table: intercept −1.64 ± 0.71 against −5.82.)
#[test]
fn auto_and_none_agree_on_raw_logistic_data() {
    let table = raw_table(2000, 7, false);
    let (ma, _, sa) = moments(&table, "logistic", "mala", &[], 2000, 4000, 2);
    let (mn, _, sn) = moments(
        &table,
        "logistic",
        "nuts",
        &["reparam=none", "metric=dense"],
        1000,
        2000,
        2,
    );
    for j in 0..ma.len() {
        let z = (ma[j] - mn[j]) / (sa[j] * sa[j] + sn[j] * sn[j]).sqrt();
        println!(
            "θ{j}: auto {:.5} ± {:.5}, none {:.5} ± {:.5} ({z:+.2})",
            ma[j], sa[j], mn[j], sn[j]
        );
        assert!(z.abs() <= 4.0, "θ{j}: {z}");
    }
}

/// Degenerate input never panics: separable data with a flat prior (an improper posterior;
/// Newton stops where the gradient vanishes numerically) gives a finite map or a recorded
/// failure; a proper flat-prior model whitens.
#[test]
fn whitening_never_panics_on_degenerate_data() {
    let n = 50;
    let x: Vec<f64> = (0..n).map(|i| i as f64 - 25.0).collect();
    let y: Vec<f64> = x.iter().map(|&v| if v > 0.0 { 1.0 } else { 0.0 }).collect();
    let d = Design {
        n,
        d: 1,
        x,
        y,
        names: vec!["x".into()],
    };
    let g = Glm::new(d, Logistic, Prior::Flat).whiten();
    let info = g.reparam_info().unwrap();
    println!("separable: {} — {}", info.kind, info.note);
    match g.user_map() {
        Some(map) => {
            assert_eq!(info.kind, "whiten");
            let mut t = [0.0];
            map.to_user(&[1.0], &mut t);
            assert!(t[0].is_finite());
        }
        None => assert_eq!(info.kind, "failed"),
    }
    // and a well-posed one with a flat prior whitens
    let table = raw_table(500, 9, true);
    let g = Glm::new(design(&table), GaussianNoise { sd: 1.0 }, Prior::Flat).whiten();
    assert_eq!(g.reparam_info().unwrap().kind, "whiten");
}

/// Tall data (≥ 2¹⁷ rows in the mode search): the whitening starts Newton at the mode of every
/// 16th row and stops within one posterior sd of the mode (Newton decrement ≤ 1) without
/// another Hessian over the rows. The map stays exact (the same posterior), its centre is
/// within one sd (Mahalanobis) of the exact mode, its precision within a few per cent of the
/// exact one, the note names the coarse search, and the counts include it.
#[test]
fn tall_whitening_starts_coarse_and_stops_within_one_sd() {
    let table = raw_table(140_000, 11, false);
    let raw = Glm::new(design(&table), Logistic, Prior::Normal { scale: 10.0 });
    let w = Glm::new(design(&table), Logistic, Prior::Normal { scale: 10.0 }).whiten();
    let info = w.reparam_info().unwrap();
    println!("reparam: {} — {}", info.kind, info.note);
    assert_eq!(info.kind, "whiten");
    assert!(
        info.note
            .contains("from the mode of 8750 evenly spaced rows"),
        "{}",
        info.note
    );
    let n = w.n() as u64;
    // The coarse search's Hessians (8 750 rows each) come on top of whole-table ones.
    assert!(
        !info.hess_evals.is_multiple_of(n) && info.hess_evals > n,
        "{}",
        info.hess_evals
    );
    assert!(
        info.hess_evals < 3 * n,
        "{} Hessian evaluations",
        info.hess_evals
    );
    same_posterior(&raw, &w, 12, false);
    // The exact mode by the default search, mapped to z: within one sd of z = 0 (Mahalanobis in
    // the exact precision), and the whitened precision at the mode within 5 % of I.
    let exact = tallmc_core::optim::find_mode(&raw, &[0.0; 6], &Default::default()).unwrap();
    let map = w.user_map().unwrap();
    let d = w.dim();
    let (mut z_mode, mut tmp) = (vec![0.0; d], vec![0.0; d]);
    map.to_sampler(&exact.mode, &mut z_mode, &mut tmp);
    let mut h = exact.neg_hessian.clone();
    let mut col = vec![0.0; d];
    map.hessian_to_sampler(&mut h, &mut col);
    let maha: f64 = (0..d)
        .map(|i| {
            (0..d)
                .map(|j| z_mode[i] * h[i * d + j] * z_mode[j])
                .sum::<f64>()
        })
        .sum();
    let off = (0..d * d)
        .map(|k| (h[k] - if k % (d + 1) == 0 { 1.0 } else { 0.0 }).abs())
        .fold(0.0f64, f64::max);
    println!("exact mode at z = {z_mode:?}: squared distance {maha:.3e}; max |P_z − I| {off:.3e}");
    assert!(maha <= 1.0, "squared Mahalanobis distance {maha}");
    assert!(off <= 0.05, "max |P_z − I| {off}");
}
