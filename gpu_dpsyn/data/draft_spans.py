"""Numbers that are the time between two dates of their record (a length of stay in days
beside admission and discharge, a trip's minutes beside pickup and drop-off), said on
their draft lines (data.inference): no column type derives one, and measured apart from
the dates the synthetic rows break the rule (a hospital table at eps 1: los_days was its
discharge less its admission, in calendar days, on 8% of the synthetic rows).  Read off
the private data, as every draft is: NOT private."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.data.text import leaving_out
from gpu_dpsyn.data.types import missing
from gpu_dpsyn.data.types.datetime import to_epoch
from gpu_dpsyn.errors import DataError

UNITS = (("days", 86400), ("hours", 3600), ("minutes", 60), ("seconds", 1))
MIN_ROWS = 50  # records holding all three, so that the rule is no chance
MIN_VALUES = 3  # distinct numbers: not a flag
_NS = 10 ** 9


def spans(data: dict, cols: list, whys: list, finest: dict) -> None:
    """Add to the line (whys, in place) of each numeric column of cols that is, in every
    record where it and two datetime columns are present, the time from one to the other
    in whole or rounded days (calendar days too), hours, minutes or seconds (within one
    unit), a note naming them and the edit leaving it out.  data: each column's values by
    name; finest: each datetime column's finest unit in the data."""
    times = {}
    for c in cols:
        if c.kind == "datetime" and finest.get(c.name) is not None:
            try:  # as the drafted column reads them (its layout, its zone)
                times[c.name] = to_epoch(missing.blank(data[c.name], c)[0], c)
            except DataError:
                continue
    if len(times) < 2:
        return
    for i, c in enumerate(cols):
        if c.kind not in ("numeric", "categorical"):
            continue
        x = pd.to_numeric(pd.Series(data[c.name]), errors="coerce").to_numpy(np.float64)
        if np.isfinite(x).sum() < MIN_ROWS or pd.Series(x).nunique() < MIN_VALUES or \
                (pd.Series(data[c.name]).notna().to_numpy() & ~np.isfinite(x)).any():
            continue  # too few numbers, a flag, or text beside them
        said = next((f"; it is the {unit} from {a!r} to {b!r} in every record (a length of "
                     "stay, a duration?): measured apart from them, synthetic rows break "
                     f"the rule; leave it out (gpu-dpsyn schema FILE {leaving_out(c.name)}) "
                     "and compute it from the released dates"
                     for a in times for b in times if a != b
                     for unit in [_unit(x, times[a], times[b])] if unit), None)
        if said:
            whys[i] += said


def _unit(x: np.ndarray, a: tuple, b: tuple) -> str | None:
    """The unit in which x is the time from a to b (epochs, missing) within one unit on
    every record holding all three, or None."""
    rows = np.isfinite(x) & ~a[1] & ~b[1]
    if rows.sum() < MIN_ROWS:
        return None
    gap = (b[0][rows] - a[0][rows]).astype(np.float64)
    for unit, secs in UNITS:
        if np.all(np.abs(x[rows] - gap / (secs * _NS)) < 1.0):  # (calendar days too)
            return unit
    return None
