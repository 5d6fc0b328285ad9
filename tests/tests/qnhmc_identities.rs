//! QNHMC AT-1 (spec 001 §5.3): deterministic kernel identities.
//! (a) a QNHMC trajectory with frozen C is the standard leapfrog with inverse mass C M⁻¹ C from
//! (q₀, C⁻¹p₀); (b) reversibility; (c) volume preservation; (d) second order; (e) BFGS secant
//! equation, symmetry, positive definiteness, L-BFGS = dense BFGS from the same pairs and B₀
//! (also with the scaled B₀ = γ_newest·I); and the step-level equivalence: `Qnhmc::step` with a
//! frozen C reproduces an HMC transition with inverse mass C² from the same random numbers.

use tallmc_core::kernel::leapfrog::{integrate, PhasePoint};
use tallmc_core::kernel::qnhmc::{qn_integrate, InitScale, InverseHessian, Store};
use tallmc_core::kernel::Metric;
use tallmc_core::linalg::Cholesky;
use tallmc_core::model::LogDensity;
use tallmc_core::rng::{chain_rng, ChainRng};

/// A Gaussian N(0, P⁻¹) plus a logistic-like non-quadratic term Σⱼ log(1 + e^{θⱼ}) (strictly
/// convex, so BFGS pairs always satisfy the curvature condition).
struct Target {
    d: usize,
    prec: Vec<f64>,
    soft: f64,
}

impl LogDensity for Target {
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
            let sig = 1.0 / (1.0 + (-x[i]).exp());
            g[i] = -px - self.soft * sig;
            s += 0.5 * x[i] * px + self.soft * (1.0 + x[i].exp()).ln();
        }
        -s
    }
}

fn normal(rng: &mut ChainRng) -> f64 {
    tallmc_core::dist::std_normal(rng)
}

/// A random SPD matrix A Aᵀ/d + c I.
fn random_spd(d: usize, c: f64, rng: &mut ChainRng) -> Vec<f64> {
    let a: Vec<f64> = (0..d * d).map(|_| normal(rng)).collect();
    let mut m = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            m[i * d + j] = (0..d).map(|k| a[i * d + k] * a[j * d + k]).sum::<f64>() / d as f64;
        }
        m[i * d + i] += c;
    }
    m
}

fn matvec(a: &[f64], d: usize, x: &[f64]) -> Vec<f64> {
    (0..d)
        .map(|i| (0..d).map(|j| a[i * d + j] * x[j]).sum())
        .collect()
}

fn matmul(a: &[f64], b: &[f64], d: usize) -> Vec<f64> {
    let mut c = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            c[i * d + j] = (0..d).map(|k| a[i * d + k] * b[k * d + j]).sum();
        }
    }
    c
}

fn target(d: usize, soft: f64, seed: u64) -> Target {
    let mut rng = chain_rng(seed, 1);
    Target {
        d,
        prec: random_spd(d, 0.5, &mut rng),
        soft,
    }
}

fn point(t: &Target, q: &[f64], p: &[f64]) -> PhasePoint {
    let mut z = PhasePoint::new(t, q);
    z.p = p.to_vec();
    z
}

fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x - y).powi(2))
        .sum::<f64>()
        .sqrt();
    let den: f64 = b.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-300);
    num / den
}

fn hamiltonian_qn(t: &Target, m: &Metric, z: &PhasePoint) -> f64 {
    -t.log_density(&z.q) + m.kinetic(&z.p)
}

