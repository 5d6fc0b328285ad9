//! A seeded fuzz driver on stable Rust: every case draws its input from its own xoshiro256++
//! stream seeded by (seed, case) through SplitMix64, so a failure names the seed and case that reproduce
//! it. A case fails when it panics, when its check returns an error, or when it runs longer than
//! [`HANG_SECONDS`] (a watchdog thread; timings decide nothing else).
//!
//! Environment: `TALLMC_FUZZ_CASES` (cases per target; each target has a short default for
//! `cargo test`), `TALLMC_FUZZ_SEED` (default [`SEED`]), `TALLMC_FUZZ_FIRST` (first case index,
//! to replay one failure with `TALLMC_FUZZ_CASES=1`), `TALLMC_FUZZ_TRACE=1` (print every case's
//! input to stderr before running it: an abort, which no driver survives, is then named by the
//! last line).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tallmc_core::rng::{ChainRng, Rng, SeedableRng};

/// The fixed default seed.
pub const SEED: u64 = 0x7a11_c0de;
/// A case running longer than this is reported as a hang.
pub const HANG_SECONDS: u64 = 30;
/// Longest error message accepted (characters).
pub const MAX_MESSAGE: usize = 300;

/// One fuzz case: its random stream and a description of its input (set by the case before it
/// calls the code under test, printed if that code panics or hangs).
pub struct Case {
    /// The case's own random stream.
    pub rng: ChainRng,
    input: Arc<Mutex<String>>,
    trace: bool,
}

impl Case {
    /// Record what the case is about to feed the code under test.
    pub fn input(&mut self, describe: impl FnOnce() -> String) {
        let text = describe();
        if self.trace {
            eprintln!("case input: {}", text.chars().take(500).collect::<String>());
        }
        if let Ok(mut s) = self.input.lock() {
            *s = text;
        }
    }

    /// A uniform integer in `0..n` (`n` ≥ 1).
    pub fn below(&mut self, n: usize) -> usize {
        tallmc_core::rng::uniform_index(&mut self.rng, n.max(1))
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        tallmc_core::rng::uniform(&mut self.rng) < p
    }

    /// A uniform number in [0, 1).
    pub fn unit(&mut self) -> f64 {
        tallmc_core::rng::uniform(&mut self.rng)
    }

    /// One element of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// A random 64-bit word.
    pub fn word(&mut self) -> u64 {
        self.rng.next_u64()
    }
}

/// What a run of one target did.
#[derive(Debug, Clone)]
pub struct Report {
    /// Cases run.
    pub cases: u64,
    /// Cases whose input the code under test refused with an error (no failure).
    pub refused: u64,
    /// Wall time.
    pub seconds: f64,
    /// Slowest case, seconds.
    pub slowest: f64,
    /// Index of the slowest case.
    pub slowest_case: u64,
}

