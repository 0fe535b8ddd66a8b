"""Whether the adaptive rounds' warm refits of S need the whole sweep and polish: variant
"focus" sweeps and polishes only the columns of the triples measured since the last fit
(GUM still fits every target).  Wraps gibbs.each_column and two of rounds.py's helpers,
restored by nothing: run it in a process of its own.

    python bench/experiments/focus_refits/focus_refits.py TABLE EPS SEEDS OUT.jsonl"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
from paired import paired_fits
from results import table_runs
import gpu_dpsyn.generate.gibbs as G
import gpu_dpsyn.generate.polish as P
import gpu_dpsyn.measure.rounds as RO
ST = {"on": False, "focus": set(), "active": False}
orig_each = G.each_column
def each_column(cols, targets, graph, progress, step):
    if not (ST["on"] and ST["active"]):
        return orig_each(cols, targets, graph, progress, step)
    f = ST["focus"]
    return orig_each(cols, targets, graph, progress, lambda a, near, mine: step(a, near, mine) if a in f else True)
G.each_column = each_column; P.each_column = each_column
om = RO._measure_more
def mm(state, level, sets, fraction, label, pool_them=False, desc=""):
    if not pool_them:
        ST["focus"] = set(a for s in sets for a in s)
    return om(state, level, sets, fraction, label, pool_them, desc)
RO._measure_more = mm
orec = RO._records
def rec(state, level, n, start=None, label=None):
    ST["active"] = start is not None
    try:
        return orec(state, level, n, start, label)
    finally:
        ST["active"] = False
RO._records = rec
def main(table, epss, seeds, out):
    paired_fits(table, epss, seeds, out, [("default", lambda: ST.update(on=False)),
                                          ("focus", lambda: ST.update(on=True))])
if __name__ == "__main__":
    main(*table_runs(__doc__))
