//! A synthetic stand-in for MNIST "1 vs 7" (spec 002 §5, T5): 28×28 images of one stroke ("1")
//! or a bar and a diagonal ("7"), for the logistic-regression experiment of Seita et al. (2017)
//! where MNIST itself cannot be downloaded.
//!
//! # Formula
//! Pixel centres (r + ½, c + ½); stroke width w ~ U(1, 2.5); intensity
//! v = clamp(1 − max(0, dist_to_strokes − w/2), 0, 1), plus N(0, 0.05²) on inked pixels,
//! clamped, values < 0.05 set to 0. "1": a segment (r₀, c − s(14 − r₀)) → (r₁, c + s(r₁ − 14)),
//! c ~ U(11, 17), r₀ ~ U(3, 7), r₁ ~ U(21, 25), s ~ U(−¼, ¼). "7": (r₀, c₀) → (r₀ + τ, c₁) →
//! (r₂, c₂), r₀ ~ U(4, 8), c₀ ~ U(5, 10), c₁ ~ U(18, 23), τ ~ U(−1, 1), r₂ ~ U(21, 25),
//! c₂ ~ U(9, 15). Classes 50/50; label 1 for "1", 0 for "7"; 784 features, no intercept.

use crate::data::Design;
use crate::dist::std_normal;
use crate::math;
use crate::rng::{chain_rng, uniform, ChainRng};
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

/// Image side (28) and number of pixels (784).
pub const SIDE: usize = 28;
/// Number of pixels, the feature count.
pub const PIXELS: usize = SIDE * SIDE;

fn u(rng: &mut ChainRng, a: f64, b: f64) -> f64 {
    a + (b - a) * uniform(rng)
}

type Pt = (f64, f64);

fn seg_dist(p: Pt, a: Pt, b: Pt) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (qx, qy) = (a.0 + t * dx, a.1 + t * dy);
    math::sqrt((p.0 - qx) * (p.0 - qx) + (p.1 - qy) * (p.1 - qy))
}

/// One image (784 pixels in row-major order) of a "1" (`one`) or a "7".
pub fn digit(rng: &mut ChainRng, one: bool) -> Vec<f64> {
    let w = u(rng, 1.0, 2.5);
    let segs: Vec<(Pt, Pt)> = if one {
        let c = u(rng, 11.0, 17.0);
        let r0 = u(rng, 3.0, 7.0);
        let r1 = u(rng, 21.0, 25.0);
        let s = u(rng, -0.25, 0.25);
        vec![((r0, c - s * (14.0 - r0)), (r1, c + s * (r1 - 14.0)))]
    } else {
        let r0 = u(rng, 4.0, 8.0);
        let c0 = u(rng, 5.0, 10.0);
        let c1 = u(rng, 18.0, 23.0);
        let tau = u(rng, -1.0, 1.0);
        let r2 = u(rng, 21.0, 25.0);
        let c2 = u(rng, 9.0, 15.0);
        vec![((r0, c0), (r0 + tau, c1)), ((r0 + tau, c1), (r2, c2))]
    };
    let mut img = vec![0.0; PIXELS];
    for r in 0..SIDE {
        for c in 0..SIDE {
            let p = (r as f64 + 0.5, c as f64 + 0.5);
            let d = segs
                .iter()
                .map(|&(a, b)| seg_dist(p, a, b))
                .fold(f64::INFINITY, f64::min);
            let mut v = (1.0 - (d - w / 2.0).max(0.0)).clamp(0.0, 1.0);
            if v > 0.0 {
                v = (v + 0.05 * std_normal(rng)).clamp(0.0, 1.0);
            }
            if let Some(px) = img.get_mut(r * SIDE + c) {
                *px = if v < 0.05 { 0.0 } else { v };
            }
        }
    }
    img
}

/// `n` labelled images from the stream (`seed`, `stream`): label 1.0 for "1", 0.0 for "7".
pub fn one_vs_seven(n: usize, seed: u64, stream: u64) -> Design {
    let mut rng = chain_rng(seed, stream);
    let mut x = Vec::with_capacity(n * PIXELS);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let one = uniform(&mut rng) < 0.5;
        x.extend(digit(&mut rng, one));
        y.push(if one { 1.0 } else { 0.0 });
    }
    Design {
        n,
        d: PIXELS,
        x,
        y,
        names: (0..PIXELS).map(|j| format!("p{j}")).collect(),
    }
}

/// Fraction of `test` rows classified correctly by sign(xᵀθ) (label 1 ⇔ xᵀθ > 0).
pub fn accuracy(theta: &[f64], test: &Design) -> f64 {
    if test.n == 0 {
        return f64::NAN;
    }
    let ok = (0..test.n)
        .filter(|&i| {
            let eta: f64 = test.row(i).iter().zip(theta).map(|(a, b)| a * b).sum();
            (eta > 0.0) == (test.y.get(i).copied() == Some(1.0))
        })
        .count();
    ok as f64 / test.n as f64
}
