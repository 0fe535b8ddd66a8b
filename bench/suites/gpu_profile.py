"""Where one GUM marginal update spends its time, per operation, on one backend.

    python bench/suites/gpu_profile.py [--rows 1e6] [--backend gpu] [--repeat 50]

Records are flights20 bootstrap-resampled to --rows, initialised from the exact 1-way
marginals; each operation of an update on the 2-way marginal (dest, day) (3,255 cells)
is timed alone.  On the GPU, cupyx.profiler.benchmark reports host time (launch and
Python overhead) and device time (CUDA events) separately.  Writes JSON to
bench/results/gpu_profile_<device>.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import flights20  # noqa: E402
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn.backends import get_backend  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402


def timer(be, fn, repeat):
    """Median host and device milliseconds of fn()."""
    if be.name == "gpu":
        from cupyx.profiler import benchmark
        r = benchmark(fn, n_repeat=repeat, n_warmup=3)
        return float(np.median(r.cpu_times) * 1e3), float(np.median(r.gpu_times[0]) * 1e3)
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3), None


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=float, default=1e6)
    p.add_argument("--backend", default="gpu")
    p.add_argument("--repeat", type=int, default=50)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    be = get_backend(a.backend)
    xp = be.xp
    df, schema = flights20(int(a.rows))
    schema = load_schema(schema)
    codes = encode(df, schema)
    counts = [np.bincount(c, minlength=d) for c, d in zip(codes, schema.domain)]
    cols = be.init_records(counts, (1, 2), 0)
    names = [c.name for c in schema.synth_columns]
    attrs = (names.index("day"), names.index("dest"))
    shape = tuple(schema.domain[x] for x in attrs)
    _, real = get_backend("cpu").cell_histogram(codes, attrs, shape)
    t = xp.asarray(real.astype(np.float64))
    cell, s = be.cell_histogram(cols, attrs, shape)
    add, rem = be.plan_update(s, t, 1.0)
    state = {"u": 0}

    def update():
        c, h = be.cell_histogram(cols, attrs, shape)
        ad, rm = be.plan_update(h, t, 1.0)
        be.gum_apply(cols, attrs, shape, c, h, ad, rm, 0.5, (1, 2), state["u"], 0)
        state["u"] += 1

    ops = {
        "histogram (fused cell index)": lambda: be.cell_histogram(cols, attrs, shape),
        "plan_update": lambda: be.plan_update(s, t, 1.0),
        # gum_apply on fixed inputs: the same records are removed and refilled each time
        # (these add/rem are not the last plan's, so on the GPU it also runs gum_prep)
        "gum_apply": lambda: be.gum_apply(cols, attrs, shape, cell, s, add, rem, 0.5, (1, 2),
                                          0, 0),
        "whole update": update,
    }
    if be.name == "gpu":
        n = int(a.rows)
        keys = xp.arange(n, dtype=xp.uint64)[::-1].copy()
        small = xp.zeros(16)
        from gpu_dpsyn.backends.cuda import launch, updates

        def plan_with(threads):
            def f():
                updates.PLAN_THREADS = threads
                try:
                    be.plan_update(s, t, 1.0)
                finally:
                    updates.PLAN_THREADS = default
            return f
        default = updates.PLAN_THREADS
        for threads in (256, 1024):
            ops[f"plan_update, {threads} threads"] = plan_with(threads)
        ops["gum_prep (prefix sums alone)"] = lambda: launch.kernel("plan.cu", "gum_prep")(
            (1,), (updates.PLAN_THREADS,), (np.int64(s.size), s, add, rem, xp.empty_like(s),
                                         xp.empty_like(s), xp.empty_like(s)))
        # the update's parts that grow with the rows (cell_order: the records by cell, by
        # the counting sort and by the radix sorts it replaced where it fits) and the
        # column table gum_apply looks up from every column's pointer
        def order_by(counting):
            def f():
                updates.cell_order(cell, int(np.prod(shape)), be._sm, counting)
            return f
        ops["cell_order, counting sort (order.cu)"] = order_by(True)
        ops["cell_order, radix sorts"] = order_by(False)
        ops["column table lookup (_table)"] = lambda: be._table(cols)
        ops["cupy.argsort of n uint16"] = lambda: xp.argsort(keys.astype(xp.uint16))
        ops["cupy.sort of n uint64"] = lambda: xp.sort(keys)
        keys32 = keys.astype(xp.uint32)
        ops["cupy.sort of n uint32"] = lambda: xp.sort(keys32)
        ops["one tiny elementwise op"] = lambda: small + 1.0
    res = {}
    for name, fn in ops.items():
        host, dev = timer(be, fn, a.repeat)
        res[name] = {"host_ms": round(host, 4), "device_ms": None if dev is None else round(dev, 4)}
        print(f"{name:32s} host {host:9.3f} ms" + ("" if dev is None else f"  device {dev:9.3f} ms"),
              flush=True)
    dev = device_name(be)
    write_result({"device": dev, "rows": int(a.rows), "marginal": ["day", "dest"],
                  "cells": int(np.prod(shape)), "ops": res}, a.out, "gpu_profile", dev)


if __name__ == "__main__":
    main()
