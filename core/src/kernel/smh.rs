//! Scalable Metropolis–Hastings (SMH-1, SMH-2): factorised MH with Poisson thinning of
//! Taylor-remainder factors around a fixed θ̂, with truncation to full-data MH.
//!
//! # Formula
//! With Uᵢ(θ) = −ℓᵢ(θ) and Û_{k,i} its k-th order Taylor expansion at θ̂ (k = 1, 2), the
//! acceptance probability factorises (Cornish et al. 2019, eq. 10):
//! α(θ,θ′) = [1 ∧ p(θ′) π̂_k(θ′) q(θ′,θ) / (p(θ) π̂_k(θ) q(θ,θ′))] · Πᵢ exp(−λᵢ(θ,θ′)),
//! λᵢ = max(0, ρᵢ(θ′) − ρᵢ(θ)),  ρᵢ = Uᵢ − Û_{k,i}.
//! For a GLM, ℓᵢ(θ) = f(yᵢ, xᵢᵀθ) and with δ = xᵢᵀθ − η̂ᵢ, δ′ = xᵢᵀθ′ − η̂ᵢ:
//! ρᵢ(θ′) − ρᵢ(θ) = −[f(η′) − f(η)] + f′(η̂ᵢ)(δ′ − δ) + [k=2] ½ f″(η̂ᵢ)(δ′² − δ²).
//! Bound (eq. 13): λᵢ ≤ φ(θ,θ′)·ψᵢ with
//! φ = (‖θ−θ̂‖₁^{k+1} + ‖θ′−θ̂‖₁^{k+1}) / (k+1)!,  ψᵢ = sup|f^{(k+1)}| · (maxⱼ|xᵢⱼ|)^{k+1},
//! from |δ| = |xᵢᵀ(θ−θ̂)| ≤ maxⱼ|xᵢⱼ|·‖θ−θ̂‖₁ (`bound=l1`, the paper's). The default `bound=l2`
//! uses Cauchy–Schwarz instead, |δ| ≤ ‖xᵢ‖₂·‖θ−θ̂‖₂: φ with ‖·‖₂ and ψᵢ = sup|f^{(k+1)}|·‖xᵢ‖₂^{k+1}.
//! Both are valid bounds; in the well-scaled (whitened, `reparam=auto`) coordinates the samplers
//! see, ‖xᵢ‖₂‖θ−θ̂‖₂ is smaller than maxⱼ|xᵢⱼ|·‖θ−θ̂‖₁ by about √(2 ln d) for isotropic rows,
//! so Λ (the points per step) drops by about (2 ln d)^{(k+1)/2}.
//! The product of the per-datum factors is decided by N ~ Poisson(Λ = φΣψ) points drawn from
//! the alias table of ψ/Σψ, each rejecting with probability λᵢ/(φψᵢ). When Λ > R (default
//! R = n) the step is an ordinary full-data MH step (TFMH, eq. 6).
//! The prior p(θ) is part of the cheap first factor, so any prior with a log density works.
//!
//! Proposals: random walk θ′ = θ + σ L⁻ᵀξ with H = LLᵀ the negative Hessian of log π at θ̂,
//! or pCN θ′ = μ̂ + √ρ(θ − μ̂) + √(1−ρ) L⁻ᵀξ, μ̂ = θ̂ + H⁻¹∇log π(θ̂) (reversible w.r.t. the
//! Gaussian p·π̂₂ when the prior is Gaussian or flat, so SMH-2's first factor is 1;
//! its q-ratio is computed and the first factor evaluated in general form), or the
//! π̂₁-reversible θ′ = θ − (C/2)∇U(θ̂) + N(0, C), C = (σ/n)I (eq. 17 with the sign of C fixed),
//! whose first factor is 1 for SMH-1 with a flat prior.
//!
//! ## References
//! R. Cornish, P. Vanetti, A. Bouchard-Côté, G. Deligiannidis, A. Doucet (2019), *Scalable
//! Metropolis–Hastings for exact Bayesian inference with large datasets*, ICML, Alg. 1,
//! eqs. (6), (10), (13), (16)–(18).

