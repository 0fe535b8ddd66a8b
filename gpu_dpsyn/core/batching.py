"""Work in runs of consecutive items whose sizes add up to at most a cap (an item past it
alone, in a run of its own), in order: what bounds a batch's memory, or one call's
elements, wherever work is split so; and a column's values in blocks, so that one odd
value's slow reading costs its block, not the column."""
from __future__ import annotations

import numpy as np
import pandas as pd


def capped_runs(items, size, cap: int):
    """The items (an iterable, read lazily) in runs of consecutive ones whose size(item)
    totals at most cap, a larger one alone; each run a list."""
    run, total = [], 0
    for item in items:
        k = size(item)
        if run and total + k > cap:
            yield run
            run, total = [], 0
        run.append(item)
        total += k
    if run:
        yield run


READ_BLOCK = 4096  # values a slow read of one odd value takes with it


def read_blocks(values):
    """values (a pandas Series) in blocks of READ_BLOCK, in order.  Where a column's
    vectorised read stops at one odd value, each block is read so and only a block where
    it stops again value by value: the odd value costs a block's time, not the whole
    column's (20,000 dates: 0.05 s against 0.7 s), so a fit's time says little of one
    record."""
    for lo in range(0, len(values), READ_BLOCK):
        yield values.iloc[lo:lo + READ_BLOCK]


def kind_mapped(values, f, looked_at, fill, dtype=bool):
    """values.map(f) as a NumPy array, looked at value by value only in the blocks whose
    kind (pandas' infer_dtype) looked_at(kind) accepts; the others are `fill`, which f
    gives on every value of such a block (the caller's rule)."""
    out = np.full(len(values), fill, dtype=dtype)
    lo = 0
    for block in read_blocks(values):
        if looked_at(pd.api.types.infer_dtype(block, skipna=True)):
            out[lo:lo + len(block)] = block.map(f).to_numpy(dtype=dtype)
        lo += len(block)
    return out
