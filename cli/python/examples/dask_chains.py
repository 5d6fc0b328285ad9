"""Many chains, and a grid of samplers, as Dask tasks over the tallmc Python package.

    python cli/python/examples/dask_chains.py data.csv                  # a LocalCluster here
    python cli/python/examples/dask_chains.py data.csv tcp://host:8786  # an existing cluster

Every task is one `tallmc.sample` call: its chains run on the worker's threads with the GIL
released, so a worker with k threads per task and k cores runs k chains at once. The data frame
is scattered once to every worker (each holds a full copy: see DESIGN.md, "Data larger than one
machine's memory", for what is planned beyond that).

- `chains_as_tasks`: chain c of a K-chain run as its own task (`chains=1, first_chain=c`: the
  stream (seed, c)); the joined InferenceData equals one `tallmc.sample(..., chains=K)` call
  draw for draw, whichever worker ran which chain.
- `compare_grid`: each sampler configuration as one task, and a table of cost per effective
  draw (ESS per 1000 gradient evaluations, per second, data fraction per iteration), as the
  playground's Compare samplers section.

cli/python/tests/test_dask_example.py runs both on a LocalCluster of two worker processes.
"""

import json
import sys

import arviz as az
import pandas as pd

import tallmc

# `Client.submit`'s own keywords: a sampler or model setting of the same name could not be
# passed through it.
_SUBMIT_KEYWORDS = {"key", "workers", "resources", "retries", "priority", "fifo_timeout",
                    "allow_other_workers", "actor", "actors", "pure"}


def _submit(client, data, **kwargs):
    clash = _SUBMIT_KEYWORDS & kwargs.keys()
    if clash:
        raise ValueError(f"settings named like Client.submit's keywords: {sorted(clash)}")
    return client.submit(tallmc.sample, data, pure=False, progress=False, **kwargs)


def chains_as_tasks(client, data, *, chains, seed, **kwargs):
    """`chains` chains of one configuration, one Dask task each; joined along `chain`."""
    [remote] = client.scatter([data], broadcast=True)
    futures = [_submit(client, remote, chains=1, first_chain=c, seed=seed, **kwargs)
               for c in range(chains)]
    return az.concat(client.gather(futures), dim="chain")


def compare_grid(client, data, configs, *, chains, seed, **kwargs):
    """Each `(label, sampler, settings)` of `configs` as one task (all chains of a configuration
    on one worker). Returns ({label: InferenceData}, a DataFrame with one row per label)."""
    [remote] = client.scatter([data], broadcast=True)
    futures = {label: _submit(client, remote, sampler=sampler, chains=chains, seed=seed,
                              **kwargs, **settings)
               for label, sampler, settings in configs}
    results = dict(zip(futures, client.gather(list(futures.values()))))
    return results, cost_table(results)


def cost_table(results):
    """Minimum bulk ESS over parameters and what it cost (as run.json's definitions)."""
    rows = []
    for label, idata in results.items():
        a = idata.attrs
        ess = float(az.ess(idata, method="bulk").to_array().min())
        grads = a["grad_evals_sampling"]
        rows.append({
            "config": label,
            "sampler": a["sampler"],
            "min_ess_bulk": ess,
            "max_rhat": float(az.rhat(idata).to_array().max()),
            "ess_per_1000_grad_evals": ess / (grads / 1000) if grads else float("nan"),
            "ess_per_second": ess / a["sampling_time"] if a["sampling_time"] else float("nan"),
            "data_fraction_per_iteration": a["data_fraction_per_iteration"],
            "settings": json.loads(a["settings"]),
        })
    return pd.DataFrame(rows).set_index("config")


def main(path, address=None):
    from dask.distributed import Client, LocalCluster

    df = pd.read_csv(path)
    cluster = None if address else LocalCluster(n_workers=2, threads_per_worker=1)
    with Client(address or cluster) as client:
        run = dict(model="logistic", response="y", warmup=500, draws=500)
        idata = chains_as_tasks(client, df, chains=4, seed=1, sampler="hmc-ecs", **run)
        print(az.summary(idata))
        grid = [("nuts", "nuts", {}), ("hmc-ecs", "hmc-ecs", {}),
                ("sgld-cv", "sgld-cv", {"batch_size": 100})]
        _, table = compare_grid(client, df, grid, chains=2, seed=1, **run)
        print(table.drop(columns="settings").to_string())
    if cluster is not None:
        cluster.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
