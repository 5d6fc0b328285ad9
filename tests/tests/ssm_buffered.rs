#![allow(clippy::needless_range_loop)]
//! Buffered subsequence gradients (Putcha 2024, §3.2.2–3.3; AT3):
//! - exactness of the weighting: the fully buffered Kalman estimate ĝ(S, T) averaged over all
//!   T − S + 1 starts equals the full gradient (the 1/Pr(t∈S) weights handle the edges), and
//!   ĝ(T, 0) is the full gradient;
//! - AT3, Kalman (N = ∞): over 300 (dataset, start) pairs e_B = ‖ĝ(S,B) − ĝ(S,T)‖ decreases
//!   strictly in B, e₈/e₀ < 0.01, e₁₆/e₀ < 10⁻⁴, and the fitted decay rate per unit of B is below
//!   the theory bound L = |φ|τ²/(σ²+τ²) = 0.604 (plus slack);
//! - AT3, particle (N = 1000): the particle estimate agrees with the exact window gradient
//!   ĝ(S,B) within 3.5 SE at B ∈ {0, 2, 4, 8}, its bias against ĝ(S,T) at B = 2, 4, 8 is
//!   < 0.3× the bias at B = 0 (beyond B ≈ 4 particle noise dominates the buffering bias);
//! - the naive T/S weighting would be biased at the edges (sanity of the inclusion probability);
//! - the blocked buffered full score (`block_score`, for KSD scores) is unbiased for the exact
//!   score on the LGSSM and much less noisy than the path-space score.

use tallmc_core::rng::chain_rng;
use tallmc_core::ssm::buffered::{
    inclusion_probability, kalman_window_gradient, BufferConfig, BufferedGradient,
};
use tallmc_core::ssm::kalman;
use tallmc_core::ssm::lgssm::TRUTH;
use tallmc_core::ssm::pf::{PfConfig, Proposal};
use tallmc_core::ssm::resample::Resampling;
use tallmc_core::ssm::{Lgssm, StateSpaceModel};
use tallmc_tests::{mean, sd};

const T: usize = 256;
const S: usize = 16;

fn dataset(seed: u64) -> Vec<f64> {
    let mut rng = chain_rng(seed, 0);
    Lgssm::default()
        .simulate(&Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]), T, &mut rng)
        .1
}

fn kalman_g(y: &[f64], s_len: usize, b: usize, start: usize) -> [f64; 3] {
    let model = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    let mut g = [0.0; 3];
    kalman_window_gradient(
        &model,
        &theta,
        y,
        BufferConfig::new(s_len, b).unwrap(),
        start,
        &mut g,
    )
    .unwrap();
    g
}

