//! Statistical tests of the random variates in `tallmc_core::dist` and the streams in
//! `tallmc_core::rng`. Fixed seeds; every tolerance is k standard errors of the estimator
//! (k = 4 for moments, p = 0.001 for χ² goodness of fit) against exact answers.

use tallmc_core::dist::{self, AliasTable, IndexSampler};
use tallmc_core::math;
use tallmc_core::rng::{chain_rng, uniform_index, ChainRng, Rng};

const K: f64 = 4.0;

/// Sample moments: mean, and central moments 2, 3, 4, 6.
struct Moments {
    n: f64,
    mean: f64,
    m2: f64,
    m3: f64,
    m4: f64,
    m6: f64,
}

fn moments(xs: &[f64]) -> Moments {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let (mut m2, mut m3, mut m4, mut m6) = (0.0, 0.0, 0.0, 0.0);
    for &x in xs {
        let d = x - mean;
        let d2 = d * d;
        m2 += d2;
        m3 += d2 * d;
        m4 += d2 * d2;
        m6 += d2 * d2 * d2;
    }
    Moments {
        n,
        mean,
        m2: m2 / n,
        m3: m3 / n,
        m4: m4 / n,
        m6: m6 / n,
    }
}

/// Check mean and variance against the truth within K standard errors
/// (SE of the mean √(σ²/N), of the variance √((μ₄ − σ⁴)/N), σ² and μ₄ estimated).
fn check_mean_var(name: &str, xs: &[f64], mean: f64, var: f64) {
    assert!(xs.iter().all(|x| x.is_finite()), "{name}: non-finite draw");
    let m = moments(xs);
    let se_mean = (m.m2 / m.n).sqrt();
    let se_var = ((m.m4 - m.m2 * m.m2) / m.n).sqrt();
    assert!(
        (m.mean - mean).abs() < K * se_mean,
        "{name}: mean {} vs {mean} (se {se_mean})",
        m.mean
    );
    assert!(
        (m.m2 - var).abs() < K * se_var,
        "{name}: var {} vs {var} (se {se_var})",
        m.m2
    );
}

/// Check the third central moment within K standard errors
/// (asymptotic variance μ₆ − μ₃² − 6μ₄μ₂ + 9μ₂³, over N).
fn check_third(name: &str, xs: &[f64], mu3: f64) {
    let m = moments(xs);
    let v = m.m6 - m.m3 * m.m3 - 6.0 * m.m4 * m.m2 + 9.0 * m.m2 * m.m2 * m.m2;
    let se = (v / m.n).sqrt();
    assert!(
        (m.m3 - mu3).abs() < K * se,
        "{name}: mu3 {} vs {mu3} (se {se})",
        m.m3
    );
}

fn draws(n: usize, seed: u64, mut f: impl FnMut(&mut ChainRng) -> f64) -> Vec<f64> {
    let mut r = chain_rng(seed, 0);
    (0..n).map(|_| f(&mut r)).collect()
}

/// Upper 0.001 quantile of χ²_k (Wilson–Hilferty; accurate to a few % for k ≥ 3).
fn chi2_crit(k: usize) -> f64 {
    let k = k as f64;
    let z = 3.090_232; // Φ⁻¹(0.999)
    let a = 2.0 / (9.0 * k);
    k * (1.0 - a + z * a.sqrt()).powi(3)
}

/// Pearson χ² of observed counts vs expected probabilities, pooling cells with expected < 5
/// into their neighbour (left to right). Returns (statistic, degrees of freedom).
fn chi2_stat(counts: &[u64], probs: &[f64]) -> (f64, usize) {
    let total: u64 = counts.iter().sum();
    let total = total as f64;
    let mut cells: Vec<(f64, f64)> = Vec::new();
    let (mut o, mut e) = (0.0, 0.0);
    for (&c, &p) in counts.iter().zip(probs) {
        o += c as f64;
        e += p * total;
        if e >= 5.0 {
            cells.push((o, e));
            o = 0.0;
            e = 0.0;
        }
    }
    if e > 0.0 || o > 0.0 {
        if let Some(last) = cells.last_mut() {
            last.0 += o;
            last.1 += e;
        } else {
            cells.push((o, e));
        }
    }
    let stat = cells.iter().map(|&(o, e)| (o - e) * (o - e) / e).sum();
    (stat, cells.len() - 1)
}

