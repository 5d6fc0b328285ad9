//! Diagnostics after Vehtari et al. (2021) (filled by the diagnostics work).
