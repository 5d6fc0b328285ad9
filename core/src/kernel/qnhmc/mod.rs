//! Quasi-Newton Hamiltonian Monte Carlo (Fu, Luo & Zhang 2016): HMC whose two leapfrog updates
//! are both multiplied by a BFGS / L-BFGS estimate C of the inverse Hessian of U = −log π,
//! frozen within each proposal, and the "proper preconditioning" control (HMC with M⁻¹ = C).
//!
//! # Formula
//! Dynamics (paper Eq. 7), C symmetric positive definite and constant along the trajectory:
//!   dθ/dt = C M⁻¹ p,   dp/dt = −C ∇U(θ),   H(θ, p) = U(θ) + ½ pᵀ M⁻¹ p,   p ~ N(0, M).
//! Leapfrog with step ε (L steps, 2L + 1 products with C, L gradients):
//!   p ← p − (ε/2) C ∇U(θ);  θ ← θ + ε C M⁻¹ p;  p ← p − (ε/2) C ∇U(θ);
//! then Metropolis–Hastings: accept with probability min(1, exp(H₀ − H₁)) (the paper's printed
//! exp(E₁ − E₀) is a sign typo). With p′ = C⁻¹ p one proposal is exactly a standard HMC proposal
//! with inverse mass C M⁻¹ C started from (θ, C⁻¹ p), so a frozen C gives an exact kernel; with
//! C ≈ Σ and M = I the inverse mass is ≈ Σ², which inverts the spectrum rather than
//! preconditioning it (condition number unchanged). The control `precondition=mass` is standard
//! HMC with M⁻¹ = C (all frequencies ≈ 1 when C ≈ Σ).
//!
//! BFGS (paper Eq. 1), s = θ₊ − θ, y = ∇U(θ₊) − ∇U(θ), ρ = 1/(yᵀs), u = B y:
//!   B⁺ = (I − ρ s yᵀ) B (I − ρ y sᵀ) + ρ s sᵀ = B − ρ (s uᵀ + u sᵀ) + (ρ² yᵀu + ρ) s sᵀ.
//! A pair is used only if yᵀs > δ ‖s‖ ‖y‖ (curvature safeguard; the paper has none, and without
//! it B loses positive definiteness on non-convex U); a pair whose ρ or updated B is not finite
//! is skipped too. Optional containment (`min_eig`, `max_eig`, dense only): the eigenvalues of B
//! are clipped to [λ_lo, λ_hi] after every update (spec 001 §6.1 fix b). Initial scaling: B₀ = γ I with
//! γ = sᵀy / yᵀy of the first accepted pair (Nocedal–Wright), or γ = 1 (the paper's B₀ = I).
//! L-BFGS keeps the newest m pairs and applies B by the two-loop recursion, B₀ = γ I with γ from
//! the newest pair (scaled) or fixed.
//!
//! Adaptation (the pairs of an accepted proposal are committed after it; nothing changes within
//! a proposal): `freeze` (default) adapts B during warm-up until the terminal step-size buffer and
//! then keeps it fixed — exact; `off` keeps B₀; `continuous` is the paper's Algorithm 2, which
//! keeps adapting on the chain's own history, so the chain is **not** π-invariant (Theorem 4 of
//! the paper fails: the kernel depends on the past; measured bias on non-Gaussian targets).
//! Pairs: `sample` (one pair θₜ → θₜ₊₁ per accepted iteration, §3.5) or `trajectory` (the L
//! leapfrog pairs of an accepted proposal, Algorithm 2 lines 12/16).
//!
//! Step size: fixed, or (auto) dual averaging during warm-up, with the doubling heuristic rerun
//! and the averaging restarted after the first BFGS update, at the end of each of Stan's slow
//! windows, and when B freezes (B adapts until warm-up − terminal buffer: 50 iterations, or
//! 10% of a warm-up shorter than 150, rounded up below 20; never without warm-up).
//! The mass control's metric M⁻¹ = C is rebuilt at those same checkpoints (and after every
//! update with `continuous`); a rebuild whose Cholesky factor fails keeps the previous metric and
//! is counted in the extra `mass_refresh_failures`.
//!
//! ## References
//! T. Fu, L. Luo, Z. Zhang (2016), *Quasi-Newton Hamiltonian Monte Carlo*, UAI.
//! J. Nocedal, S. J. Wright (2006), *Numerical Optimization*, §6.1 and Algorithm 7.4.

