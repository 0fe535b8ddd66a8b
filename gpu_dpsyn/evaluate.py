"""Utility metrics: total variation distance over k-way marginals."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

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
