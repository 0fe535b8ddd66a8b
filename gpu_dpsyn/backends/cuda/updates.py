"""The CuPy backend's record operations: GUM's first records, its update plan and the
update itself (init_keys, plan.cu, gum.cu)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends import arrays
from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.backends.cuda.launch import (ORDER_THREADS, PLAN_MAX_CELLS, PLAN_THREADS,
                                            SHARED_CELLS, THREADS, grid_of, kernel, cp)
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.errors import BackendError


class RecordOps:
    """CupyBackend's record operations (self: the backend: _table, _plan)."""

    def init_records(self, counts: list, key, call: int) -> list:
        n = int(np.sum(counts[0]))
        keys = cp.empty(n, dtype=cp.uint64)
        cols = []
        for j, c in enumerate(counts):
            kernel("gum.cu", "init_keys")((grid_of(n),), (THREADS,),
                                           (np.int64(n), np.uint32(key[0]), np.uint32(key[1]),
                                            np.uint32(j), np.uint32(call), keys))
            perm = (cp.sort(keys) & cp.uint64(0xFFFFFFFF)).astype(cp.int64)
            cum = cp.asarray(np.cumsum(np.asarray(c, dtype=np.int64)))
            vals = cp.searchsorted(cum, perm, side="right")
            cols.append(cp.ascontiguousarray(vals.astype(code_dtype(len(c)))))
        return cols

    def plan_update(self, s, t, alpha: float):
        """arrays.plan_update in one launch (plan.cu): the same add and rem, bit for bit.
        The launch also leaves the prefix sums gum_apply needs for this add and rem."""
        n = int(s.size)
        if n > PLAN_MAX_CELLS:
            self._plan = None
            return arrays.plan_update(cp, s, t, alpha)
        # float64 over, work | int64 add, rem, offset, cumadd, cumrem | beta
        work = cp.empty(7 * n + 1, dtype=cp.float64)
        ints = work[2 * n:7 * n].view(cp.int64)
        add, rem, scan = ints[:n], ints[n:2 * n], ints[2 * n:]
        kernel("plan.cu", "plan_update")(
            (1,), (PLAN_THREADS,),
            (np.int64(n), cp.ascontiguousarray(s, dtype=cp.int64),
             cp.ascontiguousarray(t, dtype=cp.float64), np.float64(alpha), work[:n],
             work[n:2 * n], add, rem,
             work[7 * n:], scan[:n], scan[n:2 * n], scan[2 * n:]))
        self.last_beta = work[7 * n:]  # for tests: the removal rate the bisection found
        self._plan = (add, rem, scan)
        return add, rem

    def gum_apply(self, cols, attrs, shape, cell, s, add, rem, dup_frac: float,
                  key, update_id: int, call: int, copy_cols=None) -> None:
        n = int(cell.size)
        ncells = int(np.prod(shape))
        k0, k1 = np.uint32(key[0]), np.uint32(key[1])
        grid, nn, nc = (grid_of(n),), np.int64(n), np.int64(ncells)
        keys, idx_bits, w = cell_order(cell, ncells, self._sm, self._warp_match)
        plan = self._plan
        if plan is not None and plan[0] is add and plan[1] is rem:
            scan = plan[2]  # offset, cumadd, cumrem: left by the plan launch
        else:
            scan = cp.empty(3 * ncells, dtype=cp.int64)
            s, add, rem = (cp.ascontiguousarray(x, dtype=cp.int64) for x in (s, add, rem))
            kernel("plan.cu", "gum_prep")((1,), (PLAN_THREADS,),
                                           (nc, s, add, rem, scan[:ncells],
                                            scan[ncells:2 * ncells], scan[2 * ncells:]))
        offset, cumadd, cumrem = scan[:ncells], scan[ncells:2 * ncells], scan[2 * ncells:]
        total = cumadd[ncells - 1:]  # the number of slots stays on the device
        ib, upd, cl = np.int32(idx_bits), np.uint32(update_id), np.uint32(call)
        removed = cp.empty(n, dtype=cp.int64)
        kernel("gum.cu", "pick_removed" + w)(
            grid, (THREADS,), (nn, total, cumrem, nc, rem, s, offset, keys, ib, k0, k1, upd, cl,
                               removed))
        # Duplicate copies the group's columns; Replace addresses the marginal's columns
        # through the full table, so both tables ride along
        full, full_sizes = self._table(cols)
        group = list(range(len(cols))) if copy_cols is None else list(copy_cols)
        # every column (the default): the same table, its pointers not looked up again
        table, sizes = (full, full_sizes) if copy_cols is None else \
            self._table([cols[j] for j in group])
        a = list(attrs) + [0] * (3 - len(attrs))
        st = strides_of(shape) + [1] * (3 - len(attrs))
        dims = list(shape) + [1] * (3 - len(attrs))
        kernel("gum.cu", "fill_slots" + w)(
            grid, (THREADS,),
            (nn, total, cumadd, nc, s, offset, keys, ib, removed, k0, k1, upd, cl,
             np.float64(dup_frac), table, sizes, np.int32(len(group)), full, full_sizes,
             np.int32(len(attrs)), *[np.int32(x) for x in a], *[np.int64(x) for x in st],
             *[np.int64(x) for x in dims]))


