//! Minibatch estimators of ∇ log π(θ): naive (uniform with or without replacement),
//! control variate, preferential (importance) weights sampled by an alias table, k-DPP
//! subsets; the preferential weights of Putcha (2024, Ch.4) and the pseudo-variance
//! E‖ĝ − ∇ log π‖² of each estimator in closed form.
//!
//! # Formula
//! With aᵢ = ∇ℓᵢ(θ) (naive) or aᵢ = ∇ℓᵢ(θ) − ∇ℓᵢ(θ̂) (control variate) and a batch S of m
//! draws, every estimator is
//!
//! ĝ(θ) = ∇ log p(θ) + [Σᵢ ∇ℓᵢ(θ̂)] + Σ_{i∈S} wᵢ aᵢ,
//!
//! (the bracket only for the control variate), with wᵢ = n/m (uniform), wᵢ = 1/(m pᵢ)
//! (m i.i.d. draws from p, duplicates counted separately) or wᵢ = 1/πᵢ (a k-DPP with
//! inclusion probabilities πᵢ: Horvitz–Thompson). All three are unbiased.
//!
//! Pseudo-variance V = E‖ĝ − g‖² = tr Cov ĝ (thesis §4.3, eq. 4.3.1 and the proof of
//! Lemma 4.3.1):
//! - i.i.d. from p:   V(p) = (1/m)[Σᵢ ‖aᵢ‖²/pᵢ − ‖Σᵢ aᵢ‖²];
//! - uniform with replacement (pᵢ = 1/n): V = (1/m)[n Σᵢ ‖aᵢ‖² − ‖Σᵢ aᵢ‖²];
//! - optimal pᵢ ∝ ‖aᵢ‖:   V* = (1/m)[(Σᵢ ‖aᵢ‖)² − ‖Σᵢ aᵢ‖²] ≤ V(p) for every p;
//! - uniform without replacement: V = (n²/m)·((n − m)/(n − 1))·(1/n) Σᵢ ‖aᵢ − ā‖².
//!
//! Preferential weights (static, computed once at the mode θ̂ with Laplace covariance Σ̂):
//! - SGLD-PS (eq. 4.3.6): pᵢ ∝ ‖∇ℓᵢ(θ̂)‖;
//! - SGLD-CV-PS (eqs. 4.3.10–4.3.11): pᵢ ∝ √tr(∇²ℓᵢ(θ̂) Σ̂ ∇²ℓᵢ(θ̂)), which for a GLM
//!   (∇²ℓᵢ = f″(yᵢ, ηᵢ) xᵢxᵢᵀ) is |f″(yᵢ, ηᵢ)|·‖xᵢ‖·√(xᵢᵀΣ̂xᵢ): logistic |f″| = sᵢ(1 − sᵢ),
//!   linear |f″| = 1/σ². Other models use their per-datum Hessians, O(n d³).
//! - optionally a defensive mixture p ← (1 − δ)p + δ/n (not in the thesis) so that no
//!   weight is zero.
//!
//! Control-variate cost (spec 003 §2.3, step 2): the per-datum gradients ∇ℓᵢ(θ̂) at the centre
//! are computed once (one full pass, which also gives Σᵢ ∇ℓᵢ(θ̂)) and stored, n·d floats, so a
//! step evaluates only the m gradients ∇ℓᵢ(θ). When n·d exceeds [`CV_STORE_MAX`] (1 GiB of
//! f64) they are not stored and each step recomputes ∇ℓᵢ(θ̂) for its batch: 2m evaluations.
//! [`GradientEstimator::evals_per_draw`] says which.
//!
//! Batch sizes: without replacement m ≤ n; with replacement (uniform or preferential)
//! m ≤ [`MAX_BATCH_FACTOR`]·n — a larger batch only lowers the variance like a bigger multiple
//! of the full data would, and an unbounded one would exhaust memory.
//!
//! A k-DPP draw that ends short of k items (possible only through rounding in the sequential
//! conditioning, see [`KDpp::sample`]) is never used: the estimate is NaN (so a chain reports a
//! divergence and stays put) and the event is counted ([`GradientEstimator::incomplete_draws`]).

