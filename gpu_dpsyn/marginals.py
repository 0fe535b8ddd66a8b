"""Noisy marginals: which to measure, and measuring them through the accountant."""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from .errors import DataError
from . import rng
from .privacy import Accountant
from .privacy.samplers import draw

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


def measure(backend, cols, domain, plan, fractions, accountant: Accountant, key, names,
            progress=None) -> list[Marginal]:
    """Histogram + exact integer noise for each planned marginal; each one charged
    first.  key: the 256-bit noise key."""
    out = []
    for i, (attrs, f) in enumerate(zip(plan, fractions)):
        shape = tuple(domain[a] for a in attrs)
        entry = accountant.charge(f, "marginal", [names[a] for a in attrs], int(np.prod(shape)))
        counts = backend.to_numpy(backend.histogram(cols, attrs, shape)).astype(np.float64)
        noise = draw(backend, entry.noise, counts.size, key, rng.NOISE,
                     len(accountant.ledger) - 1)
        out.append(Marginal(tuple(attrs), shape, counts + noise, entry.sigma))
        if progress is not None:
            progress.update(1)
    return out


def exact_marginals(backend, cols, domain, plan) -> list[Marginal]:
    """Noise-free marginals (for tests and for non-private baselines only)."""
    return [Marginal(tuple(a), tuple(domain[x] for x in a),
                     backend.to_numpy(backend.histogram(cols, a, tuple(domain[x] for x in a)))
                     .astype(np.float64), 0.0) for a in plan]
