"""The sweep's and the polish's passes on the device in a few launches.

DeviceIPF (ipf.cu): gibbs.fit_conditional's IPF, three launches a target (its margin,
its ratios and gap, p scaled and normalised) and one a pass (the worst TVD, the pass's
one read), where the array code takes 37 a target and 2 a pass (counted).

DevicePass (polish.cu): the moves of polish.one_pass_masked, whose array code takes 65
launches a pass plus 30 a target (counted), in 17 whatever the number of targets: the
gain tables, the best moves, the block sizes, the proposals' priority (two sorts), then
per chunk of blocks their keys, one sort, the sorted sizes and their running sum, the
gains; and the accepted moves with every target's counts, then the pass's gain, its one
read (polish.fit_table)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.cuda.launch import THREADS, kernel, cp, strided_grid
from gpu_dpsyn.errors import BackendError

KEY32_CELLS = 1 << 32  # a chunk of blocks of at most this many cells sorts uint32 keys


class PassOps:
    """CupyBackend's sweep and polish passes (self: the backend: _sm, best_moves)."""

    def ipf_table(self, p, w, ctx, tables, totals, grid: float, gap_grids):
        """A DeviceIPF fitting p (contexts x values, float64, in place) to the targets
        `tables` (values x cells each); see gibbs.fit_conditional."""
        return DeviceIPF(self, p, w, ctx, tables, totals, grid, gap_grids)

    def polish_table(self, X, s, tables, ctx, rank, block_cells: int, tolerance: float):
        """A DevicePass moving X (contexts x values, int64, in place) towards the
        targets `tables` from their counts s (both per target, values x cells)."""
        return DevicePass(self, X, s, tables, ctx, rank, block_cells, tolerance)


