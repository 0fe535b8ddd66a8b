"""What a fit at epsilon 8 costs beside one at epsilon 1 on the same table (the engine
issue's bound: at most twice), with the defaults: fit and sample seconds and the 2-/3-way
TVD (300 triples) of each fit, one JSON line a fit (bench/common/paired.py).

    python bench/experiments/eps_cost/eps_cost.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl

TABLE: a name of bench/common/datasets.py, or flights26k (bench/common/paired.py)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import paired_fits  # noqa: E402
from results import table_runs  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    paired_fits(table, epss, seeds, out, [("default", lambda: None)])


if __name__ == "__main__":
    main(*table_runs(__doc__))
