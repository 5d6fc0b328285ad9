//! L-BFGS for maximisation, with a strong-Wolfe line search (bracketing and safeguarded
//! quadratic interpolation: a light version of Moré–Thuente).
//!
//! # Formula
//! Internally minimises h = −f. With sₖ = xₖ₊₁ − xₖ, yₖ = ∇hₖ₊₁ − ∇hₖ, ρₖ = 1/(yₖᵀsₖ), the
//! two-loop recursion applies Hₖ ≈ (∇²h)⁻¹ built from the last m pairs and H⁰ = γI,
//! γ = sᵀy / yᵀy of the newest pair; direction p = −Hₖ∇hₖ. Pairs with yᵀs ≤ 10⁻¹²‖y‖‖s‖
//! are skipped, keeping Hₖ positive definite. Step α satisfies
//! h(x + αp) ≤ h(x) + 10⁻⁴ α ∇hᵀp and |∇h(x + αp)ᵀp| ≤ 0.9 |∇hᵀp|.

use super::norm_inf;
use crate::error::Error;
use crate::linalg::dot;
use crate::math;
use alloc::collections::VecDeque;
use alloc::vec;
use alloc::vec::Vec;
use core::cell::RefCell;

/// Options of [`lbfgs_maximize`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsOptions {
    /// Pairs (s, y) kept, ≥ 1.
    pub memory: usize,
    /// Maximum iterations (accepted steps), ≥ 1.
    pub max_iter: usize,
    /// Absolute gradient tolerance: stop when ‖∇f‖∞ ≤ grad_tol.
    pub grad_tol: f64,
    /// Maximum calls of the objective, line searches included.
    pub max_evals: usize,
}

impl Default for LbfgsOptions {
    fn default() -> Self {
        LbfgsOptions {
            memory: 10,
            max_iter: 1000,
            grad_tol: 1e-8,
            max_evals: 20_000,
        }
    }
}

/// What [`lbfgs_maximize`] found.
#[derive(Debug, Clone, PartialEq)]
pub struct LbfgsResult {
    /// The maximiser (the last accepted iterate when not converged).
    pub x: Vec<f64>,
    /// f(x).
    pub value: f64,
    /// ∇f(x).
    pub grad: Vec<f64>,
    /// Accepted steps.
    pub iterations: usize,
    /// Calls of the objective.
    pub evals: usize,
    /// Whether ‖∇f(x)‖∞ ≤ `grad_tol`.
    pub converged: bool,
}

