//! The design of AustereMH's sequential test (Korattikara, Chen & Welling 2014, §5 and App. A):
//! the probability of a wrong decision and the expected data use of a test (m, ε), computed by
//! dynamic programming on the Gaussian random walk of the standardised statistics, and the
//! search over the paper's grid of designs.
//!
//! # Formula
//! With μ_std = (μ − μ₀)√(N−1)/σ_l, πⱼ = min(jm, N)/N and J = ⌈N/m⌉ looks, the z-statistics
//! follow zⱼ | zⱼ₋₁ ~ N(μ_std(πⱼ−πⱼ₋₁)/((1−πⱼ₋₁)√(πⱼ(1−πⱼ))) + zⱼ₋₁√(πⱼ₋₁(1−πⱼ)/(πⱼ(1−πⱼ₋₁))),
//! (πⱼ−πⱼ₋₁)/(πⱼ(1−πⱼ₋₁))), z₁ ~ N(μ_std√(π₁/(1−π₁)), 1). The test stops at the first
//! |zⱼ| > G = Φ⁻¹(1−ε); the last look (all data) is always right.
//! E(μ_std) = P(stop on the wrong side) (for μ_std = 0: half the probability of any early stop),
//! mean_j = Σⱼ P(look j happens); data use ≈ m·mean_j. The walk is tracked on `bins` cells of
//! [−G, G] (mass at the cell centres, transitions by normal-CDF differences, Φ interpolated
//! from a table with error < 10⁻⁷).
//!
//! AustereMH(c) (conservative, [K] eq. 8): the design minimising m·mean_j(0) subject to
//! E(0) < Δ* over ε ∈ {0.001, 0.005, 0.01, 0.05, 0.1, 0.2} × m ∈ {50, 100, …, 500}.
//! AustereMH(nc): the same search at each iteration's (full-data) μ_std.

use crate::math;
use alloc::vec;
use alloc::vec::Vec;

/// The per-look levels ε of the design grid ([K], Seita et al. App. B).
pub const EPSILON_GRID: [f64; 6] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.2];
/// The batch increments m of the design grid: 50, 100, …, 500.
pub const BATCH_GRID: [usize; 10] = [50, 100, 150, 200, 250, 300, 350, 400, 450, 500];
/// Number of cells of the dynamic programme ([K]: 100).
pub const DEFAULT_BINS: usize = 100;

/// One evaluated design of the sequential test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeqDesign {
    /// Batch increment m.
    pub batch_step: usize,
    /// Per-look level ε.
    pub epsilon: f64,
    /// Probability E(μ_std, m, ε) of a wrong decision.
    pub error: f64,
    /// Expected number of looks mean_j.
    pub mean_looks: f64,
    /// Expected data use, Σⱼ P(look j)·(size of batch j) (≈ m·mean_j).
    pub data: f64,
}

/// Φ tabulated on [−9, 9] with step 10⁻³ and linearly interpolated (error < 10⁻⁷, which is
/// far below the discretisation error of the walk; 20× cheaper than `erfc`).
struct CdfTable {
    v: Vec<f64>,
}

const CDF_LIM: f64 = 9.0;
const CDF_STEP: f64 = 1e-3;

impl CdfTable {
    fn new() -> Self {
        let k = math::round(2.0 * CDF_LIM / CDF_STEP) as usize + 1;
        CdfTable {
            v: (0..k)
                .map(|i| math::norm_cdf(-CDF_LIM + i as f64 * CDF_STEP))
                .collect(),
        }
    }

    #[inline]
    fn cdf(&self, x: f64) -> f64 {
        if x.is_nan() {
            return f64::NAN;
        }
        if x <= -CDF_LIM {
            return 0.0;
        }
        if x >= CDF_LIM {
            return 1.0;
        }
        let t = (x + CDF_LIM) / CDF_STEP;
        let i = t as usize;
        let f = t - i as f64;
        match (self.v.get(i), self.v.get(i + 1)) {
            (Some(a), Some(b)) => a + f * (b - a),
            (Some(a), None) => *a,
            _ => 1.0,
        }
    }
}

/// Evaluate the design (m, ε) of a sequential test on `n` data at standardised mean `mu_std`,
/// with the walk tracked on `bins` cells. Degenerate inputs (m = 0, n = 0, ε ∉ (0, ½),
/// bins = 0, non-finite μ_std) give error 0 and all data read in one look.
pub fn evaluate(n: usize, m: usize, epsilon: f64, mu_std: f64, bins: usize) -> SeqDesign {
    evaluate_with(&CdfTable::new(), n, m, epsilon, mu_std, bins)
}

