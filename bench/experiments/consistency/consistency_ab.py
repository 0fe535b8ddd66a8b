"""make_consistent at an older commit against the working tree's, on the very marginals
real fits hand it: each call's inputs captured during fits of a few tables, then both
versions run on copies, call by call in turn, the outputs compared to the bit.

    python bench/experiments/consistency/consistency_ab.py --old REV [--rounds 3] [--out F]
"""
from __future__ import annotations

import argparse
import copy
import subprocess
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
sys.path[:0] = [str(ROOT / "bench" / "common"), str(ROOT / "bench" / "suites")]
from results import emit  # noqa: E402

TABLES = [("gss_wages", 8.0), ("fertility", 8.0), ("diamonds", 1.0), ("mplsstops", 8.0),
          ("flights resampled to 10^6 rows", 1.0)]


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--old", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out")
    a = p.parse_args(argv)
    from datasets import load_named
    from device_check import table
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.estimate import consistency as new, targets
    old = types.ModuleType("consistency_old")
    exec(subprocess.run(["git", "-C", str(ROOT), "show",
                         f"{a.old}:gpu_dpsyn/estimate/consistency.py"],
                        capture_output=True, text=True, check=True).stdout, old.__dict__)
    cases, real = [], targets.make_consistent

    def capture(marginals, *args, **kw):
        cases.append((copy.deepcopy(marginals), args, kw))
        return real(marginals, *args, **kw)
    targets.make_consistent = capture
    warnings.simplefilter("ignore")
    for name, eps in TABLES:
        df, schema = table(10 ** 6) if name.startswith("flights") else load_named(name)
        Synthesizer(eps, 1e-9, seed=0, backend="cpu", progress=False).fit(df, schema)
    targets.make_consistent = real
    secs = {"old": 0.0, "new": 0.0}
    for _ in range(a.rounds):
        for ms, args, kw in cases:
            x, y = copy.deepcopy(ms), copy.deepcopy(ms)
            t0 = time.perf_counter()
            got_old = old.make_consistent(x, *args, **kw)
            t1 = time.perf_counter()
            got_new = new.make_consistent(y, *args, **kw)
            secs["old"] += t1 - t0
            secs["new"] += time.perf_counter() - t1
            assert got_old == got_new and all(np.array_equal(m.values, n.values)
                                              for m, n in zip(x, y)), "the outputs differ"
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    if subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "gpu_dpsyn"],
                      capture_output=True, text=True).stdout.strip():
        head += " + working tree"
    emit({"tables": [f"{n} eps {e:g}" for n, e in TABLES], "calls": len(cases),
          "rounds": a.rounds, "old": a.old, "new": head,
          "identical": True, "old_seconds": round(secs["old"], 2),
          "new_seconds": round(secs["new"], 2)}, a.out)


if __name__ == "__main__":
    main()