/// Maximise a smooth f: ℝᵈ → ℝ by L-BFGS. `f(x, grad)` returns f(x) and writes ∇f(x) into
/// `grad` (zeroed before each call, so accumulating is fine too). A non-finite value marks x as
/// infeasible: the line search backs off.
///
/// Errors: empty `x0` ([`Error::Dimension`]); non-finite `x0`, f(x0) or ∇f(x0)
/// ([`Error::NonFiniteStart`]); invalid options. Stalling or running out of iterations is not
/// an error: check [`LbfgsResult::converged`].
pub fn lbfgs_maximize<F>(mut f: F, x0: &[f64], opts: &LbfgsOptions) -> Result<LbfgsResult, Error>
where
    F: FnMut(&[f64], &mut [f64]) -> f64,
{
    if opts.memory == 0 {
        return Err(Error::setting("memory", "must be at least 1"));
    }
    if opts.max_iter == 0 {
        return Err(Error::setting("max_iter", "must be at least 1"));
    }
    if !(opts.grad_tol >= 0.0 && opts.grad_tol.is_finite()) {
        return Err(Error::setting(
            "grad_tol",
            "must be finite and non-negative",
        ));
    }
    let d = x0.len();
    if d == 0 {
        return Err(Error::Dimension {
            what: "x0",
            expected: 1,
            got: 0,
        });
    }
    if x0.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart);
    }
    let mut evals = 0usize;
    // h = −f and q = ∇h = −∇f throughout.
    let mut eval = |x: &[f64], q: &mut [f64], evals: &mut usize| -> f64 {
        *evals += 1;
        q.iter_mut().for_each(|v| *v = 0.0);
        let v = f(x, q);
        q.iter_mut().for_each(|v| *v = -*v);
        if v.is_nan() {
            f64::INFINITY
        } else {
            -v
        }
    };
    let mut x = x0.to_vec();
    let mut q = vec![0.0; d];
    let mut h = eval(&x, &mut q, &mut evals);
    if !h.is_finite() || q.iter().any(|v| !v.is_finite()) {
        return Err(Error::NonFiniteStart);
    }
    let mut mem = LbfgsMemory::new(opts.memory);
    let mut p = vec![0.0; d];
    let mut ls = LineSearch::new(d);
    let mut iterations = 0;
    let mut converged = norm_inf(&q) <= opts.grad_tol;
    while !converged && iterations < opts.max_iter && evals < opts.max_evals {
        two_loop(&mem, &q, &mut p);
        let mut dphi0 = dot(&q, &p);
        if mem.is_empty() || !(dphi0 < 0.0 && dphi0.is_finite()) {
            steepest(&q, &mut p);
            dphi0 = dot(&q, &p);
            mem.clear();
        }
        let budget = opts.max_evals - evals;
        let ok = ls.search(&mut eval, &x, h, &q, &p, dphi0, budget, &mut evals);
        if !ok {
            if mem.is_empty() {
                break;
            }
            // Retry once from steepest descent with a fresh memory.
            mem.clear();
            continue;
        }
        iterations += 1;
        // s = x_new − x, y = q_new − q.
        let mut s = ls.x.clone();
        let mut y = ls.q.clone();
        for k in 0..d {
            s[k] -= x[k];
            y[k] -= q[k];
        }
        let sy = dot(&s, &y);
        let yy = dot(&y, &y);
        let ss = dot(&s, &s);
        if sy > 1e-12 * math::sqrt(yy * ss) && sy.is_finite() && yy > 0.0 {
            mem.push(&s, &y, 1.0 / sy);
        }
        x.copy_from_slice(&ls.x);
        q.copy_from_slice(&ls.q);
        h = ls.h;
        converged = norm_inf(&q) <= opts.grad_tol;
    }
    Ok(LbfgsResult {
        x,
        value: -h,
        grad: q.iter().map(|v| -v).collect(),
        iterations,
        evals,
        converged,
    })
}

/// p = −q / ‖q‖₂ (a unit-length first step).
fn steepest(q: &[f64], p: &mut [f64]) {
    let n = math::sqrt(dot(q, q));
    let s = if n > 0.0 && n.is_finite() {
        1.0 / n
    } else {
        1.0
    };
    for (pk, qk) in p.iter_mut().zip(q) {
        *pk = -s * qk;
    }
}

/// p = −H q by the two-loop recursion with H⁰ = γI, γ = sᵀy/yᵀy of the newest pair
/// (p = −q when the memory is empty).
fn two_loop(mem: &LbfgsMemory, q: &[f64], p: &mut [f64]) {
    let gamma = match mem.newest() {
        Some((s, y)) => dot(s, y) / dot(y, y),
        None => 1.0,
    };
    mem.apply(gamma, q, p);
    p.iter_mut().for_each(|v| *v = -*v);
}

/// The curvature pairs of L-BFGS — the newest m pairs (s, y) with ρ = 1/(yᵀs), oldest first —
/// and the two-loop recursion that applies the inverse-Hessian estimate H they define with
/// H⁰ = γI (Nocedal & Wright Alg. 7.4). One implementation for the optimiser and QNHMC's
/// L-BFGS storage. Pushing a pair when full reuses the oldest pair's storage, and the
/// recursion keeps its m coefficients in scratch owned by the memory: no allocation once full.
#[derive(Debug, Clone)]
pub struct LbfgsMemory {
    m: usize,
    s: VecDeque<Vec<f64>>,
    y: VecDeque<Vec<f64>>,
    rho: VecDeque<f64>,
    alpha: RefCell<Vec<f64>>,
}

