//! HMC with energy-conserving subsampling (HMC-ECS): perturbed (bias-corrected difference
//! estimator) and signed (block-Poisson estimator) variants.
//!
//! One iteration is a Gibbs sweep over (u, θ):
//! 1. u | θ: pseudo-marginal MH with a block proposal (perturbed: redraw one of G blocks of
//!    the subsample; signed: redraw κ of the λ products), accepted with probability
//!    min{1, |L̂(θ; u′)| / |L̂(θ; u)|};
//! 2. (θ, p) | u: HMC with L leapfrog steps on Ĥ(θ, p) = Û(θ; u) + ½pᵀM⁻¹p, the same u and the
//!    same Û in the dynamics and in the accept test (energy conserving).
//!
//! # Formula
//! Perturbed: Û(θ; u) = −[ℓ̂(θ) − ½σ̂²(θ)] − log p(θ),  ∇Û = −∇ℓ̂ + ½∇σ̂² − ∇log p.
//! Signed:    Û(θ; u) = −log|L̂(θ)| − log p(θ); draws carry s = sign L̂(θ; u) and expectations
//!            are Σⱼ ψ(θⱼ)sⱼ / Σⱼ sⱼ.
//! Leapfrog: p ← p − (ε/2)∇Û(θ); L times {θ ← θ + εM⁻¹p; p ← p − ε∇Û(θ)} with the last
//! momentum update halved; α = min{1, exp(Ĥ₀ − Ĥ_L)}. M is the precision (−∇²log π at the
//! centre), so M⁻¹ ≈ posterior covariance ([`Metric`] stores M⁻¹).
//!
//! Cost per iteration: (m/G) joint evaluations for the u-step plus L·m for the trajectory
//! (signed: Σ X_l·m per evaluation of the estimator).
//!
//! ## References
//! Dang, Quiroz, Kohn, Tran, Villani (2019), *Hamiltonian Monte Carlo with energy conserving
//! subsampling*, JMLR 20(100), Algorithm 1.

use super::{HasPosition, Kernel, Metric, StepInfo};
use crate::error::Error;
use crate::estimator::{
    BlockPoisson, ControlVariates, DiffEstimator, DiffEval, Gathered, PoissonEval, PoissonSample,
};
use crate::math;
use crate::model::{DataModel, LogDensity};
use crate::rng::{uniform, uniform_index, ChainRng, Rng};
use alloc::vec;
use alloc::vec::Vec;

/// Which likelihood estimator the kernel uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EcsEstimator {
    /// Bias-corrected difference estimator exp(ℓ̂ − σ̂²/2) with G-block updates of u.
    Perturbed(DiffEstimator),
    /// Block-Poisson estimator; κ products are redrawn per u-update.
    Signed {
        /// The estimator (m, λ, a).
        est: BlockPoisson,
        /// Products redrawn per u-step (1 ≤ κ ≤ λ).
        kappa: usize,
    },
}

/// The subsample u.
#[derive(Debug, Clone, PartialEq)]
pub enum Subsample {
    /// m indices in G blocks.
    Diff(Vec<usize>),
    /// λ products of X_l mini-batches.
    Poisson(PoissonSample),
}

/// The estimator evaluated at one θ for one u.
#[derive(Debug, Clone)]
pub enum EcsEval {
    /// Difference-estimator sums and estimates.
    Diff(DiffEval),
    /// Block-Poisson terms and estimates.
    Poisson(PoissonEval),
}

impl EcsEval {
    /// log L̂ (perturbed: ℓ̂ − σ̂²/2) or log|L̂| (signed).
    pub fn log_lik(&self) -> f64 {
        match self {
            EcsEval::Diff(e) => e.log_lhat,
            EcsEval::Poisson(e) => e.log_abs,
        }
    }
    /// Its gradient.
    pub fn grad(&self) -> &[f64] {
        match self {
            EcsEval::Diff(e) => &e.grad,
            EcsEval::Poisson(e) => &e.grad,
        }
    }
    /// sign L̂ (always 1 for the perturbed estimator).
    pub fn sign(&self) -> f64 {
        match self {
            EcsEval::Diff(_) => 1.0,
            EcsEval::Poisson(e) => e.sign,
        }
    }
    /// σ̂² (NaN for block-Poisson).
    pub fn sigma2(&self) -> f64 {
        match self {
            EcsEval::Diff(e) => e.sigma2,
            EcsEval::Poisson(_) => f64::NAN,
        }
    }
}

