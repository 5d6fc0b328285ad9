//! QNHMC robustness and bookkeeping (review items 1, 3, 7, 8, 9, 13): the dense-storage size
//! cap, non-finite pairs, eigenvalue clamps, the curvature-tolerance range, mass-metric rebuild
//! failures, the freeze of B after warm-up, dimension checks of `qn_integrate`, and the
//! terminal step-size buffer of short warm-ups. Deterministic or a few hundred iterations.

use tallmc_core::chain::Chain;
use tallmc_core::error::Error;
use tallmc_core::kernel::leapfrog::PhasePoint;
use tallmc_core::kernel::qnhmc::{
    qn_integrate, Adapt, InitScale, InverseHessian, PairSource, Qnhmc, Scheme, Store, DENSE_MAX_D,
};
use tallmc_core::kernel::{Metric, Tunable};
use tallmc_core::linalg::{symmetric_eigen, Cholesky};
use tallmc_core::model::LogDensity;
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::qnhmc::{options_from_settings, QnhmcChain, QnhmcOptions};
use tallmc_core::settings::Settings;

/// N(0, diag(σ²)) with σⱼ = 1 + j (d = σ.len()).
struct Diag(Vec<f64>);

impl LogDensity for Diag {
    fn dim(&self) -> usize {
        self.0.len()
    }
    fn log_density(&self, x: &[f64]) -> f64 {
        -0.5 * x
            .iter()
            .zip(&self.0)
            .map(|(v, s)| v * v / (s * s))
            .sum::<f64>()
    }
    fn log_density_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        for ((gi, v), s) in g.iter_mut().zip(x).zip(&self.0) {
            *gi = -v / (s * s);
        }
        self.log_density(x)
    }
}

fn diag(d: usize) -> Diag {
    Diag((0..d).map(|j| 1.0 + j as f64).collect())
}

fn parse(kv: &[&str], d: usize) -> Result<QnhmcOptions, Error> {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    options_from_settings(&s, d)
}

fn setting_key(e: Error) -> String {
    match e {
        Error::InvalidSetting { key, .. } => key,
        other => panic!("expected InvalidSetting, got {other:?}"),
    }
}

#[test]
fn dense_storage_is_capped() {
    // Item 1: PMF at MovieLens size (d = 99,920) would need 80 GB; d² overflows on 32-bit.
    for d in [DENSE_MAX_D + 1, 99_920, 1 << 33, usize::MAX] {
        let e = InverseHessian::new(d, Store::Dense, InitScale::Scaled, 1e-8).unwrap_err();
        assert_eq!(setting_key(e), "store", "d = {d}");
        let e = InverseHessian::from_dense(vec![1.0], d, 1e-8).unwrap_err();
        assert_eq!(setting_key(e), "store", "d = {d}");
    }
    assert!(InverseHessian::new(DENSE_MAX_D, Store::Lbfgs(7), InitScale::Scaled, 1e-8).is_ok());
    assert!(InverseHessian::new(99_920, Store::Lbfgs(7), InitScale::Scaled, 1e-8).is_ok());
    // Settings: explicit dense is rejected above the cap, auto switches to L-BFGS.
    assert_eq!(
        setting_key(parse(&["store=dense"], 99_920).unwrap_err()),
        "store"
    );
    assert_eq!(parse(&[], 99_920).unwrap().store, Store::Lbfgs(7));
    assert_eq!(parse(&["store=dense"], 300).unwrap().store, Store::Dense);
}

#[test]
fn curvature_tolerance_range_is_half_open() {
    // Item 8: |yᵀs| ≤ ‖s‖‖y‖, so δ ≥ 1 would silently skip every pair.
    for bad in ["1", "1.5", "-0.1", "nan", "inf"] {
        let kv = format!("curvature_tol={bad}");
        assert_eq!(
            setting_key(parse(&[&kv], 5).unwrap_err()),
            "curvature_tol",
            "{bad}"
        );
    }
    for ok in [0.0, 0.5, 0.999] {
        let kv = format!("curvature_tol={ok}");
        assert_eq!(parse(&[&kv], 5).unwrap().curvature_tol, ok);
        assert!(InverseHessian::new(3, Store::Dense, InitScale::Scaled, ok).is_ok());
    }
    assert!(InverseHessian::new(3, Store::Dense, InitScale::Scaled, 1.0).is_err());
    // At δ = 0.999 a parallel pair is still used.
    let mut b = InverseHessian::new(2, Store::Dense, InitScale::Scaled, 0.999).unwrap();
    assert!(b.update(&[1.0, 0.0], &[2.0, 0.0]));
}

