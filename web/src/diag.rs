//! Diagnostics for the playground: a draw store that accumulates post-warm-up draws per chain and
//! summarises them with `tallmc_core::diag` (the same functions as the CLI's `summary.csv`), plus
//! the plain functions on flat arrays.

use crate::js_err;
use js_sys::Float64Array;
use tallmc_core::diag as cd;
use wasm_bindgen::prelude::*;

/// Columns of [`DrawStore::summary`], in order.
pub const SUMMARY_COLUMNS: [&str; 9] = cd::Summary::COLUMNS;

/// Split a flat array into chains of the given lengths.
pub fn split<'a>(values: &'a [f64], lengths: &[u32]) -> Result<Vec<&'a [f64]>, String> {
    let total: usize = lengths.iter().map(|&l| l as usize).sum();
    if total != values.len() {
        return Err(format!(
            "diagnostics: chain lengths add up to {total}, but {} values were given",
            values.len()
        ));
    }
    let mut out = Vec::with_capacity(lengths.len());
    let mut at = 0;
    for &l in lengths {
        out.push(&values[at..at + l as usize]);
        at += l as usize;
    }
    Ok(out)
}

/// Post-warm-up draws of several chains, per parameter, in wasm memory.
#[wasm_bindgen]
pub struct DrawStore {
    d: usize,
    signed: bool,
    /// `draws[c][j]` is parameter j of chain c, in order.
    draws: Vec<Vec<Vec<f64>>>,
    signs: Vec<Vec<f64>>,
}

/// The most columns (chains × parameters) a [`DrawStore`] takes.
pub const MAX_STORE_DIM: usize = 1_000_000;

impl DrawStore {
    /// An empty store for 1 to [`crate::chain::MAX_CHAINS`] chains of dimension d ≥ 1, with
    /// chains × d ≤ [`MAX_STORE_DIM`]: sizes come from the page, and an unchecked one (2⁶⁴ chains) aborted
    /// the worker on allocation instead of failing.
    pub fn try_new(chains: usize, d: usize, signed: bool) -> Result<DrawStore, String> {
        if chains == 0 || chains as u64 > crate::chain::MAX_CHAINS {
            return Err(format!(
                "chains: {chains} is outside [1, {}]",
                crate::chain::MAX_CHAINS
            ));
        }
        if d == 0 || d > MAX_STORE_DIM {
            return Err(format!("d: {d} is outside [1, {MAX_STORE_DIM}]"));
        }
        if chains * d > MAX_STORE_DIM {
            return Err(format!(
                "{chains} chains × {d} parameters is above {MAX_STORE_DIM} columns"
            ));
        }
        Ok(DrawStore {
            d,
            signed,
            draws: vec![vec![Vec::new(); d]; chains],
            signs: vec![Vec::new(); chains],
        })
    }

    /// Number of draws used for summaries: the shortest non-empty chain, and the chains that have it.
    fn common(&self) -> (usize, Vec<usize>) {
        let lens: Vec<usize> = self
            .draws
            .iter()
            .map(|c| c.first().map_or(0, |v| v.len()))
            .collect();
        let m = lens.iter().copied().filter(|&l| l > 0).min().unwrap_or(0);
        let chains = (0..lens.len()).filter(|&c| lens[c] > 0).collect();
        (m, chains)
    }

    /// One summary per parameter over the common length of the chains.
    fn summaries(&self) -> Vec<cd::Summary> {
        let (m, chains) = self.common();
        (0..self.d)
            .map(|j| {
                if m == 0 {
                    return cd::Summary::NAN;
                }
                let xs: Vec<&[f64]> = chains.iter().map(|&c| &self.draws[c][j][..m]).collect();
                if self.signed {
                    let ss: Vec<&[f64]> = chains.iter().map(|&c| &self.signs[c][..m]).collect();
                    cd::summarize_signed(&xs, &ss)
                } else {
                    cd::summarize(&xs)
                }
            })
            .collect()
    }

    /// Summary rows (`d × 9`, columns [`SUMMARY_COLUMNS`]) over the common length of the chains.
    pub fn summary_rows(&self) -> Vec<f64> {
        self.summaries().iter().flat_map(|s| s.values()).collect()
    }

