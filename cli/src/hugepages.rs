//! Transparent huge pages for the data of the native front ends (the `tallmc` binary and the
//! Python module), Linux only: a global allocator over the system's that can advise every block
//! of [`HUGE_FROM`] bytes or more as it is allocated (`madvise(MADV_HUGEPAGE)`), and
//! [`after_setup`], which moves a built model's design onto huge pages when its run will read
//! enough randomly drawn rows to pay for the move (`MADV_COLLAPSE`).
//!
//! Why: a design of 10⁶ rows × 30 doubles is 240 MB, about 59 000 pages of 4 kB. A minibatch
//! draws its rows at random, so nearly every row read misses the TLB and waits for a page walk
//! before its own cache miss. With 2 MB pages the whole table is 120 TLB entries. Measured
//! (`taskset -c 1 tallmc bench --gather`, 2026-11-28): reading a 1 300-row batch's bytes took
//! 62–66 µs with 4 kB pages and 45 µs with huge pages; `sgld` on the peers' table, 20 000
//! iterations of 1 300 rows: chains 1.28–1.33 s → 1.07–1.12 s (five alternating runs;
//! BENCHMARKS.md, issue 21).
//!
//! What it costs: on the host where this was measured (a VM) a fresh huge page costs far more
//! to fault in than 4 kB pages do, likely because the host has discarded the free 2 MB blocks
//! the guest reported to it, while 4 kB pages come mostly from memory still backed. The
//! peers' CSV loaded in 0.78–0.89 s with the advice at allocation against 0.38–0.42 s without
//! (that run's whole process 2.52–2.67 s against 2.35–2.43 s); a 10⁷-row Parquet file in
//! 3.6–3.9 s against 2.3 s. Moving the 240 MB design afterwards
//! (`MADV_COLLAPSE`, Linux 6.1 and later) took 0.3–0.6 s. That is 40–80 passes' worth of rows
//! drawn at random (7.3 ns saved per row read): a short SGLD run, the usual kind on tall data
//! (the peers' run reads 26 passes' worth, 4 chains of 2 000 draws on 10⁷ rows one pass'
//! worth), would lose more at the load than it gains in its chains.
//!
//! So by default nothing is advised at allocation, and [`after_setup`] moves the design (its
//! rows, its response, a whitened model's offsets) once chain 0 is built, only for the samplers whose every iteration
//! reads rows drawn at random (the stochastic-gradient family,
//! [`tallmc_core::sampler::sgmcmc::is_sg_sampler`]) and only when the run's minibatches will
//! read at least [`MOVE_PASSES`] times the data's rows (chains × iterations × chain 0's
//! resolved `batch_size`). The environment's `TALLMC_HUGE_PAGES=0` turns both off;
//! `TALLMC_HUGE_PAGES=1` advises every large block at allocation, for every sampler, and
//! moves nothing after (the blocks are already advised).
//!
//! The advice only asks: where the kernel's setting is `never`, or no huge page is free, the
//! pages stay 4 kB and nothing else changes. Values are never affected. Blocks are advised
//! when allocated, so that the kernel can back the pages a block has not touched yet with huge
//! pages from their first fault. That holds for the large fresh blocks that matter here (the
//! design, the stored gradients: glibc maps them anew); it does not for what `realloc` copies
//! before the advice, for a block glibc carves from heap memory already touched (its threshold
//! for fresh mappings grows up to 32 MB after large frees), and advice given to heap memory
//! stays on it after the block is freed and after [`set_enabled`]`(false)`. The switch is
//! global: in the Python module, concurrent `sample` calls in threads share it (speed only,
//! never values).
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

/// The environment's choice: `TALLMC_HUGE_PAGES=0` `Some(false)` (never), `1` `Some(true)`
/// (every large block at allocation), anything else or unset `None` (the automatic choice,
/// [`after_setup`]).
pub fn forced() -> Option<bool> {
    match std::env::var("TALLMC_HUGE_PAGES").as_deref() {
        Ok("0") => Some(false),
        Ok("1") => Some(true),
        _ => None,
    }
}

/// Whether a run advises its large blocks as they are allocated: only when the environment
/// asks (`TALLMC_HUGE_PAGES=1`, [`forced`]); by default the design is moved after chain 0's
/// set-up instead, when that pays ([`after_setup`]).
pub fn at_allocation() -> bool {
    forced() == Some(true)
}

/// Rows drawn at random, in multiples of the data's rows, from which a run's design is moved
/// onto huge pages ([`after_setup`]): the move cost 0.3–0.6 s for 240 MB on the measuring host
/// and saved 7.3 ns per row read, a break-even of 40–80 passes' worth of rows.
pub const MOVE_PASSES: f64 = 64.0;

/// Whether a run whose minibatches read `rows_read` rows in all, from data of `n` rows, moves
/// its design onto huge pages ([`MOVE_PASSES`]).
pub fn move_pays(rows_read: f64, n: usize) -> bool {
    n > 0 && rows_read >= MOVE_PASSES * n as f64
}

