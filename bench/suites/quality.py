"""Quality and time of the full pipeline on real tables (eps=1, delta=1e-9 by default).

    python bench/suites/quality.py [--datasets fertility,flights] [--epsilon 1]
                                   [--backend cpu] [--rows N]  # the first N rows only

Prints time and mean 1/2/3-way TVD per dataset and writes
bench/results/quality_<method>_<backend>.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
from datasets import DATASETS  # noqa: E402
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.evaluation.evaluate import mean_tvd  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--datasets", default="fertility,flights")
    p.add_argument("--epsilon", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=1e-9)
    p.add_argument("--backend", default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--method", default="privsyn", choices=["privsyn", "dpsyn"])
    p.add_argument("--rows", type=int, default=None, help="use the first N rows of each table")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    rows = []
    for name in a.datasets.split(","):
        df, schema = DATASETS[name]()
        df = df if a.rows is None else df.iloc[:a.rows]
        t0 = time.perf_counter()
        syn = Synthesizer(a.epsilon, a.delta, seed=a.seed, backend=a.backend,
                          iterations=a.iterations, method=a.method, progress=False)
        syn.fit(df, schema)
        out = syn.sample()
        elapsed = time.perf_counter() - t0
        tvd = mean_tvd(df, out, load_schema(schema))
        timings = {**syn.fit_timings, **syn.last_run.timings}  # seconds per stage
        row = {"dataset": name, "method": a.method, "rows": len(df), "attrs": len(df.columns),
               "epsilon": a.epsilon, "seed": a.seed,
               "delta": a.delta, "backend": syn.backend.name, "device": device_name(syn.backend),
               "seconds": round(elapsed, 2), "timings": {k: round(v, 3) for k, v in timings.items()},
               "tvd_1way": tvd.get(1), "tvd_2way": tvd.get(2), "tvd_3way": tvd.get(3),
               "marginals": len(syn.ledger), "mechanism": syn.accountant.mechanism,
               # attributes appended after GUM from a 3-way marginal (where the pair of
               # the other two must stay fitted)
               "appended_from_3way": sum(len(syn.model.targets(1)[i][0]) == 3
                                         for _, i in syn.last_run.structure.appended)}
        rows.append(row)
        print(f"{name:10s} rows={len(df):>8,} time={elapsed:7.1f}s  1-way={tvd[1]:.4f} "
              f"2-way={tvd[2]:.4f} 3-way={tvd[3]:.4f}  ({row['device']})", flush=True)
    write_result(rows, a.out, f"quality_{a.method}_{rows[0]['backend']}")


if __name__ == "__main__":
    main()
