//! The real-data suite's harness: real tables shipped inside registry packages (fixtures made by
//! `tests/fixtures/realdata/make_realdata.py`), their NumPyro NUTS reference posteriors (made by
//! `make_reference.py`, never at test time), and a runner that builds the model and the chains
//! exactly as `tallmc run` does (the CLI's CSV parser, the registry, default settings) and
//! measures a run against the reference.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tallmc_core::chain::{run_chain, Cost, Phase};
use tallmc_core::data::{DesignSpec, Table};
use tallmc_core::diag;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{build_model, build_reported_chain, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;

/// The real tables: (name, response column, model); `dax` is a time series (its one column).
pub const TABLES: [(&str, &str, &str); 6] = [
    ("flights", "late", "logistic"),
    ("fertility", "morekids", "logistic"),
    ("hmda", "deny", "logistic"),
    ("rwm1984", "docvis", "poisson"),
    ("cps1985", "wage", "robust"),
    ("dax", "dax", "sv"),
];

/// Whether `sampler` runs on `model` (the registry's routing: time-series samplers on
/// time-series models, i.i.d. samplers on the models they list, or on all when they list none).
pub fn runs_on(sampler: &str, model: &str) -> bool {
    tallmc_core::registry::compatible(sampler, model)
}

/// One parameter of a reference posterior.
#[derive(Debug, Clone)]
pub struct RefParam {
    /// Name (`intercept` first, then the feature columns).
    pub param: String,
    /// Posterior mean.
    pub mean: f64,
    /// Posterior sd.
    pub sd: f64,
    /// Monte Carlo standard error of the reference mean.
    pub mcse: f64,
}

/// A real table with its model and reference.
pub struct RealTable {
    /// Fixture name.
    pub name: &'static str,
    /// Response column.
    pub response: &'static str,
    /// tallmc model name.
    pub model: &'static str,
    /// The data, parsed by the CLI's parser.
    pub table: Table,
    /// The NumPyro reference, one row per parameter.
    pub reference: Vec<RefParam>,
}

/// The fixture directory.
pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/realdata")
}

/// Load table `name` (one of [`TABLES`]) and its reference.
pub fn load(name: &str) -> RealTable {
    let (name, response, model) = *TABLES
        .iter()
        .find(|t| t.0 == name)
        .unwrap_or_else(|| panic!("no real table {name}"));
    let dir = fixture_dir();
    let plain = dir.join(format!("{name}.csv"));
    let bytes = if plain.exists() {
        std::fs::read(&plain).expect("read fixture")
    } else {
        let gz = std::fs::read(dir.join(format!("{name}.csv.gz"))).expect("read fixture");
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(gz.as_slice())
            .read_to_end(&mut out)
            .expect("gunzip fixture");
        out
    };
    let table = tallmc_cli::csvdata::parse_csv(&bytes, name).expect("parse fixture");
    let text = std::fs::read_to_string(dir.join(format!("{name}.reference.csv")))
        .expect("reference fixture (make_reference.py)");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |k: &str| header.iter().position(|h| *h == k).unwrap();
    let (ip, im, is, ie) = (col("param"), col("mean"), col("sd"), col("mcse_mean"));
    let reference = lines
        .map(|l| {
            let v: Vec<&str> = l.split(',').collect();
            RefParam {
                param: v[ip].to_string(),
                mean: v[im].parse().unwrap(),
                sd: v[is].parse().unwrap(),
                mcse: v[ie].parse().unwrap(),
            }
        })
        .collect();
    RealTable {
        name,
        response,
        model,
        table,
        reference,
    }
}

/// How a run compares with the reference.
#[derive(Debug, Clone)]
pub struct Assessment {
    /// Per parameter: (name, mean, |mean − reference mean| / reference sd, R-hat, bulk ESS).
    pub params: Vec<(String, f64, f64, f64, f64)>,
    /// max over parameters of |mean − reference mean| / reference sd.
    pub max_dev_sd: f64,
    /// max R-hat.
    pub max_rhat: f64,
    /// min bulk ESS.
    pub min_ess: f64,
    /// Sampling-phase full-data passes per kept iteration, over all chains.
    pub data_fraction: f64,
    /// Set-up, warm-up and sampling evaluations of all chains (the model's reparametrisation
    /// included once).
    pub total_cost: Cost,
    /// Wall seconds of the whole run (model building included).
    pub seconds: f64,
}

impl std::fmt::Display for Assessment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "max |Δmean|/sd {:.3}, max R-hat {:.3}, min ESS {:.0}, data/iter {:.2e}, {:.1} s",
            self.max_dev_sd, self.max_rhat, self.min_ess, self.data_fraction, self.seconds
        )
    }
}

