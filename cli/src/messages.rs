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

/// For readers built without Parquet and Arrow IPC (the browser's): a file that starts like
/// one (`PAR1`, `ARROW1`, or the IPC stream's 0xFFFFFFFF) gets this message instead of a CSV
/// parse error.
pub fn columnar_not_here(bytes: &[u8], source: &str) -> Option<String> {
    let what = if bytes.starts_with(b"PAR1") {
        "a Parquet file"
    } else if bytes.starts_with(b"ARROW1") || bytes.starts_with(&[0xFF; 4]) {
        "an Arrow IPC (Feather) file"
    } else {
        return None;
    };
    Some(format!(
        "{source}: {what}; this reader takes CSV and NumPy .npz/.npy (the tallmc command line \
         reads Parquet and Arrow IPC): save the table as CSV or with numpy.savez"
    ))
}