class DevicePass:
    """The table of one column's polish on the device, its targets' counts end to end,
    and what stays the same over its passes (the ranks' order, the chunks of blocks)."""

    def __init__(self, backend, X, s, tables, ctx, rank, block_cells: int, tolerance: float):
        _moved_in_place("the polish's table", X, cp.int64)
        self.be, self.sm, self.X, self.tolerance = backend, backend._sm, X, float(tolerance)
        self.m, self.size, self.T = int(X.shape[0]), int(X.shape[1]), len(tables)
        cells = [int(t.shape[1]) for t in tables]
        sizes = [self.size * c for c in cells]
        start = np.cumsum([0] + sizes[:-1]).astype(np.int64)
        self.start, self.cells = cp.asarray(start), cp.asarray(np.array(cells, np.int64))
        self.offs = cp.asarray(2 * start)  # each gain table: (cells, 2 size)
        self.t = cp.concatenate([cp.asarray(t, dtype=cp.float64).reshape(-1) for t in tables])
        self.s = cp.concatenate([cp.asarray(si, dtype=cp.float64).reshape(-1) for si in s])
        self.g, self.tabs = cp.empty_like(self.t), cp.empty(2 * self.t.size)
        self.ctx = cp.ascontiguousarray(ctx, dtype=cp.int64)
        # lexsort_distinct's first sort, by the ranks: the same at every pass
        self.by_rank = cp.argsort(rank)
        # polish.all_block_gains' chunks of blocks (bounded memory): each block's offset
        # within its chunk, and the narrowest key that holds the chunk's cells
        blocks = [sizes[b // 2] for b in range(2 * self.T)]
        step = max(1, block_cells // max(self.m, 1))
        self.chunks = []
        for b0 in range(0, len(blocks), step):
            part = blocks[b0:b0 + step]
            boff = np.cumsum([0] + part[:-1]).astype(np.int64)
            self.chunks.append((b0, len(part), cp.asarray(boff), sum(part) <= KEY32_CELLS))
        # every pass's buffers, made once: the block sizes, the gains by block and
        # proposal, the accepted gains, and a chunk's keys, sorted keys and sizes
        m, most = self.m, min(step, len(blocks)) * self.m
        self.q, self.res, self.gained = cp.empty(m, cp.int64), cp.empty(len(blocks) * m), \
            cp.empty(m)
        self.keys = {narrow: (cp.empty(most, dtype), cp.empty(most, dtype))
                     for narrow, dtype in ((True, cp.uint32), (False, cp.int64))
                     if any(c[3] == narrow for c in self.chunks)}
        self.qq = cp.empty(most)

    def run(self):
        """One pass: X and the counts moved in place; returns the accepted moves' gain
        as a device scalar (0 when none: the polish stops)."""
        m, T, size, i64 = self.m, self.T, self.size, np.int64
        if m == 0:
            return cp.zeros(())
        n = int(self.t.size)
        kernel("polish.cu", "pass_tables")(strided_grid(n, self.sm), (THREADS,), (
            i64(n), np.int32(T), np.int32(size), self.start, self.cells, self.t, self.s,
            self.g, self.tabs))
        u, v, gain = self.be.best_moves(self.X, self.tabs, self.offs, self.ctx)
        q, res, gained = self.q, self.res, self.gained
        kernel("polish.cu", "pass_sizes")(strided_grid(m, self.sm), (THREADS,), (
            i64(m), np.int32(T), np.int32(size), self.start, self.cells, self.g, self.ctx,
            self.X, u, v, gain, np.float64(self.tolerance), q))
        # by gain, ties by rank (sorting.lexsort_distinct): proposal by_priority[r] is
        # r-th, as polish.one_pass_masked's priorities order them
        by_priority = self.by_rank[cp.argsort((-gain)[self.by_rank])]
        for b0, k, boff, narrow in self.chunks:
            self._gains(b0, k, boff, narrow, by_priority, u, v)
        kernel("polish.cu", "pass_accept")(strided_grid(m, self.sm), (THREADS,), (
            i64(m), np.int32(T), np.int32(size), self.start, self.cells, self.ctx, u, v, gain,
            q, res, np.float64(self.tolerance), self.X, self.s, gained))
        return gained.sum()

    def _gains(self, b0, k, boff, narrow, by_priority, u, v) -> None:
        """polish.all_block_gains for blocks b0 .. b0 + k - 1, into their rows of res."""
        m, i64, q, res = self.m, np.int64, self.q, self.res
        n, wide = k * m, np.int32(not narrow)
        key, cs = (x[:n] for x in self.keys[narrow])
        qq = self.qq[:n]
        kernel("polish.cu", "pass_keys")(strided_grid(n, self.sm), (THREADS,), (
            i64(n), i64(m), np.int32(b0), np.int32(self.T), self.cells, boff, by_priority,
            self.ctx, u, v, wide, key))
        order = cp.argsort(key)  # stable: by block and cell, then priority
        kernel("polish.cu", "pass_sorted")(strided_grid(n, self.sm), (THREADS,), (
            i64(n), i64(m), wide, key, order, by_priority, q, cs, qq))
        csum = cp.cumsum(qq)  # whole counts: exact in any order
        kernel("polish.cu", "pass_gains")(strided_grid(n, self.sm), (THREADS,), (
            i64(n), i64(m), np.int32(b0), wide, cs, qq, csum, order, by_priority, self.start,
            boff, self.g, res))


class DeviceIPF:
    """gibbs.fit_conditional's passes on the device (ipf.cu): per target its margin,
    ratios and gap, and p scaled and normalised, three launches; then the pass's worst
    TVD, one more.  p, the contexts and the targets stay there."""

    def __init__(self, backend, p, w, ctx, tables, totals, grid: float, gap_grids):
        # grid: the margins' terms' 2^K, gap_grids: each target's gaps' (ipf.on_grid)
        _moved_in_place("the IPF's p", p, cp.float64)
        self.be, self.p, self.grid = backend, p, float(grid)
        self.w = cp.ascontiguousarray(w, dtype=cp.float64)
        self.ctx = cp.ascontiguousarray(ctx, dtype=cp.int64)
        self.tables = [cp.ascontiguousarray(t, dtype=cp.float64) for t in tables]
        self.gap_grids = [float(x) for x in gap_grids]
        self.E = cp.zeros(max([t.size for t in self.tables] + [1]))
        self.ratio = cp.empty_like(self.E)
        self.gap = cp.zeros(len(tables))
        self.total = cp.asarray(np.array([max(x, 1e-300) for x in totals], np.float64))
        self.worst = cp.empty(1)

    def run(self):
        """One pass over the targets; returns its worst TVD (before each target's
        scaling), a device array of one: the pass's one read."""
        for i in range(len(self.tables)):
            self.step(i)
        kernel("ipf.cu", "ipf_worst")((1,), (1,), (np.int32(len(self.tables)), self.gap,
                                                   self.total, self.worst))
        return self.worst

    def step(self, i: int) -> None:
        """Target i: its margin from p, its ratios and gap, p scaled and normalised."""
        U, size = (int(x) for x in self.p.shape)
        t = self.tables[i]
        cells, i64, T = int(t.shape[1]), np.int64, np.int32(self.ctx.shape[1])
        E, ratio, sm = self.E[:t.size], self.ratio[:t.size], self.be._sm
        kernel("ipf.cu", "ipf_margin")(strided_grid(U * size, sm), (THREADS,), (
            i64(U), np.int32(size), self.p, self.w, np.float64(self.grid), self.ctx,
            T, np.int32(i), i64(cells), E))
        kernel("ipf.cu", "ipf_ratio")(strided_grid(t.size, sm), (THREADS,), (
            i64(t.size), E, t, np.float64(self.gap_grids[i]), ratio, self.gap[i:i + 1]))
        kernel("ipf.cu", "ipf_scale")(strided_grid(U, sm), (THREADS,), (
            i64(U), np.int32(size), self.p, ratio, self.ctx, T, np.int32(i), i64(cells)))


def _moved_in_place(what: str, a, dtype) -> None:
    """Refuse an array the kernels would misread: they move it in place through a raw
    pointer, as C-contiguous rows of `dtype`."""
    if a.ndim != 2 or a.dtype != dtype or not a.flags.c_contiguous:
        raise BackendError(f"{what} must be a C-contiguous 2-d {np.dtype(dtype).name} array, "
                           f"got {a.dtype} of shape {a.shape}")
