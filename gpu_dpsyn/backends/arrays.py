"""Array code shared by both backends, written against the array module xp (NumPy or
CuPy): the bodies each backend runs as they are, or checks its kernels against."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core.sorting import argsort_stable, first_k

BISECT_STEPS = 48  # beta to ~4e-15



def strides_of(shape) -> list[int]:
    st, acc = [], 1
    for d in reversed(shape):
        st.append(acc)
        acc *= int(d)
    return st[::-1]


def apportion(xp, v, total):
    """Integers proportional to v that sum to `total` (largest remainder, ties by index)."""
    S = v.sum()
    q = v * xp.where(S > 0, total / xp.where(S > 0, S, 1.0), 0.0)
    base = xp.floor(q)
    short = total - base.sum()
    if xp is np:  # a selection, not a sort (as plan.cu's radix select on the GPU)
        return base + first_k(-(q - base), short)
    order = argsort_stable(xp, -(q - base))
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.size, dtype=order.dtype)
    return base + (rank < short)


def plan_update(xp, s, t, alpha: float, rate=None):
    """Cells to add to (min(t-s, alpha s), or alpha t for empty cells) and to remove from
    (min(s-t, beta s), beta bisected so removals equal additions).  rate(over, s, total):
    the bisection (default removal_rate; the NumPy backend's host build has its own)."""
    s = s.astype(xp.float64)
    gap = t - s
    add = xp.where(gap > 0, xp.rint(xp.where(s > 0, xp.minimum(gap, alpha * s),
                                              xp.minimum(t, alpha * t))), 0.0)
    over = xp.where(gap < 0, -gap, 0.0)
    total = xp.minimum(add.sum(), xp.rint(over).sum())
    add = apportion(xp, add, total)
    beta = removal_rate(xp, over, s, total) if rate is None else rate(over, s, total)
    rem = apportion(xp, xp.rint(xp.minimum(over, beta * s)), total)
    return add.astype(xp.int64), rem.astype(xp.int64)


def removal_rate(xp, over, s, total):
    """beta: bisection on [0, 1] for the smallest rate with sum(rint(min(over, beta s)))
    >= total (kept at 1 if none)."""
    lo, hi = xp.zeros((), xp.float64), xp.ones((), xp.float64)
    for _ in range(BISECT_STEPS):
        mid = (lo + hi) * 0.5
        ok = xp.rint(xp.minimum(over, mid * s)).sum() >= total
        hi, lo = xp.where(ok, mid, hi), xp.where(ok, lo, mid)
    return hi