#[test]
fn at1a_equivalence_to_hmc_with_inverse_mass_cmc() {
    for (seed, d) in [(1u64, 6usize), (2, 10)] {
        let t = target(d, 1.0, seed);
        let mut rng = chain_rng(seed, 2);
        let c = random_spd(d, 0.3, &mut rng);
        // Momentum metric M⁻¹: identity and a dense SPD one.
        let minv_dense = random_spd(d, 1.0, &mut rng);
        for minv in [None, Some(minv_dense.clone())] {
            let (momentum, cmc) = match &minv {
                None => (Metric::Identity(d), matmul(&c, &c, d)),
                Some(mi) => (
                    Metric::dense(mi.clone(), d).unwrap(),
                    matmul(&matmul(&c, mi, d), &c, d),
                ),
            };
            let cmat = InverseHessian::from_dense(c.clone(), d, 1e-8).unwrap();
            let q0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
            let p0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
            let (eps, steps) = (0.05, 25);
            let mut z = point(&t, &q0, &p0);
            let (done, div) = qn_integrate(&t, &cmat, &momentum, eps, steps, &mut z, 1e300, None);
            assert_eq!((done, div), (steps, false));
            // Standard leapfrog with inverse mass C M⁻¹ C from (q₀, C⁻¹ p₀).
            let mut pp = p0.clone();
            Cholesky::new(&c, d).unwrap().solve(&mut pp);
            let metric = Metric::dense(cmc, d).unwrap();
            let mut w = point(&t, &q0, &pp);
            integrate(&t, &metric, eps, steps, &mut w);
            let eq = rel_err(&z.q, &w.q);
            let ep = rel_err(&z.p, &matvec(&c, d, &w.p));
            assert!(eq < 1e-12, "d={d}: q mismatch {eq}");
            assert!(ep < 1e-11, "d={d}: p mismatch {ep}");
            // Same Hamiltonian: ½ pᵀM⁻¹p = ½ p′ᵀ(C M⁻¹ C)p′.
            let h1 = hamiltonian_qn(&t, &momentum, &z);
            let h2 = -t.log_density(&w.q) + metric.kinetic(&w.p);
            assert!((h1 - h2).abs() < 1e-10 * h1.abs().max(1.0), "{h1} vs {h2}");
        }
    }
}

#[test]
fn at1b_reversible() {
    let d = 8;
    let t = target(d, 1.0, 3);
    let mut rng = chain_rng(3, 2);
    let c = InverseHessian::from_dense(random_spd(d, 0.3, &mut rng), d, 1e-8).unwrap();
    let m = Metric::Identity(d);
    let q0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let p0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let mut z = point(&t, &q0, &p0);
    qn_integrate(&t, &c, &m, 0.07, 30, &mut z, 1e300, None);
    z.p.iter_mut().for_each(|p| *p = -*p);
    qn_integrate(&t, &c, &m, 0.07, 30, &mut z, 1e300, None);
    for j in 0..d {
        assert!((z.q[j] - q0[j]).abs() < 1e-10, "q[{j}]");
        assert!((z.p[j] + p0[j]).abs() < 1e-10, "p[{j}]");
    }
}

/// Determinant by Gaussian elimination with partial pivoting.
fn det(mut a: Vec<f64>, n: usize) -> f64 {
    let mut det = 1.0;
    for k in 0..n {
        let piv = (k..n)
            .max_by(|&i, &j| a[i * n + k].abs().total_cmp(&a[j * n + k].abs()))
            .unwrap();
        if piv != k {
            for j in 0..n {
                a.swap(k * n + j, piv * n + j);
            }
            det = -det;
        }
        let akk = a[k * n + k];
        det *= akk;
        for i in k + 1..n {
            let f = a[i * n + k] / akk;
            for j in k..n {
                a[i * n + j] -= f * a[k * n + j];
            }
        }
    }
    det
}

#[test]
fn at1c_volume_preserving() {
    for d in [2usize, 4] {
        let t = target(d, 2.0, 4 + d as u64);
        let mut rng = chain_rng(5, d as u64);
        let c = InverseHessian::from_dense(random_spd(d, 0.3, &mut rng), d, 1e-8).unwrap();
        let m = Metric::Identity(d);
        let x0: Vec<f64> = (0..2 * d).map(|_| normal(&mut rng)).collect();
        let flow = |x: &[f64]| -> Vec<f64> {
            let mut z = point(&t, &x[..d], &x[d..]);
            qn_integrate(&t, &c, &m, 0.1, 10, &mut z, 1e300, None);
            let mut out = z.q.clone();
            out.extend_from_slice(&z.p);
            out
        };
        let n = 2 * d;
        let h = 1e-5;
        let mut jac = vec![0.0; n * n];
        for j in 0..n {
            let mut xp = x0.clone();
            let mut xm = x0.clone();
            xp[j] += h;
            xm[j] -= h;
            let (fp, fm) = (flow(&xp), flow(&xm));
            for i in 0..n {
                jac[i * n + j] = (fp[i] - fm[i]) / (2.0 * h);
            }
        }
        let det = det(jac, n);
        assert!((det - 1.0).abs() < 1e-6, "d={d}: det {det}");
    }
}

