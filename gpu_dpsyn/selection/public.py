"""Marginal selection from a public table (prior-aware estimation, Tao et al. 2021, §4.2).

With a public table of the same schema, the pairs' dependence is read off the public
table instead of being measured: InDif (selection.indif, exact) of every candidate pair on
the public records, scaled from the public row count to the private one's DP estimate (the
mean total of the noisy 1-way marginals, already measured), then PrivSyn's greedy choice
and clique combining as with private scores.  Nothing private is read, so nothing is
charged: the 10% that private InDif costs goes to the measurements.  A public table that
differs from the private one picks worse marginals: selection="private" keeps the noisy
private InDif then.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.numpy.ops import NumpyBackend
from gpu_dpsyn.selection.greedy import indif

SELECTIONS = ("auto", "public", "private")


def public_scores(public_codes: list, domain, pairs, n_private: float) -> np.ndarray:
    """InDif of each pair on the public records (codes in the fitted domain), scaled to
    n_private rows: InDif grows linearly with the row count at a fixed dependence."""
    n_public = len(public_codes[0])
    scores = indif(NumpyBackend(), public_codes, domain, pairs).astype(np.float64)
    return scores * (max(float(n_private), 1.0) / n_public)


def private_row_estimate(one_way) -> float:
    """The row count estimated from the noisy 1-way marginals (post-processing)."""
    return float(np.mean([m.values.sum() for m in one_way]))
