//! Every cross-crate and statistical test of `tallmc-tests` in one test binary (each file of
//! this directory is a module; `cpu_paths.rs`, which switches the AVX2 copies off for the rest
//! of its process, is the one other binary).
//!
//! One binary links the core and its generic samplers once instead of once per file, and lets
//! the test harness keep both cores busy across files (one file's single long test no longer
//! leaves a core idle while the next file waits). Run one file's tests by its module path:
//! `cargo test -p tallmc-tests --release --test all -- realdata:: --nocapture`.

// Helpers shared by several files.
mod hmcecs_common;
mod minibatch_mh_common;
mod smh_common;

mod diag_arviz;
mod fuzz;
mod golden_draws;
mod hmcecs_bench;
mod hmcecs_centre;
mod hmcecs_controls;
mod hmcecs_estimators;
mod hmcecs_models;
mod hmcecs_naive;
mod hmcecs_perturbed;
mod hmcecs_scaling;
mod hmcecs_signed;
mod hmcecs_trajectory;
mod kernels_gaussian;
mod kernels_leapfrog;
mod kernels_linear;
mod kernels_logistic;
mod kernels_stability;
mod ksd;
mod large_d_mode;
mod minibatch_mh_baselines;
mod minibatch_mh_batched;
mod minibatch_mh_cv;
mod minibatch_mh_design;
mod minibatch_mh_gaussian;
mod minibatch_mh_gmm;
mod minibatch_mh_logistic;
mod minibatch_mh_noise;
mod minibatch_mh_table;
mod models_gradients;
mod models_registry;
mod numerics_dist;
mod optim_mode;
mod parallel_pass;
mod qnhmc_burnin;
mod qnhmc_exact;
mod qnhmc_gaussian;
mod qnhmc_identities;
mod qnhmc_pmf;
mod qnhmc_robustness;
mod realdata;
mod realdata_status;
mod registry_defaults;
mod reparam;
mod sgmcmc_bench;
mod sgmcmc_dpp;
mod sgmcmc_dynamics;
mod sgmcmc_estimators;
mod sgmcmc_samplers;
mod sgmcmc_sgld;
mod smh_agree;
mod smh_bounds;
mod smh_efficiency;
mod smh_exact;
mod smh_robust;
mod smh_scaling;
mod ssm_bench;
mod ssm_buffered;
mod ssm_garch;
mod ssm_guards;
mod ssm_kalman;
mod ssm_models;
mod ssm_pf;
mod ssm_resample;
mod ssm_samplers;
mod ssm_sv;
