//! Generalised linear models: ℓᵢ(θ) = f(yᵢ, ηᵢ), ηᵢ = xᵢᵀθ.
//!
//! # Formula
//! ∇ℓᵢ = f′(yᵢ, ηᵢ) xᵢ,  ∇²ℓᵢ = f″(yᵢ, ηᵢ) xᵢxᵢᵀ.
//! One family trait gives `logistic` ([`Logistic`]), `poisson` ([`Poisson`]), `linear` with known
//! noise ([`GaussianNoise`]) and `robust` ([`StudentT`]).

use super::prior::Prior;
use super::reparam::{AffineMap, ReparamInfo};
use super::{DataModel, GlmView};
use crate::data::Design;
use crate::math;
use crate::optim::{find_mode, find_mode_subset, ModeOptions};
use crate::schema::ParamSpec;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

/// The per-datum log-likelihood as a function of the linear predictor η.
pub trait GlmFamily: Send + Sync {
    /// Model name (`logistic`, ...).
    fn name(&self) -> &'static str;
    /// f(y, η).
    fn value(&self, y: f64, eta: f64) -> f64;
    /// (f, ∂f/∂η).
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64);
    /// [`value_d1`](Self::value_d1) for each pair (yᵢ, ηᵢ), into `v` and `d1` (the same bits; one
    /// call through a `dyn GlmFamily` for many data, so the evaluations overlap).
    /// Compiled for the running CPU ([`crate::cpu`]; the same bits on either path).
    fn value_d1_many(&self, y: &[f64], eta: &[f64], v: &mut [f64], d1: &mut [f64]) {
        crate::on_cpu!(
            value_d1_many_avx2(self, y, eta, v, d1),
            value_d1_many_any(self, y, eta, v, d1)
        )
    }
    /// [`value`](Self::value) for each pair (yᵢ, ηᵢ), into `v` (the same bits), compiled for
    /// the running CPU.
    fn value_many(&self, y: &[f64], eta: &[f64], v: &mut [f64]) {
        crate::on_cpu!(
            value_many_avx2(self, y, eta, v),
            value_many_any(self, y, eta, v)
        )
    }
    /// ∂f/∂η alone: the bits of [`value_d1`](Self::value_d1)'s second number. The default
    /// inlines `value_d1` and lets the compiler drop the unused value (for the logistic family,
    /// its logarithm); a family whose value the compiler cannot drop may override it.
    #[inline(always)]
    fn d1(&self, y: f64, eta: f64) -> f64 {
        self.value_d1(y, eta).1
    }
    /// ∂²f/∂η².
    fn d2(&self, y: f64, eta: f64) -> f64;
    /// ∂³f/∂η³ (bounds for SMH-2 and Taylor remainders).
    fn d3(&self, y: f64, eta: f64) -> f64;
    /// sup over y, η of |∂²f/∂η²|, when finite (SMH-1 bounds); `None` when unbounded.
    fn d2_bound(&self) -> Option<f64> {
        None
    }
    /// sup over y, η of |∂³f/∂η³|, when finite (SMH-2 bounds); `None` when unbounded.
    fn d3_bound(&self) -> Option<f64> {
        None
    }
}

