//! Stand-in for `tallmc_core::diag` until the diagnostics branch lands on main (same signatures,
//! NaN results). When it lands: in `web/src/diag.rs` replace `use crate::pending::diag as cd;`
//! by `use tallmc_core::diag as cd;`, delete this file and its `mod pending;` line in lib.rs.
#![allow(missing_docs, dead_code)]

pub mod diag {
    pub struct Summary {
        pub mean: f64,
        pub sd: f64,
        pub q5: f64,
        pub q50: f64,
        pub q95: f64,
        pub mcse_mean: f64,
        pub ess_bulk: f64,
        pub ess_tail: f64,
        pub rhat: f64,
    }
    fn nan() -> Summary {
        Summary {
            mean: f64::NAN,
            sd: f64::NAN,
            q5: f64::NAN,
            q50: f64::NAN,
            q95: f64::NAN,
            mcse_mean: f64::NAN,
            ess_bulk: f64::NAN,
            ess_tail: f64::NAN,
            rhat: f64::NAN,
        }
    }
    pub fn summarize(_c: &[&[f64]]) -> Summary {
        nan()
    }
    pub fn summarize_signed(_c: &[&[f64]], _s: &[&[f64]]) -> Summary {
        nan()
    }
    pub fn rhat(_c: &[&[f64]]) -> f64 {
        f64::NAN
    }
    pub fn ess_bulk(_c: &[&[f64]]) -> f64 {
        f64::NAN
    }
    pub fn ess_tail(_c: &[&[f64]]) -> f64 {
        f64::NAN
    }
    pub fn mcse_mean(_c: &[&[f64]]) -> f64 {
        f64::NAN
    }
    pub fn autocorrelation(x: &[f64]) -> alloc::vec::Vec<f64> {
        alloc::vec![f64::NAN; x.len()]
    }
    extern crate alloc;
}
