//! Stand-ins for core/CLI functions that land on main in parallel work (CSV parser, simulators,
//! diagnostics). Replaced by re-exports once they are merged.
#![allow(missing_docs, dead_code)]

use tallmc_core::data::Table;

pub fn parse_csv(_bytes: &[u8], _source: &str) -> Result<Table, String> {
    Err("CSV parsing is not available in this build yet".into())
}

pub fn simulate(_model: &str, _n: usize, _d: usize, _seed: u64) -> Result<Table, String> {
    Err("simulators are not available in this build yet".into())
}

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
