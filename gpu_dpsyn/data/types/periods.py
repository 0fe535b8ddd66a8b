"""Periods (pandas' Period: a month "2021-03", a day, an hour) in a datetime column, read
as their first instant, as the text "2021-03" reads: each had been no date (invalid, its
row dropped), every row of a period column dropped without a word.  Value by value in an
object column, so a column of periods and one of the same periods beside a record of
text read alike (the row-local rule, data/repair.py)."""
from __future__ import annotations

import pandas as pd


# what pandas' infer_dtype says of an object column that holds no Period
_NO_PERIOD = {"string", "bytes", "empty", "floating", "integer", "mixed-integer-float",
              "decimal", "complex", "boolean", "datetime", "date", "timedelta", "time"}


def as_times(s: pd.Series) -> pd.Series:
    """s with each Period as its start (naive, as the period is); the rest as it is."""
    if isinstance(s.dtype, pd.PeriodDtype):
        return s.dt.start_time
    if s.dtype != object or pd.api.types.infer_dtype(s, skipna=True) in _NO_PERIOD:
        return s  # (one pass in C: text is not walked value by value in Python)
    is_period = s.map(lambda v: isinstance(v, pd.Period)).to_numpy(dtype=bool)
    if not is_period.any():
        return s
    s = s.copy()
    s[is_period] = [v.start_time for v in s[is_period]]
    return s