/// Potential Û(θ; u) at one point with its gradient.
#[derive(Debug, Clone)]
pub struct EcsPoint {
    /// The estimator at θ.
    pub eval: EcsEval,
    /// Û(θ; u) = −log L̂ − log p(θ).
    pub potential: f64,
    /// ∇Û(θ; u).
    pub grad: Vec<f64>,
}

/// How the θ-step moves with u fixed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trajectory {
    /// L leapfrog steps and a Metropolis test (Algorithm 1 of the paper).
    Static,
    /// The No-U-Turn sampler on the same fixed-u Hamiltonian, with this maximum tree depth.
    Nuts(usize),
}

/// HMC-ECS parameters: control variates, estimator, metric, ε, L.
#[derive(Debug, Clone)]
pub struct HmcEcs {
    /// Control variates (centre θ*, sums A, B).
    pub cv: ControlVariates,
    /// Estimator and its u-proposal.
    pub estimator: EcsEstimator,
    /// M⁻¹.
    pub metric: Metric,
    /// Step size ε.
    pub step_size: f64,
    /// Leapfrog steps L (static trajectories).
    pub n_leapfrog: usize,
    /// Static L or NUTS.
    pub trajectory: Trajectory,
    /// The naive scheme instead of energy conservation: a fresh u every iteration (no u-step),
    /// the same fixed-u leapfrog trajectory, accepted with the full-data Hamiltonian. Exact for
    /// π(θ) (u is independent of θ), but each iteration costs 2n likelihood evaluations and the
    /// acceptance falls with the estimator's error (spec 000, Test 6).
    pub full_energy: bool,
}

/// The fixed-u potential as a log density −Û(θ; u), so any kernel over a
/// [`LogDensity`] (NUTS) can move θ with the energy-conserving Hamiltonian.
struct FixedU<'a> {
    kernel: &'a HmcEcs,
    model: &'a dyn DataModel,
    u: &'a Subsample,
    gathered: &'a [Gathered],
    scratch: core::cell::RefCell<EcsPoint>,
    evals_per_call: u64,
}

impl LogDensity for FixedU<'_> {
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn log_density(&self, theta: &[f64]) -> f64 {
        let mut s = self.scratch.borrow_mut();
        self.kernel
            .evaluate_in(self.model, theta, self.u, self.gathered, &mut s);
        finite_or_neg_inf(-s.potential)
    }
    fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let mut s = self.scratch.borrow_mut();
        self.kernel
            .evaluate_in(self.model, theta, self.u, self.gathered, &mut s);
        for (g, x) in grad.iter_mut().zip(&s.grad) {
            *g = -x;
        }
        finite_or_neg_inf(-s.potential)
    }
    fn evals_per_call(&self) -> u64 {
        self.evals_per_call
    }
}

fn finite_or_neg_inf(x: f64) -> f64 {
    if x.is_nan() {
        f64::NEG_INFINITY
    } else {
        x
    }
}

/// Chain state: θ, u, the estimator at (θ, u) and scratch buffers.
#[derive(Debug, Clone)]
pub struct HmcEcsState {
    theta: Vec<f64>,
    /// The current subsample.
    pub u: Subsample,
    /// Û and ∇Û at (θ, u).
    pub point: EcsPoint,
    prop: EcsPoint,
    theta_new: Vec<f64>,
    p: Vec<f64>,
    v: Vec<f64>,
    idx_buf: Vec<usize>,
    /// The subsample's rows in contiguous buffers for the θ-step (GLMs): one for the perturbed
    /// estimator's u, one per product for the signed one's.
    gathered: Vec<Gathered>,
    /// Acceptance probability of the last u-step.
    pub last_u_accept: f64,
    /// Index of the block the last u-step refreshed (perturbed estimator), −1 if the refresh was
    /// rejected, NaN when there was no block u-step (signed estimator, `energy=full`).
    pub last_refreshed_block: f64,
}

impl HasPosition for HmcEcsState {
    fn position(&self) -> &[f64] {
        &self.theta
    }
}

