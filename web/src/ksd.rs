//! Kernel Stein discrepancy for the playground: a store that keeps a thinned subset of the kept
//! draws of every chain, caches their exact scores (its own copy of the model, built from the
//! run's configuration and data exactly as the chains build theirs) and returns the KSD of the
//! run so far together with its trace against the iteration (`tallmc_core::diag::ksd`).
//!
//! Thinning: chain c keeps its kept draw i when i is a multiple of the current stride; when
//! more than `max_draws` draws are stored the stride doubles and the others are dropped. So the
//! store always holds evenly spaced draws of every chain, at most `max_draws` in all, and each
//! stored draw's score (n per-datum gradients) is computed once.

use crate::config::RunConfig;
use crate::data::DataSet;
use crate::js_err;
use js_sys::{Float64Array, Object, Reflect};
use std::sync::Arc;
use tallmc_core::data::Table;
use tallmc_core::diag::ksd;
use tallmc_core::model::DataModel;
use tallmc_core::registry::build_model;
use wasm_bindgen::prelude::*;

/// One stored draw.
struct Stored {
    /// 0-based kept-draw index within its chain.
    index: usize,
    theta: Vec<f64>,
    score: Option<Vec<f64>>,
    sign: f64,
}

/// The KSD of the run so far.
#[derive(Debug, Clone, PartialEq)]
pub struct KsdResult {
    /// Kept draws per chain (1-based) at each point of the trace.
    pub iterations: Vec<f64>,
    /// Joint KSD of the stored draws up to that point (time order).
    pub trace: Vec<f64>,
    /// Joint KSD of every stored draw (√V).
    pub joint: f64,
    /// The thesis's KSD Σⱼ √Vⱼ.
    pub thesis: f64,
    /// Stored draws used.
    pub draws: usize,
}

/// Natively testable half of [`KsdStore`].
pub struct KsdCore {
    model: Arc<dyn DataModel>,
    d: usize,
    max: usize,
    stride: usize,
    signed: bool,
    counts: Vec<usize>,
    stored: Vec<Vec<Stored>>,
    /// Per-datum gradient evaluations spent on scores so far.
    pub score_evals: u64,
}

