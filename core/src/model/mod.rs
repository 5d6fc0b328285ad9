//! Models. Data models expose the log-likelihood **per datum**, so every estimator can subsample;
//! [`FullData`] turns any data model into a [`LogDensity`] for the exact samplers.
//!
//! Conventions: parameters live on an unconstrained space (θ ∈ ℝᵈ); a constrained parameter is
//! sampled through a transform and its log-Jacobian is part of `log_prior`. Gradients are
//! **accumulated** into caller-owned buffers (`grad[k] += …`) and the value is returned, so sums
//! over data need no temporaries. Hessians are accumulated into row-major `d × d` buffers.

use alloc::string::String;
use alloc::vec::Vec;

pub mod gaussian;
pub mod glm;
pub mod gmm;
pub mod linear;
pub mod pmf;
pub mod prior;
pub mod reparam;
pub mod series;

pub use gaussian::GaussianMean;
pub use glm::{GaussianNoise, Glm, GlmFamily, Logistic, Poisson, StudentT};
pub use gmm::Gmm;
pub use linear::{Linear, LinearUnknownNoise};
pub use pmf::Pmf;
pub use prior::Prior;
pub use series::SeriesModel;

/// A Bayesian model for n exchangeable data: log π(θ) = log p(θ) + Σᵢ ℓᵢ(θ).
///
/// Object safe, `Send + Sync` so chains on several threads can share one model behind an `Arc`.
pub trait DataModel: Send + Sync {
    /// Number of parameters d.
    fn dim(&self) -> usize;
    /// Number of data n.
    fn n(&self) -> usize;
    /// Parameter names, length d (`intercept` first when present).
    fn param_names(&self) -> Vec<String>;

    /// log p(θ) including any log-Jacobian; its gradient is accumulated into `grad`.
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64;
    /// log p(θ).
    fn log_prior(&self, theta: &[f64]) -> f64;
    /// ∇² log p(θ) accumulated into `hess` (row-major d × d). The default uses central finite
    /// differences of [`log_prior_grad`](DataModel::log_prior_grad); models with a closed form
    /// override it.
    fn log_prior_hess(&self, theta: &[f64], hess: &mut [f64]) {
        let d = theta.len();
        let mut t = theta.to_vec();
        let mut gp = alloc::vec![0.0; d];
        let mut gm = alloc::vec![0.0; d];
        for j in 0..d {
            let h = 1e-5 * (1.0 + crate::math::abs(theta[j]));
            t[j] = theta[j] + h;
            gp.iter_mut().for_each(|g| *g = 0.0);
            self.log_prior_grad(&t, &mut gp);
            t[j] = theta[j] - h;
            gm.iter_mut().for_each(|g| *g = 0.0);
            self.log_prior_grad(&t, &mut gm);
            t[j] = theta[j];
            for k in 0..d {
                hess[k * d + j] += (gp[k] - gm[k]) / (2.0 * h);
            }
        }
    }

