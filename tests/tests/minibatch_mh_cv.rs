//! The control variate of the minibatch tests (`control=auto` on GLMs): the per-datum
//! differences it hands to the tests have exactly the mean over the data of the plain
//! differences ℓᵢ(θ′) − ℓᵢ(θ), and a far smaller spread near the posterior (the reason batches
//! stay small at useful step sizes). The chain-level check is `realdata`: mh-minibatch and
//! austere-mh with defaults within 0.12 sd of NumPyro on five real tables.

use crate::smh_common;

use tallmc_core::kernel::minibatch_mh::cv::{StepDiffs, TaylorCv};
use tallmc_core::optim::{find_mode, ModeOptions};
use tallmc_core::rng::chain_rng;

#[test]
fn same_mean_far_smaller_spread() {
    let (n, d) = (5000, 6);
    for (name, model) in [
        ("logistic", smh_common::logistic(n, d, 31)),
        ("robust", smh_common::robust(n, d, 32)),
    ] {
        let mode = find_mode(model.as_ref(), &vec![0.0; d], &ModeOptions::default()).unwrap();
        let cov = mode.covariance().unwrap();
        let cv = TaylorCv::new(model.as_glm().unwrap(), &mode.mode).unwrap();
        let mut rng = chain_rng(7, 0);
        // θ a typical posterior draw, θ′ a random-walk step of 2.38/√d posterior sds.
        let draw = |rng: &mut tallmc_core::rng::ChainRng, scale: f64, from: &[f64]| -> Vec<f64> {
            let z: Vec<f64> = (0..d).map(|_| tallmc_core::dist::std_normal(rng)).collect();
            (0..d)
                .map(|j| from[j] + scale * cov[j * d + j].sqrt() * z[j])
                .collect()
        };
        for rep in 0..5 {
            let theta = draw(&mut rng, 1.0, &mode.mode);
            let prop = draw(&mut rng, 2.38 / (d as f64).sqrt(), &theta);
            let plain = StepDiffs::new(model.as_ref(), &theta, &prop, None);
            let with = StepDiffs::new(model.as_ref(), &theta, &prop, Some(&cv));
            let a: Vec<f64> = (0..n).map(|i| plain.at(i)).collect();
            let b: Vec<f64> = (0..n).map(|i| with.at(i)).collect();
            let (sa, sb) = (a.iter().sum::<f64>(), b.iter().sum::<f64>());
            assert!(
                (sa - sb).abs() <= 1e-9 * (1.0 + sa.abs()),
                "{name} rep {rep}: sums {sa} vs {sb}"
            );
            let var = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64
            };
            let (va, vb) = (var(&a), var(&b));
            eprintln!("{name} rep {rep}: variance plain {va:.3e}, control variate {vb:.3e}");
            assert!(vb < 0.05 * va, "{name} rep {rep}: {vb} vs {va}");
        }
    }
}

/// The range bound MHSubLhd uses instead of a full scan holds: for typical θ and steps θ′ (and
/// for far-out points) every datum's Taylor-remainder difference lies within
/// [`StepDiffs::range_bound`] of the common shift; a family without a finite third-derivative
/// bound (Poisson) gives none, so the test falls back to the scan. The bound is not vacuous on
/// tall data: on these 5 000-row tables it is below 100 × the largest remainder seen.
#[test]
fn remainder_bound_holds_and_poisson_has_none() {
    let (n, d) = (5000, 6);
    for (name, model) in [
        ("logistic", smh_common::logistic(n, d, 41)),
        ("robust", smh_common::robust(n, d, 42)),
    ] {
        let mode = find_mode(model.as_ref(), &vec![0.0; d], &ModeOptions::default()).unwrap();
        let cov = mode.covariance().unwrap();
        let cv = TaylorCv::new(model.as_glm().unwrap(), &mode.mode).unwrap();
        let mut rng = chain_rng(8, 0);
        for (rep, spread) in [1.0, 1.0, 3.0, 10.0].into_iter().enumerate() {
            let draw = |rng: &mut tallmc_core::rng::ChainRng, scale: f64, from: &[f64]| {
                (0..d)
                    .map(|j| {
                        from[j] + scale * cov[j * d + j].sqrt() * tallmc_core::dist::std_normal(rng)
                    })
                    .collect::<Vec<f64>>()
            };
            let theta = draw(&mut rng, spread, &mode.mode);
            let prop = draw(&mut rng, 2.38 / (d as f64).sqrt(), &theta);
            let diffs = StepDiffs::new(model.as_ref(), &theta, &prop, Some(&cv));
            let bound = diffs.range_bound().expect("finite third derivative");
            let glm = model.as_glm().unwrap();
            let worst = (0..n)
                .map(|i| cv.residual(glm, &theta, &prop, i).abs())
                .fold(0.0, f64::max);
            eprintln!("{name} rep {rep}: max |remainder| {worst:.3e}, bound {bound:.3e}");
            assert!(
                worst <= bound * (1.0 + 1e-9),
                "{name} rep {rep}: {worst} > {bound}"
            );
            if spread == 1.0 {
                assert!(
                    bound < 100.0 * worst,
                    "{name} rep {rep}: bound {bound} vs {worst}"
                );
            }
        }
    }
    let model = smh_common::poisson(2000, 4, 43);
    let mode = find_mode(model.as_ref(), &[0.0; 4], &ModeOptions::default()).unwrap();
    let cv = TaylorCv::new(model.as_glm().unwrap(), &mode.mode).unwrap();
    let t = mode.mode.clone();
    let diffs = StepDiffs::new(model.as_ref(), &t, &t, Some(&cv));
    assert!(diffs.range_bound().is_none());
}
