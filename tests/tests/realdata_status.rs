//! Status report (not a test): every sampler that applies to a table × every real table, with
//! defaults, 2 chains, against the NumPyro reference. Prints one markdown row per run: max
//! |posterior mean − reference mean| in reference sds, max R-hat, min bulk ESS, data fraction
//! per iteration, wall seconds.
//!
//! `cargo test -p tallmc-tests --release --test all realdata_status:: -- --ignored --nocapture`
//! Environment: `REALDATA_TABLES=flights,hmda` and `REALDATA_SAMPLERS=nuts,sgld` restrict the
//! grid; `REALDATA_SET="reparam=none"` adds settings to every run (e.g. the unwhitened target).

use tallmc_tests::realdata::{assess, load, runs_on, TABLES};

/// (sampler, warm-up, draws): the lengths a user would try (the issue's, for the slow movers).
const SAMPLERS: [(&str, usize, usize); 22] = [
    ("rwmh", 2000, 10_000),
    ("mala", 1000, 4000),
    ("hmc", 1000, 1000),
    ("nuts", 1000, 1000),
    ("hmc-ecs", 1000, 2000),
    ("hmc-ecs-signed", 1000, 2000),
    ("qnhmc", 1000, 4000),
    ("mh-minibatch", 2000, 20_000),
    ("austere-mh", 2000, 20_000),
    ("mh-sublhd", 2000, 60_000),
    ("smh-1", 2000, 200_000),
    ("smh-2", 2000, 20_000),
    ("sgld", 2000, 20_000),
    ("sgld-cv", 2000, 20_000),
    ("sghmc", 2000, 20_000),
    ("sgnht", 2000, 20_000),
    ("sgld-ps", 2000, 20_000),
    ("sgld-cv-ps", 2000, 20_000),
    ("asgld-cv-ps", 2000, 20_000),
    ("dpp-sgld", 1000, 5000),
    ("pf-sgld", 2000, 40_000),
    ("pmmh", 1000, 3000),
];

#[test]
#[ignore]
fn status() {
    let pick = |var: &str| -> Option<Vec<String>> {
        std::env::var(var)
            .ok()
            .map(|v| v.split(',').map(str::to_string).collect())
    };
    let tables = pick("REALDATA_TABLES");
    let samplers = pick("REALDATA_SAMPLERS");
    let extra = std::env::var("REALDATA_SET").unwrap_or_default();
    let extra: Vec<&str> = extra.split_whitespace().collect();
    println!("| table | sampler | max abs Δmean/sd | max R-hat | min ESS | data/iter | s |");
    println!("|---|---|---|---|---|---|---|");
    for (name, _, _) in TABLES {
        if tables
            .as_ref()
            .is_some_and(|t| !t.iter().any(|x| x == name))
        {
            continue;
        }
        let rt = load(name);
        for (sampler, warmup, draws) in SAMPLERS {
            if samplers
                .as_ref()
                .is_some_and(|s| !s.iter().any(|x| x == sampler))
            {
                continue;
            }
            if draws == 0 || !runs_on(sampler, rt.model) {
                continue;
            }
            match assess(&rt, sampler, &extra, 2, warmup, draws, 1) {
                Ok(a) => println!(
                    "| {name} | {sampler} | {:.3} | {:.3} | {:.0} | {:.2e} | {:.1} |",
                    a.max_dev_sd, a.max_rhat, a.min_ess, a.data_fraction, a.seconds
                ),
                Err(e) => println!("| {name} | {sampler} | error: {e} | | | | |"),
            }
        }
    }
}
