//! SGLD on the dax series (`sv`, DESIGN.md's default priors) with the exact score of a grid
//! filter ([`tallmc_tests::grid_score`], 200 nodes on [−6, 6]) in place of `pf-sgld`'s particle
//! gradient: the same move (θ + (h/2)∘∇log π(θ) + √h∘ξ, φ reflected at ±1) with fixed
//! per-coordinate steps h. A diagnostic, not a test: it separates the bias of SGLD's dynamics at
//! a step from the particle score's. Two chains from NumPyro's posterior mean; prints each
//! parameter's mean minus NumPyro's, in its sd, with ESS.
//!
//! ```text
//! cargo run --release -p tallmc-tests --example sv_grid_sgld -- ITERS BURN H_PHI,H_LOGSIGMA,H_LOGTAU [lm]
//! ```
//!
//! With `lm`, the Leimkuhler–Matthews step θ + (h/2)∘∇log π(θ) + √h∘(ξₙ + ξₙ₊₁)/2 (each
//! normal used by two consecutive steps) in place of Euler's √h∘ξₙ: the same cost, and no
//! discretisation error in a Gaussian target's variance.
//!
//! e.g. `... -- 16000 1000 0.006505,0.008846,0.001884` (the steps `pf-sgld`'s warm-up chose on
//! dax at seed 1; BENCHMARKS.md, "pf-sgld's bias on dax").

use tallmc_core::rng::chain_rng;
use tallmc_tests::realdata::{load, model_of};

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: sv_grid_sgld ITERS BURN H_PHI,H_LOGSIGMA,H_LOGTAU [lm]";
    let iters: usize = a.first().and_then(|v| v.parse().ok()).ok_or(usage)?;
    let burn: usize = a.get(1).and_then(|v| v.parse().ok()).ok_or(usage)?;
    let steps: Vec<f64> = a
        .get(2)
        .ok_or(usage)?
        .split(',')
        .map(|v| v.parse().map_err(|_| usage.to_string()))
        .collect::<Result<_, _>>()?;
    if steps.len() != 3 || !steps.iter().all(|h| *h > 0.0 && h.is_finite()) {
        return Err(usage.into());
    }
    let lm = match a.get(3).map(String::as_str) {
        None => false,
        Some("lm") => true,
        Some(_) => return Err(usage.into()),
    };
    let rt = load("dax");
    let model = model_of(&rt, &[]);
    let series = model.as_series().ok_or("dax is not a series")?;
    let (ssm, y) = (series.ssm(), series.y());
    let start: Vec<f64> = {
        let r = &rt.reference;
        vec![r[0].mean, r[1].mean.ln(), r[2].mean.ln()]
    };
    let runs: Vec<Vec<[f64; 3]>> = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..2u64)
            .map(|c| {
                let (steps, start) = (&steps, &start);
                sc.spawn(move || {
                    let mut rng = chain_rng(5, c);
                    let mut th = start.clone();
                    let mut out = Vec::with_capacity(iters);
                    // Leimkuhler–Matthews: the normal of the step before
                    let mut prev: Vec<f64> = if lm {
                        (0..3)
                            .map(|_| tallmc_core::dist::std_normal(&mut rng))
                            .collect()
                    } else {
                        Vec::new()
                    };
                    for it in 0..iters + burn {
                        let mut g = tallmc_tests::grid_score(ssm, &th, y, 200, 6.0);
                        ssm.log_prior_grad(&th, &mut g);
                        for k in 0..3 {
                            let xi = tallmc_core::dist::std_normal(&mut rng);
                            let noise = if lm {
                                let avg = 0.5 * (prev[k] + xi);
                                prev[k] = xi;
                                avg
                            } else {
                                xi
                            };
                            th[k] += 0.5 * steps[k] * g[k] + steps[k].sqrt() * noise;
                        }
                        let mut reversed = [false; 3];
                        ssm.reflect(&mut th, &mut reversed);
                        for (xi, r) in prev.iter_mut().zip(reversed) {
                            if r {
                                *xi = -*xi;
                            }
                        }
                        if it >= burn {
                            out.push([th[0], th[1].exp(), th[2].exp()]);
                        }
                    }
                    out
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("chain"))
            .collect()
    });
    for (j, r) in rt.reference.iter().enumerate() {
        let cols: Vec<Vec<f64>> = runs
            .iter()
            .map(|run| run.iter().map(|t| t[j]).collect())
            .collect();
        let all = cols.concat();
        let refs: Vec<&[f64]> = cols.iter().map(|c| c.as_slice()).collect();
        let per_chain: Vec<String> = cols
            .iter()
            .map(|c| format!("{:+.3}", (tallmc_tests::mean(c) - r.mean) / r.sd))
            .collect();
        println!(
            "{}: {:+.3} sd (sd × {:.2}), ESS {:.0}; per chain {}",
            r.param,
            (tallmc_tests::mean(&all) - r.mean) / r.sd,
            tallmc_tests::sd(&all) / r.sd,
            tallmc_core::diag::ess_bulk(&refs),
            per_chain.join(", ")
        );
    }
    Ok(())
}