#[inline(always)]
fn value_d1_many_any<F: GlmFamily + ?Sized>(
    f: &F,
    y: &[f64],
    eta: &[f64],
    v: &mut [f64],
    d1: &mut [f64],
) {
    for (((&yi, &e), vi), gi) in y.iter().zip(eta).zip(v.iter_mut()).zip(d1.iter_mut()) {
        (*vi, *gi) = f.value_d1(yi, e);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn value_d1_many_avx2<F: GlmFamily + ?Sized>(
    f: &F,
    y: &[f64],
    eta: &[f64],
    v: &mut [f64],
    d1: &mut [f64],
) {
    value_d1_many_any(f, y, eta, v, d1);
}

#[inline(always)]
fn value_many_any<F: GlmFamily + ?Sized>(f: &F, y: &[f64], eta: &[f64], v: &mut [f64]) {
    for ((&yi, &e), vi) in y.iter().zip(eta).zip(v.iter_mut()) {
        *vi = f.value(yi, e);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn value_many_avx2<F: GlmFamily + ?Sized>(f: &F, y: &[f64], eta: &[f64], v: &mut [f64]) {
    value_many_any(f, y, eta, v);
}

/// Bernoulli with logit link: f = y η − log(1 + e^η), y ∈ {0, 1}.
#[derive(Debug, Clone, Copy, Default)]
pub struct Logistic;

// The logistic family evaluates e^(−|η|) and log1p by the branch-free `math::fast_*`
// functions (within 1 ulp of libm), so that the full-data passes vectorise.
impl GlmFamily for Logistic {
    fn name(&self) -> &'static str {
        "logistic"
    }
    #[inline(always)]
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - math::fast_softplus_sigmoid(eta).0
    }
    #[inline(always)]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let (sp, sg) = math::fast_softplus_sigmoid(eta);
        (y * eta - sp, y - sg)
    }
    #[inline(always)]
    fn d2(&self, _y: f64, eta: f64) -> f64 {
        let s = math::fast_softplus_sigmoid(eta).1;
        -s * (1.0 - s)
    }
    #[inline(always)]
    fn d3(&self, _y: f64, eta: f64) -> f64 {
        let s = math::fast_softplus_sigmoid(eta).1;
        -s * (1.0 - s) * (1.0 - 2.0 * s)
    }
    fn d2_bound(&self) -> Option<f64> {
        Some(0.25)
    }
    fn d3_bound(&self) -> Option<f64> {
        // sup |σ(1−σ)(1−2σ)| = 1/(6√3), at σ = ½ ± √3/6.
        Some(1.0 / (6.0 * math::sqrt(3.0)))
    }
}

/// A GLM posterior: family f, design, prior.
///
/// After [`Glm::whiten`] the model is the same posterior in whitened coordinates z
/// (θ = θ̂ + C⁻ᵀ z, see [`crate::model::reparam`]): `design` holds x̃ᵢ = C⁻¹xᵢ, `offset` holds
/// oᵢ = xᵢᵀθ̂, ηᵢ = oᵢ + x̃ᵢᵀz, and the prior (on θ) is evaluated through the map.
pub struct Glm<F> {
    /// Data (whitened rows after [`Glm::whiten`]).
    pub design: Design,
    /// The likelihood family.
    pub family: F,
    /// Prior on the coefficients θ (the user's coordinates).
    pub prior: Prior,
    /// Per-row offset of the linear predictor (set by [`Glm::whiten`]).
    offset: Option<Vec<f64>>,
    /// The map from the sampler's coordinates to θ (set by [`Glm::whiten`]).
    map: Option<AffineMap>,
    /// What [`Glm::whiten`] did (None: never asked).
    reparam: Option<ReparamInfo>,
    /// Runs the chunks of the full-data passes (None: one after another).
    parallel: Option<alloc::sync::Arc<dyn crate::parallel::ParallelFor>>,
}

/// Rows per block of the full-data passes (the block's linear predictors and derivatives stay
/// in L1 cache). Small, so that reading the design from memory (η) and the family's arithmetic
/// alternate finely and overlap: with 256 rows a block's η read ~28 KB while the arithmetic
/// waited, then the arithmetic ran while memory idled (the logistic pass at n = 327 346,
/// d = 14: 256 rows 7.8 ms, 128 8.0, 64 6.4, 32 5.9, 16 6.2). The bits do not depend on it.
pub const PASS_BLOCK: usize = 32;

/// Rows per group in the blocks of the full-data passes ([`Glm::log_lik_grad_rows`]).
const ROWS: usize = 8;

/// Points per sweep of a block in the passes at many points ([`DataModel::log_lik_grad_all_many`]):
/// one 256-bit vector of f64.
const LANES: usize = 4;

/// Drawn rows per chunk of a batch gradient ([`DataModel::log_lik_grad_batch`]): the chunk's
/// rows (256 × d values) stay in cache between its first and last sweep.
const GATHER: usize = 256;

/// Rows per chunk of [`GlmView::step_terms`] and [`DataModel::log_lik_diff_many`] (the
/// minibatch tests ask for up to 128 at a time; the chunk's scratch is zeroed per call).
const STEP_CHUNK: usize = 128;

/// The [`ROWS`] rows of length `d` in `q` (`ROWS · d` values), as slices of length exactly
/// `d` (so that indexing them by k < d needs no bounds checks).
#[inline(always)]
fn split_rows(q: &[f64], d: usize) -> [&[f64]; ROWS] {
    let (r0, q) = q.split_at(d);
    let (r1, q) = q.split_at(d);
    let (r2, q) = q.split_at(d);
    let (r3, q) = q.split_at(d);
    let (r4, q) = q.split_at(d);
    let (r5, q) = q.split_at(d);
    let (r6, r7) = q.split_at(d);
    [r0, r1, r2, r3, r4, r5, r6, &r7[..d]]
}

/// Reads one value of every cache line of the rows `idx` of a row-major design with `d`
/// columns, in a loop of loads alone: their misses overlap (up to the core's limit) instead of
/// each sweep waiting on its own rows, and the sweeps that follow read the rows from cache.
/// Changes no value.
#[inline]
fn touch_rows(x: &[f64], d: usize, idx: &[usize]) {
    const LINE: usize = 8;
    let mut acc = 0.0f64;
    for &i in idx {
        if let Some(row) = x.get(i * d..(i + 1) * d) {
            let mut k = 0;
            while k < d {
                acc += row[k];
                k += LINE;
            }
            if let Some(v) = row.last() {
                acc += v;
            }
        }
    }
    core::hint::black_box(acc);
}

/// Rows × d² above which the whitening's mode and Hessian use an evenly spaced subset of
/// ⌊budget/d²⌋ rows (likelihood scaled by n/m): Newton costs n·d² per iteration.
const WHITEN_BUDGET: f64 = 5e8;

/// Rows of the whitening's mode search from which it starts at the mode of every
/// [`WHITEN_COARSE`]-th row (a coarse Newton search) instead of at zero.
const WHITEN_COARSE_FROM: usize = 1 << 17;

/// Thinning of the whitening's coarse search (see [`WHITEN_COARSE_FROM`]).
const WHITEN_COARSE: usize = 16;

/// Newton decrement (squared Mahalanobis distance to the search's mode, in posterior sd) at
/// which the whitening's searches stop on tall data
/// ([`crate::optim::ModeOptions::decrement_tol`]): 1 sd, well inside the subset's own error
/// (the mode of m evenly spaced rows is ≈ √(d(n/m − 1)) sd from the full data's: 5 at
/// n = 10⁶, d = 30, m = 555 555).
const WHITEN_DECREMENT: f64 = 1.0;

/// Above this many parameters the model is sampled as given: whitening holds dense d × d
/// matrices (the negative Hessian, its factor; 32 MB each at d = 2000) and factors them.
pub const WHITEN_MAX_DIM: usize = 2000;

/// A mode search and Laplace map for [`Glm::whiten`] and the linear model with unknown noise.
pub(crate) struct LaplaceMap {
    /// The mode search's result (mode, negative Hessian, cost).
    pub mode: crate::optim::ModeResult,
    /// θ = θ̂ + C⁻ᵀz.
    pub map: AffineMap,
    /// Rows the mode and Hessian used.
    pub rows: usize,
    /// The coarse search the mode search started from, on tall data: its rows and Newton
    /// iterations.
    pub coarse: Option<(usize, usize)>,
    /// Ridge added to the precision's diagonal (0: none).
    pub ridge: f64,
}

/// The mode θ̂ of `model`'s posterior from `start` (Newton; on an evenly spaced subset of
/// ⌊[`WHITEN_BUDGET`]/p²⌋ rows with the likelihood scaled by n/m on tall data) and the map
/// θ = θ̂ + C⁻ᵀz with CCᵀ the negative Hessian there (a small ridge when rounding made it
/// indefinite). `decouple_last`: the last coordinate's cross terms are dropped from the
/// precision (block-diagonal C; any C gives an exact reparametrisation). Errors are the
/// `failed` (or, above [`WHITEN_MAX_DIM`], `none`) [`ReparamInfo`] to record.
pub(crate) fn laplace_map(
    model: &dyn DataModel,
    start: &[f64],
    decouple_last: bool,
) -> Result<LaplaceMap, ReparamInfo> {
    let (n, d) = (model.n(), model.dim());
    if d > WHITEN_MAX_DIM {
        return Err(ReparamInfo::none(alloc::format!(
            "d = {d} parameters is above {WHITEN_MAX_DIM}: too many to whiten (dense d × d \
             matrices); sampled as given"
        )));
    }
    let rows = if (n as f64) * (d * d) as f64 <= WHITEN_BUDGET {
        n
    } else {
        // At least 10·d rows when the data has them (never more than n: wide data with
        // few rows once made this clamp panic).
        ((WHITEN_BUDGET / (d * d) as f64) as usize)
            .max(d.max(1) * 10)
            .min(n)
    };
    let opts = ModeOptions {
        max_iter: 100,
        grad_tol: 1e-8,
        ..ModeOptions::default()
    };
    // On many rows, Newton first on every COARSE-th of them (its mode is within a few
    // posterior standard deviations of the full one), then from there on all `rows`: one or
    // two Hessians over the rows instead of five or six from `start`. The coarse search's
    // evaluations are counted; when it fails the search starts from `start`.
    let coarse_rows = rows / WHITEN_COARSE;
    let tall = rows >= WHITEN_COARSE_FROM && coarse_rows >= d.max(1) * 10;
    // On tall data both searches stop within 1 posterior sd of their mode (Newton decrement
    // ≤ 1, see WHITEN_DECREMENT) rather than at ‖g‖∞ ≤ 10⁻⁸ n: the map is exact whatever θ̂
    // and P, and one step from the coarse mode lands that close (the search then ends
    // without another Hessian over the rows; P is the one at the coarse mode).
    let opts = ModeOptions {
        decrement_tol: if tall { WHITEN_DECREMENT } else { 0.0 },
        ..opts
    };
    let coarse = if tall {
        let subset: Vec<usize> = (0..coarse_rows).map(|k| (k * n) / coarse_rows).collect();
        find_mode_subset(model, &subset, start, &opts)
            .ok()
            .filter(|r| r.mode.iter().all(|v| v.is_finite()))
    } else {
        None
    };
    let start = coarse.as_ref().map_or(start, |c| &c.mode[..]);
    let found = if rows == n {
        find_mode(model, start, &opts)
    } else {
        let subset: Vec<usize> = (0..rows).map(|k| (k * n) / rows).collect();
        find_mode_subset(model, &subset, start, &opts)
    };
    let found = found.map(|mut r| {
        if let Some(c) = &coarse {
            r.lik_evals += c.lik_evals;
            r.grad_evals += c.grad_evals;
            r.hess_evals += c.hess_evals;
        }
        r
    });
    let coarse = coarse.map(|c| (coarse_rows, c.iterations));
    let fail = |note: String| ReparamInfo {
        kind: "failed",
        note,
        rows_used: rows,
        cost: Default::default(),
        hess_evals: 0,
    };
    let res = match found {
        Ok(r) => r,
        Err(e) => {
            return Err(fail(alloc::format!(
                "no mode found ({e}); sampled as given"
            )))
        }
    };
    let mut precision = res.neg_hessian.clone();
    if decouple_last && d > 0 {
        let l = d - 1;
        for j in 0..l {
            precision[j * d + l] = 0.0;
            precision[l * d + j] = 0.0;
        }
    }
    // P, with a small ridge if rounding made it indefinite.
    let mut map = AffineMap::from_mode_and_precision(&res.mode, &precision);
    let mean_diag = (0..d).map(|j| math::abs(precision[j * d + j])).sum::<f64>() / d.max(1) as f64;
    let mut ridge = 0.0;
    for r in [1e-10, 1e-7, 1e-4] {
        if map.is_ok() {
            break;
        }
        ridge = r * mean_diag;
        let mut p = precision.clone();
        for j in 0..d {
            p[j * d + j] += ridge;
        }
        map = AffineMap::from_mode_and_precision(&res.mode, &p);
    }
    match map {
        Ok(map) => Ok(LaplaceMap {
            mode: res,
            map,
            rows,
            coarse,
            ridge,
        }),
        Err(_) => {
            let mut info = fail(String::from(
                "the negative Hessian at the mode is not positive definite (a flat or \
                 unidentified direction); sampled as given",
            ));
            info.cost = res.cost();
            info.hess_evals = res.hess_evals;
            Err(info)
        }
    }
}

/// The note of an applied whitening (for run.json and the page).
pub(crate) fn whiten_note(w: &LaplaceMap, n: usize) -> String {
    alloc::format!(
        "θ = θ̂ + C⁻ᵀz from the mode and Hessian of {} ({} Newton iteration{}{}{})",
        if w.rows == n {
            String::from("all rows")
        } else {
            alloc::format!("{} evenly spaced rows (likelihood scaled by n/m)", w.rows)
        },
        w.mode.iterations,
        if w.mode.iterations == 1 { "" } else { "s" },
        match w.coarse {
            Some((rows, it)) => {
                alloc::format!(" from the mode of {rows} evenly spaced rows, {it} iterations")
            }
            None => String::new(),
        },
        if w.ridge > 0.0 { ", ridge added" } else { "" },
    )
}

impl<F: GlmFamily> Glm<F> {
    /// A GLM over `design`.
    pub fn new(design: Design, family: F, prior: Prior) -> Self {
        Glm {
            design,
            family,
            prior,
            offset: None,
            map: None,
            reparam: None,
            parallel: None,
        }
    }

    /// ηᵢ = oᵢ + xᵢᵀθ, summed as [`GlmView::eta`] does (the same bits).
    #[inline]
    fn eta(&self, theta: &[f64], i: usize) -> f64 {
        let s = crate::linalg::dot(self.design.row(i), theta);
        match &self.offset {
            Some(o) => o[i] + s,
            None => s,
        }
    }

    /// The same posterior in whitened coordinates (module [`crate::model::reparam`]): the mode
    /// θ̂ and P = −∇² log π(θ̂) by Newton (on an evenly spaced subset of rows on tall data), then
    /// the design is transformed in place. Exact whatever θ̂ and P come out; when no usable
    /// θ̂ or P is found (a non-finite mode, a P that is not positive definite even with a small
    /// ridge), the model is returned unchanged with [`ReparamInfo::kind`] = `failed` and the
    /// reason. Calling it twice whitens once.
    pub fn whiten(mut self) -> Self {
        if self.map.is_some() {
            return self;
        }
        let (n, d) = (self.design.n, self.design.d);
        let w = match laplace_map(&self, &vec![0.0; d], false) {
            Ok(w) => w,
            Err(info) => {
                self.reparam = Some(info);
                return self;
            }
        };
        // Row by row (the same bits on any number of threads): oᵢ = xᵢᵀθ̂, then xᵢ ← the
        // sampler's coordinates, the rows of a chunk on one thread. No columns: every oᵢ is 0.
        let mut offset = vec![0.0; n];
        if d > 0 {
            use crate::parallel::{for_each_piece, PASS_CHUNK};
            let p = self.parallel.as_deref();
            let (x, mode) = (&self.design.x, &w.mode.mode);
            for_each_piece(p, &mut offset, PASS_CHUNK, &|k, o| {
                for (j, v) in o.iter_mut().enumerate() {
                    let row = &x[(k * PASS_CHUNK + j) * d..][..d];
                    *v = row.iter().zip(mode).map(|(a, b)| a * b).sum();
                }
            });
            let map = &w.map;
            for_each_piece(p, &mut self.design.x, PASS_CHUNK * d, &|_, rows| {
                map.grads_to_sampler(rows);
            });
        }
        let note = if d == 0 {
            String::from("no parameters")
        } else {
            whiten_note(&w, n)
        };
        self.reparam = Some(ReparamInfo {
            kind: "whiten",
            note,
            rows_used: w.rows,
            cost: w.mode.cost(),
            hess_evals: w.mode.hess_evals,
        });
        let map = w.map;
        self.offset = Some(offset);
        self.map = Some(map);
        self
    }

    /// ηᵢ = oᵢ + xᵢᵀθ for the rows of a block starting at row `b0` (`rows` their design rows,
    /// `eta` one slot per row): eight rows at a time, each row's dot product summed in index
    /// order (the same bits as [`Glm::eta`]), so that eight independent sums overlap (LLVM
    /// packs them two to a register; with four, the pass waited on the additions' latency).
    #[inline(always)]
    fn block_eta(&self, theta: &[f64], b0: usize, rows: &[f64], eta: &mut [f64]) {
        let d = self.design.d;
        let theta = &theta[..d];
        let mut octs = rows.chunks_exact(ROWS * d.max(1));
        let mut out = eta.chunks_exact_mut(ROWS);
        for (q, o) in (&mut octs).zip(&mut out) {
            let r = split_rows(q, d);
            let mut s = [0.0f64; ROWS];
            for k in 0..d {
                let t = theta[k];
                for j in 0..ROWS {
                    s[j] += r[j][k] * t;
                }
            }
            o.copy_from_slice(&s);
        }
        let done = eta.len() - eta.len() % ROWS;
        for (k, e) in eta[done..].iter_mut().enumerate() {
            *e = crate::linalg::dot(&rows[(done + k) * d..(done + k + 1) * d], theta);
        }
        if let Some(o) = &self.offset {
            let len = eta.len();
            for (e, &ok) in eta.iter_mut().zip(&o[b0..b0 + len]) {
                *e += ok;
            }
        }
    }

    /// ηᵢ = oᵢ + xᵢᵀθ for the drawn rows `idx` (one slot of `eta` each; `theta` no longer
    /// than a row): eight rows at a time, each dot product summed in index order, as `dot`
    /// (the same bits as [`Glm::eta`]).
    #[inline(always)]
    fn drawn_eta(&self, theta: &[f64], idx: &[usize], eta: &mut [f64]) {
        let d = self.design.d;
        let x = &self.design.x;
        let row = |i: usize| &x[i * d..][..d];
        let mut octs = idx.chunks_exact(ROWS);
        let mut out = eta.chunks_exact_mut(ROWS);
        for (o, e) in (&mut octs).zip(&mut out) {
            let r: [&[f64]; ROWS] = core::array::from_fn(|j| row(o[j]));
            let mut s = [0.0f64; ROWS];
            for (k, &t) in theta.iter().enumerate() {
                for j in 0..ROWS {
                    s[j] += r[j][k] * t;
                }
            }
            e.copy_from_slice(&s);
        }
        for (e, &i) in out.into_remainder().iter_mut().zip(octs.remainder()) {
            *e = crate::linalg::dot(row(i), theta);
        }
        if let Some(off) = &self.offset {
            for (e, &i) in eta.iter_mut().zip(idx) {
                *e += off[i];
            }
        }
    }

    /// ηᵢ at θ (`theta`) and at θ′ (`proposal`) for the drawn rows `idx`, into `eta0` and
    /// `eta1` (one slot each): eight rows at a time, both dot products in one sweep over the
    /// rows (each read once), each summed in index order as `dot` (the same bits as
    /// [`Glm::eta`] at each point).
    #[inline(always)]
    fn drawn_eta_pair(
        &self,
        theta: &[f64],
        proposal: &[f64],
        idx: &[usize],
        eta0: &mut [f64],
        eta1: &mut [f64],
    ) {
        let d = self.design.d;
        // `dot` sums over the shorter of the row and θ.
        let t0 = &theta[..d.min(theta.len())];
        let t1 = &proposal[..d.min(proposal.len())];
        if t0.len() != t1.len() {
            self.drawn_eta(t0, idx, eta0);
            self.drawn_eta(t1, idx, eta1);
            return;
        }
        let x = &self.design.x;
        let row = |i: usize| &x[i * d..][..d];
        let mut octs = idx.chunks_exact(ROWS);
        let mut out0 = eta0.chunks_exact_mut(ROWS);
        let mut out1 = eta1.chunks_exact_mut(ROWS);
        for ((o, e0), e1) in (&mut octs).zip(&mut out0).zip(&mut out1) {
            let r: [&[f64]; ROWS] = core::array::from_fn(|j| row(o[j]));
            let mut s0 = [0.0f64; ROWS];
            let mut s1 = [0.0f64; ROWS];
            for (k, (&a, &b)) in t0.iter().zip(t1).enumerate() {
                for j in 0..ROWS {
                    let xv = r[j][k];
                    s0[j] += xv * a;
                    s1[j] += xv * b;
                }
            }
            e0.copy_from_slice(&s0);
            e1.copy_from_slice(&s1);
        }
        for ((e0, e1), &i) in out0
            .into_remainder()
            .iter_mut()
            .zip(out1.into_remainder().iter_mut())
            .zip(octs.remainder())
        {
            *e0 = crate::linalg::dot(row(i), t0);
            *e1 = crate::linalg::dot(row(i), t1);
        }
        if let Some(off) = &self.offset {
            for ((e0, e1), &i) in eta0.iter_mut().zip(eta1.iter_mut()).zip(idx) {
                *e0 += off[i];
                *e1 += off[i];
            }
        }
    }

    crate::avx2_twin!(fn step_terms_avx2 = step_terms_any(&self, theta: &[f64], proposal: &[f64], idx: &[usize], eta0: &mut [f64], eta1: &mut [f64], dl: &mut [f64]));

    /// [`GlmView::step_terms`]'s body (compiled twice, see [`crate::cpu`]): in chunks of
    /// [`STEP_CHUNK`] rows, the responses, both linear predictors (`drawn_eta_pair`), then
    /// f(yᵢ, ηᵢ(θ′)) − f(yᵢ, ηᵢ(θ)) in a loop of its own (it vectorises).
    #[inline(always)]
    fn step_terms_any(
        &self,
        theta: &[f64],
        proposal: &[f64],
        idx: &[usize],
        eta0: &mut [f64],
        eta1: &mut [f64],
        dl: &mut [f64],
    ) {
        let len = idx.len().min(eta0.len()).min(eta1.len()).min(dl.len());
        let y = &self.design.y;
        let mut ys = [0.0f64; STEP_CHUNK];
        let mut a = 0;
        while a < len {
            let b = (a + STEP_CHUNK).min(len);
            let chunk = &idx[a..b];
            let (e0, e1, v) = (&mut eta0[a..b], &mut eta1[a..b], &mut dl[a..b]);
            for (t, &i) in ys.iter_mut().zip(chunk) {
                *t = y[i];
            }
            self.drawn_eta_pair(theta, proposal, chunk, e0, e1);
            for (((v, &yk), &x0), &x1) in v.iter_mut().zip(&ys).zip(e0.iter()).zip(e1.iter()) {
                *v = self.family.value(yk, x1) - self.family.value(yk, x0);
            }
            a = b;
        }
    }

    /// Σᵢ ℓᵢ(θ) over rows `start..end`, ∇ accumulated into `grad`: the full-data pass, in
    /// blocks of [`PASS_BLOCK`] rows (the linear predictors of a block, then the family's
    /// values and derivatives in one loop that vectorises, then the gradient), summed in row
    /// order (the full-data pass adds such sums chunk by chunk, see `chunked_pass`).
    ///
    /// The gradient takes eight rows per sweep over the coordinates: gₖ += f′ᵢ xᵢₖ for the
    /// eight rows in order, then the next k, so each gₖ sees the same additions in the same
    /// order as row by row (the same bits), loaded and stored once per eight rows instead of
    /// once per row.
    /// Compiled for the running CPU ([`crate::cpu`]; the same bits on either path).
    pub fn log_lik_grad_rows(
        &self,
        theta: &[f64],
        start: usize,
        end: usize,
        grad: &mut [f64],
    ) -> f64 {
        crate::on_cpu!(
            self.log_lik_grad_rows_avx2(theta, start, end, grad),
            self.log_lik_grad_rows_any(theta, start, end, grad)
        )
    }

    crate::avx2_twin!(fn log_lik_grad_rows_avx2 = log_lik_grad_rows_any(&self, theta: &[f64], start: usize, end: usize, grad: &mut [f64]) -> f64);
    crate::avx2_twin!(fn log_lik_hess_rows_avx2 = log_lik_hess_rows_any(&self, theta: &[f64], rows: &dyn Fn(usize) -> usize, count: usize, hess: &mut [f64]));
    crate::avx2_twin!(fn log_lik_grad_batch_avx2 = log_lik_grad_batch_any(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) -> f64);
    crate::avx2_twin!(fn grad_batch_avx2 = grad_batch_any(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]));
    crate::avx2_twin!(fn terms_rows_avx2 = terms_rows_any(&self, theta: &[f64], start: usize, out: &mut [f64]));
    crate::avx2_twin!(fn log_lik_sum_avx2 = log_lik_sum_any(&self, theta: &[f64], idx: &[usize]) -> f64);

    #[inline(always)]
    fn log_lik_sum_any(&self, theta: &[f64], idx: &[usize]) -> f64 {
        let d = self.design.d;
        // `dot` sums over the shorter of the row and θ.
        let theta = &theta[..d.min(theta.len())];
        let y = &self.design.y;
        let (mut ys, mut eta, mut vs) = ([0.0f64; GATHER], [0.0f64; GATHER], [0.0f64; GATHER]);
        let mut total = -0.0;
        for chunk in idx.chunks(GATHER) {
            let len = chunk.len();
            for (v, &i) in ys.iter_mut().zip(chunk) {
                *v = y[i];
            }
            self.drawn_eta(theta, chunk, &mut eta[..len]);
            self.family
                .value_many(&ys[..len], &eta[..len], &mut vs[..len]);
            for &v in &vs[..len] {
                total += v;
            }
        }
        total
    }

    #[inline(always)]
    fn log_lik_grad_rows_any(
        &self,
        theta: &[f64],
        start: usize,
        end: usize,
        grad: &mut [f64],
    ) -> f64 {
        let d = self.design.d;
        let mut buf = [[0.0f64; PASS_BLOCK]; 3];
        let mut total = 0.0;
        let grad = &mut grad[..d];
        let mut b0 = start;
        while b0 < end {
            let b1 = (b0 + PASS_BLOCK).min(end);
            self.grad_block(theta, b0, b1, grad, &mut total, &mut buf);
            b0 = b1;
        }
        total
    }

    /// One block of [`log_lik_grad_rows`](Self::log_lik_grad_rows) (rows `b0..b1`, at most
    /// [`PASS_BLOCK`]): its values added to `total` in row order, f′ᵢ xᵢ to `grad` (d long).
    #[inline(always)]
    fn grad_block(
        &self,
        theta: &[f64],
        b0: usize,
        b1: usize,
        grad: &mut [f64],
        total: &mut f64,
        buf: &mut [[f64; PASS_BLOCK]; 3],
    ) {
        let d = self.design.d;
        let [eta, val, d1] = buf;
        let len = b1 - b0;
        let rows = &self.design.x[b0 * d..b1 * d];
        self.block_eta(theta, b0, rows, &mut eta[..len]);
        let y = &self.design.y[b0..b1];
        for ((e, &yk), (v, g)) in eta[..len]
            .iter()
            .zip(y)
            .zip(val[..len].iter_mut().zip(d1[..len].iter_mut()))
        {
            (*v, *g) = self.family.value_d1(yk, *e);
        }
        for &v in &val[..len] {
            *total += v;
        }
        let mut octs = rows.chunks_exact(ROWS * d.max(1));
        let mut a = d1[..len].chunks_exact(ROWS);
        for (q, a) in (&mut octs).zip(&mut a) {
            let r = split_rows(q, d);
            for k in 0..d {
                let mut g = grad[k];
                for j in 0..ROWS {
                    g += a[j] * r[j][k];
                }
                grad[k] = g;
            }
        }
        for (row, &g1) in octs.remainder().chunks_exact(d.max(1)).zip(a.remainder()) {
            for (g, x) in grad.iter_mut().zip(row) {
                *g += g1 * x;
            }
        }
    }

    /// [`log_lik_grad_rows`](Self::log_lik_grad_rows) at each of K points (`thetas`, K rows of
    /// `dim` numbers) over rows `start..end`, block by block: each point's block with the
    /// operations of [`grad_block`](Self::grad_block) in its order (the same bits per point),
    /// so that each block of rows is read from memory once for all K points. From two points
    /// on, [`LANES`] points share each sweep of a block ([`grad_block_lanes`](Self::grad_block_lanes)):
    /// the KSD's ten scores on the peers' table (n = 10⁶, d = 30) took 81 ms with a sweep per
    /// point and 68 ms so. `grads` (K × d) accumulate; `totals` (K) are set to each point's sum.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn log_lik_grad_rows_many_any(
        &self,
        thetas: &[f64],
        dim: usize,
        start: usize,
        end: usize,
        grads: &mut [f64],
        totals: &mut [f64],
    ) {
        let d = self.design.d;
        totals.iter_mut().for_each(|t| *t = 0.0);
        let k = totals.len();
        if d == 0 || k == 1 {
            let mut buf = [[0.0f64; PASS_BLOCK]; 3];
            let mut b0 = start;
            while b0 < end {
                let b1 = (b0 + PASS_BLOCK).min(end);
                for (p, total) in totals.iter_mut().enumerate() {
                    let theta = &thetas[p * dim..(p + 1) * dim];
                    let grad = &mut grads[p * d..(p + 1) * d];
                    self.grad_block(theta, b0, b1, grad, total, &mut buf);
                }
                b0 = b1;
            }
            return;
        }
        // The points in groups of LANES (the last padded with θ = 0, its lanes discarded):
        // each group's θ and gradients by coordinate, the group's points side by side.
        let groups = k.div_ceil(LANES);
        let mut tt = vec![[0.0f64; LANES]; groups * d];
        let mut gg = vec![[0.0f64; LANES]; groups * d];
        let mut tot = vec![[0.0f64; LANES]; groups];
        for p in 0..k {
            let (q, l) = (p / LANES, p % LANES);
            for j in 0..d {
                tt[q * d + j][l] = thetas[p * dim + j];
                gg[q * d + j][l] = grads[p * d + j];
            }
        }
        let mut buf = [[[0.0f64; LANES]; PASS_BLOCK]; 2];
        let mut b0 = start;
        while b0 < end {
            let b1 = (b0 + PASS_BLOCK).min(end);
            for ((t, g), total) in tt
                .chunks_exact(d)
                .zip(gg.chunks_exact_mut(d))
                .zip(tot.iter_mut())
            {
                self.grad_block_lanes(t, b0, b1, g, total, &mut buf);
            }
            b0 = b1;
        }
        for p in 0..k {
            let (q, l) = (p / LANES, p % LANES);
            totals[p] = tot[q][l];
            for j in 0..d {
                grads[p * d + j] = gg[q * d + j][l];
            }
        }
    }

    /// [`grad_block`](Self::grad_block) at [`LANES`] points at once (`tt`: θⱼ of each point
    /// for j < d; `g`: their gradients, accumulated; `total`: their sums): every point's
    /// numbers see the operations of its own `grad_block`, in the same order (the same bits),
    /// with the points in the lanes of one vector, so that each row value read is used for all
    /// of them.
    #[inline(always)]
    fn grad_block_lanes(
        &self,
        tt: &[[f64; LANES]],
        b0: usize,
        b1: usize,
        g: &mut [[f64; LANES]],
        total: &mut [f64; LANES],
        buf: &mut [[[f64; LANES]; PASS_BLOCK]; 2],
    ) {
        let d = self.design.d;
        let (tt, g) = (&tt[..d], &mut g[..d]);
        let [eta, d1] = buf;
        let len = b1 - b0;
        let rows = &self.design.x[b0 * d..b1 * d];
        // η as `block_eta`: eight rows at a time, each sum from 0 in coordinate order, then
        // the rest row by row as `dot`, then the offsets.
        let mut octs = rows.chunks_exact(ROWS * d);
        let mut out = eta[..len].chunks_exact_mut(ROWS);
        for (q, o) in (&mut octs).zip(&mut out) {
            let r = split_rows(q, d);
            let mut s = [[0.0f64; LANES]; ROWS];
            for (j, t) in tt.iter().enumerate() {
                for (sr, row) in s.iter_mut().zip(&r) {
                    let x = row[j];
                    for l in 0..LANES {
                        sr[l] += x * t[l];
                    }
                }
            }
            o.copy_from_slice(&s);
        }
        let done = len - len % ROWS;
        for (row, e) in octs
            .remainder()
            .chunks_exact(d)
            .zip(eta[done..len].iter_mut())
        {
            let mut s = [0.0f64; LANES];
            for (&x, t) in row.iter().zip(tt) {
                for l in 0..LANES {
                    s[l] += x * t[l];
                }
            }
            *e = s;
        }
        if let Some(o) = &self.offset {
            for (e, &ok) in eta[..len].iter_mut().zip(&o[b0..b1]) {
                for v in e.iter_mut() {
                    *v += ok;
                }
            }
        }
        // Values (added in row order) and derivatives.
        for ((e, &yk), a) in eta[..len]
            .iter()
            .zip(&self.design.y[b0..b1])
            .zip(d1[..len].iter_mut())
        {
            for l in 0..LANES {
                let (v, f1) = self.family.value_d1(yk, e[l]);
                total[l] += v;
                a[l] = f1;
            }
        }
        // gⱼ += f′ᵢ xᵢⱼ in row order, eight rows per sweep of the coordinates.
        let mut octs = rows.chunks_exact(ROWS * d);
        let mut a = d1[..len].chunks_exact(ROWS);
        for (q, a) in (&mut octs).zip(&mut a) {
            let r = split_rows(q, d);
            for (j, gj) in g.iter_mut().enumerate() {
                let mut s = *gj;
                for (ar, row) in a.iter().zip(&r) {
                    let x = row[j];
                    for l in 0..LANES {
                        s[l] += ar[l] * x;
                    }
                }
                *gj = s;
            }
        }
        for (row, ar) in octs.remainder().chunks_exact(d).zip(a.remainder()) {
            for (gj, &x) in g.iter_mut().zip(row) {
                for l in 0..LANES {
                    gj[l] += ar[l] * x;
                }
            }
        }
    }

    crate::avx2_twin!(
        #[allow(clippy::too_many_arguments)]
        fn log_lik_grad_rows_many_avx2 = log_lik_grad_rows_many_any(
            &self,
            thetas: &[f64],
            dim: usize,
            start: usize,
            end: usize,
            grads: &mut [f64],
            totals: &mut [f64],
        )
    );

    /// [`chunked_pass`](Self::chunked_pass) with gradient at each of K points (`points`, K ×
    /// dim): the values returned and each gradient added to its row of `grads` (K × dim), with
    /// the same chunks, the same sums per chunk and the same order of adding them as one pass
    /// per point (the same bits), reading the data once.
    fn chunked_pass_many(&self, points: &[f64], grads: &mut [f64]) -> Vec<f64> {
        use crate::parallel::PASS_CHUNK;
        let (n, d, dim) = (self.design.n, self.design.d, self.dim());
        let k = points.len().checked_div(dim).unwrap_or(0);
        let chunks = n.div_ceil(PASS_CHUNK).max(1);
        // Each chunk's K sums then K × d gradient sums, from zero; added in chunk order.
        let job = |c: usize, out: &mut [f64]| {
            let (a, b) = (c * PASS_CHUNK, ((c + 1) * PASS_CHUNK).min(n));
            let (t, g) = out.split_at_mut(k);
            crate::on_cpu!(
                self.log_lik_grad_rows_many_avx2(points, dim, a, b, g, t),
                self.log_lik_grad_rows_many_any(points, dim, a, b, g, t)
            );
        };
        let mut totals = vec![0.0; k];
        let mut acc = vec![0.0; k * d];
        let mut sink = |_: usize, out: &[f64]| {
            let (t, g) = out.split_at(k);
            for (s, v) in totals.iter_mut().zip(t) {
                *s += v;
            }
            for (s, v) in acc.iter_mut().zip(g) {
                *s += v;
            }
        };
        crate::parallel::map_jobs(
            self.parallel.as_deref(),
            chunks,
            k * (d + 1),
            &job,
            &mut sink,
        );
        for (grad, acc) in grads
            .chunks_exact_mut(dim.max(1))
            .zip(acc.chunks_exact(d.max(1)))
        {
            for (g, s) in grad.iter_mut().zip(acc) {
                *g += s;
            }
        }
        totals
    }

    /// Eight rows per sweep of the d × d matrix: each entry gets the rows' terms
    /// (f″ᵢ xᵢₐ) xᵢ_b in row order, as row by row (the same bits), with the matrix loaded and
    /// stored once per eight rows.
    #[inline(always)]
    fn log_lik_hess_rows_any(
        &self,
        theta: &[f64],
        rows: &dyn Fn(usize) -> usize,
        count: usize,
        hess: &mut [f64],
    ) {
        let d = self.design.d;
        let hess = &mut hess[..d * d];
        let full = count - count % ROWS;
        for q0 in (0..full).step_by(ROWS) {
            let idx: [usize; ROWS] = core::array::from_fn(|q| rows(q0 + q));
            let r: [&[f64]; ROWS] = core::array::from_fn(|q| self.design.row(idx[q]));
            // The eight linear predictors side by side (each summed in index order, as
            // `eta`), then the family's second derivatives.
            let mut eta = [0.0f64; ROWS];
            for (k, &t) in theta[..d].iter().enumerate() {
                for q in 0..ROWS {
                    eta[q] += r[q][k] * t;
                }
            }
            if let Some(o) = &self.offset {
                for q in 0..ROWS {
                    eta[q] += o[idx[q]];
                }
            }
            let mut d2 = [0.0f64; ROWS];
            for q in 0..ROWS {
                d2[q] = self.family.d2(self.design.y[idx[q]], eta[q]);
            }
            for a in 0..d {
                let ra: [f64; ROWS] = core::array::from_fn(|q| d2[q] * r[q][a]);
                for (b, h) in hess[a * d..(a + 1) * d].iter_mut().enumerate() {
                    let mut s = *h;
                    for q in 0..ROWS {
                        s += ra[q] * r[q][b];
                    }
                    *h = s;
                }
            }
        }
        for q in full..count {
            self.log_lik_hess(theta, rows(q), hess);
        }
    }
    /// A drawn batch in chunks of [`GATHER`] rows, each in four sweeps: the responses, the
    /// linear predictors eight rows at a time (the eight rows' reads in flight together; these
    /// two sweeps are the ones that wait on memory), the family's values and derivatives, then
    /// gₖ += f′ᵢ xᵢₖ eight rows at a time from cache.
    /// Every sum sees the same additions in the same order as [`DataModel::log_lik_grad`]
    /// row by row: the same bits.
    #[inline(always)]
    fn log_lik_grad_batch_any(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) -> f64 {
        self.batch_any::<true>(theta, idx, grad)
    }

    /// [`log_lik_grad_batch_any`](Self::log_lik_grad_batch_any)'s gradient alone
    /// ([`DataModel::grad_batch`]): the family's values are not computed (for the logistic
    /// family, no logarithm per row); the gradient's bits are the same.
    #[inline(always)]
    fn grad_batch_any(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) {
        self.batch_any::<false>(theta, idx, grad);
    }

    /// The batch gradient's body, with the values summed when `VALUES` (0 returned otherwise).
    #[inline(always)]
    fn batch_any<const VALUES: bool>(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) -> f64 {
        let d = self.design.d;
        let (theta, grad) = (&theta[..d], &mut grad[..d]);
        let (x, y) = (&self.design.x, &self.design.y);
        let row = |i: usize| &x[i * d..][..d];
        let mut eta = [0.0f64; GATHER];
        let mut d1 = [0.0f64; GATHER];
        let mut ys = [0.0f64; GATHER];
        let mut vals = [0.0f64; GATHER];
        let mut total = 0.0;
        for chunk in idx.chunks(GATHER) {
            let len = chunk.len();
            // The responses in a loop of loads alone, so that their misses overlap (inside the
            // values' loop, each waited on its own).
            for (v, &i) in ys.iter_mut().zip(chunk) {
                *v = y[i];
            }
            touch_rows(x, d, chunk);
            self.drawn_eta(theta, chunk, &mut eta[..len]);
            // The values and derivatives in a loop of their own (it vectorises), then the
            // values added in row order (the same sum as adding each in that loop).
            for (((e, g), v), &yi) in eta[..len]
                .iter()
                .zip(&mut d1[..len])
                .zip(&mut vals[..len])
                .zip(&ys)
            {
                if VALUES {
                    (*v, *g) = self.family.value_d1(yi, *e);
                } else {
                    *g = self.family.d1(yi, *e);
                }
            }
            if VALUES {
                for &v in &vals[..len] {
                    total += v;
                }
            }
            let mut octs = chunk.chunks_exact(ROWS);
            let mut a = d1[..len].chunks_exact(ROWS);
            for (o, a) in (&mut octs).zip(&mut a) {
                let r: [&[f64]; ROWS] = core::array::from_fn(|j| row(o[j]));
                for k in 0..d {
                    let mut g = grad[k];
                    for j in 0..ROWS {
                        g += a[j] * r[j][k];
                    }
                    grad[k] = g;
                }
            }
            for (&i, &g1) in octs.remainder().iter().zip(a.remainder()) {
                for (g, xk) in grad.iter_mut().zip(row(i)) {
                    *g += g1 * xk;
                }
            }
        }
        total
    }
    /// [`GlmView::terms_rows`]'s body (compiled twice, see [`crate::cpu`]).
    #[inline(always)]
    fn terms_rows_any(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        let (n, d) = (self.design.n, self.design.d);
        let end = (start + out.len() / 4).min(n);
        let mut eta = [0.0f64; PASS_BLOCK];
        let mut b0 = start;
        while b0 < end {
            let b1 = (b0 + PASS_BLOCK).min(end);
            let eta = &mut eta[..b1 - b0];
            self.block_eta(theta, b0, &self.design.x[b0 * d..b1 * d], eta);
            let t = &mut out[4 * (b0 - start)..4 * (b1 - start)];
            for ((t, &e), &y) in t
                .chunks_exact_mut(4)
                .zip(eta.iter())
                .zip(&self.design.y[b0..b1])
            {
                let (v, f1) = self.family.value_d1(y, e);
                t.copy_from_slice(&[e, v, f1, self.family.d2(y, e)]);
            }
            b0 = b1;
        }
    }

    /// The full-data pass Σᵢ ℓᵢ(θ) (and ∇, accumulated into `grad` when given), in chunks of
    /// [`crate::parallel::PASS_CHUNK`] rows: each chunk summed from zero in row order, the
    /// chunks added in order, so the bits do not depend on whether (or on how many threads)
    /// the chunks run in parallel.
    fn chunked_pass(&self, theta: &[f64], grad: Option<&mut [f64]>) -> f64 {
        use crate::parallel::PASS_CHUNK;
        // Two 32-bit atomics per f64: every target with threads has them (thumbv7em has no
        // 64-bit atomics); each slot is written by one job and read after all jobs returned.
        use core::sync::atomic::{AtomicU32, Ordering};
        let store = |slot: &[AtomicU32], v: f64| {
            let b = v.to_bits();
            slot[0].store((b >> 32) as u32, Ordering::Relaxed);
            slot[1].store(b as u32, Ordering::Relaxed);
        };
        let load = |slot: &[AtomicU32]| {
            let hi = u64::from(slot[0].load(Ordering::Relaxed));
            let lo = u64::from(slot[1].load(Ordering::Relaxed));
            f64::from_bits((hi << 32) | lo)
        };
        let (n, d) = (self.design.n, self.design.d);
        let chunks = n.div_ceil(PASS_CHUNK).max(1);
        let with_grad = grad.is_some();
        let width = if with_grad { d + 1 } else { 1 };
        let range = |c: usize| (c * PASS_CHUNK, ((c + 1) * PASS_CHUNK).min(n));
        let mut total = 0.0;
        let mut acc = vec![0.0; if with_grad { d } else { 0 }];
        match &self.parallel {
            Some(p) if chunks > 1 => {
                let slots: Vec<AtomicU32> =
                    (0..2 * chunks * width).map(|_| AtomicU32::new(0)).collect();
                p.for_each(chunks, &|c| {
                    let (a, b) = range(c);
                    let out = &slots[2 * c * width..2 * (c + 1) * width];
                    if with_grad {
                        let mut g = vec![0.0; d];
                        let t = self.log_lik_grad_rows(theta, a, b, &mut g);
                        store(&out[..2], t);
                        for (o, v) in out[2..].chunks_exact(2).zip(&g) {
                            store(o, *v);
                        }
                    } else {
                        store(&out[..2], self.log_lik_rows(theta, a, b));
                    }
                });
                for c in 0..chunks {
                    let out = &slots[2 * c * width..2 * (c + 1) * width];
                    total += load(&out[..2]);
                    for (s, o) in acc.iter_mut().zip(out[2..].chunks_exact(2)) {
                        *s += load(o);
                    }
                }
            }
            _ => {
                let mut g = vec![0.0; if with_grad { d } else { 0 }];
                for c in 0..chunks {
                    let (a, b) = range(c);
                    if with_grad {
                        g.iter_mut().for_each(|v| *v = 0.0);
                        total += self.log_lik_grad_rows(theta, a, b, &mut g);
                        for (s, v) in acc.iter_mut().zip(&g) {
                            *s += v;
                        }
                    } else {
                        total += self.log_lik_rows(theta, a, b);
                    }
                }
            }
        }
        if let Some(grad) = grad {
            for (g, s) in grad.iter_mut().zip(&acc) {
                *g += s;
            }
        }
        total
    }

    /// Σᵢ ℓᵢ(θ) over rows `start..end`, in blocks as [`Glm::log_lik_grad_rows`]: each block's
    /// values in a loop of their own (it vectorises), then added in row order (the same sum as
    /// adding each value as it is computed). Compiled for the running CPU ([`crate::cpu`]; the
    /// same bits on either path).
    pub fn log_lik_rows(&self, theta: &[f64], start: usize, end: usize) -> f64 {
        crate::on_cpu!(
            self.log_lik_rows_avx2(theta, start, end),
            self.log_lik_rows_any(theta, start, end)
        )
    }

    crate::avx2_twin!(fn log_lik_rows_avx2 = log_lik_rows_any(&self, theta: &[f64], start: usize, end: usize) -> f64);

    #[inline(always)]
    fn log_lik_rows_any(&self, theta: &[f64], start: usize, end: usize) -> f64 {
        let mut eta = [0.0f64; PASS_BLOCK];
        let mut val = [0.0f64; PASS_BLOCK];
        let mut total = 0.0;
        let mut b0 = start;
        while b0 < end {
            let b1 = (b0 + PASS_BLOCK).min(end);
            let len = b1 - b0;
            let rows = &self.design.x[b0 * self.design.d..b1 * self.design.d];
            self.block_eta(theta, b0, rows, &mut eta[..len]);
            let y = &self.design.y[b0..b1];
            for ((v, &e), &yk) in val[..len].iter_mut().zip(&eta[..len]).zip(y) {
                *v = self.family.value(yk, e);
            }
            for &v in &val[..len] {
                total += v;
            }
            b0 = b1;
        }
        total
    }

    /// Record that whitening was not applied (`reparam=none`, or not asked): `why` for run.json.
    pub fn not_whitened(mut self, why: &str) -> Self {
        self.reparam = Some(ReparamInfo::none(String::from(why)));
        self
    }
}