use super::hmc::MAX_ENERGY_ERROR;
use super::leapfrog::{leapfrog, PhasePoint};
use super::{accept_prob, Adaptable, HasPosition, Kernel, KernelInfo, Metric, StepInfo, Tunable};
use crate::cost::Cost;
use crate::error::Error;
use crate::model::LogDensity;
use crate::rng::{ChainRng, Rng};
use alloc::vec;
use alloc::vec::Vec;

mod inverse_hessian;
pub use inverse_hessian::InverseHessian;
pub(crate) use inverse_hessian::{check_curvature_tol, dense_len};

/// Default curvature tolerance δ of the skip rule yᵀs > δ ‖s‖ ‖y‖.
pub const DEFAULT_CURVATURE_TOL: f64 = 1e-8;
/// Default L-BFGS memory (the paper's MNIST setting).
pub const DEFAULT_MEMORY: usize = 7;
/// Largest d for which `store=auto` keeps a dense d × d matrix (above it: L-BFGS).
pub const AUTO_DENSE_MAX_D: usize = 200;
/// Largest d for `precondition=mass` (it needs a Cholesky factor of the d × d matrix).
pub const MASS_MAX_D: usize = 2000;
/// Largest d for dense storage (`store=dense`, [`InverseHessian::from_dense`]): a d × d matrix
/// of f64 is 8d² bytes (200 MB at d = 5000); above it use `store=lbfgs`.
pub const DENSE_MAX_D: usize = 5000;

/// How the inverse-Hessian estimate is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// A dense d × d matrix (O(d²) per product and update).
    Dense,
    /// The newest m pairs, applied by the two-loop recursion (O(md) per product).
    Lbfgs(usize),
}

/// The initial matrix B₀ = γ I.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum InitScale {
    /// γ fixed (γ = 1 is the paper's B₀ = I).
    Fixed(f64),
    /// γ = sᵀy / yᵀy: of the first accepted pair (dense), of the newest pair (L-BFGS); 1 before.
    Scaled,
}

/// Which (s, y) pairs feed BFGS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairSource {
    /// One pair per accepted iteration: s = θₜ₊₁ − θₜ.
    Sample,
    /// The L leapfrog pairs of each accepted trajectory (the paper's Algorithm 2).
    Trajectory,
}

/// When B adapts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Adapt {
    /// During warm-up (until the terminal step-size buffer), then frozen: exact.
    Freeze,
    /// Never: C = B₀.
    Off,
    /// On every accepted proposal, forever (the paper's scheme): not exact.
    Continuous,
}

/// How the estimate enters the dynamics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// The paper: C multiplies both updates (inverse mass C M⁻¹ C).
    QuasiNewton,
    /// The control: standard HMC with inverse mass M⁻¹ = C.
    Mass,
}

