//! `tallmc samplers` and `tallmc models`: the registry with its parameter schemas.

use super::CliError;
use std::fmt::Write as _;
use tallmc_core::registry::{self, ParamKind, ParamSpec};

/// Print to stdout; a closed pipe (`tallmc samplers | head`) is not an error.
pub fn emit(text: &str) -> Result<(), CliError> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::internal(format!(
            "cannot write to stdout: {}",
            super::io_msg(&e)
        ))),
        _ => Ok(()),
    }
}

/// One line describing a parameter's type, range (exactly as validated: `(0, inf)`,
/// `[0, 1)`) and default, numbers in a readable form (`1e-8`, `1e6`).
pub fn kind_text(kind: &ParamKind) -> String {
    use tallmc_core::settings::number;
    match *kind {
        ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
            let d = if default.is_nan() {
                "auto".to_string()
            } else {
                number(default)
            };
            match kind.real_range() {
                Some(r) => format!("real in {r}, default {d}"),
                None => format!("real, default {d}"),
            }
        }
        ParamKind::Int { default, min, max } => {
            let d = if default == 0 && min > 0 {
                "auto".to_string()
            } else {
                default.to_string()
            };
            let hi = if max == usize::MAX {
                "inf".to_string()
            } else {
                max.to_string()
            };
            let close = if max == usize::MAX { ')' } else { ']' };
            format!("integer in [{min}, {hi}{close}, default {d}")
        }
        ParamKind::Choice(words) => format!(
            "one of {}, default {}",
            words.join(" | "),
            words.first().copied().unwrap_or("")
        ),
        ParamKind::Bool(b) => format!("true | false, default {b}"),
    }
}

fn print_params(o: &mut String, params: &[ParamSpec]) {
    if params.is_empty() {
        let _ = writeln!(o, "    (no settings)");
    }
    for p in params {
        let _ = writeln!(o, "    --set {}=…  {}", p.key, kind_text(&p.kind));
        let _ = writeln!(o, "        {}", p.description);
    }
}

/// `tallmc samplers`.
pub fn samplers() -> Result<(), CliError> {
    let mut o = String::new();
    let all = registry::samplers();
    if all.is_empty() {
        let _ = writeln!(o, "no samplers in this build");
    }
    for s in all {
        let mut tags = vec![if s.exact { "exact" } else { "approximate" }];
        if s.signed {
            tags.push("signed");
        }
        let _ = writeln!(o, "{}  [{}]  {}", s.name, tags.join(", "), s.description);
        if !s.models.is_empty() {
            let _ = writeln!(o, "    models: {}", s.models.join(", "));
        }
        print_params(&mut o, s.params);
        let _ = writeln!(o);
    }
    emit(&o)
}

/// `tallmc models`.
pub fn models() -> Result<(), CliError> {
    let mut o = String::new();
    let all = registry::models();
    if all.is_empty() {
        let _ = writeln!(o, "no models in this build");
    }
    for m in all {
        let kind = if m.regression {
            "regression: --response and feature columns"
        } else {
            "no response column"
        };
        let _ = writeln!(o, "{}  [{kind}]  {}", m.name, m.description);
        print_params(&mut o, m.params);
        let _ = writeln!(o);
    }
    emit(&o)
}
