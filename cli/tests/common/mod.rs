//! Shared helpers of the CLI's end-to-end tests: a self-removing temp directory and a runner
//! for the `tallmc` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_tallmc");

/// A directory under the system temp dir, unique per process and call, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let k = COUNT.fetch_add(1, Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("tallmc-test-{}-{name}-{k}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
    pub fn file(&self, name: &str, contents: &[u8]) -> String {
        let p = self.0.join(name);
        std::fs::write(&p, contents).unwrap();
        p.display().to_string()
    }
    pub fn join(&self, name: &str) -> String {
        self.0.join(name).display().to_string()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Run `tallmc` with `args`.
pub fn tallmc(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .output()
        .expect("the tallmc binary runs")
}

/// Exit code 2 and exactly one short stderr line `error: …` (no panic text) containing every
/// `needle` and none of `absent`; returns the line.
pub fn assert_input_error(args: &[&str], needles: &[&str], absent: &[&str]) -> String {
    let out = tallmc(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let shown: String = stderr.chars().take(400).collect();
    assert_eq!(
        out.status.code(),
        Some(2),
        "args {:?}: expected exit 2, stderr: {shown}",
        args.iter()
            .map(|a| a.chars().take(60).collect::<String>())
            .collect::<Vec<_>>()
    );
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "stderr is not one line: {shown}");
    assert!(lines[0].starts_with("error: "), "{shown}");
    assert!(!stderr.contains("panicked"), "{shown}");
    assert!(
        lines[0].len() < 600,
        "error line of {} bytes",
        lines[0].len()
    );
    for n in needles {
        assert!(lines[0].contains(n), "`{n}` not in: {shown}");
    }
    for a in absent {
        assert!(!lines[0].contains(a), "`{a}` in: {shown}");
    }
    lines[0].to_string()
}

/// The draws.csv of a short `mala` run (logistic, `response`, seed 5, no KSD) on `data`, written
/// under `out`: the file readers' tests compare these byte for byte across formats.
pub fn mala_draws(data: &str, response: &str, out: &str) -> String {
    mala_draws_with(data, response, out, &[])
}

/// [`mala_draws`] with `extra` options appended (`--features`, `--standardize`, ...).
#[allow(dead_code)]
pub fn mala_draws_with(data: &str, response: &str, out: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "run",
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        response,
        "--sampler",
        "mala",
        "--chains",
        "1",
        "--warmup",
        "200",
        "--draws",
        "200",
        "--seed",
        "5",
        "--no-ksd",
        "--out",
        out,
    ];
    args.extend_from_slice(extra);
    let o = tallmc(&args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{data} {extra:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(Path::new(out).join("draws.csv")).unwrap()
}

/// `tallmc run` on the data file `data` must exit 2 with one line on stderr; returns it.
pub fn refused_file(data: &str, out: &str) -> String {
    let o = tallmc(&[
        "run",
        "--data",
        data,
        "--model",
        "logistic",
        "--response",
        "y",
        "--sampler",
        "mala",
        "--out",
        out,
    ]);
    let err = String::from_utf8_lossy(&o.stderr).trim().to_string();
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}