fn assert_chi2(name: &str, counts: &[u64], probs: &[f64]) {
    let (stat, df) = chi2_stat(counts, probs);
    assert!(df >= 1, "{name}: too few cells");
    let crit = chi2_crit(df);
    assert!(stat < crit, "{name}: chi2 {stat} on {df} df exceeds {crit}");
}

#[test]
fn normal_exponential_uniform_moments() {
    let n = 200_000;
    let xs = draws(n, 11, dist::std_normal);
    check_mean_var("std_normal", &xs, 0.0, 1.0);
    check_third("std_normal", &xs, 0.0);
    let xs = draws(n, 12, |r| dist::normal(r, 2.0, 3.0));
    check_mean_var("normal(2,3)", &xs, 2.0, 9.0);
    let xs = draws(n, 13, dist::std_exponential);
    check_mean_var("std_exponential", &xs, 1.0, 1.0);
    check_third("std_exponential", &xs, 2.0);
    let xs = draws(n, 14, |r| dist::exponential(r, 2.5));
    check_mean_var("exponential(2.5)", &xs, 0.4, 0.16);
    let xs = draws(n, 15, |r| dist::uniform_range(r, -1.0, 3.0));
    assert!(xs.iter().all(|&x| (-1.0..3.0).contains(&x)));
    check_mean_var("uniform_range(-1,3)", &xs, 1.0, 16.0 / 12.0);
}

/// `fill_std_normal` (both values of each polar pair, `fast_ln`): the moments, the bins of
/// `std_normal_cdf_goodness_of_fit`, and no correlation between the two values of a pair or
/// between neighbouring pairs, on an odd length (the last pair's second value unused).
#[test]
fn fill_std_normal_moments_bins_and_pairs() {
    let n = 200_001;
    let mut xs = vec![f64::NAN; n];
    dist::fill_std_normal(&mut chain_rng(22, 0), &mut xs);
    // (check_mean_var also checks that every value was written: NaN is not finite.)
    check_mean_var("fill_std_normal", &xs, 0.0, 1.0);
    check_third("fill_std_normal", &xs, 0.0);
    assert_chi2(
        "fill_std_normal bins",
        &normal_bin_counts(&xs),
        &normal_bin_probs(),
    );
    // Correlations at lags 1 (within pairs at even i) and 2 (between pairs): each is within
    // 4 standard errors (1/√m) of 0.
    for lag in [1usize, 2] {
        let m = (n - lag) / 2;
        let r: f64 = (0..m).map(|i| xs[2 * i] * xs[2 * i + lag]).sum::<f64>() / m as f64;
        assert!(
            r.abs() < 4.0 / (m as f64).sqrt(),
            "fill_std_normal: lag-{lag} correlation {r}"
        );
    }
}

/// 40 equiprobable-ish bins on [-4, 4] plus the two tails: their probabilities.
fn normal_bin_probs() -> Vec<f64> {
    let edges: Vec<f64> = (0..=40).map(|i| -4.0 + 0.2 * i as f64).collect();
    let mut probs = vec![math::norm_cdf(edges[0])];
    for w in edges.windows(2) {
        probs.push(math::norm_cdf(w[1]) - math::norm_cdf(w[0]));
    }
    probs.push(1.0 - math::norm_cdf(edges[40]));
    probs
}

/// The counts of `xs` in the bins of [`normal_bin_probs`].
fn normal_bin_counts(xs: &[f64]) -> Vec<u64> {
    let edges: Vec<f64> = (0..=40).map(|i| -4.0 + 0.2 * i as f64).collect();
    let mut counts = vec![0u64; 42];
    for &x in xs {
        counts[edges.iter().take_while(|&&e| e <= x).count()] += 1;
    }
    counts
}

