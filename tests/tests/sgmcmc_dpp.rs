//! AT7 (spec 003 §5.2): exactness of the k-DPP sampler behind `dpp-sgld`, by enumeration.
//!
//! Ground set N = 7, k = 3, L = FFᵀ + 0.1·I with a random F (7 × 4). Checked:
//! - e_k(λ) from the (log-domain) recursion equals the brute-force Σ_{|Y|=3} det(L_Y) to 1e−10;
//! - the closed-form inclusion probabilities πᵢ equal Σ_{Y∋i} P(Y) by enumeration (1e−10) and
//!   sum to k;
//! - 2·10⁵ draws: chi-square goodness of fit over all 35 subsets (p > 0.001, Wilson–Hilferty
//!   approximation of the χ² tail), and inclusion frequencies within 4 binomial SE of πᵢ
//!   (4 rather than 3 SE because 7 items are compared at once);
//! - both constructions: the full Jacobi eigendecomposition of L, and the low-rank path used by
//!   `dpp-sgld` (eigen of FᵀF plus a Haar subspace of the ν-eigenspace), the latter also with
//!   k = 4 > rank(FFᵀ) = 2 so that most of the subset comes from the nugget's eigenspace.
//! - the distance of πᵢ from the thesis's k·Lᵢᵢ/tr(L) is printed (its estimator's bias).
//! - an incomplete draw (residual trace, exactly k − t for a rank-k projection, below ½ before
//!   k items: forced here by a kernel whose two "eigenvectors" coincide, so K has rank 1 < k = 2
//!   and after one pick the residual is rounding noise) is reported: `sample` returns
//!   false, the estimator returns NaN with 0 evaluations and counts it, and a chain step is a
//!   divergence that leaves θ unchanged — never a biased gradient from a short subset.

use tallmc_core::dist;
use tallmc_core::estimator::dpp::log_elementary_symmetric;
use tallmc_core::linalg::{symmetric_eigen, Cholesky};
use tallmc_core::math;
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::sgmcmc::KDpp;

fn det(m: &[f64], k: usize) -> f64 {
    match Cholesky::new(m, k) {
        Ok(c) => c.log_det().exp(),
        Err(_) => 0.0,
    }
}

fn subsets(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    for mask in 0u32..(1 << n) {
        if mask.count_ones() as usize == k {
            out.push((0..n).filter(|i| mask & (1 << i) != 0).collect());
        }
    }
    out
}

fn kernel(f: &[f64], n: usize, p: usize, nugget: f64) -> Vec<f64> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            l[i * n + j] = (0..p).map(|a| f[i * p + a] * f[j * p + a]).sum::<f64>();
        }
        l[i * n + i] += nugget;
    }
    l
}

/// Exact P(Y) over all k-subsets.
fn exact(l: &[f64], n: usize, k: usize) -> (Vec<Vec<usize>>, Vec<f64>, f64) {
    let subs = subsets(n, k);
    let dets: Vec<f64> = subs
        .iter()
        .map(|y| {
            let m: Vec<f64> = y
                .iter()
                .flat_map(|&a| y.iter().map(move |&b| (a, b)))
                .map(|(a, b)| l[a * n + b])
                .collect();
            det(&m, k)
        })
        .collect();
    let ek: f64 = dets.iter().sum();
    (subs, dets.iter().map(|d| d / ek).collect(), ek)
}

/// Upper tail of χ²_df by Wilson–Hilferty.
fn chi2_upper(x: f64, df: f64) -> f64 {
    let z = ((x / df).powf(1.0 / 3.0) - (1.0 - 2.0 / (9.0 * df))) / (2.0 / (9.0 * df)).sqrt();
    1.0 - math::norm_cdf(z)
}

fn check(label: &str, mut dpp: KDpp, l: &[f64], n: usize, k: usize, seed: u64) {
    let (subs, probs, ek) = exact(l, n, k);
    // e_k and the inclusion probabilities.
    let log_ek = dpp.log_normaliser();
    assert!(
        (log_ek.exp() - ek).abs() <= 1e-10 * ek,
        "{label}: e_k {} vs brute force {ek}",
        log_ek.exp()
    );
    let pi_exact: Vec<f64> = (0..n)
        .map(|i| {
            subs.iter()
                .zip(&probs)
                .filter(|(y, _)| y.contains(&i))
                .map(|(_, p)| p)
                .sum()
        })
        .collect();
    let pi = dpp.inclusion_probabilities().to_vec();
    for i in 0..n {
        assert!(
            (pi[i] - pi_exact[i]).abs() < 1e-10,
            "{label}: π_{i} {} vs {}",
            pi[i],
            pi_exact[i]
        );
    }
    assert!((pi.iter().sum::<f64>() - k as f64).abs() < 1e-10);
    let tr: f64 = (0..n).map(|i| l[i * n + i]).sum();
    let thesis: Vec<f64> = (0..n).map(|i| k as f64 * l[i * n + i] / tr).collect();
    let max_dev = pi
        .iter()
        .zip(&thesis)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    eprintln!("{label}: π = {pi:.4?}\n  k·Lᵢᵢ/tr L = {thesis:.4?} (max |diff| {max_dev:.4})");
    // Draws.
    let draws = 200_000;
    let mut rng = chain_rng(seed, 0);
    let mut counts = vec![0usize; subs.len()];
    let mut incl = vec![0usize; n];
    let mut y = Vec::new();
    for _ in 0..draws {
        assert!(dpp.sample(&mut rng, &mut y), "{label}: incomplete draw");
        assert_eq!(y.len(), k, "{label}: subset size");
        y.sort_unstable();
        assert!(y.windows(2).all(|w| w[0] < w[1]), "{label}: repeated item");
        let pos = subs.iter().position(|s| *s == y).expect("subset");
        counts[pos] += 1;
        for &i in &y {
            incl[i] += 1;
        }
    }
    let mut chi2 = 0.0;
    let mut df = 0.0;
    for (c, p) in counts.iter().zip(&probs) {
        let e = p * draws as f64;
        if e > 0.0 {
            chi2 += (*c as f64 - e).powi(2) / e;
            df += 1.0;
        } else {
            assert_eq!(*c, 0, "{label}: drew an impossible subset");
        }
    }
    df -= 1.0;
    let pval = chi2_upper(chi2, df);
    eprintln!("  χ² = {chi2:.1} on {df} df, p = {pval:.3}");
    assert!(pval > 0.001, "{label}: χ² {chi2} on {df} df, p = {pval}");
    for i in 0..n {
        let f = incl[i] as f64 / draws as f64;
        let se = (pi[i] * (1.0 - pi[i]) / draws as f64).sqrt();
        assert!(
            (f - pi[i]).abs() <= 4.0 * se,
            "{label}: item {i} frequency {f} vs π {} (se {se})",
            pi[i]
        );
    }
}

