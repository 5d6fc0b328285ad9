//! Full-data passes split across threads (`tallmc run` with more cores than chains) give the
//! same bits as one thread: the reduction order is fixed by the chunks, not by the threads.
//! Also the chunked pass equals the per-datum sum to rounding.

use crate::smh_common;

use std::sync::Arc;
use tallmc_cli::parallel::Threads;

#[test]
fn threads_do_not_change_the_bits() {
    let (n, d) = (70_001, 7); // five chunks, the last one short
    for seed in [1u64, 2] {
        let mut one = smh_common::logistic(n, d, seed);
        let mut many = smh_common::logistic(n, d, seed);
        Arc::get_mut(&mut many)
            .expect("fresh model")
            .set_parallel(Arc::new(Threads::new(3)));
        let _ = Arc::get_mut(&mut one).expect("fresh model");
        let theta: Vec<f64> = (0..d).map(|k| 0.1 * k as f64 - 0.2).collect();
        let (mut g1, mut g2) = (vec![0.5; d], vec![0.5; d]);
        let (v1, v2) = (
            one.log_lik_grad_all(&theta, &mut g1),
            many.log_lik_grad_all(&theta, &mut g2),
        );
        assert_eq!(v1.to_bits(), v2.to_bits());
        for k in 0..d {
            assert_eq!(g1[k].to_bits(), g2[k].to_bits(), "gradient {k}");
        }
        assert_eq!(
            one.log_lik_all(&theta).to_bits(),
            many.log_lik_all(&theta).to_bits()
        );
        // Against the per-datum sum.
        let mut g3 = vec![0.5; d];
        let v3: f64 = (0..n).map(|i| one.log_lik_grad(&theta, i, &mut g3)).sum();
        assert!((v1 - v3).abs() <= 1e-9 * v3.abs(), "{v1} vs {v3}");
        for k in 0..d {
            assert!((g1[k] - g3[k]).abs() <= 1e-9 * (1.0 + g3[k].abs()), "{k}");
        }
    }
}

/// A drawn batch's gradient (read in sweeps of eight rows), its gradient without the values
/// (`grad_batch`, the stochastic-gradient samplers' hot loop), its value alone and the Hessian
/// over the same rows are the per-datum sums bit for bit: every GLM family, raw and whitened
/// (offsets), batches shorter than, equal to and longer than the gather chunk, repeated indices.
#[test]
fn batch_gradient_is_the_per_datum_sum_bit_for_bit() {
    let (n, d) = (3_000, 6);
    for name in ["logistic", "poisson", "linear", "robust"] {
        for reparam in ["auto", "none"] {
            let m = tallmc_tests::simulated_model(name, n, d, 5, reparam);
            let dim = m.dim();
            let theta: Vec<f64> = (0..dim).map(|k| 0.05 * k as f64 - 0.1).collect();
            let mut state = 12345u64;
            for len in [0usize, 1, 7, 8, 9, 255, 256, 257, 1300] {
                let idx: Vec<usize> = (0..len)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        (state >> 33) as usize % n
                    })
                    .collect();
                let (mut g1, mut g2) = (vec![0.25; dim], vec![0.25; dim]);
                let v1 = m.log_lik_grad_batch(&theta, &idx, &mut g1);
                let mut v2 = 0.0;
                for &i in &idx {
                    v2 += m.log_lik_grad(&theta, i, &mut g2);
                }
                assert_eq!(v1.to_bits(), v2.to_bits(), "{name} {reparam} {len}: value");
                for k in 0..dim {
                    assert_eq!(
                        g1[k].to_bits(),
                        g2[k].to_bits(),
                        "{name} {reparam} {len}: {k}"
                    );
                }
                // The gradient alone (`grad_batch`, no values: SGLD's call) has the same bits.
                let mut g3 = vec![0.25; dim];
                m.grad_batch(&theta, &idx, &mut g3);
                assert!(
                    g3.iter().zip(&g2).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{name} {reparam} {len}: grad_batch"
                );
                // The Hessian over the same rows, eight per sweep, is the row-by-row sum too.
                let (mut h1, mut h2) = (vec![0.5; dim * dim], vec![0.5; dim * dim]);
                m.log_lik_hess_rows(&theta, &|q| idx[q], len, &mut h1);
                for &i in &idx {
                    m.log_lik_hess(&theta, i, &mut h2);
                }
                assert!(
                    h1.iter().zip(&h2).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{name} {reparam} {len}: Hessian"
                );
                // The value alone over the batch (the mode search's line search), as
                // `Iterator::sum` of the per-datum values.
                let v3: f64 = idx.iter().map(|&i| m.log_lik(&theta, i)).sum();
                assert_eq!(
                    m.log_lik_sum(&theta, &idx).to_bits(),
                    v3.to_bits(),
                    "{name} {reparam} {len}: value sum"
                );
            }
        }
    }
}