/// The automatic choice, once chain 0 of a run of `chains` chains of `iterations` iterations
/// each (warm-up and draws) is built: for a stochastic-gradient `sampler` whose minibatches
/// (chain 0's resolved `batch_size` rows per iteration) will read at least [`MOVE_PASSES`]
/// times the data's rows, the model's design (its rows, its response and, on a whitened
/// model, its offsets: the arrays a drawn row reads) is moved onto huge pages
/// ([`move_to_huge_pages`]). Nothing when the environment chose ([`forced`]), for a model
/// without a design, off Linux, or when no array holds a whole 2 MB page. The seconds the move
/// took when the kernel was asked (it may still have declined some pages). For `asgld-cv-ps`
/// the resolved `batch_size` is its adaptive rule's scale n₀, about 1.5 times the batches it
/// draws at the posterior's typical distance from the mode: its rows read are overestimated.
pub fn after_setup(
    sampler: &str,
    model: &dyn tallmc_core::model::DataModel,
    chain0: &dyn tallmc_core::chain::Chain,
    chains: usize,
    iterations: usize,
) -> Option<f64> {
    if !cfg!(target_os = "linux")
        || forced().is_some()
        || !tallmc_core::sampler::sgmcmc::is_sg_sampler(sampler)
    {
        return None;
    }
    let batch = chain0
        .resolved()
        .iter()
        .find(|(k, _)| *k == "batch_size")
        .map(|&(_, v)| v)?;
    let rows_read = batch * chains as f64 * iterations as f64;
    let glm = model.as_glm()?;
    let design = glm.design();
    if !move_pays(rows_read, design.n) {
        return None;
    }
    let t = std::time::Instant::now();
    let arrays = [Some(&design.x[..]), Some(&design.y[..]), glm.offset()];
    let asked = arrays
        .into_iter()
        .flatten()
        .filter_map(move_to_huge_pages)
        .count();
    (asked > 0).then(|| t.elapsed().as_secs_f64())
}

/// Moves the whole 2 MB pages inside `block` onto huge pages now: `madvise(MADV_HUGEPAGE)`,
/// then `madvise(MADV_COLLAPSE)` (Linux 6.1 and later, glibc targets; the kernel copies the
/// pages' contents into huge pages, values unchanged). The answers (0, or −1 where the kernel
/// refuses) of the advice and of the collapse (`None` where not asked; −1 where the kernel
/// declines or lacks it: the pages then stay as they were, advised for its background
/// collapse), or `None` when nothing was asked (a block holding no whole 2 MB page, not
/// Linux).
pub fn move_to_huge_pages(block: &[f64]) -> Option<(i32, Option<i32>)> {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        // libc names it for glibc targets (its value is the kernel's, 25, on the common
        // architectures); elsewhere only the advice is given.
        #[cfg(target_env = "gnu")]
        const COLLAPSE: Option<libc::c_int> = Some(libc::MADV_COLLAPSE);
        #[cfg(not(target_env = "gnu"))]
        const COLLAPSE: Option<libc::c_int> = None;
        let p = block.as_ptr() as usize;
        let start = p.div_ceil(HUGE) * HUGE;
        let end = (p + std::mem::size_of_val(block)) / HUGE * HUGE;
        if end <= start {
            return None;
        }
        let (at, len) = (start as *mut libc::c_void, end - start);
        // SAFETY: [start, end) lies inside `block`, memory this process owns and keeps while
        // the calls run; both advices change how the kernel backs the pages, never their
        // contents (MADV_COLLAPSE copies them into huge pages under the kernel's locks).
        unsafe {
            let advised = libc::madvise(at, len, libc::MADV_HUGEPAGE);
            Some((advised, COLLAPSE.map(|c| libc::madvise(at, len, c))))
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = block;
        None
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

    /// A run moves its design when its minibatches read at least `MOVE_PASSES` times the
    /// data's rows; never for empty data.
    #[test]
    fn the_move_pays_from_move_passes_times_the_rows() {
        let n = 1000;
        assert!(!move_pays(MOVE_PASSES * n as f64 - 1.0, n));
        assert!(move_pays(MOVE_PASSES * n as f64, n));
        assert!(!move_pays(1e12, 0));
    }

    /// Moving a block onto huge pages keeps its values: for a block holding whole 2 MB pages
    /// the kernel accepts the advice, and moves them or declines (−1 where it lacks
    /// `MADV_COLLAPSE`: printed with the huge pages it gave); nothing is asked for a small one.
    #[test]
    fn moving_a_block_keeps_its_values() {
        let block: Vec<f64> = (0..(8usize << 20) / 8).map(|k| k as f64 * 0.5).collect();
        let answer = move_to_huge_pages(&block[3..]);
        if cfg!(target_os = "linux") {
            // The advice over a range of whole 2 MB pages inside the block is accepted (a
            // wrong range would be refused); the collapse may be declined.
            let (advised, collapsed) = answer.expect("a block holding whole 2 MB pages");
            assert_eq!(advised, 0);
            assert!(
                matches!(collapsed, None | Some(0) | Some(-1)),
                "{collapsed:?}"
            );
        } else {
            assert_eq!(answer, None);
        }
        assert!(block.iter().enumerate().all(|(k, &v)| v == k as f64 * 0.5));
        assert_eq!(move_to_huge_pages(&block[..1000]), None);
        #[cfg(target_os = "linux")]
        eprintln!(
            "MADV_COLLAPSE answered {answer:?}; AnonHugePages {} kB",
            huge_kb_at(block.as_ptr() as usize + (4 << 20))
        );
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
