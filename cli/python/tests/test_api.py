"""The Python API: the registry listings, the data formats (and that float64 columns are not
copied on the Python side), settings and errors, progress, the GIL."""

import subprocess
import sys
import threading
import time

import numpy as np
import pandas as pd
import pytest

import tallmc
from conftest import read_csv

RUN = dict(model="logistic", response="y", sampler="nuts", chains=2, warmup=100, draws=100,
           seed=4, progress=False)


@pytest.fixture(scope="module")
def logistic(data_dir):
    return pd.DataFrame(read_csv(data_dir / "logistic.csv"))


def draws_of(idata):
    return np.stack([idata.posterior[v].values for v in idata.posterior.data_vars])


def test_registry_matches_the_cli_listing(cli):
    """Every sampler and model of `tallmc samplers` / `tallmc models`, each setting with the
    CLI's range text and description."""
    for listing, entries in [("samplers", tallmc.samplers()), ("models", tallmc.models())]:
        text = subprocess.run([str(cli), listing], check=True, capture_output=True,
                              text=True).stdout
        names = [line.split()[0] for line in text.splitlines() if line and not line[0].isspace()]
        assert [e["name"] for e in entries] == names
        blocks = dict(zip(names, text.split("\n\n")))
        for e in entries:
            block = blocks[e["name"]]
            assert e["description"] in block
            for p in e["params"]:
                line = next(ln for ln in block.splitlines()
                            if ln.strip().startswith(f"--set {p['key']}=…"))
                assert p["range"] in line, (e["name"], p["key"], p["range"], line)
                shown = line.rsplit("default ", 1)[1].strip()
                default = p["default"]
                if isinstance(default, bool):
                    assert shown == str(default).lower(), line
                elif isinstance(default, (int, float)):
                    assert float(shown) == default, line
                else:
                    assert shown == default, line
                assert p["description"] in block
    ecs = next(s for s in tallmc.samplers() if s["name"] == "hmc-ecs")
    assert not ecs["signed"]
    m = next(p for p in ecs["params"] if p["key"] == "m")
    assert m["type"] == "int" and m["default"] == "auto"
    logistic = next(m for m in tallmc.models() if m["name"] == "logistic")
    assert logistic["regression"]
    assert {p["key"] for p in logistic["params"]} >= {"prior_scale"}


def unaligned(a):
    raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
    b = raw[1:].view(np.float64)
    b[:] = a
    assert not b.flags["ALIGNED"]
    return b


def test_data_formats_give_the_same_draws(logistic):
    ref = draws_of(tallmc.sample(logistic, **RUN))
    x = logistic[["x1", "x2"]].to_numpy()
    y = logistic["y"].to_numpy()
    pl = pytest.importorskip("polars")
    for data, extra in [
        ({k: logistic[k].to_numpy() for k in logistic.columns}, {}),
        ((x, y), {}),
        (np.asfortranarray(logistic.to_numpy()), {"columns": list(logistic.columns)}),
        (np.ascontiguousarray(logistic.to_numpy()), {"columns": list(logistic.columns)}),
        (pl.DataFrame({k: logistic[k].to_numpy() for k in logistic.columns}), {}),
        # Unaligned memory (as unpickled from out-of-band buffers) is copied to aligned.
        ({k: unaligned(logistic[k].to_numpy()) for k in logistic.columns}, {}),
        # An integer response is converted.
        (logistic.assign(y=logistic["y"].astype(np.int64)), {}),
    ]:
        assert np.array_equal(draws_of(tallmc.sample(data, **extra, **RUN)), ref), type(data)


def test_float64_columns_are_not_copied_in_python(logistic):
    names, cols = tallmc._columns(logistic)
    for name, col in zip(names, cols):
        assert np.shares_memory(col, logistic[name].to_numpy())
    f = np.asfortranarray(logistic.to_numpy())
    _, cols = tallmc._columns(f, list(logistic.columns))
    assert all(np.shares_memory(c, f) for c in cols)
    pl = pytest.importorskip("polars")
    pdf = pl.DataFrame({k: logistic[k].to_numpy() for k in logistic.columns})
    _, cols = tallmc._columns(pdf)
    for c, s in zip(cols, pdf.get_columns()):
        assert np.shares_memory(c, s.to_numpy())


def test_settings_reach_the_sampler(logistic):
    idata = tallmc.sample(logistic, **dict(RUN, sampler="hmc"), step_size=0.05, L=7, jitter=0.0)
    assert np.all(idata.sample_stats["step_size"].values == 0.05)
    assert np.all(idata.sample_stats["n_steps"].values == 7)
    assert idata.attrs["settings"] == '{"L": "7", "jitter": "0.0", "step_size": "0.05"}'


@pytest.mark.parametrize("kwargs, error, text", [
    (dict(sampler="no-such"), ValueError, "unknown sampler `no-such` (available: rwmh"),
    (dict(model="no-such"), ValueError, "unknown model `no-such`"),
    (dict(colour=3), ValueError, "unknown setting `colour` for model `logistic` and sampler `nuts`"),
    (dict(step_size=-1.0), ValueError, "setting step_size=-1.0"),
    (dict(metric="sparse"), ValueError, "setting metric=sparse"),
    (dict(response="z"), ValueError, 'no column "z" for response'),
    (dict(response=None), ValueError, "response=COLUMN is required for model `logistic`"),
    (dict(sampler="pmmh"), ValueError, "pmmh"),
    (dict(chains=0), ValueError, "chains: 0 is outside [1, 1024]"),
    (dict(draws=0), ValueError, "draws: must be at least 1"),
    (dict(features=["x1", "x1"]), ValueError, 'features: "x1" is listed twice'),
    (dict(step_size=[1]), TypeError, "setting step_size"),
    (dict(warmup=-1), ValueError, "warmup: expected a whole number >= 0, got -1"),
    (dict(seed=1.5), ValueError, "seed: expected a whole number >= 0, got 1.5"),
])
def test_errors_name_the_input(logistic, kwargs, error, text):
    with pytest.raises(error) as e:
        tallmc.sample(logistic, **dict(RUN, **kwargs))
    assert text in str(e.value)