/// The control variates' full pass (A = Σ∇ℓₖ and B = Σ∇²ℓₖ at the centre, chunk by chunk)
/// gives the same bits on one thread and on spare threads (several chunks, and one), and
/// matches the per-datum sums to rounding.
#[test]
fn control_variates_on_threads_give_the_same_bits() {
    use tallmc_core::estimator::ControlVariates;
    for (n, d) in [(70_001, 7), (9_000, 4)] {
        let mut one = smh_common::logistic(n, d, 3);
        let mut many = smh_common::logistic(n, d, 3);
        Arc::get_mut(&mut many)
            .expect("fresh model")
            .set_parallel(Arc::new(Threads::new(3)));
        let _ = Arc::get_mut(&mut one).expect("fresh model");
        let centre: Vec<f64> = (0..d).map(|k| 0.05 * k as f64 - 0.1).collect();
        for order in 0..=2 {
            let c1 = ControlVariates::new(&*one, &centre, order).unwrap();
            let c2 = ControlVariates::new(&*many, &centre, order).unwrap();
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(c1.sum_grad()), bits(c2.sum_grad()), "n = {n}: A");
            assert_eq!(bits(c1.sum_hess()), bits(c2.sum_hess()), "n = {n}: B");
            // The per-datum terms (computed in pieces on the threads) and Σℓ*, through the
            // differences at rows across every piece and the proxy sum; and the same again when
            // the cache is built in the buffers of control variates at another centre.
            let other: Vec<f64> = centre.iter().map(|c| c + 0.3).collect();
            let reused = ControlVariates::new_reusing(
                &*many,
                &centre,
                order,
                Some(ControlVariates::new(&*many, &other, 2).unwrap()),
            )
            .unwrap();
            let theta: Vec<f64> = centre.iter().map(|c| c - 0.2).collect();
            let idx: Vec<usize> = (0..n).step_by(97).collect();
            let diffs = |c: &ControlVariates| {
                let (mut dv, mut gv) = (vec![0.0; idx.len()], vec![0.0; idx.len() * d]);
                c.diffs(&*one, &theta, &idx, &mut dv, &mut gv);
                (bits(&dv), bits(&gv), c.proxy_sum(&theta, None).to_bits())
            };
            let want = diffs(&c1);
            assert_eq!(diffs(&c2), want, "n = {n}, order {order}: terms on threads");
            assert_eq!(
                diffs(&reused),
                want,
                "n = {n}, order {order}: reused buffers"
            );
            assert_eq!(
                bits(reused.sum_hess()),
                bits(c1.sum_hess()),
                "n = {n}: reused B"
            );
            // against the per-datum sums
            let (mut a, mut b) = (vec![0.0; d], vec![0.0; d * d]);
            for k in 0..n {
                one.log_lik_grad(&centre, k, &mut a);
                one.log_lik_hess(&centre, k, &mut b);
            }
            for (x, y) in c1
                .sum_grad()
                .iter()
                .zip(&a)
                .chain(c1.sum_hess().iter().zip(&b))
            {
                assert!(
                    (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
                    "n = {n}: {x} vs {y}"
                );
            }
        }
    }
}

