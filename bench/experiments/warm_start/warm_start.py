"""Whether the release should start from the adaptive rounds' last records S (tiled to n)
and skip GUM, and whether the rounds' warm refits of S should skip GUM (tried, not taken:
NOTE.md).  Needs warm_start.patch applied (`git apply`, at the commit NOTE.md names).

    python bench/experiments/warm_start/warm_start.py TABLE EPS SEED VARIANTS OUT.jsonl

TABLE: a name of bench/common/datasets.py, flights26k, or flights (the demo's table,
336,831 rows).  VARIANTS, comma-separated: cold (the code before the patch: GUM from
independent draws, GUM in the rounds' refits), warm (the patch), wi0only (the rounds'
refits without GUM, the release cold), gumwarm (the release from S, with GUM),
gumwarm24 (the same, GUM's rate 0.24).  A JSON line a run: wall and CPU seconds of fit
and sample, 1-/2-/3-way TVD (300 triples), the release's last mean TVDs to its targets."""
from __future__ import annotations

import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import load  # noqa: E402


def main(table: str, eps: float, seed: int, variants, out: str) -> None:
    import pandas as pd
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.estimate import empirical_bayes
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    from gpu_dpsyn.generate import records, sample as sampling
    from gpu_dpsyn.measure import rounds
    warnings.simplefilter("ignore")  # seeded runs and drafted schemas, on purpose
    if table == "flights":
        root = Path(__file__).resolve().parents[3] / "data"
        df = pd.read_csv(root / "flights.csv.xz")
        schema = load_schema(json.loads((root / "flights_schema.json").read_text()))
    else:
        df, schema = load(table)
    real_fit = records.fit_level
    for variant in variants:
        def fit_level(*a, warm=False, _v=variant, **k):
            release = k.get("effort") is None  # the rounds pass theirs
            if _v == "cold" or (_v.startswith("gumwarm") and release):
                warm = False
            if _v == "gumwarm24" and release:
                k["cfg"] = dataclasses.replace(a[1].settings.gum, alpha=0.24)
            return real_fit(*a, warm=warm, **k)
        sampling.fit_level = rounds.fit_level = fit_level
        empirical_bayes._memo.clear()  # each fit estimates its own marginals
        t0, c0 = time.perf_counter(), time.process_time()
        syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
        t1, c1 = time.perf_counter(), time.process_time()
        if variant in ("cold", "wi0only"):
            syn.model.start = None
        s = syn.sample()
        t2, c2 = time.perf_counter(), time.process_time()
        sch = syn.model.schema
        real, codes, dom = encode(df, sch), encode(s, sch), sch.domain
        row = dict(table=table, eps=eps, seed=seed, variant=variant, fit=round(t1 - t0, 2),
                   sample=round(t2 - t1, 2), fit_cpu=round(c1 - c0, 2),
                   sample_cpu=round(c2 - c1, 2),
                   tvd1=round(float(tvd_codes(real, codes, dom, 1).mean()), 5),
                   tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                   tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                   history=[round(x, 4) for x in syn.last_run.history[-3:]])
        print(json.dumps(row), flush=True)
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(","),
         sys.argv[5])
