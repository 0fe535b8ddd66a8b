"""Work in runs of consecutive items whose sizes add up to at most a cap (an item past it
alone, in a run of its own), in order: what bounds a batch's memory, or one call's
elements, wherever work is split so."""
from __future__ import annotations


def capped_runs(items, size, cap: int):
    """The items (an iterable, read lazily) in runs of consecutive ones whose size(item)
    totals at most cap, a larger one alone; each run a list."""
    run, total = [], 0
    for item in items:
        k = size(item)
        if run and total + k > cap:
            yield run
            run, total = [], 0
        run.append(item)
        total += k
    if run:
        yield run
