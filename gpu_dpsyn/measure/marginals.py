"""Noisy marginals: which to measure, and measuring them through the accountant."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from gpu_dpsyn.errors import DataError
from gpu_dpsyn.core import rng
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.privacy.samplers import draw

DEFAULT_MAX_CELLS = 1_000_000


@dataclass
class Marginal:
    attrs: tuple  # sorted column indices (into the synthesized columns)
    shape: tuple  # domain size of each attr
    values: np.ndarray  # flat counts in C order, float64
    sigma: float  # noise std per cell (0 for an exact marginal)

    @property
    def cells(self) -> int:
        return int(np.prod(self.shape))

    @property
    def weight(self) -> float:
        """Inverse noise variance: how much this marginal counts in consistency."""
        return 1.0 / self.sigma ** 2 if self.sigma > 0 else 1e12

    def table(self) -> np.ndarray:
        return self.values.reshape(self.shape)


def dpsyn_plan(n_attrs: int) -> list[tuple]:
    """DPSyn (2018): every 1-way and every 2-way marginal."""
    one = [(a,) for a in range(n_attrs)]
    return one + list(itertools.combinations(range(n_attrs), 2))


def check_domains(plan, domain, names, max_cells: int = DEFAULT_MAX_CELLS) -> list[int]:
    """Cells of each planned marginal; a clear error for any that is too large."""
    cells = []
    for attrs in plan:
        c = int(np.prod([domain[a] for a in attrs], dtype=np.float64))
        if c > max_cells:
            cols = ", ".join(f"{names[a]} ({domain[a]} values)" for a in attrs)
            raise DataError(f"marginal over {cols} has {c:,} cells, more than max_cells="
                            f"{max_cells:,}; use fewer bins or group values in the schema")
        cells.append(c)
    return cells


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
