//! Random variates: normal, exponential, gamma, Poisson, alias tables.
//! All maths through [`crate::math`], so draws are bit-identical natively and in wasm.

use crate::math;
use crate::rng::{uniform, uniform_open, Rng};

/// A standard normal draw (Marsaglia's polar method; one of the pair is discarded so that a
/// draw depends only on the generator's state, which keeps streams simple to reason about).
pub fn std_normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    loop {
        let u = 2.0 * uniform(rng) - 1.0;
        let v = 2.0 * uniform(rng) - 1.0;
        let s = u * u + v * v;
        if s > 0.0 && s < 1.0 {
            return u * math::sqrt(-2.0 * math::ln(s) / s);
        }
    }
}

/// N(mean, sd²).
pub fn normal<R: Rng + ?Sized>(rng: &mut R, mean: f64, sd: f64) -> f64 {
    mean + sd * std_normal(rng)
}

/// Exponential with rate 1.
pub fn std_exponential<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    -math::ln(uniform_open(rng))
}

/// Bernoulli(p): true with probability p (p outside [0, 1] is clamped).
pub fn bernoulli<R: Rng + ?Sized>(rng: &mut R, p: f64) -> bool {
    uniform(rng) < p
}

/// Gamma(shape, scale) (Marsaglia & Tsang 2000; shape < 1 by the boost
/// G(a) = G(a + 1)·U^{1/a}). Returns NaN for non-positive or non-finite arguments.
pub fn gamma<R: Rng + ?Sized>(rng: &mut R, shape: f64, scale: f64) -> f64 {
    if !(shape > 0.0 && shape.is_finite() && scale > 0.0 && scale.is_finite()) {
        return f64::NAN;
    }
    if shape < 1.0 {
        let g = gamma(rng, shape + 1.0, 1.0);
        return scale * g * math::pow(uniform_open(rng), 1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / math::sqrt(9.0 * d);
    loop {
        let x = std_normal(rng);
        let v = 1.0 + c * x;
        if v <= 0.0 {
            continue;
        }
        let v = v * v * v;
        let u = uniform_open(rng);
        if u < 1.0 - 0.0331 * x * x * x * x
            || math::ln(u) < 0.5 * x * x + d * (1.0 - v + math::ln(v))
        {
            return scale * d * v;
        }
    }
}

/// Poisson(mean). Inversion by sequential search for mean < 10; for larger means the
/// transformed rejection method PTRS of Hörmann (1993), O(1) expected time for means up to
/// 1e7 and beyond. Returns 0 for a non-positive or non-finite mean.
///
/// ## References
/// W. Hörmann (1993), *The transformed rejection method for generating Poisson random
/// variables*, Insurance: Mathematics and Economics 12(1).
pub fn poisson<R: Rng + ?Sized>(rng: &mut R, mean: f64) -> u64 {
    if !(mean > 0.0 && mean.is_finite()) {
        return 0;
    }
    if mean < 10.0 {
        // Inversion: walk the CDF from 0.
        let mut p = math::exp(-mean);
        let mut f = p;
        let u = uniform(rng);
        let mut k = 0u64;
        while u > f && k < 1000 {
            k += 1;
            p *= mean / k as f64;
            f += p;
        }
        return k;
    }
    let smu = math::sqrt(mean);
    let b = 0.931 + 2.53 * smu;
    let a = -0.059 + 0.02483 * b;
    let inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
    let vr = 0.9277 - 3.6224 / (b - 2.0);
    let log_mean = math::ln(mean);
    loop {
        let u = uniform(rng) - 0.5;
        let v = uniform_open(rng);
        let us = 0.5 - math::abs(u);
        let k = math::floor((2.0 * a / us + b) * u + mean + 0.43);
        if us >= 0.07 && v <= vr {
            return k as u64;
        }
        if k < 0.0 || (us < 0.013 && v > us) {
            continue;
        }
        let lhs = math::ln(v) + math::ln(inv_alpha) - math::ln(a / (us * us) + b);
        let rhs = -mean + k * log_mean - math::ln_gamma(k + 1.0);
        if lhs <= rhs {
            return k as u64;
        }
    }
}