use super::dpp::KDpp;
use crate::cost::Cost;
use crate::dist::{AliasTable, IndexSampler};
use crate::error::Error;
use crate::math;
use crate::model::DataModel;
use crate::rng::Rng;
use alloc::boxed::Box;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// Largest n·d for which the control variate stores the per-datum gradients ∇ℓᵢ(θ̂)
/// (2²⁷ ≈ 1.3·10⁸ floats, 1 GiB); above it they are recomputed every step (2m evaluations).
pub const CV_STORE_MAX: usize = 1 << 27;

/// Batches drawn with replacement (uniform or preferential) are limited to this multiple of n.
pub const MAX_BATCH_FACTOR: usize = 10;

/// Check a batch size m for n data: 1 ≤ m, and m ≤ n without replacement or
/// m ≤ [`MAX_BATCH_FACTOR`]·n with replacement (i.i.d. draws).
pub fn check_batch(n: usize, batch: usize, with_replacement: bool) -> Result<(), Error> {
    if batch == 0 {
        return Err(Error::setting("batch_size", "must be at least 1"));
    }
    let max = if with_replacement {
        n.saturating_mul(MAX_BATCH_FACTOR)
    } else {
        n
    };
    if batch > max {
        let how = if with_replacement {
            alloc::format!("{MAX_BATCH_FACTOR}·n = {max} (drawing with replacement)")
        } else {
            alloc::format!("n = {n} (drawing without replacement)")
        };
        return Err(Error::setting(
            "batch_size",
            alloc::format!("{batch} exceeds the largest allowed batch, {how}"),
        ));
    }
    Ok(())
}

/// The control-variate centre and what is kept of it: a deterministic function of the model
/// and θ̂ (one full pass), so a run's chains share one ([`crate::sampler::share`]).
#[derive(Debug, Clone)]
pub(crate) struct Centre {
    /// θ̂.
    theta: Vec<f64>,
    /// Σᵢ ∇ℓᵢ(θ̂).
    full: Vec<f64>,
    /// ∇ℓᵢ(θ̂), n × d row-major, when n·d ≤ [`CV_STORE_MAX`].
    grads: Option<Vec<f64>>,
}

