//! TODO: gaussian model (filled by the models work).
