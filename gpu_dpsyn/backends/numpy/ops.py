"""NumPy bodies of the backend operations.

The GPU backend (gpu_dpsyn.backends.cuda.ops) implements the same methods with the
same counter-RNG layout, so for one seed both produce the same records.
"""
from __future__ import annotations

import os

import numpy as np

from gpu_dpsyn.core import rng, threads
from gpu_dpsyn.backends.arrays import plan_update, strides_of
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.core.sorting import argsort_bounded
from gpu_dpsyn.backends.numpy import host_kernels
from gpu_dpsyn.backends.numpy import noise as _noise
from gpu_dpsyn.backends.numpy.permute import feistel_ranks, round_keys
from gpu_dpsyn.core.philox import philox4x32, uniform


def philox_range(key, n: int, c1: int, c2: int, c3: int, words: int = 1) -> tuple:
    """philox4x32(key, 0 .. n - 1, c1, c2, c3)[:words]: host_records.cpp when built, else
    philox.py (the same words)."""
    lib = host_kernels.library()
    if lib is not None:
        return host_kernels.philox_range(lib, key, n, c1, c2, c3, words)
    return philox4x32(key, np.arange(n, dtype=np.uint64), c1, c2, c3)[:words]


def feistel(r, size, salt, keys):
    """permute.feistel_ranks: host_records.cpp when built, else NumPy (the same ranks)."""
    lib = host_kernels.library()
    if lib is not None:
        return host_kernels.feistel(lib, r, size, salt, keys)
    return feistel_ranks(r, size, salt, keys)


def cell_order(cell, bound: int):
    """The stable argsort of cells in [0, bound): host_records.cpp's counting sort when
    built, else sorting.argsort_bounded (the same order)."""
    lib = host_kernels.library()
    order = host_kernels.counting_argsort(lib, cell, bound) if lib is not None else None
    return argsort_bounded(np, cell, bound) if order is None else order


