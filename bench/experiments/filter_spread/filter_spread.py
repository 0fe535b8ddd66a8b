"""Low-count filtering's threshold and its merged cells' weight in consistency, against
the code before them, with the same noise.

"new" (the defaults): a column of c values is filtered at max(3, sqrt(2 ln c)) sigma
(estimate/filtering.py, theta_sigmas), and a merged value's cell, which sums its
members' noisy counts, weighs in consistency by that many noisy cells (Marginal.spread).
"old": 3 sigma for every column and every cell weighed as one noisy count.  Neither is in
the noise key here: both variants draw the same noise up to the first choice that
differs.  Each row: fit and sample seconds, 2-/3-way TVD (300 triples), the level's
marginals, and the released row count against the table's.

    python bench/experiments/filter_spread/filter_spread.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl

TABLE: a name of bench/common/datasets.py, or flights26k (26,000 rows of flights)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import paired_fits  # noqa: E402
from results import table_runs  # noqa: E402


def main(table: str, epss, seeds, out: str) -> None:
    from gpu_dpsyn.estimate import filtering
    new = (filtering.theta_sigmas, filtering.spread_of)

    def use(theta, spread):
        filtering.theta_sigmas, filtering.spread_of = theta, spread
    try:
        paired_fits(table, epss, seeds, out, [
            ("new", lambda: use(*new)),
            ("old", lambda: use(lambda values: filtering.THETA_SIGMAS, lambda m, r: None))],
            rows=True)
    finally:
        use(*new)


if __name__ == "__main__":
    main(*table_runs(__doc__))