fn random_f(n: usize, p: usize, seed: u64) -> Vec<f64> {
    let mut rng = chain_rng(seed, 0);
    (0..n * p).map(|_| dist::std_normal(&mut rng)).collect()
}

#[test]
fn elementary_symmetric_polynomials_match_brute_force() {
    let vals = [0.5, 2.0, 1.5, 0.1, 3.0, 0.0, 1.0];
    for k in 0..=7 {
        let brute: f64 = subsets(7, k)
            .iter()
            .map(|s| s.iter().map(|&i| vals[i]).product::<f64>())
            .sum();
        let e = log_elementary_symmetric(&vals, k)[k].exp();
        assert!(
            (e - brute).abs() <= 1e-12 * brute.max(1.0),
            "e_{k}: {e} vs {brute}"
        );
    }
}

#[test]
fn at7_kdpp_full_eigendecomposition_is_exact() {
    let (n, p, k) = (7, 4, 3);
    let f = random_f(n, p, 70);
    let l = kernel(&f, n, p, 0.1);
    let e = symmetric_eigen(&l, n).expect("eigen");
    let dpp = KDpp::from_eigen(&e.values, &e.vectors, k).expect("k-DPP");
    check("full eigen, k = 3", dpp, &l, n, k, 71);
}

#[test]
fn at7_kdpp_low_rank_path_is_exact() {
    let (n, p, k) = (7, 4, 3);
    let f = random_f(n, p, 70);
    let l = kernel(&f, n, p, 0.1);
    let dpp = KDpp::linear_kernel(&f, n, p, 0.1, k).expect("k-DPP");
    check("low rank + nugget, k = 3", dpp, &l, n, k, 72);
}

#[test]
fn at7_kdpp_low_rank_beyond_rank_is_exact() {
    // rank(FFᵀ) = 2 < k = 4: two or more items come from the nugget's eigenspace.
    let (n, p, k) = (7, 2, 4);
    let f = random_f(n, p, 73);
    let l = kernel(&f, n, p, 0.5);
    let dpp = KDpp::linear_kernel(&f, n, p, 0.5, k).expect("k-DPP");
    check("low rank + nugget, k = 4 > rank 2", dpp, &l, n, k, 74);
    // Without a nugget k > rank is impossible and is a clear error.
    assert!(KDpp::linear_kernel(&f, n, p, 0.0, k).is_err());
    assert!(KDpp::linear_kernel(&f, n, p, 0.0, 2).is_ok());
}

#[test]
fn incomplete_draw_is_reported_not_used() {
    use std::sync::Arc;
    use tallmc_core::chain::{Chain, Cost};
    use tallmc_core::model::gaussian::GaussianMean;
    use tallmc_core::model::prior::Prior;
    use tallmc_core::model::DataModel;
    use tallmc_core::sampler::sgmcmc::{
        Dynamics, GradientEstimator, SgChain, StepSchedule, Subsampler,
    };
    // Both columns are v = (0.6, 0.8): K = 2vvᵀ, rank 1, so after one item every residual is 0
    // up to rounding (the trace should be k − 1 = 1).
    let mut dpp = KDpp::from_eigen(&[1.0, 1.0], &[0.6, 0.6, 0.8, 0.8], 2).expect("kdpp");
    let mut rng = chain_rng(5, 0);
    let mut y = Vec::new();
    assert!(!dpp.sample(&mut rng, &mut y));
    assert!(y.len() < 2);
    let model: Arc<dyn DataModel> = Arc::new(
        GaussianMean::new(
            vec![0.5, -0.2],
            1,
            vec!["mu".into()],
            vec![1.0],
            Prior::Normal { scale: 10.0 },
        )
        .expect("model"),
    );
    let sub = Subsampler::Dpp {
        dpp: Box::new(dpp),
        weights: vec![1.0, 1.0],
    };
    let (mut est, _) = GradientEstimator::new(model.as_ref(), sub, None).expect("estimator");
    let mut g = [0.0];
    assert_eq!(est.estimate(&mut rng, model.as_ref(), &[0.1], &mut g), 0);
    assert!(g[0].is_nan());
    assert_eq!(est.incomplete_draws(), 1);
    let mut chain = SgChain::new(
        model,
        est,
        Dynamics::Langevin,
        StepSchedule::Constant(0.1),
        vec![0.1],
        Cost::default(),
        0,
        None,
        &mut rng,
    )
    .expect("chain");
    for _ in 0..3 {
        let info = chain.step(&mut rng);
        assert!(info.divergent && !info.accepted);
        assert_eq!(chain.position(), &[0.1]);
    }
    assert_eq!(chain.estimator().incomplete_draws(), 4);
}