#[test]
fn std_normal_cdf_goodness_of_fit() {
    let mut r = chain_rng(21, 0);
    let xs: Vec<f64> = (0..200_000).map(|_| dist::std_normal(&mut r)).collect();
    assert_chi2(
        "std_normal bins",
        &normal_bin_counts(&xs),
        &normal_bin_probs(),
    );
}

#[test]
fn gamma_shapes_moments() {
    let n = 200_000;
    for (seed, &shape) in [0.3, 1.0, 7.5].iter().enumerate() {
        let scale = 1.7;
        let xs = draws(n, 100 + seed as u64, |r| dist::gamma(r, shape, scale));
        assert!(xs.iter().all(|&x| x >= 0.0));
        let name = format!("gamma({shape}, {scale})");
        check_mean_var(&name, &xs, shape * scale, shape * scale * scale);
        check_third(&name, &xs, 2.0 * shape * scale.powi(3));
    }
    // Invalid parameters give NaN, never a panic or a hang.
    let mut r = chain_rng(1, 0);
    for (a, s) in [
        (0.0, 1.0),
        (-1.0, 1.0),
        (f64::NAN, 1.0),
        (1.0, 0.0),
        (f64::INFINITY, 1.0),
    ] {
        assert!(dist::gamma(&mut r, a, s).is_nan());
    }
}

#[test]
fn chi_square_beta_student_t_moments() {
    let n = 200_000;
    let xs = draws(n, 31, |r| dist::chi_square(r, 3.0));
    check_mean_var("chi_square(3)", &xs, 3.0, 6.0);
    let xs = draws(n, 32, |r| dist::chi_square(r, 0.6));
    check_mean_var("chi_square(0.6)", &xs, 0.6, 1.2);

    let (a, b) = (2.0, 5.0);
    let xs = draws(n, 33, |r| dist::beta(r, a, b));
    assert!(xs.iter().all(|&x| (0.0..=1.0).contains(&x)));
    check_mean_var(
        "beta(2,5)",
        &xs,
        a / (a + b),
        a * b / ((a + b) * (a + b) * (a + b + 1.0)),
    );
    // Tiny shapes: the log-scale construction keeps draws valid (no 0/0).
    let (a, b) = (0.02, 0.04);
    let xs = draws(n, 34, |r| dist::beta(r, a, b));
    assert!(xs.iter().all(|&x| (0.0..=1.0).contains(&x)));
    check_mean_var(
        "beta(0.02,0.04)",
        &xs,
        a / (a + b),
        a * b / ((a + b) * (a + b) * (a + b + 1.0)),
    );

    // Student-t with ν = 10: mean 0, variance ν/(ν − 2); the 4th moment exists (ν > 8 is
    // needed for the SE of the variance to have finite variance itself).
    let nu = 10.0;
    let xs = draws(n, 35, |r| dist::student_t(r, nu));
    check_mean_var("student_t(10)", &xs, 0.0, nu / (nu - 2.0));
    let xs = draws(n, 36, |r| dist::student_t(r, f64::INFINITY));
    check_mean_var("student_t(inf)", &xs, 0.0, 1.0);

    let mut r = chain_rng(1, 0);
    assert!(dist::beta(&mut r, 0.0, 1.0).is_nan());
    assert!(dist::student_t(&mut r, -1.0).is_nan());
    assert!(dist::exponential(&mut r, 0.0).is_nan());
    assert!(dist::uniform_range(&mut r, 2.0, 1.0).is_nan());
    assert_eq!(dist::uniform_range(&mut r, 2.0, 2.0), 2.0);
    let x = dist::uniform_range(&mut r, -1e308, 1e308);
    assert!(x.is_finite());
}

fn poisson_pmf(k: u64, mean: f64) -> f64 {
    let k = k as f64;
    (-mean + k * mean.ln() - math::ln_gamma(k + 1.0)).exp()
}

