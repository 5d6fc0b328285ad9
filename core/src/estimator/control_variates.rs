//! Taylor control variates qₖ(θ) of order 0, 1 or 2 around a centre θ*, with their data sums.
//!
//! # Formula
//! qₖ(θ) = ℓₖ(θ*) + ∇ℓₖ(θ*)ᵀΔ + ½ ΔᵀHₖ(θ*)Δ,  Δ = θ − θ*  (order 1 drops the Hessian term,
//! order 0 keeps only ℓₖ(θ*)).
//! Σₖ qₖ(θ) = Σₖ ℓₖ(θ*) + AᵀΔ + ½ ΔᵀBΔ,  A = Σₖ ∇ℓₖ(θ*),  B = Σₖ Hₖ(θ*)  — O(d²) once A, B are
//! known (one full pass over the data at θ*).
//! dₖ(θ) = ℓₖ(θ) − qₖ(θ),  ∇dₖ(θ) = ∇ℓₖ(θ) − ∇ℓₖ(θ*) − Hₖ(θ*)Δ.
//!
//! For a GLM (ℓₖ = f(yₖ, ηₖ), ηₖ = xₖᵀθ) the per-datum cache is (ηₖ*, f, f′, f″) at θ*, and
//! with δz = ηₖ − ηₖ*:  qₖ = f* + f′* δz + ½ f″* δz²,  ∇dₖ = (f′(ηₖ) − f′* − f″* δz) xₖ.
//! Other models cache ℓₖ(θ*), ∇ℓₖ(θ*) and (order 2) Hₖ(θ*) for every datum.
//!
//! ## References
//! Dang et al. (2019), JMLR 20(100), eq. (11); Quiroz et al. (2019), JASA.

use crate::error::Error;
use crate::model::DataModel;
use crate::parallel::PASS_CHUNK;
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// Largest number of cached floats for a non-GLM model (n·(1 + d + d²) for order 2).
const MAX_GENERAL_CACHE: usize = 40_000_000;

#[derive(Debug, Clone)]
enum Cache {
    /// Per datum k: [ηₖ*, f(yₖ, ηₖ*), f′, f″] at `terms[4k..4k + 4]` (one cache line, not four,
    /// for a datum read at random). Behind an `Arc`: copies of the control variates (a run's
    /// chains starting at one centre, `sampler::share`) hold one cache, 4n numbers.
    Glm { terms: Arc<Vec<f64>> },
    /// Per datum: ℓₖ(θ*), ∇ℓₖ(θ*) (n·d), Hₖ(θ*) (n·d², order 2 only).
    General {
        l: Vec<f64>,
        g: Vec<f64>,
        h: Vec<f64>,
    },
}

/// Taylor control variates around a centre θ*, with the summary sums Σℓ*, A and B.
#[derive(Debug, Clone)]
pub struct ControlVariates {
    order: usize,
    n: usize,
    d: usize,
    centre: Vec<f64>,
    sum_l: f64,
    a: Vec<f64>,
    b: Vec<f64>,
    cache: Cache,
}

impl ControlVariates {
    /// Build the control variates of `order` (0, 1 or 2) at `centre` with one full pass over the
    /// data (n joint value/gradient/Hessian evaluations, see [`full_pass_cost`](Self::full_pass_cost)).
    /// B = Σₖ Hₖ(θ*) is always computed (it gives the mass matrix), whatever the order.
    pub fn new(model: &dyn DataModel, centre: &[f64], order: usize) -> Result<Self, Error> {
        Self::new_reusing(model, centre, order, None)
    }

