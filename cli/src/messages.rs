//! What the command line and the Python package say alike: stats.csv's columns, the message for
//! an unknown model or sampler, and where in the data a data error is.

use tallmc_core::registry;

/// The columns of stats.csv after `chain,draw`, before the kernel's extras (the per-step
/// statistics of `tallmc_core::kernel::StepInfo`, in this order).
pub const STAT_NAMES: [&str; 7] = [
    "accept_prob",
    "divergent",
    "lik_evals",
    "grad_evals",
    "n_leapfrog",
    "step_size",
    "energy",
];

/// `unknown model `x` (available: ...)`, with what the registry lists.
pub fn unknown(what: &str, name: &str) -> String {
    let names: Vec<&str> = match what {
        "model" => registry::models().iter().map(|m| m.name).collect(),
        "sampler" => registry::samplers().iter().map(|s| s.name).collect(),
        _ => Vec::new(),
    };
    let name = tallmc_core::settings::shorten(name);
    if names.is_empty() {
        format!("unknown {what} `{name}` (none available in this build)")
    } else {
        format!("unknown {what} `{name}` (available: {})", names.join(", "))
    }
}

/// Append where a data error is and its message to `s`: `{row}, column "c": msg`, `column
/// "c": msg` or `msg`. `row` turns the core's 1-based row into the caller's words (`line 12`
/// of a file, `row 10` of a DataFrame).
pub fn push_data_error(
    s: &mut String,
    row: Option<usize>,
    column: Option<&str>,
    msg: &str,
    at_row: impl FnOnce(usize) -> String,
) {
    match (row, column) {
        (Some(r), c) => {
            s.push_str(&at_row(r));
            if let Some(c) = c {
                s.push_str(&format!(", column \"{c}\""));
            }
            s.push_str(": ");
        }
        (None, Some(c)) => s.push_str(&format!("column \"{c}\": ")),
        (None, None) => {}
    }
    s.push_str(msg);
}
