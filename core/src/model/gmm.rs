//! TODO: gmm model (filled by the models work).
