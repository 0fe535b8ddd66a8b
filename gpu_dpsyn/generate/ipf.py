"""The Gibbs sweep's IPF steps (gibbs.fit_conditional): sums on an exact grid, so that
any order of adding gives the same bits on both backends, and the NumPy fit's own
layout (HostIPF), in C where the host build has it (backends/numpy/host_ipf.cpp).
Post-processing of the records and the noisy targets."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.backends.numpy import host_kernels
from gpu_dpsyn.backends.numpy.ops import argsort_bounded
from gpu_dpsyn.core import threads


class HostIPF:
    """fit_conditional's NumPy steps, the same numbers from p held transposed (values x
    contexts), each value's row contiguous, in buffers made once: strided column pairs,
    an appended column of zeros and fresh arrays were a third of a CPU fit on flights.
    E's terms are gathered into the cell order row by row before they go on the grid
    (the same products, permuted; sums on the grid are exact in any order), the ratios
    row by row from their small table, and the rows' pairwise tree adds whole rows,
    carrying an odd width's last row up as it is (x + 0 is x for x >= 0) instead of
    adding zeros."""

    def __init__(self, p, w, n: float, ctx, P=None):
        # P: p.T made already (values x contexts, C order), else a copy of p's
        self.P = np.array(p.T, order="C") if P is None else P
        self.ctx = [np.ascontiguousarray(ctx[:, i], dtype=np.int64) for i in range(ctx.shape[1])]
        self.grid = grid_scale(n)
        # w 2^K (exact: whole counts times a power of 2): rint(p w 2^K) summed, then
        # scaled by 2^-K, is on_grid's sum to the bit -- the terms and their sums are whole
        # numbers below 2^53 -- with two passes over U x size fewer
        self.lib = host_kernels.library()
        self.ahead = None  # (target, its margin) summed in advance by scale()
        if self.lib is not None:  # host_ipf.cpp: adds into the cells, no sort needed
            self.wg = np.ascontiguousarray(w * self.grid, dtype=np.float64)
            # each target's largest cell, checked against its table before a C loop
            # writes there (a negative one is refused at once)
            self.top = [int(c.max()) if len(c) else -1 for c in self.ctx]
            if any(len(c) and int(c.min()) < 0 for c in self.ctx):
                raise ValueError("negative context cells")
            return
        self.runs = [segments(c) for c in self.ctx]  # each target's cell order
        self.wg = [w[order] * self.grid for order, _, _ in self.runs]
        self.buf = np.empty_like(self.P)
        size, U = self.P.shape
        self.tree = [np.empty(((size + 1) // 2, U)), np.empty(((size + 3) // 4, U))]

    def margin(self, i: int, n_cells: int):
        """cell_sums(on_grid(p * w, n), cells of target i).T: (size, n_cells)."""
        if self.ahead is not None and self.ahead[0] == i:  # summed by the last scale
            E, self.ahead = self.ahead[1], None
            return E
        if self.lib is not None:
            self._check(i, n_cells)
            out = np.empty((self.P.shape[0], n_cells))
            threads.each(lambda lo, hi: host_kernels.ipf_margin(
                self.lib, self.P, self.wg, self.ctx[i], n_cells, 1.0 / self.grid, out, lo, hi),
                self.P.shape[0], self.P.shape[1])
            return out
        order, starts, present = self.runs[i]
        out = np.zeros((self.P.shape[0], n_cells))
        if not len(order):  # no contexts: nothing to sum
            return out
        def rows(lo, hi):  # each value's row apart: blocks of rows on the host's cores
            v = self.buf[lo:hi]
            for a in range(lo, hi):  # row by row: NumPy's 1-d take is the fast one
                np.take(self.P[a], order, out=self.buf[a])
            v *= self.wg[i]
            np.rint(v, out=v)
            out[lo:hi, present] = np.add.reduceat(v, starts, axis=1) * (1.0 / self.grid)
        threads.each(rows, self.P.shape[0], self.P.shape[1])
        return out

    def scale(self, ratio, i: int, then: int | None = None, then_cells: int | None = None):
        """p *= ratio.T[cells of target i], then p's rows normalised (rows_normalised).
        then: a target whose margin the next call of margin() asks for, summed here in
        the same reading of p (host_ipf.cpp; the same numbers as margin)."""
        P, cells = self.P, self.ctx[i]
        size, U = P.shape
        self.ahead = None
        if self.lib is not None:
            ratio = np.ascontiguousarray(ratio, dtype=np.float64)
            self._check(i, ratio.shape[1])
            if then is None:
                threads.each(lambda lo, hi: host_kernels.ipf_scale(self.lib, P, ratio, cells,
                                                                   lo, hi), U, size)
                return
            self._check(then, then_cells)
            parts = []
            threads.each(lambda lo, hi: parts.append(host_kernels.ipf_scale_margin(
                self.lib, P, ratio, cells, self.wg, self.ctx[then], then_cells, lo, hi)),
                U, size)
            E = parts[0]
            for part in parts[1:]:
                E += part  # whole numbers below 2^53: exact in any order
            self.ahead = (then, E * (1.0 / self.grid))
            return

        def rows(lo, hi):
            for a in range(lo, hi):
                np.take(ratio[a], cells, out=self.buf[a])
            P[lo:hi] *= self.buf[lo:hi]

        def contexts(lo, hi):  # the tree sums over values: blocks of contexts
            s, width, k = P[:, lo:hi], size, 0
            while width > 1:
                half = (width + 1) // 2
                out = self.tree[k][:half, lo:hi]
                np.add(s[0:width - 1:2], s[1:width:2], out=out[:width // 2])
                if width % 2:
                    out[half - 1] = s[width - 1]
                s, width, k = out, half, 1 - k
            d = s[0].copy() if width == size else s[0]  # (one value: s is P's rows)
            P[:, lo:hi] /= np.where(d > 0, d, 1.0)
        threads.each(rows, size, U)
        threads.each(contexts, U, size)

    def _check(self, i: int, n_cells: int) -> None:
        if self.top[i] >= n_cells:
            raise ValueError(f"context cells up to {self.top[i]} for a table of {n_cells}")

    def result(self):
        return np.ascontiguousarray(self.P.T)


def on_grid(xp, x, bound: float):
    """x (>= 0) rounded to a multiple of 2^-K, K as large as keeps 2 bound 2^K within
    2^53: any sum of such values totalling at most about `bound` (the rounding may add a
    little) is exact, in whatever order it is added (NumPy's pairwise sums, a GPU's tree
    or atomics), so both backends agree.  The sums here are of counts and of |E - t|
    with targets t >= 0 (consistent marginals), which bound them."""
    scale = grid_scale(bound)
    return xp.rint(x * scale) / scale


def grid_scale(bound: float) -> float:
    """on_grid's 2^K: the largest that keeps 2 bound 2^K within 2^53."""
    return 2.0 ** (52 - max(1, math.ceil(math.log2(bound + 1.0))))


