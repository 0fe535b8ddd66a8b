"""A benchmark's result: the device it ran on, and its JSON under bench/results/."""
from __future__ import annotations

import json
import os
import platform
import re
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[1] / "results"  # bench/results


def device_name(backend) -> str:
    if backend.name == "gpu":
        import cupy
        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    return f"{platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def write_result(data, out: str | None, stem: str, device: str | None = None) -> Path:
    """JSON to `out`, or to bench/results/<stem>[_<device as a file name>].json."""
    if device is not None:
        stem += "_" + re.sub(r"[^A-Za-z0-9]+", "_", device).strip("_")
    path = Path(out or RESULTS / f"{stem}.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {path}")
    return path


def append_row(out, row: dict) -> None:
    """A result row printed and appended to the JSON lines file `out`."""
    print(json.dumps(row), flush=True)
    with open(out, "a") as f:
        f.write(json.dumps(row) + "\n")


def emit(row: dict, out=None) -> None:
    """A result row printed, and appended to `out` too if given."""
    if out:
        append_row(out, row)
    else:
        print(json.dumps(row), flush=True)


def table_runs(doc: str, several_eps: bool = True) -> tuple:
    """(table, epsilon(s), seeds, out) from an experiment's command line
    `TABLE EPS SEEDS OUT` (EPS and SEEDS comma-separated)."""
    import argparse
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("table")
    p.add_argument("eps", help="comma-separated, e.g. 1,8" if several_eps else "one epsilon")
    p.add_argument("seeds", help="comma-separated, e.g. 0,1")
    p.add_argument("out", help="JSON lines are appended here")
    a = p.parse_args()
    eps = [float(e) for e in a.eps.split(",")] if several_eps else float(a.eps)
    return a.table, eps, [int(s) for s in a.seeds.split(",")], a.out
