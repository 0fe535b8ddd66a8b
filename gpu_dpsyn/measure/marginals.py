"""Noisy marginals: which to measure, and measuring them through the accountant."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.samplers import draw
from gpu_dpsyn.core.types import Marginal


class LocalCounts:
    """Exact counts of encoded columns held in memory (backend arrays): the in-memory
    implementation of a counts source.  A source answers histograms(requests), an
    iterator of int counts (NumPy, flat, C order) for (attrs, shape) requests, and
    recode(attr, recode); gpu_dpsyn.distributed.counting.DaskCounts sums per-partition
    counts instead."""

    def __init__(self, backend, cols):
        self.backend, self.cols = backend, cols

    def histograms(self, requests):
        be = self.backend
        for attrs, shape in requests:  # one at a time: at most one marginal's counts live
            yield be.to_numpy(be.histogram(self.cols, attrs, shape))

    def recode(self, attr: int, recode) -> None:
        self.cols[attr] = recode.apply(self.backend.xp, self.cols[attr])


def counts_source(backend, cols):
    """cols if it is a counts source already, else the in-memory code arrays wrapped."""
    return cols if hasattr(cols, "histograms") else LocalCounts(backend, cols)


def measure(backend, cols, domain, plan, fractions, accountant: Accountant, key, names,
            progress=None) -> list[Marginal]:
    """Histogram + exact integer noise for each planned marginal; all are charged before
    any is counted (a distributed source counts them in one pass).  cols: the encoded
    columns or a counts source; key: the 256-bit noise key."""
    shapes = [tuple(domain[a] for a in attrs) for attrs in plan]
    entries = [accountant.charge(f, "marginal", [names[a] for a in attrs], int(np.prod(shape)))
               for attrs, shape, f in zip(plan, shapes, fractions)]
    first = len(accountant.ledger) - len(entries)  # entry i draws with call first + i
    out = []
    counted = counts_source(backend, cols).histograms(zip(plan, shapes))
    for i, (attrs, shape, entry, counts) in enumerate(zip(plan, shapes, entries, counted)):
        counts = counts.astype(np.float64)
        noise = draw(backend, entry.noise, counts.size, key, rng.NOISE, first + i)
        out.append(Marginal(tuple(attrs), shape, counts + noise, entry.sigma))
        if progress is not None:
            progress.update(1)
    return out


def exact_marginals(backend, cols, domain, plan) -> list[Marginal]:
    """Noise-free marginals (for tests and for non-private baselines only)."""
    return [Marginal(tuple(a), tuple(domain[x] for x in a),
                     backend.to_numpy(backend.histogram(cols, a, tuple(domain[x] for x in a)))
                     .astype(np.float64), 0.0) for a in plan]
