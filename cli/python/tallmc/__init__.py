"""tallmc: MCMC for tall data, from Python.

    import pandas as pd, arviz as az, tallmc
    df = pd.read_csv("data.csv")
    idata = tallmc.sample(df, model="logistic", response="y", sampler="hmc-ecs", seed=1)
    az.summary(idata)

The samplers are tallmc's Rust core (the same code as the ``tallmc`` command line and the
browser playground): the same seed gives the same draws as ``tallmc run`` on the same data.
Chains run on threads with the GIL released; Ctrl-C stops them between two iterations and
raises ``KeyboardInterrupt``.
"""

from __future__ import annotations

import json
import math
import numbers
import sys

import numpy as np

from . import _tallmc

__all__ = ["sample", "samplers", "models", "__version__"]

__version__ = _tallmc.version()

# stats.csv's names → ArviZ's (the others keep theirs; `divergent` becomes bool `diverging`).
_STAT_RENAMES = {
    "accept_prob": "acceptance_rate",
    "n_leapfrog": "n_steps",
}


def samplers():
    """Every sampler: a list of dicts with ``name``, ``description``, ``exact``, ``signed``,
    ``models`` (the models it supports; empty for every data model) and ``params``, one dict per
    setting with ``key``, ``description``, ``type`` (real, int, choice, bool), ``default``
    (``"auto"`` when the sampler chooses), ``range`` (as validated, e.g. ``(0, inf)``) and, by
    type, ``min``/``max``/``min_open``/``max_open`` or ``choices``."""
    return _tallmc.samplers()


def models():
    """Every model: a list of dicts with ``name``, ``description``, ``regression`` (reads a
    response and feature columns) and ``params`` (as in :func:`samplers`)."""
    return _tallmc.models()


def _f64(values, name):
    """A 1-D C-contiguous aligned float64 array: the input itself when it already is one (no
    copy)."""
    a = np.asarray(values)
    if a.dtype == object:
        raise TypeError(f'column "{name}": values of type object (missing values or text?)')
    if a.ndim != 1:
        raise ValueError(f'column "{name}": expected one dimension, got {a.ndim}')
    # Arrays unpickled from out-of-band buffers (Dask, multiprocessing) can be unaligned; the
    # buffer protocol's f64 view needs 8-byte alignment, so those (only those) are copied.
    return np.require(a, dtype=np.float64, requirements=["C_CONTIGUOUS", "ALIGNED"])


def _pandas_column(series, name):
    if series.dtype == np.float64:
        return _f64(series.to_numpy(), name)  # a view: no copy
    if getattr(series.dtype, "kind", None) in ("b", "i", "u", "f"):
        return _f64(series.to_numpy(dtype=np.float64), name)
    # Nullable and extension types: missing values become NaN, which the core refuses by row.
    try:
        return _f64(series.to_numpy(dtype=np.float64, na_value=np.nan), name)
    except (TypeError, ValueError) as e:
        raise TypeError(f'column "{name}": not numeric ({series.dtype})') from e


def _columns(data, columns=None):
    """(names, float64 arrays) from a pandas or polars DataFrame, a dict of 1-D arrays, a 2-D
    NumPy array (column names ``columns`` or ``x1, x2, …``), an ``(X, y)`` pair (columns
    ``x1, …, xd`` and ``y``) or a 1-D array (one column ``x``: gmm and the time-series
    models)."""
    module = type(data).__module__ or ""
    if module.startswith("pandas") and hasattr(data, "iloc"):
        names = [str(c) for c in data.columns]
        return names, [_pandas_column(data.iloc[:, j], names[j]) for j in range(len(names))]
    if module.startswith("polars") and hasattr(data, "get_columns"):
        names = list(data.columns)
        # Series.to_numpy() is zero-copy for a float64 column without nulls.
        return names, [_f64(s.to_numpy(), n) for s, n in zip(data.get_columns(), names)]
    if isinstance(data, dict):
        names = [str(k) for k in data]
        return names, [_f64(v, n) for v, n in zip(data.values(), names)]
    if isinstance(data, tuple) and len(data) == 2:
        x, y = np.asarray(data[0]), data[1]
        if x.ndim == 1:
            x = x[:, None]
        names = list(columns) if columns is not None else [f"x{j + 1}" for j in range(x.shape[1])]
        cols = [_f64(x[:, j], names[j]) for j in range(x.shape[1])]
        return names + ["y"], cols + [_f64(y, "y")]
    a = np.asarray(data)
    if a.ndim == 1:
        return [str(columns[0]) if columns else "x"], [_f64(a, "x")]
    if a.ndim == 2:
        names = list(columns) if columns is not None else [f"x{j + 1}" for j in range(a.shape[1])]
        if len(names) != a.shape[1]:
            raise ValueError(f"{len(names)} column names for {a.shape[1]} columns")
        # Each column of a Fortran-ordered (column-major) float64 array is read in place.
        return names, [_f64(a[:, j], names[j]) for j in range(a.shape[1])]
    raise TypeError(
        "data: expected a pandas or polars DataFrame, a dict of 1-D arrays, a 2-D array, "
        f"an (X, y) pair or a 1-D array, got {type(data).__name__}"
    )


