"""Scale-out on Dask: fit on a partitioned Parquet table and write n synthetic rows as
Parquet parts, on a LocalCluster of 1 and 2 one-thread worker processes (NumPy backend).

    python bench/suites/scale.py [--rows 1e6,1e7] [--workers 1,2] [--iterations 50]
                                 [--big-rows 1e8] [--big-fit-rows 1e6] [--big-iterations 2]
                                 [--big-memory-limit 2GiB] [--data /tmp/gpu_dpsyn_scale]

Input: the bundled flights table bootstrap-resampled to each size (whole rows, so the
derived hour/minute columns stay true), in Parquet files of 10^6 rows.  Each run: a fresh
cluster (cluster.local_cluster, as --workers starts); fit(glob) then sample_to(dir, rows)
with the default batches; time, rows per
second, every worker's peak RSS (getrusage on the worker process), the rows written
(from the Parquet footers, not read back).  The big run writes --big-rows rows under a
per-worker memory limit that sets the batch size.  Also one in-memory run
(fit + sample() in one process) at the smallest size.  Writes bench/results/scale_<device>.json.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import flights  # noqa: E402
from results import device_name, write_result  # noqa: E402

PART_ROWS = 10 ** 6


def peak_rss() -> int:
    """This process's peak resident memory in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def cpu_seconds() -> float:
    """This process's CPU time (user + system)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def make_parts(rows: int, root: Path) -> Path:
    """rows bootstrap-resampled flights rows as Parquet files of PART_ROWS (cached)."""
    import numpy as np
    d = root / f"flights_{rows}"
    if (d / "_done").exists():
        return d
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    df, _ = flights()
    r = np.random.default_rng(rows)
    for i, lo in enumerate(range(0, rows, PART_ROWS)):
        idx = r.integers(0, len(df), min(PART_ROWS, rows - lo))
        df.iloc[idx].to_parquet(d / f"part-{i:04d}.parquet", index=False)
    (d / "_done").write_text("")  # a leading '_': not a table to the reader
    return d


def rows_written(out: Path) -> int:
    import pyarrow.parquet as pq
    return sum(pq.ParquetFile(f).metadata.num_rows for f in sorted(out.glob("*.parquet")))


def run(data: Path, rows: int, workers: int, iterations: int, out: Path,
        memory_limit: str = "auto") -> dict:
    from dask.distributed import Client

    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.distributed.cluster import local_cluster  # as the CLI's --workers
    _, schema = flights()
    shutil.rmtree(out, ignore_errors=True)
    with local_cluster(workers, memory_limit=memory_limit) as cluster, \
            Client(cluster) as client:
        limit = sorted(client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
                       .values())
        syn = Synthesizer(1.0, 1e-9, seed=0, iterations=iterations, progress=False,
                          backend="cpu", client=client)
        t0 = time.perf_counter()
        syn.fit(str(data / "*.parquet"), schema)
        t1 = time.perf_counter()
        res = syn.sample_to(out, rows)
        t2 = time.perf_counter()
        peaks = sorted(client.run(peak_rss).values())
        cpu = sorted(client.run(cpu_seconds).values())
    written = rows_written(out)
    shutil.rmtree(out, ignore_errors=True)
    return {"workers": workers, "iterations": iterations, "rows_out": written,
            "rows_exact": written == rows, "fit_seconds": round(t1 - t0, 2),
            "sample_seconds": round(t2 - t1, 2), "total_seconds": round(t2 - t0, 2),
            "fit_rows_per_second": round(rows_written(data) / (t1 - t0)),
            "sample_rows_per_second": round(rows / (t2 - t1)),
            "batches": res["batches"], "batch_rows": res["batch_rows"],
            "worker_memory_limit_bytes": limit, "worker_peak_rss_bytes": peaks,
            # below total_seconds: the worker waited (for work, or for a core others held)
            "worker_cpu_seconds": [round(c, 1) for c in cpu],
            "mean_final_gum_tvd": round(sum(res["gum_tvd"]) / len(res["gum_tvd"]), 5)}


def _in_memory(data: Path, rows: int, iterations: int, q) -> None:
    import pandas as pd

    from gpu_dpsyn import Synthesizer
    _, schema = flights()
    df = pd.read_parquet(data)
    t0 = time.perf_counter()
    syn = Synthesizer(1.0, 1e-9, seed=0, iterations=iterations, progress=False,
                      backend="cpu").fit(df, schema)
    t1 = time.perf_counter()
    out = syn.sample(rows)
    t2 = time.perf_counter()
    q.put({"workers": 0, "in_memory": True, "iterations": iterations, "rows_out": len(out),
           "fit_seconds": round(t1 - t0, 2), "sample_seconds": round(t2 - t1, 2),
           "total_seconds": round(t2 - t0, 2), "sample_rows_per_second": round(rows / (t2 - t1)),
           "process_peak_rss_bytes": peak_rss()})


def in_memory(data: Path, rows: int, iterations: int) -> dict:
    """fit + sample() in a fresh process, so its peak memory is its own."""
    q = mp.get_context("spawn").Queue()
    p = mp.get_context("spawn").Process(target=_in_memory, args=(data, rows, iterations, q))
    p.start()
    res = q.get()
    p.join()
    return res


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--rows", default="1e6,1e7")
    p.add_argument("--workers", default="1,2")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--big-rows", type=float, default=1e8, help="0: skip the big run")
    p.add_argument("--big-fit-rows", type=float, default=1e6)
    # the big run shows bounded memory; 50 iterations of 10^8 rows take hours on 2 cores
    p.add_argument("--big-iterations", type=int, default=2)
    p.add_argument("--big-workers", type=int, default=2)
    p.add_argument("--big-memory-limit", default="2GiB")
    p.add_argument("--no-in-memory", action="store_true")
    p.add_argument("--data", default="/tmp/gpu_dpsyn_scale")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    from gpu_dpsyn.backends import get_backend
    root = Path(a.data)
    sizes = [int(float(x)) for x in a.rows.split(",") if x]
    result = {"device": device_name(get_backend("cpu")), "method": "privsyn",
              "epsilon": 1.0, "delta": 1e-9, "runs": []}

    def record(entry):
        # the machine is shared: the 1-minute load average after the run (2 cores: above
        # 2, other processes were competing) says how far to trust the times
        entry["load_average_1min_after"] = round(os.getloadavg()[0], 2)
        result["runs"].append(entry)
        print(entry, flush=True)
        write_result(result, a.out, "scale", result["device"])  # after every run
    for rows in sizes:
        data = make_parts(rows, root)
        if rows == min(sizes) and not a.no_in_memory:
            record({"rows": rows, **in_memory(data, rows, a.iterations)})
        for w in [int(x) for x in a.workers.split(",") if x]:
            record({"rows": rows, **run(data, rows, w, a.iterations, root / "out")})
    if a.big_rows:
        data = make_parts(int(a.big_fit_rows), root)
        record({"rows": int(a.big_rows), "fit_rows": int(a.big_fit_rows), "big": True,
                **run(data, int(a.big_rows), a.big_workers, a.big_iterations, root / "out",
                      a.big_memory_limit)})


if __name__ == "__main__":
    main()
