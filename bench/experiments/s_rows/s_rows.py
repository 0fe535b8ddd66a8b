"""The adaptive rounds' records S at other sizes: N = min(n_hat, ROWS) for each ROWS of the
list (selection.triples.FIT_ROWS set to it; the first is the reference), with the same
noise.

S only ranks the candidate triples' errors and checks a round's triples were realised
(docs/method.md, adaptive rounds); it costs the fit four refits at epsilon 8.  FIT_ROWS is
not in the noise key, so the variants draw the same noise up to the first triple they
choose differently.  Each row: fit and sample seconds, 2-/3-way TVD (300 triples), the
level's marginals.

    python bench/experiments/s_rows/s_rows.py TABLE EPS[,EPS] SEED[,SEED] OUT.jsonl [ROWS,...]

TABLE: a name of bench/common/datasets.py's HELDOUT or DATASETS, or flights26k.  ROWS:
powers of two as exponents (default 20,15: 2^20 records, the cap before b744a49, against
2^15; the default is now 2^16)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import compare_setting  # noqa: E402


def main(table: str, epss: str, seeds: str, out: str, rows: str = "20,15") -> None:
    from gpu_dpsyn.selection import triples
    compare_setting(table, [float(e) for e in epss.split(",")],
                    [int(s) for s in seeds.split(",")], out, triples, "FIT_ROWS",
                    [(f"2^{k}", 1 << int(k)) for k in rows.split(",")])


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    main(*sys.argv[1:])