impl PartialEq for LbfgsMemory {
    fn eq(&self, other: &Self) -> bool {
        self.m == other.m && self.s == other.s && self.y == other.y && self.rho == other.rho
    }
}

impl LbfgsMemory {
    /// An empty memory of at most `m` ≥ 1 pairs.
    pub fn new(m: usize) -> Self {
        LbfgsMemory {
            m,
            s: VecDeque::with_capacity(m),
            y: VecDeque::with_capacity(m),
            rho: VecDeque::with_capacity(m),
            alpha: RefCell::new(vec![0.0; m]),
        }
    }
    /// Pairs held.
    pub fn len(&self) -> usize {
        self.s.len()
    }
    /// Whether no pair is held.
    pub fn is_empty(&self) -> bool {
        self.s.is_empty()
    }
    /// Forget every pair.
    pub fn clear(&mut self) {
        self.s.clear();
        self.y.clear();
        self.rho.clear();
    }
    /// The newest pair (s, y).
    pub fn newest(&self) -> Option<(&[f64], &[f64])> {
        Some((self.s.back()?.as_slice(), self.y.back()?.as_slice()))
    }
    /// Add the pair (s, y) with ρ = `rho`, dropping the oldest when m pairs are held.
    pub fn push(&mut self, s: &[f64], y: &[f64], rho: f64) {
        let (mut sv, mut yv) = if self.s.len() == self.m {
            self.rho.pop_front();
            (
                self.s.pop_front().unwrap_or_default(),
                self.y.pop_front().unwrap_or_default(),
            )
        } else {
            (Vec::with_capacity(s.len()), Vec::with_capacity(y.len()))
        };
        sv.clear();
        sv.extend_from_slice(s);
        yv.clear();
        yv.extend_from_slice(y);
        self.s.push_back(sv);
        self.y.push_back(yv);
        self.rho.push_back(rho);
    }
    /// out = H v by the two-loop recursion with H⁰ = γI (out = γv when empty).
    pub fn apply(&self, gamma: f64, v: &[f64], out: &mut [f64]) {
        out.copy_from_slice(v);
        let k = self.s.len();
        let mut alpha = self.alpha.borrow_mut();
        if alpha.len() < k {
            alpha.resize(k, 0.0);
        }
        for i in (0..k).rev() {
            let a = self.rho[i] * dot(&self.s[i], out);
            alpha[i] = a;
            for (o, yi) in out.iter_mut().zip(&self.y[i]) {
                *o -= a * yi;
            }
        }
        for o in out.iter_mut() {
            *o *= gamma;
        }
        for i in 0..k {
            let beta = self.rho[i] * dot(&self.y[i], out);
            let c = alpha[i] - beta;
            for (o, si) in out.iter_mut().zip(&self.s[i]) {
                *o += c * si;
            }
        }
    }
}

/// Strong-Wolfe line search (Nocedal & Wright Alg. 3.5 / 3.6). The accepted point is left in
/// `x`, `q`, `h`.
struct LineSearch {
    x: Vec<f64>,
    q: Vec<f64>,
    h: f64,
}

const C1: f64 = 1e-4;
const C2: f64 = 0.9;

impl LineSearch {
    fn new(d: usize) -> Self {
        LineSearch {
            x: vec![0.0; d],
            q: vec![0.0; d],
            h: 0.0,
        }
    }

    /// φ(α) = h(x0 + αp) and φ′(α); leaves the point in self.
    fn phi<E>(
        &mut self,
        eval: &mut E,
        x0: &[f64],
        p: &[f64],
        alpha: f64,
        evals: &mut usize,
    ) -> (f64, f64)
    where
        E: FnMut(&[f64], &mut [f64], &mut usize) -> f64,
    {
        for k in 0..x0.len() {
            self.x[k] = x0[k] + alpha * p[k];
        }
        self.h = eval(&self.x, &mut self.q, evals);
        let dphi = dot(&self.q, p);
        if self.h.is_finite() && dphi.is_finite() {
            (self.h, dphi)
        } else {
            (f64::INFINITY, f64::NAN)
        }
    }

