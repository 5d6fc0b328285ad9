//! A global allocator for the native front ends (the `tallmc` binary and the Python module):
//! the system's allocator, with every block of [`HUGE_FROM`] bytes or more advised to the
//! kernel as a candidate for transparent huge pages (`madvise(MADV_HUGEPAGE)`, Linux only).
//!
//! Why: a design of 10⁶ rows × 30 doubles is 240 MB, about 59 000 pages of 4 kB. A minibatch
//! draws its rows at random, so nearly every row read misses the TLB and waits for a page walk
//! before its own cache miss. With 2 MB pages the whole table is 120 TLB entries. Measured
//! (`taskset -c 1 tallmc bench --gather`, 2026-11-28): reading a 1 300-row batch's bytes took
//! 62–66 µs with 4 kB pages and 45 µs with huge pages (BENCHMARKS.md, issue 21).
//!
//! The advice is off until [`set_enabled`] turns it on: the front ends turn it on for the
//! samplers whose every iteration reads rows drawn at random (the stochastic-gradient family,
//! [`tallmc_core::sampler::sgmcmc::is_sg_sampler`]; [`wanted_for`], which the environment's
//! `TALLMC_HUGE_PAGES=0` or `1` overrides). Elsewhere it bought nothing measurable
//! in the chains (HMC-ECS gathers a subsample once per update, SMH and the minibatch tests read
//! few rows; NUTS's passes stream the table: 2–3 %), while on this host (a VM) a huge page
//! taken from memory the guest had not used for a while sometimes cost far more to clear on
//! first touch: the 10⁶-row CSV's load took 0.6–0.9 s instead of 0.37 s in runs that
//! alternated with runs of 4 kB pages.
//!
//! The advice only asks: where the kernel's setting is `never`, or no huge page is free, the
//! pages stay 4 kB and nothing else changes. Values are never affected. Blocks are advised
//! when allocated, so that the kernel can back the pages a block has not touched yet with huge
//! pages from their first fault (a block advised after it is filled waits for the kernel's
//! background collapse). That holds for the large fresh blocks that matter here (the design,
//! the stored gradients: glibc maps them anew); it does not for what `realloc` copies before
//! the advice, for a block glibc carves from heap memory already touched (its threshold for
//! fresh mappings grows up to 32 MB after large frees), and advice given to heap memory stays
//! on it after the block is freed and after [`set_enabled`]`(false)`. The switch is global: in
//! the Python module, concurrent `sample` calls in threads share it (speed only, never values).
//!
//! Use it with `#[global_allocator] static A: tallmc_cli::hugepages::HugePages = HugePages;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether large blocks are advised (see [`set_enabled`]).
static ENABLED: AtomicBool = AtomicBool::new(false);

/// Advise the blocks allocated from now on (`true`) or stop (`false`; the default). Blocks
/// already allocated keep what they were given.
pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// The advice for a run of `sampler`: on for the samplers that read rows at random every
/// iteration ([`tallmc_core::sampler::sgmcmc::is_sg_sampler`]), unless the environment's
/// `TALLMC_HUGE_PAGES` says `0` (never) or `1` (always).
pub fn wanted_for(sampler: &str) -> bool {
    match std::env::var("TALLMC_HUGE_PAGES").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => tallmc_core::sampler::sgmcmc::is_sg_sampler(sampler),
    }
}

/// Whether blocks allocated now are advised.
pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether blocks allocated now are advised and the advice reaches a kernel (Linux): what
/// run.json reports as `data.huge_pages`.
pub fn asked() -> bool {
    cfg!(target_os = "linux") && enabled()
}

/// Blocks from this many bytes on are advised (2 MB pages inside smaller blocks would be few,
/// and small blocks come from the allocator's shared heap).
pub const HUGE_FROM: usize = 4 << 20;

/// The system allocator, advising large blocks to use transparent huge pages (see the module).
#[derive(Debug, Default, Clone, Copy)]
pub struct HugePages;

/// Advises the whole 2 MB pages inside `size` bytes from `p` when the advice is on and the
/// block is large: the kernel's answer (`madvise`'s 0 or -1), or `None` when nothing was
/// asked (advice off, `p` null, a small block or one holding no whole 2 MB page, not Linux).
/// The allocator ignores the answer: the advice is optional.
fn advise(p: *mut u8, size: usize) -> Option<i32> {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if p.is_null() || size < HUGE_FROM || !enabled() {
            return None;
        }
        let start = (p as usize).div_ceil(HUGE) * HUGE;
        let end = (p as usize + size) / HUGE * HUGE;
        if end > start {
            // SAFETY: [start, end) lies inside the block just allocated (owned by the caller);
            // MADV_HUGEPAGE changes how the kernel backs the pages, never their contents.
            return Some(unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE)
            });
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (p, size);
        None
    }
}

