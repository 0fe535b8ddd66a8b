"""The NumPy backend's compiled host library, when a C++ compiler is at hand, and the
wrappers that call it.  From the CUDA sources themselves: the exact samplers of
noise.cu (the same words give the same noise, about 10x the vectorized NumPy samplers'
speed), the records' Philox words (host_philox.cpp) and GUM's Feistel ranks
(common.cuh), GUM's record update (gum.cu, host_gum.cpp) and the rows' CDFs (draw.cu).
Host-only: counting sorts, one-pass histograms and the draws' search (host_records.cpp,
its wrappers in host_records.py),
the Gibbs IPF's steps (host_ipf.cpp), the polish's best moves (host_moves.cpp: moves.cu's
sums and choices, summed a table row at a time) and its table sums and GUM's removal
rate (host_tables.cpp).
Each gives the NumPy body's bits, which remains the fallback; host_check.py compares
them when the library loads, and a build that disagrees is not used.

Built once per source version, compiler and CPU into ~/.cache/gpu_dpsyn
(GPU_DPSYN_CACHE overrides), like CuPy caches NVRTC builds; the IPF's, the best moves'
and the Philox words' units vectorised for this CPU's vector unit (host_build.py).
GPU_DPSYN_HOST_KERNELS=0 turns it off.
"""
from __future__ import annotations

import functools
import os
import sys

import numpy as np

from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.backends.numpy import host_build, host_check
# host_records.cpp's wrappers in this namespace too: the load check and the callers find
# every wrapper here
from gpu_dpsyn.backends.numpy.host_records import (  # noqa: F401
    COUNTING_PER_BLOCK, cdf_rows, cell_histogram, counting_argsort, counting_in_blocks,
    draw_rows, feistel)
from gpu_dpsyn.core import threads
from gpu_dpsyn.privacy.drawing import kernel_layout
from gpu_dpsyn.privacy.samplers import FAIL, check_max_words


@functools.lru_cache(maxsize=None)
def library():
    """The loaded library, or None (no compiler, build failed, or turned off): the native
    build, else (the compiler refused its flags, or it failed the load check) the plain
    one."""
    if os.environ.get("GPU_DPSYN_HOST_KERNELS", "1") == "0":
        return None
    tools = host_build.toolchain()
    if tools is None:
        return None
    for native in (True, False):
        lib = host_build.load(*tools, native)
        if lib is not None and _agrees_with_numpy(lib):
            return lib
    return None


def _agrees_with_numpy(lib) -> bool:
    """The load check (host_check.agrees) on this module's wrappers, looked up when it
    runs."""
    return host_check.agrees(lib, sys.modules[__name__])


NOISE_WORK = 64  # elements of threads.each's block an element's draw counts for


def sample(lib, draws, key, stream: int, max_words: int):
    """(values, status) of the (spec, n, call) draws end to end, as
    backends.numpy.noise.sample computes each: noise.cu's noise_draws in blocks of
    elements on the host's threads."""
    check_max_words(max_words)
    ends, params, n = kernel_layout(draws)
    out = np.empty(n, dtype=np.int64)
    status = np.full(n, FAIL, dtype=np.uint8)  # an element never written fails closed
    k = np.ascontiguousarray(key, dtype=np.uint32)
    threads.each(lambda lo, hi: lib.host_noise_draws(
        lo, hi, n, k.ctypes.data, stream, max_words, len(draws), ends.ctypes.data,
        params.ctypes.data, out.ctypes.data, status.ctypes.data), n, NOISE_WORK)
    return out, status

PHILOX_WORK = 8  # elements of threads.each's block a counter counts for (ten rounds)


def philox_range(lib, key, n: int, c1: int, c2: int, c3: int, words: int = 1):
    """philox4x32(key, 0 .. n - 1, c1, c2, c3)[:words], as philox.py computes them: blocks
    of counters on the host's threads (each word a function of its counter alone)."""
    if words not in (1, 2, 3, 4):
        raise ValueError(f"Philox gives 1 to 4 words a counter, not {words}")
    out = np.empty((words, n), dtype=np.uint32)
    threads.each(lambda lo, hi: _philox_into(lib, key, lo, hi, c1, c2, c3, out), n,
                 PHILOX_WORK)
    return tuple(out)


def philox_block(lib, key, n: int, lo: int, hi: int, c1: int, c2: int, c3: int,
                 words: int, fill: int):
    """One call of host_philox_range over counters lo .. hi - 1 of n, into words x n
    uint32 filled with `fill` (the load check reads what it wrote and what it left)."""
    out = np.full((words, n), fill, dtype=np.uint32)
    _philox_into(lib, key, lo, hi, c1, c2, c3, out)
    return out


