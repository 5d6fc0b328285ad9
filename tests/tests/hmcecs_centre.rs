//! Where HMC-ECS puts its control variates' centre, and when it moves it (DESIGN.md,
//! departures: "000 §2.2, §3 initial centre" and "000 §3 re-centring"):
//! - a model whitened at the mode of at least `centre_subset`·n rows starts at that mode
//!   (z = 0) without the subset's mode search; a raw model starts at the subset's mode;
//! - the perturbed warm-up re-centres only windows whose σ̂² was above
//!   `recentre_above` (σ̂² of the window's recent half at the next m); `recentre_above=0`
//!   re-centres every window (the paper), and so does the signed variant;
//! - a poor start (raw model, 1 % subset, small m) has σ̂² above the bar and is re-centred.
//!
//! Run: `cargo test -p tallmc-tests --release --test all hmcecs_centre:: -- --nocapture`

use std::sync::Arc;
use tallmc_core::chain::{run_chain, Chain, Phase};
use tallmc_core::model::DataModel;
use tallmc_core::rng::chain_rng;
use tallmc_core::sampler::hmcecs::{EcsChain, EcsConfig};
use tallmc_core::settings::Settings;

fn logistic(n: usize, reparam: &str) -> Arc<dyn DataModel> {
    // Raw-scale features (simulate's defaults), an intercept: the whitening has work to do.
    tallmc_tests::simulated_model("logistic", n, 5, 11, reparam)
}

fn chain(model: &Arc<dyn DataModel>, kv: &[&str], warmup: usize, seed: u64) -> EcsChain {
    build(model, kv, warmup, seed, false)
}

/// `hmc-ecs` (`signed` false) or `hmc-ecs-signed` with settings `kv`.
fn build(
    model: &Arc<dyn DataModel>,
    kv: &[&str],
    warmup: usize,
    seed: u64,
    signed: bool,
) -> EcsChain {
    let mut s = Settings::new();
    for p in kv {
        s.insert_pair(p).unwrap();
    }
    let cfg = EcsConfig::from_settings(&s, signed).unwrap();
    let mut rng = chain_rng(seed, 0);
    EcsChain::new(model.clone(), cfg, warmup, &mut rng).unwrap()
}

/// Runs warm-up only; returns the chain, the warm-up's mean σ̂² per window and its cost.
fn warm_up(mut c: EcsChain, seed: u64) -> (EcsChain, Vec<f64>, u64) {
    let mut rng = chain_rng(seed, 1);
    let w = 5;
    let per = c.warmup() / w;
    let mut s2 = vec![0.0; w];
    let (_, cost) = run_chain(&mut c, &mut rng, 0, |ph, t, _, info| {
        if ph == Phase::Warmup {
            s2[(t / per).min(w - 1)] += info.extra[0] / per as f64;
        }
    });
    (c, s2, cost.lik_evals)
}

#[test]
fn a_whitened_model_starts_at_its_mode() {
    let n = 40_000;
    let white = logistic(n, "auto");
    assert_eq!(white.reparam_info().unwrap().kind, "whiten");
    let c = chain(&white, &[], 500, 3);
    let centre = c.kernel().cv.centre().to_vec();
    println!("whitened: centre {centre:?}");
    assert!(centre.iter().all(|&z| z == 0.0), "{centre:?}");
    // The set-up spent no mode search: one full pass for the control variates, the pilot for
    // m (1 000 data at 5 points) and the initial subsample.
    let setup = c.setup_cost().lik_evals;
    println!("whitened: set-up {setup} likelihood evaluations (n = {n})");

    // A raw model starts at the subset's mode: not the model's start, and a search was paid.
    let raw = logistic(n, "none");
    let c = chain(&raw, &[], 500, 3);
    let start = raw.initial_point();
    let centre = c.kernel().cv.centre().to_vec();
    println!(
        "raw: centre {centre:?}, set-up {}",
        c.setup_cost().lik_evals
    );
    assert!(centre.iter().zip(&start).any(|(a, b)| a != b));
    assert!(c.setup_cost().lik_evals > setup);
}

