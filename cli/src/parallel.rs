//! [`tallmc_core::parallel::ParallelFor`] on OS threads: the chunks of a full-data pass are
//! shared out among `threads` scoped threads (the calling one included), each taking the next
//! chunk from an atomic counter. The core fixes the reduction order, so the results are
//! bit-identical to a single thread's.

use std::sync::atomic::{AtomicUsize, Ordering};
use tallmc_core::parallel::ParallelFor;

/// Scoped threads per call.
#[derive(Debug, Clone, Copy)]
pub struct Threads {
    threads: usize,
}

impl Threads {
    /// Use `threads` threads (at least 1) per pass.
    pub fn new(threads: usize) -> Self {
        Threads {
            threads: threads.max(1),
        }
    }
}

impl ParallelFor for Threads {
    fn for_each(&self, jobs: usize, f: &(dyn Fn(usize) + Sync)) {
        let next = AtomicUsize::new(0);
        let work = || loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            if k >= jobs {
                break;
            }
            f(k);
        };
        let helpers = self.threads.min(jobs).saturating_sub(1);
        std::thread::scope(|s| {
            for _ in 0..helpers {
                s.spawn(work);
            }
            work();
        });
    }
    fn threads(&self) -> usize {
        self.threads
    }
}