def test_bad_values_are_named_by_row_and_column(logistic):
    bad = logistic.copy()
    bad.loc[5, "x2"] = np.nan
    with pytest.raises(ValueError, match='row 5, column "x2": value is not finite'):
        tallmc.sample(bad, **RUN)
    with pytest.raises(TypeError, match='column "x1": not numeric'):
        tallmc.sample(logistic.assign(x1="a"), **RUN)


def test_progress_callback_and_bar(logistic, capsys):
    seen = []
    tallmc.sample(logistic, **dict(RUN, progress=lambda done, total: seen.append((done, total))))
    assert seen and all(t == 2 * (100 + 100) for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert seen[-1][0] == 400
    tallmc.sample(logistic, **dict(RUN, progress=True))
    assert "tallmc nuts" in capsys.readouterr().err


def test_progress_without_tqdm_is_a_stderr_line(logistic, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)  # `from tqdm.auto import …` fails
    tallmc.sample(logistic, **dict(RUN, progress=True))
    assert "tallmc nuts: 400/400 iterations (100%)" in capsys.readouterr().err


def test_netcdf_round_trip_keeps_the_attributes(logistic, tmp_path):
    import arviz as az

    idata = tallmc.sample(logistic, **RUN)
    idata.to_netcdf(tmp_path / "run.nc")
    back = az.from_netcdf(tmp_path / "run.nc")
    assert back.posterior.attrs["sampler"] == "nuts"
    assert back.attrs["grad_evals_total"] == idata.attrs["grad_evals_total"]
    assert np.array_equal(draws_of(back), draws_of(idata))


def test_an_exception_in_the_callback_stops_the_chains(logistic):
    def boom(done, total):
        raise RuntimeError("stop here")

    with pytest.raises(RuntimeError, match="stop here"):
        tallmc.sample(logistic, **dict(RUN, draws=10**7, progress=boom))
    # The module is usable afterwards.
    assert tallmc.sample(logistic, **RUN).posterior.sizes["draw"] == 100


def test_the_gil_is_released_while_chains_run(logistic):
    """A Python thread that sleeps 1 ms between steps (it needs the GIL to wake up) makes
    progress while the chains run: the progress callback, called by the calling thread between
    its 100 ms waits, reads its step count. Were the GIL held during those waits, the thread
    could only run during the callbacks themselves (microseconds each, shorter than the 5 ms
    switch interval) and would count a handful of steps by the third callback, not hundreds."""
    steps = [0]
    stop = threading.Event()

    def sleeper():
        while not stop.is_set() and steps[0] < 10_000:
            time.sleep(0.001)
            steps[0] += 1

    t = threading.Thread(target=sleeper)
    t.start()
    seen = []
    try:
        tallmc.sample(logistic, **dict(RUN, draws=3000, chains=1,
                                       progress=lambda d, tot: seen.append(steps[0])))
    finally:
        stop.set()
        t.join()
    assert len(seen) >= 3, "the run was too short to tell"
    assert seen[2] >= 20, seen


# sgld, sgld-cv and smh-1: chains 1 and 2 of one call reuse chain 0's mode search (and
# control-variate centre) or SMH kernel (the same draws as chains built alone, each computing
# its own).
@pytest.mark.parametrize("sampler", ["nuts", "sgld", "sgld-cv", "smh-1"])
def test_chains_split_over_calls_with_first_chain(logistic, sampler):
    import arviz as az

    run = dict(RUN, sampler=sampler)
    ref = tallmc.sample(logistic, **dict(run, chains=3))
    parts = [tallmc.sample(logistic, **dict(run, chains=1), first_chain=c) for c in range(3)]
    joined = az.concat(parts, dim="chain")
    assert list(joined.posterior["chain"].values) == [0, 1, 2]
    assert np.array_equal(draws_of(joined), draws_of(ref))


# A long stochastic-gradient run moves its design onto huge pages after the first chain's set-up
# (64 passes' worth of rows or more; a 4.8 MB design holds a whole 2 MB page wherever it lies),
# a short one does not, TALLMC_HUGE_PAGES=0 never does: `huge_pages_move_seconds` in the run's
# record, as in run.json. The draws are the same.
def test_long_sg_runs_move_their_design_onto_huge_pages(monkeypatch):
    import json

    rng = np.random.default_rng(3)
    n = 200_000
    x = rng.standard_normal((n, 2))
    y = (rng.random(n) < 1 / (1 + np.exp(-(0.5 + x @ [1.0, -0.5])))).astype(np.float64)
    df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y})
    run = dict(model="logistic", response="y", sampler="sgld", chains=1, warmup=0, seed=1,
               batch_size=n)

    def moved(draws):
        idata = tallmc.sample(df, **run, draws=draws)
        return json.loads(idata.attrs["tallmc_run"])["huge_pages_move_seconds"], idata

    monkeypatch.delenv("TALLMC_HUGE_PAGES", raising=False)
    short, _ = moved(40)
    assert short is None
    long, idata = moved(64)
    if sys.platform.startswith("linux"):
        assert long is not None and long >= 0
    monkeypatch.setenv("TALLMC_HUGE_PAGES", "0")
    off, idata_off = moved(64)
    assert off is None
    assert np.array_equal(draws_of(idata), draws_of(idata_off))
