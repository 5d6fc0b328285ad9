//! Leapfrog: reversibility to 1e-10 and energy error O(ε²) on a correlated Gaussian.

use tallmc_core::kernel::leapfrog::{integrate, PhasePoint};
use tallmc_core::kernel::Metric;
use tallmc_core::model::LogDensity;
use tallmc_core::rng::chain_rng;

/// N(0, Σ) given by its precision P (row-major): log π = −½ xᵀ P x.
struct Gaussian {
    d: usize,
    prec: Vec<f64>,
}

impl LogDensity for Gaussian {
    fn dim(&self) -> usize {
        self.d
    }
    fn log_density(&self, x: &[f64]) -> f64 {
        let mut g = vec![0.0; self.d];
        self.log_density_grad(x, &mut g)
    }
    fn log_density_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let d = self.d;
        let mut s = 0.0;
        for i in 0..d {
            let px: f64 = (0..d).map(|j| self.prec[i * d + j] * x[j]).sum();
            g[i] = -px;
            s += x[i] * px;
        }
        -0.5 * s
    }
}

/// A 3-d Gaussian with correlations 0.9 / 0.5 and scales 1, 2, 0.5.
fn target() -> Gaussian {
    let sd = [1.0, 2.0, 0.5];
    let corr = [1.0, 0.9, 0.5, 0.9, 1.0, 0.6, 0.5, 0.6, 1.0];
    let mut cov = vec![0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            cov[i * 3 + j] = corr[i * 3 + j] * sd[i] * sd[j];
        }
    }
    let ch = tallmc_core::linalg::Cholesky::new(&cov, 3).unwrap();
    Gaussian {
        d: 3,
        prec: ch.inverse(),
    }
}

fn metrics() -> Vec<Metric> {
    vec![
        Metric::Identity(3),
        Metric::diag(vec![1.0, 4.0, 0.25]).unwrap(),
        Metric::dense(vec![2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 0.5], 3).unwrap(),
    ]
}

fn start(t: &Gaussian, metric: &Metric, seed: u64) -> PhasePoint {
    let mut z = PhasePoint::new(t, &[0.7, -1.3, 0.4]);
    let mut rng = chain_rng(seed, 0);
    metric.sample_momentum(&mut rng, &mut z.p);
    z
}

#[test]
fn leapfrog_is_reversible() {
    let t = target();
    for (k, m) in metrics().iter().enumerate() {
        let z0 = start(&t, m, k as u64);
        let mut z = z0.clone();
        integrate(&t, m, 0.05, 200, &mut z);
        z.p.iter_mut().for_each(|p| *p = -*p);
        integrate(&t, m, 0.05, 200, &mut z);
        z.p.iter_mut().for_each(|p| *p = -*p);
        for i in 0..3 {
            assert!(
                (z.q[i] - z0.q[i]).abs() < 1e-10,
                "metric {k}: q {:?} vs {:?}",
                z.q,
                z0.q
            );
            assert!(
                (z.p[i] - z0.p[i]).abs() < 1e-10,
                "metric {k}: p {:?} vs {:?}",
                z.p,
                z0.p
            );
        }
        // Integrating with −ε is the same as negating the momentum.
        let mut a = z0.clone();
        integrate(&t, m, 0.05, 100, &mut a);
        integrate(&t, m, -0.05, 100, &mut a);
        for i in 0..3 {
            assert!((a.q[i] - z0.q[i]).abs() < 1e-10);
        }
    }
}

#[test]
fn energy_error_is_second_order() {
    let t = target();
    for (k, m) in metrics().iter().enumerate() {
        let z0 = start(&t, m, 10 + k as u64);
        let h0 = z0.hamiltonian(m);
        // Fixed integration time T = 1 with ε, ε/2, ε/4: the error at T must quarter.
        let errs: Vec<f64> = [0.02, 0.01, 0.005]
            .iter()
            .map(|&eps| {
                let mut z = z0.clone();
                integrate(&t, m, eps, (1.0_f64 / eps).round() as usize, &mut z);
                (z.hamiltonian(m) - h0).abs()
            })
            .collect();
        for w in errs.windows(2) {
            let ratio = w[1] / w[0];
            assert!(
                (0.2..0.3).contains(&ratio),
                "metric {k}: errors {errs:?}, ratio {ratio}"
            );
        }
    }
}
