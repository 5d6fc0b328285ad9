"""Writes the peers' data file: logistic regression, n rows, d features x1..xd and a 0/1 response y.

    python gen_data.py OUT.csv [--n 1000000] [--d 29] [--seed 20261126]

x ~ N(0, 1) independently; y ~ Bernoulli(sigmoid(-0.5 + x·beta)) with beta_j ~ N(0, 0.3²) drawn
from the same seed (sd of the linear predictor ≈ 1.6). Floats are written with 17 significant
digits, so tallmc and the JAX peers read the very same doubles. The true coefficients go to
OUT.csv.truth.json. NumPy's PCG64 with a fixed seed: the file is the same on every machine.
"""

import argparse
import json
import os
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--d", type=int, default=29)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args()

    rng = np.random.default_rng(args.seed)
    intercept = -0.5
    beta = rng.normal(0.0, 0.3, size=args.d)
    tmp = args.out + ".part"
    chunk = 100_000
    with open(tmp, "w") as f:
        f.write(",".join([f"x{j + 1}" for j in range(args.d)] + ["y"]) + "\n")
        for start in range(0, args.n, chunk):
            rows = min(chunk, args.n - start)
            x = rng.normal(size=(rows, args.d))
            eta = intercept + x @ beta
            y = (rng.random(rows) < 1.0 / (1.0 + np.exp(-eta))).astype(np.float64)
            fmt = ",".join(["%.17g"] * args.d + ["%d"])
            np.savetxt(f, np.column_stack([x, y]), fmt=fmt)
    os.replace(tmp, args.out)
    with open(args.out + ".truth.json", "w") as f:
        json.dump({"n": args.n, "d": args.d, "seed": args.seed, "intercept": intercept,
                   "beta": beta.tolist()}, f, indent=1)
    print(f"wrote {args.out}: n = {args.n}, d = {args.d} (+ y), {os.path.getsize(args.out) / 1e6:.0f} MB",
          file=sys.stderr)


if __name__ == "__main__":
    main()
