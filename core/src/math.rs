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

/// eˣ without branches or table look-ups, so that loops over data vectorise (musl's algorithm,
/// as in `libm::exp`, with the reduction k = round-half-even(x/ln 2) by the 1.5·2⁵² shift and
/// the scaling 2ᵏ built in the exponent bits).
///
/// # Formula
/// x = k ln2 + r, |r| ≤ ln2/2; c = r − r²(P₁ + r²(P₂ + … + r²P₅));
/// eʳ = 1 + r c/(2 − c) (Remez rational form, error < 1 ulp); eˣ = 2ᵏ eʳ.
/// Range: x ≤ −708.3 gives 0 (eˣ < 2.2·10⁻³⁰⁸ would be subnormal), x > 709 gives +∞ (e^709
/// ≈ 8.2·10³⁰⁷), NaN gives NaN. Measured against `libm::exp` on 2·10⁶ points of [−708, 709]:
/// at most 1 ulp apart (test `fast_exp_matches_libm`).
#[inline(always)]
#[allow(clippy::excessive_precision)] // the constants of FreeBSD's e_exp.c, as published
pub fn fast_exp(x: f64) -> f64 {
    const INVLN2: f64 = core::f64::consts::LOG2_E;
    const LN2HI: f64 = 6.931_471_803_691_238_164_90e-1;
    const LN2LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const SHIFT: f64 = 6_755_399_441_055_744.0; // 1.5 · 2⁵²
    const P1: f64 = 1.666_666_666_666_660_190_37e-1;
    const P2: f64 = -2.777_777_777_701_559_338_42e-3;
    const P3: f64 = 6.613_756_321_437_934_361_17e-5;
    const P4: f64 = -1.653_390_220_546_525_153_90e-6;
    const P5: f64 = 4.138_136_797_057_238_460_39e-8;
    let xc = if x > -708.3 { x } else { -708.3 };
    let xc = if xc < 709.0 { xc } else { 709.0 };
    let t = xc * INVLN2 + SHIFT;
    let kf = t - SHIFT;
    let hi = xc - kf * LN2HI;
    let lo = kf * LN2LO;
    let r = hi - lo;
    let rr = r * r;
    let c = r - rr * (P1 + rr * (P2 + rr * (P3 + rr * (P4 + rr * P5))));
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    // t's low mantissa bits hold k (two's complement, |k| ≤ 1023): 2ᵏ in the exponent field
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    let v = y * scale;
    let v = if x > -708.3 { v } else { 0.0 };
    let v = if x > 709.0 { f64::INFINITY } else { v };
    if x.is_nan() {
        x
    } else {
        v
    }
}

// ln 2 split in two (high part exact in 32 bits) and the degree-7 Remez coefficients of
// FreeBSD's e_log.c / s_log1p.c, shared by `fast_ln_1p_unit` and `fast_ln` (digits as printed
// there, hence the lint's allowance).
#[allow(clippy::excessive_precision)]
mod ln_consts {
    pub(super) const LN2HI: f64 = 6.931_471_803_691_238_164_90e-1;
    pub(super) const LN2LO: f64 = 1.908_214_929_270_587_700_02e-10;
    pub(super) const LG1: f64 = 6.666_666_666_666_735_130e-1;
    pub(super) const LG2: f64 = 3.999_999_999_940_941_908e-1;
    pub(super) const LG3: f64 = 2.857_142_874_366_239_149e-1;
    pub(super) const LG4: f64 = 2.222_219_843_214_978_396e-1;
    pub(super) const LG5: f64 = 1.818_357_216_161_805_012e-1;
    pub(super) const LG6: f64 = 1.531_383_769_920_937_332e-1;
    pub(super) const LG7: f64 = 1.479_819_860_511_658_591e-1;
}
use ln_consts::*;