def cell_sums(xp, values, cells, n_cells: int):
    """(n_cells, size): the rows of values (U x size) summed by their cell -- exact for
    whole counts or values on a grid (on_grid), so in any order: NumPy's reduceat over
    the cells' runs, a GPU's bincount."""
    size = values.shape[1]
    lib = host_kernels.library() if xp is np else None
    if lib is not None:  # host_tables.cpp: added straight into the cells, no sort
        return host_kernels.cell_sums(lib, values, cells, n_cells)
    if xp is np:
        order, starts, present = segments(cells)
        out = np.zeros((n_cells, size))
        if len(order):
            out[present] = np.add.reduceat(values[order], starts, axis=0)
        return out
    idx = (cells.astype(xp.int64)[:, None] * size + xp.arange(size)).reshape(-1)
    out = xp.zeros(n_cells * size)
    xp.add.at(out, idx, values.reshape(-1).astype(xp.float64))  # CuPy's bincount reads
    return out.reshape(n_cells, size)  # the ids' range on the host: a scatter-add does not


def rows_normalised(xp, p):
    """p's rows scaled to sum to 1, each row's sum taken by a fixed pairwise tree over
    its columns (the same additions on both backends, log2(size) array operations: a
    GPU launches few).  A row of zeros stays zeros."""
    s = p
    while s.shape[1] > 1:
        if s.shape[1] % 2:  # a zero column: x + 0 is x
            s = xp.concatenate([s, xp.zeros((s.shape[0], 1))], axis=1)
        s = s[:, 0::2] + s[:, 1::2]
    s = s[:, 0]
    return p / xp.where(s > 0, s, 1.0)[:, None]


def segments(keys, xp=np):
    """(order sorting keys, where each run of equal keys starts in it, each run's key):
    sums over the contexts of one cell as one reduceat (NumPy only: None for CuPy, whose
    cell_sums needs none)."""
    if xp is not np:
        return None
    order = argsort_bounded(np, keys)
    k = keys[order]
    starts = np.flatnonzero(np.r_[len(k) > 0, k[1:] != k[:-1]])  # none without keys
    return order, starts, k[starts]

