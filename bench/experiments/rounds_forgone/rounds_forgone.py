"""The adaptive rounds with and without their pooling test, with the same noise.

A round measures its chosen triples only when they gain more than the same budget would
by measuring the chosen marginals again (selection.triples.pooling_gain, `forgone`).
Here the variant "no pooling test" sets that gain to 0 (AIM's rule: a triple is
measured when its error exceeds its own noise).  `forgone` is not in the noise key, so both variants
draw the same noise for everything up to the first round that differs.

    python bench/experiments/rounds_forgone/rounds_forgone.py TABLE EPS[,EPS] SEED[,SEED] \\
        OUT.jsonl

TABLE: a name of bench/common/datasets.py's HELDOUT or DATASETS (fertility, ...).
bench/results/rounds_forgone_x86_64_2_cores.jsonl holds the rows of the README."""
from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import append_row, table_runs  # noqa: E402


def fitted_sample(eps: float, seed: int, df, schema, test: bool):
    """fit as Synthesizer.fit does, with or without the rounds' pooling test (an argument
    of measure.fit.fit), then its first sample(): (table, model)."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.generate.sample import estimated_rows, generate, row_count
    from gpu_dpsyn.measure import fit
    syn = Synthesizer(eps, 1e-9, seed=seed, progress=False)
    model, _, _ = fit.fit(syn.settings, syn.backend, None, df, schema, None, syn.seed, True,
                          pooling_test=test)
    n = estimated_rows(model, row_count)
    return generate(syn.backend, model, n, model.targets(n), model.fit_calls)[0], model


def main(table: str, epss, seeds, out: str) -> None:
    from datasets import load_named

    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load_named(table)
    real, dom = encode(df, schema), schema.domain
    for eps in epss:
        for seed in seeds:
            for test in (True, False):
                t0 = time.perf_counter()
                sample, model = fitted_sample(eps, seed, df, schema, test)
                codes = encode(sample, schema)
                row = dict(table=table, eps=eps, seed=seed, pooling_test=test,
                           seconds=round(time.perf_counter() - t0, 1),
                           tvd2=round(float(tvd_codes(real, codes, dom, 2).mean()), 5),
                           tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                           triples=len({m for m in model.selected or () if len(m) == 3}))
                append_row(out, row)


if __name__ == "__main__":
    main(*table_runs(__doc__))
