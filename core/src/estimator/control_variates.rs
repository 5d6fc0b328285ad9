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
use alloc::vec;
use alloc::vec::Vec;

/// Largest number of cached floats for a non-GLM model (n·(1 + d + d²) for order 2).
const MAX_GENERAL_CACHE: usize = 40_000_000;

#[derive(Debug, Clone)]
enum Cache {
    /// Per datum: ηₖ*, f(yₖ, ηₖ*), f′, f″.
    Glm {
        eta: Vec<f64>,
        l: Vec<f64>,
        d1: Vec<f64>,
        d2: Vec<f64>,
    },
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
            let mut eta = vec![0.0; n];
            let mut l = vec![0.0; n];
            let mut d1 = vec![0.0; n];
            let mut d2 = vec![0.0; n];
            sum_l = glm.terms_all(centre, &mut eta, &mut l, &mut d1, &mut d2);
            // A = Σₖ f′ₖ xₖ and the lower triangle of B = Σₖ f″ₖ xₖxₖᵀ, eight rows per sweep
            // over (i, j): each entry gets the rows' terms in row order, as row by row (the same
            // bits), with B loaded and stored once per eight rows instead of once per row.
            const R: usize = 8;
            let full = n - n % R;
            for k0 in (0..full).step_by(R) {
                let r: [&[f64]; R] = core::array::from_fn(|q| design.row(k0 + q));
                let f1: [f64; R] = core::array::from_fn(|q| d1[k0 + q]);
                let f2: [f64; R] = core::array::from_fn(|q| d2[k0 + q]);
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
            for k in full..n {
                let row = design.row(k);
                for i in 0..d {
                    a[i] += d1[k] * row[i];
                    let ri = d2[k] * row[i];
                    for j in 0..=i {
                        b[i * d + j] += ri * row[j];
                    }
                }
            }
            for i in 0..d {
                for j in 0..i {
                    b[j * d + i] = b[i * d + j];
                }
            }
            Cache::Glm { eta, l, d1, d2 }
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
            Cache::Glm { eta, l, d1, d2 } => {
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
                    let dz = e - eta[k];
                    let (q, dq) = match self.order {
                        0 => (l[k], 0.0),
                        1 => (l[k] + d1[k] * dz, d1[k]),
                        _ => (l[k] + dz * (d1[k] + 0.5 * d2[k] * dz), d1[k] + d2[k] * dz),
                    };
                    if with_grad {
                        let (v, f1) = fam.value_d1(design.y[k], e);
                        dout[s] = v - q;
                        let c = f1 - dq;
                        let g = &mut gout[s * d..(s + 1) * d];
                        for i in 0..d {
                            g[i] = c * row[i];
                        }
                    } else {
                        dout[s] = fam.value(design.y[k], e) - q;
                    }
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