    /// ℓᵢ(θ), the log-likelihood of datum i.
    fn log_lik(&self, theta: &[f64], i: usize) -> f64;
    /// ℓᵢ(θ); ∇ℓᵢ(θ) is accumulated into `grad`.
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64;
    /// ∇²ℓᵢ(θ) accumulated into `hess` (row-major d × d). Control variates and Newton need it.
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]);
    /// Σᵢ ∇²ℓᵢ(θ) over the rows `rows(0), …, rows(count − 1)` accumulated into `hess`, datum
    /// by datum in that order: the same bits as [`log_lik_hess`](DataModel::log_lik_hess)
    /// called for each in turn (models override it to take several rows per sweep of the
    /// d × d matrix).
    fn log_lik_hess_rows(
        &self,
        theta: &[f64],
        rows: &dyn Fn(usize) -> usize,
        count: usize,
        hess: &mut [f64],
    ) {
        for q in 0..count {
            self.log_lik_hess(theta, rows(q), hess);
        }
    }

    /// (Σᵢ ∇²ℓᵢ(θ)) v over all data, accumulated into `out`: the Hessian-vector product behind
    /// matrix-free curvature at large d ([`crate::optim::neg_hessian_vec`]), with no d × d
    /// matrix. The default is a central difference of
    /// [`log_lik_grad_all`](DataModel::log_lik_grad_all) along v (two full-data passes, step
    /// ε = 10⁻⁵·(1 + ‖θ‖∞)/‖v‖∞); models with a closed form override it.
    fn log_lik_hess_vec_all(&self, theta: &[f64], v: &[f64], out: &mut [f64]) {
        central_difference(theta, v, out, |t, g| {
            self.log_lik_grad_all(t, g);
        });
    }

    /// ∇² log p(θ) v accumulated into `out`. The default is a central difference of
    /// [`log_prior_grad`](DataModel::log_prior_grad) along v; models with a closed form
    /// override it.
    fn log_prior_hess_vec(&self, theta: &[f64], v: &[f64], out: &mut [f64]) {
        central_difference(theta, v, out, |t, g| {
            self.log_prior_grad(t, g);
        });
    }

    /// The diagonal of ∇² log p(θ) + Σᵢ ∇²ℓᵢ(θ), accumulated into `out` (length d), when the
    /// model has it in closed form at O(n) per-datum work; returns whether it did (the default
    /// writes nothing and returns false). Matrix-free set-up at large d uses it for the
    /// scale of its probe points.
    fn log_post_hess_diag(&self, theta: &[f64], out: &mut [f64]) -> bool {
        let _ = (theta, out);
        false
    }

    /// Σᵢ ℓᵢ(θ) over `idx` (one virtual call per batch, not per datum).
    fn log_lik_sum(&self, theta: &[f64], idx: &[usize]) -> f64 {
        idx.iter().map(|&i| self.log_lik(theta, i)).sum()
    }
    /// Σᵢ ℓᵢ(θ) over `idx`, with ∇ℓᵢ(θ) accumulated into `grad` datum by datum in the order of
    /// `idx`: the same bits as [`log_lik_grad`](DataModel::log_lik_grad) called for each index
    /// in turn (one virtual call per batch; models override it to read several rows at once,
    /// so that the memory reads of a randomly drawn batch overlap).
    fn log_lik_grad_batch(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) -> f64 {
        let mut total = 0.0;
        for &i in idx {
            total += self.log_lik_grad(theta, i, grad);
        }
        total
    }
    /// ∇ℓᵢ(θ) over `idx` accumulated into `grad`: the gradient of
    /// [`log_lik_grad_batch`](DataModel::log_lik_grad_batch), the same bits, for callers that
    /// do not use the sum of the values (stochastic gradients); models may skip computing the
    /// values (a GLM does).
    fn grad_batch(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) {
        self.log_lik_grad_batch(theta, idx, grad);
    }
    /// ℓᵢ(θ′) − ℓᵢ(θ) for each index of `idx`, into `out` (θ = `theta`, θ′ = `proposal`; the
    /// first min(`idx.len()`, `out.len()`) entries): the same bits as
    /// [`log_lik`](DataModel::log_lik) at θ′ minus at θ datum by datum (one virtual call per
    /// batch; a GLM overrides it to read each row once for both points). The minibatch tests'
    /// plain differences ([`crate::kernel::minibatch_mh::cv::StepDiffs`]).
    fn log_lik_diff_many(&self, theta: &[f64], proposal: &[f64], idx: &[usize], out: &mut [f64]) {
        for (o, &i) in out.iter_mut().zip(idx) {
            *o = self.log_lik(proposal, i) - self.log_lik(theta, i);
        }
    }
    /// Σᵢ ℓᵢ(θ) over all data, gradient accumulated into `grad`.
    fn log_lik_grad_all(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        (0..self.n())
            .map(|i| self.log_lik_grad(theta, i, grad))
            .sum()
    }
    /// [`log_lik_grad_all`](Self::log_lik_grad_all) at each of K points (`points`, K rows of
    /// `dim()` numbers): the K values, each gradient accumulated into its row of `grads`
    /// (K × dim). The same bits as one call per point (a GLM reads its data once for all K;
    /// the KSD's exact scores).
    fn log_lik_grad_all_many(&self, points: &[f64], grads: &mut [f64]) -> Vec<f64> {
        self.log_lik_grad_all_each(points, grads)
    }
    /// [`log_lik_grad_all_many`](Self::log_lik_grad_all_many) one point at a time.
    fn log_lik_grad_all_each(&self, points: &[f64], grads: &mut [f64]) -> Vec<f64> {
        let dim = self.dim().max(1);
        points
            .chunks_exact(dim)
            .zip(grads.chunks_exact_mut(dim))
            .map(|(x, g)| self.log_lik_grad_all(x, g))
            .collect()
    }
    /// Σᵢ ℓᵢ(θ) over all data.
    fn log_lik_all(&self, theta: &[f64]) -> f64 {
        (0..self.n()).map(|i| self.log_lik(theta, i)).sum()
    }

    /// A sensible deterministic starting point (zeros unless the model knows better).
    fn initial_point(&self) -> Vec<f64> {
        alloc::vec![0.0; self.dim()]
    }

    /// The generalised-linear structure ℓᵢ(θ) = f(yᵢ, xᵢᵀθ), when the model has it.
    /// Samplers with model-specific bounds or closed-form weights (SMH, preferential
    /// subsampling) use it; others ignore it.
    fn as_glm(&self) -> Option<&dyn GlmView> {
        None
    }

    /// The time-series structure, when the model is a state-space model over one series
    /// (`lgssm`, `sv`, `garch`): its data are not exchangeable, so subsampling samplers refuse
    /// it and the time-series samplers (`pf-sgld`, `pmmh`) need it.
    fn as_series(&self) -> Option<&series::SeriesModel> {
        None
    }

    /// The temperature K the model already applies to its likelihood (ℓᵢ = log p(xᵢ|θ)/K;
    /// 1 when untempered). Samplers with their own `temperature` setting refuse to temper a
    /// second time.
    fn likelihood_temperature(&self) -> f64 {
        1.0
    }

    /// When the model samples in whitened coordinates z ([`reparam`]), the map θ = θ̂ + C⁻ᵀ z
    /// to the user's coordinates; every reported draw, summary and score is on θ. `None` when
    /// θ is sampled directly.
    fn user_map(&self) -> Option<&reparam::AffineMap> {
        None
    }

    /// What the `reparam` setting did for this model (None: the model has no such step).
    fn reparam_info(&self) -> Option<&reparam::ReparamInfo> {
        None
    }

    /// Run the chunks of this model's full-data passes through `parallel` (a host with threads
    /// sets this on a freshly built model; the results are bit-identical either way). Models
    /// without chunked passes ignore it.
    fn set_parallel(&mut self, parallel: alloc::sync::Arc<dyn crate::parallel::ParallelFor>) {
        let _ = parallel;
    }
    /// The threads set by [`set_parallel`](DataModel::set_parallel), if any (passes outside the
    /// model, such as the control variates' and the mode search's, share them out the same way).
    fn parallel(&self) -> Option<&dyn crate::parallel::ParallelFor> {
        None
    }

    /// Whether draws are reported on another scale than the chain's position (time-series
    /// models report natural parameters such as σ where the samplers move log σ). When true,
    /// [`reported_names`](DataModel::reported_names), [`to_reported`](DataModel::to_reported)
    /// and [`position_of_reported`](DataModel::position_of_reported) say how.
    fn reports_transformed(&self) -> bool {
        false
    }

    /// Names of the reported parameters (length [`dim`](DataModel::dim)); by default
    /// [`param_names`](DataModel::param_names).
    fn reported_names(&self) -> Vec<String> {
        self.param_names()
    }

    /// The reported parameters of a position (`out.len() == theta.len()`); by default a copy.
    fn to_reported(&self, theta: &[f64], out: &mut [f64]) {
        out.copy_from_slice(theta);
    }

    /// The position for reported parameters (the inverse of
    /// [`to_reported`](DataModel::to_reported)); `None` outside the support.
    fn position_of_reported(&self, reported: &[f64]) -> Option<Vec<f64>> {
        Some(reported.to_vec())
    }
}

