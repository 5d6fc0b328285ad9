# tallmc in a notebook: logistic regression on a pandas DataFrame with HMC-ECS, ArviZ summary.
import sys

import arviz as az
import pandas as pd
import tallmc

df = pd.read_csv(sys.argv[1] if len(sys.argv) > 1 else "data.csv")  # columns y, x1, x2, ...
idata = tallmc.sample(df, model="logistic", response="y", sampler="hmc-ecs",
                      chains=4, warmup=1000, draws=1000, seed=1)
summary = az.summary(idata, round_to="none")
print(summary)
summary.to_csv(sys.argv[2] if len(sys.argv) > 2 else "summary-python.csv")
