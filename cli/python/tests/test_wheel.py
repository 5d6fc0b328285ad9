"""The built wheel in a fresh venv: `pip install` of target/wheels/tallmc-*.whl (its runtime
dependencies from the package index, through pip's cache) and pandas, then the README's
notebook-style script (cli/python/examples/quickstart.py) fits a logistic regression with hmc-ecs;
its `arviz.summary` must equal the CLI's summary.csv for the same data and seed."""

import csv
import os
import subprocess
import venv
from pathlib import Path

import pytest

from conftest import ROOT, read_summary, run_cli

WHEELS = Path(os.environ.get("TALLMC_WHEELS", ROOT / "target" / "wheels"))


def test_fresh_venv_quickstart_matches_the_cli(cli, data_dir, tmp_path):
    wheels = sorted(WHEELS.glob("tallmc-*.whl"), key=lambda p: p.stat().st_mtime)
    if not wheels:
        pytest.fail(f"no wheel in {WHEELS}: `make python` builds it")
    env_dir = tmp_path / "venv"
    # A fresh venv: no system site-packages, nothing but pip.
    venv.create(env_dir, with_pip=True, clear=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(wheels[-1]), "pandas"],
                   check=True, capture_output=True, text=True)
    where = subprocess.run([str(py), "-c", "import tallmc; print(tallmc.__file__)"],
                           check=True, capture_output=True, text=True, cwd=tmp_path).stdout
    assert where.startswith(str(env_dir)), where

    data = data_dir / "logistic.csv"
    out = tmp_path / "summary-python.csv"
    subprocess.run([str(py), str(ROOT / "cli" / "python" / "examples" / "quickstart.py"), str(data),
                    str(out)], check=True, capture_output=True, text=True, cwd=tmp_path)
    cli_out = run_cli(cli, data, tmp_path / "cli", model="logistic", sampler="hmc-ecs",
                      chains=4, warmup=1000, draws=1000, seed=1, response="y")
    expect = read_summary(cli_out / "summary.csv")
    with open(out, newline="") as f:
        rows = {r[""]: r for r in csv.DictReader(f)}
    assert sorted(rows) == sorted(expect)
    for p, e in expect.items():
        for ours, theirs in [("mean", "mean"), ("sd", "sd"), ("mcse_mean", "mcse_mean"),
                             ("ess_bulk", "ess_bulk"), ("ess_tail", "ess_tail"),
                             ("r_hat", "rhat")]:
            a, b = float(rows[p][ours]), e[theirs]
            # Same draws; the two summaries differ only in summation order (about 1e-15).
            assert abs(a - b) <= 1e-9 * abs(b), (p, ours, a, b)
