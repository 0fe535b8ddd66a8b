"""Readable names for a column's codes, and the grouping that keeps a plot readable at any
domain size: the commonest categories plus "other", neighbouring bins merged, ticks at bin
edges."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_dpsyn.data.types.datetime import from_epoch

TOP_CATEGORIES = 20  # bars of a categorical column; the rest are summed into "other"
MAX_BINS = 40  # bars of a binned column; beyond this, neighbouring bins are merged
MAX_TICKS = 16  # tick labels on a binned axis (fewer when they are long)
LABEL_CHARS = 28  # longer category names are cut with an ellipsis


def short(text: str, n: int = LABEL_CHARS) -> str:
    text = str(text)
    return text if len(text) <= n else text[:n - 1] + "…"


def short_name(name: str, n: int) -> str:
    """A column name cut in the middle: columns often share a prefix and differ at the end
    (income_2019, income_2020)."""
    name = str(name)
    if len(name) <= n:
        return name
    head = (n - 1) // 2
    return name[:head] + "…" + name[len(name) - (n - 1 - head):]


def number(x: float, col=None) -> str:
    """A bin edge or statistic as people write it: 12:30 for a clock time, 1,250 for a
    large integer, four significant digits otherwise."""
    if col is not None and col.support is not None and col.support.spec == "hhmm":
        h, m = divmod(int(x), 100)
        return f"{h:02d}:{m:02d}"
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}" if abs(x) >= 10000 else str(int(x))
    return f"{x:,.0f}" if abs(x) >= 10000 else f"{x:.4g}"


def _datetime_format(stamps: pd.Series) -> str:
    """The coarsest format that still tells these times apart."""
    if (stamps.dt.second == 0).all() and (stamps.dt.microsecond == 0).all():
        if ((stamps.dt.hour == 0) & (stamps.dt.minute == 0)).all():
            if (stamps.dt.day == 1).all():
                return "%Y" if (stamps.dt.month == 1).all() else "%Y-%m"
            return "%Y-%m-%d"
        return "%Y-%m-%d %H:%M"
    return "%Y-%m-%d %H:%M:%S"


def datetime_texts(col, ns: np.ndarray, fmt: str | None = None) -> list:
    """Nanosecond values of a datetime column as local time text."""
    stamps = from_epoch(np.asarray(ns, dtype=np.int64), np.zeros(len(ns), bool), col)
    return list(stamps.dt.strftime(fmt or _datetime_format(stamps)))


def _durations(ns: np.ndarray) -> list:
    """Gaps as "+36 h", "+2.5 d": in the largest of days, hours, minutes, seconds that
    the largest gap has two of."""
    top = float(np.max(ns)) / 1e9 if len(ns) else 0.0
    unit, size = next(((u, z) for u, z in (("d", 86400), ("h", 3600), ("min", 60))
                       if top >= 2 * z), ("s", 1))
    return [f"+{v:,.0f} {unit}" if v == round(v) else f"+{v:.3g} {unit}"
            for v in (x / 1e9 / size for x in ns)]  # (.3g wrote 1500 as 1e+03)


def edge_texts(col) -> list:
    """One label per bin edge of a numeric or datetime column (bins + 1 of them); a
    datetime column's last edge (max + 1 ns) is labelled by the format of the others; a
    column after another (types/gap.py) by its gap after it."""
    if col.kind == "datetime" and col.time.after is not None:
        edges = np.asarray(col.edges, dtype=np.int64)
        return _durations(np.append(edges[:-1], edges[-1] - 1))
    if col.kind == "datetime":
        edges = np.asarray(col.edges, dtype=np.int64)
        starts = from_epoch(edges[:-1], np.zeros(len(edges) - 1, bool), col)
        return datetime_texts(col, edges, _datetime_format(starts))
    out = [number(e, col) for e in col.edges]
    if col.integer:  # the top edge is max + 1 (bins are half-open): say max
        out[-1] = number(_integer_bins(col)[1][-1] - 1, col)
    return out


def last_texts(col) -> list | None:
    """Each bin's last whole unit (or second), as text in the starts' format, for a datetime
    column decoded to whole units: [Jan 1, Jan 8) holds Jan 1 to Jan 7, and "Jan 1 – Jan 8"
    reads as through the 8th.  None for calendar units and nanosecond bins."""
    if col.kind != "datetime" or col.time.calendar or col.time.tick <= 1 or \
            col.time.after is not None:  # gaps: half-open spans of a duration
        return None
    edges, tick = np.asarray(col.edges, dtype=np.int64), int(col.time.tick)
    starts = from_epoch(edges[:-1], np.zeros(len(edges) - 1, bool), col)
    return datetime_texts(col, (edges[1:] - 1) // tick * tick, _datetime_format(starts))


def _through(a: str, b: str) -> str:
    return a if a == b else f"{a} – {b}"


def unit_bins(col) -> bool:
    """Integer bins that hold one value each (month 1..12): label the value, not edges."""
    if col.kind != "numeric" or not col.integer:
        return False
    lo, top = _integer_bins(col)
    return bool((top - lo == 1).all())


def _integer_bins(col):
    """Each bin's lowest value and its last value + 1, on the support when there is one."""
    lo, top = col.integer_bins()
    if col.support is None:
        return lo, top
    sup = col.support
    first = sup.value_at(np, sup.index_at(np, lo.astype(np.int64)))
    last = sup.value_at(np, sup.index_at(np, top.astype(np.int64)) - 1)
    return first.astype(np.float64), last.astype(np.float64) + 1


