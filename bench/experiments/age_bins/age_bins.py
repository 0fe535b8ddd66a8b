"""Ages 18..90 as infer-schema drafts them (73 listed values) against 32 integer bins, at
eps 1 on 25,000 rows with age tied to employment, income, marriage and one answer.
Three shapes of age: adults (fewer with age), uniform, and one top-coded at 90 (4% there,
below the 5% that earns a bin of its own).  Seeds 1-3 each.
    python bench/experiments/age_bins/age_bins.py > bench/results/age_bins_x86_64_2_cores.jsonl
"""
import json
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.inference import infer_schema
from gpu_dpsyn.data.schema import Schema


def table(shape: str, n=25000, seed=0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    if shape == "adults":
        age = np.round(r.normal(46, 17, 3 * n))
        age = age[(age >= 18) & (age <= 90)][:n].astype(int)
    elif shape == "uniform":
        age = r.integers(18, 91, n)
    else:  # top-coded: a pile at 90
        age = np.clip(np.round(r.gamma(6, 7, n) + 14), 18, 90).astype(int)
    emp = np.where(age < 25, r.choice(["student", "employed", "unemployed"], n,
                                      p=[.6, .3, .1]),
                   np.where(age < 65, r.choice(["employed", "unemployed", "student"], n,
                                               p=[.85, .12, .03]),
                            r.choice(["retired", "employed"], n, p=[.9, .1])))
    inc = np.clip((age - 18) // 8 + r.integers(-2, 3, n), 0, 7)
    mar = np.where(r.random(n) < np.clip((age - 18) / 40, 0.05, 0.8), "married", "single")
    q = np.clip(np.round(3 + (age - 50) / 25 + r.normal(0, 1, n)), 1, 5).astype(int)
    return pd.DataFrame({"age": age, "emp": emp, "inc": inc, "mar": mar,
                         "reg": r.choice(["N", "S", "E", "W", "C"], n), "q": q})


def tvd(a, b) -> float:
    p, q = a.value_counts(normalize=True), b.value_counts(normalize=True)
    return float(0.5 * p.subtract(q, fill_value=0).abs().sum())


def scores(df, out) -> dict:
    a = out["age"].astype(int)
    two = [(df.age, a), (df.age // 5, a // 5)]
    pairs = [np.mean([tvd(x.astype(str) + "|" + df[c].astype(str),
                          y.astype(str) + "|" + out[c].astype(str))
                      for c in ("emp", "inc", "mar", "q")]) for x, y in two]
    return {"tvd1": tvd(df.age, a), "tvd1_5y": tvd(df.age // 5, a // 5),
            "tvd2": float(pairs[0]), "tvd2_5y": float(pairs[1]),
            "mean_err": float(abs(a.mean() - df.age.mean())),
            "group_mean_err": float(np.mean([abs(a[out.emp == g].mean() -
                                                 df.age[df.emp == g].mean())
                                             for g in df.emp.unique()]))}


def main():
    warnings.simplefilter("ignore")
    for shape in ("adults", "uniform", "topcoded"):
        df = table(shape)
        listed = infer_schema(df)
        binned = infer_schema(df, max_categories=50)  # age alone passes 50 values
        assert listed["age"].kind == "categorical" and binned["age"].kind == "numeric"
        for how, s in (("listed", listed), ("binned", binned)):
            s = Schema([c if c.name != "age" else s["age"] for c in listed.columns])
            for seed in (1, 2, 3):
                out = Synthesizer(1.0, 1e-9, seed=seed, progress=False).fit(df, s) \
                    .sample(len(df))
                print(json.dumps({"shape": shape, "age": how, "seed": seed,
                                  **{k: round(v, 4) for k, v in scores(df, out).items()}}),
                      flush=True)


if __name__ == "__main__":
    main()