#[test]
fn at1d_second_order() {
    let d = 6;
    let t = target(d, 1.0, 6);
    let mut rng = chain_rng(6, 2);
    let c = InverseHessian::from_dense(random_spd(d, 0.3, &mut rng), d, 1e-8).unwrap();
    let m = Metric::Identity(d);
    let q0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let p0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let dh = |eps: f64| {
        let steps = (1.0 / eps).round() as usize;
        let mut z = point(&t, &q0, &p0);
        let h0 = hamiltonian_qn(&t, &m, &z);
        qn_integrate(&t, &c, &m, eps, steps, &mut z, 1e300, None);
        (hamiltonian_qn(&t, &m, &z) - h0).abs()
    };
    for eps in [0.02, 0.01] {
        let r = dh(eps) / dh(eps / 2.0);
        assert!((r - 4.0).abs() < 0.3, "ε = {eps}: ratio {r}");
    }
}

fn pairs(d: usize, k: usize, seed: u64) -> Vec<(Vec<f64>, Vec<f64>)> {
    // Pairs from a convex non-quadratic gradient: y = ∇U(x + s) − ∇U(x).
    let t = target(d, 1.5, seed);
    let mut rng = chain_rng(seed, 9);
    let grad_u = |x: &[f64]| {
        let mut g = vec![0.0; d];
        t.log_density_grad(x, &mut g);
        g.iter().map(|v| -v).collect::<Vec<f64>>()
    };
    (0..k)
        .map(|_| {
            let x: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
            let s: Vec<f64> = (0..d).map(|_| 0.5 * normal(&mut rng)).collect();
            let xs: Vec<f64> = x.iter().zip(&s).map(|(a, b)| a + b).collect();
            let y: Vec<f64> = grad_u(&xs)
                .iter()
                .zip(grad_u(&x))
                .map(|(a, b)| a - b)
                .collect();
            (s, y)
        })
        .collect()
}

#[test]
fn at1e_bfgs_secant_symmetry_and_positive_definite() {
    let d = 7;
    for init in [
        InitScale::Fixed(1.0),
        InitScale::Scaled,
        InitScale::Fixed(0.3),
    ] {
        let mut b = InverseHessian::new(d, Store::Dense, init, 1e-8).unwrap();
        for (s, y) in pairs(d, 12, 7) {
            assert!(b.update(&s, &y));
            let mut by = vec![0.0; d];
            b.apply(&y, &mut by);
            let e = rel_err(&by, &s);
            assert!(e < 1e-10, "secant B⁺y = s: {e}");
            let m = b.to_dense();
            for i in 0..d {
                for j in 0..d {
                    assert_eq!(m[i * d + j], m[j * d + i]);
                }
            }
            assert!(Cholesky::new(&m, d).is_ok(), "B⁺ not positive definite");
        }
        assert_eq!((b.updates(), b.skipped()), (12, 0));
    }
    // The curvature safeguard skips yᵀs ≤ δ‖s‖‖y‖ (here yᵀs < 0) and leaves B unchanged.
    let mut b = InverseHessian::new(d, Store::Dense, InitScale::Scaled, 1e-8).unwrap();
    let before = b.to_dense();
    let s = vec![1.0; d];
    let y = vec![-1.0; d];
    assert!(!b.update(&s, &y));
    assert_eq!(b.to_dense(), before);
    assert_eq!(b.skipped(), 1);
}

