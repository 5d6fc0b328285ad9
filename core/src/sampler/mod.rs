//! Samplers: the drivers that run a kernel as a [`Chain`](crate::chain::Chain) — warm-up,
//! start point, cost counting — and each sampler's settings schema and parsing.
//!
//! Above the kernels, estimators, models and particle filters they drive; below the
//! [registry](crate::registry), which lists them. Nothing below this module imports it.

pub mod adaptive;
pub mod driver;
pub mod hmcecs;
pub mod minibatch_mh;
pub mod pfsgld;
pub mod pmmh;
pub mod qnhmc;
pub mod sgmcmc;
pub mod smh;

pub use adaptive::{AdaptConfig, AdaptiveChain, MetricAdaptation, StanWarmup};
pub use driver::{Description, Driver, NoWarmup, Warmup};
