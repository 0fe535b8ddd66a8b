"""Exact noise throughput on the CPU fallback: 10^6 cells of discrete Gaussian and
discrete Laplace noise, with noise.cu built for the host and with the vectorized NumPy
samplers alone.  Writes bench/results/noise_<cpu>.json.

    python bench/experiments/noise/noise.py [--cells 1000000] [--repeats 3] [--out PATH]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.backends.numpy import host_kernels  # noqa: E402
from gpu_dpsyn.backends.numpy import noise as numpy_noise  # noqa: E402
from gpu_dpsyn.privacy.drawing import draw  # noqa: E402
from gpu_dpsyn.privacy.samplers import MAX_WORDS, DiscreteGaussian, DiscreteLaplace  # noqa: E402,E501

SPECS = {"gaussian sigma=1": DiscreteGaussian.at_least(1.0),
         "gaussian sigma=31": DiscreteGaussian.at_least(31.0 ** 2),
         "gaussian sigma=3000": DiscreteGaussian.at_least(3000.0 ** 2),
         "laplace scale=10": DiscreteLaplace.at_least(10.0)}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--cells", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="default: bench/results/noise_<cpu>.json")
    a = ap.parse_args()
    be = get_backend("cpu")
    key = tuple(range(8))
    lib = host_kernels.library()
    rows = []
    for name, spec in SPECS.items():
        row = {"noise": name, "cells": a.cells}
        if lib is not None:
            row["host_build_s"] = min(_time(lambda: draw(be, spec, a.cells, key, 1, r))
                                      for r in range(a.repeats))
        row["numpy_s"] = min(_time(lambda: numpy_noise.sample(spec, a.cells, key, 1, r,
                                                               MAX_WORDS))
                             for r in range(a.repeats))
        print(row)
        rows.append(row)
    write_result({"device": device_name(be), "host_build": lib is not None, "results": rows},
                 a.out, "noise", device_name(be))


def _time(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


if __name__ == "__main__":
    main()
