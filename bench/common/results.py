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
