//! The JSON configuration of one chain, as the playground sends it.
//!
//! ```json
//! {"model": "logistic", "sampler": "nuts", "response": "y", "features": null,
//!  "intercept": true, "standardize": false, "warmup": 1000,
//!  "settings": {"step_size": 0.1}, "seed": 1, "chain": 0}
//! ```
//! `settings` values may be numbers, booleans or strings; they go to the same `Settings` bag as the
//! CLI's `--set key=value`, so the same keys and errors apply.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use tallmc_core::data::DesignSpec;
use tallmc_core::settings::Settings;

/// One chain's configuration.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// Model name.
    pub model: String,
    /// Sampler name.
    pub sampler: String,
    /// Response column (regression models).
    #[serde(default = "default_response")]
    pub response: String,
    /// Feature columns; absent or null: every column except the response.
    #[serde(default)]
    pub features: Option<Vec<String>>,
    /// Add an intercept (default true).
    #[serde(default = "yes")]
    pub intercept: bool,
    /// Standardise features (default false).
    #[serde(default)]
    pub standardize: bool,
    /// Warm-up iterations.
    #[serde(default = "default_warmup")]
    pub warmup: usize,
    /// Model and sampler settings (`key: value`).
    #[serde(default)]
    pub settings: BTreeMap<String, Value>,
    /// Seed (a number, or a string of digits for seeds above 2⁵³).
    #[serde(default)]
    pub seed: Value,
    /// 0-based chain index: the chain's RNG stream.
    #[serde(default)]
    pub chain: u64,
}

/// serde's message with every `` `quoted` `` or `"quoted"` part (field names, values) cut by
/// [`tallmc_core::settings::shorten`].
fn shorten_quoted(msg: &str) -> String {
    shorten_between(&shorten_between(msg, '`'), '"')
}

fn shorten_between(msg: &str, quote: char) -> String {
    msg.split(quote)
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                tallmc_core::settings::shorten(part)
            } else {
                part.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(&quote.to_string())
}

fn default_response() -> String {
    "y".into()
}
fn yes() -> bool {
    true
}
fn default_warmup() -> usize {
    1000
}

impl RunConfig {
    /// Parse the JSON text; errors name the field (a long or multi-line field name or value
    /// quoted in the message is cut, so the message stays one short line).
    pub fn parse(text: &str) -> Result<Self, String> {
        serde_json::from_str(text)
            .map_err(|e| format!("invalid configuration: {}", shorten_quoted(&e.to_string())))
    }

    /// The seed as an unsigned 64-bit integer.
    pub fn seed(&self) -> Result<u64, String> {
        let bad = || {
            format!(
                "invalid setting `seed`: `{}` is not a whole number ≥ 0",
                tallmc_core::settings::shorten(&self.seed.to_string())
            )
        };
        match &self.seed {
            Value::Null => Ok(0),
            Value::Number(n) => n.as_u64().ok_or_else(bad),
            Value::String(s) => s.trim().parse::<u64>().map_err(|_| bad()),
            _ => Err(bad()),
        }
    }

    /// The settings bag (values rendered as the CLI would receive them).
    pub fn settings(&self) -> Result<Settings, String> {
        let mut s = Settings::new();
        for (k, v) in &self.settings {
            let text = match v {
                Value::Null => continue,
                Value::String(t) => t.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                _ => {
                    return Err(format!(
                        "invalid setting `{}`: expected a number, word or boolean",
                        tallmc_core::settings::shorten(k)
                    ))
                }
            };
            s.insert(k, &text);
        }
        Ok(s)
    }

    /// The design specification.
    pub fn design(&self) -> DesignSpec {
        DesignSpec {
            response: self.response.clone(),
            features: self.features.clone(),
            intercept: self.intercept,
            standardize: self.standardize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_defaults_and_settings() {
        let c = RunConfig::parse(
            r#"{"model":"logistic","sampler":"nuts","settings":{"a":0.1,"b":true,"c":"x","d":3},"seed":"18446744073709551615"}"#,
        )
        .unwrap();
        assert_eq!(c.response, "y");
        assert!(c.intercept && !c.standardize);
        assert_eq!(c.seed().unwrap(), u64::MAX);
        let s = c.settings().unwrap();
        assert_eq!(s.get_str("a"), Some("0.1"));
        assert_eq!(s.get_str("b"), Some("true"));
        assert_eq!(s.get_str("c"), Some("x"));
        assert_eq!(s.get_str("d"), Some("3"));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(RunConfig::parse("{").is_err());
        assert!(RunConfig::parse(r#"{"model":"x","sampler":"y","typo":1}"#)
            .unwrap_err()
            .contains("typo"));
        let c = RunConfig::parse(r#"{"model":"x","sampler":"y","seed":-1}"#).unwrap();
        assert!(c.seed().unwrap_err().contains("seed"));
    }
}