impl Centre {
    /// The centre θ̂ = `c` of `model`: Σᵢ ∇ℓᵢ(θ̂) (one full pass), with the ∇ℓᵢ(θ̂) kept when
    /// n·d ≤ [`CV_STORE_MAX`]; its cost. Fails on a centre of the wrong length or a non-finite
    /// gradient there.
    pub(crate) fn compute(model: &dyn DataModel, c: &[f64]) -> Result<(Self, Cost), Error> {
        let (n, d) = (model.n(), model.dim());
        Error::check_dim("control-variate centre", d, c.len())?;
        let store = n.checked_mul(d).is_some_and(|nd| nd <= CV_STORE_MAX);
        let (full, grads) = if store {
            let g = per_datum_gradients(model, c, None);
            (sum_rows(&g, d), Some(g))
        } else {
            let mut full = vec![0.0; d];
            model.log_lik_grad_all(c, &mut full);
            (full, None)
        };
        if full.iter().chain(c.iter()).any(|v| !v.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        let cost = Cost::value_and_grad(n as u64);
        Ok((
            Centre {
                theta: c.to_vec(),
                full,
                grads,
            },
            cost,
        ))
    }
}

/// How the minibatch is drawn.
#[derive(Debug, Clone)]
pub enum Subsampler {
    /// Uniform, with or without replacement; weight n/m.
    Uniform(IndexSampler),
    /// m i.i.d. draws from p by an alias table (with replacement); weight 1/(m pᵢ).
    Preferential {
        /// The distribution p.
        table: AliasTable,
        /// Batch size m.
        batch: usize,
    },
    /// One k-DPP subset; weight `weights[i]` (1/πᵢ for Horvitz–Thompson).
    Dpp {
        /// The k-DPP sampler.
        dpp: Box<KDpp>,
        /// Per-datum weights wᵢ.
        weights: Vec<f64>,
    },
}

/// An unbiased (for the DPP, with Horvitz–Thompson weights) minibatch estimator of
/// ∇ log π(θ).
#[derive(Debug, Clone)]
pub struct GradientEstimator {
    n: usize,
    sub: Subsampler,
    /// Control-variate centre; `None` for the naive estimator.
    centre: Option<Arc<Centre>>,
    incomplete: u64,
    idx: Vec<usize>,
    buf: Vec<f64>,
    buf_centre: Vec<f64>,
    tmp: Vec<f64>,
    /// The two halves' gradients of a large batch ([`batch_grad`]).
    parts: Vec<f64>,
}

/// Batches from this many indices on are summed in two halves ([`batch_grad`]).
pub const SPLIT_BATCH: usize = 512;

/// Σᵢ∇ℓᵢ(θ) over the batch `idx`, added to `buf` (zero on entry). From [`SPLIT_BATCH`] indices
/// on, the batch is summed in two halves (the first ⌊m/2⌋ indices, then the rest), each from
/// zero, and the two sums are added to `buf` in that order: on the model's spare threads
/// ([`DataModel::parallel`]) when it has them, the same bits either way. A drawn batch's rows
/// are random reads of the data, so two threads keep twice as many reads in flight.
pub fn batch_grad(
    model: &dyn DataModel,
    theta: &[f64],
    idx: &[usize],
    buf: &mut [f64],
    parts: &mut Vec<f64>,
) {
    let (m, d) = (idx.len(), buf.len());
    if m < SPLIT_BATCH || d == 0 {
        model.grad_batch(theta, idx, buf);
        return;
    }
    let half = m / 2;
    parts.clear();
    parts.resize(2 * d, 0.0);
    crate::parallel::for_each_piece(model.parallel(), parts, d, &|k, g| {
        let part = if k == 0 { &idx[..half] } else { &idx[half..] };
        model.grad_batch(theta, part, g);
    });
    for half_sum in parts.chunks_exact(d) {
        for (b, g) in buf.iter_mut().zip(half_sum) {
            *b += g;
        }
    }
}

impl GradientEstimator {
    /// An estimator for a model with `n` data and `d` parameters drawing batches with `sub`,
    /// centred at `centre` (control variate) when given. The centre costs one full pass,
    /// returned as [`Cost`] (the per-datum gradients there are stored when n·d ≤
    /// [`CV_STORE_MAX`]). Fails on a centre of the wrong length, a non-finite full-data
    /// gradient there, or a batch size outside [`check_batch`].
    pub fn new(
        model: &dyn DataModel,
        sub: Subsampler,
        centre: Option<&[f64]>,
    ) -> Result<(Self, Cost), Error> {
        let (n, d) = Self::check(model, &sub)?;
        let (centre, cost) = match centre {
            None => (None, Cost::default()),
            Some(c) => {
                let (c, cost) = Centre::compute(model, c)?;
                (Some(Arc::new(c)), cost)
            }
        };
        Ok((Self::assemble(n, d, sub, centre), cost))
    }

    /// [`new`](Self::new) with a centre already computed for this model (by another chain's
    /// estimator, [`centre_kept`](Self::centre_kept)): no pass, the same estimator. Fails as
    /// `new` on the batch, and on a centre of the wrong shape.
    pub(crate) fn with_centre(
        model: &dyn DataModel,
        sub: Subsampler,
        centre: Arc<Centre>,
    ) -> Result<Self, Error> {
        let (n, d) = Self::check(model, &sub)?;
        Error::check_dim("control-variate centre", d, centre.theta.len())?;
        Error::check_dim("control-variate full gradient", d, centre.full.len())?;
        if let Some(g) = &centre.grads {
            Error::check_dim("control-variate gradients", n.saturating_mul(d), g.len())?;
        }
        Ok(Self::assemble(n, d, sub, Some(centre)))
    }

    /// The control-variate centre and what was computed there, to give another chain's
    /// estimator ([`with_centre`](Self::with_centre)); `None` for the naive estimator.
    pub(crate) fn centre_kept(&self) -> Option<Arc<Centre>> {
        self.centre.clone()
    }