impl<F: GlmFamily> DataModel for Glm<F> {
    fn dim(&self) -> usize {
        self.design.d
    }
    fn n(&self) -> usize {
        self.design.n
    }
    fn param_names(&self) -> Vec<String> {
        self.design.names.clone()
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        match &self.map {
            None => self.prior.log_density_grad(theta, grad),
            Some(map) => {
                map.value_grad_at_user(theta, grad, |th, g| self.prior.log_density_grad(th, g))
            }
        }
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        match &self.map {
            None => self.prior.log_density(theta),
            Some(map) => map.value_at_user(theta, |th| self.prior.log_density(th)),
        }
    }
    fn log_prior_hess(&self, theta: &[f64], hess: &mut [f64]) {
        let d = theta.len();
        let p = self.prior.precision();
        match &self.map {
            None => {
                for k in 0..d {
                    hess[k * d + k] -= p;
                }
            }
            Some(map) => {
                // −p I in θ is −p C⁻¹C⁻ᵀ in z.
                let mut h = vec![0.0; d * d];
                for k in 0..d {
                    h[k * d + k] = -p;
                }
                let mut col = vec![0.0; d];
                map.hessian_to_sampler(&mut h, &mut col);
                for (a, b) in hess.iter_mut().zip(&h) {
                    *a += b;
                }
            }
        }
    }
    #[inline]
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        self.family.value(self.design.y[i], self.eta(theta, i))
    }
    #[inline]
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let (v, d1) = self.family.value_d1(self.design.y[i], self.eta(theta, i));
        let row = self.design.row(i);
        for k in 0..row.len() {
            grad[k] += d1 * row[k];
        }
        v
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d2 = self.family.d2(self.design.y[i], self.eta(theta, i));
        let row = self.design.row(i);
        let d = row.len();
        for a in 0..d {
            let ra = d2 * row[a];
            for b in 0..d {
                hess[a * d + b] += ra * row[b];
            }
        }
    }
    /// Σᵢ f''(ηᵢ) xᵢ (xᵢᵀv): O(n d), no d × d matrix.
    fn log_lik_hess_vec_all(&self, theta: &[f64], v: &[f64], out: &mut [f64]) {
        for i in 0..self.design.n {
            let row = self.design.row(i);
            let c =
                self.family.d2(self.design.y[i], self.eta(theta, i)) * crate::linalg::dot(row, v);
            for (o, x) in out.iter_mut().zip(row) {
                *o += c * x;
            }
        }
    }
    fn log_prior_hess_vec(&self, theta: &[f64], v: &[f64], out: &mut [f64]) {
        if self.map.is_some() {
            // −p C⁻¹C⁻ᵀ v in whitened coordinates: a central difference of the gradient.
            let mut h = vec![0.0; v.len()];
            super::central_difference(theta, v, &mut h, |t, g| {
                self.log_prior_grad(t, g);
            });
            for (o, x) in out.iter_mut().zip(&h) {
                *o += x;
            }
            return;
        }
        let p = self.prior.precision();
        for (o, x) in out.iter_mut().zip(v) {
            *o -= p * x;
        }
    }
    /// −p + Σᵢ f''(ηᵢ) x²ᵢₖ (unwhitened only: whitening mixes the coordinates).
    fn log_post_hess_diag(&self, theta: &[f64], out: &mut [f64]) -> bool {
        if self.map.is_some() {
            return false;
        }
        let p = self.prior.precision();
        for o in out.iter_mut() {
            *o -= p;
        }
        for i in 0..self.design.n {
            let row = self.design.row(i);
            let c = self.family.d2(self.design.y[i], self.eta(theta, i));
            for (o, x) in out.iter_mut().zip(row) {
                *o += c * x * x;
            }
        }
        true
    }
    /// In chunks of [`GATHER`] data: the linear predictors eight rows per sweep, the family's
    /// values in one call, then the sum in `idx` order from −0 (as `Iterator::sum`): the same
    /// bits as [`DataModel::log_lik`] datum by datum. Compiled for the running CPU
    /// ([`crate::cpu`]).
    fn log_lik_sum(&self, theta: &[f64], idx: &[usize]) -> f64 {
        crate::on_cpu!(
            self.log_lik_sum_avx2(theta, idx),
            self.log_lik_sum_any(theta, idx)
        )
    }
    /// Eight rows per sweep of the d × d matrix: each entry gets the rows' terms
    /// (f″ᵢ xᵢₐ) xᵢ_b in row order, as row by row (the same bits), with the matrix loaded and
    /// stored once per eight rows. Compiled for the running CPU ([`crate::cpu`]).
    fn log_lik_hess_rows(
        &self,
        theta: &[f64],
        rows: &dyn Fn(usize) -> usize,
        count: usize,
        hess: &mut [f64],
    ) {
        crate::on_cpu!(
            self.log_lik_hess_rows_avx2(theta, rows, count, hess),
            self.log_lik_hess_rows_any(theta, rows, count, hess)
        )
    }
    /// A drawn batch in chunks of [`GATHER`] rows (see `log_lik_grad_batch_any`), compiled for
    /// the running CPU ([`crate::cpu`]; the same bits on either path).
    fn log_lik_grad_batch(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) -> f64 {
        crate::on_cpu!(
            self.log_lik_grad_batch_avx2(theta, idx, grad),
            self.log_lik_grad_batch_any(theta, idx, grad)
        )
    }
    /// [`log_lik_grad_batch`](DataModel::log_lik_grad_batch)'s gradient without the family's
    /// values (the same bits; compiled for the running CPU).
    fn grad_batch(&self, theta: &[f64], idx: &[usize], grad: &mut [f64]) {
        crate::on_cpu!(
            self.grad_batch_avx2(theta, idx, grad),
            self.grad_batch_any(theta, idx, grad)
        )
    }
    /// [`GlmView::step_terms`] in chunks of `STEP_CHUNK` (128) rows (each row read once for both
    /// points): ℓᵢ = f(yᵢ, ηᵢ), so the same bits as [`DataModel::log_lik`] datum by datum.
    fn log_lik_diff_many(&self, theta: &[f64], proposal: &[f64], idx: &[usize], out: &mut [f64]) {
        let mut e0 = [0.0f64; STEP_CHUNK];
        let mut e1 = [0.0f64; STEP_CHUNK];
        for (chunk, o) in idx.chunks(STEP_CHUNK).zip(out.chunks_mut(STEP_CHUNK)) {
            let len = chunk.len().min(o.len());
            GlmView::step_terms(
                self,
                theta,
                proposal,
                &chunk[..len],
                &mut e0[..len],
                &mut e1[..len],
                &mut o[..len],
            );
        }
    }
    fn log_lik_grad_all(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        self.chunked_pass(theta, Some(grad))
    }
    fn log_lik_grad_all_many(&self, points: &[f64], grads: &mut [f64]) -> Vec<f64> {
        let dim = self.dim();
        if dim == 0 || !points.len().is_multiple_of(dim) || grads.len() != points.len() {
            return self.log_lik_grad_all_each(points, grads);
        }
        self.chunked_pass_many(points, grads)
    }
    fn log_lik_all(&self, theta: &[f64]) -> f64 {
        self.chunked_pass(theta, None)
    }
    fn set_parallel(&mut self, parallel: alloc::sync::Arc<dyn crate::parallel::ParallelFor>) {
        self.parallel = Some(parallel);
    }
    fn parallel(&self) -> Option<&dyn crate::parallel::ParallelFor> {
        self.parallel.as_deref()
    }
    fn as_glm(&self) -> Option<&dyn GlmView> {
        Some(self)
    }
    fn user_map(&self) -> Option<&AffineMap> {
        self.map.as_ref()
    }
    fn reparam_info(&self) -> Option<&ReparamInfo> {
        self.reparam.as_ref()
    }
}

