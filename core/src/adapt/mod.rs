//! Warm-up adaptation: dual-averaging step size, windowed mass matrix (filled by the kernels work).
