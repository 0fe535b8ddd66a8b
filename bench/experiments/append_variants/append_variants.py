"""Attribute appending from a 3-way marginal (x, y, z), three ways, on the runs whose
selection does it (privsyn, eps=1): mean 2/3-way TVD and the TVD of the target's pairs.

    python bench/experiments/append_variants/append_variants.py
    # writes bench/results/append_variants_<device>.json

  keep_rest  (the default) x is appended, (y, z) stays in GUM
  drop       x is appended and the whole target leaves GUM (as at commit 48f0150:
             y and z keep independent 1-way draws)
  two_way    attributes are appended from 2-way marginals only; 3-way ones stay whole

One fit per run (the variant is the sample's target plan: generate.sample.generate's
`plan`), then 3 samples per variant; the k-th sample of every variant uses the same
post-processing call, the one a fresh fit's k-th sample() would use.
"""
from __future__ import annotations

import argparse
import inspect
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from datasets import DATASETS  # noqa: E402
from results import device_name, write_result  # noqa: E402

import gpu_dpsyn.generate.gum as gum  # noqa: E402
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402
from gpu_dpsyn.evaluation.evaluate import mean_tvd, tvd_codes  # noqa: E402
from gpu_dpsyn.generate.sample import estimated_rows, generate  # noqa: E402

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


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", default=None,
                   help="dataset:rows:seed,... (rows 0: all; default: " + ",".join(
                       f"{d}:{r or 0}:{s}" for d, r, s in RUNS) + ")")
    p.add_argument("--samples", type=int, default=3)
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    runs = RUNS if args.runs is None else [
        (d, int(r) or None, int(s)) for d, r, s in (x.split(":") for x in args.runs.split(","))]
    warnings.simplefilter("ignore")
    out = []
    for name, rows, seed in runs:
        df, schema = DATASETS[name]()
        df = df if rows is None else df.iloc[:rows]
        sch = load_schema(schema)
        real = encode(df, sch)
        syn = Synthesizer(1.0, 1e-9, seed=seed, backend="cpu", progress=False)
        syn.fit(df, schema)
        m = syn.model
        n = estimated_rows(m, syn.check_sample)  # sample()'s default size
        t = m.targets(n)
        st = gum.plan_structure([x[0] for x in t], len(m.domain))
        tri = [t[i][0] for _, i in st.appended if len(t[i][0]) == 3]
        if not tri:
            print(f"{name} rows={len(df):,} seed={seed}: no attribute is appended from a "
                  "3-way marginal, so the variants sample alike", flush=True)
        for variant, plan in VARIANTS.items():
            tv2, tv3, pairs = [], [], []
            for k in range(args.samples):
                s, _ = generate(syn.backend, m, n, t, m.fit_calls + k, plan=plan)
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
                   "targets": [[m.names[a] for a in attrs] for attrs in tri],
                   "pair_tvd_per_sample": pairs, "device": device_name(syn.backend)}
            out.append(row)
            print(f"{name:9s} rows={len(df):>7,} seed={seed} {variant:9s} "
                  f"2-way={row['tvd_2way']:.4f} 3-way={row['tvd_3way']:.4f}", flush=True)
    write_result(out, args.out, "append_variants", out[0]["device"])


if __name__ == "__main__":
    main()