    /// [`new`](Self::new), writing the per-datum cache into the buffers of `spare` (control
    /// variates no longer used, e.g. the centre before last of a warm-up) instead of fresh
    /// memory: the same values (every entry is written). On tall data a fresh cache is 4n
    /// numbers of new pages for the kernel to clear at every re-centring.
    pub fn new_reusing(
        model: &dyn DataModel,
        centre: &[f64],
        order: usize,
        spare: Option<ControlVariates>,
    ) -> Result<Self, Error> {
        let d = model.dim();
        let n = model.n();
        Error::check_dim("control-variate centre", d, centre.len())?;
        if order > 2 {
            return Err(Error::setting(
                "order",
                "control-variate order must be 0, 1 or 2",
            ));
        }
        if n == 0 {
            return Err(Error::data("the data set has no rows"));
        }
        if centre.iter().any(|x| !x.is_finite()) {
            return Err(Error::NonFiniteStart);
        }
        let mut a = vec![0.0; d];
        let mut b = vec![0.0; d * d];
        let mut sum_l = 0.0;
        let cache = if let Some(glm) = model.as_glm() {
            let design = glm.design();
            if design.n != n || design.d != d {
                return Err(Error::Dimension {
                    what: "design",
                    expected: n * d,
                    got: design.n * design.d,
                });
            }
            // [ηₖ*, f*, f′*, f″*] per datum, side by side; the rows in pieces of PASS_CHUNK on
            // the model's threads (each row's numbers do not depend on the piece), then Σℓ* in
            // row order.
            // The spare's buffer when no copy holds it too.
            let mut terms = match spare.map(|c| c.cache) {
                Some(Cache::Glm { terms }) => Arc::try_unwrap(terms).unwrap_or_default(),
                _ => Vec::new(),
            };
            terms.resize(4 * n, 0.0);
            // One pass over the rows for both: each chunk of `PASS_CHUNK` rows in blocks of
            // `FUSED` rows, the block's terms and then its share of A = Σₖ f′ₖ xₖ and the lower
            // triangle of B = Σₖ f″ₖ xₖxₖᵀ while its rows are in cache. Each chunk's A and B
            // are summed from zero in row order (eight rows per sweep, as over the whole chunk:
            // blocks of a multiple of eight rows), the chunks' sums added in chunk order (one
            // chunk: the rows straight into A and B), so the bits do not depend on whether the
            // chunks run on the model's spare threads (`DataModel::parallel`).
            const FUSED: usize = 256;
            let fill = |first: usize, t: &mut [f64], a: &mut [f64], b: &mut [f64]| {
                let rows = t.len() / 4;
                let mut s0 = 0;
                while s0 < rows {
                    let s1 = (s0 + FUSED).min(rows);
                    glm.terms_rows(centre, first + s0, &mut t[4 * s0..4 * s1]);
                    add_grad_hess_rows(design, t, first, first + s0..first + s1, a, b);
                    s0 = s1;
                }
            };
            let chunks = n.div_ceil(PASS_CHUNK);
            let tri = d * (d + 1) / 2;
            if chunks <= 1 {
                fill(0, &mut terms, &mut a, &mut b);
            } else {
                let job = |c: usize, t: &mut [f64], out: &mut [f64]| {
                    let (ac, bc) = out.split_at_mut(d);
                    let mut full = vec![0.0; d * d];
                    fill(c * PASS_CHUNK, t, ac, &mut full);
                    let mut k = 0;
                    for i in 0..d {
                        bc[k..k + i + 1].copy_from_slice(&full[i * d..i * d + i + 1]);
                        k += i + 1;
                    }
                };
                let mut sink = |_: usize, out: &[f64]| {
                    let (ac, bc) = out.split_at(d);
                    for (x, y) in a.iter_mut().zip(ac) {
                        *x += y;
                    }
                    let mut k = 0;
                    for i in 0..d {
                        for (x, y) in b[i * d..i * d + i + 1].iter_mut().zip(&bc[k..k + i + 1]) {
                            *x += y;
                        }
                        k += i + 1;
                    }
                };
                // Partial sums of every chunk in flight at once cost (d + d(d+1)/2)·chunks
                // numbers: beyond 2²² of them the chunks run one after the other.
                let p = model
                    .parallel()
                    .filter(|_| chunks.saturating_mul(d + tri) <= 1 << 22);
                crate::parallel::map_pieces(
                    p,
                    &mut terms,
                    4 * PASS_CHUNK,
                    d + tri,
                    &job,
                    &mut sink,
                );
            }
            for t in terms.chunks_exact(4) {
                sum_l += t[1];
            }
            for i in 0..d {
                for j in 0..i {
                    b[j * d + i] = b[i * d + j];
                }
            }
            Cache::Glm {
                terms: Arc::new(terms),
            }
        } else {
            let per = 1 + d + if order == 2 { d * d } else { 0 };
            if n.saturating_mul(per) > MAX_GENERAL_CACHE {
                return Err(Error::setting(
                    "order",
                    "control variates of this order need too much memory for this model and \
                     data size; use a lower order",
                ));
            }
            let mut l = vec![0.0; n];
            let mut g = vec![0.0; n * d];
            let mut h = vec![0.0; if order == 2 { n * d * d } else { 0 }];
            let mut hk = vec![0.0; d * d];
            for k in 0..n {
                let gk = &mut g[k * d..(k + 1) * d];
                let v = model.log_lik_grad(centre, k, gk);
                l[k] = v;
                sum_l += v;
                for i in 0..d {
                    a[i] += gk[i];
                }
                hk.iter_mut().for_each(|x| *x = 0.0);
                model.log_lik_hess(centre, k, &mut hk);
                for i in 0..d * d {
                    b[i] += hk[i];
                }
                if order == 2 {
                    h[k * d * d..(k + 1) * d * d].copy_from_slice(&hk);
                }
            }
            Cache::General { l, g, h }
        };
        if !sum_l.is_finite() || a.iter().chain(&b).any(|x| !x.is_finite()) {
            return Err(Error::Numerical(
                "log-likelihood, gradient or Hessian is not finite at the control-variate centre"
                    .into(),
            ));
        }
        Ok(ControlVariates {
            order,
            n,
            d,
            centre: centre.to_vec(),
            sum_l,
            a,
            b,
            cache,
        })
    }

