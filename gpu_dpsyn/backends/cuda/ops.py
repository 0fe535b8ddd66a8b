"""CuPy bodies of the backend operations, on the kernels in this folder: transfers,
random numbers, noise, draws and moves here; histograms (histograms.py), GUM's records
(updates.py) and the polish's passes (passes.py) beside them.

Imports without CuPy or without a device; the backend itself needs both.
The counter-RNG layout and every formula match gpu_dpsyn.backends.numpy, so for one
seed both backends produce the same noise, records and synthetic table.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.cuda.histograms import HistogramOps
from gpu_dpsyn.backends.cuda.launch import (SOURCES, THREADS, grid_of, code_ptr, kernel,
                                            cp, load_cuda_module, strided_grid)
from gpu_dpsyn.backends.cuda.passes import PassOps
from gpu_dpsyn.backends.cuda.updates import RecordOps
from gpu_dpsyn.errors import BackendError
from gpu_dpsyn.privacy.drawing import kernel_layout
from gpu_dpsyn.privacy.samplers import FAIL, check_max_words


class CupyBackend(HistogramOps, RecordOps, PassOps):
    name = "gpu"

    def __init__(self):
        if cp is None:
            raise BackendError("CuPy is not installed")
        self.xp = cp
        dev = cp.cuda.Device()
        self._sm = dev.attributes["MultiProcessorCount"]
        # order.cu's counting sort matches a warp's cells (__match_any_sync): Volta on
        self._warp_match = int(getattr(dev, "compute_capability", "70")) >= 70
        self._tables: dict = {}
        self._plan = None  # (add, rem, prefix sums) of the last plan_update

    # -- transfer ------------------------------------------------------------------
    def asarray(self, x, dtype=None):
        return cp.asarray(x, dtype=dtype)

    def to_numpy(self, x) -> np.ndarray:
        return cp.asnumpy(x)

    def synchronize(self) -> None:
        cp.cuda.Device().synchronize()

    def free_memory(self) -> int | None:
        """Free device memory plus what CuPy's pool holds but does not use."""
        pool = cp.get_default_memory_pool()
        return int(cp.cuda.runtime.memGetInfo()[0] + pool.free_bytes())

    # -- marginals -----------------------------------------------------------------
    def philox(self, key, n: int, c0: int = 0, c1: int = 0, c2: int = 0, c3: int = 0):
        """(n, 4) uint32 words for counters (c0 + i, c1, c2, c3)."""
        out = cp.empty((n, 4), dtype=cp.uint32)
        kernel("rng.cu", "philox_fill")((grid_of(n),), (THREADS,),
                                         (np.int64(n), np.uint32(key[0]), np.uint32(key[1]),
                                          *[np.uint32(c) for c in (c0, c1, c2, c3)], out))
        return out

    def uniforms(self, key, n: int, c1: int, c2: int, c3: int):
        """u_i = uniform(philox(i, c1, c2, c3).w0), as the NumPy backend computes it."""
        w = self.philox(key, n, 0, c1, c2, c3)[:, 0].astype(cp.float64)
        return (w + 0.5) * (1.0 / 4294967296.0)

    def chacha_blocks(self, key, first: int, count: int, nonce):
        """(count, 16) uint32: ChaCha20 blocks of counters first .. first + count - 1."""
        out = cp.empty((count, 16), dtype=cp.uint32)
        kernel("noise.cu", "chacha20_blocks")(
            (grid_of(count),), (THREADS,),
            (np.int64(count), cp.asarray(np.array(key, dtype=np.uint32)), np.uint32(first),
             *[np.uint32(x) for x in nonce], out))
        return out

    def prepare(self) -> None:
        """Compile every kernel now: fit() calls this before its first charge, so a
        compiler failure never comes after budget is spent."""
        for src in SOURCES:
            load_cuda_module(src).compile()

    def noise_draws(self, draws, key, stream: int, max_words: int):
        """(values, status) of exact noise for the (spec, n, call) draws end to end, in
        one launch (noise.cu); privacy.drawing.draw_many finishes WIDE elements and
        fails closed on FAIL."""
        check_max_words(max_words)
        ends, params, n = kernel_layout(draws)
        out = cp.empty(n, dtype=cp.int64)
        status = cp.full(n, FAIL, dtype=cp.uint8)  # an element never written fails closed
        if n:
            kernel("noise.cu", "noise_draws")(
                (grid_of(n),), (THREADS,),
                (np.int64(n), cp.asarray(np.array(key, dtype=np.uint32)), np.uint32(stream),
                 np.uint64(max_words), np.int64(len(draws)), cp.asarray(ends),
                 cp.asarray(params), out, status))
        return out, status

    # -- records -------------------------------------------------------------------
    def _table(self, cols):
        ptrs = tuple((code_ptr(c), c.itemsize) for c in cols)
        table = self._tables.get(ptrs)
        if table is None:  # built once per column group: no copies in the loop
            table = (cp.asarray(np.array([p for p, _ in ptrs], dtype=np.uint64)),
                     cp.asarray(np.array([s for _, s in ptrs], np.int32)))
            self._cache(ptrs, table)
        return table

    def _cache(self, key, value) -> None:
        """Keep a device table for the next call; the caller returns its own reference,
        so another thread (a Dask worker's) clearing the cache meanwhile costs a rebuild,
        never a KeyError."""
        if len(self._tables) > 256:
            self._tables.clear()
        self._tables[key] = value

    def cdf_rows(self, cond):
        """(the rows' CDFs laid end to end, each row's last positive value) in one launch
        (draw.cu): the same bits as NumPy's, and nothing of the table's size leaves the
        device (the host's CDFs were a quarter of a 10^6-row fit on an H200)."""
        cond = cp.ascontiguousarray(cp.asarray(cond, dtype=cp.float64))
        R, size = cond.shape
        flat = cp.empty(R * size, dtype=cp.float64)
        last = cp.empty(R, dtype=cp.int64)
        if R:
            kernel("draw.cu", "cdf_rows")(strided_grid(R, self._sm), (THREADS,),
                                           (np.int64(0), np.int64(R), np.int32(size), cond, flat,
                                            last))
        return flat, last

    def best_moves(self, X, tabs, offs, ctx):
        """(u, v, gain) of each context's best move in one launch (moves.cu): the same
        numbers as the NumPy body, where the array code took about 20 launches a target."""
        U = int(X.shape[0])
        u, v = cp.empty(U, dtype=cp.int64), cp.empty(U, dtype=cp.int64)
        gain = cp.empty(U, dtype=cp.float64)
        if U:
            kernel("moves.cu", "best_moves")(
                strided_grid(U, self._sm), (THREADS,),
                (np.int64(0), np.int64(U), np.int32(X.shape[1]), np.int32(ctx.shape[1]),
                 cp.ascontiguousarray(tabs, dtype=cp.float64), cp.asarray(offs, dtype=cp.int64),
                 ctx, X, u, v, gain))
        return u, v, gain

