//! PLACEHOLDER until `tallmc_core::diag` lands on main: a minimal summary with the same shape
//! (`Summary`, `summarize`, `summarize_signed`). Plain (not rank-normalised) split R-hat and
//! Geyer initial-positive-sequence ESS. Delete this file and switch `run.rs` to
//! `tallmc_core::diag` after merging main.

/// Posterior summary of one parameter.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub mean: f64,
    pub sd: f64,
    pub q5: f64,
    pub q50: f64,
    pub q95: f64,
    pub mcse_mean: f64,
    pub ess_bulk: f64,
    pub ess_tail: f64,
    pub rhat: f64,
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() as f64 - 1.0)
}

fn quantile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * p;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

fn split(chains: &[&[f64]]) -> Vec<Vec<f64>> {
    let mut out = Vec::new();
    for c in chains {
        let h = c.len() / 2;
        if h >= 2 {
            out.push(c[..h].to_vec());
            out.push(c[c.len() - h..].to_vec());
        }
    }
    out
}

/// Geyer's initial positive sequence ESS over chains (Stan's multi-chain form).
fn ess(chains: &[Vec<f64>]) -> f64 {
    let m = chains.len();
    if m == 0 {
        return f64::NAN;
    }
    let n = chains.iter().map(|c| c.len()).min().unwrap_or(0);
    if n < 4 {
        return f64::NAN;
    }
    let means: Vec<f64> = chains.iter().map(|c| mean(&c[..n])).collect();
    let vars: Vec<f64> = chains.iter().map(|c| var(&c[..n])).collect();
    let w = mean(&vars);
    let b_over_n = if m > 1 { var(&means) } else { 0.0 };
    let var_plus = w * (n as f64 - 1.0) / n as f64 + b_over_n;
    if var_plus <= 0.0 || !var_plus.is_finite() {
        return f64::NAN;
    }
    let acov = |lag: usize| -> f64 {
        let mut s = 0.0;
        for (c, mu) in chains.iter().zip(&means) {
            let mut a = 0.0;
            for t in 0..n - lag {
                a += (c[t] - mu) * (c[t + lag] - mu);
            }
            s += a / n as f64;
        }
        s / m as f64
    };
    let rho = |lag: usize| 1.0 - (w - acov(lag)) / var_plus;
    let mut sum = 0.0;
    let mut lag = 1;
    let mut prev_pair = f64::INFINITY;
    while lag + 1 < n {
        let mut pair = rho(lag) + rho(lag + 1);
        if pair < 0.0 {
            break;
        }
        pair = pair.min(prev_pair);
        prev_pair = pair;
        sum += pair;
        lag += 2;
    }
    let tau = -1.0 + 2.0 * (1.0 + sum);
    let tau = tau.max(1.0 / ((m * n) as f64).log10().max(1.0));
    (m * n) as f64 / tau
}

fn rhat(chains: &[Vec<f64>]) -> f64 {
    let m = chains.len();
    let n = chains.iter().map(|c| c.len()).min().unwrap_or(0);
    if m < 2 || n < 2 {
        return f64::NAN;
    }
    let means: Vec<f64> = chains.iter().map(|c| mean(&c[..n])).collect();
    let w = mean(&chains.iter().map(|c| var(&c[..n])).collect::<Vec<_>>());
    let b = n as f64 * var(&means);
    ((n as f64 - 1.0) / n as f64 + b / (n as f64 * w)).sqrt()
}

/// Summary of one parameter from its chains.
pub fn summarize(chains: &[&[f64]]) -> Summary {
    let all: Vec<f64> = chains.iter().flat_map(|c| c.iter().copied()).collect();
    let mut sorted = all.clone();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let sp = split(chains);
    let ess_bulk = ess(&sp);
    let (q5, q95) = (quantile(&sorted, 0.05), quantile(&sorted, 0.95));
    let tail = |q: f64, upper: bool| -> Vec<Vec<f64>> {
        sp.iter()
            .map(|c| {
                c.iter()
                    .map(|&v| f64::from(u8::from(if upper { v >= q } else { v <= q })))
                    .collect()
            })
            .collect()
    };
    let ess_tail = ess(&tail(q5, false)).min(ess(&tail(q95, true)));
    let sd = if all.len() > 1 {
        var(&all).sqrt()
    } else {
        f64::NAN
    };
    Summary {
        mean: mean(&all),
        sd,
        q5,
        q50: quantile(&sorted, 0.5),
        q95,
        mcse_mean: sd / ess_bulk.sqrt(),
        ess_bulk,
        ess_tail,
        rhat: rhat(&sp),
    }
}

/// Sign-weighted summary: E[θ] ≈ Σ sθ / Σ s; other fields from the unweighted draws.
pub fn summarize_signed(chains: &[&[f64]], signs: &[&[f64]]) -> Summary {
    let mut s = summarize(chains);
    let mut num = 0.0;
    let mut den = 0.0;
    for (c, g) in chains.iter().zip(signs) {
        for (v, w) in c.iter().zip(g.iter()) {
            num += w * v;
            den += w;
        }
    }
    s.mean = num / den;
    s
}