#[test]
fn at1e_lbfgs_equals_dense_bfgs() {
    let d = 9;
    let ps = pairs(d, 15, 8);
    for gamma in [1.0, 0.4] {
        // Memory ≥ pairs: identical to dense BFGS from B₀ = γI.
        let mut dense =
            InverseHessian::new(d, Store::Dense, InitScale::Fixed(gamma), 1e-8).unwrap();
        let mut lb =
            InverseHessian::new(d, Store::Lbfgs(20), InitScale::Fixed(gamma), 1e-8).unwrap();
        for (s, y) in &ps {
            dense.update(s, y);
            lb.update(s, y);
        }
        let e = rel_err(&lb.to_dense(), &dense.to_dense());
        assert!(e < 1e-10, "γ = {gamma}: L-BFGS vs dense {e}");
        // Memory m: dense BFGS from B₀ = γI over the newest m pairs.
        let m = 5;
        let mut lb =
            InverseHessian::new(d, Store::Lbfgs(m), InitScale::Fixed(gamma), 1e-8).unwrap();
        let mut dense =
            InverseHessian::new(d, Store::Dense, InitScale::Fixed(gamma), 1e-8).unwrap();
        for (s, y) in &ps {
            lb.update(s, y);
        }
        for (s, y) in &ps[ps.len() - m..] {
            dense.update(s, y);
        }
        let e = rel_err(&lb.to_dense(), &dense.to_dense());
        assert!(e < 1e-10, "γ = {gamma}, m = {m}: {e}");
        // And B v by the two-loop recursion equals the dense product.
        let v: Vec<f64> = (0..d).map(|j| (j as f64 - 4.0) / 3.0).collect();
        let mut out = vec![0.0; d];
        lb.apply(&v, &mut out);
        assert!(rel_err(&out, &matvec(&dense.to_dense(), d, &v)) < 1e-10);
    }
    // Scaled L-BFGS uses γ = sᵀy/yᵀy of the newest pair: after every update its matrix equals
    // dense BFGS from B₀ = γ_newest·I over the newest m pairs, and satisfies the secant
    // equation B y = s for the newest pair (Nocedal–Wright eq. 7.20 and Algorithm 7.4).
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let m = 3;
    let mut lb = InverseHessian::new(d, Store::Lbfgs(m), InitScale::Scaled, 1e-8).unwrap();
    for (k, (s, y)) in ps.iter().enumerate() {
        assert!(lb.update(s, y));
        let g = dot(s, y) / dot(y, y);
        assert!((lb.scale() - g).abs() < 1e-14 * g);
        let mut dense = InverseHessian::new(d, Store::Dense, InitScale::Fixed(g), 1e-8).unwrap();
        for (s2, y2) in &ps[(k + 1).saturating_sub(m)..=k] {
            dense.update(s2, y2);
        }
        let e = rel_err(&lb.to_dense(), &dense.to_dense());
        assert!(e < 1e-10, "scaled L-BFGS after pair {k}: {e}");
        let mut by = vec![0.0; d];
        lb.apply(y, &mut by);
        assert!(rel_err(&by, s) < 1e-10, "secant after pair {k}");
    }
    // The scaling changes the matrix (unscaled γ = 1 differs when γ_newest ≠ 1).
    let mut fixed = InverseHessian::new(d, Store::Lbfgs(m), InitScale::Fixed(1.0), 1e-8).unwrap();
    for (s, y) in &ps {
        fixed.update(s, y);
    }
    assert!((lb.scale() - 1.0).abs() > 1e-3);
    assert!(rel_err(&lb.to_dense(), &fixed.to_dense()) > 1e-6);
}

/// One standard HMC transition with inverse mass K = C M⁻¹ C (M = I: K = C²), written out from
/// the library's leapfrog: p′ = C⁻¹z (z the same d standard normals that QNHMC uses as p, so
/// p′ ~ N(0, K⁻¹)), L leapfrog steps, accept if u < min(1, exp(H₀ − H₁)) with the next uniform.
fn reference_hmc_step(
    t: &Target,
    c_chol: &Cholesky,
    k: &Metric,
    eps: f64,
    steps: usize,
    q: &mut Vec<f64>,
    rng: &mut ChainRng,
) -> (f64, bool) {
    use tallmc_core::kernel::leapfrog::leapfrog;
    let d = q.len();
    let mut z = PhasePoint::new(t, q);
    let mut p: Vec<f64> = (0..d).map(|_| normal(rng)).collect();
    c_chol.solve(&mut p);
    z.p = p;
    let h0 = z.hamiltonian(k);
    let mut v = vec![0.0; d];
    for _ in 0..steps {
        leapfrog(t, k, eps, &mut z, &mut v);
    }
    let h1 = z.hamiltonian(k);
    let a = (h0 - h1).exp().min(1.0);
    let accepted = tallmc_core::rng::uniform(rng) < a;
    if accepted {
        *q = z.q;
    }
    (a, accepted)
}

