"""repair + encode of the demo table resampled to N rows, with the package at ROOT (best
of 3); the codes' checksum shows both checkouts encode alike.

    python bench/experiments/prep/prep_time.py ROOT ROWS
"""
import sys, time, json
root, rows = sys.argv[1], int(float(sys.argv[2]))
sys.meta_path = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path.insert(0, root)
import gpu_dpsyn
assert gpu_dpsyn.__file__.startswith(root), gpu_dpsyn.__file__
import numpy as np, pandas as pd
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.repair import repair
import inspect
df = pd.read_csv(root + "/data/flights.csv.xz")
df = df.iloc[np.random.default_rng(0).integers(0, len(df), rows)].reset_index(drop=True)
schema = load_schema(root + "/data/flights_schema.json")
kw = {"derived_made": True} if "derived_made" in inspect.signature(encode).parameters else {}
best = None
for _ in range(3):
    t0 = time.perf_counter(); out = repair(df, schema); t1 = time.perf_counter()
    codes = encode(out, schema, allow_empty=True, **kw); t2 = time.perf_counter()
    if best is None or t2 - t0 < best[0] + best[1]:
        best = (t1 - t0, t2 - t1)
chk = int(sum(int(np.asarray(c, dtype=np.int64) @ np.arange(len(c), dtype=np.int64) % 1000003) for c in codes))
print(json.dumps({"root": root, "rows": rows, "repair_s": round(best[0], 3), "encode_s": round(best[1], 3), "codes_checksum": chk}))
