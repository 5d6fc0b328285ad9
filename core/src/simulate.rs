//! Data simulators for every model (filled by the models work).