    /// The convergence warnings of the CLI ([`cd::health::warnings`]) for the stored draws:
    /// `names` per parameter, `divergent[c]` the divergent kept draws of chain c.
    pub fn warning_lines(&self, names: &[String], divergent: &[u32]) -> Vec<String> {
        let (m, chains) = self.common();
        if m == 0 {
            return Vec::new();
        }
        let health: Vec<cd::health::ChainHealth> = chains
            .iter()
            .map(|&c| {
                let cols: Vec<&[f64]> = self.draws[c].iter().map(|v| &v[..m]).collect();
                let div = divergent.get(c).copied().unwrap_or(0) as usize;
                cd::health::ChainHealth::from_columns(&cols, div)
            })
            .collect();
        cd::health::warnings(names, &self.summaries(), &health)
    }

    /// Append post-warm-up draws of chain `chain` (`k × d` row-major) with their signs (length k;
    /// may be empty for unsigned samplers). The natively callable half of [`DrawStore::push`].
    pub fn push_draws(&mut self, chain: usize, draws: &[f64], signs: &[f64]) -> Result<(), String> {
        let d = self.d.max(1);
        if chain >= self.draws.len() {
            return Err(format!("diagnostics: no chain {chain}"));
        }
        if (draws.len() / d) * d != draws.len() || (self.signed && signs.len() * d != draws.len()) {
            return Err("diagnostics: batch shape does not match the dimension".into());
        }
        for row in draws.chunks(d) {
            for (j, v) in row.iter().enumerate().take(self.d) {
                self.draws[chain][j].push(*v);
            }
        }
        if self.signed {
            self.signs[chain].extend_from_slice(signs);
        }
        Ok(())
    }

    /// Autocorrelation of parameter `j` up to `max_lag`, averaged over chains.
    pub fn acf_values(&self, j: usize, max_lag: usize) -> Vec<f64> {
        let (m, chains) = self.common();
        if m == 0 || j >= self.d {
            return Vec::new();
        }
        let lags = max_lag.min(m - 1) + 1;
        let mut acc = vec![0.0; lags];
        for &c in &chains {
            let a = cd::autocorrelation(&self.draws[c][j][..m]);
            for (s, v) in acc.iter_mut().zip(a.iter()) {
                *s += v;
            }
        }
        let k = chains.len() as f64;
        acc.iter_mut().for_each(|v| *v /= k);
        acc
    }
}

#[wasm_bindgen]
impl DrawStore {
    /// An empty store for `chains` chains of dimension `d` ([`DrawStore::try_new`]'s checks;
    /// thrown as a JS error).
    #[wasm_bindgen(constructor)]
    pub fn new(chains: usize, d: usize, signed: bool) -> Result<DrawStore, JsError> {
        crate::init();
        DrawStore::try_new(chains, d, signed).map_err(js_err)
    }

    /// Append post-warm-up draws of chain `chain` (`k × d` row-major) with their signs (length k;
    /// may be empty for unsigned samplers).
    pub fn push(&mut self, chain: usize, draws: &[f64], signs: &[f64]) -> Result<(), JsError> {
        self.push_draws(chain, draws, signs).map_err(js_err)
    }

    /// Draws stored for `chain`.
    pub fn len(&self, chain: usize) -> usize {
        self.draws
            .get(chain)
            .and_then(|c| c.first())
            .map_or(0, |v| v.len())
    }

    /// Whether no draws are stored.
    #[wasm_bindgen(js_name = isEmpty)]
    pub fn is_empty(&self) -> bool {
        self.common().0 == 0
    }

    /// `d × 9` summary, row-major, columns mean, sd, q5, q50, q95, mcse_mean, ess_bulk, ess_tail,
    /// rhat (sign-weighted for signed samplers), over the common length of the chains.
    pub fn summary(&self) -> Float64Array {
        Float64Array::from(self.summary_rows().as_slice())
    }

    /// Convergence warnings (one line each; empty for a healthy run): R-hat > 1.01, ESS < 100,
    /// divergences (`divergent[c]` per chain), stuck chains — the lines `tallmc run` prints.
    pub fn warnings(&self, names: Vec<String>, divergent: &[u32]) -> Vec<String> {
        self.warning_lines(&names, divergent)
    }

    /// Autocorrelation of parameter `j`, lags 0..=max_lag, averaged over chains.
    pub fn acf(&self, j: usize, max_lag: usize) -> Float64Array {
        Float64Array::from(self.acf_values(j, max_lag).as_slice())
    }
}