#[test]
fn at1a_qnhmc_step_is_hmc_with_inverse_mass_c2() {
    // Spec 001 §2.7: with C frozen, Qnhmc::step reproduces standard HMC with inverse mass
    // C M⁻¹ C from the same random numbers — same acceptance probability (up to floating-point
    // reassociation), the same MH decision and the same positions, step after step.
    use tallmc_core::kernel::qnhmc::{PairSource, Qnhmc, Scheme};
    use tallmc_core::kernel::Kernel;
    let d = 6;
    let t = target(d, 1.0, 21);
    let mut rng = chain_rng(21, 5);
    let c = random_spd(d, 0.3, &mut rng);
    let c_chol = Cholesky::new(&c, d).unwrap();
    let k = Metric::dense(matmul(&c, &c, d), d).unwrap();
    // ε large enough that some proposals are rejected.
    let (eps, steps) = (0.2, 8);
    let qn = Qnhmc::new(
        eps,
        steps,
        0.0,
        Metric::Identity(d),
        InverseHessian::from_dense(c.clone(), d, 1e-8).unwrap(),
        Scheme::QuasiNewton,
        PairSource::Sample,
    )
    .unwrap();
    let q0: Vec<f64> = (0..d).map(|_| normal(&mut rng)).collect();
    let mut state = qn.init(&t, &q0).unwrap();
    let mut q_ref = q0.clone();
    let mut rng_qn = chain_rng(99, 0);
    let mut rng_ref = chain_rng(99, 0);
    let (mut accepted, mut rejected) = (0, 0);
    for it in 0..300 {
        let info = qn.step(&mut rng_qn, &t, &mut state);
        let (a, acc) = reference_hmc_step(&t, &c_chol, &k, eps, steps, &mut q_ref, &mut rng_ref);
        assert!(!info.divergent);
        assert_eq!(info.accepted, acc, "iteration {it}: MH decision");
        assert!(
            (info.accept_prob - a).abs() < 1e-9,
            "iteration {it}: {} vs {a}",
            info.accept_prob
        );
        let e = rel_err(&state.point.q, &q_ref);
        assert!(e < 1e-10, "iteration {it}: positions differ by {e}");
        // Both consumed the same random numbers.
        assert_eq!(rng_qn, rng_ref, "iteration {it}: random streams diverged");
        if acc {
            accepted += 1;
        } else {
            rejected += 1;
        }
    }
    eprintln!("step equivalence: {accepted} accepted, {rejected} rejected of 300");
    assert!(
        accepted > 30 && rejected > 10,
        "both branches: {accepted} / {rejected}"
    );
}

