"""PrivSyn marginal selection: noisy InDif scores, greedy choice, clique combining.

InDif(a, b) = || M_ab - M_a x M_b / n ||_1 measures how far a pair is from
independent.  Its sensitivity is 4 per record (PrivSyn, Lemma 1), and so is that of
floor(InDif), computed exactly in integers (floor(x) - floor(y) < x - y + 1 <= 5), so
the vector of m floored scores has L1 sensitivity 4m and squared L2 sensitivity 16m,
and discrete Gaussian noise on it is exact.  The greedy step trades
the noise a marginal brings (budget rho_i ~ c_i^(2/3)) against the dependency it
would leave unexplained.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from gpu_dpsyn.core.holding import holding


COMBINE_MAX_CELLS = 5000


def noise_cost(weight_sum: float, rho: float, sensitivity: float) -> float:
    """Expected L1 noise of marginals sharing rho with rho_i ~ c_i^(2/3):
    D sqrt(sum c^(2/3) / (pi rho)) * sum c^(2/3)."""
    return sensitivity * math.sqrt(weight_sum / (math.pi * rho)) * weight_sum


def greedy_select(scores, cells, rho: float, sensitivity: float = 1.0, forced=(),
                  apart=None) -> list[int]:
    """Indices of the chosen pairs: add the pair that lowers noise + unexplained InDif
    the most (the lowest index of those tied), while any does.  apart: the candidates'
    column sets; one sharing a pair of columns with a chosen one is no longer a candidate
    (adaptive.choose).

    A candidate's new error is F(w) + (left - score), F the noise at the chosen weights
    plus its own w = cells^(2/3): among candidates of one w the best is the one of the
    highest score, so each step weighs only each w's best open candidate (a few dozen
    w at 300 columns, not 44,850 pairs, over 21,038 steps), with the same sums."""
    scores = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    w = np.asarray(cells, dtype=np.float64) ** (2.0 / 3.0)
    closed = np.zeros(len(scores), dtype=bool)
    closed[list(forced)] = True
    chosen = closed.copy()
    wsum, left = float(w[chosen].sum()), float(scores[~chosen].sum())
    err = noise_cost(wsum, rho, sensitivity) + left if wsum else left
    if not (np.isfinite(scores).all() and np.isfinite(w).all() and math.isfinite(err)
            and 0 < rho < math.inf and 0 < sensitivity < math.inf):  # (no NaN errors)
        return _greedy_plain(scores, w, rho, sensitivity, chosen, apart, wsum, left, err)
    by_pair: dict = {}  # each pair of columns: the candidates holding it
    for i, r in enumerate(apart or ()):
        for p in itertools.combinations(r, 2):
            by_pair.setdefault(p, []).append(i)
    uw, group = np.unique(w, return_inverse=True)
    order = np.lexsort((np.arange(len(w)), -scores, group))  # by w, score down, index
    ends = np.searchsorted(group[order], np.arange(len(uw)), side="right")
    head = np.searchsorted(group[order], np.arange(len(uw))).tolist()  # first open ones
    # where each run of one w and one score ends: ties are walked a run at a time
    new_run = np.ones(len(w), dtype=bool)
    new_run[1:] = (np.diff(group[order]) != 0) | (np.diff(scores[order]) != 0)
    starts = np.nonzero(new_run)[0]
    run_end = np.append(starts[1:], len(w))[np.cumsum(new_run) - 1].tolist()
    scores_l, order_l, ends_l = scores.tolist(), order.tolist(), ends.tolist()
    group_l, moved = group.tolist(), range(len(uw))  # moved: the w whose heads may close
    while True:
        for g in moved:
            while head[g] < ends_l[g] and closed[order_l[head[g]]]:
                head[g] += 1
        at = np.array(head)
        live = at < ends
        if not live.any():
            break
        fw = sensitivity * np.sqrt((wsum + uw) / (math.pi * rho)) * (wsum + uw)
        best = np.where(live, fw + (left - scores[order[np.minimum(at, len(w) - 1)]]),
                        np.inf)
        low = best.min()
        if low >= err:
            break
        j = min(_tied(fw[g], left, low, scores_l, order_l, run_end, closed, head[g],
                      ends_l[g]) for g in np.nonzero(best == low)[0])
        chosen[j] = closed[j] = True
        wsum, left, err = wsum + w[j], left - scores[j], float(low)
        moved = (group_l[j],) if apart is None else moved
        for p in itertools.combinations(apart[j], 2) if apart is not None else ():
            closed[by_pair[p]] = True
    return [int(i) for i in np.nonzero(chosen)[0]]


def _tied(f, left, low, scores, order, run_end, closed, k, end) -> int:
    """The lowest open index whose new error f + (left - score) is `low`, from position k
    (open) of one w's candidates: the errors rise along them, and of equal scores the
    first open one has the lowest index."""
    best = order[k]
    k = run_end[k]
    while k < end and f + (left - scores[order[k]]) == low:
        for i in order[k:run_end[k]]:  # a closed one is passed over (rare: a tie)
            if not closed[i]:
                best = min(best, i)
                break
        k = run_end[k]
    return best


def _greedy_plain(scores, w, rho, sensitivity, chosen, apart, wsum, left, err) -> list:
    """greedy_select over every candidate at each step: for scores, cells or a budget
    that are not finite or not positive, whose errors may not be ordered."""
    open_ = ~chosen
    pairs = None if apart is None else [set(itertools.combinations(r, 2)) for r in apart]
    while open_.any():
        new = sensitivity * np.sqrt((wsum + w) / (math.pi * rho)) * (wsum + w) \
            + (left - scores)
        new[~open_] = np.inf
        j = int(np.argmin(new))
        if new[j] >= err:
            break
        chosen[j], open_[j] = True, False
        wsum, left, err = wsum + w[j], left - scores[j], float(new[j])
        if pairs is not None:
            open_[[i for i in np.nonzero(open_)[0] if pairs[i] & pairs[j]]] = False
    return [int(i) for i in np.nonzero(chosen)[0]]


def connect_isolated(selected: list, pairs, scores, n_attrs: int) -> list:
    """Give every attribute left out of all selected pairs its highest-scoring pair (an
    attribute in no candidate pair, such as a group column, keeps none)."""
    sel = list(selected)
    covered = {a for i in sel for a in pairs[i]}
    held_by = holding(pairs)  # each attribute's pairs, in their order
    for a in range(n_attrs):
        mine = held_by.get(a, [])
        if a in covered or not mine:
            continue
        best = max(mine, key=lambda i: scores[i])
        sel.append(best)
        covered.update(pairs[best])
    return sorted(set(sel))


def combine_cliques(marginals: list, domain, max_cells: int = COMBINE_MAX_CELLS,
                    rows: float | None = None, floor=None) -> list:
    """Replace triangles of selected pairs by one 3-way marginal when it stays small and,
    given rows (the noisy row count) and floor(c, share) (the count that the noise of a
    marginal of c cells with that share of the plan's budget, ~ c^(2/3), swamps), where
    its mean cell rows / c reaches the floor.  A triple's pairs are its sums over a third
    column: each of their cells adds that column's cells' noise, so where a triple's cells
    hold less than their noise its three pairs, measured alone, are better (a 5 x 32 x 28
    triple had taken a correlation of 0.83 to 0.73 at eps 8; bench/experiments/combine)."""
    pairs = {tuple(sorted(m)) for m in marginals if len(m) == 2}
    out = [tuple(sorted(m)) for m in marginals if len(m) != 2]
    near: dict = {}  # each attribute's partners in a selected pair
    for a, b in pairs:
        near.setdefault(a, set()).add(b)
        near.setdefault(b, set()).add(a)
    # the triangles from the pairs' graph, not every triple of its attributes (4.5
    # million at 300 columns)
    tris = np.array([(a, b, c) for a, b in pairs for c in near[a] & near[b] if c > b],
                    dtype=np.int64).reshape(-1, 3)
    # those of max_cells or fewer, by cells then columns (a float product is exact up to
    # 2^53 and rounds no larger one down to max_cells): 460,000 triangles at 300 columns
    size = np.asarray(domain, dtype=np.float64)[tris].prod(axis=1)
    tris, size = tris[size <= max_cells], size[size <= max_cells]

    def weight(m):
        return math.prod(domain[a] for a in m) ** (2.0 / 3.0)
    w = sum(map(weight, out)) + sum(map(weight, pairs))  # the plan's, as c23_fractions
    for a, b, c in tris[np.lexsort((tris[:, 2], tris[:, 1], tris[:, 0], size))].tolist():
        if not ((a, b) in pairs and (a, c) in pairs and (b, c) in pairs):
            continue
        sub, cells = ((a, b), (a, c), (b, c)), domain[a] * domain[b] * domain[c]
        w_t = w - sum(map(weight, sub)) + weight((a, b, c))
        if floor is None or rows / cells >= floor(cells, weight((a, b, c)) / w_t):
            out.append((a, b, c))
            pairs -= set(sub)
            w = w_t
    return sorted(out + sorted(pairs), key=lambda m: (len(m), m))


def c23_fractions(cells, total: float, weights=None) -> list[float]:
    """Split a budget fraction proportionally to w_i c_i^(2/3) (PrivSyn's optimum)."""
    w = np.asarray(cells, dtype=np.float64) ** (2.0 / 3.0)
    if weights is not None:
        w = w * np.asarray(weights, dtype=np.float64)
    return [float(x) for x in total * w / w.sum()]


def dpsyn_plan(n_attrs: int) -> list[tuple]:
    """DPSyn (2018): every 1-way and every 2-way marginal."""
    one = [(a,) for a in range(n_attrs)]
    return one + list(itertools.combinations(range(n_attrs), 2))
