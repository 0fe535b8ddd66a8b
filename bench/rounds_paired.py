"""adaptive_rounds 3 against 5 with the same noise: the setting is left out of the seeded
noise key here (a diagnostic; never for a release), so both draw the same noise for
everything the first rounds measure, and the difference is the extra rounds'.

    python bench/rounds_paired.py TABLE EPS 0,1 OUT.jsonl

TABLE: one of bench/heldout.py's tables or bench/datasets.py's (fertility, ...).
bench/results/rounds5_paired_x86_64_2_cores.jsonl holds the rows of the README."""
from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _paired_key():
    import gpu_dpsyn.synthesizer as api
    key = api.noise_key

    def without_rounds(seed, **context):
        context.pop("adaptive_rounds", None)
        return key(seed, **context)
    api.noise_key = without_rounds


def main(table: str, eps: float, seeds, out: str) -> None:
    from heldout import load_named

    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    warnings.simplefilter("ignore")  # seeded runs and the drafted schema, on purpose
    _paired_key()
    df, schema = load_named(table)
    real, dom = encode(df, schema), schema.domain
    for seed in seeds:
        for rounds in (3, 5):
            syn = Synthesizer(eps, 1e-9, seed=seed, progress=False,
                              adaptive_rounds=rounds).fit(df, schema)
            codes = encode(syn.sample(), schema)
            row = dict(table=table, eps=eps, seed=seed, rounds=rounds,
                       tvd3=round(float(tvd_codes(real, codes, dom, 3, 300).mean()), 5),
                       tri=sum(e.label == "marginal" and len(e.columns) == 3
                               for e in syn.ledger))
            print(json.dumps(row), flush=True)
            with open(out, "a") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    a = sys.argv[1:]
    main(a[0], float(a[1]), [int(s) for s in a[2].split(",")], a[3])
