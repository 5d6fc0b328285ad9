"""tallmc against its JAX peers on one data file (issue 21): NumPyro HMCECS and BlackJAX SGLD.

    python run.py --data target/peers/logistic_1e6.csv --tallmc target/release/tallmc \
        [--out target/peers]

`make bench-peers` runs this in the venv target/peers-venv (bench/peers/requirements.txt) after
building the CLI and writing the data file (gen_data.py). Never part of `make test`. The model on
both sides: logistic regression, intercept + every x column, N(0, 10²) prior on each of the 30
coefficients (tallmc's default prior). One chain everywhere. See README.md for what each number
means; every number below is printed with its definition.

JAX runs in its default precision (float32; tallmc computes in float64) and may use both cores, as
tallmc's run may (a single chain splits its full-data passes over the free core).
"""

import argparse
import datetime
import filecmp
import json
import os
import platform
import re
import subprocess
import sys
import time

import numpy as np

HMCECS_WARMUP = 500
HMCECS_DRAWS = 2000
HMCECS_M = 1300
HMCECS_BLOCKS = 100  # tallmc's default G
SGLD_BATCH = 1300
SGLD_ITERS = 20000
PRIOR_SCALE = 10.0
SEED = 1


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def machine():
    model, cores = platform.processor() or "?", os.cpu_count()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kb = int(f.readline().split()[1])
        mem = f", {kb / 1e6:.0f} GB RAM"
    except (OSError, ValueError, IndexError):
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return f"{model}, {cores} cores{mem}, {platform.system()} {platform.release()}", load


def min_bulk_ess(draws, method="bulk"):
    """Smallest bulk ESS over parameters of one chain's draws (draws × params), by ArviZ 0.23.4:
    the definition of tallmc's run.json min_ess_bulk (core/src/diag reproduces az.ess to rounding).
    method="tail": the tail ESS (run.json min_ess_tail)."""
    import arviz as az

    ds = az.convert_to_dataset({"x": np.asarray(draws, dtype=np.float64)[None, :, :]})
    return float(np.min(az.ess(ds, method=method)["x"].values))


# ---------------------------------------------------------------------------------------------
# tallmc


def run_tallmc(exe, data, out, sampler, warmup, draws, sets, env=None):
    cmd = [exe, "run", "--data", data, "--model", "logistic", "--response", "y",
           "--sampler", sampler, "--chains", "1", "--warmup", str(warmup), "--draws", str(draws),
           "--seed", str(SEED), "--out", out]
    for s in sets:
        cmd += ["--set", s]
    log("$ " + "".join(f"{k}={v} " for k, v in (env or {}).items()) + " ".join(cmd))
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL,
                   env={**os.environ, **env} if env else None)
    process = time.perf_counter() - t
    with open(os.path.join(out, "run.json")) as f:
        rj = json.load(f)
    w = rj["wall_time_seconds"]
    ch = rj["chain_details"][0]
    ksd = (rj.get("ksd") or {}).get("seconds", 0.0) or 0.0
    build = (rj.get("reparam") or {}).get("model_build_seconds", 0.0) or 0.0
    r = {
        "cmd": " ".join(cmd[1:]),
        "process": process,  # the process as the harness sees it (start to exit)
        "total": w["total"],  # run.json: from start to run.json (parse, model, chains, outputs, KSD)
        "chains": w["chains"],  # run.json: the chains' threads (set-up after chain 0, warm-up, sampling)
        "sampling": w["sampling_max_over_chains"],
        "warmup": ch["warmup_seconds"],
        "setup0": ch["setup_seconds"],  # chain 0 is built (mode search, step size) before `chains`
        "data_load": w.get("data_load", 0.0),  # run.json: reading and parsing the data file
        "ksd": ksd,
        "model_build": build,
        "min_ess": rj["min_ess_bulk"],
        "min_ess_tail": rj["min_ess_tail"],
        "draws": draws,
        "resolved": ch.get("resolved", {}),
        "accept": rj.get("mean_accept_prob"),
    }
    # Not in run.json as such: CSV parse, writing draws.csv/summary.csv and the rest.
    r["parse_and_rest"] = r["total"] - r["chains"] - r["ksd"] - r["model_build"] - r["setup0"]
    # Same ESS definition checked on tallmc's own draws (draws.csv) with ArviZ.
    import pandas as pd

    d = pd.read_csv(os.path.join(out, "draws.csv")).drop(columns=["chain", "draw"]).to_numpy()
    r["min_ess_arviz"] = min_bulk_ess(d)
    return r


