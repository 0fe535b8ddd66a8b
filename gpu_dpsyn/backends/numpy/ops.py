"""NumPy bodies of the backend operations.

The GPU backend (gpu_dpsyn.backends.cuda.ops) implements the same methods with the
same counter-RNG layout, so for one seed both produce the same records.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core import rng, threads
from gpu_dpsyn.backends.arrays import BISECT_STEPS, plan_update, strides_of
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.core import sorting
from gpu_dpsyn.core.sorting import read_bound
from gpu_dpsyn.backends.numpy import host_kernels, memory
from gpu_dpsyn.backends.numpy import noise as _noise
from gpu_dpsyn.backends.numpy.permute import feistel_ranks
from gpu_dpsyn.backends.numpy.update import update_records
from gpu_dpsyn.core.philox import philox4x32, uniform


def philox_range(key, n: int, c1: int, c2: int, c3: int, words: int = 1) -> tuple:
    """philox4x32(key, 0 .. n - 1, c1, c2, c3)[:words]: host_philox.cpp when built, else
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


def argsort_bounded(xp, a, bound: int | None = None):
    """sorting.argsort_bounded (the stable order of integers in [0, bound)): on the host,
    host_records.cpp's counting sort when built and the bound is within a few times
    the length (its table of counts), else the radix sorts; CuPy's sort on a device."""
    lib = host_kernels.library() if xp is np else None
    if lib is not None and len(a) and a.dtype.kind in "iu":
        top = bound if bound is not None else read_bound(a)
        if top is not None and top <= max(4 * len(a), 1 << 16):
            keys = a if a.dtype in (np.uint16, np.int64) else a.astype(np.int64)
            order = host_kernels.counting_argsort(lib, keys, int(top))
            if order is not None:
                return order
    return sorting.argsort_bounded(xp, a, bound)


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
        """Bytes of memory available now, within the process's cgroup (None if unknown)."""
        return memory.free_memory()

    # -- marginals -----------------------------------------------------------------
    def cell_index(self, cols, attrs, shape) -> np.ndarray:
        """Flat cell of each record in C order, in the smallest dtype that holds it."""
        dt = np.uint16 if int(np.prod(shape)) <= 1 << 16 else np.int64
        cell = np.zeros(len(cols[attrs[0]]), dtype=dt)
        for a, st in zip(attrs, strides_of(shape)):
            cell += cols[a].astype(dt) * dt(st) if st != 1 else cols[a].astype(dt)
        return cell

    def cell_histogram(self, cols, attrs, shape):
        """(cell of each record, counts per cell) in one pass over the records:
        host_records.cpp when built, else NumPy (the same arrays)."""
        lib = host_kernels.library()
        got = None if lib is None else host_kernels.cell_histogram(
            lib, [cols[a] for a in attrs], shape)
        if got is not None:
            return got
        cell = self.cell_index(cols, attrs, shape)
        return cell, np.bincount(cell, minlength=int(np.prod(shape))).astype(np.int64)

    def histogram(self, cols, attrs, shape) -> np.ndarray:
        return self.cell_histogram(cols, attrs, shape)[1]

    def histograms(self, cols, specs) -> np.ndarray:
        """The histograms end to end (a CPU gains nothing from one pass for all: each
        one is a pass over a few columns in cache)."""
        parts = [self.histogram(cols, attrs, shape) for attrs, shape in specs]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def uniforms(self, key, n: int, c1: int, c2: int, c3: int) -> np.ndarray:
        """u_i = uniform(philox(i, c1, c2, c3).w0) in (0, 1)."""
        return uniform(philox_range(key, n, c1, c2, c3)[0])

    def prepare(self) -> None:
        """Build the host samplers now (fit() calls this before its first charge)."""
        host_kernels.library()

    def noise_draws(self, draws, key, stream: int, max_words: int):
        """(values, status) of exact noise for the (spec, n, call) draws end to end
        (privacy.drawing.draw_many finishes WIDE elements and fails closed on FAIL):
        noise.cu built for the host when a compiler is at hand, in blocks on the host's
        cores, else the vectorized NumPy samplers (same values)."""
        lib = host_kernels.library()
        if lib is not None:
            return host_kernels.sample(lib, draws, key, stream, max_words)
        parts = [_noise.sample(spec, n, key, stream, call, max_words)
                 for spec, n, call in draws]
        return (np.concatenate([v for v, _ in parts] or [np.zeros(0, np.int64)]),
                np.concatenate([st for _, st in parts] or [np.zeros(0, np.uint8)]))

    def cdf_rows(self, cond):
        """(the rows' CDFs laid end to end, each row's last positive value): blocks of
        rows on the host's cores."""
        cond = np.ascontiguousarray(cond, dtype=np.float64)
        R, size = cond.shape
        flat, last = np.empty(R * size), np.empty(R, dtype=np.int64)
        lib = host_kernels.library()
        if lib is not None and size:  # draw.cu row by row: one pass, not six
            threads.each(lambda lo, hi: host_kernels.cdf_rows(lib, cond, flat, last, lo, hi),
                         R, size)
            return flat, last

        def rows(lo, hi):
            cdf = np.minimum(np.cumsum(cond[lo:hi], axis=1), 1.0)  # sorted: a sum past 1
            cdf[:, -1] = 1.0                                       # would not be
            cdf += np.arange(lo, hi)[:, None]
            flat[lo * size:hi * size] = cdf.reshape(-1)
            last[lo:hi] = size - 1 - np.argmax(cond[lo:hi, ::-1] > 0, axis=1)
        threads.each(rows, R, size)
        return flat, last

    def best_moves(self, X, tabs, offs, ctx):
        """(u, v, gain) of each context's best move: host_moves.cpp, blocks
        of contexts on the host's cores; None without the build (generate.moves's array
        code serves, with the same numbers)."""
        lib = host_kernels.library()
        if lib is None:
            return None
        X, tabs, offs, ctx = host_kernels.moves_inputs(X, tabs, offs, ctx)  # checked once
        U = len(X)
        out = (np.empty(U, np.int64), np.empty(U, np.int64), np.empty(U))
        threads.each(lambda lo, hi: host_kernels.best_moves(lib, X, tabs, offs, ctx, lo, hi,
                                                            out), U, 2 * X.shape[1] * len(offs))
        return out

    def ipf_table(self, p, w, ctx, tables, totals, grid: float, gap_grids):
        """None: gibbs.fit_conditional's HostIPF serves (host_ipf.cpp)."""
        return None

    def polish_table(self, X, s, tables, ctx, rank, block_cells: int, tolerance: float):
        """None: polish.one_pass serves (the host build's best moves and block gains)."""
        return None

    def plan_update(self, s, t, alpha: float):
        """(add, rem) per cell for one GUM update (arrays.plan_update), its bisection in
        host_tables.cpp when built (the same rate)."""
        lib = host_kernels.library()
        rate = None if lib is None else (lambda over, s, total: host_kernels.removal_rate(
            lib, over, s, total, BISECT_STEPS))
        return plan_update(np, s, t, alpha, rate)

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
        order = argsort_bounded(np, cell, int(np.prod(shape)))
        lib = host_kernels.library()
        if lib is not None and host_kernels.gum_apply(lib, cols, attrs, shape, order, s, add,
                                                      rem, dup_frac, key, update_id, call,
                                                      copy_cols):
            return  # gum.cu's kernels on the host: update_records's, blocks of slots
        update_records(cols, attrs, shape, order, s, add, rem, dup_frac, key, update_id, call,
                       copy_cols, feistel, philox_range)