    /// The data count and dimension, after checking the model and the batch.
    fn check(model: &dyn DataModel, sub: &Subsampler) -> Result<(usize, usize), Error> {
        let d = model.dim();
        let n = model.n();
        if n == 0 || d == 0 {
            return Err(Error::data(
                "a gradient estimator needs at least one datum and one parameter",
            ));
        }
        match sub {
            Subsampler::Uniform(s) if s.n() != n => {
                return Err(Error::Dimension {
                    what: "index sampler population",
                    expected: n,
                    got: s.n(),
                })
            }
            Subsampler::Uniform(s) => check_batch(n, s.batch(), s.with_replacement())?,
            Subsampler::Preferential { table, batch } => {
                Error::check_dim("preferential weights", n, table.len())?;
                check_batch(n, *batch, true)?;
            }
            Subsampler::Dpp { dpp, weights } if dpp.n() != n || weights.len() != n => {
                return Err(Error::Dimension {
                    what: "k-DPP ground set",
                    expected: n,
                    got: dpp.n(),
                });
            }
            _ => {}
        }
        Ok((n, d))
    }

    fn assemble(n: usize, d: usize, sub: Subsampler, centre: Option<Arc<Centre>>) -> Self {
        GradientEstimator {
            n,
            sub,
            centre,
            incomplete: 0,
            idx: Vec::new(),
            buf: vec![0.0; d],
            buf_centre: vec![0.0; d],
            tmp: vec![0.0; d],
            parts: Vec::new(),
        }
    }

    /// The naive estimator ∇ log p(θ) + (n/m) Σ_{i∈S} ∇ℓᵢ(θ) for a model of dimension `d`
    /// with `n` data. Fails as [`IndexSampler::new`] and [`check_batch`].
    pub fn naive(n: usize, d: usize, batch: usize, with_replacement: bool) -> Result<Self, Error> {
        check_batch(n, batch, with_replacement)?;
        Ok(GradientEstimator {
            n,
            sub: Subsampler::Uniform(IndexSampler::new(n, batch, with_replacement)?),
            centre: None,
            incomplete: 0,
            idx: Vec::with_capacity(batch),
            buf: vec![0.0; d],
            buf_centre: vec![0.0; d],
            tmp: vec![0.0; d],
            parts: Vec::new(),
        })
    }

    /// The control-variate estimator centred at `centre` (normally the mode), uniform
    /// batches. Computes Σᵢ ∇ℓᵢ(θ̂) with one full pass and returns its cost. Fails on a centre
    /// of the wrong length, a non-finite full-data gradient there, or as [`IndexSampler::new`]
    /// and [`check_batch`].
    pub fn control_variate(
        model: &dyn DataModel,
        centre: &[f64],
        batch: usize,
        with_replacement: bool,
    ) -> Result<(Self, Cost), Error> {
        check_batch(model.n(), batch, with_replacement)?;
        let sub = Subsampler::Uniform(IndexSampler::new(model.n(), batch, with_replacement)?);
        Self::new(model, sub, Some(centre))
    }

    /// Batch size m (k for a k-DPP).
    pub fn batch(&self) -> usize {
        match &self.sub {
            Subsampler::Uniform(s) => s.batch(),
            Subsampler::Preferential { batch, .. } => *batch,
            Subsampler::Dpp { dpp, .. } => dpp.k(),
        }
    }

    /// Change the batch size (adaptive batch sizes). Fails outside [`check_batch`] or for a
    /// k-DPP (its k is fixed).
    pub fn set_batch(&mut self, batch: usize) -> Result<(), Error> {
        let n = self.n;
        match &mut self.sub {
            Subsampler::Uniform(s) => {
                check_batch(n, batch, s.with_replacement())?;
                s.set_batch(batch)
            }
            Subsampler::Preferential { batch: b, .. } => {
                check_batch(n, batch, true)?;
                *b = batch;
                Ok(())
            }
            Subsampler::Dpp { .. } => Err(Error::setting(
                "batch_size",
                "the k of a k-DPP estimator is fixed",
            )),
        }
    }

    /// Whether this is the control-variate estimator.
    pub fn is_control_variate(&self) -> bool {
        self.centre.is_some()
    }

    /// The control-variate centre θ̂, if any.
    pub fn centre(&self) -> Option<&[f64]> {
        self.centre.as_ref().map(|c| c.theta.as_slice())
    }

