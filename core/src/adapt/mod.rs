//! Warm-up adaptation's building blocks: dual-averaging step size, Stan's windows, Welford
//! estimates of the metric, and the step-size heuristic. The driver that applies them to a
//! kernel is [`crate::sampler::AdaptiveChain`].

pub mod dual_averaging;
pub mod step_size;
pub mod welford;
pub mod windows;

pub use dual_averaging::DualAveraging;
pub use step_size::{check_target_accept, find_reasonable_step_size, StepSizeWarmup};
pub use welford::{WelfordCov, WelfordVar};
pub use windows::WindowSchedule;
