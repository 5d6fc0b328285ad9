//! Control variates for the minibatch tests on generalised linear models.
//!
//! Every minibatch test reads per-datum log-likelihood differences lᵢ = ℓᵢ(θ′) − ℓᵢ(θ) and
//! needs their mean over all n data; the batch it reads grows with their spread. With
//! qᵢ(θ) = f(η̂ᵢ) + f′(η̂ᵢ)(ηᵢ − η̂ᵢ) + ½f″(η̂ᵢ)(ηᵢ − η̂ᵢ)² the second-order Taylor expansion of
//! ℓᵢ = f(yᵢ, ηᵢ), ηᵢ = oᵢ + xᵢᵀθ, around a centre θ̂, the tests read instead
//!
//! l̃ᵢ = [ℓᵢ(θ′) − ℓᵢ(θ)] − [qᵢ(θ′) − qᵢ(θ)] + (1/n)Σⱼ[qⱼ(θ′) − qⱼ(θ)],
//!
//! whose mean over the data is exactly that of lᵢ, while their spread is that of the Taylor
//! remainders, O(‖θ − θ̂‖²‖θ′ − θ‖) per datum instead of O(‖θ′ − θ‖). The sum is O(d²) per
//! step: Σⱼ[qⱼ(θ′) − qⱼ(θ)] = Gᵀ(θ′ − θ) + ½[(θ′−θ̂)ᵀH(θ′−θ̂) − (θ−θ̂)ᵀH(θ−θ̂)] with
//! G = Σⱼ f′(η̂ⱼ)xⱼ and H = Σⱼ f″(η̂ⱼ)xⱼxⱼᵀ, computed once (one pass, set-up cost).
//!
//! Without control variates, in coordinates where the Fisher information is I (`reparam=auto`),
//! the batch needed for s² < σ² is about n·‖θ′ − θ‖²/σ², i.e. the data fraction per step is
//! ‖θ′ − θ‖² whatever n: a step of useful length reads most of the data. With them the fraction
//! falls like 1/n (the remainders shrink with the posterior), as for SMH and HMC-ECS.

use crate::error::Error;
use crate::model::{DataModel, GlmView};
use alloc::sync::Arc;
use alloc::vec;
use alloc::vec::Vec;

/// The second-order Taylor control variate of a GLM around θ̂. A clone shares the per-datum
/// arrays (3n numbers) with the original: a run's chains with the same centre hold one copy
/// (`sampler::share`).
#[derive(Debug, Clone)]
pub struct TaylorCv {
    centre: Vec<f64>,
    per_datum: Arc<PerDatum>,
    g: Vec<f64>,
    h: Vec<f64>,
    d: usize,
    /// maxᵢ ‖xᵢ‖₂ over the design rows.
    x_norm_max: f64,
    /// sup |∂³f/∂η³| of the family, when finite.
    d3: Option<f64>,
}

/// η̂ᵢ, f′(η̂ᵢ) and f″(η̂ᵢ) per datum.
#[derive(Debug)]
struct PerDatum {
    eta_hat: Vec<f64>,
    f1: Vec<f64>,
    f2: Vec<f64>,
}

impl TaylorCv {
    /// The control variate of `view` around `centre` (one pass over the data: n value, first
    /// and second derivative evaluations). Fails when a coefficient is not finite.
    pub fn new(view: &dyn GlmView, centre: &[f64]) -> Result<Self, Error> {
        let design = view.design();
        let (n, d) = (design.n, design.d);
        Error::check_dim("control-variate centre", d, centre.len())?;
        let fam = view.family();
        let mut eta_hat = Vec::with_capacity(n);
        let mut f1 = Vec::with_capacity(n);
        let mut f2 = Vec::with_capacity(n);
        let mut g = vec![0.0; d];
        let mut h = vec![0.0; d * d];
        let mut x2_max = 0.0f64;
        let mut i0 = 0;
        while i0 < n {
            let len = (n - i0).min(BLOCK);
            let mut a = [0.0f64; BLOCK];
            let mut b = [0.0f64; BLOCK];
            for (k, i) in (i0..i0 + len).enumerate() {
                let y = design.y[i];
                let eta = view.eta(centre, i);
                let (_, a1) = fam.value_d1(y, eta);
                let b1 = fam.d2(y, eta);
                if !(eta.is_finite() && a1.is_finite() && b1.is_finite()) {
                    return Err(Error::data(alloc::format!(
                        "control variate: a derivative of datum {i} is not finite at the centre"
                    )));
                }
                x2_max = x2_max.max(design.row(i).iter().map(|x| x * x).sum::<f64>());
                eta_hat.push(eta);
                f1.push(a1);
                f2.push(b1);
                (a[k], b[k]) = (a1, b1);
            }
            let rows = &design.x[i0 * d..(i0 + len) * d];
            crate::on_cpu!(
                add_rows_avx2(rows, d, &a[..len], &b[..len], &mut g, &mut h),
                add_rows_any(rows, d, &a[..len], &b[..len], &mut g, &mut h)
            );
            i0 += len;
        }
        for p in 0..d {
            for q in 0..p {
                h[p * d + q] = h[q * d + p];
            }
        }
        Ok(TaylorCv {
            centre: centre.to_vec(),
            per_datum: Arc::new(PerDatum { eta_hat, f1, f2 }),
            g,
            h,
            d,
            x_norm_max: crate::math::sqrt(x2_max),
            d3: fam.d3_bound(),
        })
    }

