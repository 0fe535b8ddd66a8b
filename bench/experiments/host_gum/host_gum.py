"""GUM's record update on the host alone (host_gum.cpp through host_kernels.gum_apply):
the removal and the fill, timed apart, on random records.

    python bench/experiments/host_gum/host_gum.py [--rows 1e6] [--updates 10] [--out F]

16 uint8 columns; each update plans a 3-way marginal of 6,000 cells towards counts
perturbed by about 10% (arrays.plan_update, alpha 0.5) and half its slots Duplicate.
Run with GPU_DPSYN_THREADS=1 for one thread.  Prints one JSON line (appended to --out):
slots an update, and the milliseconds an update of the records' cell order (its
argsort_bounded) and of each phase; checksum: a hash of the
records after every update (two builds that move the same records agree)."""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import device_name, emit  # noqa: E402

from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.backends.arrays import plan_update  # noqa: E402
from gpu_dpsyn.backends.numpy import host_kernels  # noqa: E402
from gpu_dpsyn.backends.numpy.ops import argsort_bounded  # noqa: E402
from gpu_dpsyn.core import threads  # noqa: E402

DOMAIN = [10, 20, 30, 8, 12, 5, 7, 9, 3, 4, 6, 11, 13, 2, 2, 15]
ATTRS, SHAPE = (0, 1, 2), (10, 20, 30)


class _Timed:
    """The library with host_gum_apply's calls timed per phase."""

    def __init__(self, lib):
        self.lib, self.seconds = lib, {0: 0.0, 1: 0.0}

    def __getattr__(self, name):
        if name != "host_gum_apply":
            return getattr(self.lib, name)

        def timed(lo, hi, phase, *rest):
            t0 = time.perf_counter()
            self.lib.host_gum_apply(lo, hi, phase, *rest)
            self.seconds[phase] += time.perf_counter() - t0
        return timed


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", default="1e6")
    p.add_argument("--updates", type=int, default=10)
    p.add_argument("--out")
    a = p.parse_args(argv)
    lib = host_kernels.library()
    if lib is None:
        raise SystemExit("no host library (no C++ compiler?): nothing to time")
    n, r, timed = int(float(a.rows)), np.random.default_rng(0), _Timed(lib)
    cols = [r.integers(0, d, n).astype(np.uint8) for d in DOMAIN]
    slots, digest, sorting = 0, hashlib.sha256(), 0.0
    for it in range(a.updates):
        cell = np.ravel_multi_index([cols[x] for x in ATTRS], SHAPE)
        s = np.bincount(cell, minlength=int(np.prod(SHAPE)))
        t = s * np.exp(r.normal(0, 0.1, s.size))
        add, rem = plan_update(np, s, t * (n / t.sum()), 0.5)
        t0 = time.perf_counter()
        order = argsort_bounded(np, cell, s.size)  # the records in cell order
        sorting += time.perf_counter() - t0
        slots += int(add.sum())
        host_kernels.gum_apply(timed, cols, ATTRS, SHAPE, order, s, add, rem, 0.5, (1, 2),
                               it, 0)
        for c in cols:
            digest.update(c.tobytes())
    head = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "rev-parse",
                           "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(Path(__file__).resolve().parent), "status",
                            "--porcelain", "--", "../../../gpu_dpsyn"], capture_output=True,
                           text=True).stdout.strip()
    row = {"commit": head + (" + working tree" if dirty else ""),
           "device": device_name(get_backend("cpu")), "rows": n, "updates": a.updates,
           "threads": threads.count(), "slots_per_update": slots // a.updates,
           "order_ms": round(sorting / a.updates * 1e3, 3),
           "removal_ms": round(timed.seconds[0] / a.updates * 1e3, 3),
           "fill_ms": round(timed.seconds[1] / a.updates * 1e3, 3),
           "checksum": digest.hexdigest()[:16]}
    emit(row, a.out)
    return row


if __name__ == "__main__":
    main()