fn evaluate_with(
    phi: &CdfTable,
    n: usize,
    m: usize,
    epsilon: f64,
    mu_std: f64,
    bins: usize,
) -> SeqDesign {
    let all = SeqDesign {
        batch_step: m,
        epsilon,
        error: 0.0,
        mean_looks: 1.0,
        data: n as f64,
    };
    if m == 0
        || n == 0
        || bins == 0
        || !(epsilon > 0.0 && epsilon < 0.5)
        || !mu_std.is_finite()
        || m >= n
    {
        return all;
    }
    let nf = n as f64;
    let looks = n.div_ceil(m);
    let pi = |j: usize| -> f64 { ((j * m).min(n)) as f64 / nf };
    let size = |j: usize| -> f64 { ((j * m).min(n) - ((j - 1) * m).min(n)) as f64 };
    let g = math::norm_quantile(1.0 - epsilon);
    let h = 2.0 * g / bins as f64;
    let centre = |k: usize| -g + (k as f64 + 0.5) * h;
    let edge = |k: usize| -g + k as f64 * h;
    let mut p = vec![0.0; bins];
    let mut q = vec![0.0; bins];
    let (mut lower, mut upper) = (0.0, 0.0);
    // Look 1.
    let p1 = pi(1);
    let mean1 = mu_std * math::sqrt(p1 / (1.0 - p1));
    lower += phi.cdf(-g - mean1);
    upper += phi.cdf(mean1 - g);
    let mut prev = phi.cdf(edge(0) - mean1);
    for (k, pk) in p.iter_mut().enumerate() {
        let next = phi.cdf(edge(k + 1) - mean1);
        *pk = (next - prev).max(0.0);
        prev = next;
    }
    let mut mean_looks = 1.0;
    let mut data = size(1);
    for j in 2..looks {
        let survive: f64 = p.iter().sum();
        if survive < 1e-15 {
            break;
        }
        mean_looks += survive;
        data += survive * size(j);
        let (a, b) = (pi(j - 1), pi(j));
        let shift = mu_std * (b - a) / ((1.0 - a) * math::sqrt(b * (1.0 - b)));
        let coef = math::sqrt(a * (1.0 - b) / (b * (1.0 - a)));
        let sd = math::sqrt((b - a) / (b * (1.0 - a)));
        q.iter_mut().for_each(|v| *v = 0.0);
        for (k, &pk) in p.iter().enumerate() {
            if pk <= 0.0 {
                continue;
            }
            let mu = shift + coef * centre(k);
            lower += pk * phi.cdf((-g - mu) / sd);
            upper += pk * phi.cdf((mu - g) / sd);
            // Only cells within 8 sd of the mean receive mass (the rest is < 1e-15).
            let lo = math::floor((mu - 8.0 * sd + g) / h).max(0.0) as usize;
            let hi = (math::ceil((mu + 8.0 * sd + g) / h).max(0.0) as usize).min(bins);
            if lo >= hi {
                continue;
            }
            let mut prev = phi.cdf((edge(lo) - mu) / sd);
            for (c, qc) in q.iter_mut().enumerate().take(hi).skip(lo) {
                let next = phi.cdf((edge(c + 1) - mu) / sd);
                *qc += pk * (next - prev).max(0.0);
                prev = next;
            }
        }
        core::mem::swap(&mut p, &mut q);
    }
    // The last look reads the rest of the data and is always right.
    let survive: f64 = p.iter().sum();
    if looks >= 2 {
        mean_looks += survive;
        data += survive * size(looks);
    }
    let error = if mu_std > 0.0 {
        lower
    } else if mu_std < 0.0 {
        upper
    } else {
        0.5 * (lower + upper)
    };
    SeqDesign {
        batch_step: m,
        epsilon,
        error,
        mean_looks,
        data,
    }
}

/// The design of the grid with the least expected data use at `mu_std` subject to
/// E(mu_std) < `bound`; `None` when no design of the grid meets the bound.
pub fn search(n: usize, mu_std: f64, bound: f64, bins: usize) -> Option<SeqDesign> {
    let phi = CdfTable::new();
    let mut best: Option<SeqDesign> = None;
    for &m in BATCH_GRID.iter() {
        for &eps in EPSILON_GRID.iter() {
            let d = evaluate_with(&phi, n, m, eps, mu_std, bins);
            if d.error < bound && best.is_none_or(|b| d.data < b.data) {
                best = Some(d);
            }
        }
    }
    best
}

/// The |μ_std| grid of [`NcTable`]: steps of 0.1 up to 4, then 0.5 up to 10 (larger values
/// use the design at 10). E changes fastest near 0, where the grid is finest.
pub fn nc_grid_value(k: usize) -> f64 {
    if k <= 40 {
        0.1 * k as f64
    } else {
        4.0 + 0.5 * (k - 40) as f64
    }
}

/// The cell of the |μ_std| grid at or below `a` ≥ 0.
fn nc_grid_cell(a: f64) -> usize {
    if !a.is_finite() {
        NC_CELLS - 1
    } else if a < 4.0 {
        (math::floor(a / 0.1) as usize).min(40)
    } else {
        (40 + math::floor((a - 4.0) / 0.5) as usize).min(NC_CELLS - 1)
    }
}

const NC_CELLS: usize = 53;

/// The per-iteration (non-conservative) design table of AustereMH(nc): the best design at each
/// |μ_std| of a grid ([`nc_grid_value`]), computed lazily. A value between grid points uses
/// the grid point below (E decreases with |μ_std|, so that design also meets the bound).
#[derive(Debug, Clone, PartialEq)]
pub struct NcTable {
    n: usize,
    bound: f64,
    bins: usize,
    /// Designs searched so far, per grid cell (filled lazily; a cache, not state).
    cells: core::cell::RefCell<Vec<Option<Option<SeqDesign>>>>,
}

impl NcTable {
    /// An empty table for `n` data and error bound Δ* = `bound`.
    pub fn new(n: usize, bound: f64, bins: usize) -> Self {
        NcTable {
            n,
            bound,
            bins,
            cells: core::cell::RefCell::new(vec![None; NC_CELLS]),
        }
    }

    /// The error bound Δ*.
    pub fn bound(&self) -> f64 {
        self.bound
    }

    /// The design for `mu_std` (`None`: no design meets the bound, read all data).
    pub fn design(&self, mu_std: f64) -> Option<SeqDesign> {
        let k = nc_grid_cell(math::abs(mu_std));
        let (n, bound, bins) = (self.n, self.bound, self.bins);
        let mut cells = self.cells.borrow_mut();
        let cell = cells.get_mut(k)?;
        if cell.is_none() {
            *cell = Some(search(n, nc_grid_value(k), bound, bins));
        }
        cell.flatten()
    }
}
