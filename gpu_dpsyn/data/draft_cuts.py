"""Flags fixed by thresholds of a binned numeric column (a lab value's L/N/H by its
reference range), said on their draft lines (data.inference): no column type derives
one, and measured apart from the value the synthetic rows break the rule.  Read off the
private data, as every draft is: NOT private."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.data.text import leaving_out

MAX_LEVELS = 6  # a flag's values: L/N/H, 0/1, grades
MIN_ROWS = 50  # rows each value holds, so that disjoint ranges are no chance


def thresholds(data: dict, cols: list, whys: list) -> None:
    """Add to the line (whys, in place) of each categorical column of cols whose values
    hold disjoint ranges of a numeric column's values, in every record where both are
    present, a note naming that column and the edit leaving the flag out.  data: each
    column's values by name."""
    nums = {c.name: pd.to_numeric(data[c.name], errors="coerce")
            for c in cols if c.kind == "numeric"}
    for i, c in enumerate(cols):
        if c.kind != "categorical" or not 2 <= len(c.values or ()) <= MAX_LEVELS:
            continue
        flag = data[c.name].astype(str).where(data[c.name].notna())
        for name, x in nums.items():
            if _cut(flag, x):
                edit = leaving_out(c.name)
                whys[i] += (f"; its values hold separate ranges of {name!r} in every record "
                            f"(set by thresholds of {name!r}?): measured apart, synthetic "
                            "rows break the rule; if it is a public rule (a reference "
                            f"range), leave it out (gpu-dpsyn schema FILE {edit}) and "
                            f"compute it from the released {name!r}")
                break


def _cut(flag: pd.Series, x: pd.Series) -> bool:
    """Whether each value of flag holds a range of x apart from the others' (rows where
    both are present), each value on MIN_ROWS rows or more."""
    both = flag.notna() & x.notna()
    if both.sum() < MIN_ROWS * 2:
        return False
    g = x[both].groupby(flag[both].to_numpy()).agg(["min", "max", "size"])
    if len(g) < 2 or (g["size"] < MIN_ROWS).any():
        return False
    g = g.sort_values("min")
    return bool(np.all(g["max"].to_numpy()[:-1] < g["min"].to_numpy()[1:]))
