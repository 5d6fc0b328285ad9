//! The one error type of the core. Constructors and `init` return it; `step` never fails.

use alloc::string::String;
use core::fmt;

/// A number as a person reads it: plain for moderate magnitudes (`0.25`, `-3`, `1000`), in
/// exponent form otherwise (`1e300`, `1e-8`, `1e6`); `inf`, `-inf`, `NaN` as such.
pub fn number(x: f64) -> String {
    let a = if x < 0.0 { -x } else { x };
    if x == 0.0 || !x.is_finite() || (1e-4..1e5).contains(&a) {
        alloc::format!("{x}")
    } else {
        alloc::format!("{x:e}")
    }
}

/// A user's text cut to 40 characters and `…`, with control characters escaped (`\n`), so an
/// error message echoing it stays one readable line.
pub fn shorten(s: &str) -> String {
    const MAX: usize = 40;
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == MAX {
            out.push('…');
            break;
        }
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// Everything that can go wrong when building a model, kernel or chain from user input.
#[derive(Debug, Clone, PartialEq)]
pub enum Error {
    /// A setting (`--set key=value`, a sampler or model parameter) is malformed or out of range.
    InvalidSetting {
        /// The setting's key, as the user wrote it.
        key: String,
        /// What is wrong with it.
        msg: String,
    },
    /// A setting the model or sampler does not know.
    UnknownSetting {
        /// The key.
        key: String,
    },
    /// A model or sampler name that is not in the registry.
    Unknown {
        /// What kind of thing (`"model"`, `"sampler"`).
        what: &'static str,
        /// The name given.
        name: String,
    },
    /// The data cannot be used: `row` is 1-based over data rows (header excluded) when known.
    InvalidData {
        /// 1-based data row, when the problem is in one row.
        row: Option<usize>,
        /// Column name, when the problem is in one column.
        column: Option<String>,
        /// What is wrong.
        msg: String,
    },
    /// A vector or matrix has the wrong size.
    Dimension {
        /// Which argument.
        what: &'static str,
        /// Size expected.
        expected: usize,
        /// Size given.
        got: usize,
    },
    /// A matrix that must be symmetric positive definite is not.
    NotPositiveDefinite,
    /// The log density (or its gradient) is not finite at the starting point.
    NonFiniteStart,
    /// A numerical procedure failed (an optimiser did not converge, ...).
    Numerical(String),
}

impl Error {
    /// Shorthand for [`Error::InvalidSetting`].
    pub fn setting(key: &str, msg: impl Into<String>) -> Self {
        Error::InvalidSetting {
            key: key.into(),
            msg: msg.into(),
        }
    }
    /// `Ok` when `got == expected`, else [`Error::Dimension`] for `what`.
    pub fn check_dim(what: &'static str, expected: usize, got: usize) -> Result<(), Self> {
        if got == expected {
            Ok(())
        } else {
            Err(Error::Dimension {
                what,
                expected,
                got,
            })
        }
    }
    /// `Ok(value)` when the setting `key` is positive and finite, else [`Error::InvalidSetting`].
    pub fn check_positive(key: &str, value: f64) -> Result<f64, Self> {
        if value > 0.0 && value.is_finite() {
            Ok(value)
        } else {
            Err(Error::setting(
                key,
                alloc::format!("{} is not a positive finite number", number(value)),
            ))
        }
    }
    /// Shorthand for [`Error::InvalidData`] without row or column.
    pub fn data(msg: impl Into<String>) -> Self {
        Error::InvalidData {
            row: None,
            column: None,
            msg: msg.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            // Names and keys come from the user: cut and escaped so the message stays one line.
            Error::InvalidSetting { key, msg } => {
                write!(f, "invalid setting `{}`: {msg}", shorten(key))
            }
            Error::UnknownSetting { key } => write!(f, "unknown setting `{}`", shorten(key)),
            Error::Unknown { what, name } => write!(f, "unknown {what} `{}`", shorten(name)),
            Error::InvalidData { row, column, msg } => {
                let column = column.as_deref().map(shorten);
                match (row, column) {
                    (Some(r), Some(c)) => write!(f, "data row {r}, column `{c}`: ")?,
                    (Some(r), None) => write!(f, "data row {r}: ")?,
                    (None, Some(c)) => write!(f, "column `{c}`: ")?,
                    (None, None) => write!(f, "data: ")?,
                }
                f.write_str(msg)
            }
            Error::Dimension {
                what,
                expected,
                got,
            } => {
                write!(f, "{what} has length {got}, expected {expected}")
            }
            Error::NotPositiveDefinite => f.write_str("matrix is not positive definite"),
            Error::NonFiniteStart => {
                f.write_str("log density or gradient is not finite at the starting point")
            }
            Error::Numerical(m) => write!(f, "numerical failure: {m}"),
        }
    }
}

impl core::error::Error for Error {}