def _philox_into(lib, key, lo: int, hi: int, c1: int, c2: int, c3: int, out) -> None:
    """host_philox_range's words of counters lo .. hi - 1 into out (words x n, uint32,
    C-contiguous), the key and counter words taken to 32 bits."""
    m = 0xFFFFFFFF
    lib.host_philox_range(lo, hi, out.shape[1], key[0] & m, key[1] & m, c1 & m, c2 & m,
                          c3 & m, out.shape[0], out.ctypes.data)


CELLS_OUTSIDE = "best moves need a gain table for each target and cells within it"


def moves_inputs(X, tabs, offs, ctx) -> tuple:
    """(X, tabs, offs, ctx) as the best moves read them (C-contiguous int64 / float64), checked
    once: a gain table of whole rows for each target, a context row for each row of X
    (best_moves checks each context's cells as it reads them: here that was a quarter
    of the polish's moves, a pass over the contexts at every pass)."""
    X, ctx, offs = (np.ascontiguousarray(a, dtype=np.int64) for a in (X, ctx, offs))
    tabs = np.ascontiguousarray(tabs, dtype=np.float64)
    if X.ndim != 2 or ctx.ndim != 2 or len(ctx) != len(X) or X.shape[1] < 1:
        raise ValueError("best moves need a table X and a context row for each of its rows")
    size, T = X.shape[1], ctx.shape[1]
    ends = np.append(offs[1:], tabs.size)
    if len(offs) != T or (ends - offs < 0).any() or ((ends - offs) % (2 * size)).any():
        raise ValueError(CELLS_OUTSIDE)
    return X, tabs, offs, ctx


def best_moves(lib, X, tabs, offs, ctx, lo: int, hi: int, out) -> None:
    """host_moves.cpp's best move of contexts lo .. hi - 1 into out = (u, v, gain), the inputs
    as moves_inputs returns them; ValueError, and nothing computed, when a context's
    cell is outside its target's table."""
    u, v, gain = out
    cells = (np.append(offs[1:], tabs.size) - offs) // (2 * X.shape[1])
    if lib.host_best_moves(lo, hi, X.shape[1], ctx.shape[1], tabs.ctypes.data,
                           offs.ctypes.data, cells.ctypes.data, ctx.ctypes.data, X.ctypes.data,
                           u.ctypes.data, v.ctypes.data, gain.ctypes.data) != 0:
        raise ValueError(CELLS_OUTSIDE)


def ipf_margin(lib, P, wg, cells, n_cells: int, inv_grid: float, out, lo: int, hi: int):
    """host_ipf.cpp: out[a] = the sums of rint(P[a] wg) by cell, times inv_grid, for rows
    lo .. hi - 1.  P (values x contexts) and out (values x n_cells) float64, wg float64
    and cells int64 per context, all C-contiguous, cells in [0, n_cells): the caller's
    (ipf.HostIPF) to ensure."""
    lib.host_ipf_margin(lo, hi, P.shape[1], P.ctypes.data, wg.ctypes.data, cells.ctypes.data,
                        n_cells, inv_grid, out.ctypes.data)


def allowed_transposed(lib, ctx, tables, size: int):
    """host_ipf.cpp: gibbs.allowed(ctx, tables, size).T, C-contiguous (values x contexts),
    in one pass over the contexts with the targets' rules decided on their tables."""
    ctx = np.ascontiguousarray(ctx, dtype=np.int64).reshape(len(ctx), len(tables))
    U, T = ctx.shape
    if any(t.shape[0] != size for t in tables):
        raise ValueError("allowed needs a (values x cells) table for each context column")
    for i, t in enumerate(tables):
        if U and (int(ctx[:, i].min()) < 0 or int(ctx[:, i].max()) >= t.shape[1]):
            raise ValueError("context cells outside their table")
    pos = [np.asarray(t) > 0 for t in tables]
    eff = np.concatenate([(q | ~q.any(axis=0, keepdims=True)).reshape(-1) for q in pos] or
                         [np.zeros(0, bool)]).astype(np.uint8)
    pos_flat = np.concatenate([q.reshape(-1) for q in pos] or [np.zeros(0, bool)]).astype(np.uint8)
    offs = np.cumsum([0] + [q.size for q in pos[:-1]]).astype(np.int64)
    cells = np.array([t.shape[1] for t in tables], dtype=np.int64)
    P = np.empty((size, U))
    lib.host_allowed(U, size, T, eff.ctypes.data, pos_flat.ctypes.data, offs.ctypes.data,
                     cells.ctypes.data, ctx.ctypes.data, P.ctypes.data)
    return P