impl<F: GlmFamily> GlmView for Glm<F> {
    fn design(&self) -> &Design {
        &self.design
    }
    fn family(&self) -> &dyn GlmFamily {
        &self.family
    }
    fn offset(&self) -> Option<&[f64]> {
        self.offset.as_deref()
    }
    fn step_terms(
        &self,
        theta: &[f64],
        proposal: &[f64],
        idx: &[usize],
        eta0: &mut [f64],
        eta1: &mut [f64],
        dl: &mut [f64],
    ) {
        crate::on_cpu!(
            self.step_terms_avx2(theta, proposal, idx, eta0, eta1, dl),
            self.step_terms_any(theta, proposal, idx, eta0, eta1, dl)
        )
    }
    fn terms_rows(&self, theta: &[f64], start: usize, out: &mut [f64]) {
        crate::on_cpu!(
            self.terms_rows_avx2(theta, start, out),
            self.terms_rows_any(theta, start, out)
        )
    }
}

/// Gaussian noise with known standard deviation σ: f = −(y − η)²/(2σ²) (constant dropped).
#[derive(Debug, Clone, Copy)]
pub struct GaussianNoise {
    /// Noise standard deviation σ (> 0).
    pub sd: f64,
}

impl GlmFamily for GaussianNoise {
    fn name(&self) -> &'static str {
        "linear"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.sd;
        -0.5 * r * r
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let r = y - eta;
        let p = 1.0 / (self.sd * self.sd);
        (-0.5 * r * r * p, r * p)
    }
    #[inline]
    fn d2(&self, _y: f64, _eta: f64) -> f64 {
        -1.0 / (self.sd * self.sd)
    }
    #[inline]
    fn d3(&self, _y: f64, _eta: f64) -> f64 {
        0.0
    }
    fn d2_bound(&self) -> Option<f64> {
        Some(1.0 / (self.sd * self.sd))
    }
    fn d3_bound(&self) -> Option<f64> {
        Some(0.0)
    }
}

