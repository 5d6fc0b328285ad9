//! One chain in wasm memory: model, chain (kernel + adaptation + state) and its RNG stream.
//!
//! The chain is built exactly as the CLI builds chain `c` of a run: the same table, the same
//! settings bag, `chain_rng(seed, c)`, so draws are bit-identical natively and in the browser.

use crate::config::RunConfig;
use crate::data::DataSet;
use crate::js_err;
use js_sys::{Array, Float64Array, Object, Reflect, Uint32Array, Uint8Array};
use std::sync::Arc;
use tallmc_core::chain::Chain;
use tallmc_core::data::Table;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_model, build_reported_chain, ChainConfig};
use tallmc_core::rng::{chain_rng, ChainRng};
use wasm_bindgen::prelude::*;

use tallmc_core::kernel::EXTRAS;
/// Most chains of a run (the CLI's `--chains` limit): chain indices are below it.
pub const MAX_CHAINS: u64 = 1024;
/// Largest batch, in values of the widest per-batch array.
const MAX_BATCH_VALUES: usize = 1 << 25;

/// The draws and per-draw statistics of one batch of iterations, row-major.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Batch {
    /// Iterations in the batch.
    pub n: usize,
    /// Parameter dimension.
    pub d: usize,
    /// 0-based iteration index (warm-up included) of the first row.
    pub first_iteration: usize,
    /// How many leading rows are warm-up iterations.
    pub n_warmup: usize,
    /// `n × d` positions after each iteration.
    pub draws: Vec<f64>,
    /// Acceptance probability per iteration.
    pub accept_prob: Vec<f64>,
    /// 1 when the iteration diverged.
    pub divergent: Vec<u8>,
    /// Per-datum likelihood evaluations per iteration.
    pub lik_evals: Vec<f64>,
    /// Per-datum gradient evaluations per iteration.
    pub grad_evals: Vec<f64>,
    /// Leapfrog steps per iteration.
    pub n_leapfrog: Vec<u32>,
    /// Step size per iteration.
    pub step_size: Vec<f64>,
    /// Energy per iteration.
    pub energy: Vec<f64>,
    /// Sign per iteration (1 for unsigned samplers).
    pub sign: Vec<f64>,
    /// `n × EXTRAS` kernel-specific extras.
    pub extra: Vec<f64>,
}

/// The chain, natively usable (tests) and wrapped by [`ChainHandle`].
pub struct ChainCore {
    model: Arc<dyn DataModel>,
    chain: Box<dyn Chain>,
    rng: ChainRng,
}

impl ChainCore {
    /// Build chain `config.chain` of the run described by `config` on `table`.
    pub fn new(config: &RunConfig, table: &Table) -> Result<Self, String> {
        let settings = config.settings()?;
        let seed = config.seed()?;
        // chain_rng jumps the stream once per chain index: a huge index would never return.
        if config.chain >= MAX_CHAINS {
            return Err(format!(
                "invalid setting `chain`: {} is outside [0, {}] (at most {MAX_CHAINS} chains, as \
                 `tallmc run --chains`)",
                config.chain,
                MAX_CHAINS - 1
            ));
        }
        let model = build_model(&config.model, table, &config.design(), &settings)
            .map_err(|e| e.to_string())?;
        let mut rng = chain_rng(seed, config.chain);
        let chain_config = ChainConfig {
            sampler: &config.sampler,
            warmup: config.warmup,
            settings: &settings,
        };
        let chain = build_reported_chain(&chain_config, model.clone(), &mut rng)
            .map_err(|e| e.to_string())?;
        settings.check_all_used().map_err(|e| e.to_string())?;
        Ok(ChainCore { model, chain, rng })
    }

    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.chain.dim()
    }

    /// Number of data rows.
    pub fn n_data(&self) -> usize {
        self.model.n()
    }

    /// The chain.
    pub fn chain(&self) -> &dyn Chain {
        self.chain.as_ref()
    }

    /// Step `n` iterations.
    pub fn run(&mut self, n: usize) -> Batch {
        let d = self.chain.dim();
        let first = self.chain.iteration();
        let warm = self.chain.warmup();
        let mut b = Batch {
            n,
            d,
            first_iteration: first,
            n_warmup: warm.saturating_sub(first).min(n),
            draws: Vec::with_capacity(n * d),
            accept_prob: Vec::with_capacity(n),
            divergent: Vec::with_capacity(n),
            lik_evals: Vec::with_capacity(n),
            grad_evals: Vec::with_capacity(n),
            n_leapfrog: Vec::with_capacity(n),
            step_size: Vec::with_capacity(n),
            energy: Vec::with_capacity(n),
            sign: Vec::with_capacity(n),
            extra: Vec::with_capacity(n * EXTRAS),
        };
        for _ in 0..n {
            let info = self.chain.step(&mut self.rng);
            b.draws.extend_from_slice(self.chain.position());
            b.accept_prob.push(info.accept_prob);
            b.divergent.push(u8::from(info.divergent));
            b.lik_evals.push(info.lik_evals as f64);
            b.grad_evals.push(info.grad_evals as f64);
            b.n_leapfrog.push(info.n_leapfrog);
            b.step_size.push(info.step_size);
            b.energy.push(info.energy);
            b.sign.push(info.sign);
            b.extra.extend_from_slice(&info.extra);
        }
        b
    }
}

