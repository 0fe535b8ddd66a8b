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

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import compare_setting  # noqa: E402
from results import table_runs  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn.generate.records import RELEASE
    from gpu_dpsyn.measure import rounds
    compare_setting(table, epss, seeds, out, rounds, "S_EFFORT",
                    [("S_EFFORT", rounds.S_EFFORT), ("release", RELEASE)])


if __name__ == "__main__":
    main(*table_runs(__doc__))