/// log(1 + x) for x in [0, 1] without branches (musl's log1p kernel, as in `libm::log1p`,
/// with the two argument reductions as selects), so that loops over data vectorise. Used by
/// the logistic likelihood, where x = e^(−|η|). Outside [0, 1] use [`ln_1p`].
///
/// # Formula
/// For x < √2 − 1: f = x, k = 0, c = 0; else u = 1 + x, f = u/2 − 1, k = 1 and the rounding
/// correction c = (x − (u − 1))/u. With s = f/(2 + f), z = s²:
/// log(1 + x) = k ln2 + f − f²/2 + s(f²/2 + R(z)) + c, R the degree-7 Remez polynomial.
/// Measured against `libm::log1p` on 10⁶ points of [0, 1]: at most 1 ulp apart (test
/// `fast_ln_1p_unit_matches_libm`).
#[inline(always)]
#[allow(clippy::excessive_precision)] // the constants of FreeBSD's s_log1p.c, as published
pub fn fast_ln_1p_unit(x: f64) -> f64 {
    const SQRT2M1: f64 = 4.142_135_623_730_950_488e-1;
    let big = x >= SQRT2M1;
    let u = 1.0 + x;
    let c = if big { (x - (u - 1.0)) / u } else { 0.0 };
    let f = if big { 0.5 * u - 1.0 } else { x };
    let dk = if big { 1.0 } else { 0.0 };
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    s * (hfsq + r) + (dk * LN2LO + c) - hfsq + f + dk * LN2HI
}

/// ln x without branches or table look-ups, so that loops over particles vectorise (musl's
/// algorithm, as in `libm::log`, with the subnormal scaling and the special cases as selects).
///
/// # Formula
/// x = 2ᵏ(1 + f) with 1 + f in [√2/2, √2) (read from the bits; a subnormal x is first scaled
/// by 2⁵⁴); with s = f/(2 + f), z = s²: ln x = k ln2 + f − f²/2 + s(f²/2 + R(z)), R the
/// degree-7 Remez polynomial of [`fast_ln_1p_unit`]. ln 0 = −∞, ln x = NaN for x < 0 or NaN,
/// ln ∞ = ∞. Measured against `libm::log` on 2·10⁶ points from 10⁻³⁰⁸ to 10³⁰⁸ and on
/// subnormals: at most 1 ulp apart (test `fast_ln_matches_libm`).
#[inline(always)]
#[allow(clippy::excessive_precision)] // the constants of FreeBSD's e_log.c, as published
pub fn fast_ln(x: f64) -> f64 {
    const TWO54: f64 = 18_014_398_509_481_984.0;
    // 2⁵² + 1023: the biased exponent read as a double through the 2⁵² shift
    const SHIFT: f64 = 4_503_599_627_371_519.0;
    let sub = x < f64::MIN_POSITIVE;
    let xs = if sub { x * TWO54 } else { x };
    let ix = xs.to_bits();
    // move 1 + f into [√2/2, √2): add the offset 0x3ff00000 − 0x3fe6a09e to the high word
    let hx = (ix >> 32).wrapping_add(0x3ff0_0000 - 0x3fe6_a09e) & 0xffff_ffff;
    let kb = hx >> 20;
    let hm = (hx & 0x000f_ffff) + 0x3fe6_a09e;
    let m = f64::from_bits((hm << 32) | (ix & 0xffff_ffff));
    let dk = f64::from_bits(0x4330_0000_0000_0000 | kb) - SHIFT - if sub { 54.0 } else { 0.0 };
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let v = s * (hfsq + r) + dk * LN2LO - hfsq + f + dk * LN2HI;
    let v = if x == f64::INFINITY { x } else { v };
    let v = if x == 0.0 { f64::NEG_INFINITY } else { v };
    if x >= 0.0 {
        v
    } else {
        f64::NAN
    }
}

/// (softplus(x), σ(x)) with [`fast_exp`] and [`fast_ln_1p_unit`]: branch-free, for the
/// logistic likelihood's loops over data. Within 2 ulp of [`softplus_sigmoid`].
///
/// e^(−|x|) takes −|x| by setting the sign bit, not by `if x > 0 { −x } else { x }`: from that
/// select LLVM made a branch and copied the whole of `fast_exp` into both arms, and the loop
/// over a block of rows no longer vectorised (the cost model priced both copies). The two
/// forms give the same bits except at x = +0 (e^(−0) = e^(+0) = 1 exactly) and for the sign
/// of a NaN.
#[inline(always)]
pub fn fast_softplus_sigmoid(x: f64) -> (f64, f64) {
    let pos = x > 0.0;
    let e = fast_exp(f64::from_bits(x.to_bits() | (1 << 63)));
    let l = fast_ln_1p_unit(e);
    let sp = if pos { x + l } else { l };
    let one_e = 1.0 + e;
    let sg = if x >= 0.0 { 1.0 } else { e } / one_e;
    (sp, sg)
}

