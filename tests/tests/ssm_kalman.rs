#![allow(clippy::needless_range_loop)]
//! AT2 part one (Putcha 2024, ch. 3): the Kalman/RTS Fisher-identity gradient of the exact LGSSM
//! log-likelihood equals central finite differences, with the stationary initial law (whose
//! θ-dependence must be included) and with a θ-free N(0, 10) law. Also checks the filter's
//! likelihood against a brute-force dense Gaussian evaluation of p(y₁:n) on a short series.

use tallmc_core::rng::chain_rng;
use tallmc_core::ssm::kalman::{self, KalmanParams};
use tallmc_core::ssm::lgssm::{ScalePrior, TRUTH};
use tallmc_core::ssm::{InitialLaw, Lgssm, StateSpaceModel};

fn fd_check(model: &Lgssm, theta: &[f64], y: &[f64]) {
    let mut g = [0.0; 3];
    let ll = kalman::log_lik_grad(model, theta, y, &mut g);
    assert!((ll - kalman::log_lik(model, theta, y)).abs() < 1e-9 * ll.abs());
    let h = 1e-5;
    for j in 0..3 {
        let mut tp = theta.to_vec();
        let mut tm = theta.to_vec();
        tp[j] += h;
        tm[j] -= h;
        let fd = (kalman::log_lik(model, &tp, y) - kalman::log_lik(model, &tm, y)) / (2.0 * h);
        let rel = (g[j] - fd).abs() / fd.abs().max(1.0);
        assert!(
            rel < 1e-6,
            "coordinate {j}: fisher {} vs fd {fd} (rel {rel:e})",
            g[j]
        );
    }
}

#[test]
fn kalman_gradient_equals_finite_differences() {
    let stationary = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    for seed in 0..3 {
        let mut rng = chain_rng(100 + seed, 0);
        let (_, y) = stationary.simulate(&theta, 256, &mut rng);
        fd_check(&stationary, &theta, &y);
        // away from the truth too
        fd_check(&stationary, &[0.5, -0.3, 0.2], &y);
        fd_check(&stationary, &[-0.95, 0.1, -0.5], &y);
        let fixed = Lgssm::new(InitialLaw::Normal { var: 10.0 }, ScalePrior::default()).unwrap();
        fd_check(&fixed, &theta, &y);
        fd_check(&fixed, &[1.02, -0.2, 0.1], &y);
    }
}

/// The initial-law term matters: without it the Fisher sum differs from finite differences.
#[test]
fn initial_law_term_is_needed_for_the_stationary_law() {
    let model = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    let mut rng = chain_rng(7, 0);
    let (_, y) = model.simulate(&theta, 256, &mut rng);
    let p = KalmanParams::of(&model, &theta);
    let sm = kalman::smooth(&p, &y);
    let mut without = [0.0; 3];
    kalman::fisher_sum(&p, &y, &sm, None, &mut without);
    let mut with = [0.0; 3];
    kalman::log_lik_grad(&model, &theta, &y, &mut with);
    assert!(
        (with[0] - without[0]).abs() > 0.1,
        "{with:?} vs {without:?}"
    );
    assert!((with[2] - without[2]).abs() < 1e-12, "τ does not enter ν");
}

/// Dense check: y ~ N(0, Σ) with Σ = Cov(x) + τ²I, Cov(xₛ, xₜ) = φ^{s+t}P₀ + Σ_k φ^{s−k}φ^{t−k}σ².
#[test]
fn kalman_likelihood_matches_dense_gaussian() {
    let (phi, sigma, tau, p0): (f64, f64, f64, f64) = (0.8, 0.6, 0.9, 2.0);
    let y: [f64; 6] = [0.3, -1.2, 0.7, 2.1, -0.4, 0.05];
    let n = y.len();
    // x_t = φ^t x0 + Σ_{k=1}^t φ^{t−k} σ v_k
    let mut cov = vec![vec![0.0f64; n]; n];
    for s in 1..=n {
        for t in 1..=n {
            let mut c = phi.powi((s + t) as i32) * p0;
            for k in 1..=s.min(t) {
                c += phi.powi((s - k) as i32) * phi.powi((t - k) as i32) * sigma * sigma;
            }
            if s == t {
                c += tau * tau;
            }
            cov[s - 1][t - 1] = c;
        }
    }
    // Cholesky
    let mut l = vec![vec![0.0f64; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = cov[i][j];
            for k in 0..j {
                s -= l[i][k] * l[j][k];
            }
            l[i][j] = if i == j { s.sqrt() } else { s / l[j][j] };
        }
    }
    let mut z = vec![0.0; n];
    for i in 0..n {
        let mut s = y[i];
        for k in 0..i {
            s -= l[i][k] * z[k];
        }
        z[i] = s / l[i][i];
    }
    let dense = -0.5 * z.iter().map(|v| v * v).sum::<f64>()
        - (0..n).map(|i| l[i][i].ln()).sum::<f64>()
        - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
    let p = KalmanParams {
        phi,
        sigma,
        tau,
        m0: 0.0,
        p0,
    };
    let kf = kalman::filter_log_lik(&p, &y);
    assert!((kf - dense).abs() < 1e-10, "{kf} vs {dense}");
    assert!((kalman::smooth(&p, &y).log_lik - dense).abs() < 1e-10);
}