/// The mode search's passes over more than one chunk of rows (the whitening's Newton on a
/// subset of a tall table, and on all of a table) and a whitened model built with threads give
/// the same bits as on one thread.
#[test]
fn mode_search_and_whitening_on_threads_give_the_same_bits() {
    use tallmc_core::data::DesignSpec;
    use tallmc_core::optim::{find_mode, find_mode_subset, ModeOptions};
    use tallmc_core::settings::Settings;
    let (n, d) = (50_000, 6);
    let mut one = smh_common::logistic(n, d, 4);
    let mut many = smh_common::logistic(n, d, 4);
    Arc::get_mut(&mut many)
        .expect("fresh model")
        .set_parallel(Arc::new(Threads::new(3)));
    let _ = Arc::get_mut(&mut one).expect("fresh model");
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let subset: Vec<usize> = (0..40_000).map(|k| (k * 7919) % n).collect();
    let opts = ModeOptions::default();
    let start = vec![0.0; d];
    for (r1, r2) in [
        (
            find_mode_subset(&*one, &subset, &start, &opts).unwrap(),
            find_mode_subset(&*many, &subset, &start, &opts).unwrap(),
        ),
        (
            find_mode(&*one, &start, &opts).unwrap(),
            find_mode(&*many, &start, &opts).unwrap(),
        ),
    ] {
        assert_eq!(bits(&r1.mode), bits(&r2.mode));
        assert_eq!(bits(&r1.neg_hessian), bits(&r2.neg_hessian));
        assert_eq!(r1.log_density.to_bits(), r2.log_density.to_bits());
        assert!(r1.converged && r1.iterations > 1);
    }
    // the whitened model of `tallmc run` (built on every core) is the one-thread model
    let table = tallmc_core::simulate::simulate("logistic", n, d, 5, &Settings::new()).unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let set = Settings::new();
    let m1 = tallmc_core::registry::build_model("logistic", &table, &spec, &set).unwrap();
    let m2 = tallmc_core::registry::build_model_on(
        "logistic",
        &table,
        &spec,
        &set,
        Arc::new(Threads::new(3)),
    )
    .unwrap();
    let (u1, u2) = (m1.user_map().unwrap(), m2.user_map().unwrap());
    assert_eq!(bits(u1.shift()), bits(u2.shift()));
    let z: Vec<f64> = (0..m1.dim()).map(|k| 0.3 - 0.1 * k as f64).collect();
    let (mut t1, mut t2) = (vec![0.0; z.len()], vec![0.0; z.len()]);
    u1.to_user(&z, &mut t1);
    u2.to_user(&z, &mut t2);
    assert_eq!(bits(&t1), bits(&t2));
    assert_eq!(m1.log_lik_all(&z).to_bits(), m2.log_lik_all(&z).to_bits());
}

/// `for_each_piece` on threads hands every piece to exactly one job, with its index, the last
/// piece short; the results are those of the one-thread default.
#[test]
fn pieces_on_threads_are_each_visited_once() {
    use tallmc_core::parallel::ParallelFor;
    for (n, len, threads) in [(100, 7, 3), (5, 10, 4), (0, 3, 2), (64, 16, 4)] {
        let mut a = vec![-1.0; n];
        let mut b = vec![-1.0; n];
        let job = |k: usize, piece: &mut [f64]| {
            for (j, v) in piece.iter_mut().enumerate() {
                *v += 1.0 + (k * len + j) as f64;
            }
        };
        Threads::new(threads).for_each_piece(&mut a, len, &job);
        tallmc_core::parallel::for_each_piece(None, &mut b, len, &job);
        let want: Vec<f64> = (0..n).map(|i| i as f64).collect();
        assert_eq!(a, want, "n {n}, len {len}, threads {threads}");
        assert_eq!(b, want);
    }
}

/// The full-data gradient at K points in one pass over the data (the KSD's exact scores) gives
/// each point's bits of one pass per point: every GLM family, raw and whitened, one chunk and
/// several (the last one short), on one thread and on spare threads, K = 0, 1, 4, 5 and 10.
#[test]
fn passes_at_many_points_give_the_bits_of_one_pass_each() {
    // n = 3 005: a last block of 29 rows, whole groups of eight and a rest.
    for (n, d) in [(40_001usize, 5usize), (3_000, 4), (3_005, 4)] {
        for name in ["logistic", "poisson", "linear", "robust"] {
            for reparam in ["auto", "none"] {
                let one = tallmc_tests::simulated_model(name, n, d, 9, reparam);
                let mut many = tallmc_tests::simulated_model(name, n, d, 9, reparam);
                Arc::get_mut(&mut many)
                    .expect("fresh model")
                    .set_parallel(Arc::new(Threads::new(3)));
                let dim = one.dim();
                // K = 5 and 10: whole groups of four points and a padded last one.
                for k in [0usize, 1, 4, 5, 10] {
                    let points: Vec<f64> = (0..k * dim)
                        .map(|j| 0.02 * (j % 7) as f64 - 0.03 * (j / dim) as f64)
                        .collect();
                    let start: Vec<f64> = (0..k * dim).map(|j| 0.1 * j as f64).collect();
                    let mut each = start.clone();
                    let v_each: Vec<f64> = points
                        .chunks_exact(dim)
                        .zip(each.chunks_exact_mut(dim))
                        .map(|(x, g)| one.log_lik_grad_all(x, g))
                        .collect();
                    for m in [&one, &many] {
                        let mut g = start.clone();
                        let v = m.log_lik_grad_all_many(&points, &mut g);
                        let same = v.len() == k
                            && v.iter()
                                .zip(&v_each)
                                .all(|(a, b)| a.to_bits() == b.to_bits())
                            && g.iter().zip(&each).all(|(a, b)| a.to_bits() == b.to_bits());
                        assert!(same, "{name} {reparam} n = {n}, K = {k}");
                    }
                }
            }
        }
    }
}

