//! [`tallmc_core::parallel::ParallelFor`] on OS threads: [`Pool`] (persistent helper threads,
//! what `tallmc run` and the Python package use) and [`Threads`] (scoped threads per call).
//! Either shares the jobs of a call among its threads (the calling one included), each taking
//! the next job from an atomic counter. The core fixes the reduction order, so the results are
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

/// Persistent helper threads for [`ParallelFor`], for work split finely: a call costs about a
/// microsecond instead of a thread start (≈ 20 µs for [`Threads`]), so that one HMC-ECS
/// gradient evaluation (≈ 40 µs at m = 1 300) can be shared too. Between calls each helper
/// spins for [`Pool::SPIN`], then sleeps until the next call wakes it. The jobs of one call are
/// taken from a counter, as in [`Threads`], so the core's fixed reduction order gives the same
/// bits. A call made while another is running (chains sharing one model) runs on its own
/// thread alone.
pub struct Pool {
    shared: std::sync::Arc<Shared>,
    helpers: Vec<std::thread::JoinHandle<()>>,
    threads: usize,
    busy: std::sync::Mutex<()>,
}

/// A job of the running call: `f` with its lifetime erased (see [`Pool::for_each`]).
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the pointee is `Sync` and outlives every use (the call waits for all of them).
unsafe impl Send for JobRef {}

struct Shared {
    /// The call's epoch (bumped by each call) and job, read together.
    job: std::sync::Mutex<(u32, Option<JobRef>, usize)>,
    epoch: std::sync::atomic::AtomicU32,
    /// High 32 bits: the epoch the counter belongs to; low 32 bits: the next job index.
    next: std::sync::atomic::AtomicU64,
    /// Jobs finished in this call.
    done: std::sync::atomic::AtomicUsize,
    panicked: std::sync::atomic::AtomicBool,
    stop: std::sync::atomic::AtomicBool,
}

impl Shared {
    /// Take the next job index of epoch `e` (none when the call has moved on or has no more).
    fn claim(&self, e: u32, jobs: usize) -> Option<usize> {
        use std::sync::atomic::Ordering;
        let mut v = self.next.load(Ordering::Acquire);
        loop {
            let (ve, k) = ((v >> 32) as u32, (v & 0xffff_ffff) as usize);
            if ve != e || k >= jobs {
                return None;
            }
            match self
                .next
                .compare_exchange_weak(v, v + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(k),
                Err(now) => v = now,
            }
        }
    }

    /// Run the jobs of epoch `e` until none is left.
    fn work(&self, e: u32, job: JobRef, jobs: usize) {
        use std::sync::atomic::Ordering;
        while let Some(k) = self.claim(e, jobs) {
            // SAFETY: `job` points to the `f` of the call of epoch `e`, which does not return
            // before `done` counts this job, so `f` is alive here.
            let f = unsafe { &*job.0 };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k))).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }
}

impl Pool {
    /// How long an idle helper spins before it sleeps.
    pub const SPIN: std::time::Duration = std::time::Duration::from_micros(200);

    /// `threads` threads per call (at least 1): the calling thread and `threads − 1` helpers.
    pub fn new(threads: usize) -> Self {
        use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};
        let threads = threads.max(1);
        let shared = std::sync::Arc::new(Shared {
            job: std::sync::Mutex::new((0, None, 0)),
            epoch: AtomicU32::new(0),
            next: AtomicU64::new(0),
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            stop: AtomicBool::new(false),
        });
        let helpers = (1..threads)
            .filter_map(|_| {
                let sh = shared.clone();
                std::thread::Builder::new()
                    .name("tallmc-pass".into())
                    .spawn(move || helper(&sh))
                    .ok()
            })
            .collect();
        Pool {
            shared,
            helpers,
            threads,
            busy: std::sync::Mutex::new(()),
        }
    }
}

fn helper(sh: &Shared) {
    use std::sync::atomic::Ordering;
    let mut seen = 0u32;
    loop {
        // Wait for a new call: spin, then sleep (a call unparks every helper).
        let t0 = std::time::Instant::now();
        let mut spins = 0u32;
        loop {
            if sh.stop.load(Ordering::Acquire) {
                return;
            }
            if sh.epoch.load(Ordering::Acquire) != seen {
                break;
            }
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(64) || t0.elapsed() < Pool::SPIN {
                std::hint::spin_loop();
            } else {
                std::thread::park_timeout(std::time::Duration::from_millis(50));
            }
        }
        let (e, job, jobs) = *sh.job.lock().unwrap_or_else(|p| p.into_inner());
        seen = e;
        if let Some(job) = job {
            sh.work(e, job, jobs);
        }
    }
}

