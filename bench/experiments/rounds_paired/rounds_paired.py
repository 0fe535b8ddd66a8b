"""adaptive_rounds 3 against 5 with the same noise: the setting is left out of what the
seeded noise key is derived from (measure.fit.fit's key_context; a diagnostic, never for
a release), so both draw the same noise for everything the first rounds measure, and
the difference is the extra rounds'.

    python bench/experiments/rounds_paired/rounds_paired.py TABLE EPS 0,1 OUT.jsonl

TABLE: a name of bench/common/datasets.py's HELDOUT or DATASETS (fertility, ...).
bench/results/rounds5_paired_x86_64_2_cores.jsonl holds the rows of the README."""
from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from results import append_row, table_runs  # noqa: E402


def without_rounds(seen: list):
    """key_context: the fit's context less adaptive_rounds (recorded in `seen`)."""
    def context(ctx: dict) -> dict:
        seen.append({k: v for k, v in ctx.items() if k != "adaptive_rounds"})
        return seen[-1]
    return context


def paired_sample(eps: float, seed: int, rounds: int, df, schema, seen: list):
    """fit as Synthesizer.fit does, with the paired key, then its first sample():
    (table, ledger)."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.generate.sample import estimated_rows, generate, row_count
    from gpu_dpsyn.measure import fit
    syn = Synthesizer(eps, 1e-9, seed=seed, progress=False, adaptive_rounds=rounds)
    model, accountant, _ = fit.fit(syn.settings, syn.backend, None, df, schema, None,
                                   syn.seed, True, key_context=without_rounds(seen))
    n = estimated_rows(model, row_count)
    out, _ = generate(syn.backend, model, n, model.targets(n), model.fit_calls)
    return out, accountant.ledger


def main(table: str, eps: float, seeds, out: str) -> None:
    from datasets import load_named

    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    df, schema = load_named(table)
    real, dom = encode(df, schema), schema.domain
    for seed in seeds:
        seen, runs = [], {}
        for rounds in (3, 5):
            runs[rounds] = paired_sample(eps, seed, rounds, df, schema, seen)
        assert seen[0] == seen[1], "the pair's noise keys would differ"
        for rounds, (sample, ledger) in runs.items():
            codes = encode(sample, schema)
            row = dict(table=table, eps=eps, seed=seed, rounds=rounds,
                       tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                       tri=sum(e.label == "marginal" and len(e.columns) == 3 for e in ledger))
            append_row(out, row)


if __name__ == "__main__":
    main(*table_runs(__doc__, several_eps=False))