/// One chain's kept draws, sampling cost, and set-up plus warm-up cost.
type ChainRun = (Vec<Vec<f64>>, Cost, Cost);

/// The model of a real table as `tallmc run` builds it: default design (intercept, raw
/// features), the given model settings (`key=value`).
pub fn model_of(rt: &RealTable, model_settings: &[&str]) -> Arc<dyn DataModel> {
    let spec = DesignSpec {
        response: rt.response.into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let mut s = Settings::new();
    for kv in model_settings {
        s.insert_pair(kv).unwrap();
    }
    build_model(rt.model, &rt.table, &spec, &s).expect("build model")
}

/// Run `chains` chains of `sampler` (settings `key=value`, `reparam=…` goes to the model) on a
/// real table, one thread per chain, and compare with the reference.
pub fn assess(
    rt: &RealTable,
    sampler: &str,
    settings: &[&str],
    chains: usize,
    warmup: usize,
    draws: usize,
    seed: u64,
) -> Result<Assessment, String> {
    let t0 = Instant::now();
    let (model_kv, sampler_kv): (Vec<&str>, Vec<&str>) = settings
        .iter()
        .partition(|kv| kv.starts_with("reparam=") || kv.starts_with("prior"));
    let model = model_of(rt, &model_kv);
    let n = model.n();
    let outs: Vec<Result<ChainRun, String>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..chains)
            .map(|c| {
                let model = model.clone();
                let sampler_kv = &sampler_kv;
                scope.spawn(move || {
                    let mut s = Settings::new();
                    for kv in sampler_kv {
                        s.insert_pair(kv).map_err(|e| e.to_string())?;
                    }
                    let config = ChainConfig {
                        sampler,
                        warmup,
                        settings: &s,
                    };
                    let mut rng = chain_rng(seed, c as u64);
                    // as `tallmc run`: time-series models report φ, σ, τ (natural scale)
                    let mut chain = build_reported_chain(&config, model, &mut rng)
                        .map_err(|e| e.to_string())?;
                    let mut kept = Vec::with_capacity(draws);
                    let (samp, warm) =
                        run_chain(chain.as_mut(), &mut rng, draws, |ph, _, th, _| {
                            if ph == Phase::Sampling {
                                kept.push(th.to_vec());
                            }
                        });
                    let setup = chain.setup_cost();
                    let all = Cost {
                        lik_evals: warm.lik_evals + setup.lik_evals,
                        grad_evals: warm.grad_evals + setup.grad_evals,
                    };
                    Ok((kept, samp, all))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("chain panicked".into())))
            .collect()
    });
    let mut runs = Vec::new();
    let mut samp = Cost::default();
    let mut total = model.reparam_info().map(|i| i.cost).unwrap_or_default();
    for o in outs {
        let (kept, s1, rest) = o?;
        samp.lik_evals += s1.lik_evals;
        samp.grad_evals += s1.grad_evals;
        total.lik_evals += s1.lik_evals + rest.lik_evals;
        total.grad_evals += s1.grad_evals + rest.grad_evals;
        runs.push(kept);
    }
    let d = model.dim();
    let mut params = Vec::with_capacity(d);
    let names = model.reported_names();
    for j in 0..d {
        let cols: Vec<Vec<f64>> = runs
            .iter()
            .map(|r| r.iter().map(|t| t[j]).collect())
            .collect();
        let refs: Vec<&[f64]> = cols.iter().map(|c| c.as_slice()).collect();
        let all: Vec<f64> = cols.concat();
        let mean = all.iter().sum::<f64>() / all.len() as f64;
        let r = &rt.reference[j];
        assert_eq!(r.param, names[j], "{}: parameter order", rt.name);
        params.push((
            names[j].clone(),
            mean,
            (mean - r.mean).abs() / r.sd,
            diag::rhat(&refs),
            diag::ess_bulk(&refs),
        ));
    }
    let nan_max = |f: fn(&(String, f64, f64, f64, f64)) -> f64| {
        params.iter().map(f).fold(0.0f64, |m, v| {
            if v.is_nan() || m.is_nan() {
                f64::NAN
            } else {
                m.max(v)
            }
        })
    };
    let max_dev_sd = nan_max(|p| p.2);
    let max_rhat = nan_max(|p| p.3);
    let min_ess = params.iter().map(|p| p.4).fold(f64::INFINITY, f64::min);
    Ok(Assessment {
        params,
        max_dev_sd,
        max_rhat,
        min_ess,
        data_fraction: samp.full_passes(n) / (chains * draws).max(1) as f64,
        total_cost: total,
        seconds: t0.elapsed().as_secs_f64(),
    })
}
