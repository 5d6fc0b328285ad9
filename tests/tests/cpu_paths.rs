//! The hot loops compiled twice (`tallmc_core::cpu`: a baseline copy and an AVX2 copy chosen at
//! run time) give the same bits: the same models, passes and chains are run with AVX2, then
//! with the baseline copies (`cpu::disable_avx2`, for the rest of this process, which is why
//! this file holds one test), and every number is compared bit for bit. On a CPU without AVX2
//! both runs take the baseline and the test only checks that the runs repeat.

use std::sync::Arc;
use tallmc_core::chain::Phase;
use tallmc_core::estimator::ControlVariates;
use tallmc_core::model::DataModel;
use tallmc_core::registry::{run_chains, ChainConfig};
use tallmc_core::settings::Settings;

fn model(name: &str, n: usize, d: usize, reparam: &str) -> Arc<dyn DataModel> {
    tallmc_tests::simulated_model(name, n, d, 11, reparam)
}

/// Every number the twinned loops produce on the way: model building (the whitening's Newton
/// and row transform on ≥ 2¹⁷ rows), full-data passes, control variates, an HMC-ECS chain with
/// warm-up re-centrings, an SGLD chain and the minibatch-MH chains.
fn everything() -> Vec<u64> {
    let mut bits = Vec::new();
    let cases = [
        ("logistic", 140_001, 9, "auto"),
        ("logistic", 20_003, 7, "none"),
        ("poisson", 20_003, 5, "auto"),
        ("linear", 20_003, 6, "none"),
    ];
    for (name, n, d, reparam) in cases {
        let m = model(name, n, d, reparam);
        let dim = m.dim();
        let theta: Vec<f64> = (0..dim).map(|k| 0.03 * k as f64 - 0.05).collect();
        let mut g = vec![0.0; dim];
        bits.push(m.log_lik_grad_all(&theta, &mut g).to_bits());
        bits.extend(g.iter().map(|v| v.to_bits()));
        bits.push(m.log_lik_all(&theta).to_bits());
        // Six points: a group of four in the vector lanes and a padded one.
        let points: Vec<f64> = (0..6 * dim).map(|j| 0.01 * (j % 5) as f64).collect();
        let mut g = vec![0.0; 6 * dim];
        let v = m.log_lik_grad_all_many(&points, &mut g);
        bits.extend(v.iter().chain(&g).map(|v| v.to_bits()));
        let idx: Vec<usize> = (0..1_301).map(|k| (k * 7_919) % n).collect();
        let mut g = vec![0.0; dim];
        bits.push(m.log_lik_grad_batch(&theta, &idx, &mut g).to_bits());
        bits.extend(g.iter().map(|v| v.to_bits()));
        let mut g = vec![0.0; dim];
        m.grad_batch(&theta, &idx, &mut g);
        bits.extend(g.iter().map(|v| v.to_bits()));
        let cv = ControlVariates::new(&*m, &theta, 2).unwrap();
        bits.push(cv.sum_loglik_at_centre().to_bits());
        bits.extend(cv.sum_grad().iter().map(|v| v.to_bits()));
        bits.extend(cv.sum_hess().iter().map(|v| v.to_bits()));
        if let Some(info) = m.reparam_info() {
            bits.push(info.rows_used as u64);
        }
        for (sampler, warmup, draws, settings) in [
            ("hmc-ecs", 150, 100, vec![("m", "700")]),
            ("sgld", 0, 300, vec![("batch_size", "301")]),
            // The minibatch tests' batched differences (each row read once for θ and θ′, the
            // family and the control variate's remainders in loops of their own).
            // (short: on the 140 001-row case every mh-sublhd step can read all the data)
            ("mh-sublhd", 10, 30, vec![]),
            ("austere-mh", 20, 60, vec![]),
            ("mh-minibatch", 20, 60, vec![]),
            ("mh-minibatch", 0, 60, vec![("control", "none")]),
        ] {
            let mut set = Settings::new();
            for (k, v) in settings {
                set.insert(k, v);
            }
            let config = ChainConfig {
                sampler,
                warmup,
                settings: &set,
            };
            run_chains(&config, m.clone(), 3, 1, draws, |_, phase, _, th, info| {
                if phase == Phase::Sampling {
                    bits.extend(th.iter().map(|v| v.to_bits()));
                    // The energy, acceptance and extras (σ̂² for HMC-ECS) as well as the draws.
                    bits.push(info.energy.to_bits());
                    bits.push(info.accept_prob.to_bits());
                    bits.extend(info.extra.iter().map(|v| v.to_bits()));
                }
            })
            .unwrap();
        }
    }
    // The stochastic volatility model's batched Laplace proposal (twinned modes and weights),
    // through the particle filter's likelihood and score.
    {
        use tallmc_core::rng::chain_rng;
        use tallmc_core::ssm::pf::{ParticleFilter, PfConfig, Proposal, ScoreSpec};
        use tallmc_core::ssm::resample::Resampling;
        use tallmc_core::ssm::sv::StochasticVolatility;
        use tallmc_core::ssm::StateSpaceModel;
        let model = StochasticVolatility::default();
        let theta = [0.9, 0.5f64.ln(), 0.5f64.ln()];
        let (_, mut y) = model.simulate(&theta, 61, &mut chain_rng(3, 0));
        y[7] = 0.0;
        y[20] = 40.0;
        let cfg = PfConfig::new(257, Proposal::Optimal, Resampling::Systematic, 0.5).unwrap();
        let mut pf = ParticleFilter::new(cfg).unwrap();
        let out = pf
            .run(
                &model,
                &theta,
                &y,
                Some(ScoreSpec::full()),
                &mut chain_rng(4, 0),
            )
            .unwrap();
        bits.push(out.log_lik.to_bits());
        bits.extend(pf.score().iter().map(|v| v.to_bits()));
        bits.extend(pf.ess().iter().map(|v| v.to_bits()));
    }
    // k-DPP draws of the low-rank kernel with a nugget (twinned `KDpp::sample`: the Haar
    // vectors' projections and the conditioning), as `dpp-sgld` makes them. The picks are the
    // draw's only output: a difference in the last bits shows only where it moves a pick.
    {
        use tallmc_core::estimator::dpp::KDpp;
        use tallmc_core::rng::chain_rng;
        let (n, p) = (1_003, 5);
        let f: Vec<f64> = (0..n * p)
            .map(|j| ((j * 7_919) % 1_000) as f64 / 500.0 - 1.0)
            .collect();
        let mut dpp = KDpp::linear_kernel(&f, n, p, 0.3, 12).unwrap();
        let mut rng = chain_rng(5, 0);
        let mut out = Vec::new();
        for _ in 0..20 {
            bits.push(u64::from(dpp.sample(&mut rng, &mut out)));
            bits.extend(out.iter().map(|&i| i as u64));
        }
    }
    bits
}

#[test]
fn the_avx2_and_baseline_copies_give_the_same_bits() {
    let avx2 = tallmc_core::cpu::has_avx2();
    let first = everything();
    tallmc_core::cpu::disable_avx2();
    assert!(!tallmc_core::cpu::has_avx2());
    let base = everything();
    if !avx2 {
        eprintln!("this CPU has no AVX2: both runs took the baseline copies");
    }
    assert_eq!(first.len(), base.len());
    let differ = first.iter().zip(&base).filter(|(a, b)| a != b).count();
    assert_eq!(differ, 0, "{differ} of {} numbers differ", first.len());
}
