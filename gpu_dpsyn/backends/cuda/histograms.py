"""The CuPy backend's histograms: one marginal per launch (cell_hist_shared/global), or
many marginals in one launch (multi_hist), on histogram.cu."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.backends.cuda.launch import (SHARED_CELLS, THREADS, grid_of, code_ptr,
                                            kernel, ptr, cp)
from gpu_dpsyn.errors import BackendError


class HistogramOps:
    """CupyBackend's histogram operations (self: the backend: _sm, _table, _cache)."""

    @staticmethod
    def _marg_args(cols, attrs, shape):
        if not 1 <= len(attrs) <= 3:
            raise BackendError(f"GPU kernels handle 1- to 3-way marginals, got {len(attrs)}")
        args = []
        for a, st in zip(attrs, strides_of(shape)):
            c = cols[a]
            args += [np.uint64(code_ptr(c)), np.int32(c.itemsize), np.int64(st)]
        while len(args) < 9:
            args += [np.uint64(0), np.int32(1), np.int64(0)]
        return args

    def cell_histogram(self, cols, attrs, shape, want_cell: bool = True):
        n = len(cols[attrs[0]])
        ncells = int(np.prod(shape))
        hist = cp.zeros(ncells, dtype=cp.uint64)
        cell = cp.empty(n, dtype=cp.int32) if want_cell else None
        cptr = np.uint64(ptr(cell) if want_cell else 0)
        margs = self._marg_args(cols, attrs, shape)
        if ncells <= SHARED_CELLS:
            grid = min(grid_of(n), self._sm * 8)
            kernel("histogram.cu", "cell_hist_shared")(
                (grid,), (THREADS,), (np.int64(n), np.int32(len(attrs)), *margs,
                                      np.int32(ncells), cptr, hist),
                shared_mem=4 * ncells)
        else:
            kernel("histogram.cu", "cell_hist_global")(
                (grid_of(n),), (THREADS,), (np.int64(n), np.int32(len(attrs)), *margs, cptr, hist))
        return cell, hist.view(cp.int64)

    def cell_index(self, cols, attrs, shape):
        return self.cell_histogram(cols, attrs, shape)[0]

    def histogram(self, cols, attrs, shape):
        return self.cell_histogram(cols, attrs, shape, want_cell=False)[1]

    def histograms(self, cols, specs):
        """The histograms of the (attrs, shape) specs end to end, in one launch
        (histogram.cu multi_hist): consecutive marginals share a block's shared memory
        up to SHARED_CELLS cells, a larger one counts in global memory alone, and each
        group reads the records once -- a GUM iteration's errors were a launch and a
        pass over the records per target."""
        specs = [(tuple(int(a) for a in attrs), tuple(int(d) for d in shape))
                 for attrs, shape in specs]
        sizes = [int(np.prod(sh)) for _, sh in specs]
        hist = cp.zeros(sum(sizes), dtype=cp.uint64)
        n = len(cols[0]) if cols else 0
        if not specs or n == 0:
            return hist.view(cp.int64)
        table, csize = self._table(cols)
        desc, groups, most = self._hist_plan(specs, sizes)
        m, g = len(specs), groups
        k, attr, stride = desc[:m], desc[m:4 * m], desc[4 * m:7 * m]
        off, first, shared = desc[7 * m:8 * m], desc[8 * m:8 * m + g + 1], desc[8 * m + g + 1:]
        per = max(1, min(grid_of(n), -(-self._sm * 8 // g)))
        kernel("histogram.cu", "multi_hist")(
            (g * per,), (THREADS,), (np.int64(n), table, csize, k, attr, stride, off, first,
                                     shared, np.int32(g), hist), shared_mem=4 * most)
        return hist.view(cp.int64)

    def _hist_plan(self, specs, sizes):
        """multi_hist's descriptors, on the device once per set of specs (no copy to the
        device in GUM's loop): k, attr, stride, off, first, shared as int64 runs of one
        array; the number of groups; the largest group counted in shared memory."""
        key = ("hist", tuple(specs))
        plan = self._tables.get(key)
        if plan is None:
            m = len(specs)
            k = np.zeros(m, np.int64)
            attr, stride = np.zeros((m, 3), np.int64), np.zeros((m, 3), np.int64)
            for i, (attrs, shape) in enumerate(specs):
                if not 1 <= len(attrs) <= 3:
                    raise BackendError(f"GPU kernels handle 1- to 3-way marginals, got "
                                       f"{len(attrs)}")
                k[i] = len(attrs)
                attr[i, :len(attrs)] = attrs
                stride[i, :len(attrs)] = strides_of(shape)
            off = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            first, shared, run = [0], [], 0
            for i, size in enumerate(sizes):  # consecutive marginals, greedily grouped
                if size > SHARED_CELLS or (run and run + size > SHARED_CELLS):
                    if run:
                        first.append(i)
                        shared.append(run)
                    run = 0
                if size > SHARED_CELLS:
                    first.append(i + 1)
                    shared.append(0)  # alone, in global memory
                else:
                    run += size
            if run:
                first.append(m)
                shared.append(run)
            desc = np.concatenate([k, attr.reshape(-1), stride.reshape(-1), off, first, shared])
            plan = (cp.asarray(desc.astype(np.int64)), len(shared), max(shared) if shared else 0)
            self._cache(key, plan)
        return plan
