//! Convergence and efficiency diagnostics after Vehtari, Gelman, Simpson, Carpenter, Bürkner
//! (2021): rank-normalised split R-hat, bulk and tail ESS, MCSE of the mean and of quantiles,
//! autocorrelation by FFT, the inefficiency factor.
//!
//! Every function takes one parameter's draws as a slice of chains (`&[&[f64]]`, each chain's
//! post-warm-up draws in order). Edge cases follow ArviZ: a constant input gives R-hat = NaN? no —
//! see each function's docs; NaN in the input gives NaN.
//!
//! ## References
//! Vehtari et al. (2021), *Rank-normalization, folding, and localization: an improved R-hat for
//! assessing convergence of MCMC*, Bayesian Analysis 16(2).

// API contract (filled by the diagnostics work):
// pub fn rhat(chains: &[&[f64]]) -> f64                      rank-normalised split R-hat (max of bulk and folded)
// pub fn ess_bulk(chains: &[&[f64]]) -> f64
// pub fn ess_tail(chains: &[&[f64]]) -> f64
// pub fn ess_mean(chains: &[&[f64]]) -> f64                  plain (non-rank) ESS used for MCSE of the mean
// pub fn mcse_mean(chains: &[&[f64]]) -> f64
// pub fn mcse_quantile(chains: &[&[f64]], p: f64) -> f64
// pub fn quantile(chains: &[&[f64]], p: f64) -> f64
// pub fn autocorrelation(x: &[f64]) -> Vec<f64>              FFT, O(n log n), lag 0..n-1, acf[0] = 1
// pub fn inefficiency_factor(chains: &[&[f64]]) -> f64       IF = total draws / ESS
// pub struct Summary { mean, sd, q5, q50, q95, mcse_mean, ess_bulk, ess_tail, rhat }
// pub fn summarize(chains: &[&[f64]]) -> Summary
// pub fn summarize_signed(chains: &[&[f64]], signs: &[&[f64]]) -> Summary   sign-weighted (see HMC-ECS spec)
