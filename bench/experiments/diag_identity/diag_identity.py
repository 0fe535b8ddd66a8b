"""Where do a GPU and a CPU release part?  The first sample's records are made step by
step with the generate stage's functions: init_records and GUM (records.fit_level with
the steps after GUM turned off), then the neighbour shuffle, the Gibbs sweep, the polish
and the last shuffle in fit_level's order.  Each step runs on the chosen backend, then
again on the NumPy backend from a host copy of the same input; the records that differ
are counted.  The table fits inside the sweep and the polish (gibbs.fit_conditional,
polish.fit_table) are compared too, each against NumPy on host copies.  Only the final
sample's steps are checked (the adaptive rounds' run on the backend alone).  At the end
the step-by-step records are compared with records.fit_level's own, all steps on: if
they differ, fit_level's order changed and this script needs to follow it.

    python bench/experiments/diag_identity/diag_identity.py [--rows N] [--fits-only]
                                                            [--out diag.json]
    python bench/experiments/diag_identity/diag_identity.py --backend cpu --rows 3000

The CPU reruns cost about what the NumPy backend's sample costs (on an H100 machine the
whole table's fit took 55 s and the sweep's check did not end within 110 s more):
start with --fits-only or --rows 100000.  --backend cpu is a dry run of the script.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
import time
import types
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]  # the repository
sys.path.insert(0, str(ROOT))  # gpu_dpsyn without an install (a fresh device machine)
import gpu_dpsyn.generate.gibbs as gibbs  # noqa: E402
import gpu_dpsyn.generate.polish as polish  # noqa: E402
from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.core import rng  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402
from gpu_dpsyn.generate.records import SampleRun, fit_level, init_records  # noqa: E402
from gpu_dpsyn.generate.sample import estimated_rows  # noqa: E402
from gpu_dpsyn.generate.shuffle import neighbour_shuffle  # noqa: E402

CPU = get_backend("cpu")


def host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def compared_fit(name, fn, report):
    """fn (a table fit: arrays..., xp) as called; then again with xp=numpy on host copies
    of its arguments, and the two tables compared (one report line a fit)."""
    def wrapper(*args, **kw):
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


@contextlib.contextmanager
def fits_compared(report):
    """The sweep's and the polish's table fits compared while the backend's step runs.
    They are internal helpers that no stage function takes as an argument, so they are
    replaced in their modules (gibbs_sweep and polish call them through the module
    globals) for the duration, and restored; the NumPy reruns run outside."""
    kept = gibbs.fit_conditional, polish.fit_table
    gibbs.fit_conditional = compared_fit("fit_conditional", kept[0], report)
    polish.fit_table = compared_fit("fit_table", kept[1], report)
    try:
        yield
    finally:
        gibbs.fit_conditional, polish.fit_table = kept


def steps_after_gum(model, targets, key, call: int) -> list:
    """(name, step(backend, cols)) for the steps records.fit_level runs after GUM on an
    ungrouped level without a public prior, in its order, for the model's settings."""
    s, dom, tops = model.settings, model.domain, [t[0] for t in targets]
    if s.gibbs_sweep and not s.polish:
        raise SystemExit("the sweep without the polish ends with a GUM repair this script "
                         "does not replay: run with the default settings")
    out = []
    if s.neighbour_shuffle:
        out.append(("shuffle", lambda be, cols: neighbour_shuffle(be, cols, tops, dom, key,
                                                                  call)))
    if s.gibbs_sweep:
        out.append(("sweep", lambda be, cols: gibbs.gibbs_sweep(be, cols, targets, dom, key,
                                                                call)))
    if s.polish:
        out.append(("polish", lambda be, cols: polish.polish(be, cols, targets, dom, key,
                                                             call)))
    if s.neighbour_shuffle and (s.gibbs_sweep or s.polish):
        out.append(("shuffle after", lambda be, cols: neighbour_shuffle(
            be, cols, tops, dom, key, call, sweep=1)))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    syn = Synthesizer(1.0, 1e-9, seed=0, backend=a.backend, progress=False)
    t0 = time.perf_counter()
    syn.fit(df, schema)
    print(f"fit {time.perf_counter() - t0:.1f} s", flush=True)
    # the first sample()'s size, targets and RNG call (ungrouped, no public table)
    m, be = syn.model, syn.backend
    n = estimated_rows(m, syn.check_sample)
    targets, call, key = m.targets(n), syn._reserve_calls(1), rng.split_key(m.seed)
    gum_only = dataclasses.replace(m, settings=dataclasses.replace(
        m.settings, neighbour_shuffle=False, gibbs_sweep=False, polish=False))
    cols = fit_level(be, gum_only, init_records(be, m, n, key, call), m.levels[0], targets,
                     key, call, False, SampleRun())
    report: list = []
    for name, step in steps_after_gum(m, targets, key, call):
        cpu_cols = [host(c).copy() for c in cols]
        t0 = time.perf_counter()
        with fits_compared(report):
            step(be, cols)
            be.synchronize()
        t1 = time.perf_counter()
        if a.fits_only:
            continue
        step(CPU, cpu_cols)
        t2 = time.perf_counter()
        diff = [int((host(c) != h).sum()) for c, h in zip(cols, cpu_cols)]
        report.append({"step": name, "records_differing_per_column": diff,
                       "backend_s": round(t1 - t0, 2), "cpu_s": round(t2 - t1, 2)})
        print(report[-1], flush=True)
    # the same records as sample() makes? (fit_level with every step, on the backend)
    whole = fit_level(be, m, init_records(be, m, n, key, call), m.levels[0], targets, key,
                      call, False, SampleRun())
    as_fit_level = all(np.array_equal(host(c), host(w)) for c, w in zip(cols, whole))
    print(f"step-by-step records equal records.fit_level's: {as_fit_level}", flush=True)
    fits = [e for e in report if "fit" in e]
    summary = {"rows": len(df), "backend": be.name, "records": n,
               "steps": [e for e in report if "step" in e], "fits": len(fits),
               "fits_differing": [e for e in fits if not e["same"]],
               "steps_as_in_fit_level": as_fit_level}
    Path(a.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("fits", "fits_differing",
                                              "steps_as_in_fit_level")})[:3000])


if __name__ == "__main__":
    main()
