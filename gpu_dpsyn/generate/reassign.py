"""The records follow a column's fitted table (polish.py): in each (context, value)
group the records that leave are taken in a random order (counter RNG, stream POLISH)
and handed the values their context gains, in cell order.  Post-processing of the
records: the same values on both backends (whole counts and a random order through
stable sorts)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.numpy.ops import argsort_bounded
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.sorting import argsort_distinct, runs
from gpu_dpsyn.generate.shuffle import random_keys


def move_records(backend, cols, a: int, inv, X0, X1, key, call: int) -> None:
    """Give column a the table X1 (from X0, the records' own; backend arrays): in each
    (context, value) group, the records that leave are taken in a random order and
    handed the values that their context gains, in cell order.  inv (each record's
    context, int64) and X1 (then X1 - X0: no third table alive) are overwritten.  NumPy
    sorts only the records of groups that lose some (_moved_sparse); a device takes
    every group (_moved_dense): the same values."""
    xp = backend.xp
    size = X0.shape[1]
    d = X1.reshape(-1)
    d -= X0.reshape(-1)  # each group's gain (> 0) or loss (< 0)
    if not bool(d.any()):
        return
    col = cols[a]
    group = inv  # in place: the (context, value) group of each record
    group *= size
    group += col.astype(xp.int64)
    moving, dest = (_moved_sparse if xp is np else _moved_dense)(
        xp, group, lambda: random_keys(backend, len(group), a, key, call, rng.POLISH), X0, d)
    col[moving] = (dest % size).astype(col.dtype)


def _moved_dense(xp, group, keys, X0, d):
    """(the records that move, their destination groups): every record ranked in its
    group by its random key (keys(): drawn here, so that they are freed once used);
    those ranked below the group's loss move, to the gained cells in order of (group,
    rank).  Sums and searches over the whole table: no read."""
    gain, out = xp.maximum(d, 0), xp.maximum(-d, 0)
    by_key = argsort_distinct(xp, keys())
    ordered = by_key[argsort_bounded(xp, group[by_key], X0.size)]  # by group, random inside
    del by_key
    counts = X0.reshape(-1)
    start = xp.cumsum(counts) - counts
    rank = xp.empty(len(group), dtype=xp.int64)
    rank[ordered] = xp.arange(len(group), dtype=xp.int64) - start[group[ordered]]
    del ordered
    moving = rank < out[group]
    slot = (xp.cumsum(out) - out)[group[moving]] + rank[moving]
    return moving, xp.searchsorted(xp.cumsum(gain), slot, side="right")


def _moved_sparse(xp, group, keys, X0, d):
    """_moved_dense on the records of losing groups only (each holds all of its group,
    so the ranks are the same), its sums over the losing and gaining cells only (full
    flights at eps 8, one thread: move_records 4.9 s against 9.6 s over every group)."""
    sub = np.flatnonzero(d[group] < 0)
    sub = sub[argsort_distinct(np, keys()[sub])]
    ordered = sub[argsort_bounded(np, group[sub], X0.size)]  # by group, random inside
    del sub
    gs = group[ordered]
    run, starts = runs(gs)  # runs: the losing groups in order, each present
    rank = np.arange(len(gs), dtype=np.int64) - starts[run]
    moving = rank < -d[gs]
    lost = -d[np.flatnonzero(d < 0)]
    slot = (np.cumsum(lost) - lost)[run[moving]] + rank[moving]
    win = np.flatnonzero(d > 0)
    return ordered[moving], win[np.searchsorted(np.cumsum(d[win]), slot, side="right")]
