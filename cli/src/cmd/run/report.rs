//! What a run tells the user on the terminal: convergence warnings.

use super::*;

/// The run's convergence warnings ([`diag::health::warnings`]): R-hat, ESS, divergences and
/// stuck chains, each one line naming the worst parameters with a suggestion.
pub(super) fn health_warnings(
    names: &[String],
    summaries: &[diag::Summary],
    outputs: &[ChainOutput],
) -> Vec<String> {
    let chains: Vec<diag::health::ChainHealth> = outputs
        .iter()
        .map(|o| {
            let cols: Vec<&[f64]> = o.draws.iter().map(Vec::as_slice).collect();
            let divergent = o.totals.divergences;
            diag::health::ChainHealth::from_columns(&cols, divergent)
        })
        .collect();
    diag::health::warnings(names, summaries, &chains)
}