/// The stream of case `i`: SplitMix64 of a mix of the seed and the index (O(1), unlike
/// `chain_rng`'s jumps).
pub fn case_rng(seed: u64, i: u64) -> ChainRng {
    ChainRng::seed_from_u64(seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Cases per target: `TALLMC_FUZZ_CASES`, else `default_cases`.
pub fn cases(default_cases: u64) -> u64 {
    env_u64("TALLMC_FUZZ_CASES").unwrap_or(default_cases)
}

fn env_u64(key: &str) -> Option<u64> {
    let v = std::env::var(key).ok()?;
    let v = v.trim().replace('_', "");
    match v.parse::<f64>() {
        // 1e6 as well as 1000000
        Ok(x) if x >= 0.0 && x.fract() == 0.0 && !v.starts_with("0x") => Some(x as u64),
        _ => u64::from_str_radix(v.trim_start_matches("0x"), 16).ok(),
    }
}

/// Whether an error message keeps the contract: one line, at most [`MAX_MESSAGE`] characters,
/// not empty.
pub fn check_message(msg: &str) -> Result<(), String> {
    let n = msg.chars().count();
    if msg.trim().is_empty() || n > MAX_MESSAGE || msg.contains('\n') || msg.contains('\r') {
        let shown: String = msg.chars().take(400).collect();
        return Err(format!(
            "error message of {n} characters is not one short line: {shown:?}"
        ));
    }
    Ok(())
}

/// Run target `name`: `default_cases` cases (or `TALLMC_FUZZ_CASES`), each calling `case`,
/// which returns `Ok(true)` when the input was accepted, `Ok(false)` when it was refused with
/// a proper error, `Err` when an invariant broke. Panics (failing the test) on the first failure
/// with the seed, the case and its input; prints one line with the counts and the duration.
pub fn run<F>(name: &str, default_cases: u64, case: F) -> Report
where
    F: Fn(&mut Case) -> Result<bool, String> + Send + 'static,
{
    let cases = cases(default_cases);
    let seed = env_u64("TALLMC_FUZZ_SEED").unwrap_or(SEED);
    let first = env_u64("TALLMC_FUZZ_FIRST").unwrap_or(0);
    let trace = std::env::var_os("TALLMC_FUZZ_TRACE").is_some();
    let input = Arc::new(Mutex::new(String::new()));
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let done = Arc::new(AtomicBool::new(false));
    let worker = {
        let (input, current, done) = (input.clone(), current.clone(), done.clone());
        let name = name.to_string();
        std::thread::spawn(move || {
            let started = Instant::now();
            let mut refused = 0;
            let mut slowest: f64 = 0.0;
            let mut slowest_case = first;
            for i in first..first + cases {
                current.store(i, Ordering::SeqCst);
                let mut c = Case {
                    rng: case_rng(seed, i),
                    input: input.clone(),
                    trace,
                };
                let t = Instant::now();
                let r = catch_unwind(AssertUnwindSafe(|| case(&mut c)));
                let took = t.elapsed().as_secs_f64();
                if took > slowest {
                    slowest = took;
                    slowest_case = i;
                }
                let fail = match r {
                    Ok(Ok(true)) => None,
                    Ok(Ok(false)) => {
                        refused += 1;
                        None
                    }
                    Ok(Err(e)) => Some(e),
                    Err(p) => Some(format!(
                        "panicked: {}",
                        p.downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_default()
                    )),
                };
                if let Some(e) = fail {
                    done.store(true, Ordering::SeqCst);
                    let shown: String = input
                        .lock()
                        .map(|s| s.chars().take(500).collect())
                        .unwrap_or_default();
                    return Err(format!(
                        "fuzz {name}: case {i} (TALLMC_FUZZ_SEED={seed:#x} TALLMC_FUZZ_FIRST={i} \
                         TALLMC_FUZZ_CASES=1): {e}\ninput: {shown}"
                    ));
                }
            }
            done.store(true, Ordering::SeqCst);
            Ok(Report {
                cases,
                refused,
                seconds: started.elapsed().as_secs_f64(),
                slowest,
                slowest_case,
            })
        })
    };
    // Watchdog: the same case for longer than HANG_SECONDS is a hang.
    let mut seen = u64::MAX;
    let mut since = Instant::now();
    while !done.load(Ordering::SeqCst) && !worker.is_finished() {
        std::thread::sleep(Duration::from_millis(50));
        let now = current.load(Ordering::SeqCst);
        if now != seen {
            seen = now;
            since = Instant::now();
        } else if since.elapsed() > Duration::from_secs(HANG_SECONDS) {
            let shown: String = input
                .lock()
                .map(|s| s.chars().take(500).collect())
                .unwrap_or_default();
            panic!(
                "fuzz {name}: case {now} (TALLMC_FUZZ_SEED={seed:#x} TALLMC_FUZZ_FIRST={now} \
                 TALLMC_FUZZ_CASES=1) ran longer than {HANG_SECONDS} s\ninput: {shown}"
            );
        }
    }
    match worker.join() {
        Ok(Ok(r)) => {
            println!(
                "fuzz {name}: seed {seed:#x}, {} cases ({} refused with an error), 0 failures, \
                 {:.1} s (slowest: case {}, {:.1} ms)",
                r.cases,
                r.refused,
                r.seconds,
                r.slowest_case,
                r.slowest * 1e3
            );
            r
        }
        Ok(Err(e)) => panic!("{e}"),
        Err(_) => panic!("fuzz {name}: the driver thread panicked"),
    }
}
