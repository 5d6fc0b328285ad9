//! QNHMC on the paper's simulated Gaussian N(0, Σ), Σ = 11ᵀ + 4I, d = 100 (spec 001 §5.2–5.3):
//! AT-3 (BFGS learns Σ: it is a fixed point of BFGS on a quadratic U), AT-4 (lag-1
//! autocorrelations at the paper's ε = 0.01, L = 10 match the closed form
//! ρ = cos(L·arccos(1 − ε²ω²/2)), ω² = eig(C M⁻¹ C Σ⁻¹); and its control: tuned HMC and tuned
//! QNHMC each need ≤ 40 gradients per ESS) and AT-2's Gaussian part (exact moments with a
//! frozen C = Σ or a random SPD C).
//!
//! Tolerances: a lag-1 estimate Σxₜxₜ₊₁/Σxₜ² (known mean 0) of an AR(1) series with
//! coefficient ρ over n draws has standard error √((1 − ρ²)/n) and bias ≈ −2ρ/n (White 1961);
//! with full momentum refresh and acceptance ≈ 1 each eigen-coordinate of a Gaussian is exactly
//! AR(1). Moments use k·MCSE from the chain's own ESS.

use tallmc_core::chain::Chain;
use tallmc_core::kernel::qnhmc::{Adapt, InitScale, InverseHessian, PairSource, Scheme, Store};
use tallmc_core::rng::{chain_rng, ChainRng};
use tallmc_core::sampler::qnhmc::{QnhmcChain, QnhmcOptions};
use tallmc_tests::{ess, mean, run, var};

use tallmc_tests::PaperGaussian;

const D: usize = tallmc_tests::PAPER_D;

fn sigma() -> Vec<f64> {
    let mut s = vec![1.0; D * D];
    for i in 0..D {
        s[i * D + i] += 4.0;
    }
    s
}

fn names() -> Vec<String> {
    (1..=D).map(|j| format!("x{j}")).collect()
}

/// An exact draw of N(0, Σ): √4·z + 1·w, z ~ N(0, I), w ~ N(0, 1).
fn exact_draw(rng: &mut ChainRng) -> Vec<f64> {
    let w = tallmc_core::dist::std_normal(rng);
    (0..D)
        .map(|_| 2.0 * tallmc_core::dist::std_normal(rng) + w)
        .collect()
}

/// Projection on 1/√d.
fn along_one(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / (D as f64).sqrt()
}

/// The 50 orthogonal contrasts (e₂ₖ₋₁ − e₂ₖ)/√2 (each orthogonal to 1 and to each other).
fn contrasts(x: &[f64]) -> Vec<f64> {
    (0..D / 2)
        .map(|k| (x[2 * k] - x[2 * k + 1]) / 2f64.sqrt())
        .collect()
}

/// Lag-1 autocorrelation of a series with known mean 0: Σ xₜxₜ₊₁ / Σ xₜ².
fn lag1(x: &[f64]) -> f64 {
    let num: f64 = x.windows(2).map(|w| w[0] * w[1]).sum();
    let den: f64 = x.iter().map(|v| v * v).sum();
    num / den
}

/// Closed-form lag-1 for eigenvalue λ of Σ: ω² = c²/λ (C = c along that direction, M = I).
fn predicted_lag1(eps: f64, l: usize, omega2: f64) -> f64 {
    let phi = (1.0 - 0.5 * eps * eps * omega2).acos();
    (l as f64 * phi).cos()
}

fn options(step: f64, adapt: Adapt, pairs: PairSource, init: InitScale) -> QnhmcOptions {
    QnhmcOptions {
        step_size: step,
        n_steps: 10,
        store: Store::Dense,
        init,
        pairs,
        adapt,
        ..QnhmcOptions::default()
    }
}

