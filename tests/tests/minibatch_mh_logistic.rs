//! T5 of spec 002 on the synthetic MNIST-like "1 vs 7" data set of the spec (§5; MNIST cannot
//! be downloaded here): 784 pixels, no intercept, flat prior, K = 100, random walk std 0.05,
//! m = 100, θ₀ ~ U(0, 1)^784, T = 5000, N = 13 000 train + 2 163 test. Spec thresholds ([R]):
//! final-sample test accuracy ≥ 97% ([R] 99.2%), MHminibatch average batch in [100, 400]
//! ([R] 191), AustereMH(c) (m = 450, ε = 0.01) ≥ 4× MHminibatch ([R] 8.2×), and the average
//! batch increasing with the step size (0.005 < 0.01 < 0.05; 2000 iterations each for the two
//! small steps). AustereMH(c)'s design comes from the conservative search (Δ* = 0.1 gives
//! Table 5's m = 450, ε = 0.01). MHSubLhd (γ = 2, p = 2, δ = 0.01) runs 1000 iterations (it scans
//! all data every iteration, as the spec allows): ≥ 20× MHminibatch ([R] 48×) and the ordering
//! MHminibatch < AustereMH(c) < MHSubLhd.

use std::sync::Arc;
use tallmc_core::chain::Chain;
use tallmc_core::kernel::minibatch_mh::baselines::{AustereMh, MhSubLhd};
use tallmc_core::kernel::minibatch_mh::digits::{accuracy, one_vs_seven};
use tallmc_core::kernel::minibatch_mh::xcorr::Correction;
use tallmc_core::kernel::minibatch_mh::{MinibatchMh, MinibatchTest};
use tallmc_core::model::{DataModel, Glm, Logistic, Prior};
use tallmc_core::rng::{chain_rng, uniform};
use tallmc_core::sampler::minibatch_mh::MinibatchMhChain;

fn run_test<T: MinibatchTest>(
    kernel: T,
    model: Arc<dyn DataModel>,
    iters: usize,
) -> (Vec<f64>, f64) {
    let mut rng = chain_rng(5005, 9);
    let theta0: Vec<f64> = (0..784).map(|_| uniform(&mut rng)).collect();
    let mut chain = MinibatchMhChain::new(kernel, model, &theta0, 0).unwrap();
    let mut b = 0.0;
    for _ in 0..iters {
        b += chain.step(&mut rng).extra[0];
    }
    (chain.position().to_vec(), b / iters as f64)
}

#[test]
fn t5_synthetic_one_vs_seven() {
    let train = one_vs_seven(13_000, 5005, 0);
    let test = one_vs_seven(2_163, 5005, 1);
    let model: Arc<dyn DataModel> = Arc::new(Glm::new(train, Logistic, Prior::Flat));
    let iters = 5000;
    // AustereMH(c): the conservative design search for N = 13 000 and Δ* = 0.1 (Table 5).
    let austere = AustereMh::conservative(0.05, 100.0, 13_000, 0.1).unwrap();
    assert_eq!(
        (austere.batch_step, austere.epsilon),
        (450, 0.01),
        "Table 5's design"
    );
    // The five runs are independent (each from its own seeded stream): one thread each.
    let (mh_runs, (theta_au, au), (theta_sl, sl)) = std::thread::scope(|scope| {
        // The two smaller steps only check the ordering of batch sizes: 2000 iterations suffice.
        let mh: Vec<_> = [(0.005, 2000), (0.01, 2000), (0.05, iters)]
            .into_iter()
            .map(|(step, its)| {
                let model = model.clone();
                let k = MinibatchMh::new(step, 100.0, 100, Correction::sigma_1()).unwrap();
                (step, scope.spawn(move || run_test(k, model, its)))
            })
            .collect();
        let m = model.clone();
        let au = scope.spawn(move || run_test(austere, m, iters));
        // MHSubLhd (γ = 2, p = 2, δ = 0.01; a full scan per iteration): 1000 iterations.
        let k = MhSubLhd::new(0.05, 100.0, 100, 2.0, 0.01, 2.0).unwrap();
        let sl = run_test(k, model.clone(), 1000);
        let mh: Vec<_> = mh
            .into_iter()
            .map(|(step, h)| (step, h.join().expect("MHminibatch run")))
            .collect();
        (mh, au.join().expect("AustereMH run"), sl)
    });
    let mut sizes = Vec::new();
    for (step, (theta, b)) in &mh_runs {
        let acc = accuracy(theta, &test);
        println!("MHminibatch step {step}: average b {b:.1}, test accuracy {acc:.4}");
        sizes.push((*b, acc));
    }
    let (mb, acc) = sizes[2];
    let acc_au = accuracy(&theta_au, &test);
    println!(
        "AustereMH(c) step 0.05 (searched m = 450, ε = 0.01): average b {au:.1}, test accuracy {acc_au:.4}, ratio {:.1}",
        au / mb
    );
    println!(
        "MHSubLhd step 0.05: average b {sl:.1}, test accuracy {:.4}, ratio {:.1}",
        accuracy(&theta_sl, &test),
        sl / mb
    );
    assert!(acc >= 0.97, "accuracy {acc}");
    assert!(
        (100.0..=400.0).contains(&mb),
        "MHminibatch average batch {mb}"
    );
    assert!(au / mb >= 4.0, "AustereMH / MHminibatch = {}", au / mb);
    assert!(sl / mb >= 20.0, "MHSubLhd / MHminibatch = {}", sl / mb);
    assert!(mb < au && au < sl, "ordering {mb} < {au} < {sl}");
    assert!(sizes[0].0 < sizes[1].0 && sizes[1].0 < sizes[2].0);
}