def ipf_scale(lib, P, ratio, cells, lo: int, hi: int):
    """host_ipf.cpp: P[a, u] *= ratio[a, cells[u]], then each context's column divided by
    its pairwise-tree sum where positive, for contexts lo .. hi - 1 (as ipf_margin)."""
    lib.host_ipf_scale(lo, hi, P.shape[0], P.shape[1], P.ctypes.data, ratio.ctypes.data,
                       cells.ctypes.data, ratio.shape[1])


def cell_sums(lib, values, cells, n_cells: int):
    """host_tables.cpp: (n_cells, size), the rows of values (U x size) added by their
    cell, straight into it: for whole counts or values on a grid (ipf.cell_sums)."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    cells = np.ascontiguousarray(cells, dtype=np.int64)
    U, size = values.shape
    if len(cells) != U or (U and (int(cells.min()) < 0 or int(cells.max()) >= n_cells)):
        raise ValueError("cell_sums needs a cell in [0, n_cells) for each row")
    out = np.empty((n_cells, size))
    lib.host_cell_sums(U, size, values.ctypes.data, cells.ctypes.data, n_cells,
                       out.ctypes.data)
    return out


def removal_rate(lib, over, s, total, steps: int):
    """host_tables.cpp: arrays.removal_rate's bisection (the same beta: its sums are of
    whole numbers), as a 0-d float64 array like NumPy's."""
    over, s = (np.ascontiguousarray(x, dtype=np.float64) for x in (over, s))
    if over.shape != s.shape:
        raise ValueError("removal_rate needs over and s alike")
    return np.array(lib.host_removal_rate(over.size, over.ctypes.data, s.ctypes.data,
                                          float(total), int(steps)))


def move_blocks(lib, X, rows, u, v, c, g, tables_cells) -> tuple:
    """host_tables.cpp: polish.block_sizes and polish.target_blocks' blocks from the
    proposals' rows of X, values u -> v and cells c (per target) with g = t - s (per
    target, values x cells): (q, the blocks as move_gains takes them), without the
    blocks' cells as arrays.  Every index is checked here: the loops read through them."""
    X = np.ascontiguousarray(X, dtype=np.int64)
    rows, u, v = (np.ascontiguousarray(a, dtype=np.int64) for a in (rows, u, v))
    c = [np.ascontiguousarray(ci, dtype=np.int64) for ci in c]
    g = [np.ascontiguousarray(gi, dtype=np.float64) for gi in g]
    m, size = len(rows), X.shape[1]
    if X.ndim != 2 or len(c) != len(g) or any(len(a) != m for a in [u, v, *c]) or any(
            gi.shape != (size, n) for gi, n in zip(g, tables_cells)) or (m and (
            min(int(a.min()) for a in (rows, u, v, *c)) < 0 or int(rows.max()) >= len(X)
            or max(int(u.max()), int(v.max())) >= size
            or any(int(ci.max()) >= n for ci, n in zip(c, tables_cells)))):
        raise ValueError("move_blocks needs each proposal's row, values and cells within "
                         "the table and the targets")
    q = np.empty(m, dtype=np.int64)
    cells = np.array(tables_cells, dtype=np.int64)
    ctxp = np.array([ci.ctypes.data for ci in c], dtype=np.uint64)
    gp = np.array([gi.ctypes.data for gi in g], dtype=np.uint64)
    lib.host_block_sizes(m, len(c), rows.ctypes.data, u.ctypes.data, v.ctypes.data,
                         X.ctypes.data, size, ctxp.ctypes.data, gp.ctypes.data, cells.ctypes.data,
                         q.ctypes.data)
    return q, [(w, ci, n, gi, leaving) for ci, gi, n in zip(c, g, tables_cells)
               for w, leaving in ((u, True), (v, False))]


def move_gains(lib, by_priority, blocks, q) -> list:
    """host_tables.cpp: polish.all_block_gains for move_blocks' blocks (w, ci, cells, g,
    leaving), each cell w cells + ci (checked there): each block a pass over the
    proposals in priority order with each cell's records so far, no sort (whole counts:
    the same numbers); the blocks on the host's threads."""
    by_priority = np.ascontiguousarray(by_priority, dtype=np.int64)
    m = len(by_priority)
    if len(q) != m or (m and (int(by_priority.min()) < 0 or int(by_priority.max()) >= m
                              or not (np.bincount(by_priority, minlength=m) == 1).all())):
        raise ValueError("move_gains needs an order of the proposals")
    out = [np.empty(m) for _ in blocks]

    def some(lo, hi):
        for k in range(lo, hi):
            w, ci, cells, g, leaving = blocks[k]
            lib.host_move_gains(m, by_priority.ctypes.data, w.ctypes.data, ci.ctypes.data,
                                cells, q.ctypes.data, g.ctypes.data, 1.0 if leaving else -1.0,
                                g.size, out[k].ctypes.data)
    threads.each(some, len(blocks), m)
    return out


