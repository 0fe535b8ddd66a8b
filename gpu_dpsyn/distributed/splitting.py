"""n rows as batches, and every target split exactly across them.

Each target (float counts scaled to n) is first rounded to integers summing to n
(largest remainder, gum.apportion); batch b then takes, of what is left of every target,
its exact proportional share size_b / rows left, rounded by largest remainder per cell
(ties by index) in integer arithmetic.  So each batch's share of a target sums to the
batch's size, the shares of a cell over all batches sum to the cell's integer target,
and every share is within one of the cell's proportional part: the union of the batches
is fitted to the integer targets themselves.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.arrays import apportion


def batch_sizes(n: int, batch_rows: int) -> list[int]:
    """ceil(n / batch_rows) batch sizes as equal as can be, the larger first."""
    k = -(-n // batch_rows)
    return [n // k + (b < n % k) for b in range(k)]


def integer_target(t, n: int) -> np.ndarray:
    """t (>= 0, summing to about n) as integers summing to exactly n."""
    out = apportion(np, np.maximum(np.asarray(t, dtype=np.float64), 0.0), float(n))
    out = out.astype(np.int64)
    if out.sum() != n:  # float rounding in apportion; never seen, but never silently wrong
        raise ArithmeticError(f"integer target sums to {out.sum()}, not {n}")
    return out


def share(left: np.ndarray, k: int, total: int) -> np.ndarray:
    """k of the `total` units in `left` (which sums to total), proportionally: floor of
    left * k / total exactly, plus one for the cells with the largest remainders (ties
    by index).  Never more than left in any cell.  left * k < 2^62 for n < 2^31."""
    base, rem = np.divmod(left * np.int64(k), np.int64(total))
    short = k - int(base.sum())
    base[np.argsort(-rem, kind="stable")[:short]] += 1
    return base


def split_targets(targets, sizes):
    """Per batch, in order: [(attrs, shape, integer counts)], one per target, the counts
    summing to the batch's size.  targets: (attrs, shape, float counts summing to
    sum(sizes)).  A generator: one batch's shares are held at a time, besides what is
    left of each target."""
    n = sum(sizes)
    left = [integer_target(t, n) for _, _, t in targets]
    rows_left = n
    for size in sizes:
        parts = [share(rest, size, rows_left) for rest in left]
        for rest, part in zip(left, parts):
            rest -= part
        rows_left -= size
        yield [(attrs, shape, part) for (attrs, shape, _), part in zip(targets, parts)]
