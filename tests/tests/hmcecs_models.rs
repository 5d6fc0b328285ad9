//! HMC-ECS on every data model of the registry: builds through the registry, runs warm-up and
//! sampling without errors, non-finite draws or full-data work after warm-up, for both variants.
//! A smoke test (short chains), not a statistical one.
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_models:: -- --nocapture`

use tallmc_core::chain::{run_chain, Phase};
use tallmc_core::data::DesignSpec;
use tallmc_core::registry::{build_chain, build_model, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::settings::Settings;
use tallmc_core::simulate::simulate;

#[test]
fn every_model_runs() {
    let n = 5_000;
    for model in ["logistic", "linear", "robust", "poisson", "gmm", "gaussian"] {
        let table = simulate(model, n, 4, 3, &Settings::new()).unwrap();
        let spec = DesignSpec {
            response: if model == "gmm" {
                "x".into()
            } else {
                "y".into()
            },
            features: None,
            intercept: !matches!(model, "gmm" | "gaussian"),
            standardize: false,
        };
        let m = match build_model(model, &table, &spec, &Settings::new()) {
            Ok(m) => m,
            Err(e) => {
                println!("{model}: model not built ({e}); skipped");
                continue;
            }
        };
        for sampler in ["hmc-ecs", "hmc-ecs-signed"] {
            let s = Settings::new();
            let config = ChainConfig {
                sampler,
                warmup: 300,
                settings: &s,
            };
            let mut rng = chain_rng(4, 0);
            let mut chain = build_chain(&config, m.clone(), &mut rng)
                .unwrap_or_else(|e| panic!("{model} {sampler}: {e}"));
            let (mut acc, mut u_acc, mut max_evals, mut finite) = (0.0, 0.0, 0u64, true);
            let draws = 300;
            run_chain(&mut *chain, &mut rng, draws, |ph, _, th, info| {
                if ph == Phase::Sampling {
                    acc += info.accept_prob / draws as f64;
                    u_acc += info.extra[1] / draws as f64;
                    max_evals = max_evals.max(info.lik_evals);
                    finite &= th.iter().all(|x| x.is_finite());
                }
            });
            println!(
                "{model} {sampler}: accept {acc:.3}, u-accept {u_acc:.3}, max evals/iter {max_evals}"
            );
            assert!(finite, "{model} {sampler}: non-finite draw");
            assert!(
                max_evals < (n as u64) * 10,
                "{model} {sampler}: {max_evals} evals in one iteration"
            );
            assert!(acc > 0.3, "{model} {sampler}: acceptance {acc}");
        }
    }
}
