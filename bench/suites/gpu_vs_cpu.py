"""GPU vs CPU: the whole pipeline on bootstrap-resampled flights (20 attributes, all
2-way marginals, 50 GUM iterations), per stage, per marginal update, peak GPU memory.

    python bench/suites/gpu_vs_cpu.py [--rows 1e5,1e6,1e7] [--backends gpu,cpu]
                                      [--cpu-max-rows 1e6] [--cpu-iterations 2]
                                      [--method dpsyn|privsyn] [--no-polish]

The NumPy fallback is slow at 1e6+ rows, so above --cpu-max-rows it is skipped and
below it may run fewer iterations (--cpu-iterations): its per-update time is what
the speedup compares, and the CPU total is reported as measured, not extrapolated.
Writes bench/results/gpu_vs_cpu_<device>.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import flights20  # noqa: E402
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.backends import get_backend, gpu_available  # noqa: E402


def peak_gpu_bytes():
    """The CuPy pool's size after the run: the pool keeps freed blocks for reuse (it is
    emptied before each run), so this is the run's high-water mark of device memory."""
    import cupy
    return int(cupy.get_default_memory_pool().total_bytes())


def run_one(df, schema, backend: str, iterations: int, matched: int, polish: bool = True,
            method: str = "dpsyn") -> dict:
    if backend == "gpu":
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()
    t0 = time.perf_counter()
    syn = Synthesizer(1.0, 1e-9, method=method, seed=0, backend=backend, iterations=iterations,
                      polish=polish, progress=False)
    syn.fit(df, schema)
    out = syn.sample()
    total = time.perf_counter() - t0
    run = syn.last_run  # the sample's GUM curve, its wall times and step times
    timings = {**syn.fit_timings, **run.timings}
    n_targets = len(run.structure.gum_targets)
    updates = iterations * n_targets
    # early iterations move more records than late ones: the speedup compares the same
    # first `matched` iterations on both backends
    k = min(matched, iterations)
    first_k = 1e3 * (run.gum_seconds[k] - run.gum_seconds[0]) / max(k * n_targets, 1)
    # the gum stage holds the shuffle, the Gibbs sweep and the polish after GUM: the
    # per-update time is GUM's own
    gum_only = timings["gum"] - sum(timings.get(s, 0.0)
                                    for s in ("shuffle", "sweep", "polish"))
    res = {"backend": backend, "device": device_name(syn.backend), "method": method,
           "polish": polish, "iterations": iterations,
           "marginal_updates": updates, "seconds_total": round(total, 3),
           "stages": {k: round(v, 4) for k, v in timings.items()},
           "ms_per_update": round(1e3 * gum_only / max(updates, 1), 4),
           f"ms_per_update_first_{k}_iterations": round(first_k, 4),
           "rows_out": len(out), "final_gum_tvd": round(run.history[-1], 5)}
    if backend == "gpu":
        res["peak_gpu_bytes"] = peak_gpu_bytes()
    return res


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="1e5,1e6,1e7")
    p.add_argument("--backends", default="gpu,cpu")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--cpu-max-rows", type=float, default=1e6)
    p.add_argument("--cpu-iterations", type=int, default=2)
    p.add_argument("--method", default="dpsyn", choices=["dpsyn", "privsyn"])
    p.add_argument("--no-polish", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    backends = [b for b in a.backends.split(",") if b != "gpu" or gpu_available()]
    if "gpu" in a.backends and "gpu" not in backends:
        print("no CUDA device: GPU runs skipped", flush=True)
    # warm-up: the first use of each CUDA module compiles it (NVRTC); keep that out
    wdf, wschema = flights20(2000)
    for b in backends:
        run_one(wdf, wschema, b, 1, 1)
    rows_out = []
    for rows in [int(float(r)) for r in a.rows.split(",")]:
        df, schema = flights20(rows)
        entry = {"rows": rows, "attrs": len(df.columns), "runs": []}
        for b in backends:
            if b == "cpu" and rows > a.cpu_max_rows:
                continue
            it = a.iterations if b == "gpu" else min(a.iterations, a.cpu_iterations)
            r = run_one(df, schema, b, it, a.cpu_iterations, not a.no_polish, a.method)
            entry["runs"].append(r)
            print(f"rows={rows:>10,} {b}: total {r['seconds_total']:8.2f}s  "
                  f"{r['ms_per_update']:9.3f} ms/update ({it} it)  stages {r['stages']}"
                  + (f"  peak GPU {r['peak_gpu_bytes'] / 2**20:.0f} MiB" if b == "gpu" else ""),
                  flush=True)
        by = {r["backend"]: r for r in entry["runs"]}
        if "gpu" in by and "cpu" in by:
            key = f"ms_per_update_first_{a.cpu_iterations}_iterations"
            entry["speedup_per_update"] = round(by["cpu"][key] / by["gpu"][key], 1)
            print(f"  speedup per marginal update (first {a.cpu_iterations} iterations on "
                  f"both): {entry['speedup_per_update']}x")
        rows_out.append(entry)
    dev = device_name(get_backend("gpu" if "gpu" in backends else "cpu"))
    write_result({"device": dev, "results": rows_out}, a.out, "gpu_vs_cpu", dev)


if __name__ == "__main__":
    main()