fn set(o: &Object, k: &str, v: &JsValue) {
    // Reflect::set on a fresh plain object cannot fail.
    let _ = Reflect::set(o, &JsValue::from_str(k), v);
}

/// A chain owned by a Web Worker.
#[wasm_bindgen]
pub struct ChainHandle {
    core: ChainCore,
}

#[wasm_bindgen]
impl ChainHandle {
    /// Build a chain from the JSON configuration (see [`RunConfig`]) and a data set.
    #[wasm_bindgen(constructor)]
    pub fn new(config_json: &str, data: &DataSet) -> Result<ChainHandle, JsError> {
        crate::init();
        let config = RunConfig::parse(config_json).map_err(js_err)?;
        ChainCore::new(&config, &data.table)
            .map(|core| ChainHandle { core })
            .map_err(js_err)
    }

    /// Parameter dimension.
    pub fn dim(&self) -> usize {
        self.core.dim()
    }

    /// Number of data rows the model sees.
    #[wasm_bindgen(js_name = nData)]
    pub fn n_data(&self) -> usize {
        self.core.n_data()
    }

    /// Parameter names.
    #[wasm_bindgen(js_name = paramNames)]
    pub fn param_names(&self) -> Array {
        self.core
            .chain()
            .param_names()
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect()
    }

    /// Names of the meaningful kernel-specific extras.
    #[wasm_bindgen(js_name = extraNames)]
    pub fn extra_names(&self) -> Array {
        self.core
            .chain()
            .extra_names()
            .iter()
            .map(|s| JsValue::from_str(s))
            .collect()
    }

    /// Kernel-specific extras per step (the width of a batch's `extra`, `n × extrasPerStep`).
    #[wasm_bindgen(js_name = extrasPerStep)]
    pub fn extras_per_step(&self) -> usize {
        EXTRAS
    }

    /// Whether draws carry signs.
    pub fn signed(&self) -> bool {
        self.core.chain().signed()
    }

    /// Whether the sampler targets the posterior exactly.
    pub fn exact(&self) -> bool {
        self.core.chain().exact()
    }

    /// Iterations done (warm-up included).
    pub fn iteration(&self) -> usize {
        self.core.chain().iteration()
    }

    /// Warm-up iterations.
    pub fn warmup(&self) -> usize {
        self.core.chain().warmup()
    }

    /// `"warmup"` or `"sampling"`: the phase of the next iteration.
    pub fn phase(&self) -> String {
        let c = self.core.chain();
        if c.iteration() < c.warmup() {
            "warmup".into()
        } else {
            "sampling".into()
        }
    }

    /// Per-datum likelihood evaluations spent outside `step` (mode finding, centring).
    #[wasm_bindgen(js_name = setupLikEvals)]
    pub fn setup_lik_evals(&self) -> f64 {
        self.core.chain().setup_cost().lik_evals as f64
    }

    /// Per-datum gradient evaluations spent outside `step`.
    #[wasm_bindgen(js_name = setupGradEvals)]
    pub fn setup_grad_evals(&self) -> f64 {
        self.core.chain().setup_cost().grad_evals as f64
    }

    /// Time-series samplers: the window of the last filter run and the filter's ESS over it,
    /// `{t, start, end, subStart, subEnd (0-based half-open), particles, ess (Float64Array over
    /// start..end; empty for Kalman)}`; `null` for other samplers or before the first step.
    #[wasm_bindgen(js_name = windowTrace)]
    pub fn window_trace(&self) -> JsValue {
        let Some(tr) = self.core.chain().window_trace() else {
            return JsValue::NULL;
        };
        let o = Object::new();
        let w = tr.window;
        set(&o, "t", &JsValue::from(self.core.n_data() as f64));
        set(&o, "start", &JsValue::from(w.start as f64));
        set(&o, "end", &JsValue::from(w.end as f64));
        set(&o, "subStart", &JsValue::from(w.sub_start as f64));
        set(&o, "subEnd", &JsValue::from(w.sub_end as f64));
        set(&o, "particles", &JsValue::from(tr.particles as f64));
        set(&o, "ess", &Float64Array::from(tr.ess.as_slice()));
        o.into()
    }

