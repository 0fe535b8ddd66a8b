"""Each context's best single move for the polish (polish.py has the method): what one
record gains leaving or entering each value, summed over the targets, and the move of
the largest gain.  Every context on its own, so NumPy takes blocks of them on the host's
cores (core.threads) and a device takes all at once: the same numbers either way."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core import threads


def best_moves_of(X, g, ctx, xp=np, backend=None):
    """Each context's best single move (u, v, gain) for the table X, with g = t - s per
    target and ctx each context's cells: the backend's fused body where it has one
    (moves.cu on a device, host_moves.cpp on the host: nothing of U x 2 size stored; on
    the host a quarter of the polish's time went to storing and re-reading those gains),
    else best_moves(record_gains): the same numbers."""
    tables = gain_tables(g, xp)
    if backend is not None and tables:
        tabs = xp.concatenate([t.reshape(-1) for t in tables])
        offs = np.cumsum([0] + [t.size for t in tables[:-1]]).astype(np.int64)
        got = backend.best_moves(xp.ascontiguousarray(X, dtype=xp.int64), tabs, offs,
                                 xp.ascontiguousarray(ctx, dtype=xp.int64))
        if got is not None:
            return got
    return best_moves(X, record_gains(g, ctx, xp, tables), xp)


def gain_tables(g, xp=np) -> list:
    """Per target, what one record gains leaving (the first size columns) or entering (the
    rest) each value in each cell of the target's other columns, (cells, 2 size): with
    g = t - s a cell gains |g| - |g + 1| leaving and |g| - |g - 1| entering, that is
    clip(-2g - 1, -1, 1) and clip(2g - 1, -1, 1)."""
    return [xp.concatenate([xp.clip(-2.0 * gi - 1.0, -1.0, 1.0).T,
                            xp.clip(2.0 * gi - 1.0, -1.0, 1.0).T], axis=1) for gi in g]


def record_gains(g, ctx, xp=np, tables=None):
    """What one record of each context gains leaving (the first size columns) or entering
    (the rest) each value (gain_tables), summed over the targets in order, element by
    element (the same on both backends); leaving and entering side by side, so that a
    target takes one gather."""
    tables = gain_tables(g, xp) if tables is None else tables

    def contexts(lo, hi):  # every context on a device; blocks of them on the host's cores
        part = tables[0][ctx[lo:hi, 0]]
        for i in range(1, len(tables)):
            part += tables[i][ctx[lo:hi, i]]
        return part
    if xp is not np or not tables:
        return contexts(0, len(ctx)) if tables else None
    LA = np.empty((len(ctx), tables[0].shape[1]))
    threads.each(lambda lo, hi: LA.__setitem__(slice(lo, hi), contexts(lo, hi)), len(ctx),
                 LA.shape[1])
    return LA


def best_moves(X, LA, xp=np):
    """Each context's best single move (u, v, gain): u among its values present, v any
    other.  LA: what one record gains leaving (the first size columns) or entering (the
    rest) each (context, value), U x 2 size; overwritten.  Leaving and entering are
    searched together: one argmax over the last axis each time, not two.  Each context
    on its own: on NumPy, blocks of them on the host's cores."""
    if xp is not np:
        return _best_moves(X, LA, xp)
    U = len(X)
    u, v, gain = np.empty(U, np.intp), np.empty(U, np.intp), np.empty(U)

    def contexts(lo, hi):
        u[lo:hi], v[lo:hi], gain[lo:hi] = _best_moves(X[lo:hi], LA[lo:hi], np)
    threads.each(contexts, U, LA.shape[1])
    return u, v, gain


def _best_moves(X, LA, xp):
    U, size = X.shape
    LA = LA.reshape(U, 2, size)
    LA[:, 0] = xp.where(X > 0, LA[:, 0], -xp.inf)
    rows = xp.arange(U)
    first = first_max(xp, LA)
    u1, v1 = first[:, 0], first[:, 1]
    same = u1 == v1
    # u1 == v1: the better of (u1, the second v) and (the second u, v1)
    LA2 = LA.copy()
    if xp is np:  # each row's element by a flat index: NumPy's 1-d take/put, not 2-d
        # fancy indexing (the same elements, 4x faster)
        at = rows * (2 * size)
        LA2.reshape(-1)[at + u1] = -np.inf
        LA2.reshape(-1)[at + size + v1] = -np.inf
        flat = LA.reshape(-1)

        def gain(u, v):
            return flat.take(at + u) + flat.take(at + size + v)
    else:
        LA2[rows, 0, u1] = -xp.inf
        LA2[rows, 1, v1] = -xp.inf
        L, A = LA[:, 0], LA[:, 1]

        def gain(u, v):
            return L[rows, u] + A[rows, v]
    second = first_max(xp, LA2)
    del LA2
    u2, v2 = second[:, 0], second[:, 1]
    g_a, g_b = gain(u1, v2), gain(u2, v1)
    u = xp.where(same & (g_b > g_a), u2, u1)
    v = xp.where(same & ~(g_b > g_a), v2, v1)
    return u, v, gain(u, v)


def first_max(xp, M):
    """The first index along the last axis holding its largest value.  The gains tie
    often (sums of +-1), so which of the tied the backend's argmax picks decides the
    moves: NumPy's is documented to be the first; elsewhere it is made so by exact
    operations (a max, then the least index attaining it), whatever the reduction's
    order."""
    if xp is np:
        return np.argmax(M, axis=-1)
    m = M.max(axis=-1, keepdims=True)
    return xp.where(M == m, xp.arange(M.shape[-1]), M.shape[-1]).min(axis=-1)
