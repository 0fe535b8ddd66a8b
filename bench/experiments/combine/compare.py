"""Paired changes between two variants of bench/experiments/smoothing/smoothing.py's rows
(one JSON line a fit): per table, epsilon and seed, the 2-/3-way TVD change in percent and
the CPU ratio, then per epsilon the mean change and how many fits moved by over 0.5%.

    python bench/experiments/combine/compare.py ROWS.jsonl BASE VARIANT"""
from __future__ import annotations

import collections
import json
import sys


def main(path: str, a: str, b: str) -> None:
    rows = [json.loads(line) for line in open(path)]
    fits = {(r["table"], r["eps"], r["seed"], r["variant"]): r for r in rows}
    moved = collections.defaultdict(list)
    for (t, e, s, v), r in sorted(fits.items()):
        q = fits.get((t, e, s, b))
        if v != a or q is None:
            continue
        ch = {k: 100 * (q[k] / r[k] - 1) if r[k] else 0.0 for k in ("tvd1", "tvd2", "tvd3")}
        corr = f" corr error {r['corr_err']} -> {q['corr_err']}" \
            if r.get("corr_err") is not None else ""
        print(f"{t:14s} eps {e:<4} seed {s}  2-way {ch['tvd2']:+6.1f}%  3-way "
              f"{ch['tvd3']:+6.1f}%  cpu x{q['cpu'] / max(r['cpu'], 0.01):.2f}{corr}")
        for k, x in ch.items():
            moved[(e, k)].append(x)
    for (e, k), x in sorted(moved.items()):
        print(f"eps {e} {k}: mean {sum(x) / len(x):+.2f}%, higher by > 0.5%: "
              f"{sum(v > 0.5 for v in x)}, lower: {sum(v < -0.5 for v in x)}, of {len(x)}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
