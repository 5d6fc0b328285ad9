//! The subcommands, and the one error type they return.

pub mod bench;
pub mod list;
pub mod repro;
pub mod run;
pub mod simulate;

use tallmc_cli::csvdata::RowLines;
use tallmc_cli::messages::push_data_error;
pub use tallmc_cli::messages::unknown;
use tallmc_core::Error;

/// A failure to report: one line on stderr and an exit code.
#[derive(Debug)]
pub struct CliError {
    /// The message, without the leading `error: `.
    pub msg: String,
    /// 2 for bad input, 1 for internal failures.
    pub code: u8,
}

impl CliError {
    /// Bad input (exit code 2).
    pub fn input(msg: impl Into<String>) -> Self {
        CliError {
            msg: msg.into(),
            code: 2,
        }
    }
    /// An internal failure (exit code 1).
    pub fn internal(msg: impl Into<String>) -> Self {
        CliError {
            msg: msg.into(),
            code: 1,
        }
    }
}

/// What a core error refers to, so its message can name the file, line and option.
#[derive(Default)]
pub struct ErrorContext<'a> {
    /// The data file as the user named it.
    pub data: Option<&'a str>,
    /// Line of every data row of a CSV file, for errors that name a row (None for a binary
    /// table: errors then name the row).
    pub lines: Option<&'a RowLines>,
    /// The command's own option for `Unknown { what: "model" }` etc.
    pub model: Option<&'a str>,
    /// The sampler name.
    pub sampler: Option<&'a str>,
    /// The user's `--set` options, to tell a `--set` key from a command-line option.
    pub settings: Option<&'a tallmc_core::settings::Settings>,
}

/// Command-line options the core may name as a setting key (`model`, `n`, `d`, ...).
const OPTION_KEYS: &[&str] = &[
    "model", "sampler", "n", "d", "seed", "chains", "warmup", "draws", "response", "features",
];

impl ErrorContext<'_> {
    /// A core error as one line naming what the user has to change. Every core error comes from
    /// user input (data or settings), so all of them exit with code 2.
    pub fn describe(&self, e: &Error) -> CliError {
        let msg = match e {
            Error::InvalidSetting { key, msg } => {
                let given = self
                    .settings
                    .is_some_and(|s| s.iter().any(|(k, _)| k == key));
                if !given && OPTION_KEYS.contains(&key.as_str()) {
                    format!("--{key}: {msg}")
                } else {
                    format!("--set {key}: {msg}")
                }
            }
            Error::UnknownSetting { key } => {
                let mut owners = Vec::new();
                if let Some(m) = self.model {
                    owners.push(format!("model `{m}`"));
                }
                if let Some(s) = self.sampler {
                    owners.push(format!("sampler `{s}`"));
                }
                let owners = if owners.is_empty() {
                    String::new()
                } else {
                    format!(" for {}", owners.join(" and "))
                };
                format!(
                    "--set {key}: unknown option `{key}`{owners} \
                     (see `tallmc models` and `tallmc samplers`)"
                )
            }
            Error::Unknown { what, name } => unknown(what, name),
            Error::InvalidData { row, column, msg } => {
                let mut s = String::new();
                if let Some(f) = self.data {
                    s.push_str(f);
                    s.push_str(": ");
                }
                // A CSV file's line; a binary table's (1-based) row.
                push_data_error(&mut s, *row, column.as_deref(), msg, |r| match self.lines {
                    Some(l) => format!("line {}", l.line_of_row(r)),
                    None => format!("row {r}"),
                });
                s
            }
            other => match self.data {
                Some(f) => format!("{f}: {other}"),
                None => other.to_string(),
            },
        };
        CliError::input(msg)
    }
}

/// Parse repeated `--set key=value` options.
pub fn settings_from(pairs: &[String]) -> Result<tallmc_core::settings::Settings, CliError> {
    let mut s = tallmc_core::settings::Settings::new();
    for p in pairs {
        s.insert_pair(p).map_err(|_| {
            CliError::input(format!(
                "--set {}: expected key=value",
                tallmc_core::settings::shorten(p)
            ))
        })?;
    }
    Ok(s)
}

/// An I/O error without the `(os error 2)` noise.
pub fn io_msg(e: &std::io::Error) -> String {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::NotFound => "no such file or directory".into(),
        ErrorKind::PermissionDenied => "permission denied".into(),
        ErrorKind::IsADirectory => "is a directory".into(),
        _ => {
            let s = e.to_string();
            match s.find(" (os error") {
                Some(k) => s[..k].to_string(),
                None => s,
            }
        }
    }
}

/// Whether the allocator grants `bytes` now (asked for and given back at once), so that a size
/// the machine cannot hold is an input error instead of an allocation abort later. `None`
/// (the size overflowed) does not fit.
pub(crate) fn fits_in_memory(bytes: Option<usize>) -> bool {
    bytes.is_some_and(|b| Vec::<u8>::new().try_reserve_exact(b).is_ok())
}