impl HmcEcs {
    /// Build and validate.
    pub fn new(
        cv: ControlVariates,
        estimator: EcsEstimator,
        metric: Metric,
        step_size: f64,
        n_leapfrog: usize,
    ) -> Result<Self, Error> {
        if !(step_size > 0.0 && step_size.is_finite()) {
            return Err(Error::setting(
                "eps",
                "step size must be positive and finite",
            ));
        }
        if n_leapfrog == 0 {
            return Err(Error::setting(
                "L",
                "number of leapfrog steps must be at least 1",
            ));
        }
        Error::check_dim("metric", cv.centre().len(), metric.dim())?;
        if let EcsEstimator::Signed { est, kappa } = estimator {
            if kappa == 0 || kappa > est.lambda() {
                return Err(Error::setting("kappa", "must be in [1, lambda]"));
            }
        }
        Ok(HmcEcs {
            cv,
            estimator,
            metric,
            step_size,
            n_leapfrog,
            trajectory: Trajectory::Static,
            full_energy: false,
        })
    }

    /// Accept with the full-data Hamiltonian and redraw u every iteration (the naive scheme;
    /// perturbed estimator and static trajectories only).
    pub fn with_full_energy(mut self) -> Result<Self, Error> {
        if !matches!(self.estimator, EcsEstimator::Perturbed(_)) {
            return Err(Error::setting(
                "energy",
                "full is only available for the perturbed estimator (hmc-ecs)",
            ));
        }
        if let Trajectory::Nuts(_) = self.trajectory {
            return Err(Error::setting("energy", "full needs trajectory=static"));
        }
        self.full_energy = true;
        Ok(self)
    }

    /// Full-data potential −log p(θ) − Σᵢ ℓᵢ(θ) (the naive accept step; n evaluations).
    fn full_potential(model: &dyn DataModel, theta: &[f64]) -> f64 {
        -(model.log_prior(theta) + model.log_lik_all(theta))
    }

    /// Use NUTS (maximum tree depth in 1..=30) instead of a static trajectory for the θ-step.
    pub fn with_nuts(mut self, max_depth: usize) -> Result<Self, Error> {
        if !(1..=30).contains(&max_depth) {
            return Err(Error::setting("max_depth", "must be in 1..=30"));
        }
        self.trajectory = Trajectory::Nuts(max_depth);
        Ok(self)
    }

    /// The θ-step by NUTS on the fixed-u Hamiltonian; returns (info, evaluations).
    fn nuts_step(
        &self,
        rng: &mut ChainRng,
        model: &dyn DataModel,
        st: &mut HmcEcsState,
        max_depth: usize,
    ) -> StepInfo {
        let Ok(nuts) = super::Nuts::new(self.step_size, self.metric.clone(), max_depth) else {
            return StepInfo {
                divergent: true,
                ..StepInfo::default()
            };
        };
        let per = match &st.u {
            Subsample::Diff(v) => v.len(),
            Subsample::Poisson(p) => p.total(),
        } as u64;
        let n_gathered = self.gather(model, st);
        let gathered = &st.gathered[..n_gathered];
        let target = FixedU {
            kernel: self,
            model,
            u: &st.u,
            gathered,
            scratch: core::cell::RefCell::new(st.prop.clone()),
            evals_per_call: per,
        };
        let d = st.theta.len();
        let mut z = super::leapfrog::PhasePoint {
            q: st.theta.clone(),
            p: vec![0.0; d],
            grad: st.point.grad.iter().map(|g| -g).collect(),
            log_density: -st.point.potential,
        };
        let mut info = Kernel::<FixedU<'_>>::step(&nuts, rng, &target, &mut z);
        if z.q != st.theta {
            // the estimator's running sums must belong to the new θ
            st.theta.copy_from_slice(&z.q);
            let e = self.evaluate_in(model, &st.theta, &st.u, gathered, &mut st.point);
            info.lik_evals += e;
            info.grad_evals += e;
        }
        info
    }

    /// Data fraction of a subsample: (indices in u) / n.
    pub fn data_fraction(&self, u: &Subsample) -> f64 {
        let k = match u {
            Subsample::Diff(v) => v.len(),
            Subsample::Poisson(p) => p.total(),
        };
        k as f64 / self.cv.n() as f64
    }

    /// A fresh subsample u ~ p_U.
    pub fn draw_subsample<R: Rng + ?Sized>(&self, rng: &mut R) -> Subsample {
        match &self.estimator {
            EcsEstimator::Perturbed(e) => Subsample::Diff(e.draw(rng)),
            EcsEstimator::Signed { est, .. } => Subsample::Poisson(est.draw(rng)),
        }
    }