def _span(a: str, b: str) -> str:
    """'1–500', or '-60 – -16' where a minus sign would run into the dash."""
    return f"{a} – {b}" if "-" in a + b else f"{a}–{b}"


def code_texts(col) -> list:
    """One label per code: the category, the bin as a range of values, or 'missing'."""
    if col.kind == "categorical":
        out = [str(v) for v in col.values]
    elif col.kind == "datetime":
        edges, last = edge_texts(col), last_texts(col)
        out = (edges[:-1] if col.time.calendar else
               [f"{a} – {b}" for a, b in zip(edges[:-1], edges[1:])] if last is None else
               [_through(a, b) for a, b in zip(edges[:-1], last)])
    elif col.integer:
        lo, top = _integer_bins(col)
        out = [number(a, col) if b - a <= 1 else _span(number(a, col), number(b - 1, col))
               for a, b in zip(lo, top)]
    else:
        edges = edge_texts(col)
        same = np.asarray(col.edges[1:]) == np.asarray(col.edges[:-1])  # a bin of one value
        after = np.append(False, same[:-1])  # ... holds its lower edge: the next one not
        out = [a if one else f"{'(' if past else '['}{a}, {b})"
               for a, b, one, past in zip(edges[:-1], edges[1:], same, after)]
    return out + (["missing"] if col.nullable else [])


@dataclass
class Axis:
    """Codes mapped to display groups: group[code], a label per group, each group's position
    on the axis, and the tick marks (position, text): at bin edges for binned columns."""
    group: np.ndarray
    labels: list
    ticks: list
    ordered: bool
    pos: np.ndarray

    @property
    def size(self) -> int:
        return len(self.labels)

    def sum(self, counts: np.ndarray) -> np.ndarray:
        """Per-code counts (or shares) summed per group."""
        return np.bincount(self.group, weights=counts, minlength=self.size)


def axis(col, real_counts: np.ndarray, top: int = TOP_CATEGORIES,
         max_bins: int = MAX_BINS, gap: bool = True, max_ticks: int = MAX_TICKS) -> Axis:
    """Display groups for one column, from its real per-code counts (which categories are
    the commonest).  gap: a binned column's "missing" stands one place apart from the bins
    (bars); without it (a heatmap's grid) it follows the last bin, whose closing edge then
    goes unlabelled rather than collide with it.  max_ticks: tick labels at most on a
    binned axis (fewer when they are long)."""
    texts = code_texts(col)
    if col.kind == "categorical":
        order = np.argsort(-real_counts, kind="stable")  # commonest first
        keep = order if len(order) <= top + 1 else order[:top]
        group = np.full(col.size, len(keep), dtype=np.int64)
        group[keep] = np.arange(len(keep))
        labels = [short(texts[c]) for c in keep]
        if len(keep) < col.size:
            labels.append(f"other ({col.size - len(keep)} values)")
        return Axis(group, labels, [(i, t) for i, t in enumerate(labels)], False,
                    np.arange(len(labels), dtype=np.float64))
    step = math.ceil(col.bins / max_bins)  # bins merged per group
    n = -(-col.bins // step)
    group = np.append(np.arange(col.bins) // step, [n] * col.nullable).astype(np.int64)
    if step == 1:
        labels = texts[:col.bins]
    else:
        edges, last = edge_texts(col), last_texts(col)
        labels = [f"{edges[g * step]} – {edges[min((g + 1) * step, col.bins)]}"
                  if last is None else
                  _through(edges[g * step], last[min((g + 1) * step, col.bins) - 1])
                  for g in range(n)]
    calendar = col.kind == "datetime" and col.time.calendar
    if step == 1 and (unit_bins(col) or calendar):  # a value per bar: label the bars
        ticks = [(g, labels[g]) for g in range(n)]
    else:  # edges sit between bars; the last closes the range (a datetime's is max + 1 ns,
        edges = edge_texts(col)  # which says nothing in the format of the others)
        ticks = [(g - 0.5, edges[g * step]) for g in range(n)]
        if col.kind != "datetime" and (gap or not col.nullable):
            ticks.append((n - 0.5, edges[-1]))
        # a bin of one value (a repeated edge) would be ticked twice with it
        ticks = [t for i, t in enumerate(ticks) if i == 0 or t[1] != ticks[i - 1][1]]
    ticks = _thin(ticks, max_ticks)
    pos = np.arange(n + col.nullable, dtype=np.float64)
    if col.nullable:
        labels.append("missing")
        pos[-1] += gap
        ticks.append((pos[-1], "missing"))
    return Axis(group, labels, ticks, True, pos)


def _thin(ticks: list, max_ticks: int) -> list:
    """Every m-th tick, the first and the last kept, as many as labels this long fit."""
    longest = max(len(t) for _, t in ticks)
    most = int(np.clip(48 // max(3, longest), min(6, max_ticks), max_ticks))
    if len(ticks) <= most:
        return ticks
    m = math.ceil((len(ticks) - 1) / (most - 1))
    keep = list(range(0, len(ticks) - 1, m))
    if len(ticks) - 1 - keep[-1] < m:  # the last would crowd its neighbour
        keep.pop()
    return [ticks[i] for i in keep + [len(ticks) - 1]]
