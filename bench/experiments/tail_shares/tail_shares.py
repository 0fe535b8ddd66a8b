"""Merged tails of numeric columns decoded by their monotone fit (filtering.tail_shares)
against the posterior means alone: each (epsilon, seed) fitted and sampled with both,
back to back, one JSON line a fit: seconds, 1-way TVD (all columns, numeric ones), 2- and
3-way TVD (300 triples), the numeric columns that merged values.

    python bench/experiments/tail_shares/tail_shares.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl
"""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import load  # noqa: E402
from results import append_row, table_runs  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.estimate import empirical_bayes, filtering
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and drafted schemas, on purpose
    df, schema = load(table)
    for eps in epss:
        for seed in seeds:
            for tails in (True, False):
                filtering.TAILS = tails
                empirical_bayes._memo.clear()  # each fit estimates its own marginals
                t0 = time.perf_counter()
                syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
                sample = syn.sample()
                sec = time.perf_counter() - t0
                sch, names = syn.model.schema, syn.model.names
                real, codes, dom = encode(df, sch), encode(sample, sch), sch.domain
                t1 = tvd_codes(real, codes, dom, 1)
                num = [i for i, n in enumerate(names) if sch[n].kind == "numeric"]
                append_row(out, dict(
                    table=table, eps=eps, seed=seed, tails=tails, sec=round(sec, 1),
                    tvd1=round(float(t1.mean()), 5),
                    tvd1_num=round(float(np.mean(t1[num])), 5) if num else None,
                    tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                    tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                    merged_numeric=[names[a] for a in syn.model.recodes
                                    if sch[names[a]].kind == "numeric"]))
    filtering.TAILS = True


if __name__ == "__main__":
    main(*table_runs(__doc__))
