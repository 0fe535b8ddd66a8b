"""One stage of the device check (device_check.sh runs each under its own time cap).

Each stage appends one JSON line to --out when it finishes, so a stage cut off at its cap
loses only itself.  Stages:
  env      device, versions, and every kernel compiled (CupyBackend.prepare)
  demo     the README demo's synthesize on --backend; its CSV's sha256 against the NumPy
           backend's (bench/results/demo_sha256.txt)
  scale    the full default method (fit + sample) on the demo table bootstrap-resampled to
           --rows rows: seconds per stage, ms per GUM update
  largest  from one fit, sample_to() of each of --sizes rows as Parquet, stopping at the
           first that fails: the largest row count that fits

    python bench/suites/device_check.py STAGE --out out.jsonl [--backend gpu] [--rows 1e6]
"""
from __future__ import annotations

import argparse
import faulthandler
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA, SCHEMA = ROOT / "data" / "flights.csv.xz", ROOT / "data" / "flights_schema.json"
DEMO = ["--epsilon", "1", "--delta", "1e-9", "--seed", "0", "--quiet"]


def commit() -> str:
    """COMMIT when set (a device's copy of the tree may carry a stale .git), else git's."""
    if os.environ.get("COMMIT"):
        return os.environ["COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def device(backend: str) -> str:
    if backend != "gpu":
        return f"{platform.machine()} {os.cpu_count()} cores (NumPy backend)"
    import cupy
    return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()


def host_build() -> dict:
    """Whether the NumPy backend's C++ build loaded (without it the NumPy bodies serve,
    several times slower), and the compiler it was built with."""
    from gpu_dpsyn.backends.numpy import host_build as build, host_kernels
    tools = build.toolchain()
    t0 = time.perf_counter()
    lib = host_kernels.library()
    return {"host_kernels": lib is not None, "host_build_seconds": round(
                time.perf_counter() - t0, 2),
            "host_compiler": tools[1].decode(errors="replace").splitlines()[0] if tools and
            tools[1] else None}


def env(a) -> dict:
    out = {"python": sys.version.split()[0], "numpy": np.__version__, "pandas": pd.__version__,
           **host_build()}
    if a.backend == "gpu":
        import cupy
        from gpu_dpsyn.backends.cuda.launch import SOURCES
        from gpu_dpsyn.backends.cuda.ops import CupyBackend
        out.update(cupy=cupy.__version__, cuda_runtime=cupy.cuda.runtime.runtimeGetVersion(),
                   memory_gib=round(cupy.cuda.Device().mem_info[1] / 2 ** 30, 1))
        t0 = time.perf_counter()
        CupyBackend().prepare()  # compiles every .cu file
        out.update(kernels=list(SOURCES), compile_seconds=round(time.perf_counter() - t0, 2))
    return out


def demo(a) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "flights.csv"
        t0 = time.perf_counter()
        run = subprocess.run([sys.executable, "-m", "gpu_dpsyn", "synthesize", str(DATA),
                              "--schema", str(SCHEMA), *DEMO, "--backend", a.backend,
                              "--out", str(csv)], cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - t0
        if run.returncode:
            return {"ok": False, "error": run.stderr[-2000:]}
        got = hashlib.sha256(csv.read_bytes()).hexdigest()
    want = (ROOT / "bench" / "results" / "demo_sha256.txt").read_text().split()[0]
    return {"seconds": round(seconds, 1), "sha256": got, "numpy_sha256": want,
            "identical_to_numpy": got == want}


def table(rows: int) -> tuple:
    """The demo table bootstrap-resampled to `rows` rows (seed 0)."""
    df = pd.read_csv(DATA)
    idx = np.random.default_rng(0).integers(0, len(df), rows)
    return df.iloc[idx].reset_index(drop=True), str(SCHEMA)


def scale(a) -> dict:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.backends.numpy import host_kernels
    from gpu_dpsyn.core import threads
    df, schema = table(int(float(a.rows)))
    warnings.simplefilter("ignore")
    # progress lines (with their times) go to the stage's log: a run cut off at its cap
    # still shows which step it was in and how long the earlier ones took
    syn = Synthesizer(1.0, 1e-9, seed=0, backend=a.backend, progress=True)
    t0 = time.perf_counter()
    syn.fit(df, schema)
    t1 = time.perf_counter()
    out = syn.sample(int(float(a.rows)))
    t2 = time.perf_counter()
    run = syn.last_run
    updates = (len(run.history) - 1) * len(run.structure.gum_targets)
    gum_loop = run.gum_seconds[-1] - run.gum_seconds[0] if len(run.gum_seconds) > 1 else 0.0
    return {"rows": int(float(a.rows)), "columns": df.shape[1], "fit_seconds": round(t1 - t0, 2),
            "sample_seconds": round(t2 - t1, 2), "total_seconds": round(t2 - t0, 2),
            "stages": {k: round(v, 3) for k, v in {**syn.fit_timings, **run.timings}.items()},
            "gum_iterations": len(run.history) - 1, "gum_updates": updates,
            "host_threads": threads.count(),
            "host_kernels": host_kernels.library() is not None,
            "ms_per_gum_update": round(1e3 * gum_loop / max(updates, 1), 4),
            "rows_out": len(out)}


def largest(a) -> dict:
    from gpu_dpsyn import Synthesizer
    df, schema = table(int(float(a.rows)))
    warnings.simplefilter("ignore")
    syn = Synthesizer(1.0, 1e-9, seed=0, backend=a.backend, progress=True).fit(df, schema)
    done, failed = [], None
    for n in (int(float(x)) for x in a.sizes.split(",")):
        path = Path(a.scratch) / f"rows_{n}"
        t0 = time.perf_counter()
        try:
            res = syn.sample_to(path, n)
        except Exception as e:  # noqa: BLE001 - the first size that does not fit ends it
            failed = {"rows": n, "error": f"{type(e).__name__}: {str(e)[:300]}"}
            break
        finally:
            size = sum(f.stat().st_size for f in path.glob("*.parquet")) if path.exists() else 0
            shutil.rmtree(path, ignore_errors=True)
        done.append({"rows": n, "seconds": round(time.perf_counter() - t0, 1),
                     "parts": len(res["parts"]), "parquet_gib": round(size / 2 ** 30, 2)})
        report(a, "largest_step", done[-1])
    return {"fitted_on_rows": int(float(a.rows)), "written": done, "failed": failed,
            "largest_rows": done[-1]["rows"] if done else 0}


def report(a, stage: str, fields: dict) -> None:
    line = {"stage": stage, "device": device(a.backend), "backend": a.backend,
            "commit": commit(), **fields}
    line.setdefault("ok", True)
    with open(a.out, "a") as f:
        f.write(json.dumps(line) + "\n")
    print(json.dumps(line), flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("stage", choices=["env", "demo", "scale", "largest"])
    p.add_argument("--out", required=True, help="JSON lines file to append to")
    p.add_argument("--backend", default="gpu", choices=["gpu", "cpu"])
    p.add_argument("--rows", default="1e6", help="rows of the resampled table")
    p.add_argument("--sizes", default="3e7,1e8,3e8", help="largest: row counts to try")
    p.add_argument("--scratch", default=tempfile.gettempdir(),
                   help="largest: where the Parquet parts are written (then removed)")
    p.add_argument("--profile", help="a cProfile of the stage, its top functions written "
                   "here as text (host time: a device's work shows where the host waits)")
    a = p.parse_args(argv)
    if os.environ.get("DUMP_AFTER"):  # just before the cap: every thread's stack to the log
        faulthandler.dump_traceback_later(float(os.environ["DUMP_AFTER"]), exit=False)
    t0 = time.perf_counter()
    stage = {"env": env, "demo": demo, "scale": scale, "largest": largest}[a.stage]
    if a.profile:
        import cProfile
        import io
        import pstats
        prof = cProfile.Profile()
        fields = prof.runcall(stage, a)
        text = io.StringIO()
        for order, top in (("cumulative", 70), ("tottime", 40)):
            pstats.Stats(prof, stream=text).sort_stats(order).print_stats(top)
        Path(a.profile).write_text(text.getvalue())
        fields["profiled"] = True  # its times include the profiler's own cost
    else:
        fields = stage(a)
    fields["stage_seconds"] = round(time.perf_counter() - t0, 1)
    report(a, a.stage, fields)


if __name__ == "__main__":
    main()