    /// Step `n` iterations. Returns a plain object of typed arrays (transferable):
    /// `{n, d, firstIteration, nWarmup, draws (n×d row-major), acceptProb, divergent (Uint8),
    /// likEvals, gradEvals, nLeapfrog (Uint32), stepSize, energy, sign, extra (n × extrasPerStep)}`.
    pub fn run(&mut self, n: usize) -> Result<Object, JsError> {
        if n.saturating_mul(self.core.dim().max(EXTRAS)) > MAX_BATCH_VALUES {
            return Err(js_err(format!(
                "batch of {n} iterations is too large (at most {MAX_BATCH_VALUES} values)"
            )));
        }
        let b = self.core.run(n);
        let o = Object::new();
        set(&o, "n", &JsValue::from(b.n as u32));
        set(&o, "d", &JsValue::from(b.d as u32));
        set(
            &o,
            "firstIteration",
            &JsValue::from(b.first_iteration as f64),
        );
        set(&o, "nWarmup", &JsValue::from(b.n_warmup as u32));
        set(&o, "draws", &Float64Array::from(b.draws.as_slice()));
        set(
            &o,
            "acceptProb",
            &Float64Array::from(b.accept_prob.as_slice()),
        );
        set(&o, "divergent", &Uint8Array::from(b.divergent.as_slice()));
        set(&o, "likEvals", &Float64Array::from(b.lik_evals.as_slice()));
        set(
            &o,
            "gradEvals",
            &Float64Array::from(b.grad_evals.as_slice()),
        );
        set(&o, "nLeapfrog", &Uint32Array::from(b.n_leapfrog.as_slice()));
        set(&o, "stepSize", &Float64Array::from(b.step_size.as_slice()));
        set(&o, "energy", &Float64Array::from(b.energy.as_slice()));
        set(&o, "sign", &Float64Array::from(b.sign.as_slice()));
        set(&o, "extra", &Float64Array::from(b.extra.as_slice()));
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(sampler: &str, chain: u64) -> RunConfig {
        RunConfig::parse(&format!(
            r#"{{"model":"logistic","sampler":"{sampler}","response":"y","warmup":20,"seed":3,"chain":{chain}}}"#
        ))
        .unwrap()
    }

    #[test]
    fn batches_are_reproducible_and_split_like_one_run() {
        let t = crate::data::simulate_table("logistic", 200, 3, 1).unwrap();
        let mut a = ChainCore::new(&config("nuts", 1), &t).unwrap();
        let mut b = ChainCore::new(&config("nuts", 1), &t).unwrap();
        let whole = a.run(30);
        let mut parts = b.run(7);
        let rest = b.run(23);
        assert_eq!(whole.n_warmup, 20);
        assert_eq!(
            (parts.n_warmup, rest.n_warmup, rest.first_iteration),
            (7, 13, 7)
        );
        parts.draws.extend_from_slice(&rest.draws);
        assert_eq!(whole.draws, parts.draws);
        assert_eq!(whole.draws.len(), 30 * a.dim());
        assert_eq!(whole.extra.len(), 30 * EXTRAS);
    }

    #[test]
    fn errors_name_the_problem() {
        let t = crate::data::simulate_table("logistic", 50, 2, 1).unwrap();
        let e = ChainCore::new(&config("no-such-sampler", 0), &t)
            .err()
            .unwrap();
        assert!(e.contains("no-such-sampler"), "{e}");
        let mut c = config("nuts", 0);
        c.settings.insert("typo_key".into(), serde_json::json!(1));
        let e = ChainCore::new(&c, &t).err().unwrap();
        assert!(e.contains("typo_key"), "{e}");
        let mut c = config("nuts", 0);
        c.response = "nope".into();
        let e = ChainCore::new(&c, &t).err().unwrap();
        assert!(e.contains("nope"), "{e}");
        let e = crate::data::parse_csv(b"y,x\n1,2\n1\n", "bad.csv").unwrap_err();
        assert!(e.contains("bad.csv") && e.contains('3'), "{e}");
    }
}
