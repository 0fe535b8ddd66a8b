"""datetime.as_output on N distinct values (whole seconds, 2015-2025, every 97th missing),
best of 3: the value-by-value writing it replaced (old: isoformat per value, or pandas'
strftime) against the package's (new), and whether both write the same text.

    python bench/experiments/date_output/date_output.py [N] [OUT.jsonl]
"""
import json
import os
import sys
import time
from types import SimpleNamespace

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
sys.path.insert(0, ROOT)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from gpu_dpsyn.data.dtypes import text_dtype  # noqa: E402
from gpu_dpsyn.data.draft_stamps import ZULU  # noqa: E402
from gpu_dpsyn.data.types import datetime  # noqa: E402
from gpu_dpsyn.data.types.datetime import ISO  # noqa: E402


def old(t, fmt, want):
    codes, uniq = pd.factorize(t)
    text = np.asarray([x.isoformat() for x in uniq] if fmt == ISO else
                      pd.Index(uniq).strftime(fmt), dtype=object)
    return pd.Series(np.where(codes < 0, None, text[np.maximum(codes, 0)]), index=t.index,
                     dtype=object).astype(want)


def best(f, k=3):
    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main(n, out_path):
    rng = np.random.default_rng(0)
    lo = pd.Timestamp("2015-01-01").value // 10 ** 9
    x = (lo + rng.choice(11 * 365 * 86400, n, replace=False)) * 10 ** 9
    na = np.arange(n) % 97 == 0
    rows = []
    for zone, fmt in [(None, ISO), ("Europe/Berlin", ISO), ("UTC", ZULU),
                      (None, "%d.%m.%Y %H:%M:%S"), ("Europe/Berlin", "%d.%m.%Y %H:%M:%S")]:
        t = datetime.from_epoch(x, na, SimpleNamespace(time=SimpleNamespace(timezone=zone)))
        col = SimpleNamespace(time=SimpleNamespace(
            format=fmt, layout=None if fmt == ISO else fmt))
        t_old, a = best(lambda: old(t, fmt, text_dtype()))
        t_new, b = best(lambda: datetime.as_output(t, col, text_dtype()))
        row = {"n": n, "zone": zone, "format": fmt, "old_s": round(t_old, 3),
               "new_s": round(t_new, 3), "same": bool(a.equals(b) and a.dtype == b.dtype),
               "load_1min": round(os.getloadavg()[0], 2)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    if out_path:
        with open(out_path, "a") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 10 ** 6,
         sys.argv[2] if len(sys.argv) > 2 else None)