#[test]
fn poisson_moments_across_means() {
    let n = 200_000;
    for (seed, &mean) in [0.5, 5.0, 9.99, 10.0, 30.0, 1e3, 1e7].iter().enumerate() {
        let xs = draws(n, 200 + seed as u64, |r| dist::poisson(r, mean) as f64);
        // Exact: var of the sample mean λ/N; var of the sample variance ≈ (λ + 2λ²)/N.
        let m = moments(&xs);
        let se_mean = (mean / n as f64).sqrt();
        let se_var = ((mean + 2.0 * mean * mean) / n as f64).sqrt();
        assert!(
            (m.mean - mean).abs() < K * se_mean,
            "poisson({mean}): mean {} (se {se_mean})",
            m.mean
        );
        assert!(
            (m.m2 - mean).abs() < K * se_var,
            "poisson({mean}): var {} (se {se_var})",
            m.m2
        );
    }
    let mut r = chain_rng(1, 0);
    for bad in [0.0, -3.0, f64::NAN, f64::INFINITY] {
        assert_eq!(dist::poisson(&mut r, bad), 0);
    }
}

#[test]
fn poisson_goodness_of_fit() {
    // 10⁶ draws per mean (cheap): enough to see a shift of the PTRS rounding constant by 0.5.
    let n = 1_000_000;
    for (seed, &mean) in [5.0f64, 9.99, 10.0, 30.0, 1000.0].iter().enumerate() {
        let kmax = (mean + 12.0 * mean.sqrt() + 10.0) as usize;
        let mut counts = vec![0u64; kmax + 2];
        let mut r = chain_rng(300 + seed as u64, 0);
        for _ in 0..n {
            let k = (dist::poisson(&mut r, mean) as usize).min(kmax + 1);
            counts[k] += 1;
        }
        let mut probs: Vec<f64> = (0..=kmax as u64).map(|k| poisson_pmf(k, mean)).collect();
        let tail = 1.0 - probs.iter().sum::<f64>();
        probs.push(tail.max(0.0));
        assert_chi2(&format!("poisson({mean})"), &counts, &probs);
    }
}

#[test]
fn alias_table_frequencies() {
    let weights = [0.0, 1.0, 2.0, 3.0, 0.0, 10.0, 0.5, 1e-3];
    let t = AliasTable::new(&weights).unwrap();
    assert_eq!(t.len(), weights.len());
    let total: f64 = weights.iter().sum();
    for (i, &w) in weights.iter().enumerate() {
        assert!((t.probability(i) - w / total).abs() < 1e-15);
    }
    let n = 400_000;
    let mut counts = vec![0u64; weights.len()];
    let mut r = chain_rng(41, 0);
    for _ in 0..n {
        counts[t.sample(&mut r)] += 1;
    }
    assert_eq!(counts[0], 0, "zero weight sampled");
    assert_eq!(counts[4], 0, "zero weight sampled");
    // χ² over the positive-weight categories.
    let pos: Vec<usize> = (0..weights.len()).filter(|&i| weights[i] > 0.0).collect();
    let c: Vec<u64> = pos.iter().map(|&i| counts[i]).collect();
    let p: Vec<f64> = pos.iter().map(|&i| weights[i] / total).collect();
    assert_chi2("alias small", &c, &p);

    // 200 irregular weights spanning six orders of magnitude.
    let w: Vec<f64> = (0..200)
        .map(|i| 10f64.powf(((i * 37) % 101) as f64 / 101.0 * 6.0 - 3.0))
        .collect();
    let t = AliasTable::new(&w).unwrap();
    let mut counts = vec![0u64; w.len()];
    for _ in 0..n {
        counts[t.sample(&mut r)] += 1;
    }
    assert_chi2("alias 200", &counts, t.probabilities());

    // Huge weights: normalising by the maximum avoids overflow.
    let t = AliasTable::new(&[1e308, 1e308, 1e308]).unwrap();
    assert!((t.probability(1) - 1.0 / 3.0).abs() < 1e-15);
    // A single category.
    let t = AliasTable::new(&[2.0]).unwrap();
    assert_eq!(t.sample(&mut r), 0);

    assert!(AliasTable::new(&[]).is_err());
    assert!(AliasTable::new(&[1.0, -0.5]).is_err());
    assert!(AliasTable::new(&[1.0, f64::NAN]).is_err());
    assert!(AliasTable::new(&[1.0, f64::INFINITY]).is_err());
    assert!(AliasTable::new(&[0.0, 0.0]).is_err());
}

