//! Mode finding: Newton and L-BFGS with line search (filled by the optimiser work).