/// (softplus(x), σ(x)) from one exponential e^(−|x|): the same bits as [`softplus`] and
/// [`sigmoid`] called separately, for one `exp` instead of two.
#[inline]
pub fn softplus_sigmoid(x: f64) -> (f64, f64) {
    let e = if x > 0.0 { exp(-x) } else { exp(x) };
    let sp = if x > 0.0 { x + ln_1p(e) } else { ln_1p(e) };
    let sg = if x >= 0.0 {
        1.0 / (1.0 + e)
    } else {
        e / (1.0 + e)
    };
    (sp, sg)
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

/// Base-10 logarithm.
#[inline]
pub fn log10(x: f64) -> f64 {
    libm::log10(x)
}

/// Standard normal quantile Φ⁻¹(p) (Wichura 1988, algorithm AS 241 `PPND16`, relative error
/// about 1e-16). Φ⁻¹(0) = −∞, Φ⁻¹(1) = +∞, NaN outside [0, 1] or for NaN.
///
/// # Formula
/// q = p − ½. For |q| ≤ 0.425: Φ⁻¹(p) = q·A(r)/B(r) with r = 0.180625 − q². Otherwise
/// r = √(−ln min(p, 1 − p)) and Φ⁻¹(p) = ±C(r − 1.6)/D(r − 1.6) for r ≤ 5, ±E(r − 5)/F(r − 5)
/// beyond, with degree-7 polynomials A…F from the paper.
// The coefficients are quoted with the paper's digits.
#[allow(clippy::excessive_precision)]
pub fn norm_quantile(p: f64) -> f64 {
    const A: [f64; 8] = [
        3.387_132_872_796_366_608,
        1.331_416_678_917_843_774_5e2,
        1.971_590_950_306_551_442_7e3,
        1.373_169_376_550_946_112_5e4,
        4.592_195_393_154_987_145_7e4,
        6.726_577_092_700_870_085_3e4,
        3.343_057_558_358_812_810_5e4,
        2.509_080_928_730_122_672_7e3,
    ];
    const B: [f64; 8] = [
        1.0,
        4.231_333_070_160_091_125_2e1,
        6.871_870_074_920_579_083e2,
        5.394_196_021_424_751_107_7e3,
        2.121_379_430_158_659_586_7e4,
        3.930_789_580_009_271_061e4,
        2.872_908_573_572_194_267_4e4,
        5.226_495_278_852_854_561e3,
    ];
    const C: [f64; 8] = [
        1.423_437_110_749_683_577_34,
        4.630_337_846_156_545_295_9,
        5.769_497_221_460_691_405_5,
        3.647_848_324_763_204_605_04,
        1.270_458_252_452_368_382_58,
        2.417_807_251_774_506_117_7e-1,
        2.272_384_498_926_918_458_33e-2,
        7.745_450_142_783_414_076_4e-4,
    ];
    const D: [f64; 8] = [
        1.0,
        2.053_191_626_637_758_821_87,
        1.676_384_830_183_803_849_4,
        6.897_673_349_851_000_045_5e-1,
        1.481_039_764_274_800_745_9e-1,
        1.519_866_656_361_645_719_66e-2,
        5.475_938_084_995_344_946e-4,
        1.050_750_071_644_416_843_24e-9,
    ];
    const E: [f64; 8] = [
        6.657_904_643_501_103_777_2,
        5.463_784_911_164_114_369_9,
        1.784_826_539_917_291_335_8,
        2.965_605_718_285_048_912_3e-1,
        2.653_218_952_657_612_309_3e-2,
        1.242_660_947_388_078_438_6e-3,
        2.711_555_568_743_487_578_15e-5,
        2.010_334_399_292_288_132_65e-7,
    ];
    const F: [f64; 8] = [
        1.0,
        5.998_322_065_558_879_376_9e-1,
        1.369_298_809_227_358_053_1e-1,
        1.487_536_129_085_061_485_25e-2,
        7.868_691_311_456_132_591e-4,
        1.846_318_317_510_054_681_8e-5,
        1.421_511_758_316_445_888_7e-7,
        2.044_263_103_389_939_785_64e-15,
    ];
    fn poly(c: &[f64; 8], x: f64) -> f64 {
        let mut acc = c[7];
        for k in (0..7).rev() {
            acc = acc * x + c[k];
        }
        acc
    }
    if p.is_nan() || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let q = p - 0.5;
    if abs(q) <= 0.425 {
        let r = 0.180625 - q * q;
        return q * poly(&A, r) / poly(&B, r);
    }
    let r = if q < 0.0 { p } else { 1.0 - p };
    let r = sqrt(-ln(r));
    let val = if r <= 5.0 {
        let r = r - 1.6;
        poly(&C, r) / poly(&D, r)
    } else {
        let r = r - 5.0;
        poly(&E, r) / poly(&F, r)
    };
    if q < 0.0 {
        -val
    } else {
        val
    }
}

/// log B(a, b) = ln Γ(a) + ln Γ(b) − ln Γ(a + b), for a, b > 0.
#[inline]
pub fn ln_beta(a: f64, b: f64) -> f64 {
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// One step of the modified Lentz method for a continued-fraction coefficient `aa`:
/// d ← 1/(1 + aa·d), c ← 1 + aa/c, each kept away from 0 by 10⁻³⁰⁰ before use.
#[inline]
fn lentz_step(aa: f64, c: f64, d: f64) -> (f64, f64) {
    const TINY: f64 = 1e-300;
    let mut d = 1.0 + aa * d;
    if abs(d) < TINY {
        d = TINY;
    }
    let mut c = 1.0 + aa / c;
    if abs(c) < TINY {
        c = TINY;
    }
    (c, 1.0 / d)
}

/// Continued fraction of the incomplete beta function (modified Lentz), used by [`beta_inc`].
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let qab = a + b;
    let qap = a + 1.0;
    let qam = a - 1.0;
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if abs(d) < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..100_000 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        (c, d) = lentz_step(aa, c, d);
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        (c, d) = lentz_step(aa, c, d);
        let del = d * c;
        h *= del;
        if abs(del - 1.0) < 1e-16 {
            break;
        }
    }
    h
}

