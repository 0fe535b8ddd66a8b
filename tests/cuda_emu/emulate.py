"""Run the real CUDA sources and the real CuPy glue on the CPU.

The .cu files are compiled by g++ with emu.h standing in for the CUDA built-ins and
run one thread at a time; NumPy stands in for CuPy.  This checks, without a GPU,
that the kernels compute what the NumPy fallback computes.  (It cannot find races,
launch-configuration or CuPy-API mistakes: the GPU tests do that on a device.)
"""
from __future__ import annotations

import ctypes
import shutil
import subprocess
import types
from pathlib import Path

import numpy as np

from gpu_dpsyn.kernels import ops as kops

HERE = Path(__file__).resolve().parent

_CTYPES = {np.int64: ctypes.c_longlong, np.int32: ctypes.c_int, np.uint32: ctypes.c_uint,
           np.uint64: ctypes.c_ulonglong, np.float64: ctypes.c_double}


def build(out_dir: Path) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        raise RuntimeError("g++ is needed to emulate the kernels")
    so = out_dir / "kernels_emu.so"
    srcs = [str(kops.KERNEL_DIR / s) for s in kops.SOURCES]
    subprocess.run([gxx, "-O2", "-shared", "-fPIC", "-Wno-unknown-pragmas",
                    f"-I{kops.KERNEL_DIR}", f"-I{HERE}", "-include", str(HERE / "emu.h"),
                    "-x", "c++", *srcs, "-x", "none", str(HERE / "emu.cpp"), "-o", str(so)],
                   check=True, capture_output=True, text=True)
    return so


class _Kernel:
    def __init__(self, lib, name):
        self.fn = getattr(lib, name)
        self.fn.restype = None
        self.set = lib.emu_set

    def __call__(self, grid, block, args, shared_mem=0):
        cargs = []
        for a in args:
            if isinstance(a, np.ndarray):
                cargs.append(ctypes.c_void_p(a.ctypes.data))
            else:
                cargs.append(_CTYPES[type(a)](a))
        threads = int(grid[0]) * int(block[0])
        for b in range(threads):  # every thread its own block of one
            self.set(b, threads)
            self.fn(*cargs)


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


def emulated_backend(monkeypatch, so: Path):
    """A CupyBackend whose kernels run from the g++ build, with NumPy arrays."""
    lib = ctypes.CDLL(str(so))
    fake = _fake_cupy()
    monkeypatch.setattr(kops, "cp", fake)
    monkeypatch.setattr(kops, "_ptr", lambda a: a.ctypes.data)
    monkeypatch.setattr(kops, "_kernel", lambda module, name: _Kernel(lib, name))
    monkeypatch.setattr(kops, "PLAN_THREADS", 1)  # block-cooperative kernels: one thread
    be = kops.CupyBackend()
    be.xp = fake
    be.free_memory = lambda: None  # no device to ask
    return be