// SAFETY: every call is forwarded to `System` with the caller's arguments; `advise` only adds
// a hint about the block `System` returned.
unsafe impl GlobalAlloc for HugePages {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded (the caller upholds `alloc`'s contract).
        let p = unsafe { System.alloc(layout) };
        let _ = advise(p, layout.size());
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.alloc_zeroed(layout) };
        let _ = advise(p, layout.size());
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded (`ptr` came from `System` through this allocator).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        let _ = advise(p, new_size);
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// The switch is global: the tests that use it run one at a time.
    static SWITCH: Mutex<()> = Mutex::new(());

    #[test]
    fn blocks_hold_their_values_through_alloc_zeroed_and_realloc() {
        let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        let a = HugePages;
        for on in [false, true] {
            set_enabled(on);
            for &size in &[64usize, HUGE_FROM - 8, HUGE_FROM, HUGE_FROM + 3 * 4096 + 8] {
                let layout = Layout::from_size_align(size, 8).unwrap();
                // SAFETY: a non-zero size; every block is freed with its layout.
                unsafe {
                    let p = a.alloc_zeroed(layout);
                    assert!(!p.is_null());
                    assert!((0..size).step_by(4093).all(|k| *p.add(k) == 0));
                    for k in (0..size).step_by(4093) {
                        *p.add(k) = (k % 251) as u8;
                    }
                    let q = a.realloc(p, layout, 2 * size);
                    assert!(!q.is_null());
                    assert!((0..size)
                        .step_by(4093)
                        .all(|k| *q.add(k) == (k % 251) as u8));
                    a.dealloc(q, Layout::from_size_align(2 * size, 8).unwrap());
                    let r = a.alloc(layout);
                    assert!(!r.is_null());
                    *r.add(size - 1) = 7;
                    assert_eq!(*r.add(size - 1), 7);
                    a.dealloc(r, layout);
                }
            }
        }
        set_enabled(false);
    }

    /// What is asked of the kernel: nothing when the advice is off or the block small; for a
    /// large block with the advice on, an advice the kernel accepts (`madvise` returns 0 for a
    /// range of whole 2 MB pages inside the block; a wrong range would be refused).
    #[cfg(target_os = "linux")]
    #[test]
    fn large_blocks_are_advised_when_the_advice_is_on() {
        let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        let size = 64usize << 20;
        let mut block = vec![0u8; size + 4096];
        // An unaligned start inside the vector: the advice covers its whole 2 MB pages.
        let p = block[17..].as_mut_ptr();
        set_enabled(false);
        assert_eq!(advise(p, size), None);
        set_enabled(true);
        assert_eq!(advise(p, HUGE_FROM - 1), None);
        assert_eq!(advise(std::ptr::null_mut(), size), None);
        assert_eq!(advise(p, size), Some(0));
        set_enabled(false);
        assert!(!asked());
        drop(block);
    }

    /// AnonHugePages of the mapping holding `at`, from `/proc/self/smaps` (kB).
    #[cfg(target_os = "linux")]
    fn huge_kb_at(at: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap_or_default();
        let mut inside = false;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) =
                        (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                    {
                        inside = lo <= at && at < hi;
                        continue;
                    }
                }
            }
            if inside {
                if let Some(v) = line.strip_prefix("AnonHugePages:") {
                    return v.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
                }
            }
        }
        0
    }

    /// A 64 MB block filled through the allocator: no huge pages without the advice where the
    /// kernel's setting is `madvise` (huge pages only where advised). With it, the kernel may
    /// give them (it did here: printed, not asserted, as a host without free huge pages is
    /// entitled to answer none).
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_follow_the_advice_where_the_kernel_allows() {
        let _one = SWITCH.lock().unwrap_or_else(|e| e.into_inner());
        let setting = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        let size = 64usize << 20;
        let layout = Layout::from_size_align(size, 8).unwrap();
        let filled = |on: bool| {
            set_enabled(on);
            // SAFETY: a non-zero size; freed below with its layout; written inside the block.
            unsafe {
                let p = HugePages.alloc(layout);
                assert!(!p.is_null());
                std::ptr::write_bytes(p, 1, size);
                // The middle of the block: its advised part is a mapping of its own.
                let kb = huge_kb_at(p as usize + size / 2);
                HugePages.dealloc(p, layout);
                kb
            }
        };
        let (off, on) = (filled(false), filled(true));
        set_enabled(false);
        if setting.contains("[madvise]") {
            assert_eq!(off, 0, "AnonHugePages {off} kB without the advice");
        }
        eprintln!(
            "setting {setting:?}: AnonHugePages {off} kB without the advice, {on} kB with it"
        );
    }
}