#[test]
fn settings_are_validated() {
    use tallmc_core::kernel::qnhmc::{Adapt, PairSource, Scheme};
    use tallmc_core::sampler::qnhmc::options_from_settings;
    use tallmc_core::settings::Settings;
    let parse = |kv: &[&str], d: usize| {
        let mut s = Settings::new();
        for p in kv {
            s.insert_pair(p).unwrap();
        }
        options_from_settings(&s, d)
    };
    let o = parse(&[], 10).unwrap();
    assert_eq!(
        (o.adapt, o.scheme, o.pairs, o.store, o.n_steps),
        (
            Adapt::Freeze,
            Scheme::QuasiNewton,
            PairSource::Sample,
            Store::Dense,
            10
        )
    );
    assert!(o.step_size.is_nan());
    // L is automatic by default: round(traj_len/ε) with traj_len = π/2; a given L is fixed, and
    // traj_len with a fixed L is refused rather than ignored.
    assert_eq!(o.traj_len, Some(std::f64::consts::FRAC_PI_2));
    let o = parse(&["L=7"], 10).unwrap();
    assert_eq!((o.n_steps, o.traj_len), (7, None));
    assert_eq!(parse(&["traj_len=1.2"], 10).unwrap().traj_len, Some(1.2));
    assert!(parse(&["L=7", "traj_len=1.2"], 10).is_err());
    assert!(parse(&["traj_len=0"], 10).is_err());
    assert!(parse(&["traj_len=nan"], 10).is_err());
    // store=auto switches to L-BFGS above d = 200.
    assert_eq!(parse(&[], 201).unwrap().store, Store::Lbfgs(7));
    assert_eq!(
        parse(&["store=lbfgs", "memory=3"], 5).unwrap().store,
        Store::Lbfgs(3)
    );
    // memory has no effect with explicit dense storage (with store=auto it applies above
    // d = 200 and is accepted below); bad values are rejected.
    assert_eq!(parse(&["memory=3"], 5).unwrap().store, Store::Dense);
    assert_eq!(parse(&["memory=3"], 201).unwrap().store, Store::Lbfgs(3));
    assert!(parse(&["store=dense", "memory=3"], 5).is_err());
    assert!(parse(&["store=dense", "memory=3"], 500).is_err());
    assert!(parse(&["adapt=sometimes"], 5).is_err());
    assert!(parse(&["step_size=-1"], 5).is_err());
    assert!(parse(&["L=0"], 5).is_err());
    assert!(parse(&["curvature_tol=2"], 5).is_err());
    let o = parse(
        &[
            "adapt=continuous",
            "precondition=mass",
            "pairs=trajectory",
            "init_scale=identity",
        ],
        5,
    )
    .unwrap();
    assert_eq!(
        (o.adapt, o.scheme, o.pairs, o.init),
        (
            Adapt::Continuous,
            Scheme::Mass,
            PairSource::Trajectory,
            InitScale::Fixed(1.0)
        )
    );
    // Constructors validate too.
    assert!(InverseHessian::new(3, Store::Lbfgs(0), InitScale::Scaled, 1e-8).is_err());
    assert!(InverseHessian::new(3, Store::Dense, InitScale::Fixed(-1.0), 1e-8).is_err());
    assert!(InverseHessian::from_dense(vec![1.0, 2.0, 2.0, 1.0], 2, 1e-8).is_err());
    assert!(InverseHessian::from_dense(vec![1.0, 0.5, 0.4, 1.0], 2, 1e-8).is_err());
}

#[test]
fn automatic_steps_follow_the_step_size() {
    // L = max(1, round(T/ε)) at construction and after every change of ε, capped at 1 000; a
    // kernel without a trajectory length keeps its L.
    use tallmc_core::kernel::hmc::MAX_AUTO_STEPS;
    use tallmc_core::kernel::qnhmc::{PairSource, Qnhmc, Scheme};
    use tallmc_core::kernel::Tunable;
    let d = 3;
    let kernel = |eps: f64| {
        Qnhmc::new(
            eps,
            10,
            0.0,
            Metric::Identity(d),
            InverseHessian::new(d, Store::Dense, InitScale::Fixed(1.0), 1e-8).unwrap(),
            Scheme::QuasiNewton,
            PairSource::Sample,
        )
        .unwrap()
    };
    let half_pi = std::f64::consts::FRAC_PI_2;
    let mut k = kernel(1.0).with_traj_len(half_pi).unwrap();
    assert_eq!((k.n_steps(), k.traj_len()), (2, Some(half_pi)));
    k.set_step_size(0.5);
    assert_eq!(k.n_steps(), 3);
    k.set_step_size(0.1);
    assert_eq!(k.n_steps(), 16);
    k.set_step_size(5.0);
    assert_eq!(k.n_steps(), 1);
    k.set_step_size(1e-9);
    assert_eq!(k.n_steps(), MAX_AUTO_STEPS);
    let mut fixed = kernel(1.0);
    fixed.set_step_size(0.1);
    assert_eq!((fixed.n_steps(), fixed.traj_len()), (10, None));
    assert!(kernel(1.0).with_traj_len(0.0).is_err());
    assert!(kernel(1.0).with_traj_len(f64::INFINITY).is_err());
}