/// The design written in pieces on threads (`tallmc run` builds the model on every core) is the
/// one-thread design: intercept or not, standardised or not, one piece and several.
#[test]
fn design_on_threads_is_the_one_thread_design() {
    use tallmc_core::data::{Design, DesignSpec};
    use tallmc_core::settings::Settings;
    for n in [40_001usize, 100] {
        let table = tallmc_core::simulate::simulate("logistic", n, 4, 2, &Settings::new()).unwrap();
        for (intercept, standardize) in [(true, false), (false, true), (true, true)] {
            let spec = DesignSpec {
                response: "y".into(),
                features: None,
                intercept,
                standardize,
            };
            let one = Design::from_table(&table, &spec).unwrap();
            let many = Design::from_table_on(&table, &spec, Some(&Threads::new(3))).unwrap();
            assert_eq!((one.n, one.d), (many.n, many.d));
            assert!(one.x.len() == n * one.d && one.x.iter().all(|v| v.is_finite()));
            let same = one
                .x
                .iter()
                .zip(&many.x)
                .all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same && one.x.len() == many.x.len(),
                "n {n} {intercept} {standardize}"
            );
            // The last row holds the table's last row (x1 in the first feature slot).
            let x1 = table.column("x1").unwrap()[n - 1];
            let last = one.row(n - 1);
            assert!(standardize || last[usize::from(intercept)] == x1);
        }
    }
}

/// HMC-ECS with its subsample evaluated in parts on spare threads (positions, then blocks)
/// gives the draws, energies and σ̂² of one thread bit for bit: m above the split size with G
/// dividing m or not, on two and three threads (scoped threads and the persistent pool of
/// `tallmc run`); m below it (one thread either way).
#[test]
fn hmc_ecs_on_threads_gives_the_one_thread_chain() {
    use tallmc_core::chain::Phase;
    use tallmc_core::data::DesignSpec;
    use tallmc_core::registry::{build_model, run_chains, ChainConfig};
    use tallmc_core::settings::Settings;
    let table =
        tallmc_core::simulate::simulate("logistic", 30_000, 6, 4, &Settings::new()).unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let run = |threads: usize, pool: bool, m: &str, g: &str| {
        let mut model = build_model("logistic", &table, &spec, &Settings::new()).unwrap();
        if threads > 1 {
            let p: Arc<dyn tallmc_core::parallel::ParallelFor> = if pool {
                Arc::new(tallmc_cli::parallel::Pool::new(threads))
            } else {
                Arc::new(Threads::new(threads))
            };
            Arc::get_mut(&mut model)
                .expect("fresh model")
                .set_parallel(p);
        }
        let mut set = Settings::new();
        set.insert("m", m);
        set.insert("G", g);
        let config = ChainConfig {
            sampler: "hmc-ecs",
            warmup: 150,
            settings: &set,
        };
        let mut bits = Vec::new();
        run_chains(&config, model, 5, 1, 150, |_, phase, _, th, info| {
            if phase == Phase::Sampling {
                bits.extend(th.iter().map(|v| v.to_bits()));
                bits.push(info.energy.to_bits());
                bits.extend(info.extra.iter().map(|v| v.to_bits()));
            }
        })
        .unwrap();
        bits
    };
    for (m, g) in [("1300", "100"), ("1001", "7"), ("300", "30")] {
        let one = run(1, false, m, g);
        for threads in [2, 3] {
            for pool in [false, true] {
                assert!(
                    one == run(threads, pool, m, g),
                    "m = {m}, G = {g}, {threads} threads, pool {pool}"
                );
            }
        }
    }
}

