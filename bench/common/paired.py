"""Paired fits for an experiment: each (epsilon, seed) fitted and sampled once per variant,
back to back in one process, scored alike (bench/experiments/s_effort, ipf_stall).

A variant is (name, set_up): set_up() puts the variant's setting in place before its fit.
Denoising's memo is cleared before each fit: two fits of one seed share their first
marginals, and the second would find their posterior means remembered."""
from __future__ import annotations

import json
import time
import warnings

from results import append_row


def load(table: str):
    """(DataFrame, schema) of a table of datasets.py, or flights26k: 26,000 rows of
    flights (random_state 1)."""
    from datasets import ROOT, load_named
    if table != "flights26k":
        return load_named(table)
    import pandas as pd
    from gpu_dpsyn.data.schema import load_schema
    df = pd.read_csv(ROOT / "data" / "flights.csv.xz").sample(26000, random_state=1)
    return df, load_schema(json.loads((ROOT / "data" / "flights_schema.json").read_text()))


def paired_fits(table: str, epss, seeds, out: str, variants, rows: bool = False) -> None:
    """A row per fit to the JSON lines file `out`: fit and sample seconds (wall, and the
    process's CPU seconds: steadier on a shared machine), 2-/3-way TVD
    (300 triples), the level's marginals (rows: the released row count and the table's
    too)."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    from gpu_dpsyn.estimate import empirical_bayes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load(table)
    for eps in epss:
        for seed in seeds:
            for variant, set_up in variants:
                set_up()
                empirical_bayes._memo.clear()  # each fit estimates its own marginals
                t0, c0 = time.perf_counter(), time.process_time()
                syn = Synthesizer(eps, 1e-9, seed=seed, progress=False).fit(df, schema)
                t1, c1 = time.perf_counter(), time.process_time()
                sample = syn.sample()
                t2, c2 = time.perf_counter(), time.process_time()
                sch = syn.model.schema
                real, codes, dom = encode(df, sch), encode(sample, sch), sch.domain
                append_row(out, dict(
                    table=table, eps=eps, seed=seed, variant=variant,
                    fit=round(t1 - t0, 2), sample=round(t2 - t1, 2),
                    fit_cpu=round(c1 - c0, 2), sample_cpu=round(c2 - c1, 2),
                    tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                    tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                    marginals=[len(lv.marginals) for lv in syn.model.levels],
                    **({"rows": len(sample), "true_rows": len(df)} if rows else {})))


def compare_setting(table: str, epss, seeds, out: str, module, name: str, values) -> None:
    """paired_fits with module.name set to each (variant, value) of `values` in turn, and
    put back afterwards."""
    old = getattr(module, name)
    try:
        paired_fits(table, epss, seeds, out,
                    [(variant, lambda v=value: setattr(module, name, v))
                     for variant, value in values])
    finally:
        setattr(module, name, old)
