//! The sampler and model registries as JSON, for the playground's forms.

use serde_json::{json, Value};
use tallmc_core::registry::{self, ParamKind, ParamSpec};

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn param_json(p: &ParamSpec) -> Value {
    match p.kind {
        // min_open / max_open: the bound itself is refused (the range as validated).
        ParamKind::Real { default, .. } | ParamKind::RealOpen { default, .. } => {
            let r = p.kind.real_range();
            json!({
                "key": p.key, "description": p.description, "kind": "real",
                "default": num(default),
                "min": r.map_or(Value::Null, |r| num(r.min)),
                "max": r.map_or(Value::Null, |r| num(r.max)),
                "min_open": r.is_some_and(|r| r.min_open),
                "max_open": r.is_some_and(|r| r.max_open),
            })
        }
        // default 0 with min > 0: chosen automatically (null, shown as "auto")
        ParamKind::Int { default, min, max } => json!({
            "key": p.key, "description": p.description, "kind": "int",
            "default": if default == 0 && min > 0 { Value::Null } else { json!(default) },
            "min": min, "max": num(max as f64),
        }),
        ParamKind::Choice(c) => json!({
            "key": p.key, "description": p.description, "kind": "choice",
            "default": c.first().copied(), "choices": c,
        }),
        ParamKind::Bool(b) => json!({
            "key": p.key, "description": p.description, "kind": "bool", "default": b,
        }),
    }
}

/// Samplers: `[{name, description, exact, signed, models, series_models, runs_on, params}]`
/// (`series_models`: the time-series models it runs on; `runs_on`: every model it runs on, as
/// the registry decides — what the playground offers).
pub fn samplers_json() -> Value {
    Value::Array(
        registry::samplers()
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "exact": s.exact,
                    "signed": s.signed,
                    "models": s.models,
                    "series_models": tallmc_core::registry::series_models(s.name),
                    "runs_on": registry::models()
                        .iter()
                        .map(|m| m.name)
                        .filter(|m| registry::compatible(s.name, m))
                        .collect::<Vec<_>>(),
                    "params": s.params.iter().map(param_json).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// Models: `[{name, description, regression, series, params}]` (`series`: a time-series model).
pub fn models_json() -> Value {
    Value::Array(
        registry::models()
            .iter()
            .map(|m| {
                json!({
                    "name": m.name,
                    "description": m.description,
                    "regression": m.regression,
                    "series": tallmc_core::model::series::SERIES_MODELS.contains(&m.name),
                    "params": m.params.iter().map(param_json).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// Both registries: `{samplers, models}`.
pub fn registry_json() -> Value {
    json!({ "samplers": samplers_json(), "models": models_json() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_serialises() {
        let v = registry_json();
        assert!(v["samplers"].is_array());
        assert!(v["models"].is_array());
        for s in v["samplers"].as_array().into_iter().flatten() {
            assert!(s["name"].is_string());
            assert!(s["params"].is_array());
        }
    }

    /// The playground offers exactly the samplers the core builds for a model.
    #[test]
    fn runs_on_is_the_registry_routing() {
        let v = samplers_json();
        let runs_on = |name: &str| -> Vec<String> {
            let s = v
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["name"] == name)
                .unwrap();
            serde_json::from_value(s["runs_on"].clone()).unwrap()
        };
        assert_eq!(runs_on("pf-sgld"), ["lgssm", "sv", "garch"]);
        assert!(runs_on("nuts").contains(&"lgssm".to_string()));
        assert!(!runs_on("nuts").contains(&"sv".to_string()));
        assert!(runs_on("smh-2").contains(&"logistic".to_string()));
        assert!(!runs_on("smh-2").contains(&"poisson".to_string()));
        assert!(!runs_on("sgld")
            .iter()
            .any(|m| ["lgssm", "sv", "garch"].contains(&m.as_str())));
    }
}
