//! tallmc-core: MCMC for tall data, `no_std` + `alloc` + `libm`.
//!
//! Every model, estimator, kernel, particle filter, optimiser and diagnostic of tallmc lives here.
//! The crate does no I/O, uses no threads and no clocks; it compiles natively and to WebAssembly,
//! and gives bit-identical draws on both for the same seed.
//!
//! Shape (after BlackJAX): a kernel is immutable parameters plus
//! `init(target, position) -> Result<State, Error>` and an infallible
//! `step(rng, target, &mut state) -> StepInfo`. Adaptation is separate and runs only in warm-up.
//! [`chain::Chain`] is the object-safe face that the CLI and the browser drive.
//!
//! # Example
//! Build a model from a data table, pick a sampler by name with settings, run two chains and
//! print R-hat and ESS — everything the CLI and the browser do, from Rust:
//!
//! ```
//! use tallmc_core::chain::Phase;
//! use tallmc_core::data::{DesignSpec, Table};
//! use tallmc_core::diag::{ess_bulk, rhat};
//! use tallmc_core::registry::{build_model, run_chains, ChainConfig};
//! use tallmc_core::settings::Settings;
//!
//! // A table (in practice: parsed from a file) — age in years and a 0/1 outcome.
//! let age: Vec<f64> = (0..2000).map(|i| 20.0 + (i % 50) as f64).collect();
//! let y: Vec<f64> = (0..2000).map(|i| ((i * 7919) % 100 < 20 + (i % 50)) as u8 as f64).collect();
//! let table = Table::new(vec!["age".into(), "y".into()], vec![age, y])?;
//!
//! // Logistic regression of y on age with an intercept (default priors).
//! let design = DesignSpec { response: "y".into(), features: None, intercept: true, standardize: false };
//! let model = build_model("logistic", &table, &design, &Settings::new())?;
//!
//! // NUTS with a higher acceptance target (an unknown key is an error when the chain is built);
//! // any sampler of `registry::samplers()` works here.
//! let mut settings = Settings::new();
//! settings.insert("target_accept", "0.9");
//! let config = ChainConfig { sampler: "nuts", warmup: 500, settings: &settings };
//!
//! // Two chains, seed 42, 500 kept draws each: chain c has its own stream.
//! let d = model.dim();
//! let mut draws = vec![vec![Vec::new(); d]; 2];
//! run_chains(&config, model.clone(), 42, 2, 500, |c, phase, _, theta, _| {
//!     if phase == Phase::Sampling {
//!         for j in 0..d {
//!             draws[c][j].push(theta[j]);
//!         }
//!     }
//! })?;
//! for (j, name) in model.param_names().iter().enumerate() {
//!     let chains: Vec<&[f64]> = draws.iter().map(|c| c[j].as_slice()).collect();
//!     println!("{name}: R-hat {:.3}, ESS {:.0}", rhat(&chains), ess_bulk(&chains));
//!     assert!(rhat(&chains) < 1.05);
//! }
//! # Ok::<(), tallmc_core::Error>(())
//! ```
#![no_std]
#![warn(missing_docs)]
// Index loops mirror the equations they implement; iterator chains would hide them.
#![allow(clippy::needless_range_loop)]

extern crate alloc;
#[cfg(test)]
extern crate std;

pub mod adapt;
pub mod chain;
pub mod cost;
pub mod cpu;
pub mod data;
pub mod diag;
pub mod dist;
pub mod error;
pub mod estimator;
pub mod kernel;
pub mod linalg;
pub mod math;
pub mod model;
pub mod optim;
pub mod parallel;
pub mod registry;
pub mod rng;
pub mod sampler;
pub mod schema;
pub mod settings;
pub mod simulate;
pub mod ssm;

pub use error::Error;