    /// A bound on maxᵢ |rᵢ(θ′) − rᵢ(θ)|, rᵢ = ℓᵢ − qᵢ the Taylor remainders, without reading
    /// the data: |rᵢ(θ)| ≤ (M₃/6)|xᵢᵀ(θ − θ̂)|³ ≤ (M₃/6)·R³·‖θ − θ̂‖³ with M₃ = sup|∂³f/∂η³|
    /// and R = maxᵢ‖xᵢ‖ (computed at set-up). `None` when the family's third derivative is
    /// unbounded (Poisson).
    pub fn residual_bound(&self, theta: &[f64], proposal: &[f64]) -> Option<f64> {
        let m3 = self.d3?;
        let dist = |t: &[f64]| {
            crate::math::sqrt(
                t.iter()
                    .zip(&self.centre)
                    .map(|(a, b)| (a - b) * (a - b))
                    .sum::<f64>(),
            )
        };
        let (a, b) = (dist(theta), dist(proposal));
        let r3 = self.x_norm_max * self.x_norm_max * self.x_norm_max;
        let v = m3 / 6.0 * r3 * (a * a * a + b * b * b);
        v.is_finite().then_some(v)
    }

    /// The centre θ̂.
    pub fn centre(&self) -> &[f64] {
        &self.centre
    }

    /// (1/n)Σⱼ[qⱼ(θ′) − qⱼ(θ)], the per-datum shift of a step θ → θ′.
    pub fn shift(&self, theta: &[f64], proposal: &[f64]) -> f64 {
        let d = self.d;
        let n = self.per_datum.eta_hat.len().max(1) as f64;
        let mut lin = 0.0;
        let mut u = vec![0.0; d];
        let mut v = vec![0.0; d];
        for k in 0..d {
            lin += self.g[k] * (proposal[k] - theta[k]);
            u[k] = theta[k] - self.centre[k];
            v[k] = proposal[k] - self.centre[k];
        }
        let mut quad = 0.0;
        for p in 0..d {
            let row = &self.h[p * d..(p + 1) * d];
            let (mut hu, mut hv) = (0.0, 0.0);
            for q in 0..d {
                hu += row[q] * u[q];
                hv += row[q] * v[q];
            }
            quad += v[p] * hv - u[p] * hu;
        }
        (lin + 0.5 * quad) / n
    }

    /// [ℓᵢ(θ′) − ℓᵢ(θ)] − [qᵢ(θ′) − qᵢ(θ)] for datum i (two likelihood evaluations).
    pub fn residual(&self, view: &dyn GlmView, theta: &[f64], proposal: &[f64], i: usize) -> f64 {
        let y = view.design().y[i];
        let fam = view.family();
        let e0 = view.eta(theta, i);
        let e1 = view.eta(proposal, i);
        let dl = fam.value(y, e1) - fam.value(y, e0);
        self.remainder(dl, e0, e1, i)
    }

    /// dl − [qᵢ(θ′) − qᵢ(θ)] for datum i with ηᵢ(θ) = `e0`, ηᵢ(θ′) = `e1` and
    /// dl = ℓᵢ(θ′) − ℓᵢ(θ): the arithmetic of [`residual`](Self::residual) after the
    /// likelihood evaluations.
    #[inline(always)]
    fn remainder(&self, dl: f64, e0: f64, e1: f64, i: usize) -> f64 {
        let p = &*self.per_datum;
        let (d0, d1) = (e0 - p.eta_hat[i], e1 - p.eta_hat[i]);
        dl - p.f1[i] * (d1 - d0) - 0.5 * p.f2[i] * (d1 * d1 - d0 * d0)
    }
}