#[test]
fn uniform_index_without_modulo_bias() {
    let n_draws = 300_000;
    let mut r = chain_rng(51, 0);
    for n in [2usize, 3, 7, 10] {
        let mut counts = vec![0u64; n];
        for _ in 0..n_draws {
            counts[uniform_index(&mut r, n)] += 1;
        }
        assert_chi2(
            &format!("uniform_index({n})"),
            &counts,
            &vec![1.0 / n as f64; n],
        );
    }
    assert_eq!(uniform_index(&mut r, 0), 0);
    assert_eq!(uniform_index(&mut r, 1), 0);

    #[cfg(target_pointer_width = "64")]
    {
        // n = 2⁶² + 1: every draw in range, mean (n − 1)/2.
        let n = (1usize << 62) + 1;
        let m = 100_000;
        let mut s = 0.0;
        for _ in 0..m {
            let k = uniform_index(&mut r, n);
            assert!(k < n);
            s += k as f64 / n as f64;
        }
        let se = (1.0 / 12.0 / m as f64).sqrt();
        assert!((s / m as f64 - 0.5).abs() < K * se);

        // n = 3·2⁶²: `next_u64() % n` would put probability 1/2 on [0, 2⁶²) instead of 1/3.
        let n = 3usize << 62;
        let mut below = 0u64;
        for _ in 0..m {
            let k = uniform_index(&mut r, n);
            assert!(k < n);
            below += u64::from(k < (1usize << 62));
        }
        let p = 1.0 / 3.0;
        let se = (p * (1.0 - p) / m as f64).sqrt();
        assert!(
            (below as f64 / m as f64 - p).abs() < K * se,
            "fraction below 2^62: {}",
            below as f64 / m as f64
        );
    }
}

/// A subset of 0..n (n < 64) as a bitmask, for χ² over all k-subsets.
fn subset_mask(subset: &[usize]) -> usize {
    subset.iter().fold(0usize, |acc, &i| acc | (1 << i))
}

fn all_subsets(n: usize, k: usize) -> Vec<usize> {
    (0usize..(1 << n))
        .filter(|m| m.count_ones() as usize == k)
        .collect()
}

fn check_subsets_uniform(name: &str, n: usize, k: usize, mut draw: impl FnMut(&mut Vec<usize>)) {
    let masks = all_subsets(n, k);
    let mut counts = vec![0u64; masks.len()];
    let reps = 150_000;
    let mut incl = vec![0u64; n];
    let mut out = Vec::new();
    for _ in 0..reps {
        draw(&mut out);
        assert_eq!(out.len(), k, "{name}: wrong size");
        let mut s = out.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), k, "{name}: repeated index");
        assert!(s.iter().all(|&i| i < n), "{name}: out of range");
        for &i in &s {
            incl[i] += 1;
        }
        let mask = subset_mask(&s);
        let pos = masks.binary_search(&mask).unwrap();
        counts[pos] += 1;
    }
    assert_chi2(
        &format!("{name} subsets"),
        &counts,
        &vec![1.0 / masks.len() as f64; masks.len()],
    );
    // Inclusion frequencies: each is Binomial(reps, k/n) with covariance −p(1−p)/(n−1);
    // (n−1)/n · Σ (cᵢ − E)² / (reps·p(1−p)) ~ χ²_{n−1}.
    let p = k as f64 / n as f64;
    let e = reps as f64 * p;
    let stat: f64 = incl
        .iter()
        .map(|&c| (c as f64 - e).powi(2) / (reps as f64 * p * (1.0 - p)))
        .sum::<f64>()
        * (n as f64 - 1.0)
        / n as f64;
    assert!(stat < chi2_crit(n - 1), "{name}: inclusion chi2 {stat}");
}

