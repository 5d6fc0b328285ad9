//! One plain-CSV cell of the common shape `[-]D+[.D+][(e|E)[+-]D+]` read with AVX2, for
//! [`super::fast`]'s part parser on x86-64 processors that have it.
//!
//! The cell's bytes are classified 32 at a time (one compare and one mask), so the lengths of
//! its integer and fraction digits come from two trailing-zero counts instead of byte-by-byte
//! loops whose exits the branch predictor misses; the last 16 fraction digits become one
//! number by three multiply-adds across the vector (Muła's method), the others by SWAR. The
//! value is then Eisel–Lemire's: `w · 10^q` from a 128-bit truncated power of five, the
//! algorithm and table of `fast_float2` and of Rust's `str::parse::<f64>`. Where Eisel–Lemire
//! cannot decide the rounding, and for every other shape (a leading `+` or blank, more than
//! 19 significant digits, `inf`, an exponent outside [-64 + digits, 40]...), [`cell`]
//! returns `None` and the caller reads the cell with `fast_float2` as before: every value is
//! the correctly rounded double of its decimal, so both give the same bits
//! (`tests::avx2_cells_parse_like_std`).

/// The range of decimal exponents q of [`POW5`].
const Q_MIN: i64 = -64;
const Q_MAX: i64 = 40;