/// `out[k]` ← [`TaylorCv::remainder`] of datum `idx[k]` (dl = `out[k]`, ηᵢ(θ) = `e0[k]`,
/// ηᵢ(θ′) = `e1[k]`) + `shift`: [`StepDiffs::at_many`]'s arithmetic after the likelihoods
/// (compiled twice, see [`crate::cpu`]; the same bits on either path).
#[inline(always)]
fn remainders_any(
    c: &TaylorCv,
    idx: &[usize],
    e0: &[f64],
    e1: &[f64],
    shift: f64,
    out: &mut [f64],
) {
    for (((v, &i), &a), &b) in out.iter_mut().zip(idx).zip(e0).zip(e1) {
        *v = c.remainder(*v, a, b, i) + shift;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn remainders_avx2(
    c: &TaylorCv,
    idx: &[usize],
    e0: &[f64],
    e1: &[f64],
    shift: f64,
    out: &mut [f64],
) {
    remainders_any(c, idx, e0, e1, shift, out);
}

/// Rows per block of [`TaylorCv::new`]'s sums.
const BLOCK: usize = 8;

/// G += Σᵣ aᵣxᵣ and the upper triangle of H += Σᵣ (bᵣxᵣ)xᵣᵀ over the rows of a block (`rows`,
/// `a.len()` rows of `d`), each entry's terms added in row order: the same bits as adding
/// the rows one by one, with each entry of H loaded and stored once per block rather than
/// once per row (compiled twice, see [`crate::cpu`]).
#[inline(always)]
fn add_rows_any(rows: &[f64], d: usize, a: &[f64], b: &[f64], g: &mut [f64], h: &mut [f64]) {
    let len = a.len().min(b.len()).min(BLOCK);
    let row = |r: usize| &rows[r * d..(r + 1) * d];
    for (p, gp) in g.iter_mut().enumerate().take(d) {
        let mut s = *gp;
        for r in 0..len {
            s += a[r] * row(r)[p];
        }
        *gp = s;
    }
    const W: usize = 4;
    for p in 0..d {
        let mut bx = [0.0f64; BLOCK];
        for r in 0..len {
            bx[r] = b[r] * row(r)[p];
        }
        let hp = &mut h[p * d + p..(p + 1) * d];
        let mut quads = hp.chunks_exact_mut(W);
        let mut q = p;
        for acc in &mut quads {
            let mut v = [acc[0], acc[1], acc[2], acc[3]];
            for r in 0..len {
                let x = &row(r)[q..q + W];
                for k in 0..W {
                    v[k] += bx[r] * x[k];
                }
            }
            acc.copy_from_slice(&v);
            q += W;
        }
        for (k, hv) in quads.into_remainder().iter_mut().enumerate() {
            let mut v = *hv;
            for r in 0..len {
                v += bx[r] * row(r)[q + k];
            }
            *hv = v;
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn add_rows_avx2(rows: &[f64], d: usize, a: &[f64], b: &[f64], g: &mut [f64], h: &mut [f64]) {
    add_rows_any(rows, d, a, b, g, h);
}

/// Data per chunk of [`StepDiffs::at_many`] (its linear predictors stay on the stack).
const CHUNK: usize = 128;

/// The per-datum differences a minibatch test reads for one step θ → θ′: plain
/// ℓᵢ(θ′) − ℓᵢ(θ), or the control-variate version [`TaylorCv`] (same mean over the data).
pub struct StepDiffs<'a> {
    model: &'a dyn DataModel,
    theta: &'a [f64],
    proposal: &'a [f64],
    cv: Option<(&'a TaylorCv, &'a dyn GlmView, f64)>,
}

impl<'a> StepDiffs<'a> {
    /// The differences of `model` for θ → θ′, with the control variate `cv` when given (the
    /// model must then be the GLM it was built from).
    pub fn new(
        model: &'a dyn DataModel,
        theta: &'a [f64],
        proposal: &'a [f64],
        cv: Option<&'a TaylorCv>,
    ) -> Self {
        let cv = cv.and_then(|c| {
            model
                .as_glm()
                .map(|view| (c, view, c.shift(theta, proposal)))
        });
        StepDiffs {
            model,
            theta,
            proposal,
            cv,
        }
    }

    /// A bound on the range of the differences over the data (max − min ≤ 2·bound) without
    /// reading them: [`TaylorCv::residual_bound`] with the control variate, `None` without it
    /// or when the family has no finite third-derivative bound.
    pub fn range_bound(&self) -> Option<f64> {
        self.cv
            .and_then(|(c, _, _)| c.residual_bound(self.theta, self.proposal))
    }

    /// The difference for datum i (two likelihood evaluations).
    #[inline]
    pub fn at(&self, i: usize) -> f64 {
        match self.cv {
            Some((c, view, shift)) => c.residual(view, self.theta, self.proposal, i) + shift,
            None => self.model.log_lik(self.proposal, i) - self.model.log_lik(self.theta, i),
        }
    }

    /// The differences of the data `idx` into `out` (the first min(`idx.len()`, `out.len()`)
    /// entries; two likelihood evaluations each): the same bits as [`at`](Self::at) datum by
    /// datum, computed together — a GLM reads each row once for θ and θ′ and evaluates its
    /// family in a loop of its own ([`GlmView::step_terms`],
    /// [`DataModel::log_lik_diff_many`]), one virtual call per batch instead of four per
    /// datum.
    pub fn at_many(&self, idx: &[usize], out: &mut [f64]) {
        match self.cv {
            Some((c, view, shift)) => {
                let mut e0 = [0.0f64; CHUNK];
                let mut e1 = [0.0f64; CHUNK];
                for (chunk, o) in idx.chunks(CHUNK).zip(out.chunks_mut(CHUNK)) {
                    let len = chunk.len().min(o.len());
                    let (chunk, o) = (&chunk[..len], &mut o[..len]);
                    let (e0, e1) = (&mut e0[..len], &mut e1[..len]);
                    view.step_terms(self.theta, self.proposal, chunk, e0, e1, o);
                    crate::on_cpu!(
                        remainders_avx2(c, chunk, e0, e1, shift, o),
                        remainders_any(c, chunk, e0, e1, shift, o)
                    );
                }
            }
            None => self
                .model
                .log_lik_diff_many(self.theta, self.proposal, idx, out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::Design;
    use crate::model::prior::Prior;
    use crate::model::{Glm, Logistic};
    use alloc::string::String;

    /// G and H as the row-by-row loop summed them before the blocks (each row's rank-one
    /// term, bx = b·x_p rounded first, added to each entry in row order).
    fn row_by_row(view: &dyn GlmView, centre: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let design = view.design();
        let (n, d) = (design.n, design.d);
        let fam = view.family();
        let mut g = vec![0.0; d];
        let mut h = vec![0.0; d * d];
        for i in 0..n {
            let eta = view.eta(centre, i);
            let (_, a) = fam.value_d1(design.y[i], eta);
            let b = fam.d2(design.y[i], eta);
            let row = design.row(i);
            for (p, &xp) in row.iter().enumerate() {
                g[p] += a * xp;
                let bx = b * xp;
                for (q, &xq) in row.iter().enumerate().skip(p) {
                    h[p * d + q] += bx * xq;
                }
            }
        }
        for p in 0..d {
            for q in 0..p {
                h[p * d + q] = h[q * d + p];
            }
        }
        (g, h)
    }

    /// The blocked sums give the row-by-row loop's bits, for partial last blocks (n not a
    /// multiple of 8) and rows whose upper triangle leaves 1 to 3 entries after the 4-wide
    /// chunks.
    #[test]
    fn blocked_sums_are_the_row_by_row_sums() {
        let mut s = 0x2545_f491_4f6c_dd1du64;
        let mut u = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        for d in [1usize, 2, 3, 5, 6, 7, 9] {
            for n in [1usize, 7, 8, 9, 21, 64] {
                let x: Vec<f64> = (0..n * d).map(|_| 4.0 * u() - 2.0).collect();
                let y: Vec<f64> = (0..n).map(|_| if u() < 0.4 { 1.0 } else { 0.0 }).collect();
                let names = (0..d)
                    .map(|k| alloc::format!("x{k}"))
                    .collect::<Vec<String>>();
                let glm = Glm::new(
                    Design { n, d, x, y, names },
                    Logistic,
                    Prior::Normal { scale: 10.0 },
                );
                let centre: Vec<f64> = (0..d).map(|_| u() - 0.5).collect();
                let cv = TaylorCv::new(&glm, &centre).unwrap();
                let (g, h) = row_by_row(&glm, &centre);
                let bits = |v: &[f64]| v.iter().map(|z| z.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&cv.g), bits(&g), "G, n = {n}, d = {d}");
                assert_eq!(bits(&cv.h), bits(&h), "H, n = {n}, d = {d}");
            }
        }
    }
}
