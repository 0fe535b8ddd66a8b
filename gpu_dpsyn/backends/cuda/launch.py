"""Loading and launching the CUDA kernels of this folder (httomolibgpu's pattern: real .cu
files, one helper), and the argument checks every launch shares.

Imports without CuPy or without a device.  The CuPy backend's modules (ops, histograms,
updates) import these names, and tests/cuda_emu replaces them in each module to run the
kernels compiled by g++ on NumPy arrays.
"""
from __future__ import annotations

import functools
from pathlib import Path

from gpu_dpsyn.errors import BackendError

try:  # CuPy is optional: the module must import on machines without it
    import cupy as cp
except Exception:  # pragma: no cover - depends on the machine
    cp = None

KERNEL_DIR = Path(__file__).resolve().parent
SOURCES = ("rng.cu", "histogram.cu", "noise.cu", "plan.cu", "gum.cu", "order.cu", "draw.cu",
           "moves.cu", "ipf.cu", "polish.cu")
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
ORDER_THREADS = 256  # a block of order.cu's counting sort (a multiple of 32)


def load_cuda_module(name: str):
    """Compile a .cu file of this folder; a #line directive makes errors name the file."""
    path = KERNEL_DIR / name
    code = f'#line 1 "{path.as_posix()}"\n' + path.read_text()
    return cp.RawModule(code=code, options=NVRTC_OPTIONS + (f"-I{KERNEL_DIR.as_posix()}",))


@functools.lru_cache(maxsize=None)
def kernel(module: str, name: str):
    return load_cuda_module(module).get_function(name)


def ptr(a) -> int:
    return a.data.ptr


def code_ptr(c) -> int:
    """A code column's address, refused where the kernels would misread it: they load
    8-, 16- or 32-bit integers, one after another (load_code), so an int64, float or
    strided column would give silently wrong histograms and records."""
    if c.dtype.kind not in "iu" or c.itemsize not in (1, 2, 4) or not c.flags.c_contiguous:
        raise BackendError(f"a code column of dtype {c.dtype}"
                           f"{'' if c.flags.c_contiguous else ', strided'}: the GPU kernels "
                           "read contiguous 8-, 16- or 32-bit integer codes")
    return ptr(c)


def grid_of(n: int) -> int:
    return max(1, (int(n) + THREADS - 1) // THREADS)


def strided_grid(n: int, sm: int) -> tuple:
    """The grid of a grid-stride kernel over n elements: a thread an element, at most 32
    blocks a multiprocessor (sm of them)."""
    return (min(grid_of(n), 32 * sm),)
