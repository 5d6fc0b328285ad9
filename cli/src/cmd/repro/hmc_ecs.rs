//! `tallmc repro hmc-ecs`.

use super::*;

/// One sampler's run in the `hmc-ecs` experiment.
struct Row {
    label: &'static str,
    sampler: &'static str,
    settings: Vec<String>,
    /// Kept draws, `draws[k][j]`.
    draws: Vec<Vec<f64>>,
    signs: Vec<f64>,
    accept: f64,
    /// Mean u-acceptance (HMC-ECS), NaN otherwise.
    u_accept: f64,
    /// Mean subsample size / n per kept iteration (HMC-ECS), NaN otherwise.
    subsample_fraction: f64,
    /// Sampling-phase full-data passes per kept iteration, max(lik, grad) evaluations / n.
    passes_per_iter: f64,
    /// Density + gradient evaluations counted for CT: the whole run (setup, warm-up, sampling)
    /// for HMC-ECS and the full-data samplers, the post-burn-in iterations only for the
    /// stochastic-gradient competitors (spec 000 §4.1).
    evals_total: u64,
    seconds: f64,
    resolved: Vec<(&'static str, f64)>,
    /// IF per parameter (raw draws).
    ifs: Vec<f64>,
    tau: f64,
}

impl Row {
    fn if_mean(&self) -> f64 {
        self.ifs.iter().sum::<f64>() / self.ifs.len().max(1) as f64
    }
    /// 1/(2τ̂ − 1)² for signed samplers, 1 otherwise.
    fn sign_factor(&self) -> f64 {
        if self.tau.is_nan() {
            1.0
        } else {
            let s = 2.0 * self.tau - 1.0;
            1.0 / (s * s)
        }
    }
    /// CT of parameter j per kept draw: IF_j/(2τ̂−1)² × evaluations / R. The paper's CT
    /// (IF × evaluations) compares runs of equal length R; here the full-data and
    /// stochastic-gradient runs have other lengths, so CT is taken per kept draw (evaluations
    /// per effective draw), which leaves RCT unchanged when the lengths agree.
    fn ct(&self, j: usize) -> f64 {
        self.ifs[j] * self.sign_factor() * self.evals_total as f64 / self.draws.len().max(1) as f64
    }
    fn ct_mean(&self) -> f64 {
        self.if_mean() * self.sign_factor() * self.evals_total as f64
            / self.draws.len().max(1) as f64
    }
    fn ess(&self) -> f64 {
        self.draws.len() as f64 / self.if_mean()
    }
}

#[allow(clippy::too_many_arguments)]
fn run_sampler(
    model: &Arc<dyn DataModel>,
    label: &'static str,
    sampler: &'static str,
    kv: Vec<String>,
    warmup: usize,
    draws: usize,
    seed: u64,
    post_burn_in_cost_only: bool,
) -> Result<Row, CliError> {
    let n = model.n();
    let mut rng = chain_rng(seed, 0);
    let t0 = Instant::now();
    let mut chain = super::build_chain(model, sampler, &kv, warmup, &mut rng)?;
    let extra = chain.extra_names();
    let iu = extra.iter().position(|e| *e == "u_accept");
    let idf = extra.iter().position(|e| *e == "data_fraction");
    let signed = chain.signed();
    let mut out = Vec::with_capacity(draws);
    let mut signs = Vec::with_capacity(draws);
    let (mut acc, mut ua, mut df) = (0.0, 0.0, 0.0);
    let (samp, warm) = run_chain(chain.as_mut(), &mut rng, draws, |ph, _, th, info| {
        if ph == Phase::Sampling {
            out.push(th.to_vec());
            signs.push(info.sign);
            acc += info.accept_prob;
            if let Some(i) = iu {
                ua += info.extra.get(i).copied().unwrap_or(f64::NAN);
            }
            if let Some(i) = idf {
                df += info.extra.get(i).copied().unwrap_or(f64::NAN);
            }
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    let setup = chain.setup_cost();
    let evals_total = if post_burn_in_cost_only {
        samp.lik_evals + samp.grad_evals
    } else {
        setup.lik_evals
            + setup.grad_evals
            + warm.lik_evals
            + warm.grad_evals
            + samp.lik_evals
            + samp.grad_evals
    };
    let k = out.len().max(1) as f64;
    let d = model.dim();
    let ifs = (0..d)
        .map(|j| {
            let col: Vec<f64> = out.iter().map(|t| t[j]).collect();
            diag::inefficiency_factor(&[&col])
        })
        .collect();
    let tau = if signed {
        signs.iter().filter(|&&s| s >= 0.0).count() as f64 / k
    } else {
        f64::NAN
    };
    Ok(Row {
        label,
        sampler,
        settings: kv,
        accept: acc / k,
        u_accept: if iu.is_some() { ua / k } else { f64::NAN },
        subsample_fraction: if idf.is_some() { df / k } else { f64::NAN },
        passes_per_iter: samp.full_passes(n) / k,
        evals_total,
        seconds,
        resolved: chain.resolved(),
        ifs,
        tau,
        draws: out,
        signs,
    })
}

pub(crate) fn run(a: &ReproArgs, out: &Path) -> Result<(), CliError> {
    let d = 29;
    let n = a.n.unwrap_or(if a.quick { 100_000 } else { 1_000_000 });
    let draws_ecs = a.draws.unwrap_or(if a.quick { 1000 } else { 2000 });
    let warm_ecs = draws_ecs / 2;
    // Full-data runs are n times dearer per iteration: fewer draws (IF is per draw, so the
    // comparison stays fair; only its Monte Carlo error grows).
    let draws_full = a.draws.unwrap_or(if a.quick { 500 } else { 1000 });
    let warm_full = draws_full / 2;
    let seed = 2019;
    let t0 = Instant::now();
    eprintln!(
        "simulating HIGGS-like logistic data: n = {n}, d = {d} (intercept + 28 N(0,1) covariates)"
    );
    let table = tallmc_core::simulate::simulate("logistic", n, d, seed, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))?;
    let spec = DesignSpec {
        response: "y".into(),
        features: None,
        intercept: true,
        standardize: false,
    };
    let model = registry::build_model("logistic", &table, &spec, &Settings::new())
        .map_err(|e| CliError::internal(e.to_string()))?;
    drop(table);

    let mut rows = Vec::new();
    eprintln!("perturbed HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws");
    rows.push(run_sampler(
        &model,
        "HMC-ECS (perturbed)",
        "hmc-ecs",
        vec![],
        warm_ecs,
        draws_ecs,
        seed,
        false,
    )?);
    // The paper runs full HMC with the trajectory of HMC-ECS (same L).
    let l = super::resolved_count(&rows[0].resolved, "L", 6);
    eprintln!("signed HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws");
    rows.push(run_sampler(
        &model,
        "HMC-ECS (signed)",
        "hmc-ecs-signed",
        vec![],
        warm_ecs,
        draws_ecs,
        seed,
        false,
    )?);
    eprintln!("full-data HMC (L = {l}, dense metric): {warm_full} warm-up + {draws_full} draws");
    rows.push(run_sampler(
        &model,
        "HMC (full data)",
        "hmc",
        vec![format!("L={l}"), "metric=dense".into(), "init=zero".into()],
        warm_full,
        draws_full,
        seed,
        false,
    )?);
    eprintln!("full-data NUTS (dense metric): {warm_full} warm-up + {draws_full} draws");
    rows.push(run_sampler(
        &model,
        "NUTS (full data)",
        "nuts",
        vec!["metric=dense".into(), "init=zero".into()],
        warm_full,
        draws_full,
        seed,
        false,
    )?);

    // The paper's competitors (spec 000 §2.8, §5): SG-HMC and SGLD with control-variate gradients
    // at the mode, HMC-ECS's mini-batch size m, and as many gradient steps after burn-in as
    // HMC-ECS takes leapfrog steps (R = L × draws, after R/2 burn-in steps); step sizes automatic (the paper's were found
    // by trial and error); cost counts post-burn-in iterations only.
    let m_ecs = super::resolved_count(&rows[0].resolved, "m", 1300);
    let ecs_l = super::resolved_count(&rows[0].resolved, "L", 6);
    let r_sg = ecs_l * draws_ecs;
    for (label, sampler, cv) in [
        ("SG-HMC (CV)", "sghmc", Some("control_variate=true")),
        ("SGLD (CV)", "sgld-cv", None),
    ] {
        eprintln!(
            "{label}: batch {m_ecs}, {} burn-in + {r_sg} steps",
            r_sg / 2
        );
        let mut kv: Vec<String> = cv.into_iter().map(String::from).collect();
        kv.push(format!("batch_size={m_ecs}"));
        rows.push(run_sampler(
            &model,
            label,
            sampler,
            kv,
            r_sg / 2,
            r_sg,
            seed,
            true,
        )?);
    }

    // Accuracy against full-data NUTS: max |Δmean|/sd over parameters (sign-weighted for signed).
    let reference = &rows[3];
    let ref_mean: Vec<f64> = (0..d)
        .map(|j| reference.draws.iter().map(|t| t[j]).sum::<f64>() / reference.draws.len() as f64)
        .collect();
    let ref_sd: Vec<f64> = (0..d)
        .map(|j| {
            let m = ref_mean[j];
            let v = reference
                .draws
                .iter()
                .map(|t| (t[j] - m).powi(2))
                .sum::<f64>()
                / (reference.draws.len().max(2) - 1) as f64;
            v.sqrt()
        })
        .collect();
    let dmean = |r: &Row| {
        let w: Vec<f64> = if r.tau.is_nan() {
            vec![1.0; r.draws.len()]
        } else {
            r.signs.clone()
        };
        let sw: f64 = w.iter().sum();
        (0..d)
            .map(|j| {
                let m = r.draws.iter().zip(&w).map(|(t, w)| t[j] * w).sum::<f64>() / sw;
                (m - ref_mean[j]).abs() / ref_sd[j]
            })
            .fold(0.0, f64::max)
    };

    // Table 2-like: per-sampler statistics.
    let mut csv = String::from(
        "sampler,settings,draws,accept,u_accept,L,eps,m_or_lambda,IF_mean,ESS,tau_hat,subsample_fraction_pct,full_passes_per_iter,evals_total,seconds,ess_per_second,CT,CT_over_perturbed,max_abs_dmean_over_sd_vs_nuts\n",
    );
    let ct0 = rows[0].ct_mean();
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# tallmc repro hmc-ecs{}\n\nHIGGS-like synthetic logistic regression, n = {n}, d = {d}, seed {seed}; one chain per sampler.\n\
         HMC-ECS: {warm_ecs} warm-up + {draws_ecs} draws; full-data HMC/NUTS: {warm_full} warm-up + {draws_full} draws.\n\
         Evaluations = per-datum density + gradient evaluations of the whole run (setup, warm-up, sampling);\n\
         CT = IF × evaluations (signed: IF/(2τ̂−1)² × evaluations); IF from raw draws (`diag::inefficiency_factor`).\n",
        if a.quick { " --quick" } else { "" }
    );
    md.push_str("| sampler | accept α_θ | α_u | L | ε | m (perturbed) / λ (signed) | IF (mean) | ESS | τ̂ | 100·(subsample/n) | full-data passes / iter | evaluations | seconds | ESS/s | CT | CT / CT_perturbed | max abs Δmean/sd vs NUTS |\n");
    md.push_str("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for r in &rows {
        let get = |k: &str| {
            r.resolved
                .iter()
                .find(|(n, _)| *n == k)
                .map(|&(_, v)| v)
                .unwrap_or(f64::NAN)
        };
        let m_or_l = if r.sampler == "hmc-ecs-signed" {
            get("lambda")
        } else {
            get("m")
        };
        let l = if r.sampler == "nuts" {
            f64::NAN
        } else if r.sampler == "hmc" {
            l as f64
        } else {
            get("L")
        };
        let ess = r.ess();
        let cells = [
            fmt(r.accept),
            fmt(r.u_accept),
            fmt(l),
            fmt(get("eps")),
            fmt(m_or_l),
            fmt(r.if_mean()),
            fmt(ess),
            fmt(r.tau),
            fmt(100.0 * r.subsample_fraction),
            fmt(r.passes_per_iter),
            format!("{}", r.evals_total),
            fmt(r.seconds),
            fmt(ess / r.seconds),
            fmt(r.ct_mean()),
            fmt(r.ct_mean() / ct0),
            fmt(dmean(r)),
        ];
        let _ = writeln!(md, "| {} | {} |", r.label, cells.join(" | "));
        let _ = writeln!(
            csv,
            "{},\"{}\",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.sampler,
            r.settings.join(" "),
            r.draws.len(),
            r.accept,
            r.u_accept,
            l,
            get("eps"),
            m_or_l,
            r.if_mean(),
            ess,
            r.tau,
            100.0 * r.subsample_fraction,
            r.passes_per_iter,
            r.evals_total,
            r.seconds,
            ess / r.seconds,
            r.ct_mean(),
            r.ct_mean() / ct0,
            dmean(r)
        );
    }

    // Table 1-like: RCT = CT_A/CT_perturbed per parameter, min / median / max.
    let rct: Vec<[f64; 3]> = rows[1..]
        .iter()
        .map(|r| {
            let mut v: Vec<f64> = (0..d).map(|j| r.ct(j) / rows[0].ct(j)).collect();
            let med = median(&mut v);
            [v[0], med, v[v.len() - 1]]
        })
        .collect();
    md.push_str("\nRelative cost RCT = CT_A / CT_perturbed-HMC-ECS over the 29 parameters (> 1: perturbed HMC-ECS is cheaper), as in the paper's Table 1.\n\n");
    md.push_str("| RCT | Signed HMC-ECS | HMC (full data) | NUTS (full data) | SG-HMC | SGLD |\n|---|---|---|---|---|---|\n");
    let mut rct_csv = String::from("stat,signed_hmc_ecs,hmc_full,nuts_full,sghmc,sgld\n");
    for (i, stat) in ["min", "median", "max"].iter().enumerate() {
        let _ = writeln!(
            md,
            "| {stat} | {} | {} | {} | {} | {} |",
            fmt(rct[0][i]),
            fmt(rct[1][i]),
            fmt(rct[2][i]),
            fmt(rct[3][i]),
            fmt(rct[4][i])
        );
        let _ = writeln!(
            rct_csv,
            "{stat},{},{},{},{},{}",
            rct[0][i], rct[1][i], rct[2][i], rct[3][i], rct[4][i]
        );
    }
    let _ = writeln!(
        md,
        "\nSG-HMC and SGLD: control-variate gradients at the mode, batch = HMC-ECS's m, R = L × draws \
         gradient steps after R/2 burn-in steps, automatic step sizes; their CT counts post-burn-in \
         evaluations only and ignores their bias (see the last column of the first table).\n\
         Paper (HIGGS, n = 10.5M, m = 1,300): RCT signed 0.8 / 1.15 / 1.95, SG-HMC 2.43 / 2.97 / 4.08, SGLD 3.58 / 12.46 / 326.80;\n\
         IF 2.185 (perturbed), 2.192 (signed), 2.084 (full HMC); α_θ 0.980 / 0.979 / 0.980; L = 6; τ̂ = 1;\n\
         100·(m/n) = 0.012 (perturbed), 0.029 (signed); full HMC is 642.8× (perturbed) and 554.1× (signed) more expensive in CT.\n\
         Total time {:.1} s.",
        t0.elapsed().as_secs_f64()
    );
    write(&out.join("hmc_ecs_table.md"), &md)?;
    write(&out.join("hmc_ecs_samplers.csv"), &csv)?;
    write(&out.join("hmc_ecs_rct.csv"), &rct_csv)?;
    crate::cmd::list::emit(&md)
}
