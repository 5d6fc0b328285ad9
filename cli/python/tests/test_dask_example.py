"""cli/python/examples/dask_chains.py on a local Dask cluster of two worker processes: chains as
tasks give the draws of one multi-chain call, and each configuration of a compare grid gives the
draws of the same call made locally."""

import importlib.util
import sys

import numpy as np
import pandas as pd
import pytest

import tallmc
from conftest import ROOT, read_csv

distributed = pytest.importorskip("distributed")


def load_example():
    path = ROOT / "cli" / "python" / "examples" / "dask_chains.py"
    spec = importlib.util.spec_from_file_location("dask_chains", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["dask_chains"] = module
    spec.loader.exec_module(module)
    return module


def draws_of(idata):
    return np.stack([idata.posterior[v].values for v in idata.posterior.data_vars])


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None)
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def test_chains_and_grid_as_dask_tasks(client, data_dir):
    ex = load_example()
    df = pd.DataFrame(read_csv(data_dir / "logistic.csv"))
    run = dict(model="logistic", response="y", warmup=200, draws=200)

    with distributed.get_task_stream(client) as ts:
        joined = ex.chains_as_tasks(client, df, chains=4, seed=3, sampler="hmc-ecs", **run)
    ran = [t for t in ts.data if t["key"].startswith("sample-")]
    assert len(ran) == 4, [t["key"] for t in ts.data]
    assert {t["worker"] for t in ran} <= set(client.scheduler_info()["workers"])
    local = tallmc.sample(df, chains=4, seed=3, sampler="hmc-ecs", progress=False, **run)
    assert list(joined.posterior["chain"].values) == [0, 1, 2, 3]
    assert np.array_equal(draws_of(joined), draws_of(local))
    assert np.array_equal(joined.sample_stats["acceptance_rate"].values,
                          local.sample_stats["acceptance_rate"].values)

    grid = [("nuts", "nuts", {}), ("hmc-ecs m=100", "hmc-ecs", {"m": 100}),
            ("sgld-cv", "sgld-cv", {"batch_size": 100})]
    results, table = ex.compare_grid(client, df, grid, chains=2, seed=5, **run)
    assert list(table.index) == [g[0] for g in grid]
    for label, sampler, settings in grid:
        here = tallmc.sample(df, sampler=sampler, chains=2, seed=5, progress=False, **run,
                             **settings)
        assert np.array_equal(draws_of(results[label]), draws_of(here)), label
    assert (table["min_ess_bulk"] > 0).all()
    assert (table["ess_per_1000_grad_evals"] > 0).all()
    # The subsampling samplers touch a fraction of the data per iteration; NUTS several passes.
    assert table.loc["nuts", "data_fraction_per_iteration"] > 1
    assert table.loc["hmc-ecs m=100", "data_fraction_per_iteration"] < 1
    assert table.loc["sgld-cv", "data_fraction_per_iteration"] < 1


def test_setting_names_that_clash_with_submit_are_refused(client):
    ex = load_example()
    with pytest.raises(ValueError, match="priority"):
        ex.chains_as_tasks(client, {"x": np.zeros(3)}, chains=1, seed=1, model="gmm",
                           sampler="sgld", priority=1)
