"""The adaptive rounds' records S swept and polished with fewer passes, or with the
release's, with the same noise.

S only ranks the candidate triples' errors (docs/method.md, adaptive rounds): its sweep
and polish take at most measure.rounds.S_EFFORT's passes (5 IPF passes, 8 polish passes
a column); the variant "release" gives S the release's (20 and 64).  The passes are not
in the noise key, so both variants draw the same noise up to the first triple they
choose differently.  Each row: fit and sample seconds, 2-/3-way TVD (300 triples), the
level's marginals.

    python bench/experiments/s_effort/s_effort.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl

TABLE: a name of bench/common/datasets.py's HELDOUT or DATASETS (fertility, ...), or
flights26k (26,000 rows of flights, random_state 1).
bench/results/s_effort_x86_64_2_cores.jsonl holds the rows of docs/method.md."""
from __future__ import annotations

import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import append_row, table_runs  # noqa: E402


def load(table: str):
    from datasets import ROOT, load_named
    if table != "flights26k":
        return load_named(table)
    import pandas as pd
    from gpu_dpsyn.data.schema import load_schema
    df = pd.read_csv(ROOT / "data" / "flights.csv.xz").sample(26000, random_state=1)
    return df, load_schema(json.loads((ROOT / "data" / "flights_schema.json").read_text()))


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    from gpu_dpsyn.estimate import empirical_bayes
    from gpu_dpsyn.generate.records import RELEASE
    from gpu_dpsyn.measure import rounds
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load(table)
    s_effort = rounds.S_EFFORT
    for eps in epss:
        for seed in seeds:
            for variant, effort in (("S_EFFORT", s_effort), ("release", RELEASE)):
                rounds.S_EFFORT = effort
                empirical_bayes._memo.clear()  # each fit estimates its own marginals
                t0 = time.perf_counter()
                syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
                t1 = time.perf_counter()
                sample = syn.sample()
                t2 = time.perf_counter()
                sch = syn.model.schema
                real, codes, dom = encode(df, sch), encode(sample, sch), sch.domain
                append_row(out, dict(
                    table=table, eps=eps, seed=seed, variant=variant,
                    fit=round(t1 - t0, 2), sample=round(t2 - t1, 2),
                    tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                    tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                    marginals=[len(lv.marginals) for lv in syn.model.levels]))
    rounds.S_EFFORT = s_effort


if __name__ == "__main__":
    main(*table_runs(__doc__))
