"""Building the NumPy backend's host library: each C++ unit compiled (the IPF's, the
best moves' and the Philox words' vectorised, for this CPU's vector unit in the native
build: NATIVE; PLAIN in the other), linked, cached per source version, compiler and
target, and loaded with its calls declared.  host_kernels.library() picks the build that
passes the load check; host_kernels holds the wrappers that call it."""
from __future__ import annotations

import ctypes
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
KERNEL_DIR = HERE.parent / "cuda"
UNITS = tuple(HERE / f for f in ("host_noise.cpp", "host_records.cpp", "host_philox.cpp",
                                 "host_ipf.cpp", "host_tables.cpp", "host_gum.cpp",
                                 "host_moves.cpp"))
SOURCES = UNITS + tuple(KERNEL_DIR / f for f in ("noise.cu", "gum.cu", "draw.cu", "chacha.cuh",
                                                   "common.cuh", "host.h")) + (
    Path(__file__),)  # this file: the build flags
_U64, _I64, _U32 = ctypes.c_ulonglong, ctypes.c_longlong, ctypes.c_uint
_PTR = ctypes.c_void_p


def compiler() -> str | None:
    for name in (os.environ.get("CXX"), "c++", "g++", "clang++"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def toolchain() -> tuple[str, bytes] | None:
    """(the compiler, its --version text: in the cache key), or None without one."""
    cxx = compiler()
    if cxx is None:
        return None
    try:
        return cxx, subprocess.run([cxx, "--version"], capture_output=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None


# no contraction into FMAs, no fast-math: the sums must round as NumPy's
FLAGS = ("-O2", "-fPIC", "-std=c++14", "-ffp-contract=off", "-fno-fast-math")
# three units vectorised for this host's vector unit, the same bits (IEEE operations in
# the same order; no FMA; Philox is integer arithmetic): the IPF's rescale, 1.5x on an
# AVX-512 EPYC (a 93 x 100,000 table: 18 ms against 28 ms), the best moves' row sums,
# 1.5-2.4x (host_moves.cpp), and the Philox words, 6x for one word a counter and 3x for
# two (one thread: 2.8 and 5.8 ns a counter against 17; host_philox.cpp, a loop a word
# with AVX2 or AVX-512, else the four words once, 11 ns).  The other units gained nothing
# (moves.cu's body, built so, had slowed the polish).
VECTOR = ("-ftree-vectorize", "-fvect-cost-model=dynamic")
NATIVE = {unit: VECTOR + ("-march=native",)
          for unit in ("host_ipf.cpp", "host_moves.cpp", "host_philox.cpp")}
# the best moves' row sums vectorised in the plain build too (the baseline vector unit;
# GCC has taken these flags since 4.9: a compiler refusing them leaves NumPy to serve)
PLAIN = {"host_moves.cpp": VECTOR}
BUILD_SECONDS = 300  # the whole build's time limit (a hung compiler: no library)


def _target(cxx: str) -> bytes:
    """What -march=native compiles for, in a native build's cache key (a library built
    for one CPU could stop another with an illegal instruction, in a cache shared by
    machines): the compiler's own expansion of it (GCC's target options, else clang's
    -### command line, temporary names dropped) and the CPU's description."""
    said = b""
    for args in (["-march=native", "-Q", "--help=target"],
                 ["-###", "-march=native", "-x", "c++", "-c", os.devnull, "-o", os.devnull]):
        try:
            r = subprocess.run([cxx, *args], capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        said += re.sub(rb"\S*(tmp|/var/folders)\S*", b"", r.stdout + r.stderr)
        if r.returncode == 0:
            break
    try:
        with open("/proc/cpuinfo", "rb") as f:
            said += _cpu_lines(f)
    except OSError:
        import platform
        said += f"{platform.machine()} {platform.processor()}".encode()
    return said


def build(cxx: str, native: bool, tmp: Path, out: Path) -> None:
    """The library into out: each unit compiled apart (the NATIVE flags on theirs when
    native, else the PLAIN ones), then linked, within BUILD_SECONDS in all."""
    end = time.monotonic() + BUILD_SECONDS
    objs = []
    for unit in UNITS:
        obj = tmp / (unit.stem + ".o")
        extra = NATIVE.get(unit.name, ()) if native else PLAIN.get(unit.name, ())
        subprocess.run([cxx, *FLAGS, *extra, "-x", "c++", f"-I{KERNEL_DIR}", "-c", str(unit),
                        "-o", str(obj)], check=True, capture_output=True,
                       timeout=max(1.0, end - time.monotonic()))
        objs.append(str(obj))
    subprocess.run([cxx, "-shared", *objs, "-o", str(out)], check=True, capture_output=True,
                   timeout=max(1.0, end - time.monotonic()))


def _cpu_lines(lines) -> bytes:
    """The lines of /proc/cpuinfo that name the CPU, each once: not "cpu MHz", which a
    machine scaling its clock changes from read to read (a native build a process)."""
    return b"".join(sorted({line for line in lines if line.startswith(
        (b"model name", b"flags", b"Features", b"isa", b"cpu"))
        and not line.startswith(b"cpu MHz")}))


def cache_dir() -> Path:
    """GPU_DPSYN_CACHE, else ~/.cache/gpu_dpsyn; absolute: ctypes looks a bare file name
    up on the library path, and an empty variable would be the working directory."""
    return Path(os.environ.get("GPU_DPSYN_CACHE") or Path.home() / ".cache" / "gpu_dpsyn"
                ).absolute()


def load(cxx: str, version: bytes, native: bool):
    """The build of this kind from the cache (made there first if missing), its calls
    declared; None when it cannot be built or loaded."""
    key = b"native" + _target(cxx) if native else b"plain"
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in SOURCES) + cxx.encode() + version
                            + key)
    cache = cache_dir()
    so = cache / f"host_kernels_{digest.hexdigest()[:16]}.so"
    try:
        if not so.exists():
            cache.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(dir=cache) as tmp:
                out = Path(tmp) / so.name
                build(cxx, native, Path(tmp), out)
                os.replace(out, so)  # atomic: concurrent builders write the same file
        lib = ctypes.CDLL(str(so))
    except (OSError, subprocess.SubprocessError):
        return None
    lib.host_noise_draws.argtypes = [_I64, _I64, _I64, _PTR, _U32, _U64, _I64, _PTR, _PTR,
                                     _PTR, _PTR]
    lib.host_philox_range.argtypes = [_I64, _I64, _I64, _U32, _U32, _U32, _U32, _U32,
                                      ctypes.c_int, _PTR]
    lib.host_feistel_ranks.argtypes = [_I64, _PTR, _PTR, _PTR, _PTR, _PTR]
    lib.host_cell_histogram.argtypes = [_I64, ctypes.c_int, _PTR, ctypes.c_int, _I64, _PTR,
                                        ctypes.c_int, _I64, _PTR, ctypes.c_int, _I64, _I64,
                                        ctypes.c_int, _PTR, _PTR]
    lib.host_cell_histogram.restype = ctypes.c_int
    lib.host_best_moves.argtypes = [_I64, _I64, ctypes.c_int, ctypes.c_int, _PTR, _PTR, _PTR,
                                    _PTR, _PTR, _PTR, _PTR, _PTR]
    lib.host_best_moves.restype = ctypes.c_int
    lib.host_ipf_margin.argtypes = [_I64, _I64, _I64, _PTR, _PTR, _PTR, _I64, ctypes.c_double,
                                    _PTR]
    lib.host_ipf_scale.argtypes = [_I64, _I64, _I64, _I64, _PTR, _PTR, _PTR, _I64]
    lib.host_ipf_scale_margin.argtypes = [_I64, _I64, _I64, _I64, _PTR, _PTR, _PTR, _I64,
                                          _PTR, _PTR, _I64, _PTR]
    lib.host_gum_apply.argtypes = ([_I64, _I64, ctypes.c_int, _I64, _PTR, _I64, _PTR, _PTR,
                                    _PTR, _PTR, _PTR] + [_U32] * 4
                                   + [ctypes.c_double, _PTR, _PTR, ctypes.c_int, _PTR, _PTR]
                                   + [ctypes.c_int] * 4 + [_I64] * 6 + [_PTR])
    lib.host_gum_apply.restype = None
    lib.host_removal_rate.argtypes = [_I64, _PTR, _PTR, ctypes.c_double, ctypes.c_int]
    lib.host_removal_rate.restype = ctypes.c_double
    lib.host_allowed.argtypes = [_I64, _I64, _I64, _PTR, _PTR, _PTR, _PTR, _PTR, _PTR]
    lib.host_allowed.restype = None
    lib.host_cell_sums.argtypes = [_I64, _I64, _PTR, _PTR, _I64, _PTR]
    lib.host_move_gains.argtypes = [_I64, _PTR, _PTR, _PTR, _I64, _PTR, _PTR, ctypes.c_double,
                                    _I64, _PTR]
    lib.host_block_sizes.argtypes = [_I64, ctypes.c_int, _PTR, _PTR, _PTR, _PTR, _I64, _PTR,
                                     _PTR, _PTR, _PTR]
    lib.host_cdf_rows.argtypes = [_I64, _I64, ctypes.c_int, _PTR, _PTR, _PTR]
    lib.host_draw_rows.argtypes = [_I64, _I64, _I64, _PTR, _I64, _PTR, _PTR, _PTR, _PTR]
    for name in ("host_counting_argsort_u16", "host_counting_argsort_i64"):
        getattr(lib, name).argtypes = [_I64, _PTR, _I64, _PTR, _PTR]
        getattr(lib, name).restype = ctypes.c_int
    for k in ("u16", "i64"):
        getattr(lib, "host_counting_block_" + k).argtypes = [_I64, _I64, _PTR, _I64, _PTR]
        getattr(lib, "host_counting_block_" + k).restype = ctypes.c_int
        getattr(lib, "host_counting_place_" + k).argtypes = [_I64, _I64, _PTR, _PTR, _PTR]
        getattr(lib, "host_counting_place_" + k).restype = None
    return lib
