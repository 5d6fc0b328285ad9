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
