//! Seeded value stability, bit-identical reruns, divergences as data, frozen adaptation and
//! registry validation for the exact samplers.

use std::sync::Arc;
use tallmc_core::dist;
use tallmc_core::error::Error;
use tallmc_core::kernel::{Hmc, Kernel, Mala, Metric, Nuts, Rwmh};
use tallmc_core::model::prior::Prior;
use tallmc_core::model::{DataModel, GaussianNoise, Glm, LogDensity};
use tallmc_core::registry::{build_chain, samplers, ChainConfig};
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::{AdaptConfig, AdaptiveChain, MetricAdaptation};
use tallmc_core::settings::Settings;
use tallmc_tests::*;

fn small_linear() -> Arc<dyn DataModel> {
    let (n, d) = (100, 3);
    let mut rng = chain_rng(3, 0);
    let mut design = gaussian_design(n, d, &mut rng);
    for i in 0..n {
        let eta = linear_predictor(&design, &[1.0, -0.5, 0.25], i);
        design.y[i] = eta + dist::std_normal(&mut rng);
    }
    Arc::new(Glm::new(
        design,
        GaussianNoise { sd: 1.0 },
        Prior::Normal { scale: 10.0 },
    ))
}

/// Every iteration (warm-up included) of a registry chain, as bit patterns.
fn trace_bits(
    sampler: &str,
    settings: &[&str],
    seed: u64,
    warmup: usize,
    draws: usize,
) -> Vec<u64> {
    let mut s = Settings::new();
    for kv in settings {
        s.insert_pair(kv).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup,
        settings: &s,
    };
    let mut rng = chain_rng(seed, 0);
    let mut chain = build_chain(&config, small_linear(), &mut rng).unwrap();
    let mut out = Vec::new();
    for _ in 0..warmup + draws {
        chain.step(&mut rng);
        out.extend(chain.position().iter().map(|x| x.to_bits()));
    }
    out
}

#[test]
fn same_seed_gives_bit_identical_draws() {
    for s in ["rwmh", "mala", "hmc", "nuts"] {
        let a = trace_bits(s, &["jitter=0.1"][..usize::from(s == "hmc")], 9, 150, 50);
        let b = trace_bits(s, &["jitter=0.1"][..usize::from(s == "hmc")], 9, 150, 50);
        assert_eq!(a, b, "{s}");
        let c = trace_bits(s, &["jitter=0.1"][..usize::from(s == "hmc")], 10, 150, 50);
        assert_ne!(a, c, "{s}: different seeds must differ");
    }
}

/// NUTS, seed 5, 100 warm-up iterations: the last 5 draws' bit patterns, generated once by this
/// implementation (the data simulation, `dist::std_normal`, the model and the kernel all feed
/// it). A change here means draws changed for a fixed seed; regenerate only on purpose.
/// Regenerated 2026-11-25: the GLM's full-data pass now sums the likelihood and its gradient
/// per chunk of rows from zero and adds the chunk sums to the prior's (so that splitting the
/// pass across threads keeps the bits, `parallel_pass`); the draws moved in the last ~20 bits.
const NUTS_TRACE: [[u64; 3]; 5] = [
    [0x3ff3006e00b9c3ed, 0xbfdcef2332c34cd9, 0x3fdd539ca7a42b24],
    [0x3ff39f2bbc24cdc7, 0xbfdbb06f8219ce99, 0x3fd27f8671d75c43],
    [0x3fed5e65658bad1b, 0xbfdbf4e447db9124, 0x3fc8ca54764a66e6],
    [0x3ff38a1eb5a7e227, 0xbfdb85833deb06db, 0x3fce559a83f9bdfb],
    [0x3ff14ce94f5c84fc, 0xbfcd935cc7d1e3d2, 0x3fc49304387f8319],
];

#[test]
fn nuts_reproduces_stored_trace() {
    let bits = trace_bits("nuts", &[], 5, 100, 5);
    let last: Vec<u64> = bits[bits.len() - 15..].to_vec();
    let stored: Vec<u64> = NUTS_TRACE.iter().flatten().copied().collect();
    if last != stored {
        for row in last.chunks(3) {
            eprintln!(
                "    [{:#018x}, {:#018x}, {:#018x}],",
                row[0], row[1], row[2]
            );
        }
    }
    assert_eq!(last, stored);
}

/// Neal's funnel: v ~ N(0, 3²), xᵢ | v ~ N(0, eᵛ), i = 1..4.
struct Funnel;

