"""Attribute appending from a 3-way marginal (x, y, z), three ways, on the runs whose
selection does it (privsyn, eps=1): mean 2/3-way TVD and the TVD of the target's pairs.

    python bench/append_variants.py   # writes bench/results/append_variants_<device>.json

  keep_rest  (the default) x is appended, (y, z) stays in GUM
  drop       x is appended and the whole target leaves GUM (as at commit 48f0150:
             y and z keep independent 1-way draws)
  two_way    attributes are appended from 2-way marginals only; 3-way ones stay whole

One fit per run, then 3 samples (calls differ in their GUM randomness).
"""
from __future__ import annotations

import inspect
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import DATASETS  # noqa: E402
from quality import device_name, write_result  # noqa: E402

import gpu_dpsyn.synthesizer as api
import gpu_dpsyn.generate.gum as gum
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.evaluation.evaluate import mean_tvd, tvd_codes  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

RUNS = [("fertility", None, 7), ("flights", 20000, 3), ("flights", 50000, 0)]  # (rows: first N)


def _patched(old: str, new: str):
    """plan_structure with one line of its source replaced."""
    src = inspect.getsource(gum.plan_structure)
    assert old in src
    ns = dict(vars(gum))
    exec(src.replace(old, new), ns)
    return ns["plan_structure"]


VARIANTS = {
    "keep_rest": gum.plan_structure,
    "drop": _patched("if i not in used or len(a) > 1]", "if i not in used]"),
    "two_way": _patched("if len(attrs) < 2:", "if len(attrs) != 2:"),
}


def main():
    warnings.simplefilter("ignore")
    out = []
    for name, rows, seed in RUNS:
        df, schema = DATASETS[name]()
        df = df if rows is None else df.iloc[:rows]
        sch = load_schema(schema)
        real = encode(df, sch)
        for variant, plan in VARIANTS.items():
            api.plan_structure = plan
            syn = Synthesizer(1.0, 1e-9, seed=seed, backend="cpu", progress=False)
            syn.fit(df, schema)
            t = syn._targets(1)
            st = gum.plan_structure([x[0] for x in t], len(syn.domain))
            tri = [t[i][0] for _, i in st.appended if len(t[i][0]) == 3]
            tv2, tv3, pairs = [], [], []
            for _ in range(3):
                s = syn.sample()
                res = mean_tvd(df, s, sch, ways=(2, 3))
                tv2.append(res[2])
                tv3.append(res[3])
                syn_codes = encode(s, sch)
                pairs.append([[float(v) for v in tvd_codes([real[a] for a in attrs],
                                                           [syn_codes[a] for a in attrs],
                                                           tuple(sch.domain[a] for a in attrs), 2)]
                              for attrs in tri])
            row = {"dataset": name, "rows": len(df), "seed": seed, "variant": variant,
                   "tvd_2way": float(np.mean(tv2)), "tvd_3way": float(np.mean(tv3)),
                   "targets": [[syn.names[a] for a in attrs] for attrs in tri],
                   "pair_tvd_per_sample": pairs, "device": device_name(syn.backend)}
            out.append(row)
            print(f"{name:9s} rows={len(df):>7,} seed={seed} {variant:9s} "
                  f"2-way={row['tvd_2way']:.4f} 3-way={row['tvd_3way']:.4f}", flush=True)
    api.plan_structure = gum.plan_structure
    write_result(out, None, "append_variants", out[0]["device"])


if __name__ == "__main__":
    main()
