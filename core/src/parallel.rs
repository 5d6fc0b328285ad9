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
}
