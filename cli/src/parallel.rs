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
    fn for_each_piece(&self, data: &mut [f64], len: usize, f: &(dyn Fn(usize, &mut [f64]) + Sync)) {
        // The pieces dealt out in turn to the threads: each thread owns its pieces (no sharing).
        let mut groups: Vec<Vec<(usize, &mut [f64])>> =
            (0..self.threads).map(|_| Vec::new()).collect();
        for (k, piece) in data.chunks_mut(len.max(1)).enumerate() {
            groups[k % self.threads].push((k, piece));
        }
        std::thread::scope(|s| {
            let mut groups = groups.into_iter();
            let own = groups.next().unwrap_or_default();
            for g in groups.filter(|g| !g.is_empty()) {
                s.spawn(move || {
                    for (k, piece) in g {
                        f(k, piece);
                    }
                });
            }
            for (k, piece) in own {
                f(k, piece);
            }
        });
    }
}

/// Threads per full-data pass when `chains` chains run at once, one thread each: the cores left
/// over (`TALLMC_PASS_THREADS` overrides; 1 = no splitting). Used by `tallmc run` and the Python
/// package; the draws do not depend on it.
pub fn pass_threads(chains: usize) -> usize {
    if let Some(t) = std::env::var("TALLMC_PASS_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        return t.max(1);
    }
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    (cores / chains.max(1)).max(1)
}