    /// Evaluate Û and ∇Û at θ for u into `out`; returns the per-datum evaluations used.
    pub fn evaluate(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        u: &Subsample,
        out: &mut EcsPoint,
    ) -> u64 {
        self.evaluate_in(model, theta, u, &[], out)
    }

    /// Gather the state's subsample for the θ-step (its rows then come from cache at every
    /// leapfrog step; see [`Gathered`]); returns how many of `st.gathered` hold it: 1 (perturbed),
    /// λ (signed, one per product), or 0 where it does not apply (models other than GLMs).
    fn gather(&self, model: &dyn DataModel, st: &mut HmcEcsState) -> usize {
        let parts: &[Vec<usize>] = match &st.u {
            Subsample::Diff(idx) => core::slice::from_ref(idx),
            Subsample::Poisson(p) => &p.products,
        };
        st.gathered.resize_with(parts.len(), Gathered::default);
        let mut ok = true;
        for (idx, g) in parts.iter().zip(&mut st.gathered) {
            ok &= self.cv.gather(model, idx, g);
        }
        if ok {
            parts.len()
        } else {
            0
        }
    }

    /// [`evaluate`](Self::evaluate) reading the subsample from `gathered` when it holds u.
    fn evaluate_in(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        u: &Subsample,
        gathered: &[Gathered],
        out: &mut EcsPoint,
    ) -> u64 {
        let evals = match (&self.estimator, u, &mut out.eval) {
            (EcsEstimator::Perturbed(e), Subsample::Diff(idx), EcsEval::Diff(ev)) => {
                e.evaluate_gathered(model, &self.cv, theta, idx, gathered.first(), true, ev);
                idx.len()
            }
            (EcsEstimator::Perturbed(e), Subsample::Diff(idx), slot) => {
                let mut ev = DiffEval::default();
                e.evaluate_gathered(model, &self.cv, theta, idx, gathered.first(), true, &mut ev);
                *slot = EcsEval::Diff(ev);
                idx.len()
            }
            (EcsEstimator::Signed { est, .. }, Subsample::Poisson(s), EcsEval::Poisson(ev)) => {
                est.evaluate_gathered(model, &self.cv, theta, s, gathered, true, ev);
                s.total()
            }
            (EcsEstimator::Signed { est, .. }, Subsample::Poisson(s), slot) => {
                let mut ev = PoissonEval::default();
                est.evaluate_gathered(model, &self.cv, theta, s, gathered, true, &mut ev);
                *slot = EcsEval::Poisson(ev);
                s.total()
            }
            _ => {
                out.potential = f64::NAN;
                return 0;
            }
        };
        self.finish_point(model, theta, out);
        evals as u64
    }

    fn finish_point(&self, model: &dyn DataModel, theta: &[f64], out: &mut EcsPoint) {
        let d = theta.len();
        out.grad.clear();
        out.grad.resize(d, 0.0);
        let lp = model.log_prior_grad(theta, &mut out.grad);
        let g = out.eval.grad();
        if g.len() != d {
            out.potential = f64::NAN;
            return;
        }
        for i in 0..d {
            out.grad[i] = -(out.grad[i] + g[i]);
        }
        out.potential = -(lp + out.eval.log_lik());
    }

    fn empty_point(&self) -> EcsPoint {
        EcsPoint {
            eval: match self.estimator {
                EcsEstimator::Perturbed(_) => EcsEval::Diff(DiffEval::default()),
                EcsEstimator::Signed { .. } => EcsEval::Poisson(PoissonEval::default()),
            },
            potential: f64::NAN,
            grad: Vec::new(),
        }
    }

