"""Codes back to a table: each value drawn inside its code's bin with the
post-processing RNG, dtypes from the schema alone."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.philox import philox4x32, uniform
from gpu_dpsyn.data.dtypes import output_dtype
from gpu_dpsyn.data.encoding import categorical_lut
from gpu_dpsyn.data.schema import Column, Schema
from gpu_dpsyn.data.types import datetime, support


def _decode_numeric(codes: np.ndarray, col: Column, u: np.ndarray, midpoint: bool) -> np.ndarray:
    """A value inside each code's bin.  Per-bin tables first, then one gather each: at
    10^7 rows per-element edge arithmetic was most of decode's time.  The table entry
    for the null code is a placeholder (the caller writes NaN there)."""
    if col.within is not None and not midpoint:  # private bins: their noisy inner shape
        return col.within.draw(codes, u, col.integer)
    edges = np.asarray(col.edges, dtype=np.float64)
    if col.integer:
        lo, top = col.integer_bins()
        if col.support is not None:  # only the support's values, never between them
            return support.draw(col.support, _table(lo), _table(top), codes, u, midpoint)
        width = np.maximum(top - lo, 1.0)  # top: exclusive upper bound
        if midpoint:
            return _table(lo + np.floor((width - 1) / 2))[codes]
        return _table(lo)[codes] + np.floor(u * _table(width)[codes])
    lo, hi = edges[:-1], edges[1:]
    if midpoint:
        return _table((lo + hi) / 2)[codes]
    return _table(lo)[codes] + u * _table(hi - lo)[codes]


def _table(per_bin: np.ndarray) -> np.ndarray:
    return np.append(per_bin, per_bin[-1])  # codes go up to bins (the null code)


def _draws(uniforms, key, j: int, n: int, call: int) -> np.ndarray:
    """Column j's n decode draws: from the backend, or the same numbers in NumPy."""
    if uniforms is not None:
        return uniforms(j, n)
    return uniform(philox4x32(key, np.arange(n, dtype=np.uint64), j, rng.DECODE, call)[0])


def decode(codes: list, schema: Schema, seed: int = 0, call: int = 0,
           numeric_decode: str = "uniform", uniforms=None) -> pd.DataFrame:
    """Codes back to a DataFrame in the schema's column order, dtypes from the schema only
    (dtypes.output_dtype).  uniforms(j, n): the n draws for column j,
    uniform(philox(i, j, DECODE, call).w0); a backend computes the same numbers faster
    (default: NumPy)."""
    key = rng.split_key(seed)
    n = len(codes[0]) if codes else 0
    out = {}
    it = iter(codes)
    for j, col in enumerate(schema.columns):
        want = output_dtype(col)
        if col.kind == "derived":
            continue  # from its decoded source, below
        if col.kind == "id":
            out[col.name] = pd.Series(np.arange(1, n + 1, dtype=np.int64), name=col.name,
                                      dtype=want)
            continue
        c = np.asarray(next(it))
        if col.kind == "categorical":
            x = categorical_lut(col, want).array.take(c.astype(np.intp))
        elif col.kind == "datetime":
            u = None if col.time.calendar else _draws(uniforms, key, j, n, call)
            x = datetime.draw(col, c, u, numeric_decode == "midpoint")
            null = c == col.null_code if col.nullable else np.zeros(n, bool)
            x = datetime.from_epoch(x, null, col).astype(want).array
        else:
            u = _draws(uniforms, key, j, n, call)
            x = _decode_numeric(c, col, u, numeric_decode == "midpoint")
            if col.nullable:
                x[c == col.null_code] = np.nan
        # the dtype given up front: inferring one from 10^7 objects first costs seconds
        out[col.name] = pd.Series(x, name=col.name, dtype=want)
    for col in schema.columns:
        if col.kind == "derived":
            x = col.derive.apply(out[col.derive.source])
            out[col.name] = pd.Series(x, name=col.name).astype(output_dtype(col))
    # side by side, not consolidated into 2-D blocks (a copy of the whole table)
    return pd.concat([out[c] for c in schema.names], axis=1) if out else pd.DataFrame()