#[test]
fn recentring_follows_the_window_sigma2() {
    let n = 40_000;
    let white = logistic(n, "auto");
    // Whitened start, defaults: σ̂² stays far below the 0.01 bar, no window re-centres, the
    // centre is still the mode after warm-up.
    let (c, s2, _) = warm_up(chain(&white, &[], 500, 5), 5);
    println!("whitened, defaults: window σ̂² {s2:?}");
    assert!(s2[..4].iter().all(|&v| v < 0.01), "{s2:?}");
    assert!(c.kernel().cv.centre().iter().all(|&z| z == 0.0));
    // With ε, L and m fixed every iteration costs the same whatever the path, so the paper's
    // rule (`recentre_above=0`) costs exactly four full passes more: one per window's end.
    let fixed = ["eps=0.5", "L=3", "m=200"];
    let (c, _, cost) = warm_up(chain(&white, &fixed, 500, 5), 5);
    assert!(c.kernel().cv.centre().iter().all(|&z| z == 0.0));
    let paper: Vec<&str> = fixed.iter().copied().chain(["recentre_above=0"]).collect();
    let (c, _, cost0) = warm_up(chain(&white, &paper, 500, 5), 5);
    println!("whitened, fixed ε, L, m: warm-up evaluations {cost}; recentre_above=0: {cost0}");
    assert!(c.kernel().cv.centre().iter().any(|&z| z != 0.0));
    assert_eq!(cost0 - cost, 4 * n as u64);

    // A raw model centred at a 1 % subset's mode with a small fixed m: the first window's σ̂²
    // is above the 0.01 bar, so it re-centres (the centre moves and a full pass is paid); from
    // the new centre σ̂² is far below the bar and the later windows do not. With ε and L fixed
    // as well, that is exactly one full pass more than never re-centring.
    let raw = logistic(n, "none");
    let small = ["eps=0.5", "L=3", "m=100"];
    let c0 = chain(&raw, &small, 500, 7);
    let start = c0.kernel().cv.centre().to_vec();
    let (c, s2, cost) = warm_up(c0, 7);
    println!("raw, m = 100: window σ̂² {s2:?}, warm-up evaluations {cost}");
    assert!(s2[0] > 0.1, "{s2:?}");
    assert!(s2[1..4].iter().all(|&v| v < 0.01), "{s2:?}");
    assert!(c.kernel().cv.centre() != start.as_slice());
    let never: Vec<&str> = small.iter().copied().chain(["recentre=false"]).collect();
    let (c, _, cost_never) = warm_up(chain(&raw, &never, 500, 7), 7);
    assert!(c.kernel().cv.centre() == start.as_slice());
    println!("raw, m = 100: recentre=false warm-up evaluations {cost_never}");
    assert_eq!(cost - cost_never, n as u64);
}

/// The signed variant keeps the paper's rule: with a tiny σ̂² (whitened start) it still
/// re-centres at every window's end (four full passes more than `recentre=false`, with ε, L and
/// the warm-up's m fixed).
#[test]
fn the_signed_variant_re_centres_every_window() {
    let n = 40_000;
    let white = logistic(n, "auto");
    let fixed = ["eps=0.5", "L=3", "m_warmup=200", "lambda=50", "a=0"];
    let (c, s2, cost) = warm_up(build(&white, &fixed, 500, 9, true), 9);
    println!("signed, whitened: window σ̂² {s2:?}, warm-up evaluations {cost}");
    assert!(s2[..4].iter().all(|&v| v < 0.01), "{s2:?}");
    assert!(c.kernel().cv.centre().iter().any(|&z| z != 0.0));
    let never: Vec<&str> = fixed.iter().copied().chain(["recentre=false"]).collect();
    let (_, _, cost_never) = warm_up(build(&white, &never, 500, 9, true), 9);
    println!("signed, recentre=false: warm-up evaluations {cost_never}");
    assert_eq!(cost - cost_never, 4 * n as u64);
}
