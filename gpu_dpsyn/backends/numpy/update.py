"""GUM's record update in NumPy (the NumPy backend's gum_apply without the host build,
and the reference its load-time check compares the build with)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.backends.numpy.permute import feistel_ranks, round_keys
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.philox import philox4x32, uniform


def _philox_words(key, n: int, c1: int, c2: int, c3: int, w: int) -> tuple:
    return philox4x32(key, np.arange(n, dtype=np.uint64), c1, c2, c3)[:w]


def update_records(cols, attrs, shape, order, s, add, rem, dup_frac: float, key,
                   update_id: int, call: int, copy_cols=None, ranks=feistel_ranks,
                   words=None) -> None:
    """NumpyBackend.gum_apply's update, the records' (cell, index) order given.
    ranks(r, size, salt, keys): permute.feistel_ranks or the same from the host build;
    words(key, n, c1, c2, c3, w): the first w Philox words of counters 0 .. n - 1
    (default: philox.py's).  The host build's load check compares its update with
    this one on NumPy's own ranks and words."""
    words = _philox_words if words is None else words
    add = np.asarray(add, dtype=np.int64)
    rem = np.asarray(rem, dtype=np.int64)
    total = int(add.sum())
    if total == 0:
        return
    offset = np.cumsum(s) - s
    # removed slot k: rank r of over cell c, record at position pi_c(r) of that cell
    # (the first total of a repeat are the searchsorted of 0 .. total - 1 in cumrem;
    # plan_update's rem sums to total, as add does)
    k = np.arange(total, dtype=np.int64)
    c = np.repeat(np.arange(len(rem)), rem)[:total]
    r = k - (np.cumsum(rem) - rem)[c]
    pos = ranks(r, s[c], c, round_keys(key, update_id, call, rng.GUM_SORT))
    removed = order[offset[c] + pos]
    # slot j refills removed[j]: both run in cell order (row-major), so a Replace
    # keeps the leading columns wherever their counts already agree (a random
    # pairing rewrote every column of the marginal; measured worse on 3-way TVD)
    # slot j: w0 picks the donor, w1 chooses Duplicate vs Replace
    w = words(key, total, update_id, rng.GUM_SLOT, call, 2)
    ucell = np.repeat(np.arange(len(add)), add)
    su = s[ucell]
    dup = (su > 0) & (uniform(w[1]) < dup_frac)
    donor = order[offset[ucell[dup]] + np.floor(uniform(w[0][dup]) * su[dup]).astype(np.int64)]
    d_dup, d_rep, c_rep = removed[dup], removed[~dup], ucell[~dup]
    for j in range(len(cols)) if copy_cols is None else copy_cols:
        cols[j][d_dup] = cols[j][donor]
    for a, st, sz in zip(attrs, strides_of(shape), shape):
        cols[a][d_rep] = (c_rep // st) % sz
