"""Writing a synthetic table: Arrow's CSV text (data/csv_text.py) against pandas' to_csv.

    python bench/suites/writer.py [--rows 2e6] [--repeats 3] [--out FILE]

A fit on 20,000 flights rows (epsilon 1, seed 0, NumPy backend), then one sample of --rows
rows.  Each repeat times, alternating, in one process:
- `pandas`: the text columns as object (the output dtype before pandas' own text dtype)
  and DataFrame.to_csv, the old path;
- `arrow`: write_table as the CLI calls it (csv_text, text columns in pandas' dtype);
- `parquet`: write_table to .parquet, for scale.
The two CSV files must be the same bytes.  Rows go to bench/results/writer_<device>.jsonl.
"""
from __future__ import annotations

import argparse
import filecmp
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import flights  # noqa: E402
from results import RESULTS, append_row  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rows", type=float, default=2e6)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default=None)
    a = p.parse_args()
    import numpy as np
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.ingest import write_table

    df, schema = flights()
    syn = Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False)
    syn.fit(df.iloc[:20_000], schema)
    t = time.perf_counter()
    out = syn.sample(int(a.rows))
    sample_s = time.perf_counter() - t
    text = [c for c in out.columns if out[c].dtype != np.dtype(object) and
            out[c].dtype.kind not in "biufM"]
    old = out.astype({c: object for c in text})
    device = f"{platform.machine()} ({os.cpu_count()} cores)"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dest = Path(a.out) if a.out else RESULTS / \
        f"writer_{platform.machine()}_{os.cpu_count()}_cores.jsonl"
    with tempfile.TemporaryDirectory() as d:
        plain, fast, pq = Path(d, "p.csv"), Path(d, "a.csv"), Path(d, "a.parquet")
        for r in range(a.repeats):
            times = {}
            for name, write in (("pandas", lambda: old.to_csv(plain, index=False)),
                                ("arrow", lambda: write_table(out, fast)),
                                ("parquet", lambda: write_table(out, pq))):
                t = time.perf_counter()
                write()
                times[name] = round(time.perf_counter() - t, 3)
            same = filecmp.cmp(plain, fast, shallow=False)
            append_row(dest, {"rows": len(out), "columns": out.shape[1], "repeat": r,
                              "seconds": times, "same_bytes": same,
                              "csv_bytes": fast.stat().st_size, "text_columns": text,
                              "sample_s": round(sample_s, 1), "device": device,
                              "commit": commit})
            if not same:
                raise SystemExit("the two CSV files differ")


if __name__ == "__main__":
    main()