    /// Per-datum gradient evaluations per batch item: 1 for the naive estimator and for the
    /// control variate with stored ∇ℓᵢ(θ̂), 2 when n·d > [`CV_STORE_MAX`] (recomputed).
    pub fn evals_per_draw(&self) -> u64 {
        match self.centre.as_deref() {
            Some(Centre { grads: None, .. }) => 2,
            _ => 1,
        }
    }

    /// Forget the stored ∇ℓᵢ(θ̂) so that each step recomputes them (2m evaluations), as
    /// happens automatically when n·d > [`CV_STORE_MAX`]; frees n·d floats. No effect on the
    /// naive estimator.
    pub fn drop_centre_gradients(&mut self) {
        if let Some(c) = &mut self.centre {
            if c.grads.is_some() {
                // A centre of its own without them (another chain may hold the same one).
                *c = Arc::new(Centre {
                    theta: c.theta.clone(),
                    full: c.full.clone(),
                    grads: None,
                });
            }
        }
    }

    /// How many k-DPP draws ended short of k items (numerically exhausted residual); each
    /// such estimate was returned as NaN instead of a biased value.
    pub fn incomplete_draws(&self) -> u64 {
        self.incomplete
    }

    /// The subsampling scheme.
    pub fn subsampler(&self) -> &Subsampler {
        &self.sub
    }

    /// Write an estimate of ∇ log π(`theta`) into `out` (length d) and return the number of
    /// per-datum gradient evaluations (m, or 2m for a control variate without stored centre
    /// gradients, see [`Self::evals_per_draw`]). `theta` and `out` must have the model's
    /// dimension (extra entries are ignored, missing ones are left untouched). A k-DPP draw
    /// that came out short of k items gives `out` = NaN and 0 evaluations (counted in
    /// [`Self::incomplete_draws`]).
    pub fn estimate<R: Rng + ?Sized>(
        &mut self,
        rng: &mut R,
        model: &dyn DataModel,
        theta: &[f64],
        out: &mut [f64],
    ) -> u64 {
        // Draw the batch; a common weight (uniform) or per-datum weights.
        let common = match &mut self.sub {
            Subsampler::Uniform(s) => {
                s.sample(rng, &mut self.idx);
                Some(self.n as f64 / self.idx.len().max(1) as f64)
            }
            Subsampler::Preferential { table, batch } => {
                self.idx.clear();
                for _ in 0..*batch {
                    self.idx.push(table.sample(rng));
                }
                None
            }
            Subsampler::Dpp { dpp, .. } => {
                if !dpp.sample(rng, &mut self.idx) {
                    self.incomplete += 1;
                    out.iter_mut().for_each(|v| *v = f64::NAN);
                    return 0;
                }
                None
            }
        };
        let m = self.idx.len();
        self.buf.iter_mut().for_each(|v| *v = 0.0);
        let d = self.buf.len();
        let centre = self.centre.as_ref();
        match common {
            Some(scale) => {
                batch_grad(model, theta, &self.idx, &mut self.buf, &mut self.parts);
                if let Some(c) = centre {
                    self.buf_centre.iter_mut().for_each(|v| *v = 0.0);
                    match &c.grads {
                        Some(g) => {
                            for &i in &self.idx {
                                if let Some(row) = g.get(i * d..(i + 1) * d) {
                                    for (b, r) in self.buf_centre.iter_mut().zip(row) {
                                        *b += r;
                                    }
                                }
                            }
                        }
                        None => {
                            batch_grad(
                                model,
                                &c.theta,
                                &self.idx,
                                &mut self.buf_centre,
                                &mut self.parts,
                            );
                        }
                    }
                    for (b, bc) in self.buf.iter_mut().zip(&self.buf_centre) {
                        *b -= bc;
                    }
                }
                self.buf.iter_mut().for_each(|b| *b *= scale);
            }
            None => {
                for &i in &self.idx {
                    let w = match &self.sub {
                        Subsampler::Preferential { table, .. } => {
                            1.0 / (m as f64 * table.probability(i))
                        }
                        Subsampler::Dpp { weights, .. } => weights.get(i).copied().unwrap_or(0.0),
                        Subsampler::Uniform(_) => self.n as f64 / m as f64,
                    };
                    self.tmp.iter_mut().for_each(|v| *v = 0.0);
                    model.log_lik_grad(theta, i, &mut self.tmp);
                    if let Some(c) = centre {
                        match &c.grads {
                            Some(g) => {
                                if let Some(row) = g.get(i * d..(i + 1) * d) {
                                    for (t, r) in self.tmp.iter_mut().zip(row) {
                                        *t -= r;
                                    }
                                }
                            }
                            None => {
                                for t in self.tmp.iter_mut() {
                                    *t = -*t;
                                }
                                model.log_lik_grad(&c.theta, i, &mut self.tmp);
                                for t in self.tmp.iter_mut() {
                                    *t = -*t;
                                }
                            }
                        }
                    }
                    for (b, t) in self.buf.iter_mut().zip(&self.tmp) {
                        *b += w * t;
                    }
                }
            }
        }
        out.iter_mut().for_each(|v| *v = 0.0);
        model.log_prior_grad(theta, out);
        for (o, b) in out.iter_mut().zip(&self.buf) {
            *o += b;
        }
        if let Some(c) = &self.centre {
            for (o, f) in out.iter_mut().zip(&c.full) {
                *o += f;
            }
        }
        self.evals_per_draw() * m as u64
    }

