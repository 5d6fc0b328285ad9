//! Log-likelihood estimators from subsamples: Taylor control variates, the difference estimator
//! (with its variance and the bias-corrected log-likelihood) and the block-Poisson estimator.
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
pub mod poisson;

pub use control_variates::ControlVariates;
pub use difference::{DiffEstimator, DiffEval};
pub use poisson::{BlockPoisson, PoissonEval, PoissonSample};
