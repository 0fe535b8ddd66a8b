"""Utility metrics: total variation distance over k-way marginals."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .checks import integer
from .encoding import encode
from .schema import Schema


def _joint(cols, attrs, domain) -> np.ndarray:
    cell = np.zeros(len(cols[0]), dtype=np.int64)
    for a in attrs:
        cell = cell * domain[a] + cols[a].astype(np.int64)
    return np.bincount(cell, minlength=int(np.prod([domain[a] for a in attrs])))


def tvd_codes(real: list, syn: list, domain, k: int, max_sets: int | None = None,
              seed: int = 0) -> np.ndarray:
    """TVD of every (or max_sets random) k-way marginal between two coded tables."""
    if max_sets is not None:  # 0 would average nothing into NaN
        integer("max_sets", max_sets, 1)
    sets = list(itertools.combinations(range(len(domain)), k))
    if max_sets is not None and len(sets) > max_sets:
        pick = np.random.default_rng(seed).choice(len(sets), max_sets, replace=False)
        sets = [sets[i] for i in sorted(pick)]
    nr, ns = len(real[0]), len(syn[0])
    return np.array([0.5 * np.abs(_joint(real, s, domain) / nr - _joint(syn, s, domain) / ns).sum()
                     for s in sets])


def mean_tvd(real: pd.DataFrame, syn: pd.DataFrame, schema: Schema, ways=(1, 2, 3),
             max_sets: int | None = None) -> dict:
    """Mean TVD per order k on the schema's coded domain."""
    r, s = encode(real, schema), encode(syn, schema)
    dom = schema.domain
    return {k: float(tvd_codes(r, s, dom, k, max_sets).mean()) for k in ways if k <= len(dom)}


def density_score(real: list, syn: list, domain, n_sets: int = 300, seed: int = 0) -> float:
    """NIST 2018 'density' score: 1e6 * (1 - mean TVD) over random 3-way marginals."""
    if len(domain) < 3:
        return float("nan")
    return float(1e6 * (1.0 - tvd_codes(real, syn, domain, 3, n_sets, seed).mean()))


def range_query_score(real: list, syn: list, domain, n_queries: int = 300, seed: int = 0,
                      floor: float = 1e-6) -> float:
    """Mean |ln(p_real / p_syn)| over random queries on 3 attributes, each restricted to a
    random range of codes (p floored at 1e-6, as in NIST 2018).  Lower is better."""
    r = np.random.default_rng(seed)
    k = min(3, len(domain))
    out = []
    for _ in range(n_queries):
        attrs = r.choice(len(domain), k, replace=False)
        mr, ms = np.ones(len(real[0]), bool), np.ones(len(syn[0]), bool)
        for a in attrs:
            lo, hi = np.sort(r.integers(0, domain[a], 2))
            mr &= (real[a] >= lo) & (real[a] <= hi)
            ms &= (syn[a] >= lo) & (syn[a] <= hi)
        out.append(abs(np.log(max(mr.mean(), floor) / max(ms.mean(), floor))))
    return float(np.mean(out))


def per_marginal_tvd(real: list, syn: list, domain, names, k: int) -> list:
    """[(column names, TVD)] for every k-way marginal, worst first."""
    sets = list(itertools.combinations(range(len(domain)), k))
    vals = tvd_codes(real, syn, domain, k)
    return sorted(((tuple(names[a] for a in s), float(v)) for s, v in zip(sets, vals)),
                  key=lambda x: -x[1])