fn dist(a: &[f64; 3], b: &[f64; 3]) -> f64 {
    (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>().sqrt()
}

#[test]
fn inclusion_probabilities_sum_to_s_and_full_buffer_is_unbiased() {
    for (t_len, s) in [(10, 3), (256, 16), (7, 7), (5, 1)] {
        let total: f64 = (1..=t_len)
            .map(|t| inclusion_probability(t, t_len, s))
            .sum();
        assert!((total - s as f64).abs() < 1e-12);
        // direct count over all starts
        for t in 1..=t_len {
            let count = (0..=t_len - s).filter(|&st| st < t && t <= st + s).count();
            let pr = count as f64 / (t_len - s + 1) as f64;
            assert!((pr - inclusion_probability(t, t_len, s)).abs() < 1e-15);
        }
    }
    let y = dataset(1);
    let model = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    let mut full = [0.0; 3];
    kalman::log_lik_grad(&model, &theta, &y, &mut full);
    let exact_full = kalman_g(&y, T, 0, 0);
    let mut avg = [0.0; 3];
    let mut naive = [0.0; 3];
    for st in 0..=T - S {
        let g = kalman_g(&y, S, T, st);
        // naive weighting T/S instead of 1/Pr(t∈S)
        for k in 0..3 {
            avg[k] += g[k] / (T - S + 1) as f64;
        }
        let p = kalman::KalmanParams::of(&model, &theta);
        let sm = kalman::smooth(&p, &y);
        let cw: Vec<f64> = (0..T)
            .map(|i| {
                if i >= st && i < st + S {
                    T as f64 / S as f64
                } else {
                    0.0
                }
            })
            .collect();
        let mut gn = [0.0; 3];
        kalman::fisher_sum(&p, &y, &sm, Some(&cw), &mut gn);
        for k in 0..3 {
            naive[k] += gn[k] / (T - S + 1) as f64;
        }
    }
    let mut fisher = [0.0; 3];
    {
        let p = kalman::KalmanParams::of(&model, &theta);
        let sm = kalman::smooth(&p, &y);
        kalman::fisher_sum(&p, &y, &sm, None, &mut fisher);
    }
    for k in 0..3 {
        assert!(
            (exact_full[k] - full[k]).abs() < 1e-9 * full[k].abs().max(1.0),
            "ĝ(T,0) ≠ full"
        );
        assert!(
            (avg[k] - full[k]).abs() < 1e-8 * full[k].abs().max(1.0),
            "[{k}] {} vs {}",
            avg[k],
            full[k]
        );
    }
    // the naive weighting is off for the Fisher sum (edges under-weighted)
    assert!(
        dist(&naive, &fisher) > 1e-3 * dist(&fisher, &[0.0; 3]),
        "{naive:?} vs {fisher:?}"
    );
}

#[test]
fn at3_kalman_buffer_bias_decays_geometrically() {
    let bs = [0usize, 1, 2, 4, 8, 16];
    let mut e = [0.0f64; 6];
    let pairs = 300;
    let mut rng = chain_rng(77, 0);
    for d in 0..30 {
        let y = dataset(1000 + d);
        for _ in 0..pairs / 30 {
            let st = tallmc_core::ssm::buffered::sample_start(&mut rng, T, S);
            let target = kalman_g(&y, S, T, st);
            for (j, &b) in bs.iter().enumerate() {
                e[j] += dist(&kalman_g(&y, S, b, st), &target) / pairs as f64;
            }
        }
    }
    let ratios: Vec<f64> = e.iter().map(|v| v / e[0]).collect();
    let ratios_str: Vec<String> = ratios.iter().map(|r| format!("{r:.2e}")).collect();
    eprintln!(
        "mean e_0 = {:.3}; e_B/e_0 for B = {bs:?}: {ratios_str:?}",
        e[0]
    );
    for j in 1..6 {
        assert!(e[j] < e[j - 1], "not decreasing at B = {}: {e:?}", bs[j]);
    }
    assert!(ratios[4] < 0.01 && ratios[5] < 1e-4, "{ratios:?}");
    // least-squares slope of ln e_B on B
    let xs: Vec<f64> = bs.iter().map(|&b| b as f64).collect();
    let ys: Vec<f64> = e.iter().map(|v| v.ln()).collect();
    let (mx, my) = (mean(&xs), mean(&ys));
    let slope = xs
        .iter()
        .zip(&ys)
        .map(|(x, y)| (x - mx) * (y - my))
        .sum::<f64>()
        / xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>();
    let bound = (TRUTH[0] * TRUTH[2].powi(2) / (TRUTH[1].powi(2) + TRUTH[2].powi(2))).ln();
    eprintln!(
        "decay per unit B: {:.3} (theory bound {:.3})",
        slope.exp(),
        bound.exp()
    );
    assert!(slope < bound + 0.05, "slope {slope} vs bound {bound}");
}

#[test]
fn at3_particle_buffer_bias() {
    let y = dataset(5);
    let model = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    let st = T / 2 - S / 2;
    let target = kalman_g(&y, S, T, st);
    let pf = PfConfig::new(1000, Proposal::Optimal, Resampling::Systematic, 1.0).unwrap();
    let reps = 300;
    let mut bias = Vec::new();
    for (b, seed) in [(0usize, 1u64), (2, 2), (4, 3), (8, 4)] {
        let exact = kalman_g(&y, S, b, st);
        let mut est = BufferedGradient::new(BufferConfig::new(S, b).unwrap(), pf).unwrap();
        let mut rng = chain_rng(seed, 8);
        let mut runs = vec![Vec::new(); 3];
        for _ in 0..reps {
            let mut g = [0.0; 3];
            let info = est
                .estimate_at(&model, &theta, &y, st, &mut rng, &mut g)
                .unwrap();
            assert_eq!(info.window.len(), S + 2 * b);
            assert_eq!(info.cost, 1000 * (S + 2 * b) as u64);
            for k in 0..3 {
                runs[k].push(g[k]);
            }
        }
        let m = [mean(&runs[0]), mean(&runs[1]), mean(&runs[2])];
        for k in 0..3 {
            let se = sd(&runs[k]) / (reps as f64).sqrt();
            eprintln!(
                "B={b} [{k}]: PF {:.3} ± {se:.3}, exact window {:.3}, fully buffered {:.3}",
                m[k], exact[k], target[k]
            );
            assert!(
                (m[k] - exact[k]).abs() < 3.5 * se,
                "B={b} [{k}]: {} ± {se} vs {}",
                m[k],
                exact[k]
            );
        }
        bias.push(dist(&m, &target));
    }
    eprintln!("particle bias for B = 0, 2, 4, 8: {bias:.3?}");
    // beyond B ≈ 4 the particle noise (≈ 0.5 in norm here) dominates the buffering bias
    assert!(
        bias[1] < 0.3 * bias[0] && bias[2] < 0.3 * bias[0],
        "{bias:?}"
    );
    assert!(bias[3] < 0.3 * bias[0], "{bias:?}");
}

/// Huge S or B (any usize is accepted from settings) clamp to the series instead of overflowing.
#[test]
fn huge_subsequence_and_buffer_clamp_to_the_series() {
    use tallmc_core::ssm::buffered::Window;
    for (s, b) in [(40, usize::MAX), (usize::MAX, 10), (usize::MAX, usize::MAX)] {
        let cfg = BufferConfig::new(s, b).unwrap();
        for start in [0, 30, 99, usize::MAX] {
            let w = Window::new(100, cfg, start);
            let sub_start = start.min(100);
            assert_eq!(w.sub_start, sub_start);
            assert_eq!(
                w.sub_end,
                sub_start.saturating_add(s).min(100),
                "S={s} B={b} start={start}"
            );
            assert!(w.start <= w.sub_start && w.sub_end <= w.end && w.end <= 100);
            if b == usize::MAX {
                assert_eq!((w.start, w.end), (0, 100));
            }
        }
    }
}

/// `block_score` (the blocked buffered estimate of the full score used for KSD scores): on an
/// LGSSM with T = 1000 at the truth, 20 runs with N = 200 (S = 25, B = 15) average to the
/// exact Kalman score within 4 SE per coordinate, with a per-run SD below half that of the
/// full-sequence path-space particle score at the same N (which degenerates like T²/N; measured
/// SDs 5.7/9.6/7.7 against 13.7/27.1/17.4, at 2.2× the cost; with S = 100, B = 40 the gain was
/// only 12.8 against 16.9 on φ).
#[test]
fn block_score_is_unbiased_and_less_noisy_than_the_path_score() {
    use tallmc_core::ssm::buffered::block_score;
    use tallmc_core::ssm::pf::{ParticleFilter, ScoreSpec};
    let model = Lgssm::default();
    let theta = Lgssm::theta(TRUTH[0], TRUTH[1], TRUTH[2]);
    let mut rng = chain_rng(77, 0);
    let y = model.simulate(&theta, 1000, &mut rng).1;
    let mut exact = [0.0; 3];
    kalman::log_lik_grad(&model, &theta, &y, &mut exact);
    let cfg = PfConfig::new(200, Proposal::Optimal, Resampling::Systematic, 1.0).unwrap();
    let mut pf = ParticleFilter::new(cfg).unwrap();
    let (mut blocks, mut paths) = (vec![Vec::new(); 3], vec![Vec::new(); 3]);
    for _ in 0..20 {
        let mut g = [0.0; 3];
        let cost = block_score(
            &mut pf,
            &model,
            &theta,
            &y,
            BufferConfig::new(25, 15).unwrap(),
            &mut rng,
            &mut g,
        )
        .unwrap();
        // 10 blocks: |S*| = 140 at the two ends, 180 inside
        assert_eq!(cost, 200 * (2 * 40 + 38 * 55));
        pf.run(&model, &theta, &y, Some(ScoreSpec::full()), &mut rng)
            .unwrap();
        for k in 0..3 {
            blocks[k].push(g[k]);
            paths[k].push(pf.score()[k]);
        }
    }
    for k in 0..3 {
        let (m, s) = (mean(&blocks[k]), sd(&blocks[k]));
        let sp = sd(&paths[k]);
        println!(
            "coord {k}: exact {:.3}, block {m:.3} (sd {s:.3}), path {:.3} (sd {sp:.3})",
            exact[k],
            mean(&paths[k])
        );
        let se = s / 20f64.sqrt();
        assert!(
            (m - exact[k]).abs() < 4.0 * se,
            "coord {k}: {m} vs {}",
            exact[k]
        );
        assert!(s < 0.5 * sp, "coord {k}: block sd {s} vs path sd {sp}");
    }
}
