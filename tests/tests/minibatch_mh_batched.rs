//! The minibatch tests read their per-datum differences a block at a time
//! (`StepDiffs::at_many`: a GLM reads each row once for θ and θ′ and evaluates its family in a
//! loop of its own) and draw each block's data before evaluating them. Both must leave the
//! draws unchanged: the batched differences have the bits of `StepDiffs::at` datum by datum
//! (plain and through the control variate; raw and whitened GLMs, whose linear predictors
//! carry an offset), and a non-finite difference in the middle of a block stops the test with
//! the generator and the permutation exactly where a datum-by-datum draw would have left them.

use crate::minibatch_mh_common::Linear1;
use crate::smh_common;
use std::sync::Arc;
use tallmc_core::kernel::minibatch_mh::baselines::AustereMh;
use tallmc_core::kernel::minibatch_mh::cv::{StepDiffs, TaylorCv};
use tallmc_core::kernel::minibatch_mh::xcorr::Correction;
use tallmc_core::kernel::minibatch_mh::{MinibatchMh, MinibatchTest};
use tallmc_core::model::DataModel;
use tallmc_core::optim::{find_mode, ModeOptions};
use tallmc_core::rng::{chain_rng, uniform_index, ChainRng, Rng};

/// A simulated regression table fitted by `name` with the given `reparam`.
fn registry_model(name: &str, n: usize, d: usize, reparam: &str) -> Arc<dyn DataModel> {
    tallmc_tests::simulated_model(name, n, d, 5, reparam)
}

#[test]
fn batched_differences_have_the_bits_of_datum_by_datum() {
    let models: Vec<(String, Arc<dyn DataModel>)> = vec![
        ("logistic".into(), smh_common::logistic(3_001, 6, 51)),
        ("poisson".into(), smh_common::poisson(3_001, 5, 52)),
        ("robust".into(), smh_common::robust(3_001, 7, 53)),
        (
            "logistic whitened".into(),
            registry_model("logistic", 2_003, 9, "auto"),
        ),
        (
            "poisson whitened".into(),
            registry_model("poisson", 2_003, 5, "auto"),
        ),
        (
            "robust whitened".into(),
            registry_model("robust", 2_003, 4, "auto"),
        ),
        (
            "linear (registry default noise)".into(),
            registry_model("linear", 1_001, 3, "none"),
        ),
    ];
    let mut rng = chain_rng(61, 0);
    for (name, model) in &models {
        let (n, d) = (model.n(), model.dim());
        let start = vec![0.0; d];
        let centre = find_mode(model.as_ref(), &start, &ModeOptions::default())
            .map(|m| m.mode)
            .unwrap_or(start);
        let cv = model
            .as_glm()
            .map(|view| TaylorCv::new(view, &centre).unwrap());
        // Indices in a random order with repeats, and every datum in order; lengths that are
        // not multiples of the eight-row sweeps or of the 128-row chunks.
        let drawn: Vec<usize> = (0..1_001).map(|_| uniform_index(&mut rng, n)).collect();
        let all: Vec<usize> = (0..n).collect();
        for rep in 0..4 {
            let spread = [0.1, 0.5, 2.0, 8.0][rep];
            let theta: Vec<f64> = centre
                .iter()
                .map(|c| c + spread * tallmc_core::dist::std_normal(&mut rng))
                .collect();
            let prop: Vec<f64> = theta
                .iter()
                .map(|t| t + 0.3 * tallmc_core::dist::std_normal(&mut rng))
                .collect();
            for with_cv in [false, true] {
                if with_cv && cv.is_none() {
                    continue;
                }
                let diffs = StepDiffs::new(
                    model.as_ref(),
                    &theta,
                    &prop,
                    if with_cv { cv.as_ref() } else { None },
                );
                for idx in [&drawn[..], &all[..], &drawn[..7], &drawn[..129]] {
                    let mut got = vec![f64::NAN; idx.len()];
                    diffs.at_many(idx, &mut got);
                    let differ: Vec<(usize, f64, f64)> = idx
                        .iter()
                        .zip(&got)
                        .filter(|(&i, v)| v.to_bits() != diffs.at(i).to_bits())
                        .map(|(&i, &v)| (i, v, diffs.at(i)))
                        .take(3)
                        .collect();
                    assert!(
                        differ.is_empty(),
                        "{name}, spread {spread}, control variate {with_cv}, {} indices: \
                         (datum, batched, one by one) {differ:?}",
                        idx.len()
                    );
                }
            }
        }
    }
}

/// The permutation and generator after `count` steps of the partial Fisher–Yates draw the
/// tests make (r = b + U{0..n − b}, swap b and r), from `perm` and `rng`.
fn draw_by_hand(rng: &mut ChainRng, perm: &mut [usize], count: usize) {
    let n = perm.len();
    for b in 0..count {
        let r = b + uniform_index(rng, n - b);
        perm.swap(b, r);
    }
}

#[test]
fn a_non_finite_difference_stops_the_draw_where_datum_by_datum_would() {
    let n = 1_000;
    let c: Vec<f64> = (0..n)
        .map(|i| ((i * 37) % 101) as f64 / 101.0 - 0.5)
        .collect();
    // The bad datum drawn first, mid-block, last of the first 128-datum block, first of the
    // second, and further on.
    for pos in [0usize, 50, 127, 128, 300] {
        for test in ["mh-minibatch", "austere-mh"] {
            let seed = 70 + pos as u64;
            // Which datum the draw reaches at position `pos` (after the Austere test's
            // threshold draw, one u64).
            let mut pre = chain_rng(seed, 0);
            if test == "austere-mh" {
                pre.next_u64();
            }
            let mut perm: Vec<usize> = (0..n).collect();
            draw_by_hand(&mut pre, &mut perm, pos + 1);
            let bad = perm[pos];
            let mut cb = c.clone();
            cb[bad] = f64::NAN;
            let model = Linear1 { c: cb };
            // Expected: the generator and permutation after exactly pos + 1 draws.
            let mut want_perm: Vec<usize> = (0..n).collect();
            let mut want_rng = chain_rng(seed, 0);
            if test == "austere-mh" {
                want_rng.next_u64();
            }
            draw_by_hand(&mut want_rng, &mut want_perm, pos + 1);
            let mut rng = chain_rng(seed, 0);
            let mut perm: Vec<usize> = (0..n).collect();
            let diffs = StepDiffs::new(&model, &[0.0], &[1.0], None);
            let out = match test {
                "mh-minibatch" => MinibatchMh::new(0.1, n as f64, n, Correction::sigma_1())
                    .unwrap()
                    .decide(&mut rng, &diffs, 0.0, 0.0, &mut perm),
                _ => AustereMh::new(0.1, 1.0, n, 0.05)
                    .unwrap()
                    .decide(&mut rng, &diffs, 0.0, 0.0, &mut perm),
            };
            assert!(out.divergent && !out.accepted, "{test} at {pos}: {out:?}");
            assert_eq!(out.batch, pos + 1, "{test} at {pos}");
            assert_eq!(out.lik_evals, 2 * (pos as u64 + 1), "{test} at {pos}");
            assert!(perm == want_perm, "{test} at {pos}: permutation differs");
            assert_eq!(
                rng.next_u64(),
                want_rng.next_u64(),
                "{test} at {pos}: generator differs"
            );
        }
    }
}
