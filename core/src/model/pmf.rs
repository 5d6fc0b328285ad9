//! Bayesian probabilistic matrix factorisation (Salakhutdinov & Mnih 2008) with fixed
//! hyperparameters: the posterior over the user and item factor matrices, as sampled by HMC /
//! QNHMC in Fu, Luo & Zhang (2016, §5.3). Each rating is one datum.
//!
//! # Formula
//! Ratings r (user i, item j), rank k, global offset μ (the mean rating when `center`, else 0):
//!   r ~ N(μ + uᵢᵀvⱼ, 1/β),   uᵢ ~ N(0, I/λ_u),   vⱼ ~ N(0, I/λ_v).
//! θ = (u₀, …, u_{U−1}, v₀, …, v_{I−1}) ∈ ℝ^{(U + I)k}, user-major (`u{i}_{c}`, `v{j}_{c}`).
//! With e = r − μ − uᵢᵀvⱼ:
//!   ℓ = −(β/2) e² + ½ log(β/2π),  ∇_{uᵢ} ℓ = β e vⱼ,  ∇_{vⱼ} ℓ = β e uᵢ,
//!   ∇²_{uᵢuᵢ} ℓ = −β vⱼvⱼᵀ,  ∇²_{vⱼvⱼ} ℓ = −β uᵢuᵢᵀ,  ∂²ℓ/∂u_{ia}∂v_{jb} = β(e δ_{ab} − v_{ja} u_{ib}).
//! log p(θ) = −(λ_u/2) Σ‖uᵢ‖² − (λ_v/2) Σ‖vⱼ‖² + const.
//! The posterior is non-convex (the likelihood is invariant under uᵢ → Ruᵢ, vⱼ → R⁻ᵀvⱼ for any
//! invertible R; with λ_u = λ_v the prior keeps the orthogonal R, e.g. sign flips of a factor
//! pair), so BFGS curvature pairs can fail there.
//! The Wishart hyperpriors of BPMF are not sampled: β, λ_u, λ_v are settings.
//!
//! Simulated data (`tallmc simulate pmf`, [`crate::simulate`]): the true factors are drawn with
//! variance k^{−1/2} per entry (so sd(uᵢᵀvⱼ) = 1 whatever the rank), not from this model's
//! default prior (variance 1/λ = 1, under which sd(uᵢᵀvⱼ) = √k). The default prior is therefore
//! wider than the simulator's law (a weakly informative prior, as in the paper); to make the
//! simulated truth a draw from the prior set `prior_precision` = √k.
//!
//! ## References
//! R. Salakhutdinov, A. Mnih (2008), *Bayesian probabilistic matrix factorization using Markov
//! chain Monte Carlo*, ICML. T. Fu, L. Luo, Z. Zhang (2016), *Quasi-Newton Hamiltonian Monte
//! Carlo*, UAI, §5.3.

use super::DataModel;
use crate::error::Error;
use crate::math;
use crate::schema::{ParamKind, ParamSpec};
use alloc::string::String;
use alloc::vec::Vec;

/// Default latent rank k (`rank`; the paper uses 10).
pub const DEFAULT_RANK: usize = 10;
/// Default observation precision β (`precision`; Salakhutdinov's BPMF demo uses 2).
pub const DEFAULT_PRECISION: f64 = 2.0;
/// Default prior precision λ of every factor entry (`prior_precision`).
pub const DEFAULT_PRIOR_PRECISION: f64 = 1.0;

/// The `pmf` model's `rank` setting.
pub const P_RANK: ParamSpec = ParamSpec {
    key: "rank",
    description: "Latent dimension k of the user and item factors",
    kind: ParamKind::Int {
        default: DEFAULT_RANK,
        min: 1,
        max: 1000,
    },
};

/// The `pmf` model's `precision` setting.
pub const P_PRECISION: ParamSpec = ParamSpec::positive(
    "precision",
    "Observation precision β of the ratings (> 0)",
    DEFAULT_PRECISION,
);

