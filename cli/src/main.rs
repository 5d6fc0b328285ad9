//! The `tallmc` command-line tool: simulate data, run samplers on CSV data, list the registry,
//! reproduce paper experiments.
//!
//! Exit codes: 0 success, 2 bad input (one `error: ...` line on stderr naming the file, line,
//! column or option), 1 internal failure.

mod cmd;

/// The system allocator, advising large blocks to use transparent huge pages when
/// `TALLMC_HUGE_PAGES=1` (by default a long stochastic-gradient run's design is moved onto them
/// after chain 0's set-up instead: `tallmc_cli::hugepages`).
#[global_allocator]
static ALLOC: tallmc_cli::hugepages::HugePages = tallmc_cli::hugepages::HugePages;

use clap::{Parser, Subcommand};
use std::io::Write;
use std::process::ExitCode;

/// MCMC for tall data.
#[derive(Parser, Debug)]
#[command(
    name = "tallmc",
    version,
    about = "tallmc: MCMC for tall data (simulate, run samplers on CSV data, reproduce papers)",
    propagate_version = true
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Simulate a synthetic data set for a model and write it as CSV.
    Simulate(cmd::simulate::SimulateArgs),
    /// Run MCMC chains on a CSV data set; writes draws.csv, summary.csv, stats.csv, run.json.
    Run(cmd::run::RunArgs),
    /// List the samplers and their settings (`--set key=value`).
    Samplers,
    /// List the models and their settings (`--set key=value`).
    Models,
    /// Reproduce an experiment of one of the papers.
    Repro(cmd::repro::ReproArgs),
    /// Measure and print the speed and cost ratios claimed in BENCHMARKS.md.
    Bench(cmd::bench::BenchArgs),
}

fn main() -> ExitCode {
    install_panic_hook();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return clap_error(e),
    };
    let result = match &cli.command {
        Command::Simulate(a) => cmd::simulate::simulate(a),
        Command::Run(a) => cmd::run::run(a),
        Command::Samplers => cmd::list::samplers(),
        Command::Models => cmd::list::models(),
        Command::Repro(a) => cmd::repro::repro(a),
        Command::Bench(a) => cmd::bench::bench(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", e.msg);
            ExitCode::from(e.code)
        }
    }
}

/// Help and version go to stdout with exit 0; every usage error becomes one line and exit 2.
fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        }
        _ => {
            eprintln!("{}", one_line(&e.render().to_string()));
            ExitCode::from(2)
        }
    }
}

/// Fold clap's multi-line message (message, tips, usage) into one line: the message and its
/// continuation lines, then a pointer to `--help`.
fn one_line(rendered: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for line in rendered.lines() {
        let t = line.trim();
        if t.starts_with("Usage:") || t.starts_with("For more information") {
            break;
        }
        if !t.is_empty() && !t.starts_with("tip:") {
            parts.push(t);
        }
    }
    let mut s = parts.join(" ");
    if !s.starts_with("error:") {
        s.insert_str(0, "error: ");
    }
    s.push_str(" (see `tallmc --help`)");
    s
}

/// A bug must still end in one readable line, not a backtrace.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            s.clone()
        } else {
            "unknown panic".to_string()
        };
        let loc = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "error: internal error: {msg}{loc} (this is a bug in tallmc; please report it)"
        );
    }));
}
