"""The merged tails of a binned number: two columns correlated 0.80 (20,000 rows, 32 bins
each, both tails sparse), fitted at eps 1 and 0.3, seeds 0-2.  Prints the synthetic
correlation and the share of rows with x in an outer range (below 20 or above 80) whose
y lies on the other side of its centre (real: 0), with the code on PYTHONPATH.

    PYTHONPATH=WORKTREE python bench/experiments/ordered_tails/cross.py LABEL"""
from __future__ import annotations

import json
import sys
import warnings

import numpy as np
import pandas as pd


def crossed(t: pd.DataFrame) -> tuple:
    out = (t.x < 20) | (t.x > 80)
    return float(((t.x[out] > 50) != (t.y[out] > 3)).mean()), int(out.sum())


def main(label: str) -> None:
    from gpu_dpsyn import Synthesizer
    warnings.simplefilter("ignore")  # seeded runs, on purpose
    rng = np.random.default_rng(5)
    z = rng.normal(size=20000)
    df = pd.DataFrame({"x": np.round(50 + 10 * (z + 0.5 * rng.normal(size=20000)), 1),
                       "y": np.round(3 + (z + 0.5 * rng.normal(size=20000)), 2),
                       "g": rng.choice(list("abcd"), 20000)})
    schema = {"columns": {"x": {"type": "numeric", "min": 0, "max": 100, "bins": 32},
                          "y": {"type": "numeric", "min": -3, "max": 9, "bins": 32},
                          "g": {"type": "categorical", "values": list("abcd")}}}
    res = []
    for eps in (1.0, 0.3):
        for seed in (0, 1, 2):
            s = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema).sample()
            c, n = crossed(s)
            res.append((eps, seed, round(s[["x", "y"]].corr().iloc[0, 1], 3), round(c, 3), n))
    print(label, "real", crossed(df), json.dumps(res))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
