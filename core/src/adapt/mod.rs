//! Warm-up adaptation: dual-averaging step size, Stan's windowed diagonal or dense metric, and
//! [`AdaptiveChain`], which wraps any tunable kernel into a [`Chain`](crate::chain::Chain) that
//! adapts during warm-up only and is frozen afterwards.

pub mod chain;
pub mod dual_averaging;
pub mod step_size;
pub mod welford;
pub mod windows;

pub use chain::{AdaptConfig, AdaptiveChain, MetricAdaptation};
pub use dual_averaging::DualAveraging;
pub use step_size::find_reasonable_step_size;
pub use welford::{WelfordCov, WelfordVar};
pub use windows::WindowSchedule;