/// 5^q for q in [Q_MIN, Q_MAX] as the 128 bits (high, low) of `fast_float2`'s and Rust's
/// table: for q ≥ 0, 5^q shifted so that its top bit is bit 127 and truncated; for q < 0,
/// ⌊2^b / 5^-q⌋ + 1 truncated to 128 bits (b = z + 127 for q ≥ −27, 2z + 128 below, z the
/// bit length of 5^-q). Checked by `tests::pow5_is_the_truncated_power`.
static POW5: [(u64, u64); 105] = [
    (0xa87fea27a539e9a5, 0x3f2398d747b36224),
    (0xd29fe4b18e88640e, 0x8eec7f0d19a03aad),
    (0x83a3eeeef9153e89, 0x1953cf68300424ac),
    (0xa48ceaaab75a8e2b, 0x5fa8c3423c052dd7),
    (0xcdb02555653131b6, 0x3792f412cb06794d),
    (0x808e17555f3ebf11, 0xe2bbd88bbee40bd0),
    (0xa0b19d2ab70e6ed6, 0x5b6aceaeae9d0ec4),
    (0xc8de047564d20a8b, 0xf245825a5a445275),
    (0xfb158592be068d2e, 0xeed6e2f0f0d56712),
    (0x9ced737bb6c4183d, 0x55464dd69685606b),
    (0xc428d05aa4751e4c, 0xaa97e14c3c26b886),
    (0xf53304714d9265df, 0xd53dd99f4b3066a8),
    (0x993fe2c6d07b7fab, 0xe546a8038efe4029),
    (0xbf8fdb78849a5f96, 0xde98520472bdd033),
    (0xef73d256a5c0f77c, 0x963e66858f6d4440),
    (0x95a8637627989aad, 0xdde7001379a44aa8),
    (0xbb127c53b17ec159, 0x5560c018580d5d52),
    (0xe9d71b689dde71af, 0xaab8f01e6e10b4a6),
    (0x9226712162ab070d, 0xcab3961304ca70e8),
    (0xb6b00d69bb55c8d1, 0x3d607b97c5fd0d22),
    (0xe45c10c42a2b3b05, 0x8cb89a7db77c506a),
    (0x8eb98a7a9a5b04e3, 0x77f3608e92adb242),
    (0xb267ed1940f1c61c, 0x55f038b237591ed3),
    (0xdf01e85f912e37a3, 0x6b6c46dec52f6688),
    (0x8b61313bbabce2c6, 0x2323ac4b3b3da015),
    (0xae397d8aa96c1b77, 0xabec975e0a0d081a),
    (0xd9c7dced53c72255, 0x96e7bd358c904a21),
    (0x881cea14545c7575, 0x7e50d64177da2e54),
    (0xaa242499697392d2, 0xdde50bd1d5d0b9e9),
    (0xd4ad2dbfc3d07787, 0x955e4ec64b44e864),
    (0x84ec3c97da624ab4, 0xbd5af13bef0b113e),
    (0xa6274bbdd0fadd61, 0xecb1ad8aeacdd58e),
    (0xcfb11ead453994ba, 0x67de18eda5814af2),
    (0x81ceb32c4b43fcf4, 0x80eacf948770ced7),
    (0xa2425ff75e14fc31, 0xa1258379a94d028d),
    (0xcad2f7f5359a3b3e, 0x096ee45813a04330),
    (0xfd87b5f28300ca0d, 0x8bca9d6e188853fc),
    (0x9e74d1b791e07e48, 0x775ea264cf55347e),
    (0xc612062576589dda, 0x95364afe032a819e),
    (0xf79687aed3eec551, 0x3a83ddbd83f52205),
    (0x9abe14cd44753b52, 0xc4926a9672793543),
    (0xc16d9a0095928a27, 0x75b7053c0f178294),
    (0xf1c90080baf72cb1, 0x5324c68b12dd6339),
    (0x971da05074da7bee, 0xd3f6fc16ebca5e04),
    (0xbce5086492111aea, 0x88f4bb1ca6bcf585),
    (0xec1e4a7db69561a5, 0x2b31e9e3d06c32e6),
    (0x9392ee8e921d5d07, 0x3aff322e62439fd0),
    (0xb877aa3236a4b449, 0x09befeb9fad487c3),
    (0xe69594bec44de15b, 0x4c2ebe687989a9b4),
    (0x901d7cf73ab0acd9, 0x0f9d37014bf60a11),
    (0xb424dc35095cd80f, 0x538484c19ef38c95),
    (0xe12e13424bb40e13, 0x2865a5f206b06fba),
    (0x8cbccc096f5088cb, 0xf93f87b7442e45d4),
    (0xafebff0bcb24aafe, 0xf78f69a51539d749),
    (0xdbe6fecebdedd5be, 0xb573440e5a884d1c),
    (0x89705f4136b4a597, 0x31680a88f8953031),
    (0xabcc77118461cefc, 0xfdc20d2b36ba7c3e),
    (0xd6bf94d5e57a42bc, 0x3d32907604691b4d),
    (0x8637bd05af6c69b5, 0xa63f9a49c2c1b110),
    (0xa7c5ac471b478423, 0x0fcf80dc33721d54),
    (0xd1b71758e219652b, 0xd3c36113404ea4a9),
    (0x83126e978d4fdf3b, 0x645a1cac083126ea),
    (0xa3d70a3d70a3d70a, 0x3d70a3d70a3d70a4),
    (0xcccccccccccccccc, 0xcccccccccccccccd),
    (0x8000000000000000, 0x0000000000000000),
    (0xa000000000000000, 0x0000000000000000),
    (0xc800000000000000, 0x0000000000000000),
    (0xfa00000000000000, 0x0000000000000000),
    (0x9c40000000000000, 0x0000000000000000),
    (0xc350000000000000, 0x0000000000000000),
    (0xf424000000000000, 0x0000000000000000),
    (0x9896800000000000, 0x0000000000000000),
    (0xbebc200000000000, 0x0000000000000000),
    (0xee6b280000000000, 0x0000000000000000),
    (0x9502f90000000000, 0x0000000000000000),
    (0xba43b74000000000, 0x0000000000000000),
    (0xe8d4a51000000000, 0x0000000000000000),
    (0x9184e72a00000000, 0x0000000000000000),
    (0xb5e620f480000000, 0x0000000000000000),
    (0xe35fa931a0000000, 0x0000000000000000),
    (0x8e1bc9bf04000000, 0x0000000000000000),
    (0xb1a2bc2ec5000000, 0x0000000000000000),
    (0xde0b6b3a76400000, 0x0000000000000000),
    (0x8ac7230489e80000, 0x0000000000000000),
    (0xad78ebc5ac620000, 0x0000000000000000),
    (0xd8d726b7177a8000, 0x0000000000000000),
    (0x878678326eac9000, 0x0000000000000000),
    (0xa968163f0a57b400, 0x0000000000000000),
    (0xd3c21bcecceda100, 0x0000000000000000),
    (0x84595161401484a0, 0x0000000000000000),
    (0xa56fa5b99019a5c8, 0x0000000000000000),
    (0xcecb8f27f4200f3a, 0x0000000000000000),
    (0x813f3978f8940984, 0x4000000000000000),
    (0xa18f07d736b90be5, 0x5000000000000000),
    (0xc9f2c9cd04674ede, 0xa400000000000000),
    (0xfc6f7c4045812296, 0x4d00000000000000),
    (0x9dc5ada82b70b59d, 0xf020000000000000),
    (0xc5371912364ce305, 0x6c28000000000000),
    (0xf684df56c3e01bc6, 0xc732000000000000),
    (0x9a130b963a6c115c, 0x3c7f400000000000),
    (0xc097ce7bc90715b3, 0x4b9f100000000000),
    (0xf0bdc21abb48db20, 0x1e86d40000000000),
    (0x96769950b50d88f4, 0x1314448000000000),
    (0xbc143fa4e250eb31, 0x17d955a000000000),
    (0xeb194f8e1ae525fd, 0x5dcfab0800000000),
];

