"""Same seed, same draws: `tallmc.sample` against `tallmc run` on the same data.

Each case runs the release CLI and the Python package with the same data, model, sampler,
settings and seed, then checks: every draw and every per-draw statistic bit for bit; the
Rust-side summary equal to summary.csv; `arviz.summary` equal to summary.csv up to summation
order (relative 1e-9: both compute the same estimators, rank-normalised split R-hat and ESS
included; measured differences are about 1e-15); the cost totals and resolved settings equal to
run.json's.
"""

import json

import arviz as az
import numpy as np
import pandas as pd
import pytest

import tallmc
from conftest import finite_or_none, read_csv, read_run_json, read_summary, run_cli, same

# (id, data file, model, response, sampler, chains, warmup, draws, seed, settings, python design
# options, matching CLI options)
CASES = [
    ("logistic-hmc-ecs", "logistic.csv", "logistic", "y", "hmc-ecs", 2, 300, 300, 7, {}, {}, []),
    ("logistic-nuts", "logistic.csv", "logistic", "y", "nuts", 2, 200, 200, 11,
     {"target_accept": 0.9, "prior_scale": 5}, {}, []),
    ("logistic-hmc-ecs-signed", "logistic.csv", "logistic", "y", "hmc-ecs-signed", 2, 200, 200, 5,
     {}, {}, []),
    ("linear-sgld-design", "linear.csv", "linear", "y", "sgld", 3, 200, 200, 3,
     {"batch_size": 50},
     {"features": ["x1", "x3"], "standardize": True, "intercept": False},
     ["--features", "x1,x3", "--standardize", "--no-intercept"]),
    ("sv-pmmh", "sv.csv", "sv", None, "pmmh", 2, 100, 100, 5, {}, {}, []),
]


def cli_setting(k, v):
    return f"{k}={v}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_same_draws_as_cli(case, cli, data_dir, tmp_path):
    (_, data, model, response, sampler, chains, warmup, draws, seed, settings, design,
     cli_extra) = case
    out = run_cli(cli, data_dir / data, tmp_path / "out", model=model, sampler=sampler,
                  chains=chains, warmup=warmup, draws=draws, seed=seed, response=response,
                  sets=[cli_setting(k, v) for k, v in settings.items()], extra=cli_extra)
    df = pd.DataFrame(read_csv(data_dir / data))
    idata = tallmc.sample(df, model=model, response=response, sampler=sampler, chains=chains,
                          warmup=warmup, draws=draws, seed=seed, progress=False, **design,
                          **settings)

    # Draws, bit for bit, in draws.csv's order (chain, then draw).
    cli_draws = read_csv(out / "draws.csv")
    params = [c for c in cli_draws if c not in ("chain", "draw", "sign")]
    assert list(idata.posterior.data_vars) == params
    for p in params:
        py = idata.posterior[p].values
        assert py.shape == (chains, draws)
        assert np.array_equal(py.ravel(), cli_draws[p]), p
    signed = "sign" in cli_draws
    if signed:
        assert np.array_equal(idata.sample_stats["sign"].values.ravel(), cli_draws["sign"])

    # stats.csv, column by column.
    stats = read_csv(out / "stats.csv")
    names = {"accept_prob": "acceptance_rate", "divergent": "diverging", "n_leapfrog": "n_steps"}
    for col, v in stats.items():
        if col in ("chain", "draw"):
            continue
        py = idata.sample_stats[names.get(col, col)].values.ravel().astype(float)
        assert same(py, v), col
    assert idata.sample_stats["diverging"].dtype == bool
    if sampler == "nuts":
        assert "tree_depth" in idata.sample_stats

    # The summary the Rust side computed is summary.csv's (same function, same draws).
    cli_summary = read_summary(out / "summary.csv")
    run = json.loads(idata.attrs["tallmc_run"])
    for row in run["summary"]:
        expect = cli_summary[row["param"]]
        for k, v in expect.items():
            got = row[k] if row[k] is not None else float("nan")
            assert same(got, v), (row["param"], k)

    # arviz.summary of the InferenceData (unweighted draws: not for signed samplers).
    if not signed:
        s = az.summary(idata, round_to="none")
        for p in params:
            for ours, theirs in [("mean", "mean"), ("sd", "sd"), ("mcse_mean", "mcse_mean"),
                                 ("ess_bulk", "ess_bulk"), ("ess_tail", "ess_tail"),
                                 ("r_hat", "rhat")]:
                a, b = s.loc[p, ours], cli_summary[p][theirs]
                assert abs(a - b) <= 1e-9 * abs(b), (p, ours, a, b)

    # Costs and settings as run.json.
    rj = read_run_json(out)
    for what in ("lik_evals", "grad_evals"):
        for phase in ("setup", "warmup", "sampling", "total"):
            assert idata.attrs[f"{what}_{phase}"] == rj[what][phase], (what, phase)
    for phase in ("setup", "warmup", "sampling", "total"):
        assert idata.attrs[f"full_data_passes_{phase}"] == rj["full_data_passes"][phase]
    assert idata.attrs["divergences"] == rj["divergences"]
    assert finite_or_none(idata.attrs["mean_accept_prob"]) == rj["mean_accept_prob"]
    assert finite_or_none(idata.attrs["data_fraction_per_iteration"]) == \
        rj["data_fraction_per_iteration"]
    assert json.loads(idata.attrs["model_settings"]) == rj["config"]["model_settings"]
    assert json.loads(idata.attrs["sampler_settings"]) == rj["config"]["sampler_settings"]
    assert bool(idata.attrs["exact"]) == rj["sampler"]["exact"]
    assert run["reparam"]["kind"] == rj["reparam"]["kind"]
    for ours, theirs in zip(run["chain_details"], rj["chain_details"]):
        assert ours["resolved"] == theirs["resolved"]
        assert ours["lik_evals"]["sampling"] == theirs["lik_evals"]["sampling"]
        assert ours["grad_evals"]["warmup"] == theirs["grad_evals"]["warmup"]
        assert ours["divergences"] == theirs["divergences"]