    /// The closed-form pseudo-variance E‖ĝ(θ) − ∇ log π(θ)‖² of this estimator at `theta`
    /// (one full pass over the data, not counted anywhere). `None` for a k-DPP (its
    /// variance needs the pair inclusion probabilities).
    pub fn pseudo_variance(&self, model: &dyn DataModel, theta: &[f64]) -> Option<f64> {
        let d = model.dim();
        let a = per_datum_gradients(model, theta, self.centre());
        match &self.sub {
            Subsampler::Uniform(s) => Some(pseudo_variance_uniform(
                &a,
                d,
                s.batch(),
                s.with_replacement(),
            )),
            Subsampler::Preferential { table, batch } => Some(pseudo_variance_weighted(
                &a,
                d,
                table.probabilities(),
                *batch,
            )),
            Subsampler::Dpp { .. } => None,
        }
    }
}

/// The n × d row-major matrix of aᵢ = ∇ℓᵢ(θ) − ∇ℓᵢ(θ̂) (`centre` = θ̂) or aᵢ = ∇ℓᵢ(θ)
/// (`centre` = None). One full pass (two with a centre).
pub fn per_datum_gradients(
    model: &dyn DataModel,
    theta: &[f64],
    centre: Option<&[f64]>,
) -> Vec<f64> {
    let (n, d) = (model.n(), model.dim());
    let mut a = vec![0.0; n * d];
    let mut tmp = vec![0.0; d];
    for (i, row) in a.chunks_mut(d).enumerate() {
        model.log_lik_grad(theta, i, row);
        if let Some(c) = centre {
            tmp.iter_mut().for_each(|v| *v = 0.0);
            model.log_lik_grad(c, i, &mut tmp);
            for (r, t) in row.iter_mut().zip(&tmp) {
                *r -= t;
            }
        }
    }
    a
}

fn row_norm2(r: &[f64]) -> f64 {
    r.iter().map(|v| v * v).sum()
}

fn sum_rows(a: &[f64], d: usize) -> Vec<f64> {
    let mut s = vec![0.0; d];
    for r in a.chunks(d) {
        for (x, v) in s.iter_mut().zip(r) {
            *x += v;
        }
    }
    s
}

/// V(p) = (1/m)[Σᵢ ‖aᵢ‖²/pᵢ − ‖Σᵢ aᵢ‖²]: the pseudo-variance of m i.i.d. draws from `p`
/// (normalised here) weighted by 1/(m pᵢ). `a` is n × d row-major. Infinite when some
/// pᵢ = 0 with aᵢ ≠ 0 (the estimator is then biased).
pub fn pseudo_variance_weighted(a: &[f64], d: usize, p: &[f64], m: usize) -> f64 {
    if d == 0 || m == 0 {
        return f64::NAN;
    }
    let total: f64 = p.iter().sum();
    let mut s = 0.0;
    for (r, &pi) in a.chunks(d).zip(p) {
        let q = row_norm2(r);
        if q > 0.0 {
            s += q / (pi / total);
        }
    }
    (s - row_norm2(&sum_rows(a, d))) / m as f64
}

/// The pseudo-variance of the uniform estimator (n/m) Σ_{i∈S} aᵢ:
/// with replacement (1/m)[n Σ‖aᵢ‖² − ‖Σaᵢ‖²], without (n²/m)((n − m)/(n − 1))(1/n)Σ‖aᵢ − ā‖².
pub fn pseudo_variance_uniform(a: &[f64], d: usize, m: usize, with_replacement: bool) -> f64 {
    if d == 0 || m == 0 {
        return f64::NAN;
    }
    let n = a.len() / d;
    let nf = n as f64;
    let s = sum_rows(a, d);
    let sq: f64 = a.chunks(d).map(row_norm2).sum();
    // (1/n) Σ‖aᵢ − ā‖² = (1/n) Σ‖aᵢ‖² − ‖ā‖².
    let pop = sq / nf - row_norm2(&s) / (nf * nf);
    if with_replacement {
        nf * nf * pop / m as f64
    } else if n <= 1 {
        0.0
    } else {
        nf * nf / m as f64 * ((n as f64 - m as f64) / (nf - 1.0)) * pop
    }
}

/// V* = (1/m)[(Σᵢ ‖aᵢ‖)² − ‖Σᵢ aᵢ‖²], the smallest pseudo-variance over all p (attained at
/// pᵢ ∝ ‖aᵢ‖, Lemma 4.3.1).
pub fn pseudo_variance_optimal(a: &[f64], d: usize, m: usize) -> f64 {
    if d == 0 || m == 0 {
        return f64::NAN;
    }
    let l1: f64 = a.chunks(d).map(|r| math::sqrt(row_norm2(r))).sum();
    (l1 * l1 - row_norm2(&sum_rows(a, d))) / m as f64
}

/// The optimal (state-dependent) weights pᵢ ∝ ‖aᵢ‖ (unnormalised).
pub fn optimal_weights(a: &[f64], d: usize) -> Vec<f64> {
    a.chunks(d.max(1))
        .map(|r| math::sqrt(row_norm2(r)))
        .collect()
}

/// SGLD-PS weights pᵢ ∝ ‖∇ℓᵢ(θ̂)‖ (eq. 4.3.6; unnormalised). One full pass, one datum's
/// gradient in memory at a time (the same values as [`optimal_weights`] of
/// [`per_datum_gradients`], without its n × d array: 48 GB for a PMF of d = 30 000 on 200 000
/// ratings).
pub fn ps_weights(model: &dyn DataModel, mode: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; model.dim()];
    (0..model.n())
        .map(|i| {
            g.iter_mut().for_each(|v| *v = 0.0);
            model.log_lik_grad(mode, i, &mut g);
            math::sqrt(row_norm2(&g))
        })
        .collect()
}

