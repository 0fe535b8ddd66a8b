"""Run the real CUDA sources and the real CuPy glue on the CPU.

The .cu files are compiled by g++ with emu.h standing in for the CUDA built-ins;
data-parallel kernels run one thread at a time, the block-cooperative ones (plan.cu)
as blocks of real threads with barriers.  NumPy stands in for CuPy.  This checks,
without a GPU, that the kernels compute what the NumPy fallback computes, and makes a
missing barrier likely to show.  In blocks mode (emulated_backend(..., block=32)) every
kernel runs as a device runs it: blocks of that many real threads, one block after
another, so the paths taken only with whole warps (shuffles) and races between the
threads of a block run too; slower, for small inputs.  (Launch-configuration and
CuPy-API mistakes need a device: the GPU tests.)
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import threading
import types
from pathlib import Path

import numpy as np

from gpu_dpsyn.backends.cuda import histograms, launch, ops as kops, passes, updates

MODULES = (launch, histograms, updates, passes, kops)  # each imports launch's names as its own


def set_everywhere(monkeypatch, name: str, value) -> None:
    """Set `name` (cp, kernel, ptr, a constant) in every module of the CuPy backend that
    holds it: each imported it from launch, so each has its own reference."""
    for module in MODULES:
        if hasattr(module, name):
            monkeypatch.setattr(module, name, value)

HERE = Path(__file__).resolve().parent

_CTYPES = {np.int64: ctypes.c_longlong, np.int32: ctypes.c_int, np.uint32: ctypes.c_uint,
           np.uint64: ctypes.c_ulonglong, np.float64: ctypes.c_double}


COOPERATIVE = ("plan.cu", "order.cu")  # kernels whose threads share memory and barriers
STATIC_SHARED = ("plan.cu",)  # __shared__ arrays of fixed size (order.cu's are extern)
COOP_THREADS = 64  # block size for them here: several levels of every reduction


def build(out_dir: Path) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        raise RuntimeError("g++ is needed to emulate the kernels")
    so = out_dir / "kernels_emu.so"
    flags = ["-O2", "-fPIC", "-pthread", "-Wno-unknown-pragmas", f"-I{launch.KERNEL_DIR}",
             f"-I{HERE}", "-include", str(HERE / "emu.h"), "-x", "c++"]
    objs = []
    for src in launch.SOURCES:
        obj = out_dir / (src + ".o")
        extra = ["-DEMU_SHARED_STATIC"] if src in STATIC_SHARED else []
        subprocess.run([gxx, *flags, *extra, "-c", str(launch.KERNEL_DIR / src), "-o", str(obj)],
                       check=True, capture_output=True, text=True)
        objs.append(str(obj))
    subprocess.run([gxx, "-O2", "-shared", "-fPIC", "-pthread", f"-I{HERE}",
                    str(HERE / "emu.cpp"), *objs, "-o", str(so)],
                   check=True, capture_output=True, text=True)
    return so


class _Kernel:
    def __init__(self, lib, module, name, blocks: bool = False):
        self.fn = getattr(lib, name)
        self.fn.restype = None
        self.lib = lib
        self.blocks = blocks or module in COOPERATIVE  # real threads, a block at a time

    def __call__(self, grid, block, args, shared_mem=0):
        cargs = []
        for a in args:
            if isinstance(a, np.ndarray):
                cargs.append(ctypes.c_void_p(a.ctypes.data))
            else:
                cargs.append(_CTYPES[type(a)](a))
        if self.blocks:
            return self._blocks(int(grid[0]), int(block[0]), cargs)
        threads = int(grid[0]) * int(block[0])
        for b in range(threads):  # every thread its own block of one
            self.lib.emu_set(b, threads)
            self.fn(*cargs)

    def _blocks(self, grid, nthreads, cargs):
        """Every block in turn as nthreads real threads (ctypes drops the GIL, so they run
        concurrently; emu_enter keeps them in step).  A barrier not every thread reaches
        deadlocks: raised after a minute."""
        self.lib.emu_blocks_begin(grid, nthreads)

        def body(tid):
            for b in range(grid):
                self.lib.emu_enter(b, tid)
                self.fn(*cargs)
        ts = [threading.Thread(target=body, args=(t,), daemon=True) for t in range(nthreads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=60)
            if t.is_alive():
                raise RuntimeError("emulated block deadlocked at __syncthreads")


class _NumpyAsCupy(types.ModuleType):
    def __getattr__(self, name):  # everything not overridden below is NumPy's
        return getattr(np, name)


def _fake_cupy():
    fake = _NumpyAsCupy("fake_cupy")
    fake.asarray = lambda x, dtype=None: np.array(x, dtype=dtype, copy=True)
    fake.asnumpy = np.asarray
    fake.argsort = lambda a: np.argsort(a, kind="stable")  # cupy's argsort is stable
    dev = types.SimpleNamespace(attributes={"MultiProcessorCount": 2}, synchronize=lambda: None)
    fake.cuda = types.SimpleNamespace(Device=lambda: dev)
    return fake


def emulated_backend(monkeypatch, so: Path, block: int | None = None):
    """A CupyBackend whose kernels run from the g++ build, with NumPy arrays.  block: run
    every launch as blocks of that many real threads (a multiple of 32: whole warps),
    one block at a time, instead of one thread at a time."""
    lib = ctypes.CDLL(str(so))
    fake = _fake_cupy()
    set_everywhere(monkeypatch, "cp", fake)
    set_everywhere(monkeypatch, "ptr", lambda a: a.ctypes.data)
    set_everywhere(monkeypatch, "kernel", lambda module, name: _Kernel(lib, module, name,
                                                                       block is not None))
    set_everywhere(monkeypatch, "PLAN_THREADS", COOP_THREADS)
    set_everywhere(monkeypatch, "ORDER_THREADS", COOP_THREADS)  # two warps: cheaper here
    if block is not None:
        set_everywhere(monkeypatch, "THREADS", block)
    be = kops.CupyBackend()
    be.xp = fake
    be.free_memory = lambda: None  # no device to ask
    be.prepare = lambda: None  # build() compiled every source already
    return be