impl LogDensity for Funnel {
    fn dim(&self) -> usize {
        5
    }
    fn log_density(&self, t: &[f64]) -> f64 {
        let mut g = [0.0; 5];
        self.log_density_grad(t, &mut g)
    }
    fn log_density_grad(&self, t: &[f64], g: &mut [f64]) -> f64 {
        let v = t[0];
        let ev = (-v).exp();
        let mut lp = -v * v / 18.0 - 2.0 * v;
        g[0] = -v / 9.0 - 2.0;
        for i in 1..5 {
            lp -= 0.5 * t[i] * t[i] * ev;
            g[0] += 0.5 * t[i] * t[i] * ev;
            g[i] = -t[i] * ev;
        }
        lp
    }
}

/// A density that is NaN for θ₀ > 1 (a model failure must become a divergence).
struct NanBeyondOne;

impl LogDensity for NanBeyondOne {
    fn dim(&self) -> usize {
        2
    }
    fn log_density(&self, t: &[f64]) -> f64 {
        let mut g = [0.0; 2];
        self.log_density_grad(t, &mut g)
    }
    fn log_density_grad(&self, t: &[f64], g: &mut [f64]) -> f64 {
        if t[0] > 1.0 {
            g[0] = f64::NAN;
            g[1] = f64::NAN;
            return f64::NAN;
        }
        g[0] = -t[0];
        g[1] = -t[1];
        -0.5 * (t[0] * t[0] + t[1] * t[1])
    }
}

fn fixed(warmup: usize) -> AdaptConfig {
    AdaptConfig {
        warmup,
        target_accept: 0.8,
        adapt_step_size: false,
        metric: MetricAdaptation::Identity,
    }
}

fn names(d: usize) -> Vec<String> {
    (0..d).map(|i| format!("t{i}")).collect()
}

#[test]
fn divergences_are_recorded_not_fatal() {
    let start = [0.0, 1.0, -1.0, 0.5, 0.2];
    let mut rng = chain_rng(1, 0);
    // A huge step size on the funnel.
    let nuts = Nuts::new(5.0, Metric::Identity(5), 10).unwrap();
    let mut c = AdaptiveChain::new(nuts, Funnel, &start, names(5), fixed(0), &mut rng).unwrap();
    let r = run(&mut c, &mut rng, 200);
    assert!(
        r.divergences() > 100,
        "nuts divergences {}",
        r.divergences()
    );
    assert!(r.draws.iter().flatten().all(|x| x.is_finite()));
    let hmc = Hmc::new(5.0, Metric::Identity(5), 10, 0.0).unwrap();
    let mut c = AdaptiveChain::new(hmc, Funnel, &start, names(5), fixed(0), &mut rng).unwrap();
    let r = run(&mut c, &mut rng, 200);
    assert!(r.divergences() > 100, "hmc divergences {}", r.divergences());
    assert!(r.stats.iter().all(|s| !s.divergent || !s.accepted));
    // NaN densities: every kernel rejects and flags, none panics.
    let z = [0.0, 0.0];
    let k = Rwmh::new(3.0, Metric::Identity(2)).unwrap();
    let mut st = k.init(&NanBeyondOne, &z).unwrap();
    let n_div = (0..300)
        .filter(|_| k.step(&mut rng, &NanBeyondOne, &mut st).divergent)
        .count();
    assert!(n_div > 0 && st.q[0] <= 1.0);
    let k = Mala::new(3.0, Metric::Identity(2)).unwrap();
    let mut st = k.init(&NanBeyondOne, &z).unwrap();
    let n_div = (0..300)
        .filter(|_| k.step(&mut rng, &NanBeyondOne, &mut st).divergent)
        .count();
    assert!(n_div > 0 && st.q[0] <= 1.0);
    let k = Hmc::new(1.0, Metric::Identity(2), 5, 0.0).unwrap();
    let mut st = k.init(&NanBeyondOne, &z).unwrap();
    let n_div = (0..300)
        .filter(|_| k.step(&mut rng, &NanBeyondOne, &mut st).divergent)
        .count();
    assert!(n_div > 0 && st.q[0] <= 1.0);
    let k = Nuts::new(1.0, Metric::Identity(2), 10).unwrap();
    let mut st = k.init(&NanBeyondOne, &z).unwrap();
    let n_div = (0..300)
        .filter(|_| k.step(&mut rng, &NanBeyondOne, &mut st).divergent)
        .count();
    assert!(n_div > 0 && st.q[0] <= 1.0);
    // A non-finite start is an error, not a panic.
    assert_eq!(
        Kernel::<NanBeyondOne>::init(&k, &NanBeyondOne, &[2.0, 0.0]).unwrap_err(),
        Error::NonFiniteStart
    );
}

