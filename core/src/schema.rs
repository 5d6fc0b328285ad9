//! The schema of samplers and models: each parameter's key, description, type, range and
//! default, declared once and read by settings parsing, the command line's help and the
//! browser's forms. Below every sampler and model (they declare their schemas here) and below
//! the registry (which lists them).

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
