//! T5 of spec 002 on the synthetic MNIST-like "1 vs 7" data set of the spec (§5; MNIST cannot
//! be downloaded here): 784 pixels, no intercept, flat prior, K = 100, random walk std 0.05,
//! m = 100, θ₀ ~ U(0, 1)^784, T = 5000, N = 13 000 train + 2 163 test. Spec thresholds ([R]):
//! final-sample test accuracy ≥ 97% ([R] 99.2%), MHminibatch average batch in [100, 400]
//! ([R] 191), AustereMH(c) (m = 450, ε = 0.01) ≥ 4× MHminibatch ([R] 8.2×), and the average
//! batch increasing with the step size (0.005 < 0.01 < 0.05; 2000 iterations each for the two small steps). MHSubLhd is left out (a full
//! data scan per iteration).

use std::sync::Arc;
use tallmc_core::chain::Chain;
use tallmc_core::data::Design;
use tallmc_core::dist::std_normal;
use tallmc_core::kernel::minibatch_mh::baselines::AustereMh;
use tallmc_core::kernel::minibatch_mh::xcorr::Correction;
use tallmc_core::kernel::minibatch_mh::{MinibatchMh, MinibatchMhChain, MinibatchTest};
use tallmc_core::model::{DataModel, Glm, Logistic, Prior};
use tallmc_core::rng::{chain_rng, uniform, ChainRng};

fn u(rng: &mut ChainRng, a: f64, b: f64) -> f64 {
    a + (b - a) * uniform(rng)
}

fn seg_dist(p: (f64, f64), a: (f64, f64), b: (f64, f64)) -> f64 {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 {
        (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (qx, qy) = (a.0 + t * dx, a.1 + t * dy);
    ((p.0 - qx).powi(2) + (p.1 - qy).powi(2)).sqrt()
}

/// One image (784 pixels) and its label (1 for a "1", 0 for a "7").
fn digit(rng: &mut ChainRng, one: bool) -> Vec<f64> {
    let w = u(rng, 1.0, 2.5);
    let segs: Vec<((f64, f64), (f64, f64))> = if one {
        let c = u(rng, 11.0, 17.0);
        let r0 = u(rng, 3.0, 7.0);
        let r1 = u(rng, 21.0, 25.0);
        let s = u(rng, -0.25, 0.25);
        vec![((r0, c - s * (14.0 - r0)), (r1, c + s * (r1 - 14.0)))]
    } else {
        let r0 = u(rng, 4.0, 8.0);
        let c0 = u(rng, 5.0, 10.0);
        let c1 = u(rng, 18.0, 23.0);
        let tau = u(rng, -1.0, 1.0);
        let r2 = u(rng, 21.0, 25.0);
        let c2 = u(rng, 9.0, 15.0);
        vec![((r0, c0), (r0 + tau, c1)), ((r0 + tau, c1), (r2, c2))]
    };
    let mut img = vec![0.0; 784];
    for r in 0..28 {
        for c in 0..28 {
            let p = (r as f64 + 0.5, c as f64 + 0.5);
            let d = segs
                .iter()
                .map(|&(a, b)| seg_dist(p, a, b))
                .fold(f64::INFINITY, f64::min);
            let mut v = (1.0 - (d - w / 2.0).max(0.0)).clamp(0.0, 1.0);
            if v > 0.0 {
                v = (v + 0.05 * std_normal(rng)).clamp(0.0, 1.0);
            }
            img[r * 28 + c] = if v < 0.05 { 0.0 } else { v };
        }
    }
    img
}

fn data(n: usize, stream: u64) -> Design {
    let mut rng = chain_rng(5005, stream);
    let mut x = Vec::with_capacity(n * 784);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let one = uniform(&mut rng) < 0.5;
        x.extend(digit(&mut rng, one));
        y.push(if one { 1.0 } else { 0.0 });
    }
    Design {
        n,
        d: 784,
        x,
        y,
        names: (0..784).map(|j| format!("p{j}")).collect(),
    }
}

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

fn accuracy(theta: &[f64], test: &Design) -> f64 {
    let mut ok = 0;
    for i in 0..test.n {
        let eta: f64 = test.x[i * 784..(i + 1) * 784]
            .iter()
            .zip(theta)
            .map(|(a, b)| a * b)
            .sum();
        ok += ((eta > 0.0) == (test.y[i] == 1.0)) as usize;
    }
    ok as f64 / test.n as f64
}

#[test]
fn t5_synthetic_one_vs_seven() {
    let train = data(13_000, 0);
    let test = data(2_163, 1);
    let model: Arc<dyn DataModel> = Arc::new(Glm::new(train, Logistic, Prior::Flat));
    let iters = 5000;
    let mut sizes = Vec::new();
    // The two smaller steps only check the ordering of batch sizes: 2000 iterations suffice.
    for (step, its) in [(0.005, 2000), (0.01, 2000), (0.05, iters)] {
        let k = MinibatchMh::new(step, 100.0, 100, Correction::sigma_1()).unwrap();
        let (theta, b) = run_test(k, model.clone(), its);
        let acc = accuracy(&theta, &test);
        println!("MHminibatch step {step}: average b {b:.1}, test accuracy {acc:.4}");
        sizes.push((b, acc));
    }
    let (mb, acc) = sizes[2];
    let k = AustereMh::new(0.05, 100.0, 450, 0.01).unwrap();
    let (theta, au) = run_test(k, model.clone(), iters);
    let acc_au = accuracy(&theta, &test);
    println!(
        "AustereMH(c) step 0.05: average b {au:.1}, test accuracy {acc_au:.4}, ratio {:.1}",
        au / mb
    );
    assert!(acc >= 0.97, "accuracy {acc}");
    assert!(
        (100.0..=400.0).contains(&mb),
        "MHminibatch average batch {mb}"
    );
    assert!(au / mb >= 4.0, "AustereMH / MHminibatch = {}", au / mb);
    assert!(sizes[0].0 < sizes[1].0 && sizes[1].0 < sizes[2].0);
}
