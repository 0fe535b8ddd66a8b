"""Codes for a missing value (-1, 999, "?", "unknown"): a nullable column's
"missing_values" lists them, and every reader takes a data value matching one (as a
categorical value is matched: 999, "999" and "999.0" alike) as missing, each value alone
(the row-local rule of data/repair.py: no record changes how another is read).  A code
must not be data too: not a listed category, not inside a numeric column's range (there
it would hide real values)."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from gpu_dpsyn.data.matching import factorized, number_alone, plain, value_codes
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import SchemaError


def parse(name: str, spec: dict, col) -> list | None:
    """The column's "missing_values" as plain values, or None; refused where a code would
    be data too, or the column cannot hold a missing value."""
    given = spec.get("missing_values")
    if given is None:
        return None
    if not isinstance(given, list) or not given or any(
            isinstance(v, bool) or not isinstance(v, (str, int, float)) for v in given):
        raise SchemaError(f"column {shown(name)}: 'missing_values' must be a non-empty list of "
                          f"codes (text or numbers), got {shown(given)}")
    if not col.nullable:
        raise SchemaError(f"column {shown(name)}: 'missing_values' reads its codes as "
                          "missing: the column must be \"nullable\": true")
    values = [plain(v) for v in given]
    if col.kind == "categorical":  # as the data is matched: "1.0" is the listed 1
        both = next((v for v, c in zip(values, value_codes(values, col)) if c >= 0), None)
        if both is not None:
            raise SchemaError(f"column {shown(name)}: {shown(both)} is both in 'values' and in "
                              "'missing_values'; give it one meaning")
    elif col.kind == "numeric":
        lo, hi = col.value_range
        inside = next((v for v, x in zip(values, _numbers(pd.Series(values, dtype=object)))
                       if lo <= x <= hi), None)
        if inside is not None:
            raise SchemaError(f"column {shown(name)}: the code {shown(inside)} lies inside its "
                              f"range [{lo:g}, {hi:g}], where it would hide real values; a "
                              "code for missing lies outside it")
    return values


def blank(s: pd.Series, col) -> tuple[pd.Series, np.ndarray | None]:
    """(s with the values matching the column's codes missing, their mask; None where the
    column lists none)."""
    if not col.missing_values:
        return s, None
    if type(s).__module__.split(".")[0] == "cudf":
        s = s.to_pandas()
    codes, uniques = factorized(s)
    hit = value_codes(uniques, SimpleNamespace(values=col.missing_values)) >= 0
    mask = np.append(hit, False)[np.asarray(codes)]  # (factorize's -1: missing already)
    numbers = [v for v in col.missing_values if not isinstance(v, str)]
    if col.kind == "numeric" and numbers:  # a number read as the column reads it: "0999"
        mask |= np.isin(_numbers(s), numbers)
    return (s.mask(mask) if mask.any() else s), mask


def _numbers(s: pd.Series) -> np.ndarray:
    """Each value as a number (NaN where it is none), each read alone."""
    try:
        x = pd.to_numeric(s, errors="coerce")
    except (TypeError, ValueError, OverflowError):  # an object pandas cannot even coerce
        x = s.map(number_alone)
    return pd.Series(x).to_numpy(dtype=np.float64, na_value=np.nan)