SLOT_WORK = 64  # elements of threads.each's block a GUM slot counts for (Philox words)


def gum_apply(lib, cols, attrs, shape, order, s, add, rem, dup_frac: float, key,
              update_id: int, call: int, copy_cols=None) -> bool:
    """host_gum.cpp: backends.numpy.ops.NumpyBackend.gum_apply's update (gum.cu's kernels,
    blocks of slots on the host's threads), with order the records' (cell, index) order
    (a permutation: the blocks read and write apart only then).  False, and nothing
    changed, where a column is not 8-, 16- or 32-bit unsigned and contiguous (the NumPy
    body serves) or a marginal has more than 3 columns."""
    group = list(range(len(cols))) if copy_cols is None else list(copy_cols)
    if len(attrs) > 3 or any(c.dtype.kind != "u" or c.itemsize > 4 or
                             not c.flags.c_contiguous for c in cols):
        return False
    s, add, rem = (np.ascontiguousarray(x, dtype=np.int64) for x in (s, add, rem))
    order = np.ascontiguousarray(order, dtype=np.int64)
    total = int(add.sum())
    ncells = int(np.prod(shape))
    # what the loops index by, checked first: a cell count per cell, the order of every
    # record, removals within each cell and at least as many as the slots, and no cell
    # both gaining and losing records (a donor could be a removed record: a race)
    n = len(cols[0])
    if not (len(s) == len(add) == len(rem) == ncells and len(order) == int(s.sum()) == n
            and all(len(c) == n for c in cols) and all(0 <= a < len(cols) for a in attrs)
            and all(0 <= j < len(cols) for j in group) and len(attrs) == len(shape)
            and (not n or (int(order.min()) >= 0 and int(order.max()) < n))
            and (add >= 0).all() and (rem >= 0).all() and (rem <= s).all()
            and int(rem.sum()) >= total and not ((add > 0) & (rem > 0)).any()):
        raise ValueError("GUM's update needs counts, additions and removals per cell, "
                         "removals within each cell's records and as many as the additions")
    offset, cumrem, cumadd = np.cumsum(s) - s, np.cumsum(rem), np.cumsum(add)
    colptr = np.array([cols[j].ctypes.data for j in group], dtype=np.uint64)
    colsize = np.array([cols[j].itemsize for j in group], dtype=np.int32)
    allptr = np.array([c.ctypes.data for c in cols], dtype=np.uint64)
    allsize = np.array([c.itemsize for c in cols], dtype=np.int32)
    a = list(attrs) + [0] * (3 - len(attrs))
    st = strides_of(shape) + [1] * (3 - len(attrs))
    dims = [int(d) for d in shape] + [1] * (3 - len(attrs))
    removed = np.empty(max(total, 1), dtype=np.int64)
    m = 0xFFFFFFFF
    rest = (total, order.ctypes.data, len(s), s.ctypes.data, offset.ctypes.data,
            rem.ctypes.data, cumrem.ctypes.data, cumadd.ctypes.data, key[0] & m, key[1] & m,
            update_id & m, call & m, float(dup_frac), colptr.ctypes.data, colsize.ctypes.data,
            len(group), allptr.ctypes.data, allsize.ctypes.data, len(attrs), *a, *st, *dims,
            removed.ctypes.data)
    for phase in (0, 1):  # every removal, then every fill: slots apart on the host's cores
        threads.each(lambda lo, hi: lib.host_gum_apply(lo, hi, phase, *rest), total,
                     SLOT_WORK)
    return True


def ipf_scale_margin(lib, P, ratio, cells, wg, next_cells, n_next: int, lo: int, hi: int):
    """host_ipf.cpp: ipf_scale for contexts lo .. hi - 1, then their part of the next
    target's margin as whole numbers (values x n_next; not yet scaled by 2^-K)."""
    part = np.empty((P.shape[0], n_next))
    lib.host_ipf_scale_margin(lo, hi, P.shape[0], P.shape[1], P.ctypes.data, ratio.ctypes.data,
                              cells.ctypes.data, ratio.shape[1], wg.ctypes.data,
                              next_cells.ctypes.data, n_next, part.ctypes.data)
    return part
