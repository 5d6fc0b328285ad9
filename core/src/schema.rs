//! The schema of samplers and models: each parameter's key, description, type, range and
//! default, declared once and read by settings parsing, the command line's help and the
//! browser's forms. Below every sampler and model (they declare their schemas here) and below
//! the registry (which lists them).

use crate::error::Error;
use crate::settings::Settings;

/// One tunable parameter of a sampler or model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Key used in `--set key=value` and in the browser config.
    pub key: &'static str,
    /// One line for a form label or `--help`.
    pub description: &'static str,
    /// What values it takes.
    pub kind: ParamKind,
}

/// Reading a parameter from user settings with the schema's own default and range, so each
/// default and bound is written once (here, in the schema) and the parser cannot drift from
/// what `--help` and the browser's forms show. Each reader marks the key used. Reading a
/// parameter with the reader of another kind is a programming error, reported as an invalid
/// setting naming the key (never a panic).
impl ParamSpec {
    /// A finite real number > 0 (`(0, inf)`, both ends open) with default `default`: the
    /// shape of most model hyperparameters (scales, variances, precisions).
    pub const fn positive(key: &'static str, description: &'static str, default: f64) -> Self {
        ParamSpec {
            key,
            description,
            kind: ParamKind::RealOpen {
                default,
                min: 0.0,
                max: f64::INFINITY,
                min_open: true,
                max_open: true,
            },
        }
    }

    fn kind_error(&self, want: &str) -> Error {
        Error::setting(
            self.key,
            alloc::format!("internal: the schema does not declare a {want}"),
        )
    }

    /// A real number in the declared range ([`ParamKind::real_range`]), the default when
    /// absent (`Real` or `RealOpen` with a finite default).
    pub fn real(&self, s: &Settings) -> Result<f64, Error> {
        match self.kind {
            ParamKind::Real { default, min, max } => s.f64_in(self.key, default, min, max),
            ParamKind::RealOpen { default, .. } => {
                let v = s.f64_or(self.key, default)?;
                match self.kind.real_range() {
                    Some(r) if r.contains(v) => Ok(v),
                    Some(r) => Err(Error::setting(
                        self.key,
                        alloc::format!("{} is outside {r}", crate::settings::number(v)),
                    )),
                    None => Err(self.kind_error("real number")),
                }
            }
            _ => Err(self.kind_error("real number")),
        }
    }

    /// A finite number > 0, or NaN ("choose automatically") when absent or `auto` (`Real` with
    /// default NaN and min 0: step sizes).
    pub fn positive_or_auto(&self, s: &Settings) -> Result<f64, Error> {
        match self.kind {
            ParamKind::Real { default, .. } if default.is_nan() => s.positive_or_auto(self.key),
            _ => Err(self.kind_error("automatic positive number")),
        }
    }

    /// A whole number in `[min, max]`, the default when absent (`Int`).
    pub fn int(&self, s: &Settings) -> Result<usize, Error> {
        match self.kind {
            ParamKind::Int { default, min, max } => s.usize_in(self.key, default, min, max),
            _ => Err(self.kind_error("whole number")),
        }
    }

    /// A whole number in `[min, max]`, or `None` ("choose automatically") when absent or
    /// `auto` if the schema's default is 0 (automatic); with a non-zero default, the default
    /// when absent (as [`ParamSpec::int`]).
    pub fn int_or_auto(&self, s: &Settings) -> Result<Option<usize>, Error> {
        match self.kind {
            ParamKind::Int {
                default: 0,
                min,
                max,
            } => s.usize_or_auto(self.key, min, max),
            ParamKind::Int { default, min, max } => {
                s.usize_in(self.key, default, min, max).map(Some)
            }
            _ => Err(self.kind_error("whole number")),
        }
    }

    /// One of the listed words, the first when absent (`Choice`).
    pub fn choice(&self, s: &Settings) -> Result<&'static str, Error> {
        match self.kind {
            ParamKind::Choice(c) if !c.is_empty() => s.choice(self.key, c[0], c),
            _ => Err(self.kind_error("choice")),
        }
    }

    /// true/false, the default when absent (`Bool`).
    pub fn flag(&self, s: &Settings) -> Result<bool, Error> {
        match self.kind {
            ParamKind::Bool(b) => s.bool_or(self.key, b),
            _ => Err(self.kind_error("flag")),
        }
    }
}