impl KsdCore {
    /// A store for `chains` chains of the run `config` on `table`, keeping at most `max_draws`
    /// draws (0: [`ksd::budget_draws`]`(n, d)`; at least 2, and at least one per chain).
    pub fn new(
        config: &RunConfig,
        table: &Table,
        chains: usize,
        signed: bool,
        max_draws: usize,
    ) -> Result<Self, String> {
        if chains == 0 || chains as u64 > crate::chain::MAX_CHAINS {
            return Err(format!(
                "chains: {chains} is outside [1, {}]",
                crate::chain::MAX_CHAINS
            ));
        }
        let settings = config.settings()?;
        let model = build_model(&config.model, table, &config.design(), &settings)
            .map_err(|e| e.to_string())?;
        let d = model.dim();
        let max = if max_draws == 0 {
            ksd::budget_draws(model.n(), d)
        } else {
            max_draws
        };
        Ok(KsdCore {
            model,
            d,
            // Every chain keeps its first kept draw, so the cap is at least one per chain
            // (and the stride doubling below always ends).
            max: max.max(2).max(chains),
            stride: 1,
            signed,
            counts: vec![0; chains],
            stored: (0..chains).map(|_| Vec::new()).collect(),
            score_evals: 0,
        })
    }

    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.d
    }

    /// Draws currently stored.
    pub fn stored(&self) -> usize {
        self.stored.iter().map(Vec::len).sum()
    }

    /// Append kept draws of `chain` (`k × d` row-major) and their signs (length k, or empty for
    /// unsigned samplers).
    pub fn push(&mut self, chain: usize, draws: &[f64], signs: &[f64]) -> Result<(), String> {
        let d = self.d.max(1);
        if chain >= self.counts.len() {
            return Err(format!("KSD: no chain {chain}"));
        }
        let k = draws.len() / d;
        if k * d != draws.len() || (!signs.is_empty() && signs.len() != k) {
            return Err("KSD: batch shape does not match the dimension".into());
        }
        for (r, row) in draws.chunks_exact(d).enumerate() {
            let i = self.counts[chain];
            self.counts[chain] += 1;
            // The stride is a power of two.
            if i & (self.stride - 1) == 0 {
                // Reported draws of time-series models go back to the chain's coordinates,
                // where the scores live.
                let theta = if self.model.reports_transformed() {
                    self.model
                        .position_of_reported(row)
                        .ok_or("KSD: a reported draw is outside the support")?
                } else {
                    row.to_vec()
                };
                self.stored[chain].push(Stored {
                    index: i,
                    theta,
                    score: None,
                    sign: if self.signed {
                        signs.get(r).copied().unwrap_or(1.0)
                    } else {
                        1.0
                    },
                });
            }
            while self.stored() > self.max {
                self.stride *= 2;
                let s = self.stride;
                for c in &mut self.stored {
                    c.retain(|p| p.index & (s - 1) == 0);
                }
            }
        }
        Ok(())
    }

    /// The KSD of the stored draws (exact scores, IMQ c = 1, β = −½) and its trace in time
    /// order (by kept-draw index, then chain). `None` with fewer than 2 stored draws.
    pub fn compute(&mut self) -> Result<Option<KsdResult>, String> {
        let n = self.model.n() as u64;
        for c in &mut self.stored {
            for p in c.iter_mut().filter(|p| p.score.is_none()) {
                let s =
                    ksd::exact_scores(self.model.as_ref(), &p.theta).map_err(|e| e.to_string())?;
                self.score_evals += n;
                p.score = Some(s);
            }
        }
        let mut order: Vec<(usize, usize, usize)> = Vec::with_capacity(self.stored());
        for (c, ps) in self.stored.iter().enumerate() {
            for (k, p) in ps.iter().enumerate() {
                order.push((p.index, c, k));
            }
        }
        if order.len() < 2 {
            return Ok(None);
        }
        order.sort_unstable();
        let mut points = Vec::with_capacity(order.len() * self.d);
        let mut scores = Vec::with_capacity(order.len() * self.d);
        let mut weights = Vec::with_capacity(order.len());
        let mut iterations = Vec::with_capacity(order.len());
        for &(i, c, k) in &order {
            let p = &self.stored[c][k];
            points.extend_from_slice(&p.theta);
            scores.extend_from_slice(p.score.as_deref().unwrap_or(&[]));
            weights.push(p.sign);
            iterations.push((i + 1) as f64);
        }
        let kernel = ksd::Imq::DEFAULT;
        let w = if self.signed {
            Some(weights.as_slice())
        } else {
            None
        };
        let trace =
            ksd::ksd_trace(&kernel, &points, &scores, w, self.d).map_err(|e| e.to_string())?;
        let all = ksd::ksd_weighted(&kernel, &points, &scores, &weights, self.d)
            .map_err(|e| e.to_string())?;
        Ok(Some(KsdResult {
            iterations,
            trace,
            joint: all.joint,
            thesis: all.thesis,
            draws: all.draws,
        }))
    }
}

fn set(o: &Object, k: &str, v: &JsValue) {
    // Reflect::set on a fresh plain object cannot fail.
    let _ = Reflect::set(o, &JsValue::from_str(k), v);
}

/// The playground's KSD store (owned by the KSD worker).
#[wasm_bindgen]
pub struct KsdStore {
    core: KsdCore,
}