use super::{HasPosition, Kernel, KernelInfo, StepInfo};
use crate::cost::Cost;
use crate::dist::{self, AliasTable};
use crate::error::Error;
use crate::linalg::Cholesky;
use crate::math;
use crate::model::{DataModel, GlmView};
use crate::optim::{find_mode, ModeOptions};
use crate::rng::{uniform, ChainRng, Rng};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// The proposal of an SMH step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SmhProposal {
    /// θ′ = θ + σ·N(0, H⁻¹) (symmetric; σ = 1 in the paper).
    RandomWalk {
        /// σ; NaN chooses σ = 2.38/√d (the optimal random-walk scale for a Gaussian target,
        /// acceptance ≈ 0.23; the registry's default).
        scale: f64,
    },
    /// θ′ = μ̂ + √ρ(θ − μ̂) + √(1−ρ)·N(0, H⁻¹), ρ ∈ [0, 1), μ̂ = θ̂ + H⁻¹∇log π(θ̂).
    Pcn {
        /// ρ.
        rho: f64,
    },
    /// The π̂₁-reversible proposal of eq. (17) (with the sign of C corrected):
    /// θ′ = θ − (C/2)∇U(θ̂) + N(0, C), C = (σ/n)·I (σ is a variance here, as in the paper).
    Pi1 {
        /// σ.
        scale: f64,
    },
}

/// σ·√d of the automatic random-walk scale: 2.38 (Roberts, Gelman & Gilks 1997).
pub const AUTO_RW_SCALE: f64 = 2.38;

/// The norm pair bounding |xᵢᵀ(θ − θ̂)| in the Taylor-remainder bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundNorm {
    /// maxⱼ|xᵢⱼ| · ‖θ − θ̂‖₁ (Cornish et al. 2019, eq. 13).
    L1,
    /// ‖xᵢ‖₂ · ‖θ − θ̂‖₂ (Cauchy–Schwarz; tighter in well-scaled coordinates).
    L2,
}

/// Options of [`Smh::new`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmhOptions {
    /// Taylor order k (1 or 2).
    pub order: usize,
    /// The proposal.
    pub proposal: SmhProposal,
    /// Truncation R: full-data MH when Λ > R. `None` means R = n; +∞ disables truncation.
    pub truncation: Option<f64>,
    /// Mode finder options for θ̂.
    pub mode: ModeOptions,
    /// The norm pair of the bound (default [`BoundNorm::L2`]).
    pub norm: BoundNorm,
}

impl Default for SmhOptions {
    fn default() -> Self {
        SmhOptions {
            order: 2,
            proposal: SmhProposal::RandomWalk { scale: 1.0 },
            truncation: None,
            mode: ModeOptions::default(),
            norm: BoundNorm::L2,
        }
    }
}

/// The SMH-k kernel: everything fixed before sampling (θ̂, Taylor coefficients, bounds, alias
/// table, proposal factor).
#[derive(Debug, Clone)]
pub struct Smh {
    order: usize,
    proposal: SmhProposal,
    truncation: f64,
    norm: BoundNorm,
    d: usize,
    n: usize,
    theta_hat: Vec<f64>,
    /// Σᵢ ∇ℓᵢ(θ̂).
    grad_lik: Vec<f64>,
    /// −Σᵢ ∇²ℓᵢ(θ̂) (= ∇²U(θ̂)), row-major.
    hess_lik: Vec<f64>,
    /// −∇² log π(θ̂) (prior included), row-major: the inverse proposal covariance shape.
    hess_post: Vec<f64>,
    chol: Cholesky,
    /// μ̂ = θ̂ + H⁻¹ ∇log π(θ̂): the mean of the Laplace/π̂₂ Gaussian, the pCN centre.
    centre: Vec<f64>,
    // The per-datum arrays behind `Arc`s: the chains of a run that share one kernel
    // ([`crate::sampler::share::Sharing::smh_kernel`]) hold one copy of them.
    eta_hat: Arc<[f64]>,
    f1: Arc<[f64]>,
    f2: Arc<[f64]>,
    psi: Arc<[f64]>,
    psi_sum: f64,
    alias: Option<Arc<AliasTable>>,
    setup: Cost,
}

