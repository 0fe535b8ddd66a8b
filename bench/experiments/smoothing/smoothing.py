"""Quality of one fit per (epsilon, seed) on a table, with the code on PYTHONPATH: 1-, 2-
and 3-way TVD (300 triples) on the schema's codes, the mean absolute error of the numeric
columns' pairwise correlations, and the process's CPU seconds; one JSON line a fit.  Run
it from two worktrees (before and after a change) to compare them.

    PYTHONPATH=WORKTREE python bench/experiments/smoothing/smoothing.py TABLE VARIANT \\
        EPS[,EPS] SEED[,SEED] >> OUT.jsonl

TABLE: a name of bench/common/datasets.py, or a CSV path with SCHEMA.json beside it
(the CSV's name with .json for .csv)."""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))


def load(table: str):
    if table.endswith(".csv"):
        from gpu_dpsyn.data.schema import load_schema
        return pd.read_csv(table), load_schema(json.loads(
            Path(table[:-4] + ".json").read_text()))
    from paired import load as named
    return named(table)


def main(table: str, variant: str, epss: str, seeds: str) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.estimate import empirical_bayes
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and drafted schemas, on purpose
    df, schema = load(table)
    num = [c.name for c in schema.columns if c.kind == "numeric"]
    iu = np.triu_indices(len(num), 1)
    for eps in map(float, epss.split(",")):
        for seed in map(int, seeds.split(",")):
            empirical_bayes._memo.clear()
            t0 = time.process_time()
            syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
            s = syn.sample()
            cpu = time.process_time() - t0
            sch = syn.model.schema
            real, codes, dom = encode(df, sch), encode(s, sch), sch.domain
            corr = [f[num].apply(pd.to_numeric, errors="coerce").corr().to_numpy()[iu]
                    for f in (df, s)]
            print(json.dumps(dict(
                table=Path(table).stem, variant=variant, eps=eps, seed=seed,
                cpu=round(cpu, 1),
                **{f"tvd{k}": round(float(tvd_codes(real, codes, dom, k).mean()), 5)
                   for k in (1, 2)},
                tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                corr_err=round(float(np.nanmean(np.abs(corr[0] - corr[1]))), 4)
                if len(num) > 1 else None)), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
