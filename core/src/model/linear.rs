//! TODO: linear model (filled by the models work).