    /// Per-datum evaluations of one construction (n: one joint value/gradient/Hessian per datum).
    pub fn full_pass_cost(&self) -> u64 {
        self.n as u64
    }

    /// Order of the expansion (0, 1, 2).
    pub fn order(&self) -> usize {
        self.order
    }

    /// The centre θ*.
    pub fn centre(&self) -> &[f64] {
        &self.centre
    }

    /// Σₖ ℓₖ(θ*).
    pub fn sum_loglik_at_centre(&self) -> f64 {
        self.sum_l
    }

    /// A = Σₖ ∇ℓₖ(θ*).
    pub fn sum_grad(&self) -> &[f64] {
        &self.a
    }

    /// B = Σₖ ∇²ℓₖ(θ*) (row-major d × d), computed whatever the order.
    pub fn sum_hess(&self) -> &[f64] {
        &self.b
    }

    /// Number of data n.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Σₖ qₖ(θ) in O(d²); ∇Σₖ qₖ(θ) is **accumulated** into `grad` when given.
    pub fn proxy_sum(&self, theta: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let d = self.d;
        let mut s = self.sum_l;
        if self.order == 0 {
            return s;
        }
        let mut delta = [0.0f64; 64];
        let mut heap;
        let delta: &mut [f64] = if d <= 64 {
            &mut delta[..d]
        } else {
            heap = vec![0.0; d];
            &mut heap
        };
        for i in 0..d {
            delta[i] = theta[i] - self.centre[i];
        }
        s += crate::linalg::dot(&self.a, delta);
        let mut grad = grad;
        if let Some(g) = grad.as_deref_mut() {
            for i in 0..d {
                g[i] += self.a[i];
            }
        }
        if self.order == 2 {
            let mut quad = 0.0;
            for i in 0..d {
                let bi = crate::linalg::dot(&self.b[i * d..(i + 1) * d], delta);
                quad += delta[i] * bi;
                if let Some(g) = grad.as_deref_mut() {
                    g[i] += bi;
                }
            }
            s += 0.5 * quad;
        }
        s
    }

