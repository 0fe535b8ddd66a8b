"""The NumPy backend's wrappers of host_records.cpp (host_kernels.py loads the library and
re-exports these): GUM's Feistel ranks, the stable counting sort (whole, or in blocks of
records on the host's threads), a marginal's cells and counts in one pass, and the draws'
CDFs and search.  Each gives the NumPy body's numbers."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.core import threads


def cell_histogram(lib, cols, shape):
    """(each record's flat cell in C order, uint16 up to 2^16 cells and int64 past; the
    int64 count of each cell) of 1 to 3 contiguous 8-, 16- or 32-bit unsigned code
    columns, in one pass; None for other columns, other widths and codes outside the
    shape (NumPy serves)."""
    ncells = math.prod(int(d) for d in shape)  # (np.prod: 26 us a call, 382,000 calls)
    if not 1 <= len(cols) <= 3 or ncells >= 1 << 62 or any(
            c.dtype.kind != "u" or c.itemsize > 4 or not c.flags.c_contiguous or
            len(c) != len(cols[0]) for c in cols):
        return None
    n, wide = len(cols[0]), ncells > 1 << 16
    cell = np.empty(n, dtype=np.int64 if wide else np.uint16)
    parts, failed = [], []

    def block(lo, hi):  # records lo .. hi - 1 into a histogram of their own
        hist = np.empty(ncells, dtype=np.int64)
        at = [(c.ctypes.data + lo * c.itemsize, c.itemsize, st)
              for c, st in zip(cols, strides_of(shape))] + [(None, 1, 0)] * (3 - len(cols))
        if lib.host_cell_histogram(hi - lo, len(cols), *[x for col in at for x in col], ncells,
                                   int(wide), cell.ctypes.data + lo * cell.itemsize,
                                   hist.ctypes.data) != 0:
            failed.append(lo)
        parts.append(hist)
    # blocks on the host's cores where the histograms are small beside the records (whole
    # counts, added after: exact in any order); fewer records than a block are one block
    if n > threads.MIN_BLOCK and ncells * 4 * threads.count() <= n:  # <= 2 bytes a record
        threads.each(block, n)
    else:
        block(0, n)
    if failed:
        return None
    for hist in parts[1:]:
        parts[0] += hist
    return cell, parts[0]


def counting_argsort(lib, keys, bound: int):
    """numpy.argsort(keys, kind="stable") of uint16 or int64 keys in [0, bound), by a
    counting sort: one pass to count, one to place (a third to a sixth of NumPy's radix
    sort's time on GUM's cells), or None for other dtypes and for keys out of range.  In
    blocks of records on the host's threads where the blocks' tables of counts are small
    beside the records (the same order: see host_records.cpp)."""
    kind = {np.dtype(np.uint16): "u16", np.dtype(np.int64): "i64"}.get(keys.dtype)
    if kind is None:
        return None
    keys, bound, n = np.ascontiguousarray(keys), int(bound), len(keys)
    parts = threads.blocks(n)
    if len(parts) > 1 and bound * COUNTING_PER_BLOCK * len(parts) <= n:
        return counting_in_blocks(lib, keys, bound, parts)
    out = np.empty(n, np.int64)
    start = np.empty(max(bound, 1), dtype=np.int64)
    if getattr(lib, "host_counting_argsort_" + kind)(n, keys.ctypes.data, bound,
                                                      start.ctypes.data, out.ctypes.data) != 0:
        return None
    return out


COUNTING_PER_BLOCK = 4  # records a block per key at least, to count and place in blocks


def counting_in_blocks(lib, keys, bound: int, parts: list):
    """counting_argsort's order (keys contiguous uint16 or int64) in the blocks `parts`
    ((lo, hi) covering 0 .. len(keys) in order), each on the host's threads: every block
    counts its keys, then places its indices from its own first slots, both phases over
    the same blocks.  None where a key is outside [0, bound)."""
    kind = {np.dtype(np.uint16): "u16", np.dtype(np.int64): "i64"}[keys.dtype]
    n, out = len(keys), np.empty(len(keys), np.int64)
    count = np.empty((len(parts), max(bound, 1)), dtype=np.int64)
    at = {lo: b for b, (lo, _) in enumerate(parts)}
    failed = []

    def counted(lo, hi):
        if getattr(lib, "host_counting_block_" + kind)(
                lo, hi, keys.ctypes.data, bound, count[at[lo]].ctypes.data) != 0:
            failed.append(lo)
    threads.each(counted, n, parts=parts)
    if failed:
        return None
    # each block's first slot of each key: the keys before it, then that key's records
    # in the blocks before it
    total = count.sum(axis=0)
    start = np.cumsum(count, axis=0) - count + (np.cumsum(total) - total)
    threads.each(lambda lo, hi: getattr(lib, "host_counting_place_" + kind)(
        lo, hi, keys.ctypes.data, start[at[lo]].ctypes.data, out.ctypes.data), n,
        parts=parts)
    return out


def cdf_rows(lib, cond, flat, last, lo: int, hi: int) -> None:
    """draw.cu's CDFs of rows lo .. hi - 1 of cond (C-contiguous float64, R x size) into
    flat (R size, float64) and last (R, int64): ops.NumpyBackend.cdf_rows's numbers."""
    R = cond.shape[0] if cond.ndim == 2 else -1
    if not (R >= 0 and _plain(cond, np.float64) and _plain(flat, np.float64, cond.size)
            and _plain(last, np.int64, R) and 0 <= lo <= hi <= R):
        raise ValueError("cdf_rows needs a float64 table, its CDFs' and last values' "
                         "buffers and rows within it")
    lib.host_cdf_rows(lo, hi, cond.shape[1], cond.ctypes.data, flat.ctypes.data,
                      last.ctypes.data)


