//! Mode finding and the automatic step size at large d (issue 19: `pmf` with a stochastic-
//! gradient sampler on 200 rows, d = 900, took minutes in dense Newton steps and a Jacobi
//! eigen-decomposition). Above `NEWTON_MAX_DIM` the default mode finder is L-BFGS (one Hessian,
//! at the end), and the extreme eigenvalues come from power iteration above `JACOBI_MAX_DIM`.

use std::sync::Arc;
use tallmc_core::chain::run_chain;
use tallmc_core::data::DesignSpec;
use tallmc_core::dist;
use tallmc_core::linalg::{extreme_eigenvalues, symmetric_eigen, JACOBI_MAX_DIM};
use tallmc_core::model::DataModel;
use tallmc_core::optim::{find_mode, ModeMethod, ModeOptions, NEWTON_MAX_DIM};
use tallmc_core::registry::{build_model, build_reported_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::simulate::simulate;

fn pmf_200_rows() -> Arc<dyn DataModel> {
    let s = Settings::new();
    let table = simulate("pmf", 200, 10, 1, &s).unwrap();
    let spec = DesignSpec {
        response: String::new(),
        features: None,
        intercept: false,
        standardize: false,
    };
    let mut ms = Settings::new();
    ms.insert_pair("rank=10").unwrap();
    build_model("pmf", &table, &spec, &ms).unwrap()
}

/// The default finds the mode of a d = 900 PMF by L-BFGS: one Hessian (n per-datum Hessian
/// evaluations) at the end, where each Newton step evaluated all n and factored 900 × 900
/// matrices, up to 40 times per step where the Hessian is indefinite.
#[test]
fn the_default_mode_finder_uses_lbfgs_above_the_newton_limit() {
    let m = pmf_200_rows();
    let (n, d) = (m.n(), m.dim());
    assert!(d > NEWTON_MAX_DIM, "d = {d}");
    assert_eq!(ModeOptions::default().method, ModeMethod::Auto);
    let r = find_mode(m.as_ref(), &m.initial_point(), &ModeOptions::default()).unwrap();
    assert_eq!(r.hess_evals, n as u64);
    assert!(r.log_density.is_finite());
    assert!(r.mode.iter().all(|v| v.is_finite()));
    // From the same start, the mode it finds is at least as high as the start.
    let start = find_mode(
        m.as_ref(),
        &m.initial_point(),
        &ModeOptions {
            max_iter: 1,
            method: ModeMethod::Lbfgs,
            ..ModeOptions::default()
        },
    )
    .unwrap();
    assert!(r.log_density >= start.log_density);
}

/// Power iteration agrees with the Jacobi decomposition on a dense symmetric positive-definite
/// matrix just above the Jacobi limit (A = BBᵀ/d + 0.1 I, B standard normal).
#[test]
fn power_iteration_matches_jacobi_on_extreme_eigenvalues() {
    let d = JACOBI_MAX_DIM + 20;
    let mut rng = chain_rng(5, 0);
    let b: Vec<f64> = (0..d * d).map(|_| dist::std_normal(&mut rng)).collect();
    let mut a = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            let s: f64 = (0..d).map(|k| b[i * d + k] * b[j * d + k]).sum();
            a[i * d + j] = s / d as f64 + if i == j { 0.1 } else { 0.0 };
        }
    }
    let e = symmetric_eigen(&a, d).unwrap();
    let (max, min) = extreme_eigenvalues(&a, d).unwrap();
    let (jmax, jmin) = (e.values[0], e.values[d - 1]);
    assert!((max - jmax).abs() <= 1e-6 * jmax, "{max} vs {jmax}");
    assert!((min - jmin).abs() <= 1e-4 * jmax, "{min} vs {jmin}");
}

/// Every stochastic-gradient sampler that runs on `pmf` builds its chain (mode, automatic
/// step, weights) and draws finite values at d = 900; the preferential control-variate
/// weights use a regularised Laplace covariance where the precision is only semi-definite
/// (the factors' rotations are flat directions of the posterior).
#[test]
fn stochastic_gradient_samplers_set_up_on_pmf_at_d_900() {
    let m = pmf_200_rows();
    for sampler in ["sgld", "sgld-cv", "sghmc", "sgnht", "sgld-ps", "sgld-cv-ps"] {
        let s = Settings::new();
        let config = ChainConfig {
            sampler,
            warmup: 10,
            settings: &s,
        };
        let mut rng = chain_rng(1, 0);
        let mut chain = build_reported_chain(&config, m.clone(), &mut rng)
            .unwrap_or_else(|e| panic!("{sampler}: {e}"));
        let mut finite = true;
        run_chain(chain.as_mut(), &mut rng, 10, |_, _, th, _| {
            finite &= th.iter().all(|v| v.is_finite());
        });
        assert!(finite, "{sampler}: a non-finite draw");
    }
}