/// Poisson counts with log link: f = y η − e^η (the constant −log y! is dropped), y ∈ {0, 1, …}.
///
/// # Formula
/// f′ = y − e^η,  f″ = −e^η,  f‴ = −e^η.
#[derive(Debug, Clone, Copy, Default)]
pub struct Poisson;

impl GlmFamily for Poisson {
    fn name(&self) -> &'static str {
        "poisson"
    }
    #[inline(always)]
    fn value(&self, y: f64, eta: f64) -> f64 {
        y * eta - math::fast_exp(eta)
    }
    #[inline(always)]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let m = math::fast_exp(eta);
        (y * eta - m, y - m)
    }
    #[inline(always)]
    fn d2(&self, _y: f64, eta: f64) -> f64 {
        -math::fast_exp(eta)
    }
    #[inline(always)]
    fn d3(&self, _y: f64, eta: f64) -> f64 {
        -math::fast_exp(eta)
    }
}

/// Student-t errors with ν degrees of freedom and known scale s (robust regression):
/// f = −((ν + 1)/2) · log(1 + r²/ν), r = (y − η)/s (constants dropped).
///
/// # Formula
/// With g(r) = ((ν+1)/2) log(1 + r²/ν):
/// g′(r) = (ν+1) r / (ν + r²),  g″(r) = (ν+1)(ν − r²)/(ν + r²)²,
/// g‴(r) = 2(ν+1) r (r² − 3ν)/(ν + r²)³;
/// f′ = g′(r)/s,  f″ = −g″(r)/s²,  f‴ = g‴(r)/s³.
/// sup|f″| = (ν+1)/(ν s²) (at r = 0), sup|f‴| = (ν+1)(3 + 2√2)/(4 ν^{3/2} s³).
///
/// ## References
/// Bierkens et al. (2018), *Scalable Metropolis–Hastings for exact Bayesian inference with
/// large datasets* (robust linear regression with ν = 4, unit scale).
#[derive(Debug, Clone, Copy)]
pub struct StudentT {
    /// Degrees of freedom ν (> 0).
    pub nu: f64,
    /// Scale s (> 0).
    pub scale: f64,
}