#[test]
fn non_finite_pairs_are_skipped() {
    // Item 7: with δ = 0, yᵀs = 1e-320 (subnormal) passes the curvature test but ρ = ∞.
    for store in [Store::Dense, Store::Lbfgs(3)] {
        let mut b = InverseHessian::new(2, store, InitScale::Fixed(1.0), 0.0).unwrap();
        let before = b.to_dense();
        assert!(!b.update(&[1e-160, 0.0], &[1e-160, 0.0]), "{store:?}");
        assert_eq!((b.updates(), b.skipped()), (0, 1));
        assert_eq!(b.to_dense(), before);
        // ρ finite but the rank-two update overflows (s sᵀ ≈ 1e400).
        let used = b.update(&[1e200, 1.0], &[1e-200, 1e-200]);
        assert!(b.to_dense().iter().all(|v| v.is_finite()), "{store:?}");
        if store == Store::Dense {
            assert!(!used);
            assert_eq!(b.to_dense(), before);
        }
        // A normal pair is still used afterwards.
        assert!(b.update(&[1.0, 0.5], &[0.5, 1.0]));
        assert!(b.to_dense().iter().all(|v| v.is_finite()));
    }
}

#[test]
fn eigenvalue_clamps_contain_b() {
    // Pairs implying curvature 100 along e₁ and 1e-4 along e₂ drive B to diag(0.01, 1e4);
    // with clamps [0.5, 20] every eigenvalue stays inside.
    let d = 2;
    let b = InverseHessian::new(d, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let mut b = b.with_clamp(0.5, 20.0).unwrap();
    assert!(b.update(&[1.0, 0.0], &[100.0, 0.0]));
    assert!(b.update(&[0.0, 1.0], &[0.0, 1e-4]));
    assert!(b.update(&[1.0, 1.0], &[100.0, 1e-4]));
    let e = symmetric_eigen(&b.to_dense(), d).unwrap();
    assert!(
        e.values
            .iter()
            .all(|l| (0.5 - 1e-12..=20.0 + 1e-12).contains(l)),
        "{:?}",
        e.values
    );
    assert!(b.clamped() >= 2, "clamped {}", b.clamped());
    assert_eq!(b.updates(), 3);
    // Without clamps the same pairs leave the range.
    let mut free = InverseHessian::new(d, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    free.update(&[1.0, 0.0], &[100.0, 0.0]);
    free.update(&[0.0, 1.0], &[0.0, 1e-4]);
    let e = symmetric_eigen(&free.to_dense(), d).unwrap();
    assert!(e.values[0] > 1e3 && e.values[1] < 0.02, "{:?}", e.values);
    // B₀ outside the range is clipped; L-BFGS and bad ranges are rejected.
    let b0 = InverseHessian::new(3, Store::Dense, InitScale::Fixed(100.0), 1e-8).unwrap();
    let b0 = b0.with_clamp(0.5, 20.0).unwrap();
    assert_eq!(b0.scale(), 20.0);
    let lb = InverseHessian::new(3, Store::Lbfgs(3), InitScale::Scaled, 1e-8).unwrap();
    assert!(lb.with_clamp(0.5, 2.0).is_err());
    let dn = InverseHessian::new(3, Store::Dense, InitScale::Scaled, 1e-8).unwrap();
    assert!(dn.clone().with_clamp(0.0, 2.0).is_err());
    assert!(dn.with_clamp(3.0, 2.0).is_err());
    // Settings: min_eig / max_eig (max_eig = 0: no upper clamp).
    assert_eq!(parse(&[], 5).unwrap().clamp, None);
    assert_eq!(
        parse(&["min_eig=0.1", "max_eig=50"], 5).unwrap().clamp,
        Some((0.1, 50.0))
    );
    assert_eq!(
        parse(&["min_eig=0.1"], 5).unwrap().clamp,
        Some((0.1, f64::INFINITY))
    );
    assert_eq!(
        setting_key(parse(&["min_eig=0.1", "store=lbfgs"], 5).unwrap_err()),
        "min_eig"
    );
    assert!(parse(&["min_eig=5", "max_eig=1"], 5).is_err());
    // A chain built from the settings applies them to B₀ and to every update.
    let mut opts = parse(&["min_eig=2", "max_eig=3", "step_size=0.3"], 4).unwrap();
    opts.adapt = Adapt::Continuous;
    let mut rng = chain_rng(5, 0);
    let names = (0..4).map(|j| format!("x{j}")).collect();
    let mut chain = QnhmcChain::new(diag(4), &[1.0; 4], names, opts, 0, &mut rng).unwrap();
    for _ in 0..200 {
        chain.step(&mut rng);
    }
    let b = chain.kernel().precond();
    assert!(b.updates() > 0);
    let e = symmetric_eigen(&b.to_dense(), 4).unwrap();
    assert!(
        e.values
            .iter()
            .all(|&l| (2.0 - 1e-9..=3.0 + 1e-9).contains(&l)),
        "{:?}",
        e.values
    );
}

#[test]
fn mass_metric_rebuild_failure_is_reported() {
    const Y: f64 = 1.876e16;
    // Item 9: from B = I, the pair s = (1, −1), y = a s gives B⁺ = I − (½ − 1/(2a)) ssᵀ, whose
    // eigenvalue 1/a along s is lost to rounding at a = 1.876·10¹⁶: the computed B⁺ is
    // [[½ − 2⁻⁵⁴, ½], [½, ½ − 2⁻⁵⁴]] (indefinite) and its Cholesky factor fails.
    let b = InverseHessian::new(2, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let mut k = Qnhmc::new(
        0.1,
        5,
        0.0,
        Metric::Identity(2),
        b,
        Scheme::Mass,
        PairSource::Sample,
    )
    .unwrap();
    // The kinetic metric of the mass scheme is C (here I), and Tunable::metric reports it.
    assert_eq!(k.metric(), k.kinetic());
    let before = k.metric().clone();
    let used = k.commit(&[1.0, -1.0, Y, -Y]);
    assert_eq!(used, 1);
    let c = k.precond().to_dense();
    assert!(c[0] < 0.5 && c[1] == 0.5, "{c:?}");
    assert!(Cholesky::new(&c, 2).is_err());
    assert!(k.refresh_mass().is_err());
    assert_eq!(k.mass_failures(), 1);
    assert_eq!(k.metric(), &before, "the previous metric stays in force");
    // A well-conditioned update is rebuilt: Tunable::metric is M⁻¹ = C, not the identity.
    let b = InverseHessian::new(2, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let mut k = Qnhmc::new(
        0.1,
        5,
        0.0,
        Metric::Identity(2),
        b,
        Scheme::Mass,
        PairSource::Sample,
    )
    .unwrap();
    k.commit(&[1.0, 0.0, 0.25, 0.0]);
    assert!(k.refresh_mass().is_ok());
    assert_eq!(k.mass_failures(), 0);
    let c = k.precond().to_dense();
    assert_eq!(k.metric(), &Metric::dense(c, 2).unwrap());
    // In the QN scheme the kinetic metric is the momentum metric M⁻¹ and set_metric sets it.
    let b = InverseHessian::new(2, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let mut k = Qnhmc::new(
        0.1,
        5,
        0.0,
        Metric::Identity(2),
        b,
        Scheme::QuasiNewton,
        PairSource::Sample,
    )
    .unwrap();
    let m = Metric::dense(vec![2.0, 0.5, 0.5, 1.0], 2).unwrap();
    k.set_metric(m.clone());
    assert_eq!(k.metric(), &m);
    // The chain reports the failure count as its fourth extra.
    let mut rng = chain_rng(3, 0);
    let opts = QnhmcOptions {
        scheme: Scheme::Mass,
        ..QnhmcOptions::default()
    };
    let names = (0..3).map(|j| format!("x{j}")).collect();
    let mut chain = QnhmcChain::new(diag(3), &[0.5; 3], names, opts, 50, &mut rng).unwrap();
    assert_eq!(chain.extra_names()[3], "mass_refresh_failures");
    let info = chain.step(&mut rng);
    assert_eq!(info.extra[3], 0.0);
}

#[test]
fn from_dense_asymmetric_and_integrator_dimensions() {
    // Item 13: an asymmetric matrix is a setting error (not "not positive definite").
    let e = InverseHessian::from_dense(vec![1.0, 0.5, 0.4, 1.0], 2, 1e-8).unwrap_err();
    assert_eq!(setting_key(e), "inverse_hessian");
    assert!(matches!(
        InverseHessian::from_dense(vec![1.0, 2.0, 2.0, 1.0], 2, 1e-8),
        Err(Error::NotPositiveDefinite)
    ));
    // qn_integrate with a C of the wrong dimension does nothing and reports a divergence.
    let target = diag(3);
    let c = InverseHessian::new(2, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let mut z = PhasePoint::new(&target, &[0.1, 0.2, 0.3]);
    z.p = vec![0.5, -0.5, 0.1];
    let z0 = z.clone();
    let out = qn_integrate(&target, &c, &Metric::Identity(3), 0.1, 5, &mut z, 0.0, None);
    assert_eq!(out, (0, true));
    assert_eq!(z, z0);
    let c = InverseHessian::new(3, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap();
    let out = qn_integrate(&target, &c, &Metric::Identity(2), 0.1, 5, &mut z, 0.0, None);
    assert_eq!(out, (0, true));
    let h0 = -z.log_density + 0.5 * z.p.iter().map(|v| v * v).sum::<f64>();
    let out = qn_integrate(&target, &c, &Metric::Identity(3), 0.1, 5, &mut z, h0, None);
    assert_eq!(out, (5, false));
}

/// (updates after each iteration, B after each iteration, grad_evals − n_leapfrog per iteration)
fn trace(adapt: Adapt, warmup: usize, iters: usize) -> (Vec<usize>, Vec<Vec<f64>>, Vec<u64>) {
    let mut rng = chain_rng(11, 0);
    let opts = QnhmcOptions {
        adapt,
        pairs: PairSource::Sample,
        ..QnhmcOptions::default()
    };
    let names = (0..5).map(|j| format!("x{j}")).collect();
    let mut chain = QnhmcChain::new(diag(5), &[2.0; 5], names, opts, warmup, &mut rng).unwrap();
    let (mut u, mut b, mut extra) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..iters {
        let info = chain.step(&mut rng);
        u.push(chain.kernel().precond().updates());
        b.push(chain.kernel().precond().to_dense());
        extra.push(info.grad_evals - info.n_leapfrog as u64);
    }
    (u, b, extra)
}

#[test]
fn freeze_adapts_in_warmup_then_keeps_c_fixed() {
    // Item 3: warm-up 200 → B adapts until iteration 150 (terminal buffer 50), then frozen.
    let (u, b, _) = trace(Adapt::Freeze, 200, 600);
    assert!(u[149] > 10, "B adapted during warm-up: {} updates", u[149]);
    for t in 150..600 {
        assert_eq!(u[t], u[149], "update after the freeze at iteration {t}");
        assert_eq!(b[t], b[149], "C changed at iteration {t}");
    }
    // Contrast: continuous keeps updating during sampling; off never updates.
    let (u, _, _) = trace(Adapt::Continuous, 200, 600);
    assert!(u[599] > u[199] + 50, "{} vs {}", u[599], u[199]);
    let (u, b, _) = trace(Adapt::Off, 200, 300);
    assert_eq!(u[299], 0);
    assert_eq!(b[299], b[0]);
}

#[test]
fn short_warmup_retunes_after_the_last_update() {
    // Item 13: a warm-up of 10 freezes B at iteration 9 (buffer ⌈10/10⌉ = 1) and reruns the
    // step-size heuristic then (extra gradients beyond the trajectory's own leapfrog steps).
    let (u, b, extra) = trace(Adapt::Freeze, 10, 40);
    assert!(u[8] > 0, "B adapted in the short warm-up");
    for t in 9..40 {
        assert_eq!((u[t], &b[t]), (u[8], &b[8]), "iteration {t}");
    }
    assert!(extra[8] > 0, "no retune when B froze: {extra:?}");
    assert!(extra[9..].iter().all(|&e| e == 0), "{extra:?}");
}
