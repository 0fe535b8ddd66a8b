"""The polish stopping a column once a pass gains under a share of what its passes gained
before (tried, not taken: NOTE.md), against the default (a pass that moves nothing, or
the pass cap), with the same noise: fit and sample seconds and 2-/3-way TVD, one JSON line
a fit (bench/common/paired.py).

    python bench/experiments/polish_tail/polish_tail.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl
        [SHARE[,SHARE]]

SHARE: the variants' shares (default 0.01).  The rule is not a setting: the script
replaces polish.fit_table for the variants."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import paired_fits  # noqa: E402
from results import table_runs  # noqa: E402

from gpu_dpsyn.generate import polish  # noqa: E402

DEFAULT = polish.fit_table


def with_tail(share: float):
    """polish.fit_table, its passes also ending at a gain under share x the gain so far."""
    def fit_table(X, ctx, tables, tiebreak, passes=polish.PASSES, xp=polish.np,
                  backend=None):
        X = X.astype(xp.int64)
        columns = [xp.ascontiguousarray(ctx[:, i]) for i in range(len(tables))]
        s = polish.table_counts(X, columns, tables, xp)
        rank = xp.empty(len(tiebreak), dtype=xp.int64)
        rank[polish.argsort_distinct(xp, tiebreak)] = xp.arange(len(tiebreak))
        fused = None if backend is None or xp is polish.np else backend.polish_table(
            X, s, tables, ctx, rank, polish.BLOCK_CELLS, polish.GAIN_TOLERANCE)
        so_far = 0.0
        for _ in range(passes):
            if fused is not None:
                gained = float(fused.run())
            else:
                X, s, gained = polish.one_pass(X, s, ctx, tables, rank, xp, backend, columns)
            if gained <= 0 or gained < share * so_far:
                break
            so_far += gained
        return X
    return fit_table


def variant(fit_table):
    def set_up():
        polish.fit_table = fit_table
    return set_up


def main(table: str, epss, seeds, out: str, shares=(0.01,)) -> None:
    paired_fits(table, epss, seeds, out, [("default", variant(DEFAULT))] + [
        (f"tail{round(100 * s):02d}", variant(with_tail(s))) for s in shares])


if __name__ == "__main__":
    args = sys.argv[1:]
    shares = tuple(float(x) for x in args.pop(4).split(",")) if len(args) > 4 else (0.01,)
    sys.argv[1:] = args
    main(*table_runs(__doc__), shares)
