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

TABLE: a name of bench/common/datasets.py, or flights26k (bench/common/paired.py)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import compare_setting  # noqa: E402
from results import table_runs  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn.generate import gibbs
    compare_setting(table, epss, seeds, out, gibbs, "IPF_STALL",
                    [("stall", gibbs.IPF_STALL), ("all", float("-inf"))])


if __name__ == "__main__":
    main(*table_runs(__doc__))