/// QNHMC leapfrog: `steps` steps of size `eps` of the dynamics dθ/dt = C M⁻¹ p,
/// dp/dt = C ∇log π(θ), from `z` in place (interior half-kicks fused: 2·steps + 1 products with
/// C, `steps` gradient calls). Returns the steps done: it stops early (divergent) when log π or
/// its gradient is not finite or U(θ) exceeds `h0` + [`MAX_ENERGY_ERROR`]. `record` receives, for
/// each step done, s = θ₊ − θ then y = ∇U(θ₊) − ∇U(θ) (2d numbers per step).
/// If the dimensions of `c`, `momentum`, `z.p`, `z.grad` and `z.q` disagree nothing is done and
/// `(0, true)` (divergent) is returned.
#[allow(clippy::too_many_arguments)]
pub fn qn_integrate<T: LogDensity + ?Sized>(
    target: &T,
    c: &InverseHessian,
    momentum: &Metric,
    eps: f64,
    steps: usize,
    z: &mut PhasePoint,
    h0: f64,
    mut record: Option<&mut Vec<f64>>,
) -> (usize, bool) {
    let d = z.q.len();
    if c.dim() != d || momentum.dim() != d || z.p.len() != d || z.grad.len() != d {
        return (0, true);
    }
    let mut v = vec![0.0; d];
    let mut cv = vec![0.0; d];
    let mut old_q = vec![0.0; d];
    let mut old_g = vec![0.0; d];
    c.apply(&z.grad, &mut cv);
    for (p, x) in z.p.iter_mut().zip(&cv) {
        *p += 0.5 * eps * x;
    }
    for i in 0..steps {
        momentum.velocity(&z.p, &mut v);
        c.apply(&v, &mut cv);
        if record.is_some() {
            old_q.copy_from_slice(&z.q);
            old_g.copy_from_slice(&z.grad);
        }
        for (q, x) in z.q.iter_mut().zip(&cv) {
            *q += eps * x;
        }
        z.log_density = target.log_density_grad(&z.q, &mut z.grad);
        if let Some(r) = record.as_deref_mut() {
            r.extend(z.q.iter().zip(&old_q).map(|(a, b)| a - b));
            // y = ∇U(θ₊) − ∇U(θ) = −(∇log π(θ₊) − ∇log π(θ)).
            r.extend(z.grad.iter().zip(&old_g).map(|(a, b)| b - a));
        }
        if !z.is_finite() || -z.log_density - h0 > MAX_ENERGY_ERROR {
            return (i + 1, true);
        }
        let w = if i + 1 == steps { 0.5 * eps } else { eps };
        c.apply(&z.grad, &mut cv);
        for (p, x) in z.p.iter_mut().zip(&cv) {
            *p += w * x;
        }
    }
    (steps, false)
}

/// The state of a QNHMC chain: the phase point, and the (s, y) pairs staged by the last
/// proposal (empty when it was rejected).
#[derive(Debug, Clone, PartialEq)]
pub struct QnState {
    /// Position, cached log density and gradient.
    pub point: PhasePoint,
    /// Staged pairs, each s then y (2d numbers per pair).
    pub staged: Vec<f64>,
}

impl HasPosition for QnState {
    fn position(&self) -> &[f64] {
        &self.point.q
    }
}

/// The QNHMC kernel with its current (frozen within a step) inverse-Hessian estimate.
#[derive(Debug, Clone, PartialEq)]
pub struct Qnhmc {
    step_size: f64,
    n_steps: usize,
    /// Some(T): L follows ε ([`auto_steps`](super::hmc::auto_steps)).
    traj_len: Option<f64>,
    jitter: f64,
    momentum: Metric,
    precond: InverseHessian,
    scheme: Scheme,
    pairs: PairSource,
    mass: Metric,
    mass_stale: bool,
    mass_failures: usize,
}

impl Qnhmc {
    /// A kernel with step size ε > 0, `n_steps` ≥ 1, jitter ∈ [0, 1), momentum metric M⁻¹
    /// (`momentum`; the paper's M = I) and the estimate `precond` as C.
    pub fn new(
        step_size: f64,
        n_steps: usize,
        jitter: f64,
        momentum: Metric,
        precond: InverseHessian,
        scheme: Scheme,
        pairs: PairSource,
    ) -> Result<Self, Error> {
        super::hmc::check_static(step_size, n_steps, jitter)?;
        let d = precond.dim();
        Error::check_dim("momentum metric", d, momentum.dim())?;
        if scheme == Scheme::Mass && d > MASS_MAX_D {
            return Err(Error::setting(
                "precondition",
                alloc::format!("mass needs a dense factor; d = {d} > {MASS_MAX_D}"),
            ));
        }
        let mut k = Qnhmc {
            step_size,
            n_steps,
            traj_len: None,
            jitter,
            momentum,
            precond,
            scheme,
            pairs,
            mass: Metric::Identity(d),
            mass_stale: true,
            mass_failures: 0,
        };
        k.refresh_mass()?;
        Ok(k)
    }

    /// Number of leapfrog steps L.
    pub fn n_steps(&self) -> usize {
        self.n_steps
    }

    /// Automatic L: from now on L = round(T/ε) in [1, 1 000] for the current ε
    /// ([`auto_steps`](super::hmc::auto_steps)), following every change of ε (`traj_len` T > 0
    /// and finite).
    pub fn with_traj_len(mut self, traj_len: f64) -> Result<Self, Error> {
        if !(traj_len.is_finite() && traj_len > 0.0) {
            return Err(Error::setting("traj_len", "must be a finite number > 0"));
        }
        self.traj_len = Some(traj_len);
        self.n_steps = super::hmc::auto_steps(traj_len, self.step_size);
        Ok(self)
    }

