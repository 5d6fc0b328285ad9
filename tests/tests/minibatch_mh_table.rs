//! T1 of spec 002: the X_corr correction tables. The non-negative least-squares construction
//! (V = 10, N_g = 500) is run natively; the tables embedded in the no_std core must equal its
//! output, and their CDF error L∞ = supₓ |P(X_norm + X_corr ≤ x) − S(x)| must be small (spec [R]:
//! 4.6e-6 at σ = 1, 2.2e-5 at σ = 1.2; the paper's ridge table: 8.9e-4).
//! `MBMH_PRINT_TABLE=1 cargo test --release --test all minibatch_mh_table:: -- --nocapture` prints the
//! tables in Rust syntax.

use tallmc_core::kernel::minibatch_mh::xcorr::{
    cdf_error, logistic_cdf, mixture_cdf, nnls_correction, Correction, SIGMA_1, SIGMA_1_2,
};

fn check(sigma: f64, embedded: &[(f64, f64)], bound: f64) {
    let atoms = nnls_correction(sigma, 10.0, 500).unwrap();
    if std::env::var("MBMH_PRINT_TABLE").is_ok() {
        println!("σ = {sigma}: {} atoms", atoms.len());
        for (y, u) in &atoms {
            println!("    ({y:?}, {u:?}),");
        }
    }
    assert_eq!(atoms.len(), embedded.len(), "σ = {sigma}: atom count");
    for (a, e) in atoms.iter().zip(embedded) {
        assert!(
            (a.0 - e.0).abs() < 1e-12,
            "σ = {sigma}: location {a:?} vs {e:?}"
        );
        assert!((a.1 - e.1).abs() < 1e-9, "σ = {sigma}: mass {a:?} vs {e:?}");
    }
    let total: f64 = embedded.iter().map(|a| a.1).sum();
    let mean: f64 = embedded.iter().map(|a| a.0 * a.1).sum::<f64>() / total;
    let var: f64 = embedded
        .iter()
        .map(|a| (a.0 - mean).powi(2) * a.1)
        .sum::<f64>()
        / total;
    let target_var = std::f64::consts::PI.powi(2) / 3.0 - sigma * sigma;
    // The normalised table that the sampler uses.
    let c = Correction::new(embedded, sigma).unwrap();
    // L∞ on the construction grid (h = 0.02 over [−20, 20]) and on a 10× finer grid.
    let linf = cdf_error(embedded, sigma, 0.02, 1000);
    let linf_fine = cdf_error(embedded, sigma, 0.002, 10_000);
    let linf_norm = cdf_error(&c.atoms(), sigma, 0.002, 10_000);
    println!(
        "σ = {sigma}: {} atoms, Σu = {total:.8}, mean = {mean:.2e}, Var = {var:.5} (π²/3 − σ² = \
         {target_var:.5}), L∞ = {linf:.3e}, fine grid {linf_fine:.3e}, normalised {linf_norm:.3e}",
        embedded.len()
    );
    // Spec 002 T1: |mean| < 1e−6 (the tables are symmetrised, so it holds to rounding), and
    // Σu ∈ [1, 1.002]. The NNLS table's raw mass is 1 − 1.1e−6 (σ = 1) and 1 − 9.3e−7 (σ = 1.2):
    // the fit of S on [−2V, 2V] leaves the tail mass beyond the grid out. The sampler uses the
    // normalised table (Σu = 1); the raw deficit is bounded at 2e−6 (DESIGN.md, departures).
    assert!((1.0 - 2e-6..=1.002).contains(&total), "total mass {total}");
    let normalised: f64 = c.atoms().iter().map(|a| a.1).sum();
    assert!(
        (normalised - 1.0).abs() < 1e-12,
        "normalised mass {normalised}"
    );
    assert!(mean.abs() < 1e-6, "mean {mean}");
    assert!(
        (var / target_var - 1.0).abs() < 0.01,
        "variance {var} vs {target_var}"
    );
    assert!(linf <= bound, "L∞ {linf} > {bound}");
    assert!(linf_fine <= bound, "fine L∞ {linf_fine} > {bound}");
    assert!(linf_norm <= bound, "normalised L∞ {linf_norm} > {bound}");
    // The acceptance probability P(Δ + X_norm + X_corr > 0) = Σ uⱼ Φ((Δ + yⱼ)/σ) against S(Δ).
    let atoms_n = c.atoms();
    let mut worst: f64 = 0.0;
    for k in -1500..=1500 {
        let d = k as f64 * 0.01;
        let p: f64 = atoms_n
            .iter()
            .map(|&(y, u)| u * tallmc_core::math::norm_cdf((d + y) / sigma))
            .sum();
        worst = worst.max((p - logistic_cdf(d)).abs());
    }
    println!("σ = {sigma}: sup over Δ ∈ [−15, 15] of |P(accept) − S(Δ)| = {worst:.3e}");
    assert!(worst <= bound, "acceptance error {worst}");
    let _ = mixture_cdf;
}

#[test]
fn t1_sigma_1_table() {
    check(1.0, &SIGMA_1, 2e-5);
}

#[test]
fn t1_sigma_1_2_table() {
    check(1.2, &SIGMA_1_2, 5e-5);
}