/// The `pmf` model's `prior_precision` setting.
pub const P_PRIOR_PRECISION: ParamSpec = ParamSpec::positive(
    "prior_precision",
    "Prior precision λ of every factor entry (> 0)",
    DEFAULT_PRIOR_PRECISION,
);

/// The `pmf` model's `center` setting.
pub const P_CENTER: ParamSpec = ParamSpec {
    key: "center",
    description: "Subtract the mean rating (the prediction is mean + uᵢᵀvⱼ)",
    kind: ParamKind::Bool(true),
};
/// Largest number of users or items (ids are 0-based and must be below it).
pub const MAX_IDS: usize = 10_000_000;

/// The BPMF posterior over user and item factors.
#[derive(Debug, Clone)]
pub struct Pmf {
    users: Vec<usize>,
    items: Vec<usize>,
    ratings: Vec<f64>,
    n_users: usize,
    n_items: usize,
    rank: usize,
    precision: f64,
    prior_precision: [f64; 2],
    offset: f64,
    log_norm: f64,
}

/// A 0-based id from a table value: a whole number in [0, MAX_IDS).
fn id(v: f64, row: usize, column: &str) -> Result<usize, Error> {
    if v.is_finite() && v >= 0.0 && v == math::floor(v) && v < MAX_IDS as f64 {
        Ok(v as usize)
    } else {
        Err(Error::InvalidData {
            row: Some(row + 1),
            column: Some(column.into()),
            msg: alloc::format!(
                "{} is not a whole number in [0, {MAX_IDS})",
                crate::settings::number(v)
            ),
        })
    }
}

impl Pmf {
    /// A model over ratings (`users[r]`, `items[r]`, `ratings[r]`), ids 0-based (the number of
    /// users / items is the largest id + 1). `offset` μ is added to every prediction.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        users: Vec<usize>,
        items: Vec<usize>,
        ratings: Vec<f64>,
        rank: usize,
        precision: f64,
        prior_precision: [f64; 2],
        offset: f64,
    ) -> Result<Self, Error> {
        let n = ratings.len();
        if n == 0 {
            return Err(Error::data("pmf needs at least one rating"));
        }
        if users.len() != n || items.len() != n {
            return Err(Error::Dimension {
                what: "user/item ids",
                expected: n,
                got: users.len().min(items.len()),
            });
        }
        if let Some(r) = ratings.iter().position(|x| !x.is_finite()) {
            return Err(Error::InvalidData {
                row: Some(r + 1),
                column: Some("rating".into()),
                msg: String::from("value is not finite"),
            });
        }
        if rank == 0 || rank > 1000 {
            return Err(Error::setting("rank", "must be in [1, 1000]"));
        }
        let precision = Error::check_positive("precision", precision)?;
        let lu = Error::check_positive("prior_precision", prior_precision[0])?;
        let lv = Error::check_positive("prior_precision", prior_precision[1])?;
        if !offset.is_finite() {
            return Err(Error::data("the rating offset is not finite"));
        }
        let n_users = users.iter().copied().max().unwrap_or(0) + 1;
        let n_items = items.iter().copied().max().unwrap_or(0) + 1;
        if n_users > MAX_IDS || n_items > MAX_IDS {
            return Err(Error::data("too many users or items"));
        }
        (n_users + n_items)
            .checked_mul(rank)
            .filter(|d| *d <= 100_000_000)
            .ok_or_else(|| Error::data("(users + items) × rank is too large"))?;
        Ok(Pmf {
            users,
            items,
            ratings,
            n_users,
            n_items,
            rank,
            precision,
            prior_precision: [lu, lv],
            offset,
            log_norm: 0.5 * math::ln(precision / (2.0 * core::f64::consts::PI)),
        })
    }

    /// Build from table columns (`user`, `item`, rating values); `center` sets μ to the mean
    /// rating (else μ = 0). Errors name the 1-based row.
    pub fn from_columns(
        user: &[f64],
        item: &[f64],
        rating: &[f64],
        rank: usize,
        precision: f64,
        prior_precision: f64,
        center: bool,
    ) -> Result<Self, Error> {
        let users = user
            .iter()
            .enumerate()
            .map(|(r, &v)| id(v, r, "user"))
            .collect::<Result<Vec<_>, _>>()?;
        let items = item
            .iter()
            .enumerate()
            .map(|(r, &v)| id(v, r, "item"))
            .collect::<Result<Vec<_>, _>>()?;
        let offset = if center && !rating.is_empty() {
            rating.iter().sum::<f64>() / rating.len() as f64
        } else {
            0.0
        };
        Pmf::new(
            users,
            items,
            rating.to_vec(),
            rank,
            precision,
            [prior_precision, prior_precision],
            offset,
        )
    }

    /// Number of users U.
    pub fn n_users(&self) -> usize {
        self.n_users
    }
    /// Number of items I.
    pub fn n_items(&self) -> usize {
        self.n_items
    }
    /// Rank k.
    pub fn rank(&self) -> usize {
        self.rank
    }
    /// The offset μ.
    pub fn offset(&self) -> f64 {
        self.offset
    }

    /// Offsets of uᵢ and vⱼ in θ for rating `r`.
    fn blocks(&self, r: usize) -> (usize, usize) {
        let k = self.rank;
        (self.users[r] * k, (self.n_users + self.items[r]) * k)
    }

    /// Predicted rating μ + uᵢᵀvⱼ for user `i`, item `j` (NaN when out of range).
    pub fn predict(&self, theta: &[f64], i: usize, j: usize) -> f64 {
        let k = self.rank;
        let (a, b) = (i * k, (self.n_users + j) * k);
        match (theta.get(a..a + k), theta.get(b..b + k)) {
            (Some(u), Some(v)) if i < self.n_users && j < self.n_items => {
                self.offset + crate::linalg::dot(u, v)
            }
            _ => f64::NAN,
        }
    }

    /// Residual e = r − μ − uᵢᵀvⱼ of rating `r`.
    fn residual(&self, theta: &[f64], r: usize) -> f64 {
        let (a, b) = self.blocks(r);
        let k = self.rank;
        let uv: f64 = (0..k).map(|c| theta[a + c] * theta[b + c]).sum();
        self.ratings[r] - self.offset - uv
    }
}

