"""Noisy marginals: which to measure, and measuring them through the accountant."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.batching import capped_runs
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.drawing import draw_many
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
        for batch in batches(requests):  # one launch and one read a batch (bounded memory)
            counts = be.to_numpy(be.histograms(self.cols, batch))
            ends = np.cumsum([math.prod(shape) for _, shape in batch])
            yield from np.split(counts, ends[:-1])

    def recode(self, attr: int, recode) -> None:
        self.cols[attr] = recode.apply(self.backend.xp, self.cols[attr])


BATCH_CELLS = 1 << 22  # cells counted at once (32 MiB of int64 counts)


def batches(requests, cells: int = BATCH_CELLS):
    """The (attrs, shape) requests in runs of consecutive ones of at most `cells` cells
    in all (a larger one alone), in order."""
    return capped_runs(((tuple(attrs), tuple(shape)) for attrs, shape in requests),
                       lambda request: math.prod(request[1]), cells)


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
    counted = counts_source(backend, cols).histograms(zip(plan, shapes))
    out, done = [], 0
    for batch in batches(zip(plan, shapes)):  # the noise of a batch in one backend call
        draws = [(entries[i].noise, math.prod(shapes[i]), first + i)
                 for i in range(done, done + len(batch))]
        for i, noise in enumerate(draw_many(backend, draws, key, rng.NOISE), done):
            counts = next(counted).astype(np.float64)
            out.append(Marginal(tuple(plan[i]), shapes[i], counts + noise, entries[i].sigma))
            if progress is not None:
                progress.update(1)
        done += len(batch)
    return out


def exact_marginals(backend, cols, domain, plan) -> list[Marginal]:
    """Noise-free marginals (for tests and for non-private baselines only)."""
    return [Marginal(tuple(a), tuple(domain[x] for x in a),
                     backend.to_numpy(backend.histogram(cols, a, tuple(domain[x] for x in a)))
                     .astype(np.float64), 0.0) for a in plan]
