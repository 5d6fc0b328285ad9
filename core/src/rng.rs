//! Random streams: one independent xoshiro256++ stream per (seed, chain).
//!
//! # Formula
//! stream(seed, c) = xoshiro256++ seeded by SplitMix64(seed), advanced by `jump()` c times,
//! so streams are 2¹²⁸ draws apart and never overlap.

pub use rand_core::{Rng, SeedableRng};
pub use rand_xoshiro::Xoshiro256PlusPlus;

/// The generator every chain uses.
pub type ChainRng = Xoshiro256PlusPlus;

/// The stream of chain `chain` (0-based) for `seed`. Same inputs, same draws, on every platform.
pub fn chain_rng(seed: u64, chain: u64) -> ChainRng {
    let mut r = Xoshiro256PlusPlus::seed_from_u64(seed);
    for _ in 0..chain {
        r.jump();
    }
    r
}

/// A uniform draw in [0, 1) with 53 random bits.
#[inline]
pub fn uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / 9_007_199_254_740_992.0)
}

/// A uniform draw in (0, 1): never exactly 0, safe for `ln`.
#[inline]
pub fn uniform_open<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) as f64 + 0.5) * (1.0 / 9_007_199_254_740_992.0)
}

/// A uniform integer in `0..n` without modulo bias (Lemire's nearly-divisionless method).
/// `n == 0` returns 0.
#[inline]
pub fn uniform_index<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    let n = n as u64;
    let mut m = (rng.next_u64() as u128) * (n as u128);
    let mut lo = m as u64;
    if lo < n {
        let t = n.wrapping_neg() % n;
        while lo < t {
            m = (rng.next_u64() as u128) * (n as u128);
            lo = m as u64;
        }
    }
    (m >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        let mut a = chain_rng(7, 0);
        let mut b = chain_rng(7, 1);
        let mut a2 = chain_rng(7, 0);
        let xa = a.next_u64();
        assert_eq!(xa, a2.next_u64());
        assert_ne!(xa, b.next_u64());
    }

    #[test]
    fn uniform_index_in_range_and_unbiased() {
        let mut r = chain_rng(1, 0);
        let n = 3usize;
        let mut counts = [0usize; 3];
        for _ in 0..30000 {
            let k = uniform_index(&mut r, n);
            counts[k] += 1;
        }
        for c in counts {
            // sd of a count is sqrt(30000*1/3*2/3) ≈ 81.6; allow 5 sd
            assert!((c as f64 - 10000.0).abs() < 5.0 * 81.65, "{counts:?}");
        }
    }
}