/// The chain state of [`Smh`]: θ and a cached full-data log π(θ) for consecutive fallbacks.
#[derive(Debug, Clone, PartialEq)]
pub struct SmhState {
    /// θ.
    pub theta: Vec<f64>,
    /// log π(θ) when known (valid until θ moves through the thinning branch).
    pub cached_log_post: Option<f64>,
}

impl HasPosition for SmhState {
    fn position(&self) -> &[f64] {
        &self.theta
    }
}

/// SMH as a [`Kernel`] over a data model (θ̂, bounds and proposal fixed at construction).
impl Kernel<Arc<dyn DataModel>> for Smh {
    type State = SmhState;
    /// The state at `position` (usually θ̂: [`Smh::init_state`]).
    fn init(&self, _target: &Arc<dyn DataModel>, position: &[f64]) -> Result<SmhState, Error> {
        Error::check_dim("position", self.d, position.len())?;
        if position.iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Ok(SmhState {
            theta: position.to_vec(),
            cached_log_post: None,
        })
    }
    fn step(
        &self,
        rng: &mut ChainRng,
        target: &Arc<dyn DataModel>,
        state: &mut SmhState,
    ) -> StepInfo {
        Smh::step(self, rng, target.as_ref(), state)
    }
}

impl KernelInfo<Arc<dyn DataModel>> for Smh {
    fn extra_names(&self) -> Vec<&'static str> {
        vec!["bound", "fell_back", "points", "log_first_factor"]
    }
    /// The proposal's scale (random walk, π̂₁) or ρ (pCN).
    fn resolved(&self, _state: &SmhState) -> Vec<(&'static str, f64)> {
        match self.proposal {
            SmhProposal::RandomWalk { scale } | SmhProposal::Pi1 { scale } => {
                vec![("scale", scale)]
            }
            SmhProposal::Pcn { rho } => vec![("rho", rho)],
        }
    }
}