fn frobenius_rel(b: &[f64], s: &[f64]) -> f64 {
    let num: f64 = b.iter().zip(s).map(|(x, y)| (x - y).powi(2)).sum();
    let den: f64 = s.iter().map(|x| x * x).sum();
    (num / den).sqrt()
}

fn learn(pairs: PairSource, init: InitScale, iters: usize, seed: u64) -> Vec<f64> {
    let mut rng = chain_rng(seed, 0);
    let opts = options(0.01, Adapt::Continuous, pairs, init);
    let mut chain = QnhmcChain::new(PaperGaussian, &[30.0; D], names(), opts, 0, &mut rng).unwrap();
    for _ in 0..iters {
        chain.step(&mut rng);
    }
    assert!(
        !chain.exact(),
        "continuous adaptation must report not exact"
    );
    chain.kernel().precond().to_dense()
}

#[test]
fn at3_bfgs_learns_sigma() {
    let s = sigma();
    // The paper's Algorithm 2 (trajectory pairs, B₀ = I) and sample pairs with NW scaling.
    for (pairs, init, iters) in [
        (PairSource::Trajectory, InitScale::Fixed(1.0), 6000),
        (PairSource::Sample, InitScale::Scaled, 6000),
    ] {
        let b = learn(pairs, init, iters, 31);
        let e = frobenius_rel(&b, &s);
        eprintln!("{pairs:?}: ‖B − Σ‖_F/‖Σ‖_F = {e:.2e} after {iters} iterations");
        assert!(e < 1e-6, "{pairs:?}: ‖B − Σ‖/‖Σ‖ = {e:e}");
        // Eigenvalues of B in [4, 104] ± 1e-6 (spec AT-3): by Weyl's inequality
        // |λᵢ(B) − λᵢ(Σ)| ≤ ‖B − Σ‖₂ ≤ ‖B − Σ‖_F, and Σ's eigenvalues are 104 (along 1) and
        // 4 (its orthogonal complement), so an absolute Frobenius error below 1e-6 suffices.
        let abs: f64 = b
            .iter()
            .zip(&s)
            .map(|(x, y)| (x - y).powi(2))
            .sum::<f64>()
            .sqrt();
        assert!(abs < 1e-6, "{pairs:?}: ‖B − Σ‖_F = {abs:e}");
        // And directly: Rayleigh quotients along 1 (104) and along the contrast
        // (e₁ − e₂)/√2 (4), each an eigenvector of Σ.
        let rayleigh = |v: &[f64]| {
            let mut bv = vec![0.0; D];
            tallmc_core::linalg::matvec(&b, D, v, &mut bv);
            v.iter().zip(&bv).map(|(a, b)| a * b).sum::<f64>()
        };
        let one = vec![1.0 / (D as f64).sqrt(); D];
        let mut e12 = vec![0.0; D];
        e12[0] = 1.0 / 2f64.sqrt();
        e12[1] = -1.0 / 2f64.sqrt();
        let (r1, r2) = (rayleigh(&one), rayleigh(&e12));
        assert!((r1 - 104.0).abs() < 1e-6, "along 1: {r1}");
        assert!((r2 - 4.0).abs() < 1e-6, "along e1 − e2: {r2}");
        assert!(tallmc_core::linalg::Cholesky::new(&b, D).is_ok());
    }
}

struct Lags {
    one: f64,
    orth: f64,
    accept: f64,
    var_one: f64,
    var_orth: f64,
    draws: Vec<Vec<f64>>,
}

