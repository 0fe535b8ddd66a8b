"""The adaptive rounds with and without their pooling test, with the same noise.

A round measures its chosen triples only when they gain more than the same budget would
by measuring the chosen marginals again (adaptive.pooling_gain, `forgone`).  Here the
variant "no pooling test" sets that gain to 0 (AIM's rule: a triple is measured when
its error exceeds its own noise).  `forgone` is not in the noise key, so both variants
draw the same noise for everything up to the first round that differs.

    python bench/rounds_forgone.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl

TABLE: one of bench/heldout.py's tables or bench/datasets.py's (fertility, ...).
bench/results/rounds_forgone_x86_64_2_cores.jsonl holds the rows of the README."""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main(table: str, epss, seeds, out: str) -> None:
    from heldout import load_named

    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.selection import triples as adaptive
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load_named(table)
    real, dom = encode(df, schema), schema.domain
    pooling_gain = adaptive.pooling_gain
    for eps in epss:
        for seed in seeds:
            for test in (True, False):
                adaptive.pooling_gain = pooling_gain if test else (lambda *a, **k: 0.0)
                t0 = time.perf_counter()
                syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
                codes = encode(syn.sample(), schema)
                row = dict(table=table, eps=eps, seed=seed, pooling_test=test,
                           seconds=round(time.perf_counter() - t0, 1),
                           tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                           tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                           triples=len({m for m in syn.selected or () if len(m) == 3}))
                print(json.dumps(row), flush=True)
                with open(out, "a") as f:
                    f.write(json.dumps(row) + "\n")
    adaptive.pooling_gain = pooling_gain


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], [float(e) for e in a[1].split(",")], [int(s) for s in a[2].split(",")], a[3])