#[wasm_bindgen]
impl KsdStore {
    /// A store for the run described by `config_json` (the chains' configuration) on `data`,
    /// with `chains` chains, keeping at most `max_draws` draws (0: the CLI's default,
    /// [`ksd::budget_draws`]`(n, d)`, 1000 unless n·d > 10⁶).
    #[wasm_bindgen(constructor)]
    pub fn new(
        config_json: &str,
        data: &DataSet,
        chains: usize,
        signed: bool,
        max_draws: usize,
    ) -> Result<KsdStore, JsError> {
        crate::init();
        let config = RunConfig::parse(config_json).map_err(js_err)?;
        KsdCore::new(&config, &data.table, chains, signed, max_draws)
            .map(|core| KsdStore { core })
            .map_err(js_err)
    }

    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.core.dim()
    }

    /// Append kept draws of `chain` (`k × d` row-major) with their signs (may be empty).
    pub fn push(&mut self, chain: usize, draws: &[f64], signs: &[f64]) -> Result<(), JsError> {
        self.core.push(chain, draws, signs).map_err(js_err)
    }

    /// `{iterations, ksd (Float64Arrays: the trace), joint, thesis, draws, scoreEvals}`, or
    /// null with fewer than two stored draws.
    pub fn compute(&mut self) -> Result<JsValue, JsError> {
        let Some(r) = self.core.compute().map_err(js_err)? else {
            return Ok(JsValue::NULL);
        };
        let o = Object::new();
        set(
            &o,
            "iterations",
            &Float64Array::from(r.iterations.as_slice()),
        );
        set(&o, "ksd", &Float64Array::from(r.trace.as_slice()));
        set(&o, "joint", &JsValue::from(r.joint));
        set(&o, "thesis", &JsValue::from(r.thesis));
        set(&o, "draws", &JsValue::from(r.draws as u32));
        set(
            &o,
            "scoreEvals",
            &JsValue::from(self.core.score_evals as f64),
        );
        Ok(o.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> RunConfig {
        RunConfig::parse(r#"{"model":"logistic","sampler":"nuts","response":"y","seed":1}"#)
            .unwrap()
    }

    #[test]
    fn thins_and_matches_the_core_ksd() {
        let t = crate::data::simulate_table("logistic", 300, 3, 1).unwrap();
        let mut k = KsdCore::new(&config(), &t, 2, false, 8).unwrap();
        assert!(k.compute().unwrap().is_none());
        let d = k.dim();
        let draws: Vec<f64> = (0..20 * d).map(|i| 0.01 * (i % 7) as f64).collect();
        k.push(0, &draws, &[]).unwrap();
        k.push(1, &draws[..10 * d], &[]).unwrap();
        assert!(k.stored() <= 8);
        assert!(k.push(2, &draws, &[]).is_err());
        assert!(k.push(0, &draws[..d + 1], &[]).is_err());
        let r = k.compute().unwrap().unwrap();
        assert_eq!(r.draws, k.stored());
        assert_eq!(r.trace.len(), r.draws);
        assert!((r.trace[r.draws - 1] - r.joint).abs() < 1e-12);
        assert!(r.iterations.windows(2).all(|w| w[0] <= w[1]));
        // Same as the core function on the stored draws.
        let mut pts = Vec::new();
        for c in &k.stored {
            for p in c {
                pts.extend_from_slice(&p.theta);
            }
        }
        let s = ksd::exact_scores(k.model.as_ref(), &pts).unwrap();
        let direct = ksd::ksd(&ksd::Imq::DEFAULT, &pts, &s, d).unwrap();
        assert!((direct.joint - r.joint).abs() < 1e-12 * r.joint);
        // Scores are computed once per stored draw.
        let evals = k.score_evals;
        k.compute().unwrap();
        assert_eq!(k.score_evals, evals);
    }

    #[test]
    fn cap_defaults_to_the_budget_and_covers_every_chain() {
        let t = crate::data::simulate_table("logistic", 300, 3, 1).unwrap();
        let k = KsdCore::new(&config(), &t, 2, false, 0).unwrap();
        assert_eq!(k.max, ksd::budget_draws(300, k.dim()));
        // More chains than the cap: one draw each, and pushing terminates.
        let mut k = KsdCore::new(&config(), &t, 5, false, 2).unwrap();
        let d = k.dim();
        let draws = vec![0.01; 4 * d];
        for c in 0..5 {
            k.push(c, &draws, &[]).unwrap();
        }
        assert_eq!(k.stored(), 5);
    }
}