def _setting_text(key, value):
    if isinstance(value, bool) or isinstance(value, np.bool_):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return "auto"
        return repr(v)  # the shortest text that reads back as the same double
    if isinstance(value, str):
        return value
    raise TypeError(f"setting {key}: expected a number, a bool or a string, got {type(value).__name__}")


class _Progress:
    """A progress callback: tqdm (tqdm.auto: a widget in notebooks) when importable, else one
    line on stderr rewritten in place."""

    def __init__(self, total, desc):
        self.bar = None
        self.total = total
        self.desc = desc
        self.last = -1
        try:
            from tqdm.auto import tqdm

            self.bar = tqdm(total=total, desc=desc, unit="it", unit_scale=True, leave=False)
        except ImportError:
            pass

    def __call__(self, done, total):
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            return
        pct = int(100 * done / max(total, 1))
        if pct != self.last:
            self.last = pct
            sys.stderr.write(f"\r{self.desc}: {done}/{total} iterations ({pct}%)")
            sys.stderr.flush()

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif self.last >= 0:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


def _interactive():
    if "ipykernel" in sys.modules:
        return True
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def sample(
    data,
    *,
    model,
    response=None,
    sampler="nuts",
    chains=4,
    warmup=1000,
    draws=1000,
    seed=1,
    first_chain=0,
    features=None,
    intercept=True,
    standardize=False,
    columns=None,
    progress=None,
    **settings,
):
    """Sample a posterior with tallmc and return an ``arviz.InferenceData``.

    data: a pandas or polars DataFrame, a dict of 1-D arrays, a 2-D NumPy array (names from
        ``columns``, else ``x1, x2, …``), an ``(X, y)`` pair, or a 1-D array (one column).
        float64 columns are read in place (no Python-side copy); others are converted.
    model, sampler: names from :func:`models` and :func:`samplers`.
    response: the response column (regression models).
    chains, warmup, draws, seed: as ``tallmc run`` (chain c uses the random stream (seed, c);
        each chain runs on its own thread).
    first_chain: chain c of this call uses the stream (seed, first_chain + c) and is labelled
        chain first_chain + c: ``chains=1, first_chain=k`` gives chain k of a ``chains=K`` run,
        so chains can run as separate tasks (cli/python/examples/dask_chains.py) and be joined with
        ``arviz.concat(..., dim="chain")``.
    features: feature columns (default: every column but the response). intercept, standardize:
        as the command line's ``--no-intercept`` and ``--standardize``.
    progress: True for a progress bar (tqdm when installed, in notebooks too), False for none, a
        callable ``f(done, total)``, or None (the default): a bar when stderr is a terminal or
        in a notebook.
    **settings: model and sampler settings as ``--set key=value`` (``step_size=0.05``,
        ``m=200``, ``prior_scale=5``); see :func:`samplers` and :func:`models`.

    The result has groups ``posterior`` (one variable per parameter, dims chain and draw) and
    ``sample_stats`` (``acceptance_rate``, ``diverging``, ``energy``, ``step_size``,
    ``n_steps``, ``tree_depth`` for NUTS, ``lik_evals`` and ``grad_evals`` per draw, the
    sampler's extras such as HMC-ECS's ``sigma2`` and ``data_fraction``, and ``sign`` for signed
    samplers); the attributes hold the resolved settings and the cost totals (``tallmc_run``:
    the whole record, as JSON, like the command line's run.json).
    """
    counts = {"chains": chains, "warmup": warmup, "draws": draws, "seed": seed,
              "first_chain": first_chain}
    for key, v in counts.items():
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0:
            raise ValueError(f"{key}: expected a whole number >= 0, got {v!r}")
    names, cols = _columns(data, columns)
    pairs = [(str(k), _setting_text(k, v)) for k, v in settings.items() if v is not None]
    if features is not None:
        features = [str(f) for f in features]
    bar = None
    callback = None
    if callable(progress):
        callback = progress
    elif progress or (progress is None and _interactive()):
        bar = _Progress(int(chains) * (int(warmup) + int(draws)), f"tallmc {sampler}")
        callback = bar
    try:
        result = _tallmc.sample(
            names,
            cols,
            model,
            sampler,
            response=response,
            features=features,
            intercept=bool(intercept),
            standardize=bool(standardize),
            chains=int(chains),
            warmup=int(warmup),
            draws=int(draws),
            seed=int(seed),
            first_chain=int(first_chain),
            settings=pairs,
            progress=callback,
        )
    finally:
        if bar is not None:
            bar.close()
    config = {
        "model": model,
        "response": response,
        "features": features,
        "intercept": bool(intercept),
        "standardize": bool(standardize),
        "sampler": sampler,
    }
    return _inference_data(result, config)