/// The type and range of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`; `default` NaN means "chosen automatically".
    Real {
        /// Default value (NaN: automatic).
        default: f64,
        /// Smallest allowed value.
        min: f64,
        /// Largest allowed value.
        max: f64,
    },
    /// A real number between `min` and `max` where an end may be open (the bound itself is
    /// refused), as `(0, 0.5)` or `(0, inf)`; otherwise as [`ParamKind::Real`].
    RealOpen {
        /// Default value (NaN: automatic).
        default: f64,
        /// Lower bound.
        min: f64,
        /// Upper bound.
        max: f64,
        /// Whether `min` itself is refused.
        min_open: bool,
        /// Whether `max` itself is refused.
        max_open: bool,
    },
    /// A whole number in `[min, max]`; `default` 0 with `auto` means "chosen automatically".
    Int {
        /// Default value.
        default: usize,
        /// Smallest allowed value.
        min: usize,
        /// Largest allowed value.
        max: usize,
    },
    /// One word of a fixed list; the first is the default.
    Choice(&'static [&'static str]),
    /// true/false.
    Bool(bool),
}

/// The range of a real parameter exactly as validated: each end closed (the bound accepted)
/// or open (refused). Displays as `[0, 1)`, `(0, inf)`, with readable numbers (`1e-8`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RealRange {
    /// Lower bound.
    pub min: f64,
    /// Whether `min` itself is refused.
    pub min_open: bool,
    /// Upper bound.
    pub max: f64,
    /// Whether `max` itself is refused.
    pub max_open: bool,
}

impl RealRange {
    /// Whether `v` is accepted.
    pub fn contains(&self, v: f64) -> bool {
        let above = if self.min_open {
            v > self.min
        } else {
            v >= self.min
        };
        let below = if self.max_open {
            v < self.max
        } else {
            v <= self.max
        };
        above && below
    }
}

impl core::fmt::Display for RealRange {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        use crate::settings::number;
        write!(
            f,
            "{}{}, {}{}",
            if self.min_open { '(' } else { '[' },
            number(self.min),
            number(self.max),
            if self.max_open { ')' } else { ']' }
        )
    }
}

impl ParamKind {
    /// The range of a real parameter as its reader validates it. For `Real`, infinite ends are
    /// open (only finite numbers are read), and so is the 0 of a `Real` with default NaN and
    /// min 0 (read by [`ParamSpec::positive_or_auto`]: a number > 0, or auto); `RealOpen`
    /// states both ends itself (an infinite end may be closed: a reader that takes `inf`).
    /// `None` for other kinds.
    pub fn real_range(&self) -> Option<RealRange> {
        let (min, max, min_open, max_open) = match *self {
            ParamKind::Real { default, min, max } => {
                (min, max, default.is_nan() && min == 0.0, false)
            }
            ParamKind::RealOpen {
                min,
                max,
                min_open,
                max_open,
                ..
            } => (min, max, min_open, max_open),
            _ => return None,
        };
        let explicit = matches!(self, ParamKind::RealOpen { .. });
        Some(RealRange {
            min,
            min_open: min_open || (!explicit && !min.is_finite()),
            max,
            max_open: max_open || (!explicit && !max.is_finite()),
        })
    }
}

/// A sampler as the user sees it.
#[derive(Debug, Clone, Copy)]
pub struct SamplerInfo {
    /// Name used on the command line and in the browser.
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// Whether it targets the posterior exactly.
    pub exact: bool,
    /// Whether its draws carry signs.
    pub signed: bool,
    /// Models it supports (empty: every data model).
    pub models: &'static [&'static str],
    /// Its parameters.
    pub params: &'static [ParamSpec],
}

impl SamplerInfo {
    /// The parameter `key` of this sampler's schema (an error naming the key if it has none:
    /// a parser reading an undeclared key is a programming error, never a panic).
    pub fn param(&self, key: &str) -> Result<&'static ParamSpec, Error> {
        find_param(self.params, key)
    }
}

fn find_param(params: &'static [ParamSpec], key: &str) -> Result<&'static ParamSpec, Error> {
    params
        .iter()
        .find(|p| p.key == key)
        .ok_or_else(|| Error::setting(key, "internal: not declared in the schema"))
}

/// A model as the user sees it.
#[derive(Debug, Clone, Copy)]
pub struct ModelInfo {
    /// Name (`logistic`, ...).
    pub name: &'static str,
    /// One-line description.
    pub description: &'static str,
    /// Whether it is a regression (reads a response and feature columns).
    pub regression: bool,
    /// Its parameters (priors, noise, ...).
    pub params: &'static [ParamSpec],
}

impl ModelInfo {
    /// The parameter `key` of this model's schema (see [`SamplerInfo::param`]).
    pub fn param(&self, key: &str) -> Result<&'static ParamSpec, Error> {
        find_param(self.params, key)
    }
}

/// Everything a chain needs besides the model.
#[derive(Debug, Clone)]
pub struct ChainConfig<'a> {
    /// Sampler name.
    pub sampler: &'a str,
    /// Warm-up iterations.
    pub warmup: usize,
    /// Sampler settings (model settings are consumed by [`build_model`]).
    pub settings: &'a Settings,
}