    /// Initialise with a given subsample (for chains that manage u themselves).
    pub fn init_with<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        model: &dyn DataModel,
        position: &[f64],
        u: Option<Subsample>,
    ) -> Result<(HmcEcsState, u64), Error> {
        let d = self.cv.centre().len();
        if position.len() != d || model.dim() != d || model.n() != self.cv.n() {
            return Err(Error::Dimension {
                what: "position",
                expected: d,
                got: position.len(),
            });
        }
        let u = match u {
            Some(u) => u,
            None => self.draw_subsample(rng),
        };
        let mut point = self.empty_point();
        let evals = self.evaluate(model, position, &u, &mut point);
        if !point.potential.is_finite() || point.grad.iter().any(|g| !g.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Ok((
            HmcEcsState {
                theta: position.to_vec(),
                u,
                prop: point.clone(),
                point,
                theta_new: vec![0.0; d],
                p: vec![0.0; d],
                v: vec![0.0; d],
                idx_buf: Vec::new(),
                gathered: Vec::new(),
                last_u_accept: f64::NAN,
                last_refreshed_block: f64::NAN,
            },
            evals,
        ))
    }

    /// Re-evaluate the state after the kernel changed (new centre, new metric): same θ and u
    /// when the subsample shape still fits, else a fresh u. Returns the evaluations used.
    pub fn refresh<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        model: &dyn DataModel,
        state: &mut HmcEcsState,
    ) -> u64 {
        let fits = match (&self.estimator, &state.u) {
            (EcsEstimator::Perturbed(e), Subsample::Diff(v)) => v.len() == e.m(),
            (EcsEstimator::Signed { est, .. }, Subsample::Poisson(p)) => {
                p.products.len() == est.lambda()
                    && p.products
                        .iter()
                        .all(|q| (q.len() / est.m()) * est.m() == q.len())
            }
            _ => false,
        };
        if !fits {
            state.u = self.draw_subsample(rng);
            state.point = self.empty_point();
            state.prop = self.empty_point();
        }
        self.evaluate(model, &state.theta, &state.u, &mut state.point)
    }

    /// The u-step: returns (acceptance probability, evaluations).
    fn u_step<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        model: &dyn DataModel,
        st: &mut HmcEcsState,
    ) -> (f64, u64) {
        let theta = &st.theta;
        let (evals, ok) = match (
            &self.estimator,
            &mut st.u,
            &st.point.eval,
            &mut st.prop.eval,
        ) {
            (
                EcsEstimator::Perturbed(e),
                Subsample::Diff(idx),
                EcsEval::Diff(cur),
                EcsEval::Diff(prop),
            ) => {
                let g = uniform_index(rng, e.blocks());
                e.draw_block(rng, g, &mut st.idx_buf);
                e.replace_block(model, &self.cv, theta, g, &st.idx_buf, cur, prop);
                let log_a = prop.log_lhat - cur.log_lhat;
                let a = accept_prob(log_a);
                let ok = uniform(rng) < a;
                if ok {
                    let r = e.block_range(g);
                    idx[r].copy_from_slice(&st.idx_buf);
                }
                st.last_u_accept = a;
                st.last_refreshed_block = if ok { g as f64 } else { -1.0 };
                (st.idx_buf.len() as u64, ok)
            }
            (
                EcsEstimator::Signed { est, kappa },
                Subsample::Poisson(s),
                EcsEval::Poisson(cur),
                EcsEval::Poisson(prop),
            ) => {
                // choose κ distinct products (partial Fisher–Yates on 0..λ)
                let lam = est.lambda();
                let mut chosen: Vec<usize> = (0..lam).collect();
                for i in 0..*kappa {
                    let j = i + uniform_index(rng, lam - i);
                    chosen.swap(i, j);
                }
                let chosen = &chosen[..*kappa];
                let mut new_products: Vec<Vec<usize>> = Vec::with_capacity(*kappa);
                let mut evals = 0u64;
                let mut tmp = cur.clone();
                for &l in chosen {
                    let mut np = Vec::new();
                    est.draw_product(rng, &mut np);
                    est.replace_product(model, &self.cv, theta, l, &np, &tmp, prop);
                    evals += np.len() as u64;
                    tmp.clone_from(prop);
                    new_products.push(np);
                }
                let log_a = prop.log_abs - cur.log_abs;
                let a = accept_prob(log_a);
                let ok = uniform(rng) < a;
                if ok {
                    for (&l, np) in chosen.iter().zip(new_products) {
                        s.products[l] = np;
                    }
                }
                st.last_u_accept = a;
                (evals, ok)
            }
            _ => return (0.0, 0),
        };
        if ok {
            self.finish_point(model, &st.theta, &mut st.prop);
            core::mem::swap(&mut st.point, &mut st.prop);
        }
        (st.last_u_accept, evals)
    }

    /// Run `steps` leapfrog steps of size `eps` from (θ, p) with u fixed, starting from the
    /// point `start` (Û, ∇Û at θ). θ and p are updated in place; the end point is written to
    /// `end`. Returns (evaluations, finite) — `finite` is false as soon as Û or ∇Û is not finite.
    #[allow(clippy::too_many_arguments)]
    pub fn leapfrog(
        &self,
        model: &dyn DataModel,
        u: &Subsample,
        theta: &mut [f64],
        p: &mut [f64],
        start: &EcsPoint,
        end: &mut EcsPoint,
        eps: f64,
        steps: usize,
        v: &mut [f64],
    ) -> (u64, bool) {
        self.leapfrog_in(model, u, &[], theta, p, start, end, eps, steps, v)
    }

    /// [`leapfrog`](Self::leapfrog) reading the subsample from `gathered` when it holds u.
    #[allow(clippy::too_many_arguments)]
    fn leapfrog_in(
        &self,
        model: &dyn DataModel,
        u: &Subsample,
        gathered: &[Gathered],
        theta: &mut [f64],
        p: &mut [f64],
        start: &EcsPoint,
        end: &mut EcsPoint,
        eps: f64,
        steps: usize,
        v: &mut [f64],
    ) -> (u64, bool) {
        let d = theta.len();
        let mut evals = 0u64;
        for i in 0..d {
            p[i] -= 0.5 * eps * start.grad[i];
        }
        for l in 1..=steps {
            self.metric.velocity(p, v);
            for i in 0..d {
                theta[i] += eps * v[i];
            }
            evals += self.evaluate_in(model, theta, u, gathered, end);
            if !end.potential.is_finite() || end.grad.iter().any(|g| !g.is_finite()) {
                return (evals, false);
            }
            let f = if l < steps { eps } else { 0.5 * eps };
            for i in 0..d {
                p[i] -= f * end.grad[i];
            }
        }
        (evals, true)
    }
}

