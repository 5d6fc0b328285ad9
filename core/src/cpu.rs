//! What the running CPU offers beyond the compilation target's baseline, for the few hot loops
//! that are compiled twice: once for the baseline (x86-64's SSE2, two doubles per vector) and
//! once with AVX2 (four), the copy chosen at run time by [`has_avx2`].
//!
//! Both copies perform the same floating-point operations in the same order for every element:
//! Rust never fuses a multiply and an add into one rounding, and wider vectors only put more
//! independent elements side by side. So every result, and every draw, has the same bits on
//! either path (the `*_on_both_paths` tests compare them on random inputs); the copies differ in
//! speed only. On other architectures (wasm32, thumbv7em) only the baseline exists.

use core::sync::atomic::{AtomicU8, Ordering};

/// 0: not yet detected, 1: no AVX2 (or disabled), 2: AVX2.
static AVX2: AtomicU8 = AtomicU8::new(0);

/// Whether the AVX2 copies may run: the CPU has AVX2 and the operating system saves the AVX
/// registers (detected on first use, then remembered), and [`disable_avx2`] was not called.
#[inline]
pub fn has_avx2() -> bool {
    match AVX2.load(Ordering::Relaxed) {
        2 => true,
        1 => false,
        _ => {
            let yes = detect();
            // A concurrent disable_avx2 wins over the detection.
            let _ = AVX2.compare_exchange(
                0,
                if yes { 2 } else { 1 },
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            AVX2.load(Ordering::Relaxed) == 2
        }
    }
}

/// Use the baseline copies from now on (for measuring what AVX2 gives; the results are the
/// same bits either way).
pub fn disable_avx2() {
    AVX2.store(1, Ordering::Relaxed);
}

#[cfg(target_arch = "x86_64")]
fn detect() -> bool {
    use core::arch::x86_64::{__cpuid, __cpuid_count};
    // SAFETY: `cpuid` exists on every x86-64 processor.
    #[allow(unused_unsafe)]
    let (max_leaf, features) = unsafe { (__cpuid(0).eax, __cpuid(1).ecx) };
    let osxsave = features & (1 << 27) != 0;
    let avx = features & (1 << 28) != 0;
    if max_leaf < 7 || !osxsave || !avx {
        return false;
    }
    // SAFETY: OSXSAVE is set, so the OS has enabled `xgetbv`.
    let xcr0 = unsafe { xcr0() };
    // The OS saves the SSE (bit 1) and AVX (bit 2) register state.
    if xcr0 & 0b110 != 0b110 {
        return false;
    }
    // SAFETY: leaf 7 exists (max_leaf ≥ 7).
    #[allow(unused_unsafe)]
    let ext = unsafe { __cpuid_count(7, 0).ebx };
    ext & (1 << 5) != 0
}

/// The XCR0 register (which register states the OS saves).
///
/// # Safety
/// The CPU must support `xgetbv` (CPUID.1:ECX.OSXSAVE set).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    core::arch::x86_64::_xgetbv(0)
}

#[cfg(not(target_arch = "x86_64"))]
fn detect() -> bool {
    false
}

/// `body` compiled for the running CPU: the AVX2 copy of the enclosing hot loop when
/// [`has_avx2`], else the baseline. `$avx2` must be a function with
/// `#[target_feature(enable = "avx2")]` that runs the same code as `$base` (both call one
/// `#[inline(always)]` body).
#[macro_export]
#[doc(hidden)]
macro_rules! on_cpu {
    ($avx2:expr, $base:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            if $crate::cpu::has_avx2() {
                // SAFETY: the CPU has AVX2 and the OS saves its registers (checked at run time).
                #[allow(unused_unsafe)]
                unsafe {
                    $avx2
                }
            } else {
                $base
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            $base
        }
    }};
}

/// In an `impl` block: `fn $avx2(&self, args…) -> R`, compiled with AVX2, running the
/// `#[inline(always)]` method `$any` (the same code, so the same bits); call it through
/// [`on_cpu!`](crate::on_cpu).
#[macro_export]
#[doc(hidden)]
macro_rules! avx2_twin {
    ($(#[$m:meta])* $vis:vis fn $avx2:ident = $any:ident(&self $(, $a:ident : $t:ty)* $(,)?) $(-> $r:ty)?) => {
        $(#[$m])*
        #[cfg(target_arch = "x86_64")]
        #[target_feature(enable = "avx2")]
        $vis fn $avx2(&self $(, $a: $t)*) $(-> $r)? {
            self.$any($($a),*)
        }
    };
}
