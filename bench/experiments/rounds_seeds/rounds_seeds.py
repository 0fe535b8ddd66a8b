"""gpu_dpsyn with and without the adaptive rounds over several seeds, with what the
rounds did (3-way marginals measured, rounds of errors, triples dropped), on one of
the held-out tables (bench/common/datasets.py's HELDOUT).  A single seed's difference
is mostly noise: the setting is in the noise key, so each variant draws other noise.

    python bench/experiments/rounds_seeds/rounds_seeds.py TABLE 1,8 0,1,2,3 OUT.jsonl

bench/results/rounds_seeds_x86_64_2_cores.jsonl holds the rows the README cites."""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import append_row, table_runs  # noqa: E402

VARIANTS = {"default": {}, "norounds": {"adaptive_rounds": 0}}


def main(table: str, epss, seeds, out: str) -> None:
    from datasets import HELDOUT, load_table

    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load_table(*HELDOUT[table])
    real, dom = encode(df, schema), schema.domain
    for eps in epss:
        for seed in seeds:
            for variant, kw in VARIANTS.items():
                t0 = time.perf_counter()
                syn = Synthesizer(eps, 1e-9, seed=seed, progress=False, **kw).fit(df, schema)
                codes = encode(syn.sample(), schema)
                led = syn.ledger
                row = dict(table=table, eps=eps, seed=seed, variant=variant,
                           s=round(time.perf_counter() - t0, 1),
                           tvd2=round(float(tvd_codes(real, codes, dom, 2, 300).mean()), 5),
                           tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                           triples=sum(e.label == "marginal" and len(e.columns) == 3
                                       for e in led),
                           err_rounds=sum(e.label == "3-way errors" for e in led),
                           unused=len(syn.model.unused))
                append_row(out, row)


if __name__ == "__main__":
    main(*table_runs(__doc__))