    /// The trajectory length T of an automatic L (None: L fixed).
    pub fn traj_len(&self) -> Option<f64> {
        self.traj_len
    }
    /// The estimate C in force.
    pub fn precond(&self) -> &InverseHessian {
        &self.precond
    }
    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Feed the pairs staged by an accepted proposal to the estimate; returns how many were
    /// used. The next step uses the updated C in the QN scheme; the mass scheme's metric
    /// M⁻¹ = C is rebuilt only by [`refresh_mass`](Self::refresh_mass) (a Cholesky factor,
    /// O(d³)).
    pub fn commit(&mut self, staged: &[f64]) -> usize {
        let d = self.precond.dim();
        let mut used = 0;
        for pair in staged.chunks_exact(2 * d) {
            let (s, y) = pair.split_at(d);
            if self.precond.update(s, y) {
                used += 1;
            }
        }
        if used > 0 && self.scheme == Scheme::Mass {
            self.mass_stale = true;
        }
        used
    }

    /// Mass scheme: rebuild the metric M⁻¹ = C if C changed since the last rebuild. If C is
    /// not numerically SPD (its Cholesky factor fails) the previous metric stays in force, the
    /// failure is counted ([`mass_failures`](Self::mass_failures)) and the error returned.
    /// No-op in the QN scheme.
    pub fn refresh_mass(&mut self) -> Result<(), Error> {
        if self.scheme == Scheme::Mass && self.mass_stale {
            let d = self.precond.dim();
            self.mass_stale = false;
            match Metric::dense(self.precond.to_dense(), d) {
                Ok(m) => self.mass = m,
                Err(e) => {
                    self.mass_failures += 1;
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Mass scheme: how many rebuilds of M⁻¹ = C failed (the old metric was kept).
    pub fn mass_failures(&self) -> usize {
        self.mass_failures
    }

    /// The metric of the kinetic energy ½ pᵀ M⁻¹ p in force: the momentum metric M⁻¹ (QN
    /// scheme) or the last successfully rebuilt C (mass scheme).
    pub fn kinetic(&self) -> &Metric {
        self.kinetic_metric()
    }

    /// The metric of the kinetic energy: M⁻¹ (QN scheme) or C (mass scheme).
    fn kinetic_metric(&self) -> &Metric {
        match self.scheme {
            Scheme::QuasiNewton => &self.momentum,
            Scheme::Mass => &self.mass,
        }
    }

    /// Integrate `steps` steps from `z` (momentum already drawn); returns (steps, divergent).
    fn integrate<T: LogDensity + ?Sized>(
        &self,
        target: &T,
        eps: f64,
        steps: usize,
        z: &mut PhasePoint,
        h0: f64,
        record: Option<&mut Vec<f64>>,
    ) -> (usize, bool) {
        match self.scheme {
            Scheme::QuasiNewton => qn_integrate(
                target,
                &self.precond,
                &self.momentum,
                eps,
                steps,
                z,
                h0,
                record,
            ),
            Scheme::Mass => {
                let d = z.q.len();
                let mut v = vec![0.0; d];
                let mut old_q = vec![0.0; d];
                let mut old_g = vec![0.0; d];
                let mut record = record;
                for i in 0..steps {
                    if record.is_some() {
                        old_q.copy_from_slice(&z.q);
                        old_g.copy_from_slice(&z.grad);
                    }
                    leapfrog(target, &self.mass, eps, z, &mut v);
                    if let Some(r) = record.as_deref_mut() {
                        r.extend(z.q.iter().zip(&old_q).map(|(a, b)| a - b));
                        r.extend(z.grad.iter().zip(&old_g).map(|(a, b)| b - a));
                    }
                    let h = z.hamiltonian(&self.mass);
                    if !z.is_finite() || !h.is_finite() || h - h0 > MAX_ENERGY_ERROR {
                        return (i + 1, true);
                    }
                }
                (steps, false)
            }
        }
    }
}

impl<T: LogDensity + ?Sized> Kernel<T> for Qnhmc {
    type State = QnState;

    fn init(&self, target: &T, position: &[f64]) -> Result<QnState, Error> {
        let point = super::hmc::init_point(target, position, self.kinetic_metric())?;
        Ok(QnState {
            point,
            staged: Vec::new(),
        })
    }

    fn step(&self, rng: &mut ChainRng, target: &T, state: &mut QnState) -> StepInfo {
        let eps = super::hmc::jittered(rng, self.step_size, self.jitter);
        let metric = self.kinetic_metric();
        let mut z = state.point.clone();
        metric.sample_momentum(rng, &mut z.p);
        let h0 = z.hamiltonian(metric);
        state.staged.clear();
        let record = match self.pairs {
            PairSource::Trajectory => Some(&mut state.staged),
            PairSource::Sample => None,
        };
        let (done, mut divergent) = self.integrate(target, eps, self.n_steps, &mut z, h0, record);
        let h = z.hamiltonian(metric);
        if !divergent && (!h.is_finite() || h - h0 > MAX_ENERGY_ERROR) {
            divergent = true;
        }
        let (a, accepted) = super::metropolis(rng, divergent, || h0 - h);
        let energy = if accepted {
            if self.pairs == PairSource::Sample {
                let old = &state.point;
                state
                    .staged
                    .extend(z.q.iter().zip(&old.q).map(|(a, b)| a - b));
                state
                    .staged
                    .extend(z.grad.iter().zip(&old.grad).map(|(a, b)| b - a));
            }
            state.point = z;
            h
        } else {
            state.staged.clear();
            h0
        };
        let e = target.evals_per_call() * done as u64;
        StepInfo {
            accept_prob: a,
            accepted,
            divergent,
            lik_evals: e,
            grad_evals: e,
            n_leapfrog: done as u32,
            step_size: eps,
            energy,
            extra: self.extras(),
            ..StepInfo::default()
        }
    }
}

impl Tunable for Qnhmc {
    fn step_size(&self) -> f64 {
        self.step_size
    }
    fn set_step_size(&mut self, eps: f64) {
        self.step_size = eps;
        if let Some(t) = self.traj_len {
            self.n_steps = super::hmc::auto_steps(t, eps);
        }
    }
    /// The kinetic-energy metric in force (mass scheme: M⁻¹ = C).
    fn metric(&self) -> &Metric {
        self.kinetic_metric()
    }
    /// Sets the momentum metric M⁻¹ of the QN scheme (the mass scheme's metric is C and is
    /// only rebuilt from it: ignored there).
    fn set_metric(&mut self, metric: Metric) {
        if metric.dim() == self.precond.dim() && self.scheme == Scheme::QuasiNewton {
            self.momentum = metric;
        }
    }
}

impl Qnhmc {
    /// [`StepInfo::extra`]: BFGS updates, skipped pairs, the estimate's scale, failed mass
    /// refreshes.
    pub fn extras(&self) -> [f64; 4] {
        let p = &self.precond;
        [
            p.updates() as f64,
            p.skipped() as f64,
            p.scale(),
            self.mass_failures as f64,
        ]
    }
}

impl<T: LogDensity + ?Sized> KernelInfo<T> for Qnhmc {
    fn extra_names(&self) -> Vec<&'static str> {
        alloc::vec![
            "bfgs_updates",
            "bfgs_skipped",
            "precond_scale",
            "mass_refresh_failures",
        ]
    }
    /// ε, L, the BFGS updates used and the estimate's scale.
    fn resolved(&self, _state: &QnState) -> Vec<(&'static str, f64)> {
        alloc::vec![
            ("eps", self.step_size),
            ("L", self.n_steps() as f64),
            ("bfgs_updates", self.precond.updates() as f64),
            ("precond_scale", self.precond.scale()),
        ]
    }
}

impl<T: LogDensity + ?Sized> Adaptable<T> for Qnhmc {
    fn probe<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        target: &T,
        state: &QnState,
        eps: f64,
    ) -> (f64, Cost) {
        let metric = self.kinetic_metric();
        let mut z = state.point.clone();
        metric.sample_momentum(rng, &mut z.p);
        let h0 = z.hamiltonian(metric);
        let (_, divergent) = self.integrate(target, eps, 1, &mut z, h0, None);
        let a = if divergent {
            0.0
        } else {
            accept_prob(h0 - z.hamiltonian(metric))
        };
        (a, Cost::value_and_grad(target.evals_per_call()))
    }
}
