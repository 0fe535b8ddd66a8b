"""Private quantile bins against public log-spaced bins where the noise would place the
edges (measure/quantiles.lost_in_noise): a log-normal wage (min 50, max 19,000, K 32) and an
exponential length of stay (0-365 days, K 16, 4 records a person), eps 1, seeds 0-2, the
column's Wasserstein distance (over the real sd) and KS statistic, synthetic against real.
Variants: "quantiles" (the edges the noise gives, always), "public" (the public spacing,
always), "rule" (the default).

    python bench/experiments/quantile_fallback/quantile_fallback.py"""
import warnings

import numpy as np
import pandas as pd
from scipy.stats import ks_2samp, wasserstein_distance

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.measure import quantiles as Q

warnings.simplefilter("ignore")  # seeded runs; the rule's own warning

def wages(n, seed):
    r = np.random.default_rng(seed)
    wage = np.clip(np.round(np.exp(r.normal(6.3, 0.7, n))), 50, 19000).astype(np.int64)
    edu = np.clip(np.round((np.log(wage) - 6.3) * 3 + r.normal(12, 2, n)), 0, 20)
    df = pd.DataFrame({"wage": wage, "edu": edu.astype(np.int64), "region": r.choice(["north", "south"], n)})
    schema = {"columns": {"wage": {"type": "numeric", "integer": True, "min": 50, "max": 19000, "bins": {"private_quantiles": 32}},
        "edu": {"type": "numeric", "integer": True, "min": 0, "max": 20},
        "region": {"type": "categorical", "values": ["north", "south"]}}}
    return df, schema, "wage"

def stays(n, seed, sens=4):
    r = np.random.default_rng(seed)
    df = pd.DataFrame({"stay": np.round(r.exponential(3.0, n), 1), "age": r.integers(0, 95, n), "ward": r.choice(list("abcde"), n)})
    schema = {"max_records_per_individual": sens, "columns": {
        "stay": {"type": "numeric", "min": 0, "max": 365, "bins": {"private_quantiles": 16}},
        "age": {"type": "numeric", "integer": True, "min": 0, "max": 120},
        "ward": {"type": "categorical", "values": list("abcde")}}}
    return df, schema, "stay"

orig = Q.lost_in_noise
for name, make, ns in (("wages", wages, (2000, 5000, 10000, 20000)), ("stays4", stays, (5000, 20000))):
    for n in ns:
        res = {}
        for mode in ("quantiles", "public", "rule"):
            Q.lost_in_noise = (lambda *a: False) if mode == "quantiles" else (lambda *a: True) if mode == "public" else orig
            w, k = [], []
            for seed in range(3):
                df, schema, col = make(n, seed)
                syn = Synthesizer(1.0, 1e-9, seed=seed, progress=False).fit(df, schema)
                out = syn.sample()
                w.append(wasserstein_distance(df[col], out[col]) / df[col].std())
                k.append(ks_2samp(df[col], out[col]).statistic)
            res[mode] = (np.mean(w), np.mean(k))
        print(name, n, " ".join(f"{m}: W/sd {v[0]:.3f} KS {v[1]:.3f}" for m, v in res.items()), flush=True)
