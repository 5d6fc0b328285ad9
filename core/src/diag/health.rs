//! Warnings a user can act on, from a finished run: chains that disagree (R-hat > 1.01), too
//! few effective draws (bulk or tail ESS < 100), divergent transitions and stuck chains. The
//! CLI prints them on stderr and records them in `run.json`; the playground shows the same
//! lines (both call [`warnings`]).
//!
//! Thresholds are those of Vehtari et al. (2021): R-hat below 1.01 and an ESS of at least 100
//! (about 25 per chain for four chains) before trusting the estimates. A chain is *stuck* when
//! it moved in fewer than 1% of its kept draws (a random-walk or minibatch MH kernel whose
//! proposal is far too wide, or a sampler trapped in a region of zero acceptance).

use super::Summary;
use crate::math;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// R-hat above this: the chains disagree.
pub const RHAT_MAX: f64 = 1.01;
/// Bulk or tail ESS below this: too few effective draws.
pub const ESS_MIN: f64 = 100.0;
/// A chain that moved in fewer than this fraction of its draws (or never) is stuck.
pub const MOVED_MIN: f64 = 0.01;
/// At most this many parameters are named in one warning line.
const NAMED: usize = 3;

/// What a chain did, beyond its draws.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChainHealth {
    /// Kept draws.
    pub draws: usize,
    /// Kept draws whose transition diverged (non-finite or exploding energy).
    pub divergent: usize,
    /// Kept draws that differ from the draw before them (the first draw counts as moved).
    pub moved: usize,
}

impl ChainHealth {
    /// Count the moves of a chain from its draws, given as one column per parameter, and its
    /// divergent flags.
    pub fn from_columns(columns: &[&[f64]], divergent: usize) -> Self {
        let draws = columns.first().map_or(0, |c| c.len());
        let moved = (0..draws)
            .filter(|&k| k == 0 || columns.iter().any(|c| c[k] != c[k - 1]))
            .count();
        ChainHealth {
            draws,
            divergent,
            moved,
        }
    }
}