def _frombuffer(b, shape):
    return np.frombuffer(b, dtype=np.float64).reshape(shape)


def _inference_data(r, config):
    import arviz as az  # imported here: `import tallmc` stays light

    c, n, d = r["chains"], r["draws"], r["d"]
    coords = {"chain": np.arange(r["first_chain"], r["first_chain"] + c)}
    draws = _frombuffer(r["draws_f64"], (c, n, d))
    posterior = {name: draws[:, :, j] for j, name in enumerate(r["params"])}

    stats = {}
    for name, b in r["stats_f64"].items():
        v = _frombuffer(b, (c, n))
        if name == "divergent":
            stats["diverging"] = v != 0
        elif name in ("lik_evals", "grad_evals", "n_leapfrog", "tree_depth"):
            stats[_STAT_RENAMES.get(name, name)] = v.astype(np.int64)
        else:
            key = _STAT_RENAMES.get(name, name)
            stats[key if key not in stats else f"tallmc_{key}"] = v
    if r["signed"]:
        stats["sign"] = _frombuffer(r["signs_f64"], (c, n))

    run = {k: v for k, v in r.items() if not k.endswith("_f64")}
    run["config"] = dict(config, chains=c, warmup=r["warmup"], draws=n, seed=r["seed"],
                         settings=r["settings"], model_settings=r["model_settings"],
                         sampler_settings=r["sampler_settings"])
    attrs = {
        "inference_library": "tallmc",
        "inference_library_version": r["tallmc_version"],
        "tallmc_version": r["tallmc_version"],
        "model": config["model"],
        "sampler": config["sampler"],
        "response": config["response"] or "",
        "seed": r["seed"],
        "first_chain": r["first_chain"],
        "chains": c,
        "warmup": r["warmup"],
        "draws": n,
        "n": r["n"],
        "d": d,
        "exact": int(r["exact"]),
        "signed": int(r["signed"]),
        # netCDF attributes are flat: the nested records as JSON text.
        "settings": json.dumps(r["settings"]),
        "model_settings": json.dumps(r["model_settings"]),
        "sampler_settings": json.dumps(r["sampler_settings"]),
        "divergences": r["divergences"],
        "mean_accept_prob": r["mean_accept_prob"],
        "data_fraction_per_iteration": r["data_fraction_per_iteration"],
        "sampling_time": r["wall_time_seconds"]["chains"],
        "tallmc_run": json.dumps(_finite(run)),
    }
    for what in ("lik_evals", "grad_evals", "full_data_passes"):
        for phase, v in r[what].items():
            attrs[f"{what}_{phase}"] = v
    # On the InferenceData itself and on both groups (a group saved or passed on alone keeps them).
    return az.from_dict(
        posterior=posterior,
        sample_stats=stats,
        attrs=dict(attrs),
        coords=coords,
        posterior_attrs=dict(attrs),
        sample_stats_attrs=dict(attrs),
    )


def _finite(x):
    """JSON has no NaN or infinity: null, as in run.json."""
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_finite(v) for v in x]
    return x