KEY32_BITS = 32  # (cell, index) keys of up to this many bits sort as uint32
COUNTING_SORT = True  # False: the radix sorts alone (gpu_profile times both)
ORDER_TABLE = 1 << 22  # at most this many tile counts (16 MiB): the scan stays small


def cell_order(cell, ncells: int, sm: int, counting: bool = True):
    """The records in (cell, index) order, as gum.cu's kernels read it: (sorted, idx_bits,
    kernel suffix); position p holds record sorted[p] & (2^idx_bits - 1).
    - Up to the cells a block counts in shared memory: a stable counting sort (order.cu),
      two passes over the cells and a scan of the tiles' counts, its uint32 indices read
      with idx_bits 31 (counting: the device matches a warp's cells, compute 7.0 on);
    - past them, keys (cell << idx_bits) | index that fit 32 bits sort as such (4 radix
      passes of 4 bytes);
    - past that a stable argsort of the cell codes alone, in their narrowest unsigned
      type, with the index as payload (1, 2 or 4 passes of the code and 8 bytes, not 8
      passes of 64-bit keys), whose int64 indices the 64-bit kernels read with idx_bits
      63."""
    n = int(cell.size)
    if COUNTING_SORT and counting and ncells + ORDER_THREADS <= SHARED_CELLS and \
            n < 1 << 31:
        return counting_order(cell, n, ncells, sm), 31, "32"
    idx_bits = max(1, (n - 1).bit_length())
    cell_bits = max(1, (ncells - 1).bit_length())
    if cell_bits + idx_bits <= KEY32_BITS:
        keys = cp.empty(n, dtype=cp.uint32)
        kernel("gum.cu", "cell_keys32")((grid_of(n),), (THREADS,),
                                         (np.int64(n), cell, np.int32(idx_bits), keys))
        return cp.sort(keys), idx_bits, "32"
    if cell_bits > 32:
        raise BackendError(f"a marginal of {ncells:,} cells is past the GPU's 2^32")
    code = cp.uint8 if cell_bits <= 8 else cp.uint16 if cell_bits <= 16 else cp.uint32
    return cp.argsort(cell.astype(code)).view(cp.uint64), 63, ""


def counting_order(cell, n: int, ncells: int, sm: int):
    """order.cu's stable counting sort: the records in tiles of consecutive indices, a
    block each; as many tiles as keep every multiprocessor busy (8 blocks each), at most
    one a block's chunk of records, and at most ORDER_TABLE counts in all."""
    tiles = max(1, min(8 * sm, -(-n // ORDER_THREADS), ORDER_TABLE // ncells))
    tile = -(-max(n, 1) // tiles)
    tiles = -(-max(n, 1) // tile)
    counts = cp.empty(ncells * tiles + 1, dtype=cp.uint32)
    args = (np.int64(n), cell, np.int32(ncells), np.int64(tile), np.int32(tiles))
    kernel("order.cu", "tile_counts")((tiles,), (ORDER_THREADS,), (*args, counts),
                                       shared_mem=4 * ncells)
    start = cp.cumsum(counts, dtype=cp.uint32)  # tile b's first of cell c at c * tiles + b
    order = cp.empty(n, dtype=cp.uint32)
    kernel("order.cu", "tile_scatter")((tiles,), (ORDER_THREADS,), (*args, start, order),
                                        shared_mem=4 * (ncells + ORDER_THREADS))
    return order
