"""The data passed between the stages: noisy marginals, fitted levels and value
recodings, and the integer codes records are made of.  Plain data classes; nothing here
reads a table."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpu_dpsyn.errors import DataError

DEFAULT_MAX_CELLS = 1_000_000


def code_dtype(size: int) -> np.dtype:
    """The smallest unsigned dtype that holds codes 0 .. size - 1."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if size <= np.iinfo(dt).max + 1:
            return np.dtype(dt)
    return np.dtype(np.uint64)


@dataclass
class Marginal:
    attrs: tuple  # sorted column indices (into the synthesized columns)
    shape: tuple  # domain size of each attr
    values: np.ndarray  # flat counts in C order, float64
    sigma: float  # noise std per cell (0 for an exact marginal)
    # per cell, how many noisy cells it sums (its variance: that many sigma^2), where not
    # one each: a value merged by low-count filtering sums all its members' noisy counts
    spread: np.ndarray | None = None

    @property
    def cells(self) -> int:
        return math.prod(int(d) for d in self.shape)  # (np.prod's overhead: a hot path)

    @property
    def weight(self) -> float:
        """Inverse noise variance: how much this marginal counts in consistency."""
        return 1.0 / self.sigma ** 2 if self.sigma > 0 else 1e12

    def table(self) -> np.ndarray:
        return self.values.reshape(self.shape)


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


@dataclass
class Level:
    """One level of a fit: its group columns (attribute indices, () for none) and its
    consistent noisy marginals (attrs index the table's columns, the group code g being
    column len(domain))."""
    group: tuple
    marginals: list
    measured_cells: list  # noisy cells behind each marginal's total (before merging values)
    total: float = 0.0
    standard_error: float = 0.0


@dataclass
class Recode:
    """Low-count filtering's merge of one attribute's values (estimate/filtering.py)."""
    attr: int
    lut: np.ndarray  # old code -> new code
    merged: np.ndarray  # old codes behind the last new code
    merged_p: np.ndarray  # their decode probabilities

    @property
    def size(self) -> int:
        return int(self.lut.max()) + 1

    def apply(self, xp, codes):
        """Old codes -> new codes, on the array module of `codes`."""
        return xp.asarray(self.lut.astype(code_dtype(self.size)))[codes.astype(np.int64)]
