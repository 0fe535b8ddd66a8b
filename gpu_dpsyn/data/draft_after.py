"""Drafting a datetime column "after" another (data/types/gap.py): where every record's
value is at or after another datetime column's (discharge after admission), the draft
codes it by the gap, so no synthetic record ends before it starts.  NOT private, as every
draft: that the order holds in every record, and the largest gap, are read off the data.

Each column comes after at most one other, and a start may come after another itself (a
chain: booked, check-in, check-out): the pairs with the shortest largest gap are taken
first (check-in to check-out before booking to check-out).  The gap is binned as a numeric column is drafted, in about `bins` bins: a
bin a day (an hour, ...) where that gives `bins` or a quarter of them, else `bins` equal
bins, in whole units of the column's own (second to day)."""
from __future__ import annotations

import math

import pandas as pd

from gpu_dpsyn.data.schema import column_from_spec
from gpu_dpsyn.data.types import missing
from gpu_dpsyn.data.types.datetime import to_epoch
from gpu_dpsyn.data.types.gap import local_wall, iso, latest, order
from gpu_dpsyn.errors import DataError, SchemaError

_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_NS = 10 ** 9


def ordered_pairs(data: dict, cols: list, whys: list, finest: dict, bins: int) -> None:
    """Draft each datetime column of cols that comes after another in every record as
    "after" it (in place: cols and their lines whys).  data: each column's values by
    name; finest: each datetime column's finest unit in the data."""
    times = {}
    for c in cols:
        if c.kind == "datetime" and finest.get(c.name) in _SECONDS:
            try:  # as the drafted column reads them (its layout, its zone)
                times[c.name] = to_epoch(missing.blank(data[c.name], c)[0], c)
            except DataError:  # words read as missing, say: not this column
                continue
    at = {c.name: i for i, c in enumerate(cols)}
    pairs = sorted((top, a, b) for a in times for b in times
                   if (top := _largest_gap(cols[at[a]], cols[at[b]], times[a], times[b]))
                   is not None)
    ends = set()  # each column after one other at most; a start may come after another
    for top, a, b in pairs:  # (a chain; no cycle: the order holds in every record)
        if b in ends:
            continue
        col = _after(cols[at[b]], cols[at[a]], top, finest[b], bins)
        if col is None:
            continue
        ends.add(b)
        cols[at[b]] = col
        gap = col.time.after
        k, step = col.size - col.nullable, gap.edges[1] - gap.edges[0]
        width = next((f"a{'n' if u == 'hour' else ''} {u}" for u, z in _SECONDS.items()
                      if z * _NS == step), None) or _about(pd.Timedelta(step, unit="ns"))
        whys[at[b]] = (f"{col.time.min.isoformat()} .. MAX, after "
                       f"{a!r} in every record: coded by the gap after it, up to "
                       f"{iso(gap.max)}, in {k} bins of {width} each, in whole "
                       f"{finest[b]}s" + (f"; written {col.time.format!r}"
                                          if col.time.format else ""))
    for col in order(cols):  # each end's max holds its start's last value, rounded up as
        i, start = at[col.name], cols[at[col.time.after.column]]  # the end is written
        step = col.time.after.step  # (a chain in order: a widened start, then its end)
        need = max(local_wall(start.time.max), latest(start).ceil(step) if step else
                   latest(start))
        if need > local_wall(col.time.max):
            cols[i] = col = column_from_spec(col.name, {**col.to_dict(),
                                                        "max": need.isoformat()})
        whys[i] = whys[i].replace("MAX", col.time.max.isoformat(), 1)


def _about(t: pd.Timedelta) -> str:
    """A bin's width in words: "102.7 days", "2.5 hours" (not PT2463H45M)."""
    secs = t.total_seconds()
    unit, size = next(((u, z) for u, z in (("day", 86400), ("hour", 3600), ("minute", 60))
                       if secs >= z), ("second", 1))
    return f"{secs / size:.4g} {unit}s"


def _largest_gap(start, end, a, b) -> int | None:
    """The largest gap (ns) of `end` after `start` where every record that has an end has
    a start and ends at or after it (not all at once), both in one zone; else None."""
    if start.name == end.name or start.time.timezone != end.time.timezone or \
            (start.nullable and not end.nullable):
        return None
    (xa, na), (xb, nb) = a, b
    if (~nb & na).any():  # an end without a start
        return None
    both = ~na & ~nb
    g = xb[both] - xa[both]
    if not g.size or (g < 0).any() or not (g > 0).any():
        return None
    lo, hi = end.time.bounds
    if int(g.max()) > hi - lo:  # gaps longer than the column's own range: a visit after a
        return None  # birth date, no stay; coded by the gap, visits fell on min and max
    return int(g.max())


def _after(col, start, top: int, unit: str, bins: int):
    """col drafted after `start` with gaps up to `top` ns in whole `unit`s, or None: the
    max rounded up to whole days (hours, minutes) where the gaps reach one; a bin a unit
    of the finest unit that keeps to `bins` of them, and to a quarter of that at least
    (28 bins of a day, not 672 of an hour: a gap's noisy counts spread thin over fine
    bins, and at eps 1 a length of stay lost its link to the charge), else `bins`
    equal bins in whole `unit`s."""
    step = max([s for s in _SECONDS.values() if s * _NS <= top] + [_SECONDS[unit]]) * _NS
    top = math.ceil(top / step) * step
    spec = {"column": start.name, "max": iso(pd.Timedelta(top, unit="ns")), "unit": unit}
    size, fit = next(((s, top // (s * _NS)) for s in _SECONDS.values()
                      if s >= _SECONDS[unit] and top // (s * _NS) <= bins), (0, 0))
    if fit < max(1, bins // 4):
        spec["bins"] = bins
    elif size != _SECONDS[unit]:  # bins of a coarser unit, in whole units of its own
        spec["bins"] = fit
    # (else a bin a unit: the max one of its own, the stays of 14 nights not pooled with 13)
    doc = {k: v for k, v in col.to_dict().items()  # (its time of day: the gap's unit)
           if k not in ("unit", "bins", "name", "time_of_day")}
    if start.time.max > col.time.max:  # the ranges are rounded out apart: the end's must
        doc["max"] = start.to_dict()["max"]  # hold the start's (gap.resolve)
    try:
        return column_from_spec(col.name, {**doc, "after": spec})
    except SchemaError:
        return None