/// `n` kept iterations at ε = 0.01, L = 10 with a frozen C (adapt off), from an exact draw.
fn run_frozen(c: InverseHessian, scheme: Scheme, n: usize, seed: u64) -> Lags {
    let mut rng = chain_rng(seed, 0);
    let start = exact_draw(&mut rng);
    let mut opts = options(0.01, Adapt::Off, PairSource::Sample, InitScale::Fixed(1.0));
    opts.scheme = scheme;
    let mut chain =
        QnhmcChain::with_precond(PaperGaussian, &start, names(), opts, c, 0, &mut rng).unwrap();
    assert!(chain.exact());
    let r = run(&mut chain, &mut rng, n);
    let one: Vec<f64> = r.draws.iter().map(|x| along_one(x)).collect();
    let orth: Vec<Vec<f64>> = r.draws.iter().map(|x| contrasts(x)).collect();
    let k = orth[0].len();
    let orth_lag = (0..k)
        .map(|j| lag1(&orth.iter().map(|v| v[j]).collect::<Vec<_>>()))
        .sum::<f64>()
        / k as f64;
    let var_orth = (0..k)
        .map(|j| var(&orth.iter().map(|v| v[j]).collect::<Vec<_>>()))
        .sum::<f64>()
        / k as f64;
    Lags {
        one: lag1(&one),
        orth: orth_lag,
        accept: r.mean_accept(),
        var_one: var(&one),
        var_orth,
        draws: r.draws,
    }
}