/// SGLD-CV-PS weights pᵢ ∝ √tr(∇²ℓᵢ(θ̂) Σ̂ ∇²ℓᵢ(θ̂)) (eq. 4.3.11; unnormalised), `cov` = Σ̂
/// row-major d × d. Closed form |f″(yᵢ, ηᵢ)|·‖xᵢ‖·√(xᵢᵀΣ̂xᵢ) for GLMs (O(n d²)); per-datum
/// Hessians otherwise (O(n d³)). Errors when `mode` or `cov` has the wrong length.
pub fn cv_ps_weights(model: &dyn DataModel, mode: &[f64], cov: &[f64]) -> Result<Vec<f64>, Error> {
    let (n, d) = (model.n(), model.dim());
    Error::check_dim("mode", d, mode.len())?;
    Error::check_dim("Laplace covariance", d * d, cov.len())?;
    if let Some(glm) = model.as_glm() {
        let des = glm.design();
        let fam = glm.family();
        return Ok((0..n)
            .map(|i| {
                let x = des.row(i);
                let eta = glm.eta(mode, i);
                let c = math::abs(fam.d2(des.y.get(i).copied().unwrap_or(0.0), eta));
                let mut q = 0.0;
                for a in 0..d {
                    let mut r = 0.0;
                    for b in 0..d {
                        r += cov[a * d + b] * x[b];
                    }
                    q += x[a] * r;
                }
                c * math::sqrt(row_norm2(x)) * math::sqrt(q.max(0.0))
            })
            .collect());
    }
    let mut h = vec![0.0; d * d];
    let mut hs = vec![0.0; d * d];
    let mut support = Vec::with_capacity(d);
    Ok((0..n)
        .map(|i| {
            h.iter_mut().for_each(|v| *v = 0.0);
            model.log_lik_hess(mode, i, &mut h);
            // A datum's Hessian is often sparse (matrix factorisation: one user's and one
            // item's factors): H is zero outside S × S, S = the rows with a non-zero entry,
            // so tr(HΣH) = Σ_{a,b,k ∈ S} H_ab Σ_bk H_ka in O(|S|³) instead of O(d³).
            support.clear();
            support.extend((0..d).filter(|&a| h[a * d..(a + 1) * d].iter().any(|&v| v != 0.0)));
            if support.len() < d {
                let mut t = 0.0;
                for &a in &support {
                    for &b in &support {
                        let hab = h[a * d + b];
                        if hab == 0.0 {
                            continue;
                        }
                        for &k in &support {
                            t += hab * cov[b * d + k] * h[k * d + a];
                        }
                    }
                }
                return math::sqrt(t.max(0.0));
            }
            // HΣ, then tr(HΣH) = Σ_ab (HΣ)_ab H_ba.
            for a in 0..d {
                for b in 0..d {
                    hs[a * d + b] = (0..d).map(|k| h[a * d + k] * cov[k * d + b]).sum();
                }
            }
            let mut t = 0.0;
            for a in 0..d {
                for b in 0..d {
                    t += hs[a * d + b] * h[b * d + a];
                }
            }
            math::sqrt(t.max(0.0))
        })
        .collect())
}

