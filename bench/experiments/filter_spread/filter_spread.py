"""Low-count filtering's threshold and its merged cells' weight in consistency, against
the code before them, with the same noise.

"new" (the defaults): a column of c values is filtered at max(3, sqrt(2 ln c)) sigma
(estimate/filtering.py, theta_sigmas), a kept merged value's cell, which sums its
members' noisy counts, weighs in consistency by that many noisy cells and takes that
share of its changes (Marginal.spread), and a column whose every value merged keeps its
total (no tail to zero).  "old": 3 sigma for every column, every cell weighed as one
noisy count, a merged total below 3 sigma zeroed.  Neither is in
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
    import numpy as np
    from gpu_dpsyn.core.types import Marginal
    from gpu_dpsyn.estimate import filtering
    new = (filtering.theta_sigmas, filtering.spread_of, filtering.recoded_one_way)

    def old_one_way(m, r, sigmas=None):  # the code before: zeroed below 3 sigma, always
        vals = np.bincount(r.lut, weights=m.values, minlength=r.size).astype(np.float64)
        if vals[-1] < filtering.THETA_SIGMAS * m.sigma:
            vals[-1] = 0.0
        return Marginal(m.attrs, (r.size,), vals, m.sigma)

    def use(theta, spread, one_way):
        filtering.theta_sigmas, filtering.spread_of, filtering.recoded_one_way = \
            theta, spread, one_way
    try:
        paired_fits(table, epss, seeds, out, [
            ("new", lambda: use(*new)),
            ("old", lambda: use(lambda values: filtering.THETA_SIGMAS, lambda m, r: None,
                                old_one_way))], rows=True)
    finally:
        use(*new)


if __name__ == "__main__":
    main(*table_runs(__doc__))