impl ParallelFor for Pool {
    fn for_each(&self, jobs: usize, f: &(dyn Fn(usize) + Sync)) {
        use std::sync::atomic::Ordering;
        let guard = match self.busy.try_lock() {
            Ok(g) if !self.helpers.is_empty() && jobs > 1 && jobs < u32::MAX as usize => g,
            // One job, no helper, or another call running: this thread alone.
            _ => {
                for k in 0..jobs {
                    f(k);
                }
                return;
            }
        };
        let sh = &*self.shared;
        let ptr: *const (dyn Fn(usize) + Sync + '_) = f;
        // SAFETY: only the lifetime is erased; the helpers use `job` only for claimed jobs of
        // this epoch, and this call returns only after `done` counts every job (panics are
        // caught in the jobs), so no use outlives `f`.
        let job = JobRef(unsafe {
            std::mem::transmute::<
                *const (dyn Fn(usize) + Sync + '_),
                *const (dyn Fn(usize) + Sync + 'static),
            >(ptr)
        });
        let e = sh.epoch.load(Ordering::Relaxed).wrapping_add(1);
        sh.done.store(0, Ordering::Relaxed);
        sh.panicked.store(false, Ordering::Relaxed);
        *sh.job.lock().unwrap_or_else(|p| p.into_inner()) = (e, Some(job), jobs);
        sh.next.store(u64::from(e) << 32, Ordering::Release);
        sh.epoch.store(e, Ordering::Release);
        for h in &self.helpers {
            h.thread().unpark();
        }
        sh.work(e, job, jobs);
        while sh.done.load(Ordering::Acquire) < jobs {
            std::hint::spin_loop();
        }
        *sh.job.lock().unwrap_or_else(|p| p.into_inner()) = (e, None, 0);
        let panicked = sh.panicked.load(Ordering::Relaxed);
        drop(guard);
        if panicked {
            panic!("a job of a parallel pass panicked");
        }
    }
    fn threads(&self) -> usize {
        self.threads
    }
    fn for_each_piece(&self, data: &mut [f64], len: usize, f: &(dyn Fn(usize, &mut [f64]) + Sync)) {
        // Each piece behind its own lock: a job takes only its own (no waiting).
        let pieces: Vec<std::sync::Mutex<&mut [f64]>> = data
            .chunks_mut(len.max(1))
            .map(std::sync::Mutex::new)
            .collect();
        self.for_each(pieces.len(), &|k| {
            let mut piece = pieces[k].lock().unwrap_or_else(|p| p.into_inner());
            f(k, &mut piece);
        });
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared
            .stop
            .store(true, std::sync::atomic::Ordering::Release);
        for h in self.helpers.drain(..) {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

/// A [`ParallelFor`] whose executor can be replaced between calls: the front ends give the
/// model one over every core for the model's build and chain 0's set-up (nothing else runs
/// then), and replace it by the cores the chains leave ([`pass_threads`]) before the chains
/// start. Each call runs on the executor it finds; the results never depend on which.
pub struct Switchable {
    inner: std::sync::RwLock<std::sync::Arc<dyn ParallelFor>>,
}

impl Switchable {
    /// Starting with `p`.
    pub fn new(p: std::sync::Arc<dyn ParallelFor>) -> Self {
        Switchable {
            inner: std::sync::RwLock::new(p),
        }
    }

    /// Calls from now on run on `p` (a call under way finishes on the executor it started on;
    /// the old executor is dropped after its last call).
    pub fn set(&self, p: std::sync::Arc<dyn ParallelFor>) {
        *self.inner.write().unwrap_or_else(|e| e.into_inner()) = p;
    }

    fn current(&self) -> std::sync::Arc<dyn ParallelFor> {
        self.inner.read().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl ParallelFor for Switchable {
    fn for_each(&self, jobs: usize, f: &(dyn Fn(usize) + Sync)) {
        self.current().for_each(jobs, f)
    }
    fn threads(&self) -> usize {
        self.current().threads()
    }
    fn for_each_piece(&self, data: &mut [f64], len: usize, f: &(dyn Fn(usize, &mut [f64]) + Sync)) {
        self.current().for_each_piece(data, len, f)
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// Every job runs once on the executor of the moment; `threads` reports it; a replaced
    /// pool's helpers end (its drop joins them) while the new one serves.
    #[test]
    fn a_switchable_runs_every_job_on_the_executor_it_holds() {
        let s = Switchable::new(Arc::new(Pool::new(3)));
        let run = |s: &Switchable| {
            let hits: Vec<AtomicUsize> = (0..100).map(|_| AtomicUsize::new(0)).collect();
            s.for_each(100, &|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1)
        };
        assert_eq!(s.threads(), 3);
        assert!(run(&s));
        s.set(Arc::new(Pool::new(1)));
        assert_eq!(s.threads(), 1);
        assert!(run(&s));
        s.set(Arc::new(Threads::new(2)));
        assert_eq!(s.threads(), 2);
        let mut data = vec![0.0; 10];
        s.for_each_piece(&mut data, 3, &|k, piece| {
            piece.iter_mut().for_each(|v| *v = k as f64);
        });
        assert_eq!(data, [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0]);
    }
}