    /// Bring `g` up to date for the subsample `idx` of a GLM (see [`Gathered`]); returns false,
    /// leaving `g` invalid, for other models, a model of the wrong shape, an index out of range or
    /// a subsample beyond 32 MB of rows. Copies the rows whose index changed since the last
    /// gather, and every datum's cached terms when the centre moved.
    pub fn gather(&self, model: &dyn DataModel, idx: &[usize], g: &mut Gathered) -> bool {
        let d = self.d;
        let (Cache::Glm { terms }, Some(glm)) = (&self.cache, model.as_glm()) else {
            g.valid = false;
            return false;
        };
        let design = glm.design();
        if model.n() != self.n
            || design.n != self.n
            || design.d != d
            || idx.len().saturating_mul(d.max(1)) > MAX_GATHER
            || idx.iter().any(|&k| k >= self.n)
        {
            g.valid = false;
            return false;
        }
        let m = idx.len();
        let addr = design.x.as_ptr() as usize;
        let off = glm.offset();
        let same_rows = g.valid
            && g.design == addr
            && g.d == d
            && g.idx.len() == m
            && g.has_offset == off.is_some();
        let same_centre = same_rows && g.centre == self.centre;
        if !same_rows {
            g.idx.clear();
            g.idx.resize(m, usize::MAX);
            g.rows.clear();
            g.rows.resize(m * d, 0.0);
            g.terms.clear();
            g.terms.resize(m, [0.0; 6]);
        }
        for (s, &k) in idx.iter().enumerate() {
            let new_row = g.idx[s] != k;
            if new_row {
                g.rows[s * d..(s + 1) * d].copy_from_slice(design.row(k));
                g.terms[s][0] = design.y[k];
                g.terms[s][1] = off.map_or(0.0, |o| o[k]);
                g.idx[s] = k;
            }
            if new_row || !same_centre {
                g.terms[s][2..].copy_from_slice(&terms[4 * k..4 * k + 4]);
            }
        }
        g.design = addr;
        g.d = d;
        g.centre.clone_from(&self.centre);
        g.has_offset = off.is_some();
        g.valid = true;
        true
    }

    /// [`diffs`](Self::diffs) from a gathered subsample when `g` holds exactly `idx` for this
    /// model and centre (the same bits); otherwise the same as [`diffs`](Self::diffs).
    pub fn diffs_gathered(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        dout: &mut [f64],
        gout: &mut [f64],
    ) {
        if g.idx.len() != idx.len() {
            return self.diffs(model, theta, idx, dout, gout);
        }
        self.diffs_gathered_at(model, theta, idx, g, 0, dout, gout);
    }

    /// [`diffs_gathered`](Self::diffs_gathered) for `idx` held by `g` from its position `start`
    /// on (a mini-batch of a gathered product of the block-Poisson estimator).
    #[allow(clippy::too_many_arguments)]
    pub fn diffs_gathered_at(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        start: usize,
        dout: &mut [f64],
        gout: &mut [f64],
    ) {
        let d = self.d;
        let with_grad = !gout.is_empty();
        if (with_grad && gout.len() < idx.len() * d)
            || !self.gathered_diffs(
                model,
                theta,
                idx,
                g,
                start,
                dout,
                with_grad,
                &mut |s, c, row| {
                    for (gi, xi) in gout[s * d..(s + 1) * d].iter_mut().zip(row) {
                        *gi = c * xi;
                    }
                },
            )
        {
            self.diffs(model, theta, idx, dout, gout);
        }
    }

    /// The differences dₖ(θ) of the gathered subsample `idx` (all of `g`, from position 0) into
    /// `dout`, and for each datum the scalar cₖ = f′(ηₖ) − q′ₖ of its gradient ∇dₖ = cₖ xₖ into
    /// `cout` (the gradient itself is not formed: [`DiffEstimator`](super::DiffEstimator)
    /// accumulates cₖ xₖ from [`Gathered::rows`], the same bits as from the formed gradients).
    /// False (nothing written) when `g` does not hold exactly `idx` for this model and centre.
    pub fn diffs_gathered_scalars(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        dout: &mut [f64],
        cout: &mut [f64],
    ) -> bool {
        if g.idx.len() != idx.len() || cout.len() < idx.len() {
            return false;
        }
        self.gathered_diffs(model, theta, idx, g, 0, dout, true, &mut |s, c, _| {
            cout[s] = c;
        })
    }

    /// [`diffs_gathered_scalars`](Self::diffs_gathered_scalars) for `idx` held by `g` from its
    /// position `start` on (one part of a subsample evaluated in parts; each position's numbers
    /// are those of the whole evaluation).
    #[allow(clippy::too_many_arguments)]
    pub fn diffs_gathered_scalars_at(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        start: usize,
        dout: &mut [f64],
        cout: &mut [f64],
    ) -> bool {
        if cout.len() < idx.len() {
            return false;
        }
        self.gathered_diffs(model, theta, idx, g, start, dout, true, &mut |s, c, _| {
            cout[s] = c;
        })
    }

