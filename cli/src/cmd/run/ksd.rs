//! The kernel Stein discrepancy of a run's draws, for run.json.

use super::*;

/// The fewest draws the default rule of [`ksd_draws_rule`] takes when the run itself was
/// cheaper than their scores.
pub(super) const MIN_COST_DRAWS: usize = 10;

/// The bound K on the KSD's draws and how it was chosen: `--ksd-draws` when given, otherwise
/// [`diag::ksd::budget_draws`]`(n, d)`, lowered so that the scores (K·n per-datum gradients)
/// cost no more than the run's own warm-up and sampling (`run_evals` per-datum evaluations, all
/// chains), but not below [`MIN_COST_DRAWS`].
pub(super) fn ksd_draws_rule(
    requested: Option<usize>,
    n: usize,
    d: usize,
    run_evals: u64,
) -> (usize, &'static str) {
    match requested {
        Some(k) => (k, "--ksd-draws"),
        None => {
            let by_cost = usize::try_from(run_evals / (n.max(1) as u64)).unwrap_or(usize::MAX);
            (
                diag::ksd::budget_draws(n, d).min(by_cost.max(MIN_COST_DRAWS)),
                "default: min(1000, max(100, floor(1e9 / (n d))), max(10, floor(run evaluations / n)))",
            )
        }
    }
}

/// The `ksd` block of run.json: the kernel Stein discrepancy (IMQ kernel, c = 1, β = −½) of
/// at most K kept draws ([`ksd_draws_rule`]), thinned evenly within each chain ([`diag::ksd::thin_chains`]),
/// with exact full-data scores computed on up to two threads (`pass_threads`: the threads the
/// model's own passes already split their rows over; the draws are split over the rest);
/// sign-weighted for signed samplers. `null` when `max` is 0; `{"error": …}` when a score or
/// the discrepancy is not finite.
pub(super) fn ksd_json(
    model: &dyn DataModel,
    outputs: &[ChainOutput],
    signed: bool,
    requested: Option<usize>,
    pass_threads: usize,
) -> serde_json::Value {
    use diag::ksd;
    let run_evals: u64 = outputs
        .iter()
        .map(|o| {
            o.warmup.lik_evals.max(o.warmup.grad_evals)
                + o.sampling.lik_evals.max(o.sampling.grad_evals)
        })
        .sum();
    let (max, rule) = ksd_draws_rule(requested, model.n(), model.dim(), run_evals);
    if max == 0 {
        return serde_json::Value::Null;
    }
    let t0 = Instant::now();
    let d = model.dim();
    let lens: Vec<usize> = outputs.iter().map(|o| o.signs.len()).collect();
    let picks = ksd::thin_chains(&lens, max);
    let mut points = Vec::with_capacity(picks.len() * d);
    let mut weights = Vec::with_capacity(picks.len());
    for &(c, i) in &picks {
        let o = &outputs[c];
        let row: Vec<f64> = o.draws.iter().map(|col| col[i]).collect();
        // The KSD is of the chain's own coordinates (where the scores live): reported draws of
        // time-series models are mapped back first.
        if model.reports_transformed() {
            match model.position_of_reported(&row) {
                Some(theta) => points.extend(theta),
                None => {
                    return json!({"error": "a reported draw is outside the support", "max_draws": max})
                }
            }
        } else {
            points.extend(row);
        }
        weights.push(if signed { o.signs[i] } else { 1.0 });
    }
    let k = picks.len();
    // As many threads as the model's passes leave cores for, at most two: with one chain on
    // two cores the passes already run on both, and all draws are scored in one pass (two
    // threads each splitting its pass left one of them alone at the end: KSD 0.20 s against
    // 0.13 s on the peers' table, medians of 5). The scores' bits do not depend on the split.
    let cores = std::thread::available_parallelism().map_or(1, |t| t.get());
    let threads = (cores / pass_threads.max(1)).clamp(1, 2);
    let rows_per = k.div_ceil(threads).max(1);
    let parts: Vec<Result<Vec<f64>, tallmc_core::Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = points
            .chunks(rows_per * d.max(1))
            .map(|chunk| scope.spawn(move || ksd::exact_scores(model, chunk)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(tallmc_core::Error::Numerical("score thread failed".into()))
                })
            })
            .collect()
    });
    let mut scores = Vec::with_capacity(points.len());
    for p in parts {
        match p {
            Ok(s) => scores.extend(s),
            Err(e) => return json!({"error": e.to_string(), "draws": k, "max_draws": max}),
        }
    }
    let score_seconds = t0.elapsed().as_secs_f64();
    let kernel = ksd::Imq::DEFAULT;
    let r = if signed {
        ksd::ksd_weighted(&kernel, &points, &scores, &weights, d)
    } else {
        ksd::ksd(&kernel, &points, &scores, d)
    };
    match r {
        // Draws or scores so large that the kernel sums overflow: no discrepancy to report.
        Ok(r) if !(r.joint.is_finite() && r.thesis.is_finite()) => json!({
            "error": "the KSD is not finite: the draws or their scores overflow (the chains diverged)",
            "draws": r.draws,
            "max_draws": max,
        }),
        Ok(r) => json!({
            "joint": num(r.joint),
            "joint_se": num(r.joint_se),
            "thesis": num(r.thesis),
            "u_statistic": num(r.u_statistic),
            "draws": r.draws,
            "max_draws": max,
            "max_draws_rule": rule,
            "kernel": {"name": "imq", "c": kernel.c(), "beta": kernel.beta()},
            "scores": "exact",
            "sign_weighted": signed,
            "score_grad_evals": (k as u64).saturating_mul(model.n() as u64),
            "score_seconds": score_seconds,
            "seconds": t0.elapsed().as_secs_f64(),
            "definitions": {
                "joint": "sqrt(V), V = sum over pairs of thinned draws of the IMQ Stein kernel k0 (summed over coordinates) / K^2 (Gorham & Mackey 2017)",
                "joint_se": "standard error of joint from the draws' spread (2 sd(h_k)/sqrt(K) for V = mean of h_k = sum over k' of k0 / K, through sqrt; treats the thinned draws as independent; null for signed draws)",
                "thesis": "sum over coordinates j of sqrt(V_j), V_j the V-statistic of the coordinate-j Stein kernel (Putcha 2024, eq. 4.5.1)",
                "u_statistic": "mean of k0 over distinct pairs; estimates E[k0] under the draws' law, 0 for exact draws (Stein identity)",
                "draws": "kept draws used: evenly thinned within each chain to at most max_draws in total",
                "max_draws": "--ksd-draws K if given, else min(1000, max(100, floor(1e9 / (n d))), max(10, floor(run evaluations / n))): the scores cost at most about 5 s of CPU and, from 10 draws up, no more than the run's own warm-up and sampling",
                "score_grad_evals": "per-datum gradient evaluations of the exact scores: draws x n",
                "score_seconds": "wall time of the exact scores (up to two threads); seconds = scores + kernel sums",
                "scores": "exact = full-data gradient of the log posterior at every used draw",
            },
        }),
        Err(e) => json!({"error": e.to_string(), "draws": k, "max_draws": max}),
    }
}
