"""CuPy bodies of the backend operations, on the kernels in this folder.

Imports without CuPy or without a device; the backend itself needs both.
The counter-RNG layout and every formula match gpu_dpsyn.backends.numpy, so for one
seed both backends produce the same noise, records and synthetic table.
"""
from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from gpu_dpsyn.backends import arrays
from gpu_dpsyn.backends.arrays import strides_of
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.errors import BackendError
from gpu_dpsyn.privacy.samplers import FAIL, DiscreteGaussian, check_max_words

try:  # CuPy is optional: the module must import on machines without it
    import cupy as cp
except Exception:  # pragma: no cover - depends on the machine
    cp = None

KERNEL_DIR = Path(__file__).resolve().parent
SOURCES = ("rng.cu", "histogram.cu", "noise.cu", "plan.cu", "gum.cu", "draw.cu", "moves.cu")
# no FMA contraction: the device must round like NumPy does
NVCC_OPTIONS = ("-std=c++14", "--fmad=false")
# NVRTC (CuPy's compiler) takes 128-bit integers (noise.cu) only when asked; nvcc always
NVRTC_OPTIONS = NVCC_OPTIONS + ("--device-int128",)
THREADS = 256
SHARED_CELLS = 12288  # 48 KiB of uint32 counters per block
# one block plans an update (a multiple of 32, <= 1024; plan.cu); on an H100, 512
# threads took 0.124 ms for 3,255 cells, 256 took 0.129 and 1024 took 0.180
PLAN_THREADS = 512
PLAN_MAX_CELLS = 1 << 16  # above this the plan runs as CuPy array code (arrays.plan_update)


def load_cuda_module(name: str):
    """Compile a .cu file of this folder; a #line directive makes errors name the file."""
    path = KERNEL_DIR / name
    code = f'#line 1 "{path.as_posix()}"\n' + path.read_text()
    return cp.RawModule(code=code, options=NVRTC_OPTIONS + (f"-I{KERNEL_DIR.as_posix()}",))


@functools.lru_cache(maxsize=None)
def _kernel(module: str, name: str):
    return load_cuda_module(module).get_function(name)


def _ptr(a) -> int:
    return a.data.ptr


def _code_ptr(c) -> int:
    """A code column's address, refused where the kernels would misread it: they load
    8-, 16- or 32-bit integers, one after another (load_code), so an int64, float or
    strided column would give silently wrong histograms and records."""
    if c.dtype.kind not in "iu" or c.itemsize not in (1, 2, 4) or not c.flags.c_contiguous:
        raise BackendError(f"a code column of dtype {c.dtype}"
                           f"{'' if c.flags.c_contiguous else ', strided'}: the GPU kernels "
                           "read contiguous 8-, 16- or 32-bit integer codes")
    return _ptr(c)