/// The defensive mixture p = (1 − δ)·w/Σw + δ/n of weights `w` (normalised). `delta` in
/// [0, 1]; Σw = 0 gives the uniform distribution.
pub fn defensive_mixture(w: &[f64], delta: f64) -> Vec<f64> {
    let n = w.len() as f64;
    let total: f64 = w.iter().sum();
    if !(total > 0.0 && total.is_finite()) {
        return vec![1.0 / n; w.len()];
    }
    w.iter()
        .map(|&x| (1.0 - delta) * x / total + delta / n)
        .collect()
}

/// Per-datum gradient Lipschitz constants Lᵢ with ‖∇ℓᵢ(θ) − ∇ℓᵢ(θ′)‖ ≤ Lᵢ‖θ − θ′‖
/// (Assumption 2, App. B.2): sup|f″|·‖xᵢ‖² for a GLM whose family has a bounded second
/// derivative (logistic ¼‖xᵢ‖², linear ‖xᵢ‖²/σ²); `None` otherwise.
pub fn lipschitz_constants(model: &dyn DataModel) -> Option<Vec<f64>> {
    let glm = model.as_glm()?;
    let b = glm.family().d2_bound()?;
    let des = glm.design();
    Some((0..des.n).map(|i| b * row_norm2(des.row(i))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_forms_agree() {
        // a: 4 × 2
        let a = [1.0, 0.0, 0.0, 2.0, -1.0, 1.0, 3.0, -1.0];
        let d = 2;
        let uni = [0.25; 4];
        let v1 = pseudo_variance_weighted(&a, d, &uni, 3);
        let v2 = pseudo_variance_uniform(&a, d, 3, true);
        assert!((v1 - v2).abs() < 1e-12);
        let w = optimal_weights(&a, d);
        let vo = pseudo_variance_weighted(&a, d, &w, 3);
        assert!((vo - pseudo_variance_optimal(&a, d, 3)).abs() < 1e-12);
        assert!(vo <= v1);
        // Without replacement, the whole population: zero variance.
        assert!(pseudo_variance_uniform(&a, d, 4, false).abs() < 1e-12);
        let p = defensive_mixture(&w, 0.1);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}
