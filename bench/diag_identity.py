"""Where do a GPU and a CPU release part?  The sample's steps after GUM (neighbour
shuffle, Gibbs sweep, polish) and the table fits inside them (gibbs.fit_conditional,
polish.fit_table) run on the GPU as usual, and each is run again on the NumPy backend
from a host copy of the same input; the first that differs is reported.  Only the
final sample's steps are checked (the adaptive rounds' run on the GPU alone).

    python bench/diag_identity.py [--rows N] [--fits-only] [--out diag.json]

The CPU reruns cost about what the NumPy backend's sample costs (on an H100 machine the
whole table's fit took 55 s and the sweep's check did not end within 110 s more):
start with --fits-only or --rows 100000.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import gpu_dpsyn.synthesizer as api
import gpu_dpsyn.generate.gibbs as gibbs
import gpu_dpsyn.generate.polish as polish
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CPU = get_backend("cpu")
report: list = []
active = {"on": False}


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def checked(name, fn, is_step):
    """fn run as usual; in the final sample, run again on host copies and compared."""
    def wrapper(*args, **kw):
        if not active["on"]:
            return fn(*args, **kw)
        if is_step:  # (backend, cols, ...): cols edited in place
            be, cols = args[0], args[1]
            cpu_cols = [host(c).copy() for c in cols]
            t0 = time.perf_counter()
            out = fn(*args, **kw)
            t1 = time.perf_counter()
            active["on"] = False  # the CPU rerun's own fits are not compared again
            fn(CPU, cpu_cols, *args[2:], **kw)
            active["on"] = True
            t2 = time.perf_counter()
            diff = [int((host(c) != h).sum()) for c, h in zip(cols, cpu_cols)]
            report.append({"step": name, "records_differing_per_column": diff,
                           "gpu_s": round(t1 - t0, 2), "cpu_s": round(t2 - t1, 2)})
            print(report[-1], flush=True)
            return out
        # a table fit: (arrays..., xp=cupy) -> compare with xp=numpy on host copies
        out = fn(*args, **kw)
        hargs = [[host(t) for t in a] if isinstance(a, list) else
                 (host(a) if hasattr(a, "shape") else a) for a in args
                 if not isinstance(a, types.ModuleType)]  # xp, given by position
        ref = fn(*hargs, **{**kw, "xp": np})
        h = host(out)
        same = bool(np.array_equal(h, ref))
        entry = {"fit": name, "shape": list(h.shape), "same": same}
        if not same:
            entry["max_abs_diff"] = float(np.abs(h.astype(float) - ref.astype(float)).max())
            entry["cells_differing"] = int((h != ref).sum())
        report.append(entry)
        print(entry, flush=True)  # one line a fit: a run cut off still tells how far
        return out
    return wrapper


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=int, default=0, help="the first N rows (0: all)")
    p.add_argument("--out", default="diag_identity.json")
    p.add_argument("--backend", default="gpu", help="cpu: a dry run of this script")
    p.add_argument("--fits-only", action="store_true",
                   help="compare the table fits only, not the steps (half the CPU time)")
    a = p.parse_args(argv)
    warnings.simplefilter("ignore")
    df = pd.read_csv(ROOT / "data" / "flights.csv.xz")
    if a.rows:
        df = df.iloc[:a.rows]
    schema = load_schema(ROOT / "data" / "flights_schema.json")
    if not a.fits_only:
        api.neighbour_shuffle = checked("shuffle", api.neighbour_shuffle, True)
        api.gibbs_sweep = checked("sweep", api.gibbs_sweep, True)
        api.polish = checked("polish", api.polish, True)
    gibbs.fit_conditional = checked("fit_conditional", gibbs.fit_conditional, False)
    polish.fit_table = checked("fit_table", polish.fit_table, False)
    syn = Synthesizer(1.0, 1e-9, seed=0, backend=a.backend, progress=False)
    t0 = time.perf_counter()
    syn.fit(df, schema)
    print(f"fit {time.perf_counter() - t0:.1f} s", flush=True)
    active["on"] = True
    syn.sample()
    fits = [e for e in report if "fit" in e]
    summary = {"rows": len(df), "steps": [e for e in report if "step" in e],
               "fits": len(fits), "fits_differing": [e for e in fits if not e["same"]]}
    Path(a.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("fits", "fits_differing")})[:3000])


if __name__ == "__main__":
    main()
