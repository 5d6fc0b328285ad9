//! Scalar maths. The only module that calls `libm`, so results are identical natively and in wasm.
//!
//! Stable compositions: log-sum-exp, softplus = log(1 + eˣ), log-sigmoid, logistic.

/// Natural exponential.
#[inline]
pub fn exp(x: f64) -> f64 {
    libm::exp(x)
}
/// Natural logarithm.
#[inline]
pub fn ln(x: f64) -> f64 {
    libm::log(x)
}
/// log(1 + x), accurate for small x.
#[inline]
pub fn ln_1p(x: f64) -> f64 {
    libm::log1p(x)
}
/// eˣ − 1, accurate for small x.
#[inline]
pub fn exp_m1(x: f64) -> f64 {
    libm::expm1(x)
}
/// Square root.
#[inline]
pub fn sqrt(x: f64) -> f64 {
    libm::sqrt(x)
}
/// Power xʸ.
#[inline]
pub fn pow(x: f64, y: f64) -> f64 {
    libm::pow(x, y)
}
/// Sine.
#[inline]
pub fn sin(x: f64) -> f64 {
    libm::sin(x)
}
/// Cosine.
#[inline]
pub fn cos(x: f64) -> f64 {
    libm::cos(x)
}
/// Hyperbolic tangent.
#[inline]
pub fn tanh(x: f64) -> f64 {
    libm::tanh(x)
}
/// Absolute value (no libm needed, here for one import site).
#[inline]
pub fn abs(x: f64) -> f64 {
    libm::fabs(x)
}
/// Floor.
#[inline]
pub fn floor(x: f64) -> f64 {
    libm::floor(x)
}
/// Ceiling.
#[inline]
pub fn ceil(x: f64) -> f64 {
    libm::ceil(x)
}
/// Round half away from zero.
#[inline]
pub fn round(x: f64) -> f64 {
    libm::round(x)
}
/// log Γ(x) for x > 0.
#[inline]
pub fn ln_gamma(x: f64) -> f64 {
    libm::lgamma_r(x).0
}
/// Error function.
#[inline]
pub fn erf(x: f64) -> f64 {
    libm::erf(x)
}
/// Complementary error function.
#[inline]
pub fn erfc(x: f64) -> f64 {
    libm::erfc(x)
}
/// atan2(y, x).
#[inline]
pub fn atan2(y: f64, x: f64) -> f64 {
    libm::atan2(y, x)
}

/// ln √(2π).
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// softplus(x) = log(1 + eˣ), without overflow for large x or loss for very negative x.
#[inline]
pub fn softplus(x: f64) -> f64 {
    if x > 0.0 {
        x + ln_1p(exp(-x))
    } else {
        ln_1p(exp(x))
    }
}

/// Alias of [`softplus`]: log(1 + eˣ).
#[inline]
pub fn log1p_exp(x: f64) -> f64 {
    softplus(x)
}

/// log σ(x) = −softplus(−x), with σ the logistic function.
#[inline]
pub fn log_sigmoid(x: f64) -> f64 {
    -softplus(-x)
}

/// The logistic function σ(x) = 1 / (1 + e⁻ˣ), stable for both signs.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + exp(-x))
    } else {
        let e = exp(x);
        e / (1.0 + e)
    }
}

/// log Σ exp(xᵢ), −∞ for an empty slice; NaN propagates.
pub fn log_sum_exp(xs: &[f64]) -> f64 {
    let mut m = f64::NEG_INFINITY;
    for &x in xs {
        if x.is_nan() {
            return f64::NAN;
        }
        if x > m {
            m = x;
        }
    }
    if m.is_infinite() {
        return m;
    }
    let mut s = 0.0;
    for &x in xs {
        s += exp(x - m);
    }
    m + ln(s)
}

/// log(eᵃ + eᵇ).
#[inline]
pub fn log_add_exp(a: f64, b: f64) -> f64 {
    let m = if a > b { a } else { b };
    if m == f64::NEG_INFINITY {
        return m;
    }
    m + ln(exp(a - m) + exp(b - m))
}

/// Standard normal cdf Φ(x).
#[inline]
pub fn norm_cdf(x: f64) -> f64 {
    0.5 * erfc(-x * core::f64::consts::FRAC_1_SQRT_2)
}

/// Standard normal log-density.
#[inline]
pub fn norm_ln_pdf(x: f64) -> f64 {
    -0.5 * x * x - LN_SQRT_2PI
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn softplus_is_stable() {
        assert_eq!(softplus(1000.0), 1000.0);
        assert!((softplus(-1000.0)).abs() < 1e-300);
        assert!((softplus(0.0) - core::f64::consts::LN_2).abs() < 1e-15);
        assert!((softplus(-40.0) - exp(-40.0)).abs() < 1e-30);
    }

    #[test]
    fn log_sum_exp_handles_extremes() {
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
        assert!(
            (log_sum_exp(&[1000.0, 1000.0]) - (1000.0 + core::f64::consts::LN_2)).abs() < 1e-12
        );
        assert!(log_sum_exp(&[1.0, f64::NAN]).is_nan());
        assert_eq!(
            log_sum_exp(&[f64::NEG_INFINITY, f64::NEG_INFINITY]),
            f64::NEG_INFINITY
        );
    }

    #[test]
    fn sigmoid_symmetric() {
        for &x in &[-30.0, -1.0, 0.0, 2.5, 40.0] {
            assert!((sigmoid(x) + sigmoid(-x) - 1.0).abs() < 1e-15);
            assert!((log_sigmoid(x) - ln(sigmoid(x))).abs() < 1e-12);
        }
    }
}