class NumpyBackend:
    name = "cpu"
    xp = np

    # -- transfer ------------------------------------------------------------------
    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x)

    def synchronize(self) -> None:
        pass

    def free_memory(self) -> int | None:
        """Bytes of memory available now (None if unknown)."""
        try:
            return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            return None

    # -- marginals -----------------------------------------------------------------
    def cell_index(self, cols, attrs, shape) -> np.ndarray:
        """Flat cell of each record in C order, in the smallest dtype that holds it."""
        dt = np.uint16 if int(np.prod(shape)) <= 1 << 16 else np.int64
        cell = np.zeros(len(cols[attrs[0]]), dtype=dt)
        for a, st in zip(attrs, strides_of(shape)):
            cell += cols[a].astype(dt) * dt(st) if st != 1 else cols[a].astype(dt)
        return cell

    def cell_histogram(self, cols, attrs, shape):
        """(cell of each record, counts per cell) in one pass over the records."""
        cell = self.cell_index(cols, attrs, shape)
        return cell, np.bincount(cell, minlength=int(np.prod(shape))).astype(np.int64)

    def histogram(self, cols, attrs, shape) -> np.ndarray:
        return self.cell_histogram(cols, attrs, shape)[1]

    def uniforms(self, key, n: int, c1: int, c2: int, c3: int) -> np.ndarray:
        """u_i = uniform(philox(i, c1, c2, c3).w0) in (0, 1)."""
        return uniform(philox_range(key, n, c1, c2, c3)[0])

    def prepare(self) -> None:
        """Build the host samplers now (fit() calls this before its first charge)."""
        host_kernels.library()

    def noise(self, spec, n: int, key, stream: int, call: int, max_words: int):
        """(values, status) of exact noise for elements 0 .. n-1 (privacy.samplers.draw
        finishes WIDE elements and fails closed on FAIL): noise.cu built for the host
        when a compiler is at hand, else the vectorized NumPy samplers (same values)."""
        lib = host_kernels.library()
        if lib is not None:
            return host_kernels.sample(lib, spec, n, key, stream, call, max_words)
        return _noise.sample(spec, n, key, stream, call, max_words)

    def cdf_rows(self, cond):
        """(the rows' CDFs laid end to end, each row's last positive value): blocks of
        rows on the host's cores."""
        cond = np.asarray(cond, dtype=np.float64)
        R, size = cond.shape
        flat, last = np.empty(R * size), np.empty(R, dtype=np.int64)

        def rows(lo, hi):
            cdf = np.minimum(np.cumsum(cond[lo:hi], axis=1), 1.0)  # sorted: a sum past 1
            cdf[:, -1] = 1.0                                       # would not be
            cdf += np.arange(lo, hi)[:, None]
            flat[lo * size:hi * size] = cdf.reshape(-1)
            last[lo:hi] = size - 1 - np.argmax(cond[lo:hi, ::-1] > 0, axis=1)
        threads.each(rows, R, size)
        return flat, last

    def best_moves(self, X, tabs, offs, ctx):
        """(u, v, gain) of each context's best move: moves.cu built for the host, blocks
        of contexts on the host's cores; None without the build (generate.moves's array
        code serves, with the same numbers)."""
        lib = host_kernels.library()
        if lib is None:
            return None
        U = len(X)
        out = (np.empty(U, np.int64), np.empty(U, np.int64), np.empty(U))
        tabs, offs = np.ascontiguousarray(tabs, np.float64), np.ascontiguousarray(offs, np.int64)
        threads.each(lambda lo, hi: host_kernels.best_moves(lib, X, tabs, offs, ctx, lo, hi,
                                                            out), U, 2 * X.shape[1] * len(offs))
        return out

    def plan_update(self, s, t, alpha: float):
        """(add, rem) per cell for one GUM update (arrays.plan_update)."""
        return plan_update(np, s, t, alpha)

    # -- records -------------------------------------------------------------------
    def init_records(self, counts: list, key, call: int) -> list:
        """Column j holds value v counts[j][v] times, in an independent random order."""
        n = int(np.sum(counts[0]))
        idx = np.arange(n, dtype=np.uint64)
        cols = []
        for j, c in enumerate(counts):
            laid = np.repeat(np.arange(len(c)), np.asarray(c, dtype=np.int64))
            r = philox_range(key, n, j, rng.INIT, call)[0].astype(np.uint64)
            perm = (np.sort((r << np.uint64(32)) | idx) & np.uint64(0xFFFFFFFF)).astype(np.int64)
            cols.append(np.ascontiguousarray(laid[perm].astype(code_dtype(len(c)))))
        return cols

    def gum_apply(self, cols, attrs, shape, cell, s, add, rem, dup_frac: float,
                  key, update_id: int, call: int, copy_cols=None) -> None:
        """Remove rem[c] random records of each over cell, refill the slots for the under
        cells: Duplicate copies a whole random record of the cell, Replace rewrites only
        this marginal's columns (always for empty cells).  A Duplicate copies copy_cols
        (default: every column).  Edits cols in place."""
        add = np.asarray(add, dtype=np.int64)
        rem = np.asarray(rem, dtype=np.int64)
        total = int(add.sum())
        if total == 0:
            return
        # records grouped by cell, in index order within each (stable)
        order = cell_order(cell, int(np.prod(shape)))
        lib = host_kernels.library()
        if lib is not None and host_kernels.gum_apply(lib, cols, attrs, shape, order, s, add,
                                                      rem, dup_frac, key, update_id, call,
                                                      copy_cols):
            return  # gum.cu's kernels on the host: update_records's, one slot at a time
        update_records(cols, attrs, shape, order, s, add, rem, dup_frac, key, update_id, call,
                       copy_cols)


def update_records(cols, attrs, shape, order, s, add, rem, dup_frac: float, key,
                   update_id: int, call: int, copy_cols=None, plain: bool = False) -> None:
    """NumpyBackend.gum_apply's update in NumPy, the records' (cell, index) order given.
    plain: the Feistel ranks and Philox words from NumPy alone, never the host build
    (whose load-time check compares its update with this one)."""
    ranks = feistel_ranks if plain else feistel
    words = (lambda key, n, c1, c2, c3, w: philox4x32(
        key, np.arange(n, dtype=np.uint64), c1, c2, c3)[:w]) if plain else philox_range
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
