"""Marginals of a log-linear model by variable elimination, in NumPy, for AIM's scoring
in bench/baselines/aim.py.

AIM scores every candidate marginal against the current model each round.  mbi 2.0's
`MarkovRandomField.project` does it with JAX ops (variable_elimination); op by op on a
2-core CPU that is 20-45 ms a candidate, 20 s a round on MplsStops' 469 candidates
and most of AIM's time.  This is the same algorithm (mbi's greedy elimination order,
log-space sums, then normalised to the total) on NumPy arrays: the same marginals to
rounding, without JAX's per-op dispatch.

A factor is (attrs, log-table) with the table's axes in attrs' order; `sizes` gives
each attribute's number of values."""
from __future__ import annotations

import numpy as np


def greedy_order(sizes: dict, cliques: list, elim: list) -> list:
    """mbi's junction_tree.greedy_order: repeatedly eliminate the attribute whose
    neighbours' union has the fewest cells (first such attribute in `elim`'s order)."""
    order, unmarked, cset = [], list(elim), set(map(tuple, cliques))
    for _ in range(len(unmarked)):
        def cost(a):
            union = set().union(*[set(c) for c in cset if a in c])
            return int(np.prod([sizes[v] for v in union], dtype=np.float64))
        a = min(unmarked, key=cost)
        order.append(a)
        unmarked.remove(a)
        near = [c for c in cset if a in c]
        cset -= set(near)
        cset.add(tuple(set().union(*[set(c) for c in near]) - {a}))
    return order


def _expand(attrs: tuple, table: np.ndarray, to: tuple) -> np.ndarray:
    """The table broadcastable over `to` (a superset of attrs, in its order)."""
    t = np.transpose(table, [attrs.index(a) for a in to if a in attrs])
    dims = iter(t.shape)
    return t.reshape([next(dims) if a in attrs else 1 for a in to])


def _combine(factors: list) -> tuple:
    """The sum of log-factors over the union of their attributes."""
    to = tuple(dict.fromkeys(a for attrs, _ in factors for a in attrs))
    out = 0.0
    for attrs, table in factors:
        out = out + _expand(attrs, table, to)
    return to, np.asarray(out, dtype=np.float64)


def _logsumexp(table: np.ndarray, axis) -> np.ndarray:
    m = np.max(table, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(table - m), axis=axis))


def marginal(potentials: list, sizes: dict, query: tuple, total: float) -> np.ndarray:
    """The model's marginal on `query` (axes in its order), summing to `total`.
    potentials: [(attrs, log-table)], the model's cliques."""
    query = tuple(query)
    psi = [(tuple(a), np.asarray(t, dtype=np.float64)) for a, t in potentials]
    present = dict.fromkeys(a for attrs, _ in psi for a in attrs)
    elim = [a for a in present if a not in query]
    for z in greedy_order(sizes, [attrs for attrs, _ in psi] + [query], elim):
        near = [f for f in psi if z in f[0]]
        psi = [f for f in psi if z not in f[0]]
        attrs, table = _combine(near)
        psi.append((tuple(a for a in attrs if a != z), _logsumexp(table, attrs.index(z))))
    # attributes of the query that no potential holds are uniform (mbi's expand)
    psi.append((query, np.zeros([sizes[a] for a in query])))
    attrs, table = _combine(psi)
    table = np.transpose(table, [attrs.index(a) for a in query])
    return np.exp(table - _logsumexp(table.reshape(-1), 0)) * total
