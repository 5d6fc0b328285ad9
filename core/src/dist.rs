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
