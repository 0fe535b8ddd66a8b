"""The Gibbs sweep's IPF stopped once a pass no longer improves its fit, or run for all its
passes, with the same noise.

gibbs.fit_conditional stops when every target's fitted margin is within TVD 1e-3, or
after at most 20 passes (5 for the adaptive rounds' S).  The records' contexts are not
counted as the targets are, so most fits never reach 1e-3: they settle at 0.005-0.035
within 6-10 passes and then move in the fifth digit.  Variant "stall": gibbs.IPF_STALL
(a pass improving the worst TVD by less than 1% of it ends the fit); "all": no stall
rule (the code before).  Post-processing only: both variants draw the same noise up to
the first triple the adaptive rounds choose differently.  Each row: fit and sample
seconds, 2-/3-way TVD (300 triples), the level's marginals.

    python bench/experiments/ipf_stall/ipf_stall.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl

TABLE: as bench/experiments/s_effort/s_effort.py takes it (flights26k: 26,000 rows of
flights, random_state 1)."""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "s_effort"))
from results import append_row, table_runs  # noqa: E402
from s_effort import load  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    from gpu_dpsyn.estimate import empirical_bayes
    from gpu_dpsyn.generate import gibbs
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load(table)
    stall = gibbs.IPF_STALL
    for eps in epss:
        for seed in seeds:
            for variant, value in (("stall", stall), ("all", float("-inf"))):
                gibbs.IPF_STALL = value
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
    gibbs.IPF_STALL = stall


if __name__ == "__main__":
    main(*table_runs(__doc__))