fn accept_prob(log_a: f64) -> f64 {
    if log_a.is_nan() {
        0.0
    } else if log_a >= 0.0 {
        1.0
    } else {
        math::exp(log_a)
    }
}

impl Kernel<dyn DataModel> for HmcEcs {
    type State = HmcEcsState;

    fn init(&self, target: &dyn DataModel, position: &[f64]) -> Result<HmcEcsState, Error> {
        // u is drawn from a fixed stream derived from the position so that `init` stays
        // deterministic without an rng argument; chains use `init_with` with their own stream.
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        for x in position {
            seed = seed.rotate_left(17) ^ x.to_bits();
        }
        let mut rng = crate::rng::chain_rng(seed, 0);
        self.init_with(&mut rng, target, position, None)
            .map(|(s, _)| s)
    }

    fn step(&self, rng: &mut ChainRng, target: &dyn DataModel, st: &mut HmcEcsState) -> StepInfo {
        let (u_acc, u_evals) = if self.full_energy {
            // Naive scheme: a fresh subsample, independent of θ, instead of the u-step.
            st.u = self.draw_subsample(rng);
            st.point = self.empty_point();
            st.prop = self.empty_point();
            let e = self.evaluate(target, &st.theta, &st.u, &mut st.point);
            (f64::NAN, e)
        } else {
            self.u_step(rng, target, st)
        };
        if let Trajectory::Nuts(depth) = self.trajectory {
            let mut info = self.nuts_step(rng, target, st, depth);
            let tree_depth = info.extra[0];
            info.lik_evals += u_evals;
            info.grad_evals += u_evals;
            info.energy = st.point.potential;
            info.sign = st.point.eval.sign();
            info.extra = self.extras(st, u_acc);
            info.extra[3] = tree_depth;
            return info;
        }
        // HMC for θ given u
        let d = st.theta.len();
        self.metric.sample_momentum(rng, &mut st.p);
        let k0 = self.metric.kinetic(&st.p);
        let mut h0 = st.point.potential + k0;
        st.theta_new.copy_from_slice(&st.theta);
        let n_gathered = self.gather(target, st);
        let gathered = &st.gathered[..n_gathered];
        let (evals, finite) = self.leapfrog_in(
            target,
            &st.u,
            gathered,
            &mut st.theta_new,
            &mut st.p,
            &st.point,
            &mut st.prop,
            self.step_size,
            self.n_leapfrog,
            &mut st.v,
        );
        let mut h1 = st.prop.potential + self.metric.kinetic(&st.p);
        let mut full_evals = 0u64;
        if self.full_energy && finite {
            // The same trajectory, judged by the full-data Hamiltonian.
            h0 = Self::full_potential(target, &st.theta) + k0;
            h1 = Self::full_potential(target, &st.theta_new) + self.metric.kinetic(&st.p);
            full_evals = 2 * target.n() as u64;
        }
        let (a, divergent) = if finite && h1.is_finite() && h0.is_finite() {
            (accept_prob(h0 - h1), h1 - h0 > 1000.0)
        } else {
            (0.0, true)
        };
        let accepted = a > 0.0 && uniform(rng) < a;
        if accepted {
            st.theta[..d].copy_from_slice(&st.theta_new);
            core::mem::swap(&mut st.point, &mut st.prop);
        }
        let total = u_evals + evals;
        StepInfo {
            accept_prob: a,
            accepted,
            divergent,
            lik_evals: total + full_evals,
            grad_evals: total,
            n_leapfrog: self.n_leapfrog as u32,
            step_size: self.step_size,
            energy: st.point.potential,
            sign: st.point.eval.sign(),
            extra: self.extras(st, u_acc),
        }
    }
}

