//! The bias of `pf-sgld`'s particle gradient on the dax series (`sv`, DESIGN.md's default
//! priors), against the exact score of a grid filter (600 nodes on [−9, 9]; central finite
//! differences of its log-likelihood, step 10⁻⁴). A diagnostic, not a test: it prints, at each
//! θ = (φ, log σ, log τ), the mean of `reps` full-series particle gradients (the buffered
//! estimator with `pf-sgld`'s default window) minus the grid score, with its standard error, for
//! each filter setting given.
//!
//! ```text
//! cargo run --release -p tallmc-tests --example sv_score_bias -- REPS THETA [THETA ...] \
//!     -- "particles=500" "particles=500 ess_threshold=0.5" ...
//! ```
//!
//! e.g. `... -- 300 0.486,-0.157,-0.502 0.8,-0.5,-0.45 -- particles=500 particles=2000`
//! (BENCHMARKS.md, "pf-sgld's bias on dax").

use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::ssm::buffered::{BufferConfig, BufferedGradient};
use tallmc_core::ssm::pf::PfConfig;
use tallmc_tests::realdata::{load, model_of};

fn parse_theta(s: &str) -> Result<Vec<f64>, String> {
    let v: Result<Vec<f64>, _> = s.split(',').map(str::parse).collect();
    match v {
        Ok(v) if v.len() == 3 => Ok(v),
        _ => Err(format!("θ must be three numbers φ,log σ,log τ: {s}")),
    }
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: sv_score_bias REPS THETA [THETA ...] -- SETTINGS [SETTINGS ...]";
    let split = args.iter().position(|a| a == "--").ok_or(usage)?;
    let (head, cfgs) = (&args[..split], &args[split + 1..]);
    let reps: usize = head.first().and_then(|r| r.parse().ok()).ok_or(usage)?;
    let thetas = head[1..]
        .iter()
        .map(|s| parse_theta(s))
        .collect::<Result<Vec<_>, _>>()?;
    let rt = load("dax");
    let model = model_of(&rt, &[]);
    let series = model.as_series().ok_or("dax is not a series")?;
    let (ssm, y) = (series.ssm(), series.y());
    let window =
        BufferConfig::from_settings(&Settings::new(), y.len()).map_err(|e| e.to_string())?;
    for th in &thetas {
        let exact = tallmc_tests::grid_score(ssm, th, y, 600, 9.0);
        println!("θ = {th:?}: grid score {exact:.3?}");
        for c in cfgs {
            let mut s = Settings::new();
            for kv in c.split_whitespace() {
                s.insert_pair(kv).map_err(|e| e.to_string())?;
            }
            let pf = PfConfig::from_settings(&s).map_err(|e| e.to_string())?;
            let mut grad = BufferedGradient::new(window, pf).map_err(|e| e.to_string())?;
            let mut rng = chain_rng(11, 0);
            let (mut sum, mut sum2) = ([0.0; 3], [0.0; 3]);
            for _ in 0..reps {
                let mut g = [0.0; 3];
                grad.estimate(ssm, th, y, &mut rng, &mut g)
                    .map_err(|e| e.to_string())?;
                for j in 0..3 {
                    sum[j] += g[j];
                    sum2[j] += g[j] * g[j];
                }
            }
            let r = reps as f64;
            let cols: Vec<String> = (0..3)
                .map(|j| {
                    let m = sum[j] / r;
                    let var = sum2[j] / r - m * m;
                    format!(
                        "{:+.3} ± {:.3} (var {:.1})",
                        m - exact[j],
                        (var / r).sqrt(),
                        var
                    )
                })
                .collect();
            println!("  [{c}] particle − grid: {}", cols.join(", "));
        }
    }
    Ok(())
}