/// Rank-normalised split R-hat of chains given flat with their lengths.
#[wasm_bindgen]
pub fn rhat(values: &[f64], lengths: &[u32]) -> Result<f64, JsError> {
    Ok(cd::rhat(&split(values, lengths).map_err(js_err)?))
}

/// Bulk effective sample size.
#[wasm_bindgen(js_name = essBulk)]
pub fn ess_bulk(values: &[f64], lengths: &[u32]) -> Result<f64, JsError> {
    Ok(cd::ess_bulk(&split(values, lengths).map_err(js_err)?))
}

/// Tail effective sample size.
#[wasm_bindgen(js_name = essTail)]
pub fn ess_tail(values: &[f64], lengths: &[u32]) -> Result<f64, JsError> {
    Ok(cd::ess_tail(&split(values, lengths).map_err(js_err)?))
}

/// Monte Carlo standard error of the mean.
#[wasm_bindgen(js_name = mcseMean)]
pub fn mcse_mean(values: &[f64], lengths: &[u32]) -> Result<f64, JsError> {
    Ok(cd::mcse_mean(&split(values, lengths).map_err(js_err)?))
}

/// Autocorrelation of one chain (FFT), lags 0..n−1.
#[wasm_bindgen]
pub fn autocorrelation(x: &[f64]) -> Float64Array {
    Float64Array::from(cd::autocorrelation(x).as_slice())
}

/// Summary of one parameter (chains flat with lengths): `[mean, sd, q5, q50, q95, mcse_mean,
/// ess_bulk, ess_tail, rhat]`.
#[wasm_bindgen]
pub fn summarize(values: &[f64], lengths: &[u32]) -> Result<Float64Array, JsError> {
    let s = cd::summarize(&split(values, lengths).map_err(js_err)?);
    Ok(Float64Array::from(
        &[
            s.mean,
            s.sd,
            s.q5,
            s.q50,
            s.q95,
            s.mcse_mean,
            s.ess_bulk,
            s.ess_tail,
            s.rhat,
        ][..],
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_name_a_stuck_chain_and_divergences() {
        let mut s = DrawStore::try_new(2, 1, false).unwrap();
        let moving: Vec<f64> = (0..200).map(|i| ((i * 37) % 101) as f64).collect();
        s.push(0, &moving, &[]).ok();
        s.push(1, &[3.0; 200], &[]).ok();
        let w = s.warning_lines(&["a".to_string()], &[5, 0]);
        assert!(
            w.iter()
                .any(|l| l.starts_with("chain 1 is stuck: it moved in 1 of 200")),
            "{w:?}"
        );
        assert!(
            w.iter()
                .any(|l| l.starts_with("5 of 400 kept draws were divergent")),
            "{w:?}"
        );
        // A chain that never moved makes R-hat NaN (not measurable): the stuck line says it.
        assert!(!w.iter().any(|l| l.starts_with("R-hat")), "{w:?}");
    }

    #[test]
    fn store_uses_the_common_length_of_the_chains() {
        let mut s = DrawStore::try_new(3, 2, false).unwrap();
        assert!(DrawStore::try_new(usize::MAX, 2, false).is_err());
        assert!(DrawStore::try_new(0, 2, false).is_err());
        assert!(DrawStore::try_new(2, usize::MAX, false).is_err());
        assert!(DrawStore::try_new(1024, 1_000_000, false).is_err());
        assert!(s.is_empty());
        assert!(s.summary_rows().iter().all(|v| v.is_nan()));
        s.push(0, &[1.0, 10.0, 2.0, 20.0, 3.0, 30.0], &[]).ok();
        s.push(1, &[4.0, 40.0, 5.0, 50.0], &[]).ok();
        // Chain 2 has no draws yet: summaries use chains 0 and 1, two draws each.
        let (m, chains) = s.common();
        assert_eq!((m, chains), (2, vec![0, 1]));
        assert_eq!(s.len(0), 3);
        assert_eq!(s.draws[0][1], vec![10.0, 20.0, 30.0]);
        assert_eq!(s.summary_rows().len(), 2 * SUMMARY_COLUMNS.len());
        assert_eq!(s.acf_values(0, 10).len(), 2);
        assert!(s.acf_values(5, 10).is_empty());
    }

    #[test]
    fn split_checks_lengths() {
        let v = [1.0, 2.0, 3.0];
        assert_eq!(split(&v, &[1, 2]).unwrap(), vec![&v[..1], &v[1..]]);
        assert!(split(&v, &[1, 1]).is_err());
    }
}
