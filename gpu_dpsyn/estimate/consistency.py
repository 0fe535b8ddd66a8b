"""Make noisy marginals agree (PriView / DPSyn) and non-negative.

Consistency: for every intersection of attribute sets, smallest first, every
marginal containing it is moved to the inverse-variance weighted mean of the
projections, the difference spread evenly over the cells that project onto it.
Non-negativity: norm_sub (project onto the simplex of the same total) early,
norm_cut (zero negatives, absorb their mass from the smallest cells) late.
Repeat until no cell is negative.
"""
from __future__ import annotations

import itertools

import numpy as np

from gpu_dpsyn.core.holding import holding
from gpu_dpsyn.core.types import Marginal
from gpu_dpsyn.core.summing import left_sum

GATHER_CELLS = 1 << 12  # marginals up to this many cells take their changes by an index


def norm_sub(v: np.ndarray, total: float | None = None) -> np.ndarray:
    """Euclidean projection onto {x >= 0, sum x = total}: x = max(v - theta, 0)."""
    total = float(v.sum()) if total is None else float(total)
    if total <= 0:
        return np.zeros_like(v)
    u = np.sort(v)[::-1]
    css = np.cumsum(u) - total
    k = np.nonzero(u - css / np.arange(1, u.size + 1) > 0)[0][-1]
    return np.maximum(v - css[k] / (k + 1), 0.0)


def norm_cut(v: np.ndarray) -> np.ndarray:
    """Zero the negatives, then take their mass from the smallest positive cells."""
    total = float(v.sum())
    if total <= 0:
        return np.zeros_like(v)
    out = np.maximum(v, 0.0)
    debt = out.sum() - total
    if debt <= 0:
        return out
    pos = np.nonzero(out > 0)[0]
    pos = pos[np.argsort(out[pos], kind="stable")]
    cum = np.cumsum(out[pos])
    k = int(np.searchsorted(cum, debt))
    out[pos[:k]] = 0.0
    out[pos[k]] -= debt - (cum[k - 1] if k else 0.0)
    return out


def _subsets(marginals) -> list[tuple]:
    """All intersections of two or more of the marginals' attribute sets, and the empty
    set.  S is one exactly where the sets holding S meet in S itself (S is then their
    intersection; an intersection of a family is held by every member), so only the
    subsets of each set are tried, each against the sets holding its attributes (an index
    by attribute): closing the pairwise intersections under intersection took 111 s at
    300 columns (a probe's profile)."""
    sets = sorted({frozenset(m.attrs) for m in marginals}, key=sorted)
    held_by = holding(sets)
    found = {frozenset()}
    for s in sets:
        for k in range(1, len(s)):  # (s itself is held by s alone: sets are distinct)
            for sub in itertools.combinations(sorted(s), k):
                if frozenset(sub) in found:
                    continue
                held = set(held_by[sub[0]]).intersection(*(held_by[a] for a in sub[1:]))
                if len(held) > 1 and frozenset.intersection(*(sets[i] for i in held)) \
                        == frozenset(sub):
                    found.add(frozenset(sub))
    return sorted((tuple(sorted(s)) for s in found), key=lambda s: (len(s), s))


def project_table(m: Marginal, sub: tuple) -> np.ndarray:
    axes = tuple(i for i, a in enumerate(m.attrs) if a not in sub)
    return m.table().sum(axis=axes) if axes else m.table()


