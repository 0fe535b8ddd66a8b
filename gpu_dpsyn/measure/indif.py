"""PrivSyn's marginal selection scores: InDif, noisy on the private table or exact on a
public one.

InDif(a, b) = || M_ab - M_a x M_b / n ||_1 measures how far a pair is from
independent.  Its sensitivity is 4 per record (PrivSyn, Lemma 1), and so is that of
floor(InDif), computed exactly in integers (floor(x) - floor(y) < x - y + 1 <= 5), so
the vector of m floored scores has L1 sensitivity 4m and squared L2 sensitivity 16m,
and discrete Gaussian noise on it is exact.

With a public table of the same schema (prior-aware estimation, Tao et al. 2021, §4.2)
the pairs' dependence is read off the public records instead: InDif of every candidate
pair, scaled from the public row count to the private one's DP estimate.  Nothing private
is read, so nothing is charged.
"""
from __future__ import annotations

import itertools

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.measure.marginals import counts_source
from gpu_dpsyn.privacy.drawing import draw


def indif(backend, cols, domain, pairs) -> np.ndarray:
    """floor(InDif) of each pair, exactly: sum |n M_ab - M_a M_b| // n in integers (each
    term and the sum stay below 2 n^2 <= 2^63 for n < 2^31 rows).  Reads the private
    data: charge before calling.  cols: the encoded columns or a counts source."""
    n = None
    one = {}
    out = np.empty(len(pairs), dtype=np.int64)
    counted = counts_source(backend, cols).histograms(
        ((a, b), (domain[a], domain[b])) for a, b in pairs)
    for k, ((a, b), ab) in enumerate(zip(pairs, counted)):
        ab = ab.reshape(domain[a], domain[b]).astype(np.int64)
        n = int(ab.sum()) if n is None else n
        for x, axis in ((a, 1), (b, 0)):
            if x not in one:
                one[x] = ab.sum(axis=axis)
        dev = np.abs(n * ab - np.outer(one[a], one[b])).astype(np.uint64)
        out[k] = int(dev.sum(dtype=np.uint64)) // max(n, 1)
    return out


def measure_indif(backend, cols, domain, names, accountant, fraction, key, pairs=None):
    """Noisy InDif scores for `pairs` (default: all), charged as one measurement:
    floor(InDif) plus exact discrete Gaussian noise (cols: the encoded columns or a counts
    source; key: the 256-bit noise key)."""
    pairs = list(itertools.combinations(range(len(domain)), 2)) if pairs is None else pairs
    m = len(pairs)
    entry = accountant.charge(fraction, "indif", ["candidate pairs"], m, l1=4 * m,
                             l2_sq=16 * m)
    scores = indif(backend, cols, domain, pairs)
    noise = draw(backend, entry.noise, m, key, rng.SELECT, len(accountant.ledger) - 1)
    return pairs, (scores + noise).astype(np.float64)


def public_scores(backend, public_codes: list, domain, pairs, n_private: float) -> np.ndarray:
    """InDif of each pair on the public records (host codes in the fitted domain), scaled
    to n_private rows: InDif grows linearly with the row count at a fixed dependence."""
    n_public = len(public_codes[0])
    cols = [backend.asarray(c) for c in public_codes]
    scores = indif(backend, cols, domain, pairs).astype(np.float64)
    return scores * (max(float(n_private), 1.0) / n_public)