/// Default degrees of freedom ν of the `robust` model's Student-t noise.
pub const DEFAULT_NU: f64 = 4.0;
/// Default scale of the `robust` model's Student-t noise.
pub const DEFAULT_T_SCALE: f64 = 1.0;

/// The `robust` model's `nu` setting.
pub const P_NU: ParamSpec = ParamSpec::positive(
    "nu",
    "Degrees of freedom ν of the Student-t noise (> 0)",
    DEFAULT_NU,
);

/// The `robust` model's `noise_sd` setting (the Student-t scale).
pub const P_T_SCALE: ParamSpec = ParamSpec::positive(
    "noise_sd",
    "Scale of the Student-t noise (> 0)",
    DEFAULT_T_SCALE,
);

impl Default for StudentT {
    fn default() -> Self {
        StudentT {
            nu: DEFAULT_NU,
            scale: DEFAULT_T_SCALE,
        }
    }
}

impl GlmFamily for StudentT {
    fn name(&self) -> &'static str {
        "robust"
    }
    #[inline]
    fn value(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        -0.5 * (self.nu + 1.0) * math::ln_1p(r * r / self.nu)
    }
    #[inline]
    fn value_d1(&self, y: f64, eta: f64) -> (f64, f64) {
        let r = (y - eta) / self.scale;
        let v = -0.5 * (self.nu + 1.0) * math::ln_1p(r * r / self.nu);
        (v, (self.nu + 1.0) * r / ((self.nu + r * r) * self.scale))
    }
    #[inline]
    fn d2(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        let q = self.nu + r * r;
        -(self.nu + 1.0) * (self.nu - r * r) / (q * q * self.scale * self.scale)
    }
    #[inline]
    fn d3(&self, y: f64, eta: f64) -> f64 {
        let r = (y - eta) / self.scale;
        let q = self.nu + r * r;
        let s = self.scale;
        2.0 * (self.nu + 1.0) * r * (r * r - 3.0 * self.nu) / (q * q * q * s * s * s)
    }
    fn d2_bound(&self) -> Option<f64> {
        Some((self.nu + 1.0) / (self.nu * self.scale * self.scale))
    }
    fn d3_bound(&self) -> Option<f64> {
        let s = self.scale;
        Some(
            (self.nu + 1.0) * (3.0 + 2.0 * math::sqrt(2.0))
                / (4.0 * math::pow(self.nu, 1.5) * s * s * s),
        )
    }
}