#[test]
fn sample_without_replacement_uniform() {
    let mut r = chain_rng(61, 0);
    // Fisher–Yates path (4k ≥ n) and Floyd path (4k < n).
    check_subsets_uniform("swor(5,2)", 5, 2, |out| {
        dist::sample_without_replacement(&mut r, 5, 2, out).unwrap()
    });
    check_subsets_uniform("swor(9,2)", 9, 2, |out| {
        dist::sample_without_replacement(&mut r, 9, 2, out).unwrap()
    });
    check_subsets_uniform("swor(12,3)", 12, 3, |out| {
        dist::sample_without_replacement(&mut r, 12, 3, out).unwrap()
    });
    // Large n, small k: distinct and in range.
    let mut out = Vec::new();
    dist::sample_without_replacement(&mut r, 1_000_000_000, 1000, &mut out).unwrap();
    let mut s = out.clone();
    s.sort_unstable();
    s.dedup();
    assert_eq!(s.len(), 1000);
    assert!(s.iter().all(|&i| i < 1_000_000_000));
    // k = n is a permutation, k = 0 empty, k > n an error.
    dist::sample_without_replacement(&mut r, 7, 7, &mut out).unwrap();
    let mut s = out.clone();
    s.sort_unstable();
    assert_eq!(s, (0..7).collect::<Vec<_>>());
    dist::sample_without_replacement(&mut r, 7, 0, &mut out).unwrap();
    assert!(out.is_empty());
    assert!(dist::sample_without_replacement(&mut r, 3, 4, &mut out).is_err());
}

#[test]
fn index_sampler_batches() {
    let mut r = chain_rng(71, 0);
    // Partial Fisher–Yates (4m ≥ n) and rejection of repeats (4m < n).
    let mut s = IndexSampler::new(6, 2, false).unwrap();
    check_subsets_uniform("IndexSampler(6,2)", 6, 2, |out| s.sample(&mut r, out));
    let mut s = IndexSampler::new(9, 2, false).unwrap();
    check_subsets_uniform("IndexSampler(9,2)", 9, 2, |out| s.sample(&mut r, out));
    let mut s = IndexSampler::new(13, 3, false).unwrap();
    check_subsets_uniform("IndexSampler(13,3)", 13, 3, |out| s.sample(&mut r, out));
    // Rejection: every ordered pair of distinct indices equally likely (the order is the
    // order of summation downstream, and the first index of a batch must not be special).
    let mut s = IndexSampler::new(9, 2, false).unwrap();
    let mut pairs = vec![0u64; 81];
    let mut out = Vec::new();
    for _ in 0..144_000 {
        s.sample(&mut r, &mut out);
        pairs[out[0] * 9 + out[1]] += 1;
    }
    let (seen, p): (Vec<u64>, Vec<f64>) = (0..81)
        .filter(|k| k / 9 != k % 9)
        .map(|k| (pairs[k], 1.0 / 72.0))
        .unzip();
    assert!((0..9).all(|i| pairs[i * 9 + i] == 0), "a repeated index");
    assert_chi2("IndexSampler(9,2) ordered pairs", &seen, &p);
    let mut s = IndexSampler::new(10, 10, false).unwrap();
    let mut out = Vec::new();
    s.sample(&mut r, &mut out);
    let mut so = out.clone();
    so.sort_unstable();
    assert_eq!(so, (0..10).collect::<Vec<_>>());

    // With replacement: uniform marginal counts, repeats allowed, batch may exceed n.
    let mut s = IndexSampler::new(5, 8, true).unwrap();
    let mut counts = vec![0u64; 5];
    for _ in 0..40_000 {
        s.sample(&mut r, &mut out);
        assert_eq!(out.len(), 8);
        for &i in &out {
            counts[i] += 1;
        }
    }
    assert_chi2("IndexSampler replace", &counts, &[0.2; 5]);

    assert!(IndexSampler::new(0, 1, true).is_err());
    assert!(IndexSampler::new(5, 0, true).is_err());
    assert!(IndexSampler::new(5, 6, false).is_err());
    let mut s = IndexSampler::new(5, 2, false).unwrap();
    assert!(s.set_batch(6).is_err());
    assert_eq!(s.batch(), 2);
    s.set_batch(5).unwrap();
    s.sample(&mut r, &mut out);
    assert_eq!(out.len(), 5);
}

