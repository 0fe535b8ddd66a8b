"""Wide categorical tables: time (and optionally profile) a NumPy-backend fit + sample.

python wide.py make COLS ROWS [SEED]        -> the sample's sha256, wall and CPU seconds
python wide.py profile COLS ROWS OUT.prof   -> cProfile of fit + sample to OUT.prof
Columns: 2-12 levels each; blocks of 3-6 columns copy a block leader's value with
probability 0.7 (correlated), the rest independent.
"""
from __future__ import annotations

import hashlib
import sys
import time
import warnings

import numpy as np
import pandas as pd


def wide_table(cols: int, rows: int, seed: int = 0):
    from gpu_dpsyn.data.schema import load_schema
    rng = np.random.default_rng(seed)
    levels = rng.integers(2, 13, cols)
    data, j = {}, 0
    while j < cols:
        size = int(rng.integers(3, 7))
        lead = rng.integers(0, levels[j], rows)
        for c in range(j, min(j + size, cols)):
            own = rng.integers(0, levels[c], rows)
            copy = rng.random(rows) < 0.7 if c > j else np.ones(rows, bool)
            data[f"c{c:03d}"] = np.where(copy, lead % levels[c], own)
        j += size
    df = pd.DataFrame({k: [f"v{x}" for x in v] for k, v in data.items()})
    schema = load_schema({"columns": {
        f"c{c:03d}": {"type": "categorical", "values": [f"v{x}" for x in range(levels[c])]}
        for c in range(cols)}})
    return df, schema


def fit_sample(df, schema, seed: int = 0):
    from gpu_dpsyn import Synthesizer
    syn = Synthesizer(1.0, 1e-9, seed=seed, backend="cpu", progress=False).fit(df, schema)
    out = syn.sample()
    return hashlib.sha256(out.to_csv(index=False).encode()).hexdigest()


def main(argv):
    warnings.simplefilter("ignore")
    what, cols, rows = argv[0], int(argv[1]), int(argv[2])
    df, schema = wide_table(cols, rows)
    if what == "make":
        t0, c0 = time.perf_counter(), time.process_time()
        h = fit_sample(df, schema, int(argv[3]) if len(argv) > 3 else 0)
        print(f"cols={cols} rows={rows} sha256={h} seconds={time.perf_counter() - t0:.2f} "
              f"cpu={time.process_time() - c0:.2f}", flush=True)
    else:
        import cProfile
        cProfile.runctx("fit_sample(df, schema)", globals(), dict(
            df=df, schema=schema, fit_sample=fit_sample), argv[3])


if __name__ == "__main__":
    main(sys.argv[1:])