def read_ceiling(exe):
    """The host's ceiling for SGLD's iterations: `tallmc bench --gather` draws 1 000 batches of
    1 300 rows of a 10^6 × 30 design (the SGLD workload's shape) and reads their bytes alone,
    one value per cache line, on one core and then on both at once. No arithmetic: no SGLD
    can run faster than it reads its batches. Returns µs per batch on one core and on two."""
    cmd = [exe, "bench", "--gather"]
    log("$ " + " ".join(cmd))
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    m = re.search(r"reading 1000 batches' bytes from memory: ([0-9.]+) µs per batch on one core, "
                  r"([0-9.]+) µs on two", out)
    shape = re.search(r"logistic n = (\d+), d = (\d+), batch (\d+)", out)
    if not m or not shape:
        raise SystemExit(f"run.py: cannot read `tallmc bench --gather`'s output:\n{out}")
    if (int(shape[1]), int(shape[2]), int(shape[3])) != (1_000_000, 30, SGLD_BATCH):
        raise SystemExit(f"run.py: `tallmc bench --gather` measured another shape: {shape[0]}")
    return float(m[1]), float(m[2])


# ---------------------------------------------------------------------------------------------
# NumPyro HMCECS


def warm_cache(path):
    """Read PATH once, so that the timed runs read it from the page cache."""
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def npz_copy(csv_path):
    """CSV_PATH.npz: the CSV's columns as float64 arrays under their header names (numpy.savez,
    uncompressed), written once and reused while newer than the CSV."""
    import pandas as pd

    out = csv_path + ".npz"
    if os.path.exists(out) and os.path.getmtime(out) >= os.path.getmtime(csv_path):
        return out
    t = time.perf_counter()
    df = pd.read_csv(csv_path, dtype=np.float64, engine="c")
    tmp = out + ".tmp.npz"
    np.savez(tmp, **{c: df[c].to_numpy() for c in df.columns})
    os.replace(tmp, out)
    log(f"wrote {out} ({os.path.getsize(out) / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
    return out


def load_xy(path):
    import pandas as pd

    df = pd.read_csv(path, dtype=np.float64, engine="c")
    y = df.pop("y").to_numpy()
    x = df.to_numpy()
    return np.column_stack([np.ones(len(y)), x]), y, ["intercept"] + list(df.columns)


def map_newton(X, y, iters=12):
    """Posterior mode (N(0, 10²) prior) by Newton's method on all rows: the Taylor reference of
    NumPyro's control variate (NumPyro's example finds it by SVI with AutoDelta; Newton is exact
    and cheaper here)."""
    import jax
    import jax.numpy as jnp

    @jax.jit
    def step(theta):
        eta = X @ theta
        p = jax.nn.sigmoid(eta)
        g = X.T @ (y - p) - theta / PRIOR_SCALE**2
        H = (X * (p * (1 - p))[:, None]).T @ X + jnp.eye(X.shape[1]) / PRIOR_SCALE**2
        return theta + jnp.linalg.solve(H, g), jnp.max(jnp.abs(g))

    theta = jnp.zeros(X.shape[1], X.dtype)
    for _ in range(iters):
        theta, gmax = step(theta)
    return theta, float(gmax)


def run_numpyro(X, y):
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import HMCECS, MCMC, NUTS, init_to_value

    n, p = X.shape

    # The data are closed over (no model arguments), so MCMC's cache of compiled functions has a
    # constant key and the second run reuses the first run's compilation.
    def model():
        theta = numpyro.sample("theta", dist.Normal(jnp.zeros(p), PRIOR_SCALE).to_event(1))
        with numpyro.plate("N", n, subsample_size=HMCECS_M):
            xb = numpyro.subsample(X, event_dim=1)
            yb = numpyro.subsample(y, event_dim=0)
            numpyro.sample("obs", dist.Bernoulli(logits=xb @ theta), obs=yb)

    t = time.perf_counter()
    theta_map, gmax = map_newton(X, y)
    t_map = time.perf_counter() - t
    log(f"NumPyro: MAP by Newton in {t_map:.2f} s (max |grad| {gmax:.2g})")

    # As NumPyro's HMCECS example: second-order Taylor proxy around the MAP, NUTS inside, 100
    # blocks; started at the MAP (kind to the peer: no burn-in from a random start).
    proxy = HMCECS.taylor_proxy({"theta": theta_map})
    inner = NUTS(model, init_strategy=init_to_value(values={"theta": theta_map}))
    kernel = HMCECS(inner, num_blocks=HMCECS_BLOCKS, proxy=proxy)
    mcmc = MCMC(kernel, num_warmup=HMCECS_WARMUP, num_samples=HMCECS_DRAWS, num_chains=1,
                progress_bar=False)
    runs = []
    # Run 1 includes the JIT compilation. Run 2 (same MCMC object, same shapes, another key)
    # reuses the compiled loop, so its time is the chains alone: that is the number the ratio
    # uses, as tallmc's chain time contains no compilation either.
    for i, key in enumerate([jax.random.PRNGKey(SEED), jax.random.PRNGKey(SEED + 1)]):
        t = time.perf_counter()
        mcmc.run(key, extra_fields=("accept_prob", "hmc_state.accept_prob", "hmc_state.num_steps"))
        draws = np.asarray(jax.block_until_ready(mcmc.get_samples()["theta"]))
        secs = time.perf_counter() - t
        ess = min_bulk_ess(draws)
        ess_tail = min_bulk_ess(draws, "tail")
        ex = mcmc.get_extra_fields()
        # accept_prob: the MH step of the subsample indices u; hmc_state.*: the NUTS step of θ.
        acc_u = float(np.mean(ex["accept_prob"]))
        acc = float(np.mean(ex["hmc_state.accept_prob"]))
        steps = float(np.mean(ex["hmc_state.num_steps"]))
        runs.append({"seconds": secs, "min_ess": ess, "min_ess_tail": ess_tail,
                     "accept": acc, "accept_u": acc_u,
                     "steps": steps, "mean": draws.mean(axis=0)})
        log(f"NumPyro HMCECS run {i + 1}: {secs:.2f} s, min bulk ESS {ess:.0f}, NUTS accept "
            f"{acc:.2f}, mean leapfrog steps {steps:.1f}, u accept {acc_u:.2f}")
    return {"map_seconds": t_map, "runs": runs, "theta_map": np.asarray(theta_map)}


# ---------------------------------------------------------------------------------------------
# BlackJAX SGLD


def run_blackjax(X, y, theta0):
    import blackjax
    import jax
    import jax.numpy as jnp

    n, p = X.shape

    def logprior(theta):
        return -0.5 * jnp.sum(theta**2) / PRIOR_SCALE**2

    def loglik(theta, row):
        x, yi = row
        eta = x @ theta
        return yi * eta - jnp.logaddexp(0.0, eta)

    grad_fn = blackjax.sgmcmc.gradients.grad_estimator(logprior, loglik, n)
    sgld = blackjax.sgld(grad_fn)
    step_size = 1e-6  # stable here (posterior precision ~ 2·10⁵); it/s does not depend on it

    @jax.jit
    def chain(key, theta):
        def one(theta, k):
            kb, ks = jax.random.split(k)
            # Minibatch indices with replacement (the cheapest gather in JAX; tallmc's default
            # batch is drawn without replacement).
            idx = jax.random.randint(kb, (SGLD_BATCH,), 0, n)
            theta = sgld.step(ks, theta, (X[idx], y[idx]), step_size)
            return theta, theta

        return jax.lax.scan(one, theta, jax.random.split(key, SGLD_ITERS))

    times = []
    for key in [jax.random.PRNGKey(SEED), jax.random.PRNGKey(SEED + 1)]:
        t = time.perf_counter()
        _, draws = chain(key, jnp.asarray(theta0))
        jax.block_until_ready(draws)
        times.append(time.perf_counter() - t)
    # times[0] includes the compilation of the scan; times[1] is the 20 000 iterations alone.
    log(f"BlackJAX SGLD: {times[0]:.2f} s with compile, {times[1]:.2f} s without "
        f"({SGLD_ITERS / times[1]:.0f} it/s); mean of draws finite: {bool(np.isfinite(np.asarray(draws)).all())}")
    return {"with_compile": times[0], "seconds": times[1]}


# ---------------------------------------------------------------------------------------------


def fmt(x, nd=0):
    return "—" if x is None else f"{x:,.{nd}f}".replace(",", " ")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--tallmc", required=True)
    ap.add_argument("--out", default="target/peers")
    args = ap.parse_args()

    mach, load0 = machine()
    started = datetime.datetime.now().astimezone()
    import jax
    import numpyro

    log(f"jax {jax.__version__} ({jax.devices()[0].platform}), numpyro {numpyro.__version__}")

    # Both sides read the data file from the page cache: it is read once here first (the
    # previous run's peers can push it out of the cache, and a first read from disk measured
    # the disk: 1.48 s for tallmc's CSV load in one run against 0.6-0.7 s from the cache).
    warm_cache(args.data)
    th = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-hmc-ecs"), "hmc-ecs",
                    HMCECS_WARMUP, HMCECS_DRAWS, [f"m={HMCECS_M}"])
    log(f"tallmc hmc-ecs: chains {th['chains']:.2f} s, total {th['total']:.2f} s, "
        f"min ESS {th['min_ess']:.0f} (ArviZ on draws.csv: {th['min_ess_arviz']:.0f})")
    tn = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-hmc-ecs-nuts"), "hmc-ecs",
                    HMCECS_WARMUP, HMCECS_DRAWS, [f"m={HMCECS_M}", "trajectory=nuts"])
    log(f"tallmc hmc-ecs trajectory=nuts: chains {tn['chains']:.2f} s, total {tn['total']:.2f} s, "
        f"min ESS {tn['min_ess']:.0f}")
    # tallmc's own defaults (automatic m for σ² ≈ 1, the paper's rule), as a user runs it.
    ta = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-hmc-ecs-defaults"),
                    "hmc-ecs", HMCECS_WARMUP, HMCECS_DRAWS, [])
    log(f"tallmc hmc-ecs defaults: chains {ta['chains']:.2f} s, total {ta['total']:.2f} s, "
        f"min ESS {ta['min_ess']:.0f}, resolved {ta['resolved']}")
    # NumPyro's algorithm (NUTS inside HMC-ECS) with tallmc's automatic m.
    tb = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-hmc-ecs-nuts-defaults"),
                    "hmc-ecs", HMCECS_WARMUP, HMCECS_DRAWS, ["trajectory=nuts"])
    log(f"tallmc hmc-ecs trajectory=nuts, automatic m: chains {tb['chains']:.2f} s, "
        f"total {tb['total']:.2f} s, min ESS {tb['min_ess']:.0f}")
    ts = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-sgld"), "sgld", 0,
                    SGLD_ITERS, [f"batch_size={SGLD_BATCH}"])
    log(f"tallmc sgld: chains {ts['chains']:.2f} s, total {ts['total']:.2f} s")
    # The same with every large block on huge pages from its allocation (the default moves the
    # design onto them only for runs that read 64 passes' worth of rows: cli/src/hugepages.rs).
    tsh = run_tallmc(args.tallmc, args.data, os.path.join(args.out, "tallmc-sgld-huge"), "sgld", 0,
                     SGLD_ITERS, [f"batch_size={SGLD_BATCH}"], env={"TALLMC_HUGE_PAGES": "1"})
    log(f"tallmc sgld, TALLMC_HUGE_PAGES=1: chains {tsh['chains']:.2f} s, total {tsh['total']:.2f} s")
    read_one, read_two = read_ceiling(args.tallmc)
    log(f"reading a batch's bytes alone: {read_one:.1f} µs on one core, {read_two:.1f} µs on two")
    # The same table as a binary columnar file (NumPy's .npz, which tallmc reads; written once
    # next to the CSV by NumPy alone), so that the whole process is seen without text parsing.
    npz = npz_copy(args.data)
    warm_cache(npz)
    tz = run_tallmc(args.tallmc, npz, os.path.join(args.out, "tallmc-hmc-ecs-npz"), "hmc-ecs",
                    HMCECS_WARMUP, HMCECS_DRAWS, [f"m={HMCECS_M}"])
    same_draws = filecmp.cmp(os.path.join(args.out, "tallmc-hmc-ecs", "draws.csv"),
                             os.path.join(args.out, "tallmc-hmc-ecs-npz", "draws.csv"), shallow=False)
    log(f"tallmc hmc-ecs on {npz}: total {tz['total']:.2f} s (draws identical to the CSV run: {same_draws})")
    # tallmc's defaults on the .npz (the whole process without text parsing, as a user with a
    # binary file runs it).
    tdz = run_tallmc(args.tallmc, npz, os.path.join(args.out, "tallmc-hmc-ecs-defaults-npz"),
                     "hmc-ecs", HMCECS_WARMUP, HMCECS_DRAWS, [])
    same_defaults = filecmp.cmp(os.path.join(args.out, "tallmc-hmc-ecs-defaults", "draws.csv"),
                                os.path.join(args.out, "tallmc-hmc-ecs-defaults-npz", "draws.csv"),
                                shallow=False)
    log(f"tallmc hmc-ecs defaults on {npz}: total {tdz['total']:.2f} s "
        f"(draws identical to the CSV run: {same_defaults})")

    t = time.perf_counter()
    X64, y64, names = load_xy(args.data)
    t_load = time.perf_counter() - t
    import jax.numpy as jnp

    X, y = jnp.asarray(X64, dtype=jnp.float32), jnp.asarray(y64, dtype=jnp.float32)
    del X64
    log(f"peers: read {args.data} with pandas in {t_load:.2f} s ({X.shape[0]} × {X.shape[1]})")
    npy = run_numpyro(X, y)
    bjx = run_blackjax(X, y, npy["theta_map"])

    # -----------------------------------------------------------------------------------------
    r1, r2 = npy["runs"]
    np_ess_s = r2["min_ess"] / r2["seconds"]
    np_proc = t_load + npy["map_seconds"] + r1["seconds"]  # one NumPyro process: read, MAP, run (with compile)
    np_proc_ess_s = r1["min_ess"] / np_proc
    tm_ess_s = th["min_ess"] / th["chains"]
    tm_proc_ess_s = th["min_ess"] / th["process"]
    bj_its = SGLD_ITERS / bjx["seconds"]
    tm_its = SGLD_ITERS / ts["chains"]
    tm_its_sampling = SGLD_ITERS / ts["sampling"]

    print()
    print(f"## Peers (issue 21): {started:%Y-%m-%d %H:%M %Z}")
    print(f"machine: {mach}; load average (1 min) {load0:.2f} at the start, "
          f"{os.getloadavg()[0]:.2f} at the end (2 cores: above ~1.5 means other jobs shared them)")
    print(f"data: {args.data} (n = {X.shape[0]}, {X.shape[1] - 1} features + intercept); "
          f"jax {jax.__version__} (float32, CPU), numpyro {numpyro.__version__}, "
          f"blackjax {__import__('blackjax').__version__}")
    print()
    print("| workload | peer | tallmc | tallmc / peer |")
    print("|---|---|---|---|")
    print(f"| HMC-ECS, {HMCECS_WARMUP} warm-up + {fmt(HMCECS_DRAWS)} draws, 1 chain, m = {fmt(HMCECS_M)} "
          f"| NumPyro HMCECS (NUTS inside): {r2['seconds']:.1f} s, min ESS {fmt(r2['min_ess'])} → "
          f"{np_ess_s:.1f} ESS/s | chains {th['chains']:.2f} s (sampling {th['sampling']:.3f} s), "
          f"min ESS {fmt(th['min_ess'])} → {fmt(tm_ess_s)} ESS/s "
          f"| **{tm_ess_s / np_ess_s:.1f}×** on chain time (ESS/s) |")
    print(f"| the same, whole `tallmc run` process | NumPyro chain time as above: {np_ess_s:.1f} ESS/s "
          f"| {th['process']:.2f} s: CSV parse and outputs {th['parse_and_rest']:.2f} s, "
          f"model and whitening {th['model_build']:.2f} s, KSD {th['ksd']:.2f} s, "
          f"chain-0 set-up {th['setup0']:.2f} s, chains {th['chains']:.2f} s → "
          f"{tm_proc_ess_s:.1f} ESS/s | **{tm_proc_ess_s / np_ess_s:.1f}×** (tallmc's whole process "
          f"against NumPyro's chain time) |")
    tz_proc_ess_s = tz["min_ess"] / tz["process"]
    print(f"| the same, whole process reading the table from `.npz` (NumPy's binary columns) "
          f"| NumPyro chain time as above: {np_ess_s:.1f} ESS/s | {tz['process']:.2f} s: load and "
          f"outputs {tz['parse_and_rest']:.2f} s, model and whitening {tz['model_build']:.2f} s, "
          f"KSD {tz['ksd']:.2f} s, chain-0 set-up {tz['setup0']:.2f} s, chains {tz['chains']:.2f} s → "
          f"{tz_proc_ess_s:.1f} ESS/s | {tz_proc_ess_s / np_ess_s:.1f}× |")
    print(f"| the same, process against process | NumPyro: read CSV {t_load:.1f} s + MAP "
          f"{npy['map_seconds']:.1f} s + first run with JIT compile {r1['seconds']:.1f} s "
          f"(min ESS {fmt(r1['min_ess'])}) = {np_proc:.1f} s → {np_proc_ess_s:.1f} ESS/s "
          f"| {tm_proc_ess_s:.1f} ESS/s | {tm_proc_ess_s / np_proc_ess_s:.1f}× |")
    tn_ess_s = tn["min_ess"] / tn["chains"]
    print(f"| HMC-ECS as in the first row, tallmc with NUTS inside (`--set trajectory=nuts`) "
          f"| as in the first row: {np_ess_s:.1f} ESS/s | chains {tn['chains']:.2f} s (sampling "
          f"{tn['sampling']:.3f} s), min ESS {fmt(tn['min_ess'])} → {fmt(tn_ess_s)} ESS/s "
          f"| {tn_ess_s / np_ess_s:.1f}× on chain time |")
    # Rows for tallmc's automatic m: chain time and whole process against NumPyro's chain time.
    for r, what in ((ta, "tallmc with its defaults (no `--set`: automatic m = {m}, the σ² ≈ 1 rule)"),
                    (tb, "NumPyro's algorithm with tallmc's automatic m (`--set trajectory=nuts`, "
                         "m = {m})")):
        ess_s, proc_ess_s = r["min_ess"] / r["chains"], r["min_ess"] / r["process"]
        label = what.format(m=fmt(r["resolved"].get("m", float("nan"))))
        print(f"| HMC-ECS as in the first row, {label} | as in the first row: {np_ess_s:.1f} ESS/s "
              f"| chains {r['chains']:.2f} s (sampling {r['sampling']:.3f} s), min ESS "
              f"{fmt(r['min_ess'])} → {fmt(ess_s)} ESS/s; whole process (CSV) {r['process']:.2f} s "
              f"→ {proc_ess_s:.1f} ESS/s | {ess_s / np_ess_s:.1f}× on chain time, "
              f"{proc_ess_s / np_ess_s:.1f}× whole process |")
    tdz_proc_ess_s = tdz["min_ess"] / tdz["process"]
    print(f"| the same (tallmc's defaults), whole process reading the table from `.npz` "
          f"| as in the first row: {np_ess_s:.1f} ESS/s | {tdz['process']:.2f} s: load and outputs "
          f"{tdz['parse_and_rest']:.2f} s, model and whitening {tdz['model_build']:.2f} s, KSD "
          f"{tdz['ksd']:.2f} s, chain-0 set-up {tdz['setup0']:.2f} s, chains {tdz['chains']:.2f} s, "
          f"min ESS {fmt(tdz['min_ess'])} → {tdz_proc_ess_s:.1f} ESS/s "
          f"| {tdz_proc_ess_s / np_ess_s:.1f}× whole process |")
    # The same ratios on min(bulk, tail) ESS: a draw's tail quantiles mix more slowly than its
    # mean when trajectories are antithetic (NUTS), so the bulk ESS alone flatters them.
    both = lambda r: min(r["min_ess"], r["min_ess_tail"])
    np_both_s = both(r2) / r2["seconds"]
    print(f"| SGLD, batch {fmt(SGLD_BATCH)}, {fmt(SGLD_ITERS)} iterations | BlackJAX SGLD in `lax.scan`: {bjx['seconds']:.2f} s → {fmt(bj_its)} it/s "
          f"(first call with compile {bjx['with_compile']:.2f} s) | chains {ts['chains']:.2f} s → "
          f"{fmt(tm_its)} it/s (sampling alone {fmt(tm_its_sampling)} it/s; whole process "
          f"{ts['process']:.2f} s) | **{tm_its / bj_its:.2f}×** it/s |")
    tsh_its = SGLD_ITERS / tsh["chains"]
    print(f"| the same, tallmc with `TALLMC_HUGE_PAGES=1` (every large block on huge pages from its "
          f"allocation; by default this run's 26 passes' worth of rows are too few to pay for "
          f"moving the design) | as above: {fmt(bj_its)} it/s | chains {tsh['chains']:.2f} s → "
          f"{fmt(tsh_its)} it/s (whole process {tsh['process']:.2f} s, data load "
          f"{tsh['data_load']:.2f} s against {ts['data_load']:.2f} s) | {tsh_its / bj_its:.2f}× it/s |")
    ceil_one, ceil_two = 1e6 / read_one, 1e6 / read_two
    print(f"| the same, the host's ceiling: reading the batches' bytes alone (`tallmc bench --gather`: "
          f"1 000 batches of {fmt(SGLD_BATCH)} rows of a 10⁶ × 30 float64 design, no arithmetic) "
          f"| as above: {fmt(bj_its)} it/s | {read_one:.1f} µs per batch on one core → at most "
          f"{fmt(ceil_one)} it/s; {read_two:.1f} µs on both cores → at most {fmt(ceil_two)} it/s; "
          f"tallmc's chain (its batch split over both cores) runs at {tm_its / ceil_two:.2f} of "
          f"the both-cores ceiling "
          f"| ceiling {ceil_one / bj_its:.1f}× (one core), {ceil_two / bj_its:.1f}× (both cores) |")
    print()
    print("Definitions. ESS: the smallest bulk ESS over the 30 coefficients (ArviZ 0.23.4; for tallmc "
          "run.json's min_ess_bulk). tallmc chain time: run.json wall_time_seconds.chains (warm-up "
          "and sampling; chain 0's set-up precedes it). tallmc whole process: the `tallmc run` "
          "process from start to exit as timed here (run.json total "
          f"{th['total']:.2f} s). NumPyro chain time: the second mcmc.run (warm-up + draws, no "
          "compilation; the first run compiled). BlackJAX: the second call of the jitted scan.")
    print(f"Checks: ArviZ on tallmc's draws.csv gives min bulk ESS {th['min_ess_arviz']:.1f} "
          f"(run.json {th['min_ess']:.1f}). tallmc hmc-ecs resolved "
          f"{ {k: th['resolved'][k] for k in ('eps', 'L', 'm') if k in th['resolved']} }, "
          f"accept {th['accept']:.2f}; NumPyro NUTS accept {r2['accept']:.2f}, mean leapfrog steps "
          f"{r2['steps']:.1f} (u-block accept {r2['accept_u']:.2f}). tallmc sgld {ts['chains']:.4f} s, "
          f"BlackJAX {bjx['seconds']:.4f} s. Posterior means, largest "
          f"|tallmc − NumPyro| / tallmc sd: {posterior_gap(args.out, r2):.2f}.")
    print(f"Tail ESS (min over coefficients): tallmc {fmt(th['min_ess_tail'])} (static L), "
          f"{fmt(tn['min_ess_tail'])} (NUTS inside), {fmt(ta['min_ess_tail'])} (defaults), "
          f"{fmt(tb['min_ess_tail'])} (NUTS inside, automatic m), NumPyro {fmt(r2['min_ess_tail'])}. On min(bulk, tail) "
          f"ESS per second of chain time: tallmc {both(th) / th['chains'] / np_both_s:.1f}× (static L), "
          f"{both(tn) / tn['chains'] / np_both_s:.1f}× (NUTS inside), "
          f"{both(ta) / ta['chains'] / np_both_s:.1f}× (defaults; whole process "
          f"{both(ta) / ta['process'] / np_both_s:.1f}×), "
          f"{both(tb) / tb['chains'] / np_both_s:.1f}× (NUTS inside, automatic m; whole process "
          f"{both(tb) / tb['process'] / np_both_s:.1f}×); whole process "
          f"{both(th) / th['process'] / np_both_s:.1f}× (CSV), "
          f"{both(tz) / tz['process'] / np_both_s:.1f}× (`.npz`).")
    print(f"The `.npz` runs' draws are {'identical to' if same_draws and same_defaults else 'NOT identical to'} "
          f"the CSV runs' (draws.csv compared byte for byte).")
    print(f"Commands: tallmc {th['cmd']}")
    print(f"          tallmc {tz['cmd']}")
    print(f"          tallmc {tn['cmd']}")
    print(f"          tallmc {ta['cmd']}")
    print(f"          tallmc {tb['cmd']}")
    print(f"          tallmc {tdz['cmd']}")
    print(f"          tallmc {ts['cmd']}")


def posterior_gap(out, r2):
    """Largest |mean_tallmc − mean_numpyro| over coefficients, in units of a crude posterior sd
    (the spread of tallmc's draws): a sanity check that both sample the same posterior."""
    import pandas as pd

    d = pd.read_csv(os.path.join(out, "tallmc-hmc-ecs", "draws.csv")).drop(columns=["chain", "draw"])
    d = d.to_numpy()
    return float(np.max(np.abs(d.mean(axis=0) - r2["mean"]) / d.std(axis=0)))


if __name__ == "__main__":
    main()
