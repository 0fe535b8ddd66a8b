"""Numeric columns decoded inside their bins evenly against by bin_shape's linear densities
(generate/decode.py), on the same released codes: each numeric column's error against
the real column, in its standard deviations: |mean|, |sd|, and the Wasserstein-1
distance (mean gap of 1,001 quantiles).  Columns with a support or private quantile bins
(decoded their own ways) are left out.

    python bench/experiments/bin_shape/bin_shape.py EPS SEED OUT.jsonl TABLE [TABLE ...]

TABLE: a name of bench/common/datasets.py, or flights26k (bench/common/paired.py)."""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import load  # noqa: E402


def errors(x: np.ndarray, real: np.ndarray) -> dict:
    sd = real.std() or 1.0
    q = np.linspace(0, 1, 1001)
    return dict(mean=round(abs(x.mean() - real.mean()) / sd, 5),
                sd=round(abs(x.std() - real.std()) / sd, 5),
                w1=round(float(np.mean(np.abs(np.quantile(x, q) - np.quantile(real, q))))
                         / sd, 5))


def main(eps: float, seed: int, out: str, tables) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.generate import decode as decoding
    warnings.simplefilter("ignore")  # seeded runs and drafted schemas, on purpose
    shape = decoding.bin_shape
    for table in tables:
        df, schema = load(table)
        syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
        sch = syn.model.schema
        codes = encode(syn.sample(), sch)  # the released codes (bins)
        decoded = {}
        for variant, fn in (("even", lambda lo, w, n: np.ones(len(w))), ("shaped", shape)):
            decoding.bin_shape = fn
            try:
                decoded[variant] = decoding.decode(codes, sch, seed)
            finally:
                decoding.bin_shape = shape
        for col in sch.synth_columns:
            if col.kind != "numeric" or col.support is not None or col.within is not None:
                continue
            real = pd.to_numeric(df[col.name], errors="coerce").dropna().to_numpy(float)
            row = dict(table=table, eps=eps, seed=seed, column=col.name, bins=col.bins)
            for variant, frame in decoded.items():
                x = frame[col.name].dropna().to_numpy(float)
                row[variant] = errors(x, real) if len(x) and len(real) else None
            print(json.dumps(row), flush=True)
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(float(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:])
