"""Fixtures: the release CLI (`make cli`), data it simulates, and runs of `tallmc run`."""

import csv
import json
import math
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
CLI = Path(os.environ.get("TALLMC_CLI", ROOT / "target" / "release" / "tallmc"))


@pytest.fixture(scope="session")
def cli():
    if not CLI.exists():
        pytest.fail(f"{CLI} is missing: `make cli` builds it (make python-test does)")
    return CLI


def simulate(cli, out, model, n, seed, d=None):
    args = [str(cli), "simulate", "--model", model, "--n", str(n), "--seed", str(seed)]
    if d is not None:
        args += ["--d", str(d)]
    subprocess.run(args + ["--out", str(out)], check=True, capture_output=True)
    return out


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory, cli):
    """Simulated data sets, each written once by `tallmc simulate`."""
    d = tmp_path_factory.mktemp("data")
    simulate(cli, d / "logistic.csv", "logistic", 2000, 3, d=3)
    simulate(cli, d / "linear.csv", "linear", 1000, 2, d=4)
    simulate(cli, d / "sv.csv", "sv", 300, 2)
    return d


def run_cli(cli, data, out, *, model, sampler, chains, warmup, draws, seed, response=None,
            sets=(), extra=()):
    """`tallmc run` into `out`; returns `out`."""
    args = [str(cli), "run", "--data", str(data), "--model", model, "--sampler", sampler,
            "--chains", str(chains), "--warmup", str(warmup), "--draws", str(draws),
            "--seed", str(seed), "--out", str(out)]
    if response:
        args += ["--response", response]
    for s in sets:
        args += ["--set", s]
    args += list(extra)
    subprocess.run(args, check=True, capture_output=True)
    return Path(out)


def read_csv(path):
    """{column: float64 array}, each field read by Python's float() (correctly rounded, so the
    CLI's shortest round-trip text gives back the exact double)."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return {h: np.array([float(r[j]) for r in body]) for j, h in enumerate(header)}


def read_summary(path):
    """summary.csv as {param: {column: value}}."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["param"]: {k: float(v) for k, v in r.items() if k != "param"} for r in rows}


def read_run_json(out):
    return json.loads((Path(out) / "run.json").read_text())


def same(a, b):
    """Equal arrays, NaN equal to NaN."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def finite_or_none(x):
    return None if isinstance(x, float) and not math.isfinite(x) else x