/// Without replacement the sampler draws a batch of m < n/4 by rejecting repeats, and a
/// larger one by partial Fisher–Yates with all of its swap positions drawn before swapping
/// (their loads then overlap). The batches must be those of the plain algorithms one draw at a
/// time: rejection with a set of the batch's indices, and drawing and swapping one position at
/// a time on a permutation made at the first large batch, batch after batch, through
/// batch-size changes that switch between the two (golden draws of every subsampling sampler
/// depend on them).
#[test]
fn index_sampler_batches_are_those_of_the_plain_algorithms() {
    use tallmc_core::dist::SPARSE_BELOW;
    for (n, sizes) in [
        (1usize, vec![1usize, 1]),
        (7, vec![3, 7, 1, 5]),
        (1000, vec![13, 1000, 250, 249, 999, 1]),
        (100_003, vec![1300, 17, 40_000, 25_000, 25_001]),
    ] {
        let mut r = chain_rng(5, n as u64);
        let mut reference = r.clone();
        let mut perm: Vec<usize> = Vec::new();
        let mut s = IndexSampler::new(n, sizes[0], false).unwrap();
        let mut out = Vec::new();
        let mut paths = [0usize; 2];
        for round in 0..12 {
            let m = sizes[round % sizes.len()];
            s.set_batch(m).unwrap();
            s.sample(&mut r, &mut out);
            let expect: Vec<usize> = if m * SPARSE_BELOW < n {
                paths[0] += 1;
                let mut batch = std::collections::BTreeSet::new();
                let mut e = Vec::new();
                while e.len() < m {
                    let i = uniform_index(&mut reference, n);
                    if batch.insert(i) {
                        e.push(i);
                    }
                }
                e
            } else {
                paths[1] += 1;
                if perm.is_empty() {
                    perm = (0..n).collect();
                }
                (0..m)
                    .map(|j| {
                        let k = j + uniform_index(&mut reference, n - j);
                        perm.swap(j, k);
                        perm[j]
                    })
                    .collect()
            };
            assert_eq!(out, expect, "n = {n}, batch {m}, round {round}");
        }
        assert_eq!(
            r.next_u64(),
            reference.next_u64(),
            "n = {n}: the same draws used"
        );
        if n >= 1000 {
            assert!(
                paths[0] > 0 && paths[1] > 0,
                "n = {n}: both paths {paths:?}"
            );
        }
    }
}

#[test]
fn chain_streams_differ_and_reproduce() {
    let take = |seed: u64, chain: u64| -> Vec<u64> {
        let mut r = chain_rng(seed, chain);
        (0..1000).map(|_| r.next_u64()).collect()
    };
    let streams: Vec<Vec<u64>> = (0..4).map(|c| take(2024, c)).collect();
    for a in 0..4 {
        assert_eq!(
            streams[a],
            take(2024, a as u64),
            "chain {a} not reproducible"
        );
        for b in a + 1..4 {
            let shared = streams[a].iter().filter(|x| streams[b].contains(x)).count();
            assert_eq!(shared, 0, "chains {a} and {b} share outputs");
        }
    }
    assert_ne!(take(2024, 0), take(2025, 0));
    // Derived variates reproduce bit for bit as well.
    let v1 = draws(100, 9, |r| {
        dist::gamma(r, 0.7, 1.0) + dist::poisson(r, 50.0) as f64
    });
    let v2 = draws(100, 9, |r| {
        dist::gamma(r, 0.7, 1.0) + dist::poisson(r, 50.0) as f64
    });
    assert_eq!(
        v1.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
        v2.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
    );
}