impl DataModel for Pmf {
    fn dim(&self) -> usize {
        (self.n_users + self.n_items) * self.rank
    }
    fn n(&self) -> usize {
        self.ratings.len()
    }
    fn param_names(&self) -> Vec<String> {
        let k = self.rank;
        let mut names = Vec::with_capacity(self.dim());
        for i in 0..self.n_users {
            for c in 0..k {
                names.push(alloc::format!("u{i}_{c}"));
            }
        }
        for j in 0..self.n_items {
            for c in 0..k {
                names.push(alloc::format!("v{j}_{c}"));
            }
        }
        names
    }
    fn log_prior_grad(&self, theta: &[f64], grad: &mut [f64]) -> f64 {
        let split = self.n_users * self.rank;
        let mut lp = 0.0;
        for (j, (t, g)) in theta.iter().zip(grad.iter_mut()).enumerate() {
            let l = if j < split {
                self.prior_precision[0]
            } else {
                self.prior_precision[1]
            };
            lp -= 0.5 * l * t * t;
            *g -= l * t;
        }
        lp
    }
    fn log_prior(&self, theta: &[f64]) -> f64 {
        let split = self.n_users * self.rank;
        theta
            .iter()
            .enumerate()
            .map(|(j, t)| {
                let l = if j < split {
                    self.prior_precision[0]
                } else {
                    self.prior_precision[1]
                };
                -0.5 * l * t * t
            })
            .sum()
    }
    fn log_prior_hess(&self, _theta: &[f64], hess: &mut [f64]) {
        let d = self.dim();
        let split = self.n_users * self.rank;
        for j in 0..d {
            let l = if j < split {
                self.prior_precision[0]
            } else {
                self.prior_precision[1]
            };
            if let Some(h) = hess.get_mut(j * d + j) {
                *h -= l;
            }
        }
    }
    fn log_lik(&self, theta: &[f64], i: usize) -> f64 {
        let e = self.residual(theta, i);
        -0.5 * self.precision * e * e + self.log_norm
    }
    fn log_lik_grad(&self, theta: &[f64], i: usize, grad: &mut [f64]) -> f64 {
        let e = self.residual(theta, i);
        let (a, b) = self.blocks(i);
        let be = self.precision * e;
        for c in 0..self.rank {
            let (u, v) = (theta[a + c], theta[b + c]);
            grad[a + c] += be * v;
            grad[b + c] += be * u;
        }
        -0.5 * self.precision * e * e + self.log_norm
    }
    fn log_lik_hess(&self, theta: &[f64], i: usize, hess: &mut [f64]) {
        let d = self.dim();
        let k = self.rank;
        let e = self.residual(theta, i);
        let (a, b) = self.blocks(i);
        let beta = self.precision;
        for p in 0..k {
            for q in 0..k {
                let (up, uq, vp, vq) = (theta[a + p], theta[a + q], theta[b + p], theta[b + q]);
                hess[(a + p) * d + a + q] -= beta * vp * vq;
                hess[(b + p) * d + b + q] -= beta * up * uq;
                // ∂²ℓ/∂u_p∂v_q = β(e δ_pq − v_p u_q).
                let cross = beta * (if p == q { e } else { 0.0 } - vp * uq);
                hess[(a + p) * d + b + q] += cross;
                hess[(b + q) * d + a + p] += cross;
            }
        }
    }
    /// Per rating, with s = vⱼᵀx_u + uᵢᵀx_v: (Hx)_u = β(e x_v − s vⱼ), (Hx)_v = β(e x_u − s uᵢ);
    /// O(n k), no d × d matrix.
    fn log_lik_hess_vec_all(&self, theta: &[f64], v: &[f64], out: &mut [f64]) {
        let k = self.rank;
        let beta = self.precision;
        for r in 0..self.ratings.len() {
            let e = self.residual(theta, r);
            let (a, b) = self.blocks(r);
            let mut s = 0.0;
            for c in 0..k {
                s += theta[b + c] * v[a + c] + theta[a + c] * v[b + c];
            }
            for c in 0..k {
                out[a + c] += beta * (e * v[b + c] - s * theta[b + c]);
                out[b + c] += beta * (e * v[a + c] - s * theta[a + c]);
            }
        }
    }
    fn log_prior_hess_vec(&self, _theta: &[f64], v: &[f64], out: &mut [f64]) {
        let split = self.n_users * self.rank;
        for (j, (x, o)) in v.iter().zip(out.iter_mut()).enumerate() {
            let l = if j < split {
                self.prior_precision[0]
            } else {
                self.prior_precision[1]
            };
            *o -= l * x;
        }
    }
    /// −λ − β Σ v²ⱼ_c over user i's ratings for u_{ic}, −λ − β Σ u²ᵢ_c over item j's for v_{jc}.
    fn log_post_hess_diag(&self, theta: &[f64], out: &mut [f64]) -> bool {
        let split = self.n_users * self.rank;
        for (j, o) in out.iter_mut().enumerate() {
            *o -= if j < split {
                self.prior_precision[0]
            } else {
                self.prior_precision[1]
            };
        }
        for r in 0..self.ratings.len() {
            let (a, b) = self.blocks(r);
            for c in 0..self.rank {
                let (u, v) = (theta[a + c], theta[b + c]);
                out[a + c] -= self.precision * v * v;
                out[b + c] -= self.precision * u * u;
            }
        }
        true
    }
    /// Small deterministic non-zero factors (θ = 0 is a saddle point: every gradient vanishes).
    fn initial_point(&self) -> Vec<f64> {
        (0..self.dim())
            .map(|j| 0.1 * math::sin(1.0 + j as f64))
            .collect()
    }
}