def consist_plan(marginals: list[Marginal], subsets, total: float | None = None) -> list:
    """What consist's passes need, the same at every pass: for each subset held by two
    marginals or more (the empty set also when a total is given), the subset, the sum of
    the marginals' weights, and for each marginal holding it: the marginal, its shape,
    the axes summed away, its weight over the cells collapsed into each of the subset's,
    those cells, each cell's projected cell (None: the subset is the marginal's own
    attributes) and each cell's share of that cell's change where the cells' variances
    differ (Marginal.spread; None: even shares)."""
    plan = []
    held_by = holding(m.attrs for m in marginals)
    for sub in subsets:
        views = [marginals[i] for i in held_by.get(sub[0], ())
                 if set(sub) <= set(marginals[i].attrs)] if sub else list(marginals)
        if len(views) < 2 and (sub or total is None):
            continue
        entries = []
        for m in views:
            collapsed = m.cells // int(np.prod([m.shape[m.attrs.index(a)] for a in sub] or [1]))
            axes = tuple(i for i, a in enumerate(m.attrs) if a not in sub)
            kept = [d if a in sub else 1 for a, d in zip(m.attrs, m.shape)]
            # a small marginal's cells' projected cells: its change is added to the flat
            # values (the same sums as broadcast over its table, in fewer calls: 33,000
            # entries a pass at 300 columns); a large one's broadcasts (no index to keep)
            cell = np.broadcast_to(np.arange(int(np.prod(kept))).reshape(kept), m.shape) \
                .reshape(-1) if sub and axes and m.cells <= GATHER_CELLS else None
            # inverse variance of each projected cell: the noisy cells it sums; a change
            # of a projected cell is shared by its cells as their variances are (least
            # squares), evenly where every cell is one noisy count
            share, noisy = None, collapsed
            if m.spread is not None:
                spread = m.spread.reshape(m.shape)
                summed = spread.sum(axis=axes, keepdims=True) if axes else spread
                share = spread / summed  # sums to 1 over each projected cell's cells
                noisy = summed.reshape([d for a, d in zip(m.attrs, m.shape) if a in sub])
            entries.append((m, tuple(m.shape), axes, m.weight / noisy, collapsed, kept,
                            cell, share if cell is None or share is None else
                            share.reshape(-1)))
        plan.append((sub, left_sum(e[3] for e in entries), entries))
    return plan


def consist(marginals: list[Marginal], subsets, total: float | None = None,
            plan: list | None = None) -> None:
    """One pass of weighted-mean agreement, in place.  plan: consist_plan(marginals,
    subsets, total), made once by a caller that makes many passes."""
    reduce = np.add.reduce  # ndarray.sum's own sums, called without its wrappers
    for sub, weights, entries in consist_plan(marginals, subsets, total) \
            if plan is None else plan:
        proj = [reduce(m.values.reshape(shape), axes) if axes else m.values.reshape(shape)
                for m, shape, axes, *_ in entries]
        if not sub and total is not None:
            target = np.asarray(float(total))
        else:
            target = left_sum([e[3] * p for e, p in zip(entries, proj)]) / weights
        for (m, shape, _, _, c, kept, cell, share), p in zip(entries, proj):
            diff = (target - p) / c if share is None else target - p
            if cell is None:
                diff = diff.reshape(kept)
                m.values = (m.values.reshape(shape) +
                            (diff if share is None else diff * share)).reshape(-1)
            else:
                diff = diff.reshape(-1)[cell]
                m.values = m.values + (diff if share is None else diff * share)


def negative_share(m: Marginal) -> float:
    """Mass below zero relative to the marginal's total."""
    tot = float(m.values.sum())
    return float(-np.minimum(m.values, 0.0).sum()) / tot if tot > 0 else float("inf")


def total_standard_error(marginals: list[Marginal]) -> float:
    """Standard error of the common total make_consistent returns: the mean of the
    marginals' totals weighted 1/(c sigma^2), a total of c noisy cells having variance
    c sigma^2 (c: its cells, or the noisy cells they sum where merged values' cells sum
    several, Marginal.spread: the weights consistency gives them).  Noise levels and
    domains only: public."""
    cells = [m.cells if m.spread is None else float(m.spread.sum()) for m in marginals]
    w = np.array([m.weight / c for c, m in zip(cells, marginals)])
    var = np.array([c * m.sigma ** 2 for c, m in zip(cells, marginals)])
    return float(np.sqrt((w * w * var).sum()) / w.sum()) if w.sum() > 0 else 0.0


def make_consistent(marginals: list[Marginal], total: float | None = None,
                    max_rounds: int = 500, tol: float = 1e-3, cut_after: float = 0.5) -> float:
    """Consistency + non-negativity until no marginal has more than `tol` of its mass
    below zero (then the remainder is clipped); returns the common total."""
    subsets = _subsets(marginals)
    plan = consist_plan(marginals, subsets, total)
    for r in range(max_rounds):
        consist(marginals, subsets, total, plan)
        if max(negative_share(m) for m in marginals) <= tol:
            break
        late = r >= cut_after * max_rounds
        for m in marginals:
            m.values = norm_cut(m.values) if late else norm_sub(m.values)
    tot = float(np.mean([m.values.sum() for m in marginals]))
    for m in marginals:  # clip what is left, keeping each total
        m.values = norm_sub(m.values, m.values.sum())
    return tot