def draw_rows(lib, flat, size: int, row, u, last, out, lo: int, hi: int) -> None:
    """gum.draw_rows' NumPy draws (row_search, clipped) for records lo .. hi - 1: row
    int64 in [0, len(last)) (checked: the loop reads last and flat there), u float64, out
    int64, every array C-contiguous; flat the len(last) rows' CDFs."""
    n = len(row)
    if not (_plain(row, np.int64) and _plain(u, np.float64, n) and _plain(out, np.int64, n)
            and _plain(last, np.int64) and _plain(flat, np.float64, len(last) * size)
            and size > 0 and 0 <= lo <= hi <= n):
        raise ValueError("draw_rows needs int64 rows, a float64 draw and an int64 output "
                         "for each record, and each row's CDF")
    if hi > lo and (int(row[lo:hi].min()) < 0 or int(row[lo:hi].max()) >= len(last)):
        raise ValueError("draw_rows needs each record's row among the table's")
    lib.host_draw_rows(lo, hi, size, flat.ctypes.data, len(flat), row.ctypes.data,
                       u.ctypes.data, last.ctypes.data, out.ctypes.data)


def _plain(a, dtype, length: int | None = None) -> bool:
    """a is a C-contiguous array of dtype (of `length` elements, if given): what a loop
    reads through its pointer."""
    return isinstance(a, np.ndarray) and a.dtype == dtype and a.flags.c_contiguous and (
        length is None or a.size == length)


def feistel(lib, r, size, salt, keys):
    """permute.feistel_ranks(r, size, salt, keys): r, size, salt int64 arrays alike.
    Checked first: a size below 1 would cycle-walk forever inside the call."""
    r, size, salt = (np.ascontiguousarray(x, dtype=np.int64) for x in (r, size, salt))
    k = np.ascontiguousarray(keys, dtype=np.uint32)
    if not len(r) == len(size) == len(salt) or len(k) != 4 or (len(size) and size.min() < 1):
        raise ValueError("Feistel ranks need r, size, salt alike, sizes of 1 or more, "
                         "and four round keys")
    out = np.empty(len(r), dtype=np.int64)
    lib.host_feistel_ranks(len(r), r.ctypes.data, size.ctypes.data, salt.ctypes.data,
                           k.ctypes.data, out.ctypes.data)
    return out
