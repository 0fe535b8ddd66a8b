"""Measuring alone: every 1-, 2- and 3-way marginal of a synthetic 10^6-row, 6-column table
(counts plus exact discrete Gaussian noise, charged), on the NumPy backend by default.

    python bench/suites/measuring.py [--rows 1e6] [--domains 12,20,3,50,24,8] [--backend cpu]

Prints one JSON line (and writes it to --out if given): the marginals, their cells, the
histograms' seconds alone and measure()'s (histograms, charges and noise).
"""
from __future__ import annotations

import argparse
import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from results import device_name, emit  # noqa: E402

from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.measure.marginals import measure  # noqa: E402
from gpu_dpsyn.privacy import Accountant  # noqa: E402
from gpu_dpsyn.privacy.keys import noise_key  # noqa: E402


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", default="1e6")
    p.add_argument("--domains", default="12,20,3,50,24,8")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--out")
    a = p.parse_args(argv)
    be, n = get_backend(a.backend), int(float(a.rows))
    domain = [int(d) for d in a.domains.split(",")]
    r = np.random.default_rng(0)
    cols = [be.asarray(r.integers(0, d, n).astype(np.uint8 if d <= 256 else np.uint16))
            for d in domain]
    plan = [c for k in (1, 2, 3) for c in itertools.combinations(range(len(domain)), k)]
    acc = Accountant(1.0, 1e-9, 1, "cks")
    acc.choose_mechanism([1.0], [1], "gaussian")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        key = noise_key(0, purpose="bench")
    be.prepare()
    t0 = time.perf_counter()
    for attrs in plan:
        be.to_numpy(be.histogram(cols, attrs, tuple(domain[x] for x in attrs)))
    t1 = time.perf_counter()
    out = measure(be, cols, domain, plan, [1.0 / len(plan)] * len(plan), acc, key,
                  [f"c{i}" for i in range(len(domain))])
    t2 = time.perf_counter()
    row = {"device": device_name(be), "rows": n, "domains": domain,
           "marginals": len(plan), "cells": sum(m.cells for m in out),
           "histograms_seconds": round(t1 - t0, 3), "measure_seconds": round(t2 - t1, 3)}
    emit(row, a.out)
    return row


if __name__ == "__main__":
    main()
