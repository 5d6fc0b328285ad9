//! `tallmc samplers` and `tallmc models`: the registry with its parameter schemas.

use super::CliError;
use tallmc_core::registry::{self, ParamKind, ParamSpec};

/// One line describing a parameter's type, range and default.
pub fn kind_text(kind: &ParamKind) -> String {
    fn num(x: f64) -> String {
        if x == f64::INFINITY {
            "inf".into()
        } else if x == f64::NEG_INFINITY {
            "-inf".into()
        } else {
            format!("{x}")
        }
    }
    match *kind {
        ParamKind::Real { default, min, max } => {
            let d = if default.is_nan() {
                "auto".to_string()
            } else {
                num(default)
            };
            format!("real in [{}, {}], default {d}", num(min), num(max))
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
            format!("integer in [{min}, {hi}], default {d}")
        }
        ParamKind::Choice(words) => format!(
            "one of {}, default {}",
            words.join(" | "),
            words.first().copied().unwrap_or("")
        ),
        ParamKind::Bool(b) => format!("true | false, default {b}"),
    }
}

fn print_params(params: &[ParamSpec]) {
    if params.is_empty() {
        println!("    (no settings)");
    }
    for p in params {
        println!("    --set {}=…  {}", p.key, kind_text(&p.kind));
        println!("        {}", p.description);
    }
}

/// `tallmc samplers`.
pub fn samplers() -> Result<(), CliError> {
    let all = registry::samplers();
    if all.is_empty() {
        println!("no samplers in this build");
    }
    for s in all {
        let mut tags = vec![if s.exact { "exact" } else { "approximate" }];
        if s.signed {
            tags.push("signed");
        }
        println!("{}  [{}]  {}", s.name, tags.join(", "), s.description);
        if !s.models.is_empty() {
            println!("    models: {}", s.models.join(", "));
        }
        print_params(s.params);
        println!();
    }
    Ok(())
}

/// `tallmc models`.
pub fn models() -> Result<(), CliError> {
    let all = registry::models();
    if all.is_empty() {
        println!("no models in this build");
    }
    for m in all {
        let kind = if m.regression {
            "regression: --response and feature columns"
        } else {
            "no response column"
        };
        println!("{}  [{kind}]  {}", m.name, m.description);
        print_params(m.params);
        println!();
    }
    Ok(())
}
