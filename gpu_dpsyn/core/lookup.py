"""A function of integer values read from a table of it over their range.

Binning a column (a binary search a value) and asking whether a value is in a support
cost a search per record; where the column's range is shorter than the column, a table of
the function over the whole range turns each into one gather.  The table holds the
function's own result for each integer, so the values are the same, bit for bit.
"""
from __future__ import annotations

import numpy as np

# entries of a table worth building (its range's span); past it, or past the number of
# values asked, the function runs on the values themselves
TABLE_MAX = 1 << 22


def on_range(xp, fn, x, lo: int, hi: int):
    """fn(x) for x (an xp array of whole numbers, each within [lo, hi], exact in int64),
    elementwise: from a table of fn over lo..hi (in x's dtype) when the range is no
    longer than x."""
    lo, hi = int(lo), int(hi)
    span = hi - lo + 1
    if span > min(int(x.size), TABLE_MAX):
        return fn(x)
    table = fn(xp.arange(lo, hi + 1, dtype=np.int64).astype(x.dtype))
    return table[x.astype(xp.int64) - lo]  # in int64: x - lo could wrap in a narrow type


__all__ = ["TABLE_MAX", "on_range"]
