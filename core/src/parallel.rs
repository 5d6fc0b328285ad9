//! A hook for splitting full-data passes across threads, with no threads in the core.
//!
//! The core is `no_std` and single-threaded; a host with threads (the CLI) hands a model a
//! [`ParallelFor`] and the model runs the chunks of its full-data passes through it. The
//! reduction order is fixed by the chunking alone (each chunk summed in row order from zero,
//! then the chunks' sums added in chunk order, [`PASS_CHUNK`] rows per chunk), never by the
//! number of threads: the same seed gives the same draws on one thread, on many, and in the
//! browser.

/// Rows per chunk of a full-data pass (the unit of work of a thread and of the reduction).
pub const PASS_CHUNK: usize = 16_384;

/// Runs independent jobs, possibly concurrently.
pub trait ParallelFor: Send + Sync {
    /// Call `f(k)` for every k in `0..jobs`, in any order and possibly concurrently; return
    /// when every call has returned.
    fn for_each(&self, jobs: usize, f: &(dyn Fn(usize) + Sync));
    /// Threads it uses (for reports).
    fn threads(&self) -> usize;
    /// Call `f(k, piece)` for every piece k of `data` cut into pieces of `len` values (the last
    /// one shorter), in any order and possibly concurrently: for passes that write every row
    /// (each piece is one job's alone). The default runs them one after the other.
    fn for_each_piece(&self, data: &mut [f64], len: usize, f: &(dyn Fn(usize, &mut [f64]) + Sync)) {
        for (k, piece) in data.chunks_mut(len.max(1)).enumerate() {
            f(k, piece);
        }
    }
}

/// [`ParallelFor::for_each_piece`] through `p` when given, else one piece after the other.
pub fn for_each_piece(
    p: Option<&dyn ParallelFor>,
    data: &mut [f64],
    len: usize,
    f: &(dyn Fn(usize, &mut [f64]) + Sync),
) {
    match p {
        Some(p) => p.for_each_piece(data, len, f),
        None => {
            for (k, piece) in data.chunks_mut(len.max(1)).enumerate() {
                f(k, piece);
            }
        }
    }
}

/// `values` into `slots`, two 32-bit atomics per f64: every target with threads has them
/// (thumbv7em has no 64-bit atomics); each slot is written by one job and read after all jobs
/// returned.
fn put(slots: &[core::sync::atomic::AtomicU32], values: &[f64]) {
    use core::sync::atomic::Ordering;
    for (v, w) in values.iter().zip(slots.chunks_exact(2)) {
        let b = v.to_bits();
        w[0].store((b >> 32) as u32, Ordering::Relaxed);
        w[1].store(b as u32, Ordering::Relaxed);
    }
}

/// The values [`put`] stored in `slots`.
fn get(slots: &[core::sync::atomic::AtomicU32], values: &mut [f64]) {
    use core::sync::atomic::Ordering;
    for (v, w) in values.iter_mut().zip(slots.chunks_exact(2)) {
        let hi = u64::from(w[0].load(Ordering::Relaxed));
        let lo = u64::from(w[1].load(Ordering::Relaxed));
        *v = f64::from_bits((hi << 32) | lo);
    }
}

/// A job of [`map_pieces`]: `job(k, piece, out)`.
pub type PieceJob<'a> = dyn Fn(usize, &mut [f64], &mut [f64]) + Sync + 'a;

/// [`for_each_piece`] where each piece's job also writes `width` numbers (`job(k, piece, out)`,
/// `out` zeroed), handed to `sink` in piece order as [`map_jobs`] does: a pass that writes
/// every row and sums over them at once, with results that cannot depend on `p`.
pub fn map_pieces(
    p: Option<&dyn ParallelFor>,
    data: &mut [f64],
    len: usize,
    width: usize,
    job: &PieceJob<'_>,
    sink: &mut dyn FnMut(usize, &[f64]),
) {
    let len = len.max(1);
    let pieces = data.len().div_ceil(len);
    let mut buf = alloc::vec![0.0; width];
    match p {
        Some(p) if pieces > 1 => {
            use core::sync::atomic::AtomicU32;
            let slots: alloc::vec::Vec<AtomicU32> =
                (0..2 * pieces * width).map(|_| AtomicU32::new(0)).collect();
            p.for_each_piece(data, len, &|k, piece| {
                let mut out = alloc::vec![0.0; width];
                job(k, piece, &mut out);
                put(&slots[2 * k * width..2 * (k + 1) * width], &out);
            });
            for k in 0..pieces {
                get(&slots[2 * k * width..2 * (k + 1) * width], &mut buf);
                sink(k, &buf);
            }
        }
        _ => {
            for (k, piece) in data.chunks_mut(len).enumerate() {
                buf.iter_mut().for_each(|v| *v = 0.0);
                job(k, piece, &mut buf);
                sink(k, &buf);
            }
        }
    }
}

/// Runs `jobs` jobs that each write `width` numbers (`job(k, out)`, `out` zeroed), through `p`
/// when given (possibly concurrently), else one after the other, and hands each job's numbers
/// to `sink` in job order (`sink(k, values)`). The results cannot depend on `p`: a reduction
/// done in `sink` adds the jobs' partial sums in the same order either way.
pub fn map_jobs(
    p: Option<&dyn ParallelFor>,
    jobs: usize,
    width: usize,
    job: &(dyn Fn(usize, &mut [f64]) + Sync),
    sink: &mut dyn FnMut(usize, &[f64]),
) {
    let mut buf = alloc::vec![0.0; width];
    match p {
        Some(p) if jobs > 1 => {
            // Each job's numbers in its own slots (`put`), read after all jobs returned.
            use core::sync::atomic::AtomicU32;
            let slots: alloc::vec::Vec<AtomicU32> =
                (0..2 * jobs * width).map(|_| AtomicU32::new(0)).collect();
            p.for_each(jobs, &|k| {
                let mut out = alloc::vec![0.0; width];
                job(k, &mut out);
                put(&slots[2 * k * width..2 * (k + 1) * width], &out);
            });
            for k in 0..jobs {
                get(&slots[2 * k * width..2 * (k + 1) * width], &mut buf);
                sink(k, &buf);
            }
        }
        _ => {
            for k in 0..jobs {
                buf.iter_mut().for_each(|v| *v = 0.0);
                job(k, &mut buf);
                sink(k, &buf);
            }
        }
    }
}