/// Read access to a GLM's design and family, for samplers that exploit ℓᵢ(θ) = f(yᵢ, xᵢᵀθ).
pub trait GlmView: Send + Sync {
    /// The design (x row-major, y).
    fn design(&self) -> &crate::data::Design;
    /// The family f and its η-derivatives.
    fn family(&self) -> &dyn GlmFamily;
    /// Per-row offsets oᵢ of the linear predictor ηᵢ = oᵢ + xᵢᵀθ (a whitened GLM's; None: 0).
    fn offset(&self) -> Option<&[f64]> {
        None
    }
    /// ηᵢ = oᵢ + xᵢᵀθ (xᵢᵀθ summed in index order, then the offset added).
    fn eta(&self, theta: &[f64], i: usize) -> f64 {
        let s = crate::linalg::dot(self.design().row(i), theta);
        match self.offset() {
            Some(o) => o[i] + s,
            None => s,
        }
    }
    /// For each row i of `idx` (the first min of the four lengths): ηᵢ at θ (`theta`) into
    /// `eta0`, at θ′ (`proposal`) into `eta1`, and f(yᵢ, ηᵢ(θ′)) − f(yᵢ, ηᵢ(θ)) into `dl`: the
    /// same bits as [`eta`](GlmView::eta) and the family's [`value`](GlmFamily::value) row by
    /// row (a GLM overrides it to read each row once for both points, with the family's
    /// values in a loop of their own). The minibatch tests' per-datum differences
    /// ([`crate::kernel::minibatch_mh::cv::StepDiffs::at_many`]).
    fn step_terms(
        &self,
        theta: &[f64],
        proposal: &[f64],
        idx: &[usize],
        eta0: &mut [f64],
        eta1: &mut [f64],
        dl: &mut [f64],
    ) {
        let fam = self.family();
        let y = &self.design().y;
        for (((&i, e0), e1), v) in idx.iter().zip(eta0).zip(eta1).zip(dl) {
            *e0 = self.eta(theta, i);
            *e1 = self.eta(proposal, i);
            *v = fam.value(y[i], *e1) - fam.value(y[i], *e0);
        }
    }
    /// For the rows `start..start + out.len() / 4`: [ηᵢ, f(yᵢ, ηᵢ), f′, f″] written to
    /// `out[4(i − start)..]` (the control variates' per-datum terms, one row's four numbers
    /// side by side). The same bits as [`eta`](GlmView::eta) and the family's functions row by
    /// row (a GLM overrides it with one pass in blocks, without a virtual call per row).
    fn terms_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        let fam = self.family();
        let y = &self.design().y;
        for (k, t) in (start..y.len()).zip(out.chunks_exact_mut(4)) {
            let e = self.eta(theta, k);
            let (v, f1) = fam.value_d1(y[k], e);
            t.copy_from_slice(&[e, v, f1, fam.d2(y[k], e)]);
        }
    }
}

