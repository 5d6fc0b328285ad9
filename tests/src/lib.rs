//! Shared helpers for tallmc's statistical tests.