impl HmcEcs {
    /// [σ̂² (perturbed) or number of mini-batches (signed), u-acceptance, data fraction, tree
    /// depth (NUTS) or NaN].
    fn extras(&self, st: &HmcEcsState, u_acc: f64) -> [f64; 4] {
        [
            match &st.point.eval {
                EcsEval::Diff(e) => e.sigma2,
                EcsEval::Poisson(_) => match &st.u {
                    Subsample::Poisson(p) => (p.total() / self.estimator_m()) as f64,
                    _ => f64::NAN,
                },
            },
            u_acc,
            self.data_fraction(&st.u),
            if self.full_energy {
                f64::NAN
            } else {
                st.last_refreshed_block
            },
        ]
    }

    fn estimator_m(&self) -> usize {
        match &self.estimator {
            EcsEstimator::Perturbed(e) => e.m().max(1),
            EcsEstimator::Signed { est, .. } => est.m().max(1),
        }
    }
}

/// The same kernel over a shared data model (what the chain driver holds).
impl Kernel<alloc::sync::Arc<dyn DataModel>> for HmcEcs {
    type State = HmcEcsState;
    fn init(
        &self,
        target: &alloc::sync::Arc<dyn DataModel>,
        position: &[f64],
    ) -> Result<HmcEcsState, Error> {
        Kernel::<dyn DataModel>::init(self, &**target, position)
    }
    fn step(
        &self,
        rng: &mut ChainRng,
        target: &alloc::sync::Arc<dyn DataModel>,
        state: &mut HmcEcsState,
    ) -> StepInfo {
        Kernel::<dyn DataModel>::step(self, rng, &**target, state)
    }
}

impl super::KernelInfo<alloc::sync::Arc<dyn DataModel>> for HmcEcs {
    fn extra_names(&self) -> Vec<&'static str> {
        let signed = matches!(self.estimator, EcsEstimator::Signed { .. });
        let mut v = if signed {
            alloc::vec!["n_batches", "u_accept", "data_fraction"]
        } else {
            alloc::vec!["sigma2", "u_accept", "data_fraction"]
        };
        if matches!(self.trajectory, Trajectory::Nuts(_)) {
            v.push("tree_depth");
        } else if !signed && !self.full_energy {
            v.push("refreshed_block");
        }
        v
    }
    fn signed(&self) -> bool {
        matches!(self.estimator, EcsEstimator::Signed { .. })
    }
    fn exact(&self) -> bool {
        self.signed_or_full()
    }
    /// `eps`, `L`, `order`, and `m`, `G` (perturbed) or `m`, `lambda`, `a`, `kappa` (signed).
    fn resolved(&self, _state: &HmcEcsState) -> Vec<(&'static str, f64)> {
        let mut v = alloc::vec![
            ("eps", self.step_size),
            ("L", self.n_leapfrog as f64),
            ("order", self.cv.order() as f64),
        ];
        match &self.estimator {
            EcsEstimator::Perturbed(e) => {
                v.push(("m", e.m() as f64));
                v.push(("G", e.blocks() as f64));
            }
            EcsEstimator::Signed { est, kappa } => {
                v.push(("m", est.m() as f64));
                v.push(("lambda", est.lambda() as f64));
                v.push(("a", est.a()));
                v.push(("kappa", *kappa as f64));
            }
        }
        v
    }
}

impl HmcEcs {
    fn signed_or_full(&self) -> bool {
        matches!(self.estimator, EcsEstimator::Signed { .. }) || self.full_energy
    }
}