/// 10^k for k ≤ 19.
const POW10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

/// Masks keeping the top k bytes of a little-endian word (the last k bytes in memory).
const KEEP8: [u64; 9] = [
    0,
    0xFF00_0000_0000_0000,
    0xFFFF_0000_0000_0000,
    0xFFFF_FF00_0000_0000,
    0xFFFF_FFFF_0000_0000,
    0xFFFF_FFFF_FF00_0000,
    0xFFFF_FFFF_FFFF_0000,
    0xFFFF_FFFF_FFFF_FF00,
    u64::MAX,
];

/// Sixteen bytes read at k keep the last k of a 16-byte vector.
#[cfg(target_arch = "x86_64")]
static KEEP16: [u8; 32] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
];

/// Eight ASCII zeros.
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// The 8 bytes of `b` from `at`, little-endian.
#[inline(always)]
fn word(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// Eight ASCII digits, the first byte the most significant, to their value (SWAR).
#[inline(always)]
fn eight(v: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 0x000F_4240_0000_0064; // 100 + (1 000 000 << 32)
    const MUL2: u64 = 0x0000_2710_0000_0001; // 1 + (10 000 << 32)
    let v = v.wrapping_sub(ZEROS);
    let v = v.wrapping_mul(10).wrapping_add(v >> 8);
    let v1 = (v & MASK).wrapping_mul(MUL1);
    let v2 = ((v >> 16) & MASK).wrapping_mul(MUL2);
    u64::from((v1.wrapping_add(v2) >> 32) as u32)
}

/// The value of the k ≤ 8 digits of `b` that end just before `end` (end ≥ 8).
#[inline(always)]
fn digits_before(b: &[u8], end: usize, k: usize) -> u64 {
    let keep = KEEP8[k];
    eight((word(b, end - 8) & keep) | (ZEROS & !keep))
}

/// Eisel–Lemire: the double nearest to w · 10^q (w ≥ 1, ties to even), or `None` when
/// q is outside the table or the 128-bit product cannot decide the rounding. The steps and
/// constants are `fast_float2::binary::compute_float`'s for f64 (52 explicit mantissa bits,
/// exponent bias 1 023); subnormal and infinite results are out of reach here and refused.
#[inline(always)]
fn eisel_lemire(q: i64, w: u64) -> Option<f64> {
    if !(Q_MIN..=Q_MAX).contains(&q) {
        return None;
    }
    let lz = w.leading_zeros();
    let w = w << lz;
    let (hi5, lo5) = POW5[(q - Q_MIN) as usize];
    let first = u128::from(w) * u128::from(hi5);
    let (mut lo, mut hi) = (first as u64, (first >> 64) as u64);
    // 52 + 3 bits of precision: the second product only when the first leaves them unsure.
    const MASK: u64 = u64::MAX >> 55;
    if hi & MASK == MASK {
        let second_hi = ((u128::from(w) * u128::from(lo5)) >> 64) as u64;
        lo = lo.wrapping_add(second_hi);
        if second_hi > lo {
            hi += 1;
        }
    }
    if lo == u64::MAX && !(-27..=55).contains(&q) {
        return None;
    }
    let upperbit = (hi >> 63) as i32;
    let mut mantissa = hi >> (upperbit + 64 - 52 - 3);
    let power = ((q as i32).wrapping_mul(152_170 + 65_536) >> 16) + 63;
    let mut power2 = power + upperbit - lz as i32 + 1023;
    if power2 <= 0 {
        return None;
    }
    // A tie between two doubles (possible only where 5^q fits in 64 bits): round to even.
    if lo <= 1
        && (-4..=23).contains(&q)
        && mantissa & 3 == 1
        && (mantissa << (upperbit + 64 - 52 - 3)) == hi
    {
        mantissa &= !1;
    }
    mantissa += mantissa & 1;
    mantissa >>= 1;
    if mantissa >= (2u64 << 52) {
        mantissa = 1u64 << 52;
        power2 += 1;
    }
    mantissa &= !(1u64 << 52);
    if power2 >= 0x7FF {
        return None;
    }
    Some(f64::from_bits(mantissa | ((power2 as u64) << 52)))
}

/// The number at `b[p..]` when it has the common shape and `b` holds the 24 bytes before
/// `p` and the 32 from it: its value and the index just past it (the caller checks the byte
/// there). `None`: the caller reads the cell the general way.
///
/// # Safety
/// The processor must have AVX2, BMI1, LZCNT, SSSE3 and SSE4.1 (the caller is compiled with
/// them and checks at run time); every load is inside `b` (checked here).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn cell_avx2(b: &[u8], p: usize) -> Option<(f64, usize)> {
    use core::arch::x86_64::*;
    if p < 24 || p.checked_add(32).is_none_or(|e| e > b.len()) {
        return None;
    }
    // SAFETY (all loads below): [p, p + 32) is inside b (checked above), KEEP16 has 32 bytes.
    let base = b.as_ptr().add(p);
    let v = _mm256_loadu_si256(base as *const __m256i);
    let d = _mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8));
    let digit = _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8(9)), d);
    // Bit i set: byte p + i is not an ASCII digit; is a dot.
    let nondigit = !(_mm256_movemask_epi8(digit) as u32);
    let dots = _mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'.' as i8))) as u32;
    let neg = b[p] == b'-';
    let s = u32::from(neg);
    let int_end = ((nondigit >> s).trailing_zeros() + s) as usize;
    let int_len = int_end - s as usize;
    if int_len == 0 || int_len > 8 {
        return None;
    }
    // The byte after the integer digits from the dot mask (int_end < 32 here), not a load
    // that waits on the digits' count.
    let (frac_end, frac_len) = if (dots >> int_end) & 1 == 1 {
        let start = int_end + 1;
        // No non-digit in the window after the dot: the count is 32 - start and the end 32.
        let end = (nondigit >> start).trailing_zeros() as usize + start;
        (end, end - start)
    } else {
        (int_end, 0)
    };
    // The number's end inside the window, a dot followed by a digit, at most 19 digits.
    if frac_end >= 32 || (frac_len == 0 && frac_end != int_end) || frac_len > 19 {
        return None;
    }
    let int = digits_before(b, p + int_end, int_len);
    // `&`, not `&&`: one branch, taken only for too many digits (a branch on `int != 0` was
    // mispredicted on data around 0 and 1).
    if (int != 0) & (int_len + frac_len > 19) {
        return None;
    }
    // The last min(frac_len, 16) fraction digits, right-aligned in 16 bytes: pairs, fours,
    // then two eight-digit halves. frac_end ≥ 1 and p ≥ 24, so the load starts inside b.
    let k = frac_len.min(16);
    let x = _mm_loadu_si128(base.add(frac_end).sub(16) as *const __m128i);
    let x = _mm_sub_epi8(x, _mm_set1_epi8(b'0' as i8));
    let x = _mm_and_si128(x, _mm_loadu_si128(KEEP16.as_ptr().add(k) as *const __m128i));
    let pairs = _mm_maddubs_epi16(
        x,
        _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1),
    );
    let fours = _mm_madd_epi16(pairs, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
    let fours = _mm_packus_epi32(fours, fours);
    let eights = _mm_madd_epi16(
        fours,
        _mm_setr_epi16(10_000, 1, 10_000, 1, 10_000, 1, 10_000, 1),
    );
    let halves = _mm_cvtsi128_si64(eights) as u64;
    let last16 = (halves & 0xFFFF_FFFF) * 100_000_000 + (halves >> 32);
    let first = digits_before(b, p + frac_end - 16, frac_len.saturating_sub(16));
    let frac = first * 10_000_000_000_000_000 + last16;
    // Exact: at most 19 significant digits (checked above).
    let w = int * POW10[frac_len] + frac;
    let mut end = p + frac_end;
    let mut q = -(frac_len as i64);
    if matches!(b[end], b'e' | b'E') {
        let stop = p + 32;
        let mut x = end + 1;
        if x >= stop {
            return None;
        }
        let eneg = b[x] == b'-';
        if matches!(b[x], b'-' | b'+') {
            x += 1;
        }
        let from = x;
        let mut e: i64 = 0;
        while x < stop && x - from < 4 && b[x].is_ascii_digit() {
            e = e * 10 + i64::from(b[x] - b'0');
            x += 1;
        }
        if x == from || x >= stop || b[x].is_ascii_digit() {
            return None;
        }
        q += if eneg { -e } else { e };
        end = x;
    }
    // No branch on w = 0 before the multiply (it is rare and unpredictable where it happens).
    let v = eisel_lemire(q, w | u64::from(w == 0))?;
    let v = if w == 0 { 0.0 } else { v };
    // The sign by its bit, not a branch (v ≥ 0, so this is −v when `neg`): on signed data a
    // branch here is mispredicted about every other cell.
    Some((f64::from_bits(v.to_bits() | (u64::from(neg) << 63)), end))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Little-endian u64 limbs, just enough arithmetic to rebuild the table.
    #[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
    struct Big(Vec<u64>);

    impl Big {
        fn from(x: u64) -> Self {
            Big(vec![x])
        }
        fn trim(mut self) -> Self {
            while self.0.len() > 1 && self.0.last() == Some(&0) {
                self.0.pop();
            }
            self
        }
        fn bits(&self) -> u32 {
            let top = self.0.len() - 1;
            64 * top as u32 + (64 - self.0[top].leading_zeros())
        }
        fn mul_small(&self, m: u64) -> Self {
            let mut carry = 0u128;
            let mut out = Vec::new();
            for &l in &self.0 {
                let t = u128::from(l) * u128::from(m) + carry;
                out.push(t as u64);
                carry = t >> 64;
            }
            out.push(carry as u64);
            Big(out).trim()
        }
        fn shl1_or(&self, bit: u64) -> Self {
            let mut out = Vec::new();
            let mut carry = bit;
            for &l in &self.0 {
                out.push((l << 1) | carry);
                carry = l >> 63;
            }
            out.push(carry);
            Big(out).trim()
        }
        fn shr1(&self) -> Self {
            let mut out = self.0.clone();
            for i in 0..out.len() {
                let next = out.get(i + 1).copied().unwrap_or(0);
                out[i] = (out[i] >> 1) | (next << 63);
            }
            Big(out).trim()
        }
        fn ge(&self, o: &Big) -> bool {
            if self.0.len() != o.0.len() {
                return self.0.len() > o.0.len();
            }
            self.0.iter().rev().cmp(o.0.iter().rev()) != std::cmp::Ordering::Less
        }
        fn sub(&self, o: &Big) -> Self {
            let mut out = Vec::new();
            let mut borrow = 0u64;
            for (i, &l) in self.0.iter().enumerate() {
                let r = o.0.get(i).copied().unwrap_or(0);
                let (a, b1) = l.overflowing_sub(r);
                let (a, b2) = a.overflowing_sub(borrow);
                out.push(a);
                borrow = u64::from(b1 || b2);
            }
            Big(out).trim()
        }
        /// ⌊2^b / self⌋, bit by bit.
        fn div_pow2(&self, b: u32) -> Self {
            let mut quo = Big::from(0);
            let mut rem = Big::from(0);
            for i in (0..=b).rev() {
                rem = rem.shl1_or(u64::from(i == b));
                let bit = rem.ge(self);
                if bit {
                    rem = rem.sub(self);
                }
                quo = quo.shl1_or(u64::from(bit));
            }
            quo
        }
        fn add1(&self) -> Self {
            let mut out = self.0.clone();
            out.push(0);
            for l in out.iter_mut() {
                let (a, c) = l.overflowing_add(1);
                *l = a;
                if !c {
                    break;
                }
            }
            Big(out).trim()
        }
        fn hi_lo(&self) -> (u64, u64) {
            assert!(self.bits() <= 128);
            (self.0.get(1).copied().unwrap_or(0), self.0[0])
        }
    }

    /// fast_float's table generator (`script/table_generation.py`), in integers.
    #[test]
    fn pow5_is_the_truncated_power() {
        for q in Q_MIN..=Q_MAX {
            let mut p5 = Big::from(1);
            for _ in 0..q.unsigned_abs() {
                p5 = p5.mul_small(5);
            }
            let c = if q < 0 {
                // The smallest z with 2^z ≥ 5^-q: its bit length (it is not a power of two).
                let z = p5.bits();
                let mut c = if q >= -27 {
                    p5.div_pow2(z + 127).add1()
                } else {
                    p5.div_pow2(2 * z + 128).add1()
                };
                while c.bits() > 128 {
                    c = c.shr1();
                }
                c
            } else {
                let mut c = p5;
                while c.bits() < 128 {
                    c = c.shl1_or(0);
                }
                while c.bits() > 128 {
                    c = c.shr1();
                }
                c
            };
            assert_eq!(c.hi_lo(), POW5[(q - Q_MIN) as usize], "5^{q}");
        }
    }

    #[test]
    fn eight_digits_swar() {
        for (s, v) in [
            (b"00000000", 0u64),
            (b"12345678", 12_345_678),
            (b"99999999", 99_999_999),
        ] {
            assert_eq!(eight(u64::from_le_bytes(*s)), v);
        }
        let b = b"xxxxxxxx1234,";
        assert_eq!(digits_before(b, 12, 4), 1234);
        assert_eq!(digits_before(b, 12, 0), 0);
        assert_eq!(digits_before(b, 12, 2), 34);
    }

    /// Every shape the AVX2 cell reads gives std's bits and stops where std's number ends; the
    /// shapes it leaves to the general way are counted (so that the common ones do not fall
    /// back unnoticed).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_cells_parse_like_std() {
        if !super::super::fast::has_avx2() {
            eprintln!("no AVX2 here: the AVX2 cell is not used, nothing to check");
            return;
        }
        let mut next = super::super::tests::xorshift(0x2545_F491_4F6C_DD1D);
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "1",
            "-1",
            "0.0",
            "-0.0",
            "5.",
            "-.5",
            ".5",
            "+1",
            "1e5",
            "1E5",
            "1e+5",
            "1e-5",
            "1.5e",
            "1.5e+",
            "1e0005",
            "1e00005",
            "9007199254740993",
            "9007199254740992.5",
            "123456789.5",
            "12345678.5",
            "0.1",
            "0.30000000000000004",
            "1.7976931348623157e308",
            "2.2250738585072014e-308",
            "4.9e-324",
            "1e-64",
            "1e-65",
            "1e40",
            "1e41",
            "-0.0096203970742713731",
            "0.85791516006813906",
            "-1.5174009785985654",
            "9.999999999999999e22",
            "1e23",
            "8.98846567431158e307",
            "12345678901234567890",
            "1234567890123456789",
            "0.00000000000000000001",
            "00000001.5",
            "1.0000000000000000000",
            "0x1",
            "1.5.3",
            "1e5e5",
            "inf",
            "nan",
            "-",
            "",
            " 1",
            "1 ",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for k in 0..400_000u64 {
            let mut t = String::new();
            if next().is_multiple_of(2) {
                t.push('-');
            }
            let int_len = 1 + (next() % 9) as usize;
            for i in 0..int_len {
                let d = (next() % 10) as u8;
                t.push((b'0' + if i == 0 && k % 4 == 0 { 0 } else { d }) as char);
            }
            if !next().is_multiple_of(8) {
                t.push('.');
                let frac_len = (next() % 22) as usize;
                let zeros = if k % 5 == 0 { (next() % 6) as usize } else { 0 };
                for i in 0..frac_len {
                    t.push(if i < zeros {
                        '0'
                    } else {
                        (b'0' + (next() % 10) as u8) as char
                    });
                }
            }
            if next().is_multiple_of(6) {
                let e = (next() % 140) as i64 - 70;
                t.push_str(&format!(
                    "{}{}",
                    if next().is_multiple_of(2) { 'e' } else { 'E' },
                    if e >= 0 && next().is_multiple_of(2) {
                        format!("+{e}")
                    } else {
                        e.to_string()
                    }
                ));
            }
            if k % 7 == 0 {
                // Shortest round-trip forms of random doubles (Python's repr, NumPy's files).
                let x =
                    f64::from_bits(next() >> 2) * if next().is_multiple_of(2) { 1.0 } else { -1.0 };
                t = format!("{x:?}");
            }
            if k % 11 == 0 {
                // Midpoints between neighbouring doubles, where rounding is hardest.
                let x = f64::from_bits((next() >> 12) | 0x3FF0_0000_0000_0000);
                let y = f64::from_bits(x.to_bits() + 1);
                t = format!("{:.25}", x / 2.0 + y / 2.0);
            }
            cases.push(t);
        }
        // The same comparisons; `common`: the shape of the files users bring (NumPy's and
        // Python's shortest round-trip forms of values in ±[0.001, 1000), small integers),
        // which the AVX2 cell must read itself.
        let check = |c: &str, common: bool| -> bool {
            let mut read = false;
            for sep in [",", "\n", "x", "e", "."] {
                let text = format!("{}{c}{sep}{}", "9".repeat(24), " ".repeat(40));
                let b = text.as_bytes();
                // SAFETY: AVX2 and the rest checked above.
                let got = unsafe { cell_avx2(b, 24) };
                let Some((v, end)) = got else {
                    assert!(
                        !common || matches!(sep, "e" | "."),
                        "{c:?}{sep:?}: a common cell declined"
                    );
                    continue;
                };
                read = true;
                let (w, used) =
                    fast_float2::parse_partial::<f64, _>(&b[24..]).unwrap_or_else(|_| {
                        panic!("{c:?}: read by AVX2 ({v}), refused by fast_float2")
                    });
                assert_eq!(end - 24, used, "{c:?}{sep:?}: where the number ends");
                let std: f64 = std::str::from_utf8(&b[24..end]).unwrap().parse().unwrap();
                assert_eq!(v.to_bits(), std.to_bits(), "{c:?}: {v} against std's {std}");
                assert_eq!(w.to_bits(), std.to_bits(), "{c:?}: fast_float2");
            }
            read
        };
        let read = cases.iter().filter(|c| check(c, false)).count();
        eprintln!(
            "AVX2 cells: {read} of {} shapes read, the others left to fast_float2",
            cases.len()
        );
        for k in 0..200_000u64 {
            let mag = 10f64.powi((next() % 6) as i32 - 3);
            let x = mag * (1.0 + (next() >> 11) as f64 / (1u64 << 53) as f64 * 9.0);
            let x = if next().is_multiple_of(2) { -x } else { x };
            assert!(check(&format!("{x:?}"), true));
            assert!(check(&(k % 1000).to_string(), true));
            assert!(check(&format!("{}", x as f32), true));
        }
    }
}