fn identity_c() -> InverseHessian {
    InverseHessian::new(D, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap()
}

#[test]
fn at4_lag1_at_the_papers_settings() {
    let n = 20_000;
    let (eps, l) = (0.01, 10);
    // QNHMC with C = Σ (the BFGS fixed point, AT-3): ω² = eig(Σ² Σ⁻¹) = eig(Σ) ∈ {104, 4}.
    let qn = run_frozen(
        InverseHessian::from_dense(sigma(), D, 1e-8).unwrap(),
        Scheme::QuasiNewton,
        n,
        41,
    );
    // HMC (C = I, M = I): ω² = eig(Σ⁻¹) ∈ {1/104, 1/4}.
    let hmc = run_frozen(identity_c(), Scheme::QuasiNewton, n, 42);
    let pred = [
        predicted_lag1(eps, l, 104.0),
        predicted_lag1(eps, l, 4.0),
        predicted_lag1(eps, l, 1.0 / 104.0),
        predicted_lag1(eps, l, 0.25),
    ];
    // Spec §5.2 table: 0.52316, 0.98007, 0.99995, 0.99875.
    assert!((pred[0] - 0.52316).abs() < 1e-5 && (pred[1] - 0.98007).abs() < 1e-5);
    assert!((pred[2] - 0.99995).abs() < 1e-5 && (pred[3] - 0.99875).abs() < 1e-5);
    eprintln!(
        "lag-1 QNHMC 1 {:.5} orth {:.5} (pred {:.5} {:.5}); HMC 1 {:.5} orth {:.5} (pred {:.5} {:.5}); \
         QN accept {:.4}, var along 1 {:.2}, orth {:.3}",
        qn.one, qn.orth, pred[0], pred[1], hmc.one, hmc.orth, pred[2], pred[3], qn.accept, qn.var_one, qn.var_orth
    );
    let se = |rho: f64, m: f64| ((1.0 - rho * rho) / m).sqrt();
    let k = 5.0;
    let nf = n as f64;
    // Expected value of the estimator: ρ(1 − 2/n).
    let pred: Vec<f64> = pred.iter().map(|r| r * (1.0 - 2.0 / nf)).collect();
    assert!(
        (qn.one - pred[0]).abs() < k * se(pred[0], nf),
        "QNHMC along 1: {} vs {}",
        qn.one,
        pred[0]
    );
    assert!(
        (qn.orth - pred[1]).abs() < k * se(pred[1], 50.0 * nf),
        "QNHMC orthogonal: {} vs {}",
        qn.orth,
        pred[1]
    );
    assert!(hmc.one >= 0.999, "HMC along 1: {}", hmc.one);
    assert!(
        (hmc.orth - pred[3]).abs() < k * se(pred[3], 50.0 * nf),
        "HMC orthogonal: {} vs {}",
        hmc.orth,
        pred[3]
    );
    assert!(qn.accept >= 0.99, "QNHMC acceptance {}", qn.accept);
    // Sample variance along 1 = 104 within k·MCSE (its ESS ≈ n(1 − ρ)/(1 + ρ)).
    let one: Vec<f64> = qn.draws.iter().map(|x| along_one(x)).collect();
    let sq: Vec<f64> = one.iter().map(|v| v * v).collect();
    let mcse = (var(&sq) / ess(&sq)).sqrt();
    assert!(
        (mean(&sq) - 104.0).abs() < 4.0 * mcse,
        "E[(1ᵀx)²/d] = {} ± {mcse}",
        mean(&sq)
    );
    assert!(
        (qn.var_one / 104.0 - 1.0).abs() < 0.15,
        "var along 1: {}",
        qn.var_one
    );
    // Derived: ESS ratios QNHMC/HMC through (1 + ρ)/(1 − ρ) of the measured lag-1 values.
    let iat = |r: f64| (1.0 + r) / (1.0 - r);
    assert!(iat(hmc.one) / iat(qn.one) > 100.0);
    assert!(iat(hmc.orth) / iat(qn.orth) > 10.0);
}

#[test]
fn at2_gaussian_moments_with_frozen_c() {
    // C = Σ (QN) and a random SPD C (QN); M⁻¹ = Σ (mass control). Larger steps than the paper's
    // so that a short run mixes; acceptance stays high.
    let mut rng = chain_rng(51, 3);
    let a: Vec<f64> = (0..D * D)
        .map(|_| tallmc_core::dist::std_normal(&mut rng))
        .collect();
    let mut rc = vec![0.0; D * D];
    for i in 0..D {
        for j in 0..D {
            rc[i * D + j] =
                (0..D).map(|k| a[i * D + k] * a[j * D + k]).sum::<f64>() / (4.0 * D as f64);
        }
        rc[i * D + i] += 1.0;
    }
    let cases: [(&str, InverseHessian, Scheme, f64, usize); 3] = [
        (
            "qn C=Σ",
            InverseHessian::from_dense(sigma(), D, 1e-8).unwrap(),
            Scheme::QuasiNewton,
            0.04,
            20,
        ),
        (
            "qn C random",
            InverseHessian::from_dense(rc, D, 1e-8).unwrap(),
            Scheme::QuasiNewton,
            0.25,
            10,
        ),
        (
            "mass M⁻¹=Σ",
            InverseHessian::from_dense(sigma(), D, 1e-8).unwrap(),
            Scheme::Mass,
            0.4,
            4,
        ),
    ];
    for (label, c, scheme, eps, l) in cases {
        let mut rng = chain_rng(52, 0);
        let start = exact_draw(&mut rng);
        let opts = QnhmcOptions {
            step_size: eps,
            n_steps: l,
            jitter: 0.2,
            adapt: Adapt::Off,
            scheme,
            ..QnhmcOptions::default()
        };
        let mut chain =
            QnhmcChain::with_precond(PaperGaussian, &start, names(), opts, c, 0, &mut rng).unwrap();
        let r = run(&mut chain, &mut rng, 4000);
        let one: Vec<f64> = r.draws.iter().map(|x| along_one(x)).collect();
        let e12: Vec<f64> = r
            .draws
            .iter()
            .map(|x| (x[0] - x[1]) / 2f64.sqrt())
            .collect();
        for (what, x, v) in [("1", &one, 104.0), ("e1−e2", &e12, 4.0)] {
            let m = mean(x);
            let se_m = (var(x) / ess(x)).sqrt();
            assert!(
                m.abs() < 4.0 * se_m,
                "{label}: mean along {what} {m} ± {se_m}"
            );
            let sq: Vec<f64> = x.iter().map(|t| t * t).collect();
            let se_v = (var(&sq) / ess(&sq)).sqrt();
            assert!(
                (mean(&sq) - v).abs() < 4.0 * se_v,
                "{label}: E[x²] along {what} {} ± {se_v} (truth {v})",
                mean(&sq)
            );
            assert!(
                (mean(&sq) / v - 1.0).abs() < 0.1,
                "{label}: var along {what}"
            );
        }
    }
}

/// Gradient evaluations per effective sample in the worse of the two eigen-directions of Σ
/// (along 1; the orthogonal complement: median ESS over the 50 contrasts), with the
/// acceptance rate.
fn grads_per_ess(draws: &[Vec<f64>], grads: u64) -> (f64, f64, f64) {
    let n = draws.len() as f64;
    let one: Vec<f64> = draws.iter().map(|x| along_one(x)).collect();
    let orth: Vec<Vec<f64>> = draws.iter().map(|x| contrasts(x)).collect();
    let mut e: Vec<f64> = (0..D / 2)
        .map(|k| ess(&orth.iter().map(|v| v[k]).collect::<Vec<_>>()))
        .collect();
    e.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let (e1, eo) = (ess(&one), e[e.len() / 2]);
    (grads as f64 / e1.min(eo), e1 / n, eo / n)
}

#[test]
fn at4_control_tuned_hmc_and_tuned_qnhmc() {
    // Spec 001 §5.3 AT-4 control: tuned HMC (M = I, ε = 0.8, L = 20, ±20% jitter) and tuned
    // QNHMC (C = Σ, ε = 0.04, L = 20, ±20% jitter) each need ≤ 40 gradients per ESS in their
    // worst direction (spec [sim]: ≈ 24 and ≈ 18), unlike HMC at the paper's ε = 0.01.
    use tallmc_core::kernel::hmc::Hmc;
    use tallmc_core::kernel::{Kernel, Metric};
    let n = 4000;
    let mut rng = chain_rng(81, 0);
    let start = exact_draw(&mut rng);
    let hmc = Hmc::new(0.8, Metric::Identity(D), 20, 0.2).unwrap();
    let mut z = hmc.init(&PaperGaussian, &start).unwrap();
    let (mut draws, mut grads, mut acc) = (Vec::with_capacity(n), 0u64, 0.0);
    for _ in 0..n {
        let info = hmc.step(&mut rng, &PaperGaussian, &mut z);
        grads += info.grad_evals;
        acc += info.accept_prob;
        draws.push(z.q.clone());
    }
    let (g_hmc, r1, ro) = grads_per_ess(&draws, grads);
    eprintln!(
        "tuned HMC: {g_hmc:.1} gradients/ESS (ESS/n along 1 {r1:.2}, orth {ro:.2}), accept {:.3}",
        acc / n as f64
    );

    let mut rng = chain_rng(82, 0);
    let start = exact_draw(&mut rng);
    let opts = QnhmcOptions {
        step_size: 0.04,
        n_steps: 20,
        jitter: 0.2,
        adapt: Adapt::Off,
        ..QnhmcOptions::default()
    };
    let c = InverseHessian::from_dense(sigma(), D, 1e-8).unwrap();
    let mut chain =
        QnhmcChain::with_precond(PaperGaussian, &start, names(), opts, c, 0, &mut rng).unwrap();
    let (mut draws, mut grads, mut acc) = (Vec::with_capacity(n), 0u64, 0.0);
    for _ in 0..n {
        let info = chain.step(&mut rng);
        grads += info.grad_evals;
        acc += info.accept_prob;
        draws.push(chain.position().to_vec());
    }
    let (g_qn, r1, ro) = grads_per_ess(&draws, grads);
    eprintln!(
        "tuned QNHMC: {g_qn:.1} gradients/ESS (ESS/n along 1 {r1:.2}, orth {ro:.2}), accept {:.3}",
        acc / n as f64
    );
    assert!(g_hmc <= 40.0, "tuned HMC needs {g_hmc} gradients per ESS");
    assert!(g_qn <= 40.0, "tuned QNHMC needs {g_qn} gradients per ESS");
}