    /// Returns whether an acceptable step was found within `budget` evaluations.
    #[allow(clippy::too_many_arguments)]
    fn search<E>(
        &mut self,
        eval: &mut E,
        x0: &[f64],
        h0: f64,
        q0: &[f64],
        p: &[f64],
        dphi0: f64,
        budget: usize,
        evals: &mut usize,
    ) -> bool
    where
        E: FnMut(&[f64], &mut [f64], &mut usize) -> f64,
    {
        let max_ls = budget.min(40);
        let noise = 1024.0 * f64::EPSILON * (1.0 + math::abs(h0));
        let q0norm = norm_inf(q0);
        // In the rounding regime the value cannot tell progress; a smaller gradient can.
        let rounding_ok = |s: &Self, alpha: f64| {
            s.h.is_finite() && -alpha * dphi0 <= noise && norm_inf(&s.q) < q0norm
        };
        let mut used = 0;
        let (mut a_prev, mut phi_prev, mut dphi_prev) = (0.0, h0, dphi0);
        let mut alpha = 1.0;
        let mut first = true;
        // Bracketing phase.
        let (mut lo, mut hi);
        loop {
            if used >= max_ls {
                return false;
            }
            used += 1;
            let (phi, dphi) = self.phi(eval, x0, p, alpha, evals);
            if !phi.is_finite() || phi > h0 + C1 * alpha * dphi0 || (!first && phi >= phi_prev) {
                if rounding_ok(self, alpha) {
                    return true;
                }
                lo = (a_prev, phi_prev, dphi_prev);
                hi = (alpha, phi, dphi);
                break;
            }
            if math::abs(dphi) <= -C2 * dphi0 {
                return true;
            }
            if dphi >= 0.0 {
                lo = (alpha, phi, dphi);
                hi = (a_prev, phi_prev, dphi_prev);
                break;
            }
            a_prev = alpha;
            phi_prev = phi;
            dphi_prev = dphi;
            alpha *= 2.0;
            first = false;
        }
        // Zoom phase: lo satisfies sufficient decrease with the lowest φ so far.
        while used < max_ls {
            used += 1;
            let (al, pl, dl) = lo;
            let (ah, ph, _) = hi;
            let width = ah - al;
            // Quadratic through φ(lo), φ′(lo), φ(hi), safeguarded to the inner 80 %.
            let mut a = if ph.is_finite() {
                let denom = 2.0 * (ph - pl - dl * width);
                if denom > 0.0 {
                    al - dl * width * width / denom
                } else {
                    al + 0.5 * width
                }
            } else {
                al + 0.5 * width
            };
            let (mn, mx) = if al < ah { (al, ah) } else { (ah, al) };
            let margin = 0.1 * (mx - mn);
            if !(a >= mn + margin && a <= mx - margin) {
                a = al + 0.5 * width;
            }
            if math::abs(a - al) <= f64::EPSILON * (1.0 + math::abs(al)) {
                break;
            }
            let (phi, dphi) = self.phi(eval, x0, p, a, evals);
            if !phi.is_finite() || phi > h0 + C1 * a * dphi0 || phi >= pl {
                if rounding_ok(self, a) {
                    return true;
                }
                hi = (a, phi, dphi);
            } else {
                if math::abs(dphi) <= -C2 * dphi0 {
                    return true;
                }
                if dphi * (ah - al) >= 0.0 {
                    hi = lo;
                }
                lo = (a, phi, dphi);
            }
        }
        // No strong-Wolfe point: fall back to the best point with sufficient decrease.
        if lo.0 > 0.0 && used < budget {
            let (phi, _) = self.phi(eval, x0, p, lo.0, evals);
            return phi.is_finite() && phi <= h0 + C1 * lo.0 * dphi0;
        }
        false
    }
}