/// out += (g(θ + εv) − g(θ − εv)) / (2ε) with g written by `grad` (into a zeroed buffer),
/// ε = 10⁻⁵·(1 + ‖θ‖∞)/‖v‖∞; nothing when v = 0 or v is not finite.
pub(crate) fn central_difference(
    theta: &[f64],
    v: &[f64],
    out: &mut [f64],
    mut grad: impl FnMut(&[f64], &mut [f64]),
) {
    let d = theta.len();
    let vmax = v.iter().fold(0.0f64, |m, x| m.max(crate::math::abs(*x)));
    if !(vmax.is_finite() && vmax > 0.0) {
        return;
    }
    let tmax = theta
        .iter()
        .fold(0.0f64, |m, x| m.max(crate::math::abs(*x)));
    let eps = 1e-5 * (1.0 + tmax) / vmax;
    let mut t = alloc::vec![0.0; d];
    let mut gp = alloc::vec![0.0; d];
    let mut gm = alloc::vec![0.0; d];
    for k in 0..d {
        t[k] = theta[k] + eps * v[k];
    }
    grad(&t, &mut gp);
    for k in 0..d {
        t[k] = theta[k] - eps * v[k];
    }
    grad(&t, &mut gm);
    for k in 0..d {
        out[k] += (gp[k] - gm[k]) / (2.0 * eps);
    }
}

/// A target log density with gradient (up to an additive constant), for the exact samplers.
pub trait LogDensity {
    /// Dimension d.
    fn dim(&self) -> usize;
    /// log π(θ).
    fn log_density(&self, theta: &[f64]) -> f64;
    /// log π(θ); ∇ log π(θ) is **written** (not accumulated) into `grad`.
    fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64;
    /// Per-datum evaluations that one call costs (n for a full-data density, 1 for a closed form).
    fn evals_per_call(&self) -> u64 {
        1
    }
}

/// The full-data posterior of a [`DataModel`]: log p(θ) + Σᵢ ℓᵢ(θ).
pub struct FullData<M: ?Sized> {
    /// The model (an `Arc<dyn DataModel>` or a reference).
    pub model: M,
}

impl<M> FullData<M> {
    /// Wrap a model.
    pub fn new(model: M) -> Self {
        FullData { model }
    }
}

impl<M, D> LogDensity for FullData<M>
where
    M: core::ops::Deref<Target = D>,
    D: DataModel + ?Sized,
{
    fn dim(&self) -> usize {
        self.model.dim()
    }
    fn log_density(&self, theta: &[f64]) -> f64 {
        let lp = self.model.log_prior(theta);
        if !lp.is_finite() {
            return f64::NEG_INFINITY;
        }
        lp + self.model.log_lik_all(theta)
    }
    fn log_density_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let lp = self.model.log_prior_grad(theta, grad);
        if !lp.is_finite() {
            return f64::NEG_INFINITY;
        }
        lp + self.model.log_lik_grad_all(theta, grad)
    }
    fn evals_per_call(&self) -> u64 {
        self.model.n() as u64
    }
}