/// The supremum constants sup|f^{(k+1)}| for `view`'s family, or an error naming the family.
fn family_bound(view: &dyn GlmView, order: usize) -> Result<f64, Error> {
    let fam = view.family();
    let b = if order == 1 {
        fam.d2_bound()
    } else {
        fam.d3_bound()
    };
    match b {
        Some(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(Error::setting(
            "sampler",
            alloc::format!(
                "smh-{order} needs a bounded derivative of order {} of the likelihood; the `{}` model has none (supported: logistic, robust)",
                order + 1,
                fam.name()
            ),
        )),
    }
}

impl Smh {
    /// Set up SMH-k for `model` (a GLM with bounded (k+1)-th derivative): θ̂ by the mode finder
    /// from the model's initial point, one pass for the Taylor coefficients and bounds, the
    /// alias table. Fails for a non-GLM model, an unbounded family, order ∉ {1, 2}, ρ ∉ [0, 1),
    /// σ ≤ 0, or a negative Hessian at θ̂ that is not positive definite.
    pub fn new(model: &dyn DataModel, opts: &SmhOptions) -> Result<Self, Error> {
        let start = model.initial_point();
        Self::with_start(model, opts, &start)
    }

    /// As [`Smh::new`], starting the mode search from `start`.
    pub fn with_start(
        model: &dyn DataModel,
        opts: &SmhOptions,
        start: &[f64],
    ) -> Result<Self, Error> {
        Self::validate(model, opts)?;
        let mode = find_mode(model, start, &opts.mode)?;
        Self::from_mode(model, opts, mode)
    }

    /// Check the options and that `model` is a non-empty GLM with the bounds of order k.
    fn validate(model: &dyn DataModel, opts: &SmhOptions) -> Result<(), Error> {
        if !(opts.order == 1 || opts.order == 2) {
            return Err(Error::setting("order", "SMH order must be 1 or 2"));
        }
        match opts.proposal {
            SmhProposal::RandomWalk { scale } => {
                if !(scale.is_nan() || (scale > 0.0 && scale.is_finite())) {
                    return Err(Error::setting(
                        "scale",
                        "must be a finite number > 0 (or auto)",
                    ));
                }
            }
            SmhProposal::Pcn { rho } => {
                if !((0.0..1.0).contains(&rho)) {
                    return Err(Error::setting("rho", "must be in [0, 1)"));
                }
            }
            SmhProposal::Pi1 { scale } => {
                if !(scale > 0.0 && scale.is_finite()) {
                    return Err(Error::setting("scale", "must be a finite number > 0"));
                }
            }
        }
        let view = model.as_glm().ok_or_else(|| {
            Error::setting(
                "sampler",
                "SMH needs a generalised linear model (supported: logistic, robust)",
            )
        })?;
        family_bound(view, opts.order)?;
        let design = view.design();
        let (n, d) = (design.n, design.d);
        if n == 0 || d == 0 || design.x.len() != n * d || design.y.len() != n {
            return Err(Error::data("SMH needs a non-empty design"));
        }
        if opts.truncation.is_some_and(|r| r.is_nan() || r < 0.0) {
            return Err(Error::setting("truncation", "must be ≥ 0"));
        }
        Ok(())
    }

    /// As [`Smh::new`] with a given θ̂ (no mode search; e.g. an SGD estimate, or a deliberately
    /// perturbed point in tests): the Taylor expansions, the proposal's H = −∇² log π(θ̂) and
    /// the pCN centre are taken at `theta_hat`. Exactness does not depend on θ̂; H must be
    /// positive definite there.
    pub fn with_theta_hat(
        model: &dyn DataModel,
        opts: &SmhOptions,
        theta_hat: &[f64],
    ) -> Result<Self, Error> {
        let d = model.dim();
        Error::check_dim("theta_hat", d, theta_hat.len())?;
        if theta_hat.iter().any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        Self::validate(model, opts)?;
        let n = model.n();
        let mut grad = vec![0.0; d];
        let lp = model.log_prior_grad(theta_hat, &mut grad)
            + model.log_lik_grad_all(theta_hat, &mut grad);
        let mut hess = vec![0.0; d * d];
        model.log_prior_hess(theta_hat, &mut hess);
        for i in 0..n {
            model.log_lik_hess(theta_hat, i, &mut hess);
        }
        let neg_hessian: Vec<f64> = hess.iter().map(|v| -v).collect();
        let mode = crate::optim::ModeResult {
            mode: theta_hat.to_vec(),
            log_density: lp,
            grad,
            neg_hessian,
            iterations: 0,
            converged: false,
            lik_evals: n as u64,
            grad_evals: n as u64,
            hess_evals: n as u64,
        };
        Self::from_mode(model, opts, mode)
    }

    fn from_mode(
        model: &dyn DataModel,
        opts: &SmhOptions,
        mode: crate::optim::ModeResult,
    ) -> Result<Self, Error> {
        let view = model.as_glm().ok_or_else(|| {
            Error::setting(
                "sampler",
                "SMH needs a generalised linear model (supported: logistic, robust)",
            )
        })?;
        let sup = family_bound(view, opts.order)?;
        let design = view.design();
        let fam = view.family();
        let (n, d) = (design.n, design.d);
        let proposal = match opts.proposal {
            SmhProposal::RandomWalk { scale } if scale.is_nan() => SmhProposal::RandomWalk {
                scale: AUTO_RW_SCALE / math::sqrt(d.max(1) as f64),
            },
            p => p,
        };
        let truncation = match opts.truncation {
            None => n as f64,
            Some(r) if r >= 0.0 => r,
            Some(_) => return Err(Error::setting("truncation", "must be ≥ 0")),
        };
        let hess_post = mode.neg_hessian.clone();
        let chol = Cholesky::new(&hess_post, d)?;
        let theta_hat = mode.mode.clone();
        let mut centre = mode.grad.clone();
        Error::check_dim("mode gradient", d, centre.len())?;
        chol.solve(&mut centre);
        for (c, t) in centre.iter_mut().zip(&theta_hat) {
            *c += t;
        }
        let mut grad_lik = vec![0.0; d];
        let mut hess_lik = vec![0.0; d * d];
        let mut eta_hat = Vec::with_capacity(n);
        let mut f1 = Vec::with_capacity(n);
        let mut f2 = Vec::with_capacity(n);
        let mut psi = Vec::with_capacity(n);
        for i in 0..n {
            let row = design.row(i);
            let y = design.y[i];
            let eta = view.eta(&theta_hat, i);
            let (_, d1) = fam.value_d1(y, eta);
            let dd2 = fam.d2(y, eta);
            let mut m = 0.0f64;
            let mut ss = 0.0f64;
            for a in 0..d {
                grad_lik[a] += d1 * row[a];
                for b in 0..d {
                    hess_lik[a * d + b] -= dd2 * row[a] * row[b];
                }
                m = m.max(math::abs(row[a]));
                ss += row[a] * row[a];
            }
            if opts.norm == BoundNorm::L2 {
                m = math::sqrt(ss);
            }
            eta_hat.push(eta);
            f1.push(d1);
            f2.push(dd2);
            let mk = if opts.order == 1 { m * m } else { m * m * m };
            psi.push(sup * mk);
        }
        let psi_sum: f64 = psi.iter().sum();
        if !psi_sum.is_finite() {
            return Err(Error::data("SMH bound Σψ is not finite"));
        }
        let alias = if psi_sum > 0.0 {
            Some(Arc::new(AliasTable::new(&psi)?))
        } else {
            None
        };
        let mut setup = mode.cost();
        setup.lik_evals += n as u64;
        setup.grad_evals += n as u64;
        Ok(Smh {
            order: opts.order,
            proposal,
            truncation,
            norm: opts.norm,
            d,
            n,
            theta_hat,
            grad_lik,
            hess_lik,
            hess_post,
            chol,
            centre,
            eta_hat: eta_hat.into(),
            f1: f1.into(),
            f2: f2.into(),
            psi: psi.into(),
            psi_sum,
            alias,
            setup,
        })
    }

    /// Parameter dimension d.
    pub fn dim(&self) -> usize {
        self.d
    }
    /// The proposal, with its scale resolved.
    pub fn proposal(&self) -> SmhProposal {
        self.proposal
    }
    /// θ̂.
    pub fn theta_hat(&self) -> &[f64] {
        &self.theta_hat
    }
    /// Taylor order k.
    pub fn order(&self) -> usize {
        self.order
    }
    /// Per-datum bound weights ψᵢ.
    pub fn psi(&self) -> &[f64] {
        &self.psi
    }
    /// Σᵢ ψᵢ.
    pub fn psi_sum(&self) -> f64 {
        self.psi_sum
    }
    /// Truncation level R.
    pub fn truncation(&self) -> f64 {
        self.truncation
    }
    /// The same kernel with a set-up cost of 0 (a copy of a kernel another chain built:
    /// [`crate::sampler::share::Sharing::smh_kernel`]).
    pub fn without_setup_cost(mut self) -> Self {
        self.setup = Cost::default();
        self
    }
    /// The setup cost (mode finding and the coefficient pass).
    pub fn setup_cost(&self) -> Cost {
        self.setup
    }
    /// −∇² log π(θ̂), row-major.
    pub fn neg_hessian(&self) -> &[f64] {
        &self.hess_post
    }

    /// The initial state at θ̂.
    pub fn init_state(&self) -> SmhState {
        SmhState {
            theta: self.theta_hat.clone(),
            cached_log_post: None,
        }
    }

    /// φ(θ,θ′) = (‖θ−θ̂‖^{k+1} + ‖θ′−θ̂‖^{k+1}) / (k+1)!, in the norm of [`BoundNorm`]
    /// (ℓ1 for `L1`, ℓ2 for `L2`).
    pub fn phi(&self, theta: &[f64], theta_p: &[f64]) -> f64 {
        let dist = match self.norm {
            BoundNorm::L1 => l1_dist,
            BoundNorm::L2 => l2_dist,
        };
        let a = dist(theta, &self.theta_hat);
        let b = dist(theta_p, &self.theta_hat);
        if self.order == 1 {
            (a * a + b * b) / 2.0
        } else {
            (a * a * a + b * b * b) / 6.0
        }
    }

    /// λᵢ(θ,θ′) = max(0, ρᵢ(θ′) − ρᵢ(θ)) for datum i (0 for i ≥ n); two likelihood evaluations.
    pub fn lambda_i(&self, view: &dyn GlmView, theta: &[f64], theta_p: &[f64], i: usize) -> f64 {
        if i >= self.n {
            return 0.0;
        }
        let design = view.design();
        let y = design.y[i];
        let fam = view.family();
        let eta = view.eta(theta, i);
        let eta_p = view.eta(theta_p, i);
        let dl = fam.value(y, eta_p) - fam.value(y, eta);
        let del = eta - self.eta_hat[i];
        let del_p = eta_p - self.eta_hat[i];
        let mut r = -dl + self.f1[i] * (del_p - del);
        if self.order == 2 {
            r += 0.5 * self.f2[i] * (del_p * del_p - del * del);
        }
        if r > 0.0 {
            r
        } else {
            0.0
        }
    }

    /// log of the cheap factor's ratio without the proposal term:
    /// [log p(θ′) − Û_k(θ′)] − [log p(θ) − Û_k(θ)].
    fn log_approx_ratio(&self, model: &dyn DataModel, theta: &[f64], theta_p: &[f64]) -> f64 {
        if theta.len() != self.d || theta_p.len() != self.d {
            return f64::NAN;
        }
        let h: Vec<f64> = theta
            .iter()
            .zip(&self.theta_hat)
            .map(|(a, b)| a - b)
            .collect();
        let hp: Vec<f64> = theta_p
            .iter()
            .zip(&self.theta_hat)
            .map(|(a, b)| a - b)
            .collect();
        let mut v: f64 = self
            .grad_lik
            .iter()
            .zip(hp.iter().zip(&h))
            .map(|(g, (p, q))| g * (p - q))
            .sum();
        if self.order == 2 {
            v -= 0.5 * (quad(&self.hess_lik, &hp) - quad(&self.hess_lik, &h));
        }
        v + model.log_prior(theta_p) - model.log_prior(theta)
    }

    /// Draw θ′ from q(θ, ·); returns log q(θ′,θ) − log q(θ,θ′).
    pub fn propose<R: Rng + ?Sized>(&self, rng: &mut R, theta: &[f64], out: &mut [f64]) -> f64 {
        let d = self.d;
        let mut z: Vec<f64> = (0..d).map(|_| dist::std_normal(rng)).collect();
        if let SmhProposal::Pi1 { .. } = self.proposal {
            let c = self.pi1_variance();
            for (((o, t), g), zj) in out.iter_mut().zip(theta).zip(&self.grad_lik).zip(&z) {
                // −(C/2)∇U(θ̂) = +(C/2)Σ∇ℓᵢ(θ̂).
                *o = t + 0.5 * c * g + math::sqrt(c) * zj;
            }
            return self.pi1_log_q_ratio(theta, out);
        }
        self.chol.solve_lt(&mut z);
        match self.proposal {
            SmhProposal::RandomWalk { scale } => {
                for ((o, t), zj) in out.iter_mut().zip(theta).zip(&z) {
                    *o = t + scale * zj;
                }
                0.0
            }
            SmhProposal::Pcn { rho } => {
                let a = math::sqrt(rho);
                let c = math::sqrt(1.0 - rho);
                for (((o, t), m), zj) in out.iter_mut().zip(theta).zip(&self.centre).zip(&z) {
                    *o = m + a * (t - m) + c * zj;
                }
                self.pcn_log_q_ratio(theta, out)
            }
            SmhProposal::Pi1 { .. } => self.pi1_log_q_ratio(theta, out),
        }
    }

    /// C/I = σ/n of the π̂₁-reversible proposal (17).
    fn pi1_variance(&self) -> f64 {
        match self.proposal {
            SmhProposal::Pi1 { scale } => scale / self.n.max(1) as f64,
            _ => f64::NAN,
        }
    }

    /// log q(θ′,θ) − log q(θ,θ′) of proposal (17), from the two Gaussian densities
    /// q(x, x′) = N(x′; x − (C/2)∇U(θ̂), C).
    fn pi1_log_q_ratio(&self, theta: &[f64], theta_p: &[f64]) -> f64 {
        let c = self.pi1_variance();
        let log_q = |x: &[f64], xp: &[f64]| -> f64 {
            let mut ss = 0.0;
            for ((a, b), g) in x.iter().zip(xp).zip(&self.grad_lik) {
                let r = b - a - 0.5 * c * g;
                ss += r * r;
            }
            -0.5 * ss / c
        };
        log_q(theta_p, theta) - log_q(theta, theta_p)
    }

    /// log q(θ′,θ) − log q(θ,θ′) of the proposal (0 for the random walk).
    pub fn log_q_ratio(&self, theta: &[f64], theta_p: &[f64]) -> f64 {
        match self.proposal {
            SmhProposal::RandomWalk { .. } => 0.0,
            SmhProposal::Pcn { .. } => self.pcn_log_q_ratio(theta, theta_p),
            SmhProposal::Pi1 { .. } => self.pi1_log_q_ratio(theta, theta_p),
        }
    }

    fn pcn_log_q_ratio(&self, theta: &[f64], theta_p: &[f64]) -> f64 {
        let rho = match self.proposal {
            SmhProposal::Pcn { rho } => rho,
            _ => return 0.0,
        };
        let a = math::sqrt(rho);
        let d = self.d;
        if theta.len() != d || theta_p.len() != d {
            return f64::NAN;
        }
        // log q(x, x′) = −½ rᵀ H r /(1−ρ), r = x′ − μ̂ − √ρ (x − μ̂).
        let mut fwd = vec![0.0; d];
        let mut bwd = vec![0.0; d];
        for j in 0..d {
            let t = theta[j] - self.centre[j];
            let tp = theta_p[j] - self.centre[j];
            fwd[j] = tp - a * t;
            bwd[j] = t - a * tp;
        }
        -0.5 * (quad(&self.hess_post, &bwd) - quad(&self.hess_post, &fwd)) / (1.0 - rho)
    }

    /// log of the first (cheap, O(d²)) factor's ratio:
    /// log p(θ′) − Û_k(θ′) − log p(θ) + Û_k(θ) + log q(θ′,θ) − log q(θ,θ′).
    pub fn log_first_factor(&self, model: &dyn DataModel, theta: &[f64], theta_p: &[f64]) -> f64 {
        self.log_approx_ratio(model, theta, theta_p) + self.log_q_ratio(theta, theta_p)
    }

    /// The bound Λ(θ,θ′) = φ(θ,θ′)·Σψ.
    pub fn bound(&self, theta: &[f64], theta_p: &[f64]) -> f64 {
        self.phi(theta, theta_p) * self.psi_sum
    }

    /// The Poisson-thinning stage alone: N ~ Poisson(Λ) points from the alias table, each
    /// rejecting with probability λᵢ/(φψᵢ). Returns (passed, points processed). With
    /// `early_stop` false every point is processed (for testing the count).
    pub fn thinning<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        view: &dyn GlmView,
        theta: &[f64],
        theta_p: &[f64],
        early_stop: bool,
    ) -> (bool, u64) {
        let alias = match &self.alias {
            Some(a) => a,
            None => return (true, 0),
        };
        let phi = self.phi(theta, theta_p);
        let big = phi * self.psi_sum;
        let count = dist::poisson(rng, big);
        let mut passed = true;
        for k in 0..count {
            let i = alias.sample(rng);
            let lam = self.lambda_i(view, theta, theta_p, i);
            let lbar = phi * self.psi.get(i).copied().unwrap_or(0.0);
            if lam > 0.0 && lbar > 0.0 {
                let p = (lam / lbar).min(1.0);
                if uniform(rng) < p {
                    passed = false;
                    if early_stop {
                        return (false, k + 1);
                    }
                }
            }
        }
        (passed, count)
    }

    fn log_post(model: &dyn DataModel, theta: &[f64]) -> f64 {
        let lp = model.log_prior(theta);
        if !lp.is_finite() {
            return f64::NEG_INFINITY;
        }
        lp + model.log_lik_all(theta)
    }

    /// One SMH step. `extra` = [Λ, fell back (0/1), points processed, log first-factor ratio
    /// (NaN on fallback)]. `accept_prob` is the acceptance indicator on the thinning branch (an
    /// unbiased estimate of α) and the MH probability on the fallback branch.
    pub fn step<R: Rng + ?Sized>(
        &self,
        rng: &mut R,
        model: &dyn DataModel,
        state: &mut SmhState,
    ) -> StepInfo {
        let d = self.d;
        let mut info = StepInfo::default();
        let view = match model.as_glm() {
            Some(v) => v,
            None => return info,
        };
        let mut prop = vec![0.0; d];
        let lq = self.propose(rng, &state.theta, &mut prop);
        let big = self.bound(&state.theta, &prop);
        info.extra = [big, 0.0, 0.0, f64::NAN];
        // NaN bound (non-finite proposal) also takes the exact full-data branch.
        if big > self.truncation || big.is_nan() {
            // TFMH fallback: exact full-data MH.
            info.extra[1] = 1.0;
            let cur = match state.cached_log_post {
                Some(v) => v,
                None => {
                    info.lik_evals += self.n as u64;
                    Self::log_post(model, &state.theta)
                }
            };
            let new = Self::log_post(model, &prop);
            info.lik_evals += self.n as u64;
            let a = super::accept_prob(new - cur + lq);
            info.accept_prob = a;
            if uniform(rng) < a {
                state.theta.copy_from_slice(&prop);
                state.cached_log_post = Some(new);
                info.accepted = true;
                info.energy = -new;
            } else {
                state.cached_log_post = Some(cur);
                info.energy = -cur;
            }
            return info;
        }
        let l0 = self.log_approx_ratio(model, &state.theta, &prop) + lq;
        info.extra[3] = l0;
        if uniform(rng) >= super::accept_prob(l0) {
            return info;
        }
        let (pass, points) = self.thinning(rng, view, &state.theta, &prop, true);
        info.extra[2] = points as f64;
        info.lik_evals = 2 * points;
        if pass {
            state.theta.copy_from_slice(&prop);
            state.cached_log_post = None;
            info.accepted = true;
            info.accept_prob = 1.0;
        }
        info
    }
}

#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn l1_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| math::abs(x - y)).sum()
}

fn l2_dist(a: &[f64], b: &[f64]) -> f64 {
    math::sqrt(a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum())
}

/// hᵀ A h for row-major A (d × d, d = len h).
fn quad(a: &[f64], h: &[f64]) -> f64 {
    let d = h.len();
    if d == 0 {
        return 0.0;
    }
    a.chunks_exact(d)
        .zip(h)
        .map(|(row, hi)| hi * dot(row, h))
        .sum()
}