def _blocks(n: int) -> int:
    return max(1, (int(n) + THREADS - 1) // THREADS)


class CupyBackend:
    name = "gpu"

    def __init__(self):
        if cp is None:
            raise BackendError("CuPy is not installed")
        self.xp = cp
        self._sm = cp.cuda.Device().attributes["MultiProcessorCount"]
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
    @staticmethod
    def _marg_args(cols, attrs, shape):
        if not 1 <= len(attrs) <= 3:
            raise BackendError(f"GPU kernels handle 1- to 3-way marginals, got {len(attrs)}")
        args = []
        for a, st in zip(attrs, strides_of(shape)):
            c = cols[a]
            args += [np.uint64(_code_ptr(c)), np.int32(c.itemsize), np.int64(st)]
        while len(args) < 9:
            args += [np.uint64(0), np.int32(1), np.int64(0)]
        return args

    def cell_histogram(self, cols, attrs, shape, want_cell: bool = True):
        n = len(cols[attrs[0]])
        ncells = int(np.prod(shape))
        hist = cp.zeros(ncells, dtype=cp.uint64)
        cell = cp.empty(n, dtype=cp.int32) if want_cell else None
        cptr = np.uint64(_ptr(cell) if want_cell else 0)
        margs = self._marg_args(cols, attrs, shape)
        if ncells <= SHARED_CELLS:
            grid = min(_blocks(n), self._sm * 8)
            _kernel("histogram.cu", "cell_hist_shared")(
                (grid,), (THREADS,), (np.int64(n), np.int32(len(attrs)), *margs,
                                      np.int32(ncells), cptr, hist),
                shared_mem=4 * ncells)
        else:
            _kernel("histogram.cu", "cell_hist_global")(
                (_blocks(n),), (THREADS,), (np.int64(n), np.int32(len(attrs)), *margs, cptr, hist))
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
        per = max(1, min(_blocks(n), -(-self._sm * 8 // g)))
        _kernel("histogram.cu", "multi_hist")(
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

    def philox(self, key, n: int, c0: int = 0, c1: int = 0, c2: int = 0, c3: int = 0):
        """(n, 4) uint32 words for counters (c0 + i, c1, c2, c3)."""
        out = cp.empty((n, 4), dtype=cp.uint32)
        _kernel("rng.cu", "philox_fill")((_blocks(n),), (THREADS,),
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
        _kernel("noise.cu", "chacha20_blocks")(
            (_blocks(count),), (THREADS,),
            (np.int64(count), cp.asarray(np.array(key, dtype=np.uint32)), np.uint32(first),
             *[np.uint32(x) for x in nonce], out))
        return out

    def prepare(self) -> None:
        """Compile every kernel now: fit() calls this before its first charge, so a
        compiler failure never comes after budget is spent."""
        for src in SOURCES:
            load_cuda_module(src).compile()

    def noise(self, spec, n: int, key, stream: int, call: int, max_words: int):
        """(values, status) of exact noise for elements 0 .. n-1 (noise.cu); the caller
        (privacy.samplers.draw) finishes WIDE elements and fails closed on FAIL."""
        check_max_words(max_words)
        out = cp.empty(n, dtype=cp.int64)
        status = cp.full(n, FAIL, dtype=cp.uint8)  # an element never written fails closed
        head = (np.int64(n), cp.asarray(np.array(key, dtype=np.uint32)), np.uint32(stream),
                np.uint32(call), np.uint64(max_words))
        if isinstance(spec, DiscreteGaussian):
            den = spec.accept_den
            args = (np.uint64(spec.t), np.uint64(spec.q * spec.t), np.uint64(spec.p),
                    np.uint64(den >> 64), np.uint64(den & 0xFFFFFFFFFFFFFFFF))
            name = "discrete_gaussian"
        else:
            args, name = (np.uint64(spec.t), np.uint64(spec.s)), "discrete_laplace"
        _kernel("noise.cu", name)((_blocks(n),), (THREADS,), (*head, *args, out, status))
        return out, status

    # -- records -------------------------------------------------------------------
    def init_records(self, counts: list, key, call: int) -> list:
        n = int(np.sum(counts[0]))
        keys = cp.empty(n, dtype=cp.uint64)
        cols = []
        for j, c in enumerate(counts):
            _kernel("gum.cu", "init_keys")((_blocks(n),), (THREADS,),
                                           (np.int64(n), np.uint32(key[0]), np.uint32(key[1]),
                                            np.uint32(j), np.uint32(call), keys))
            perm = (cp.sort(keys) & cp.uint64(0xFFFFFFFF)).astype(cp.int64)
            cum = cp.asarray(np.cumsum(np.asarray(c, dtype=np.int64)))
            vals = cp.searchsorted(cum, perm, side="right")
            cols.append(cp.ascontiguousarray(vals.astype(code_dtype(len(c)))))
        return cols

    def _table(self, cols):
        ptrs = tuple((_code_ptr(c), c.itemsize) for c in cols)
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
            _kernel("draw.cu", "cdf_rows")((min(_blocks(R), 32 * self._sm),), (THREADS,),
                                           (np.int64(R), np.int32(size), cond, flat, last))
        return flat, last

    def best_moves(self, X, tabs, offs, ctx):
        """(u, v, gain) of each context's best move in one launch (moves.cu): the same
        numbers as the NumPy body, where the array code took about 20 launches a target."""
        U = int(X.shape[0])
        u, v = cp.empty(U, dtype=cp.int64), cp.empty(U, dtype=cp.int64)
        gain = cp.empty(U, dtype=cp.float64)
        if U:
            _kernel("moves.cu", "best_moves")(
                (min(_blocks(U), 32 * self._sm),), (THREADS,),
                (np.int64(0), np.int64(U), np.int32(X.shape[1]), np.int32(ctx.shape[1]),
                 cp.ascontiguousarray(tabs, dtype=cp.float64), cp.asarray(offs, dtype=cp.int64),
                 ctx, X, u, v, gain))
        return u, v, gain

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
        _kernel("plan.cu", "plan_update")(
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
        idx_bits = max(1, (n - 1).bit_length())
        key_bits = (ncells - 1).bit_length() + idx_bits
        if key_bits > 64:
            raise BackendError(f"marginal of {ncells:,} cells is too large for the GPU sort key "
                               f"with {n:,} records")
        k0, k1 = np.uint32(key[0]), np.uint32(key[1])
        grid, nn, nc = (_blocks(n),), np.int64(n), np.int64(ncells)
        w = "32" if key_bits <= 32 and idx_bits < 32 else ""
        keys = cp.empty(n, dtype=cp.uint32 if w else cp.uint64)
        _kernel("gum.cu", "cell_keys" + w)(grid, (THREADS,), (nn, cell, np.int32(idx_bits), keys))
        keys = cp.sort(keys)  # the (cell, index) order; kernels read indices from it
        plan = self._plan
        if plan is not None and plan[0] is add and plan[1] is rem:
            scan = plan[2]  # offset, cumadd, cumrem: left by the plan launch
        else:
            scan = cp.empty(3 * ncells, dtype=cp.int64)
            s, add, rem = (cp.ascontiguousarray(x, dtype=cp.int64) for x in (s, add, rem))
            _kernel("plan.cu", "gum_prep")((1,), (PLAN_THREADS,),
                                           (nc, s, add, rem, scan[:ncells],
                                            scan[ncells:2 * ncells], scan[2 * ncells:]))
        offset, cumadd, cumrem = scan[:ncells], scan[ncells:2 * ncells], scan[2 * ncells:]
        total = cumadd[ncells - 1:]  # the number of slots stays on the device
        ib, upd, cl = np.int32(idx_bits), np.uint32(update_id), np.uint32(call)
        removed = cp.empty(n, dtype=cp.int64)
        _kernel("gum.cu", "pick_removed" + w)(
            grid, (THREADS,), (nn, total, cumrem, nc, rem, s, offset, keys, ib, k0, k1, upd, cl,
                               removed))
        # Duplicate copies the group's columns; Replace addresses the marginal's columns
        # through the full table, so both tables ride along
        group = list(range(len(cols))) if copy_cols is None else list(copy_cols)
        table, sizes = self._table([cols[j] for j in group])
        full, full_sizes = self._table(cols)
        a = list(attrs) + [0] * (3 - len(attrs))
        st = strides_of(shape) + [1] * (3 - len(attrs))
        dims = list(shape) + [1] * (3 - len(attrs))
        _kernel("gum.cu", "fill_slots" + w)(
            grid, (THREADS,),
            (nn, total, cumadd, nc, s, offset, keys, ib, removed, k0, k1, upd, cl,
             np.float64(dup_frac), table, sizes, np.int32(len(group)), full, full_sizes,
             np.int32(len(attrs)), *[np.int32(x) for x in a], *[np.int64(x) for x in st],
             *[np.int64(x) for x in dims]))