    /// The gathered path of [`diffs_gathered_at`](Self::diffs_gathered_at): dₖ into `dout` and,
    /// when `with_grad`, `sink(s, cₖ, xₖ)` for each position s; false when `g` does not fit.
    /// Compiled for the running CPU ([`crate::cpu`]; the same bits on either path).
    #[allow(clippy::too_many_arguments)]
    fn gathered_diffs(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        start: usize,
        dout: &mut [f64],
        with_grad: bool,
        sink: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> bool {
        crate::on_cpu!(
            self.gathered_diffs_avx2(model, theta, idx, g, start, dout, with_grad, sink),
            self.gathered_diffs_any(model, theta, idx, g, start, dout, with_grad, sink)
        )
    }

    crate::avx2_twin!(
        #[allow(clippy::too_many_arguments)]
        fn gathered_diffs_avx2 = gathered_diffs_any(
            &self,
            model: &dyn DataModel,
            theta: &[f64],
            idx: &[usize],
            g: &Gathered,
            start: usize,
            dout: &mut [f64],
            with_grad: bool,
            sink: &mut dyn FnMut(usize, f64, &[f64]),
        ) -> bool
    );

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn gathered_diffs_any(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        g: &Gathered,
        start: usize,
        dout: &mut [f64],
        with_grad: bool,
        sink: &mut dyn FnMut(usize, f64, &[f64]),
    ) -> bool {
        let d = self.d;
        let fits = g.valid
            && g.d == d
            && theta.len() == d
            && model.n() == self.n
            && model.dim() == d
            && g.idx.get(start..start.saturating_add(idx.len())) == Some(idx)
            && g.centre == self.centre
            && dout.len() >= idx.len();
        let glm = match model.as_glm() {
            Some(glm) if fits && glm.design().x.as_ptr() as usize == g.design => glm,
            _ => return false,
        };
        let fam = glm.family();
        // Eight rows per sweep: their linear predictors as eight independent sums (each in
        // index order, as `dot`), the family's values in one call, then the differences.
        // In chunks of C data: their linear predictors eight rows per sweep (each a sum in
        // index order, as `dot`), the family's values for the whole chunk in one call (one
        // virtual call per chunk, a loop long enough to vectorise), then the differences.
        const R: usize = 8;
        const C: usize = 256;
        let m = idx.len();
        let (rows, all_terms) = (&g.rows[start * d..], &g.terms[start..]);
        let (mut ys, mut es, mut vs, mut f1s) = ([0.0; C], [0.0; C], [0.0; C], [0.0; C]);
        for c0 in (0..m).step_by(C) {
            let clen = C.min(m - c0);
            let row = |j: usize| &rows[(c0 + j) * d..(c0 + j + 1) * d];
            for s0 in (0..clen).step_by(R) {
                let len = R.min(clen - s0);
                if len == R {
                    let r: [&[f64]; R] = core::array::from_fn(|j| row(s0 + j));
                    let mut acc = [0.0f64; R];
                    for (k, &t) in theta.iter().enumerate() {
                        for j in 0..R {
                            acc[j] += r[j][k] * t;
                        }
                    }
                    es[s0..s0 + R].copy_from_slice(&acc);
                } else {
                    for (j, e) in es[s0..s0 + len].iter_mut().enumerate() {
                        *e = crate::linalg::dot(row(s0 + j), theta);
                    }
                }
            }
            let terms = &all_terms[c0..c0 + clen];
            for ((y, e), t) in ys.iter_mut().zip(es.iter_mut()).zip(terms) {
                *y = t[0];
                if g.has_offset {
                    *e += t[1];
                }
            }
            if with_grad {
                fam.value_d1_many(&ys[..clen], &es[..clen], &mut vs[..clen], &mut f1s[..clen]);
            } else {
                fam.value_many(&ys[..clen], &es[..clen], &mut vs[..clen]);
            }
            for (j, t) in terms.iter().enumerate() {
                let s = c0 + j;
                let (q, dq) = taylor(self.order, t, es[j]);
                dout[s] = vs[j] - q;
                if with_grad {
                    sink(s, f1s[j] - dq, row(j));
                }
            }
        }
        true
    }

    /// The differences dₖ(θ) = ℓₖ(θ) − qₖ(θ) for every k in `idx`, written to `dout`; when `gout`
    /// is non-empty (length `idx.len()·d`) the gradients ∇dₖ(θ) are **written** there row by row.
    /// One joint value/gradient evaluation per index. A model of the wrong shape gives NaN.
    pub fn diffs(
        &self,
        model: &dyn DataModel,
        theta: &[f64],
        idx: &[usize],
        dout: &mut [f64],
        gout: &mut [f64],
    ) {
        let d = self.d;
        let with_grad = !gout.is_empty();
        if model.n() != self.n
            || model.dim() != d
            || theta.len() != d
            || dout.len() < idx.len()
            || (with_grad && gout.len() < idx.len() * d)
            || idx.iter().any(|&k| k >= self.n)
        {
            dout.iter_mut().for_each(|x| *x = f64::NAN);
            gout.iter_mut().for_each(|x| *x = f64::NAN);
            return;
        }
        match &self.cache {
            Cache::Glm { terms } => {
                let Some(glm) = model.as_glm() else {
                    dout.iter_mut().for_each(|x| *x = f64::NAN);
                    gout.iter_mut().for_each(|x| *x = f64::NAN);
                    return;
                };
                let design = glm.design();
                let fam = glm.family();
                for (s, &k) in idx.iter().enumerate() {
                    let row = design.row(k);
                    let e = glm.eta(theta, k);
                    let c = &terms[4 * k..4 * k + 4];
                    let t = [design.y[k], 0.0, c[0], c[1], c[2], c[3]];
                    let g = with_grad.then(|| &mut gout[s * d..(s + 1) * d]);
                    dout[s] = glm_diff(self.order, fam, &t, e, row, g);
                }
            }
            Cache::General { l, g: gs, h } => {
                let mut delta = vec![0.0; d];
                for i in 0..d {
                    delta[i] = theta[i] - self.centre[i];
                }
                let mut scratch = vec![0.0; d];
                for (s, &k) in idx.iter().enumerate() {
                    let gk = &gs[k * d..(k + 1) * d];
                    let mut q = l[k];
                    if self.order >= 1 {
                        q += crate::linalg::dot(gk, &delta);
                    }
                    // scratch = Hₖ Δ (order 2)
                    if self.order == 2 {
                        let hk = &h[k * d * d..(k + 1) * d * d];
                        crate::linalg::matvec(hk, d, &delta, &mut scratch);
                        q += 0.5 * crate::linalg::dot(&delta, &scratch);
                    }
                    if with_grad {
                        let go = &mut gout[s * d..(s + 1) * d];
                        go.iter_mut().for_each(|x| *x = 0.0);
                        let v = model.log_lik_grad(theta, k, go);
                        dout[s] = v - q;
                        if self.order >= 1 {
                            for i in 0..d {
                                go[i] -= gk[i];
                            }
                        }
                        if self.order == 2 {
                            for i in 0..d {
                                go[i] -= scratch[i];
                            }
                        }
                    } else {
                        dout[s] = model.log_lik(theta, k) - q;
                    }
                }
            }
        }
    }
}

/// The control variate of one GLM datum and its derivative in η, (qₖ, q′ₖ), at ηₖ = `e`, from
/// its terms `t` = [yₖ, oₖ, ηₖ*, f*, f′*, f″*].
#[inline(always)]
fn taylor(order: usize, t: &[f64; 6], e: f64) -> (f64, f64) {
    let (eta, l, d1, d2) = (t[2], t[3], t[4], t[5]);
    let dz = e - eta;
    match order {
        0 => (l, 0.0),
        1 => (l + d1 * dz, d1),
        _ => (l + dz * (d1 + 0.5 * d2 * dz), d1 + d2 * dz),
    }
}

/// dₖ(θ) for one GLM datum with terms `t` at ηₖ = `e`; when `g` is given, ∇dₖ(θ) =
/// (f′(ηₖ) − q′ₖ) xₖ is written there. The row-by-row path; the gathered one computes the same
/// expressions eight data at a time (the same bits).
#[inline(always)]
fn glm_diff(
    order: usize,
    fam: &dyn crate::model::GlmFamily,
    t: &[f64; 6],
    e: f64,
    row: &[f64],
    g: Option<&mut [f64]>,
) -> f64 {
    let (q, dq) = taylor(order, t, e);
    let Some(g) = g else {
        return fam.value(t[0], e) - q;
    };
    let (v, f1) = fam.value_d1(t[0], e);
    let c = f1 - dq;
    for (gi, xi) in g.iter_mut().zip(row) {
        *gi = c * xi;
    }
    v - q
}

/// Largest gathered subsample, in floats of its rows (m·d): 32 MB. Beyond it the evaluations
/// read the design directly.
const MAX_GATHER: usize = 1 << 22;

/// A GLM subsample gathered into contiguous buffers: for each position s of a subsample u, the
/// row x_{u_s} and [y, offset, ηₖ*, f*, f′*, f″*] of datum u_s (the control variates' cache).
///
/// HMC-ECS evaluates the same u at every leapfrog step of an iteration (L steps, or a whole NUTS
/// tree). Read through the index, each datum costs about ten cache misses on tall data (the
/// row's lines and the six per-datum arrays at random addresses); gathered once per u, the
/// evaluations read the subsample from cache. [`ControlVariates::gather`] brings it up to date
/// (only the positions whose index changed are copied again; all the cached terms when the
/// centre moved); [`ControlVariates::diffs_gathered`] uses it only when it matches the indices,
/// the centre and the design it is given, and computes the same bits as
/// [`ControlVariates::diffs`].
#[derive(Debug, Clone, Default)]
pub struct Gathered {
    idx: Vec<usize>,
    /// Address of the design's rows and its width, and the centre of the cached terms.
    design: usize,
    d: usize,
    centre: Vec<f64>,
    valid: bool,
    has_offset: bool,
    rows: Vec<f64>,
    terms: Vec<[f64; 6]>,
}

impl Gathered {
    /// Whether the buffers hold a subsample (false before the first gather, for a model that
    /// is not a GLM, or beyond the size limit).
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The gathered rows, position by position (m·d numbers, row-major).
    pub fn rows(&self) -> &[f64] {
        &self.rows
    }
}

/// A += Σₖ f′ₖ xₖ and the lower triangle of B += Σₖ f″ₖ xₖxₖᵀ over `rows`, eight rows per sweep
/// over (i, j): each entry gets the rows' terms in row order, as row by row (the same bits),
/// with B loaded and stored once per eight rows instead of once per row. Compiled for the
/// running CPU ([`crate::cpu`]; the same bits on either path).
fn add_grad_hess_rows(
    design: &crate::data::Design,
    terms: &[f64],
    first: usize,
    rows: core::ops::Range<usize>,
    a: &mut [f64],
    b: &mut [f64],
) {
    crate::on_cpu!(
        add_grad_hess_rows_avx2(design, terms, first, rows.clone(), a, b),
        add_grad_hess_rows_any(design, terms, first, rows, a, b)
    )
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_grad_hess_rows_avx2(
    design: &crate::data::Design,
    terms: &[f64],
    first: usize,
    rows: core::ops::Range<usize>,
    a: &mut [f64],
    b: &mut [f64],
) {
    add_grad_hess_rows_any(design, terms, first, rows, a, b);
}

#[inline(always)]
fn add_grad_hess_rows_any(
    design: &crate::data::Design,
    terms: &[f64],
    first: usize,
    rows: core::ops::Range<usize>,
    a: &mut [f64],
    b: &mut [f64],
) {
    const R: usize = 8;
    let d = design.d;
    // `terms` starts at row `first`.
    let terms = |k: usize| &terms[4 * (k - first)..4 * (k - first) + 4];
    let full = rows.start + (rows.len() - rows.len() % R);
    for k0 in (rows.start..full).step_by(R) {
        let r: [&[f64]; R] = core::array::from_fn(|q| design.row(k0 + q));
        let f1: [f64; R] = core::array::from_fn(|q| terms(k0 + q)[2]);
        let f2: [f64; R] = core::array::from_fn(|q| terms(k0 + q)[3]);
        for i in 0..d {
            let mut s = a[i];
            for q in 0..R {
                s += f1[q] * r[q][i];
            }
            a[i] = s;
            let ri: [f64; R] = core::array::from_fn(|q| f2[q] * r[q][i]);
            let bi = &mut b[i * d..i * d + i + 1];
            let rj: [&[f64]; R] = core::array::from_fn(|q| &r[q][..=i]);
            for (j, bij) in bi.iter_mut().enumerate() {
                let mut s = *bij;
                for q in 0..R {
                    s += ri[q] * rj[q][j];
                }
                *bij = s;
            }
        }
    }
    for k in full..rows.end {
        let row = design.row(k);
        let (d1, d2) = (terms(k)[2], terms(k)[3]);
        for i in 0..d {
            a[i] += d1 * row[i];
            let ri = d2 * row[i];
            for j in 0..=i {
                b[i * d + j] += ri * row[j];
            }
        }
    }
}
