"""One fit and sample with the host kernels' NATIVE unit flags ("on") or without them
("off": every unit at -O2, the build before), each from a build cache of its own.

    python bench/experiments/host_native/host_native.py on|off TABLE EPS [OUT.jsonl]

TABLE: a name of bench/common/datasets.py, or flights26k (bench/common/paired.py).  Run
the two modes one after the other, alternating; a row: fit and sample seconds, the stage
timings and the sample's sha256 (both modes must write the same bytes)."""
from __future__ import annotations

import hashlib
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))


def main(mode: str, table: str, eps: str, out: str | None = None) -> None:
    os.environ["GPU_DPSYN_CACHE"] = f"/tmp/gpu_dpsyn_host_{mode}"  # a build per mode
    import gpu_dpsyn.backends.numpy.host_kernels as host
    if mode == "off":
        host.NATIVE.clear()
    from paired import load
    from results import append_row
    from gpu_dpsyn import Synthesizer
    warnings.simplefilter("ignore")  # seeded runs, on purpose
    df, schema = load(table)
    host.library()  # built (or loaded) before the clock starts
    t0 = time.perf_counter()
    syn = Synthesizer(float(eps), 1e-9, seed=0, backend="cpu", progress=False).fit(df, schema)
    t1 = time.perf_counter()
    sample = syn.sample()
    t2 = time.perf_counter()
    row = dict(mode=mode, table=table, eps=float(eps), fit=round(t1 - t0, 2),
               sample=round(t2 - t1, 2),
               stages={k: round(v, 1) for k, v in syn.last_run.timings.items()},
               sha256=hashlib.sha256(sample.to_csv(index=False).encode()).hexdigest()[:16])
    if out:
        append_row(out, row)
    else:
        print(row)


if __name__ == "__main__":
    main(*sys.argv[1:])
