//! `key=value` settings shared by the CLI (`--set`), the browser (JSON config) and the registry.
//!
//! Every getter records the key as used; [`Settings::check_all_used`] then rejects unknown keys,
//! so a typo is an error naming the key, never silently ignored.

use crate::error::Error;
use alloc::collections::BTreeMap;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::cell::RefCell;

/// A user's text cut and escaped for an error message, and a number as a person reads it
/// (both defined on the ground floor, in [`crate::error`], so errors can use them).
pub use crate::error::{number, shorten};

/// A bag of user settings, values as strings, parsed on use.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    map: BTreeMap<String, String>,
    used: RefCell<Vec<String>>,
}

impl Settings {
    /// Empty settings.
    pub fn new() -> Self {
        Self::default()
    }

    /// Set `key` to `value` (later calls override earlier ones).
    pub fn insert(&mut self, key: &str, value: &str) {
        self.map.insert(key.to_string(), value.to_string());
    }

    /// Parse `key=value`.
    pub fn insert_pair(&mut self, pair: &str) -> Result<(), Error> {
        match pair.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                self.insert(k.trim(), v.trim());
                Ok(())
            }
            _ => Err(Error::setting(pair, "expected key=value")),
        }
    }

    /// All pairs, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.map.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Whether `key` was given.
    pub fn contains(&self, key: &str) -> bool {
        self.mark(key);
        self.map.contains_key(key)
    }

    /// Whether `key` was given, without marking it used: for refusing a key that does not
    /// apply to this model or sampler at all (it stays out of [`Settings::used_keys`], and
    /// [`Settings::check_all_used`] would refuse it anyway).
    pub fn given(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }

    fn mark(&self, key: &str) {
        let mut u = self.used.borrow_mut();
        if !u.iter().any(|k| k == key) {
            u.push(key.to_string());
        }
    }

    /// The raw string, if given.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.mark(key);
        self.map.get(key).map(|s| s.as_str())
    }

    /// A finite float > 0, `default` when absent.
    pub fn positive_or(&self, key: &str, default: f64) -> Result<f64, Error> {
        let v = self.f64_or(key, default)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(Error::setting(
                key,
                alloc::format!("{} must be > 0", number(v)),
            ))
        }
    }

    /// A finite float, `default` when absent.
    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64, Error> {
        match self.get_str(key) {
            None => Ok(default),
            Some(s) => match s.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(Error::setting(
                    key,
                    alloc::format!("`{}` is not a finite number", shorten(s)),
                )),
            },
        }
    }

    /// A float that must be in `[lo, hi]`.
    pub fn f64_in(&self, key: &str, default: f64, lo: f64, hi: f64) -> Result<f64, Error> {
        let v = self.f64_or(key, default)?;
        if v < lo || v > hi {
            return Err(Error::setting(
                key,
                alloc::format!(
                    "{} is outside {}{}, {}{}",
                    number(v),
                    if lo.is_finite() { '[' } else { '(' },
                    number(lo),
                    number(hi),
                    if hi.is_finite() { ']' } else { ')' }
                ),
            ));
        }
        Ok(v)
    }

    /// A finite positive float, or NaN ("choose automatically") when `key` is absent or is
    /// `auto` / `nan` — the convention of every sampler's `step_size`.
    pub fn positive_or_auto(&self, key: &str) -> Result<f64, Error> {
        match self.get_str(key) {
            None | Some("auto") | Some("nan") | Some("NaN") => Ok(f64::NAN),
            Some(_) => {
                let v = self.f64_or(key, f64::NAN)?;
                if v > 0.0 && v.is_finite() {
                    Ok(v)
                } else {
                    Err(Error::setting(key, "must be a finite number > 0 (or auto)"))
                }
            }
        }
    }

    /// A non-negative integer, `default` when absent, in `[lo, hi]`.
    pub fn usize_in(
        &self,
        key: &str,
        default: usize,
        lo: usize,
        hi: usize,
    ) -> Result<usize, Error> {
        let v = match self.get_str(key) {
            None => default,
            Some(s) => s.parse::<usize>().map_err(|_| {
                Error::setting(
                    key,
                    alloc::format!("`{}` is not a whole number", shorten(s)),
                )
            })?,
        };
        if v < lo || v > hi {
            return Err(Error::setting(
                key,
                alloc::format!("{v} is outside [{lo}, {hi}]"),
            ));
        }
        Ok(v)
    }

    /// A whole number in `[lo, hi]`, or `None` ("choose automatically") when `key` is absent or
    /// is `auto` — the convention of integer settings whose schema default is 0 with min > 0.
    pub fn usize_or_auto(&self, key: &str, lo: usize, hi: usize) -> Result<Option<usize>, Error> {
        match self.get_str(key) {
            None | Some("auto") => Ok(None),
            Some(_) => self.usize_in(key, lo, lo, hi).map(Some),
        }
    }

    /// A boolean (`true/false/1/0/yes/no`).
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, Error> {
        match self.get_str(key) {
            None => Ok(default),
            Some("true" | "1" | "yes") => Ok(true),
            Some("false" | "0" | "no") => Ok(false),
            Some(s) => Err(Error::setting(
                key,
                alloc::format!("`{}` is not true or false", shorten(s)),
            )),
        }
    }

    /// One of a fixed list of words, `default` when absent.
    pub fn choice<'a>(
        &self,
        key: &str,
        default: &'a str,
        choices: &[&'a str],
    ) -> Result<&'a str, Error> {
        match self.get_str(key) {
            None => Ok(default),
            Some(s) => choices.iter().copied().find(|c| *c == s).ok_or_else(|| {
                Error::setting(
                    key,
                    alloc::format!("`{}` is not one of {}", shorten(s), choices.join(", ")),
                )
            }),
        }
    }

    /// Every key read so far by a getter (given or not), in the order first read: what a
    /// builder consults, so a test can check each key it reads is declared in its schema.
    pub fn used_keys(&self) -> Vec<String> {
        self.used.borrow().clone()
    }

    /// Error on the first key never read by a getter (a typo or an option this sampler lacks).
    pub fn check_all_used(&self) -> Result<(), Error> {
        let u = self.used.borrow();
        for k in self.map.keys() {
            if !u.iter().any(|x| x == k) {
                return Err(Error::UnknownSetting { key: k.clone() });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects() {
        let mut s = Settings::new();
        s.insert_pair("eps=0.1").unwrap();
        s.insert_pair("L = 10").unwrap();
        s.insert_pair("typo=3").unwrap();
        assert_eq!(s.f64_or("eps", 1.0).unwrap(), 0.1);
        assert_eq!(s.usize_in("L", 5, 1, 1000).unwrap(), 10);
        assert_eq!(s.f64_or("absent", 2.0).unwrap(), 2.0);
        assert!(matches!(s.check_all_used(), Err(Error::UnknownSetting { key }) if key == "typo"));
        assert!(s.insert_pair("noequals").is_err());
        s.insert("eps", "nan");
        assert!(s.f64_or("eps", 1.0).is_err());
    }

    #[test]
    fn usize_or_auto() {
        let mut s = Settings::new();
        assert_eq!(s.usize_or_auto("batch_size", 1, 10).unwrap(), None);
        s.insert("batch_size", "auto");
        assert_eq!(s.usize_or_auto("batch_size", 1, 10).unwrap(), None);
        s.insert("batch_size", "7");
        assert_eq!(s.usize_or_auto("batch_size", 1, 10).unwrap(), Some(7));
        for bad in ["0", "11", "-1", "x", "nan"] {
            s.insert("batch_size", bad);
            assert!(s.usize_or_auto("batch_size", 1, 10).is_err(), "{bad}");
        }
    }

    #[test]
    fn positive_or_auto() {
        let mut s = Settings::new();
        assert!(s.positive_or_auto("step_size").unwrap().is_nan());
        for auto in ["auto", "nan", "NaN"] {
            s.insert("step_size", auto);
            assert!(s.positive_or_auto("step_size").unwrap().is_nan(), "{auto}");
        }
        s.insert("step_size", "0.25");
        assert_eq!(s.positive_or_auto("step_size").unwrap(), 0.25);
        for bad in ["0", "-1", "inf", "x"] {
            s.insert("step_size", bad);
            assert!(s.positive_or_auto("step_size").is_err(), "{bad}");
        }
        assert!(s.check_all_used().is_ok());
    }
}
