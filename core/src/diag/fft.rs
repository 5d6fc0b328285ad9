//! Radix-2 complex FFT and the FFT autocovariance used by the diagnostics.

use alloc::vec;
use alloc::vec::Vec;

use crate::math;

/// In-place iterative radix-2 FFT of (`re`, `im`), both of the same power-of-two length.
/// `inverse` flips the sign of the exponent; no 1/n scaling is applied.
///
/// # Formula
/// X_k = Σ_j x_j e^{∓2πi jk/n}.
pub(crate) fn fft_in_place(re: &mut [f64], im: &mut [f64], inverse: bool) {
    let n = re.len();
    if n < 2 || im.len() != n || !n.is_power_of_two() {
        return;
    }
    // Bit-reversal permutation.
    let bits = n.trailing_zeros();
    for i in 0..n {
        let j = i.reverse_bits() >> (usize::BITS - bits);
        if j > i {
            re.swap(i, j);
            im.swap(i, j);
        }
    }
    // Twiddles e^{−2πi k/n}, k < n/2, computed directly (not by recurrence) for accuracy.
    let half = n / 2;
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut tw_re = Vec::with_capacity(half);
    let mut tw_im = Vec::with_capacity(half);
    for k in 0..half {
        let ang = 2.0 * core::f64::consts::PI * (k as f64) / (n as f64);
        tw_re.push(math::cos(ang));
        tw_im.push(sign * math::sin(ang));
    }
    let mut len = 2;
    while len <= n {
        let step = n / len;
        let h = len / 2;
        let mut start = 0;
        while start < n {
            for k in 0..h {
                let (wr, wi) = (tw_re[k * step], tw_im[k * step]);
                let a = start + k;
                let b = a + h;
                let xr = re[b] * wr - im[b] * wi;
                let xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr;
                im[b] = im[a] - xi;
                re[a] += xr;
                im[a] += xi;
            }
            start += len;
        }
        len *= 2;
    }
}

/// Autocovariance of `x` at lags 0..n−1 with divisor n (ArviZ `autocov`): the series is
/// centred, zero-padded to a power of two ≥ 2n, transformed, squared in modulus and
/// transformed back. O(n log n).
///
/// # Formula
/// γ̂_k = (1/n) Σ_{t=0}^{n−1−k} (x_t − x̄)(x_{t+k} − x̄).
pub(crate) fn autocovariance(x: &[f64]) -> Vec<f64> {
    let n = x.len();
    if n == 0 {
        return Vec::new();
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let m = (2 * n).next_power_of_two();
    let mut re = vec![0.0; m];
    let mut im = vec![0.0; m];
    for (r, &v) in re.iter_mut().zip(x) {
        *r = v - mean;
    }
    fft_in_place(&mut re, &mut im, false);
    for k in 0..m {
        re[k] = re[k] * re[k] + im[k] * im[k];
        im[k] = 0.0;
    }
    fft_in_place(&mut re, &mut im, true);
    let scale = 1.0 / (m as f64 * n as f64);
    re.truncate(n);
    for v in re.iter_mut() {
        *v *= scale;
    }
    re
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn autocovariance_matches_direct_sum() {
        let x: Vec<f64> = (0..37)
            .map(|i| math::sin(i as f64 * 0.7) + 0.1 * i as f64)
            .collect();
        let n = x.len();
        let mean = x.iter().sum::<f64>() / n as f64;
        let g = autocovariance(&x);
        for k in 0..n {
            let mut s = 0.0;
            for t in 0..n - k {
                s += (x[t] - mean) * (x[t + k] - mean);
            }
            s /= n as f64;
            assert!((g[k] - s).abs() < 1e-13 * g[0], "lag {k}: {} vs {s}", g[k]);
        }
    }

    #[test]
    fn fft_roundtrip() {
        let mut re: Vec<f64> = (0..16).map(|i| (i * i % 7) as f64).collect();
        let orig = re.clone();
        let mut im = vec![0.0; 16];
        fft_in_place(&mut re, &mut im, false);
        fft_in_place(&mut re, &mut im, true);
        for k in 0..16 {
            assert!((re[k] / 16.0 - orig[k]).abs() < 1e-13);
            assert!(im[k].abs() < 1e-13);
        }
    }
}
