//! Library part of the `tallmc` CLI: CSV parsing and writing, shared with the browser bindings.
//!
//! Built without the `bin` feature it depends only on `tallmc-core` and `csv`, and compiles to
//! WebAssembly.
#![warn(missing_docs)]

#[cfg(feature = "columnar")]
pub mod columnar;
pub mod csvdata;
#[cfg(not(target_arch = "wasm32"))]
pub mod csvfile;
#[cfg(not(target_arch = "wasm32"))]
pub mod hugepages;
pub mod messages;
pub mod npy;
#[cfg(not(target_arch = "wasm32"))]
pub mod parallel;

pub use csvdata::{parse_csv, CsvError};
