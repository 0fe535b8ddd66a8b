"""Contribution bounding: at most D records per individual, before anything is measured.

The noise is calibrated to D records per individual (the sensitivity).  When the
schema names an individual id column, that bound is enforced here rather than trusted:
each individual keeps a uniformly random subset of min(D, own records), chosen with
random keys from the secure generator (ChaCha20, stream BOUND), so which records stay
depends on nothing but the individual's own records and fresh randomness.  Nothing
about how many records were dropped is reported: that count is private.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.checks import is_cudf
from gpu_dpsyn.core.individuals import individual_codes
from gpu_dpsyn.errors import DataError
from gpu_dpsyn.privacy.chacha import keystream


def row_keys(key, n: int) -> np.ndarray:
    """n random 64-bit keys: row i takes words 2i, 2i+1 of the BOUND keystream."""
    blocks = -(-n // 8)
    words = keystream(key, 0, blocks, (0, rng.BOUND, 0)).reshape(-1)
    return words.view("<u8")[:n]


def kept_rows(df, id_column: str, max_records: int, key) -> np.ndarray | None:
    """Indices of the rows to keep: at most max_records per value of id_column, a
    random subset of each individual's rows (None: every row is kept)."""
    ids = df[id_column]
    if is_cudf(ids):
        ids = ids.to_pandas()
    if ids.isna().any():
        raise DataError(f"individual id column {id_column!r} has missing values; every "
                        "record must name its individual")
    codes = individual_codes(ids)
    n = len(codes)
    order = np.lexsort((row_keys(key, n), codes))  # by individual, then random key
    grouped = codes[order]
    starts = np.flatnonzero(np.r_[True, grouped[1:] != grouped[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    if (rank < max_records).all():
        return None
    return np.sort(order[rank < max_records])