/// The persistent pool runs every job of every call exactly once (job counts from 0 to more
/// than its threads, thousands of calls in a row), hands each piece to one job, serves two
/// callers at once (the second runs alone), passes a job's panic to its caller (after the other
/// jobs ran, with helpers) and keeps working after it.
#[test]
fn the_pool_runs_every_job_once() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tallmc_cli::parallel::Pool;
    use tallmc_core::parallel::ParallelFor;
    for threads in [1, 2, 3] {
        let pool = Pool::new(threads);
        assert_eq!(pool.threads(), threads);
        for round in 0..3_000usize {
            let jobs = round % 7;
            let hits: Vec<AtomicUsize> = (0..jobs).map(|_| AtomicUsize::new(0)).collect();
            pool.for_each(jobs, &|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "{threads} {round}"
            );
        }
        let mut data = vec![-1.0; 1_000];
        pool.for_each_piece(&mut data, 77, &|k, piece| {
            for (j, v) in piece.iter_mut().enumerate() {
                *v += 1.0 + (k * 77 + j) as f64;
            }
        });
        assert!(data.iter().enumerate().all(|(i, &v)| v == i as f64));
        // Two callers at once on one pool.
        let pool = Arc::new(pool);
        let total = Arc::new(AtomicUsize::new(0));
        let callers: Vec<_> = (0..2)
            .map(|_| {
                let (pool, total) = (pool.clone(), total.clone());
                std::thread::spawn(move || {
                    for _ in 0..500 {
                        pool.for_each(5, &|_| {
                            total.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
            .collect();
        for c in callers {
            c.join().unwrap();
        }
        assert_eq!(total.load(Ordering::Relaxed), 2 * 500 * 5);
        // A panicking job: the caller panics, after every other job ran; the pool still works.
        let ran = AtomicUsize::new(0);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.for_each(6, &|k| {
                ran.fetch_add(1, Ordering::Relaxed);
                if k == 4 {
                    panic!("job 4");
                }
            })
        }));
        assert!(r.is_err());
        if threads > 1 {
            // On its own thread alone (one thread) the call stops at the panic.
            assert_eq!(ran.load(Ordering::Relaxed), 6);
        }
        let after = AtomicUsize::new(0);
        pool.for_each(3, &|_| {
            after.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(after.load(Ordering::Relaxed), 3);
    }
}

/// A stochastic gradient's batch from `SPLIT_BATCH` indices on is the sum of its two halves,
/// each from zero, added in order (below it, the batch in one sum), on threads or not; and the
/// SG samplers' chains on a model with spare threads are the one-thread chains bit for bit.
#[test]
fn large_batches_are_summed_in_two_halves_on_threads_or_not() {
    use tallmc_core::chain::Phase;
    use tallmc_core::data::DesignSpec;
    use tallmc_core::estimator::gradient::{batch_grad, SPLIT_BATCH};
    use tallmc_core::registry::{build_model, run_chains, ChainConfig};
    use tallmc_core::settings::Settings;
    let table =
        tallmc_core::simulate::simulate("logistic", 20_000, 6, 8, &Settings::new()).unwrap();
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let model = |pool: bool| {
        let mut m = build_model("logistic", &table, &spec, &Settings::new()).unwrap();
        if pool {
            Arc::get_mut(&mut m)
                .expect("fresh model")
                .set_parallel(Arc::new(tallmc_cli::parallel::Pool::new(2)));
        }
        m
    };
    let (one, two) = (model(false), model(true));
    let dim = one.dim();
    let theta: Vec<f64> = (0..dim).map(|k| 0.04 * k as f64 - 0.1).collect();
    for m in [SPLIT_BATCH - 1, SPLIT_BATCH, 1_301] {
        let idx: Vec<usize> = (0..m).map(|k| (k * 7_919 + 3) % 20_000).collect();
        let want = if m < SPLIT_BATCH {
            let mut g = vec![0.0; dim];
            one.log_lik_grad_batch(&theta, &idx, &mut g);
            g
        } else {
            let (mut a, mut b) = (vec![0.0; dim], vec![0.0; dim]);
            one.log_lik_grad_batch(&theta, &idx[..m / 2], &mut a);
            one.log_lik_grad_batch(&theta, &idx[m / 2..], &mut b);
            (0..dim).map(|k| (0.0 + a[k]) + b[k]).collect()
        };
        for mdl in [&one, &two] {
            let (mut g, mut parts) = (vec![0.0; dim], Vec::new());
            batch_grad(&**mdl, &theta, &idx, &mut g, &mut parts);
            assert!(
                g.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
                "batch of {m}"
            );
        }
    }
    for (sampler, batch) in [("sgld", "1300"), ("sghmc", "701"), ("sgld", "100")] {
        let run = |m: Arc<dyn tallmc_core::model::DataModel>| {
            let mut set = Settings::new();
            set.insert("batch_size", batch);
            let config = ChainConfig {
                sampler,
                warmup: 50,
                settings: &set,
            };
            let mut bits = Vec::new();
            run_chains(&config, m, 2, 1, 200, |_, phase, _, th, _| {
                if phase == Phase::Sampling {
                    bits.extend(th.iter().map(|v| v.to_bits()));
                }
            })
            .unwrap();
            bits
        };
        assert!(
            run(one.clone()) == run(two.clone()),
            "{sampler} batch {batch}"
        );
    }
}