/// Regularised incomplete beta function I_x(a, b) = B(x; a, b)/B(a, b), the Beta(a, b) cdf.
/// NaN unless a, b > 0; 0 for x ≤ 0 and 1 for x ≥ 1.
///
/// # Formula
/// I_x(a, b) = xᵃ(1 − x)ᵇ / (a B(a, b)) · CF(a, b, x) for x < (a + 1)/(a + b + 2), with CF the
/// standard continued fraction; otherwise 1 − I_{1−x}(b, a).
pub fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if a.is_nan() || b.is_nan() || x.is_nan() || a <= 0.0 || b <= 0.0 {
        return f64::NAN;
    }
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = exp(a * ln(x) + b * ln_1p(-x) - ln_beta(a, b));
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Beta(a, b) quantile: the x ∈ [0, 1] with I_x(a, b) = p (safeguarded Newton iteration on
/// [`beta_inc`], relative accuracy about 1e-13). NaN unless a, b > 0 and p ∈ [0, 1].
pub fn beta_quantile(p: f64, a: f64, b: f64) -> f64 {
    if p.is_nan() || a.is_nan() || b.is_nan() || a <= 0.0 || b <= 0.0 || !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return 0.0;
    }
    if p == 1.0 {
        return 1.0;
    }
    let lb = ln_beta(a, b);
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    // Start from the normal approximation, kept inside (0, 1).
    let s = a + b;
    let mean = a / s;
    let sd = sqrt(a * b / (s * s * (s + 1.0)));
    let mut x = mean + norm_quantile(p) * sd;
    if !(x > 0.0 && x < 1.0) {
        x = mean;
    }
    for _ in 0..1000 {
        let f = beta_inc(a, b, x) - p;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let ln_pdf = (a - 1.0) * ln(x) + (b - 1.0) * ln_1p(-x) - lb;
        let mut next = x - f / exp(ln_pdf);
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if abs(next - x) <= 1e-15 * x || hi - lo <= 1e-16 * hi {
            return next;
        }
        x = next;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    #[test]
    fn fast_exp_matches_libm() {
        let mut worst = 0;
        let k = 2_000_000;
        for i in 0..=k {
            let x = -708.0 + 1417.0 * i as f64 / k as f64;
            worst = worst.max(ulps(fast_exp(x), libm::exp(x)));
        }
        for x in [
            0.0, -0.0, 1e-300, -1e-300, 1e-20, 0.5, -0.5, 1.0, 709.0, -708.0,
        ] {
            worst = worst.max(ulps(fast_exp(x), libm::exp(x)));
        }
        assert!(worst <= 1, "worst {worst} ulp");
        assert_eq!(fast_exp(-800.0), 0.0);
        assert_eq!(fast_exp(710.0), f64::INFINITY);
        assert!(fast_exp(f64::NAN).is_nan());
        assert_eq!(fast_exp(f64::NEG_INFINITY), 0.0);
    }

    #[test]
    fn fast_ln_1p_unit_matches_libm() {
        let mut worst = 0;
        let k = 1_000_000;
        for i in 0..=k {
            let x = i as f64 / k as f64;
            worst = worst.max(ulps(fast_ln_1p_unit(x), libm::log1p(x)));
        }
        for x in [
            1e-300,
            1e-20,
            1e-9,
            4.142_135_623_730_95e-1,
            4.142135623730951e-1,
        ] {
            worst = worst.max(ulps(fast_ln_1p_unit(x), libm::log1p(x)));
        }
        assert!(worst <= 1, "worst {worst} ulp");
        assert_eq!(fast_ln_1p_unit(0.0), 0.0);
    }

    #[test]
    fn fast_ln_matches_libm() {
        let mut worst = 0;
        let k = 2_000_000;
        for i in 0..=k {
            // log-spaced from 1e-308 to 1e308, and a dense grid around 1
            let x = libm::exp(-709.0 + 1418.0 * i as f64 / k as f64);
            worst = worst.max(ulps(fast_ln(x), libm::log(x)));
            let x = 0.5 + i as f64 / k as f64;
            worst = worst.max(ulps(fast_ln(x), libm::log(x)));
        }
        for x in [
            5e-324,
            1e-310,
            2.225_073_858_507_201e-308,
            f64::MIN_POSITIVE,
            f64::MAX,
            core::f64::consts::FRAC_1_SQRT_2,
            core::f64::consts::SQRT_2,
            f64::from_bits(0x3fe6_a09e_0000_0000),
            f64::from_bits(0x3fe6_a09d_ffff_ffff),
        ] {
            worst = worst.max(ulps(fast_ln(x), libm::log(x)));
        }
        assert!(worst <= 1, "worst {worst} ulp");
        assert_eq!(fast_ln(1.0), 0.0);
        assert_eq!(fast_ln(0.0), f64::NEG_INFINITY);
        assert_eq!(fast_ln(f64::INFINITY), f64::INFINITY);
        assert!(fast_ln(-1.0).is_nan() && fast_ln(f64::NAN).is_nan());
    }

    #[test]
    fn fast_softplus_sigmoid_is_close() {
        let mut worst = 0;
        let mut x = -700.0f64;
        while x < 700.0 {
            let (a, b) = fast_softplus_sigmoid(x);
            let (c, d) = softplus_sigmoid(x);
            worst = worst.max(ulps(a, c)).max(ulps(b, d));
            x += 0.0137;
        }
        assert!(worst <= 2, "worst {worst} ulp");
    }

    #[test]
    fn fast_softplus_sigmoid_sign_bit_form_keeps_the_bits() {
        // The form before e^(−|x|) set the sign bit (golden draws depend on these bits).
        let old = |x: f64| {
            let e = fast_exp(if x > 0.0 { -x } else { x });
            let l = fast_ln_1p_unit(e);
            let sp = if x > 0.0 { x + l } else { l };
            (sp, if x >= 0.0 { 1.0 } else { e } / (1.0 + e))
        };
        let mut x = -800.0f64;
        while x < 800.0 {
            for v in [
                x,
                x * 1e-7,
                x * 1e-300,
                0.0,
                -0.0,
                745.2,
                -745.2,
                708.3,
                -708.3,
            ] {
                let (a, b) = fast_softplus_sigmoid(v);
                let (c, d) = old(v);
                assert_eq!(
                    (a.to_bits(), b.to_bits()),
                    (c.to_bits(), d.to_bits()),
                    "x = {v}"
                );
            }
            x += 0.0173;
        }
        for v in [f64::INFINITY, f64::NEG_INFINITY] {
            let (a, b) = fast_softplus_sigmoid(v);
            let (c, d) = old(v);
            assert_eq!(
                (a.to_bits(), b.to_bits()),
                (c.to_bits(), d.to_bits()),
                "x = {v}"
            );
        }
        let (a, b) = fast_softplus_sigmoid(f64::NAN);
        assert!(a.is_nan() && b.is_nan());
    }

    #[test]
    fn softplus_sigmoid_fused_is_bit_identical() {
        let mut x = -800.0f64;
        while x < 800.0 {
            for v in [x, -x, x * 1e-7, 0.0, -0.0] {
                let (sp, sg) = softplus_sigmoid(v);
                assert_eq!(sp.to_bits(), softplus(v).to_bits(), "softplus({v})");
                assert_eq!(sg.to_bits(), sigmoid(v).to_bits(), "sigmoid({v})");
            }
            x += 0.37;
        }
        let (a, b) = softplus_sigmoid(f64::NAN);
        assert!(a.is_nan() && b.is_nan());
    }

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
    #[test]
    fn norm_quantile_inverts_cdf() {
        assert_eq!(norm_quantile(0.5), 0.0);
        assert!(norm_quantile(-0.1).is_nan() && norm_quantile(f64::NAN).is_nan());
        assert_eq!(norm_quantile(0.0), f64::NEG_INFINITY);
        assert!((norm_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-15);
        for &p in &[
            1e-300, 1e-20, 1e-8, 0.001, 0.02, 0.2, 0.4, 0.5001, 0.7, 0.95, 0.999_999,
        ] {
            let z = norm_quantile(p);
            let back = if z < 0.0 {
                norm_cdf(z)
            } else {
                1.0 - norm_cdf(-z)
            };
            // Φ's own relative sensitivity grows like |z|, so scale the tolerance with it.
            assert!(
                (back - p).abs() <= 1e-14 * p * (1.0 + z.abs()),
                "p={p} z={z} back={back}"
            );
        }
    }

    #[test]
    fn beta_inc_and_quantile_roundtrip() {
        // I_x(1, 1) = x; I_x(2, 1) = x²; I_x(1, 3) = 1 − (1 − x)³.
        for &x in &[0.01, 0.3, 0.77] {
            assert!((beta_inc(1.0, 1.0, x) - x).abs() < 1e-15);
            assert!((beta_inc(2.0, 1.0, x) - x * x).abs() < 1e-15);
            assert!(
                (beta_inc(1.0, 3.0, x) - (1.0 - (1.0 - x) * (1.0 - x) * (1.0 - x))).abs() < 1e-15
            );
        }
        for &(a, b) in &[
            (0.5, 0.5),
            (1.0, 20.0),
            (201.0, 3801.0),
            (2001.0, 2001.0),
            (3.7, 0.8),
        ] {
            for &p in &[0.001, 0.158_655_3, 0.5, 0.841_344_7, 0.999] {
                let x = beta_quantile(p, a, b);
                assert!(
                    (beta_inc(a, b, x) - p).abs() < 1e-12 * p.max(1e-3),
                    "{a} {b} {p} {x}"
                );
            }
        }
        assert!(beta_quantile(0.5, f64::NAN, 1.0).is_nan());
    }
}
