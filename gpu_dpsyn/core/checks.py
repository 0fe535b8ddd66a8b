"""Parameter checks: one clear DPSynError each, run when a parameter is given, long
before any data is read or any budget is spent."""
from __future__ import annotations

import math
from collections import Counter

import numpy as np

from gpu_dpsyn.errors import DataError, ParameterError


def integer(name: str, v, lo: int, err=ParameterError) -> int:
    """v as an int >= lo (bools and integral floats refused: they are typos)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < lo:
        raise err(f"{name} must be an integer >= {lo}, got {v!r}")
    return int(v)


def positive(name: str, v, err=ParameterError) -> float:
    """v as a finite float > 0."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)) \
            or not (math.isfinite(v) and v > 0):
        raise err(f"{name} must be a finite number > 0, got {v!r}")
    return float(v)


def flag(name: str, v) -> bool:
    if not isinstance(v, (bool, np.bool_)):
        raise ParameterError(f"{name} must be True or False, got {v!r}")
    return bool(v)


def column_labels(df, what: str = "the table") -> None:
    """Column labels are distinct strings: pandas returns a frame for a duplicated label
    and the schema names columns by string, so 7 would pass for "7" and fail later."""
    labels = list(getattr(df, "columns", []))
    odd = [c for c in labels if not isinstance(c, str)]
    if odd:
        raise DataError(f"column labels of {what} must be strings, got {odd[0]!r} "
                        f"({type(odd[0]).__name__})")
    dup = sorted(c for c, k in Counter(labels).items() if k > 1)
    if dup:
        raise DataError(f"{what} has duplicate column label(s) {dup}")


def is_cudf(obj) -> bool:
    """A cuDF DataFrame or Series (checked by module, so cuDF need not be installed)."""
    return type(obj).__module__.split(".")[0] == "cudf"