#[test]
fn adaptation_freezes_after_warmup() {
    let mut s = Settings::new();
    s.insert("metric", "dense");
    let config = ChainConfig {
        sampler: "nuts",
        warmup: 300,
        settings: &s,
    };
    let mut rng = chain_rng(4, 0);
    let mut chain = build_chain(&config, small_linear(), &mut rng).unwrap();
    let r = run(chain.as_mut(), &mut rng, 300);
    let eps = r.stats[0].step_size;
    assert!(eps.is_finite() && eps > 0.0);
    assert!(r.stats.iter().all(|s| s.step_size == eps));
    assert!(r
        .stats
        .iter()
        .all(|s| s.extra[0] >= 1.0 && s.extra[0] <= 10.0));
    assert_eq!(chain.extra_names(), ["tree_depth"]);
    assert_eq!(chain.iteration(), 600);
}

fn build_err(sampler: &str, kv: &[&str]) -> Error {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let config = ChainConfig {
        sampler,
        warmup: 10,
        settings: &s,
    };
    let mut rng = chain_rng(1, 0);
    match build_chain(&config, small_linear(), &mut rng) {
        Ok(_) => panic!("{sampler} {kv:?} should fail"),
        Err(e) => e,
    }
}

#[test]
fn registry_lists_and_validates() {
    let names: Vec<&str> = samplers().iter().map(|s| s.name).collect();
    for s in ["rwmh", "mala", "hmc", "nuts"] {
        assert!(names.contains(&s), "{s} missing from {names:?}");
    }
    assert!(
        matches!(build_err("nuts", &["typo=1"]), Error::UnknownSetting { key } if key == "typo")
    );
    assert!(matches!(build_err("rwmh", &["L=5"]), Error::UnknownSetting { key } if key == "L"));
    assert!(matches!(
        build_err("nope", &[]),
        Error::Unknown {
            what: "sampler",
            ..
        }
    ));
    for (s, kv, key) in [
        ("nuts", "step_size=0", "step_size"),
        ("nuts", "step_size=-1", "step_size"),
        ("mala", "target_accept=1.5", "target_accept"),
        ("rwmh", "metric=full", "metric"),
        ("hmc", "L=0", "L"),
        ("hmc", "jitter=2", "jitter"),
        ("nuts", "max_depth=0", "max_depth"),
        ("nuts", "init=somewhere", "init"),
        ("hmc", "init_radius=-1", "init_radius"),
    ] {
        match build_err(s, &[kv]) {
            Error::InvalidSetting { key: k, .. } => assert_eq!(k, key, "{s} {kv}"),
            e => panic!("{s} {kv}: {e:?}"),
        }
    }
    // Valid explicit settings build.
    let mut s = Settings::new();
    for kv in [
        "step_size=0.05",
        "metric=identity",
        "init=zero",
        "L=5",
        "jitter=0.1",
    ] {
        s.insert_pair(kv).unwrap();
    }
    let config = ChainConfig {
        sampler: "hmc",
        warmup: 0,
        settings: &s,
    };
    let mut rng = chain_rng(1, 0);
    let mut c = build_chain(&config, small_linear(), &mut rng).unwrap();
    assert_eq!(c.position(), [0.0, 0.0, 0.0]);
    let info = c.step(&mut rng);
    assert_eq!(info.n_leapfrog, 5);
    assert_eq!(info.lik_evals, 500);
    assert_eq!(info.grad_evals, 500);
}

#[test]
fn run_chains_streams_are_independent_of_chain_count() {
    use tallmc_core::chain::Phase;
    use tallmc_core::registry::run_chains;
    let s = Settings::new();
    let config = ChainConfig {
        sampler: "nuts",
        warmup: 100,
        settings: &s,
    };
    let collect = |n: usize| {
        let mut draws: Vec<Vec<u64>> = vec![Vec::new(); n];
        let costs = run_chains(&config, small_linear(), 42, n, 50, |c, p, _, th, _| {
            if p == Phase::Sampling {
                draws[c].extend(th.iter().map(|x| x.to_bits()));
            }
        })
        .unwrap();
        (draws, costs)
    };
    let (three, costs) = collect(3);
    let (one, _) = collect(1);
    assert_eq!(three[0], one[0]);
    assert_ne!(three[0], three[1]);
    assert_ne!(three[1], three[2]);
    for c in &costs {
        assert!(c.sampling.grad_evals > 0 && c.warmup.grad_evals > 0 && c.setup.grad_evals > 0);
        // Every evaluation is a full pass over the 100 data.
        assert_eq!(c.sampling.grad_evals % 100, 0);
    }
}
