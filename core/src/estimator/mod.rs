//! Estimators from subsamples: Taylor control variates, the difference estimator (with its
//! variance and the bias-corrected log-likelihood), the block-Poisson estimator, and the
//! stochastic-gradient estimators of SG-MCMC (uniform, preferential and k-DPP subsampling,
//! with or without control variates).
//!
//! Estimators are separate from kernels so every subsampling sampler can reuse them. They work
//! on any [`DataModel`](crate::model::DataModel); generalised linear models take a fast path
//! (three scalars per datum cached at the centre, O(d) per subsampled datum).
//!
//! ## References
//! Quiroz, Kohn, Villani, Tran (2019), *Speeding up MCMC by efficient data subsampling*, JASA.
//! Dang, Quiroz, Kohn, Tran, Villani (2019), *Hamiltonian Monte Carlo with energy conserving
//! subsampling*, JMLR 20(100).

pub mod control_variates;
pub mod difference;
pub mod dpp;
pub mod gradient;
pub mod poisson;

pub use control_variates::{ControlVariates, Gathered};
pub use difference::{DiffEstimator, DiffEval};
pub use dpp::KDpp;
pub use gradient::{GradientEstimator, Subsampler};
pub use poisson::{BlockPoisson, PoissonEval, PoissonSample};