/// The warnings for a run: `names[j]` is the name of the parameter summarised in
/// `summaries[j]`; `chains` describes each chain. Each warning is one line naming the worst
/// parameters (or chains) with a suggestion; none for a healthy run.
pub fn warnings(names: &[String], summaries: &[Summary], chains: &[ChainHealth]) -> Vec<String> {
    let mut out = Vec::new();
    let worst = |pick: &dyn Fn(&Summary) -> Option<f64>, descending: bool| {
        let mut bad: Vec<(usize, f64)> = summaries
            .iter()
            .enumerate()
            .filter_map(|(j, s)| pick(s).map(|v| (j, v)))
            .collect();
        bad.sort_by(|a, b| {
            if descending {
                b.1.total_cmp(&a.1)
            } else {
                a.1.total_cmp(&b.1)
            }
        });
        bad
    };
    let list = |bad: &[(usize, f64)], digits: usize| {
        let mut s = String::new();
        for (k, (j, v)) in bad.iter().take(NAMED).enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            let name = names.get(*j).map_or("?", |n| n.as_str());
            s.push_str(&format!("{} {v:.digits$}", crate::error::shorten(name)));
        }
        if bad.len() > NAMED {
            s.push_str(", …");
        }
        s
    };
    let p = summaries.len();

    if chains.len() >= 2 {
        let bad = worst(&|s| (s.rhat > RHAT_MAX).then_some(s.rhat), true);
        if !bad.is_empty() {
            out.push(format!(
                "R-hat > {RHAT_MAX} for {} of {p} parameters ({}): the chains disagree, so they \
                 have not converged; run longer (more --warmup and --draws) and check whether \
                 the posterior has several modes",
                bad.len(),
                list(&bad, 3)
            ));
        }
    }
    let bad = worst(
        &|s| {
            let e = s.ess_bulk.min(s.ess_tail);
            (e.is_finite() && e < ESS_MIN).then_some(e)
        },
        false,
    );
    if !bad.is_empty() {
        out.push(format!(
            "effective sample size < {ESS_MIN:.0} for {} of {p} parameters ({}): means and \
             quantiles are unreliable; run more --draws, or use a sampler that mixes faster \
             (nuts, hmc-ecs)",
            bad.len(),
            list(&bad, 0)
        ));
    }
    let nan: Vec<String> = summaries
        .iter()
        .zip(names)
        .filter(|(s, _)| s.mean.is_nan())
        .map(|(_, n)| crate::error::shorten(n))
        .collect();
    if !nan.is_empty() {
        let more = if nan.len() > NAMED { ", …" } else { "" };
        out.push(format!(
            "no finite summary for {}{more} (a draw is NaN): the sampler failed numerically",
            nan[..nan.len().min(NAMED)].join(", ")
        ));
    }
    // Finite but overflowing or infinite draws: the chain ran away.
    let runaway: Vec<String> = summaries
        .iter()
        .zip(names)
        .filter(|(s, _)| !(s.mean.is_nan() || (s.mean.is_finite() && s.sd.is_finite())))
        .map(|(s, n)| {
            let size = math::abs(s.q5).max(math::abs(s.q95));
            format!(
                "{} (|draw| ≈ {})",
                crate::error::shorten(n),
                crate::settings::number(size)
            )
        })
        .collect();
    if !runaway.is_empty() {
        let more = if runaway.len() > NAMED { ", …" } else { "" };
        out.push(format!(
            "the draws of {}{more} diverged (their spread is not finite): the sampler ran \
             away and its draws say nothing about the posterior; set a smaller step \
             (--set step_size=…) or use a sampler with an accept step (nuts, hmc)",
            runaway[..runaway.len().min(NAMED)].join(", ")
        ));
    }
    let total: usize = chains.iter().map(|c| c.draws).sum();
    let divergent: usize = chains.iter().map(|c| c.divergent).sum();
    if divergent > 0 && total > 0 {
        out.push(format!(
            "{divergent} of {total} kept draws were divergent ({:.1}%): the step size is too \
             large for the posterior's curvature somewhere, and draws there may be missing; \
             run a longer --warmup or set a smaller step (--set step_size=…)",
            100.0 * divergent as f64 / total as f64
        ));
    }
    for (c, h) in chains.iter().enumerate() {
        // `moved` counts the first draw, so a chain that never moved has moved = 1.
        if h.draws >= 10 && (h.moved <= 1 || (h.moved as f64) < MOVED_MIN * h.draws as f64) {
            out.push(format!(
                "chain {c} is stuck: it moved in {} of {} kept draws; its proposals are \
                 (almost) always rejected, so its draws say nothing about the posterior; try \
                 another --seed, a longer --warmup or a smaller proposal scale",
                h.moved, h.draws
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;
    use alloc::vec;

    fn summary(rhat: f64, ess: f64) -> Summary {
        Summary {
            mean: 0.0,
            sd: 1.0,
            q5: -1.6,
            q50: 0.0,
            q95: 1.6,
            mcse_mean: 0.01,
            ess_bulk: ess,
            ess_tail: ess,
            rhat,
        }
    }

    fn healthy(n: usize) -> ChainHealth {
        ChainHealth {
            draws: n,
            divergent: 0,
            moved: n,
        }
    }

    /// However many or however long the parameter names, every warning stays one short line:
    /// at most three names, each cut to 40 characters.
    #[test]
    fn warning_lines_stay_short() {
        let p = 1000;
        let names: Vec<String> = (0..p)
            .map(|j| alloc::format!("{}{j}", "x".repeat(200)))
            .collect();
        let mut bad: Vec<Summary> = (0..p).map(|_| summary(1.5, 10.0)).collect();
        bad[0].mean = f64::NAN;
        bad[1].mean = f64::NAN;
        bad[2].mean = f64::NAN;
        bad[3].mean = f64::NAN;
        bad[4].sd = f64::INFINITY;
        let chains = [healthy(100), healthy(100)];
        let w = warnings(&names, &bad, &chains);
        assert!(w.len() >= 3, "{w:?}");
        for line in &w {
            assert!(
                line.chars().count() <= 400,
                "{} chars: {line}",
                line.chars().count()
            );
            assert!(
                !line.contains(&"x".repeat(41)),
                "a long name not cut: {line}"
            );
        }
    }

    #[test]
    fn a_healthy_run_has_no_warnings() {
        let names = vec!["a".to_string(), "b".to_string()];
        let s = [summary(1.001, 900.0), summary(1.005, 1200.0)];
        assert!(warnings(&names, &s, &[healthy(500), healthy(500)]).is_empty());
    }

    #[test]
    fn each_problem_is_named_with_its_worst_parameters() {
        let names: Vec<String> = ["a", "b", "c", "d", "e"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let s = [
            summary(1.2, 40.0),
            summary(1.02, 150.0),
            summary(1.001, 90.0),
            summary(1.5, 20.0),
            summary(1.03, 400.0),
        ];
        let stuck = ChainHealth {
            draws: 1000,
            divergent: 3,
            moved: 4,
        };
        let w = warnings(&names, &s, &[healthy(1000), stuck]);
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(
            w[0].starts_with("R-hat > 1.01 for 4 of 5 parameters (d 1.500, a 1.200, e 1.030, …)"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains("for 3 of 5 parameters (d 20, a 40, c 90)"),
            "{}",
            w[1]
        );
        assert!(
            w[2].starts_with("3 of 2000 kept draws were divergent (0.1%)"),
            "{}",
            w[2]
        );
        assert!(
            w[3].starts_with("chain 1 is stuck: it moved in 4 of 1000"),
            "{}",
            w[3]
        );
    }

    /// A chain that never moved in 100 draws (moved = 1: the first draw) is stuck, and a
    /// summary with an infinite sd names the parameter as diverged.
    #[test]
    fn never_moved_and_runaway_chains_are_named() {
        let names = vec!["a".to_string()];
        let x = [0.5; 100];
        let h = ChainHealth::from_columns(&[&x], 0);
        let w = warnings(&names, &[summary(f64::NAN, f64::NAN)], &[h]);
        assert!(w
            .iter()
            .any(|l| l.starts_with("chain 0 is stuck: it moved in 1 of 100")));
        let mut s = summary(f64::NAN, f64::NAN);
        (s.mean, s.sd, s.q5, s.q95) = (3e289, f64::INFINITY, -1e290, 2e289);
        let w = warnings(&names, &[s], &[healthy(100)]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("the draws of a (|draw| ≈ 1e290) diverged"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn one_chain_has_no_rhat_warning_and_moves_are_counted() {
        let names = vec!["a".to_string()];
        let s = [summary(f64::NAN, 800.0)];
        let x = [0.0, 0.0, 1.0, 1.0, 2.0];
        let y = [5.0, 5.0, 5.0, 6.0, 6.0];
        let h = ChainHealth::from_columns(&[&x, &y], 0);
        assert_eq!((h.draws, h.moved), (5, 4));
        assert!(warnings(&names, &s, &[h]).is_empty());
    }
}
