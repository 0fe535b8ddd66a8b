"""Datetime columns under the row-local rule (data/repair.py): each value read on its own,
so one record cannot change how another is read, whatever pandas does with the values it
parses together (one resolution, one zone)."""
from __future__ import annotations

import functools
import re

import numpy as np
import pandas as pd

from gpu_dpsyn.core.batching import read_blocks
from gpu_dpsyn.data.types import date_text, periods
from gpu_dpsyn.data.types.datetime import (_OFFSET, _epoch, _on_host, from_epoch,
                                           no_date_text)


def _utf8(v: str) -> bool:
    """Text that UTF-8 can hold: a lone surrogate stops pandas' string methods, so it is
    no date, as any other text that is none."""
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def repaired(s, col) -> tuple[pd.Series | None, np.ndarray, np.ndarray]:
    """(the column as to_epoch accepts it, or None where the column is that already;
    invalid mask; clamped mask) under the row-local
    rule of data/repair.py: a value that is no date, or a local time that does not exist
    in the schema's zone, is invalid (missing in the result; a doubled one is its first
    occurrence, as to_epoch reads it); a time with a
    UTC offset in a column without a zone is read as UTC; times outside [min, max] clamp
    to them.  Each value is read on its own, so one record cannot change another's."""
    spec = col.time
    s = periods.as_times(pd.Series(_on_host(s)).reset_index(drop=True))  # (its start)
    na = s.isna().to_numpy()
    ns = np.zeros(len(s), dtype=np.int64)
    ok, clamped = np.zeros(len(s), dtype=bool), np.zeros(len(s), dtype=bool)
    put = functools.partial(_put, ns, ok, clamped, spec)

    def put_parts(parts) -> None:  # each part on its rows of s
        for t in parts:
            mask = np.zeros(len(s), dtype=bool)
            mask[t.index.to_numpy()] = True
            put(mask, t.sort_index())
    kinds = set()  # with an offset (True), without (False): to_epoch refuses a mix
    other = subclass = np.zeros(len(s), dtype=bool)
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        kinds.add(s.dt.tz is not None)
        put(~na, s[~na])
    else:
        obj = s.astype(object).where(~na, None)
        # a str subclass as its text (to_epoch would read it through its own __str__);
        # pandas' own text holds none
        subclass = np.zeros(len(s), dtype=bool) if isinstance(s.dtype, pd.StringDtype) \
            else obj.map(lambda v: isinstance(v, str) and type(v) is not str).to_numpy(
                dtype=bool)
        arr = date_text.ascii_text(obj)  # ASCII text alone: checked at C speed
        text = obj if arr is not None and not subclass.any() else _texts(obj)
        is_text = text.notna().to_numpy()
        # ISO 8601 with an offset or without, or the column's layout alone (no offsets)
        aware = np.zeros(len(s), dtype=bool) if spec.layout is not None else \
            date_text.offsets(arr) if arr is not None else _offsets(text)
        for part, utc in ((is_text & aware, True), (is_text & ~aware, False)):
            if part.any():
                kinds.add(utc)
                put_parts(_dates(text[part], utc, kinds, None if arr is None else
                                 arr.filter(part), format=spec.layout or "ISO8601"))
        other = ~na & ~is_text  # datetime objects (or numbers, which are no dates)
        if other.any():
            objs = obj[other]
            dated = objs.map(lambda v: isinstance(v, (pd.Timestamp, np.datetime64)) or
                             hasattr(v, "isoformat")).to_numpy(dtype=bool)
            zoned = _zoned(objs)
            for part, utc in ((dated & zoned, True), (dated & ~zoned, False)):
                if part.any():
                    kinds.add(utc)
                    put_parts(_dates(objs[part], utc, kinds))
    invalid = ~na & ~ok
    # as it is only where to_epoch reads it so: text of one kind (or datetime64), in a
    # zone the schema has
    same = not invalid.any() and not clamped.any() and len(kinds) < 2 and \
        not other.any() and not subclass.any() and \
        (spec.timezone is not None or True not in kinds)
    return (None if same else from_epoch(ns, ~ok, col)), invalid, clamped


def aware(s: pd.Series) -> np.ndarray:
    """The values that carry a UTC offset or a zone: text _OFFSET sees (as repaired reads
    text), zoned datetime objects, every value of a zoned datetime64 column."""
    s = pd.Series(_on_host(s)).reset_index(drop=True)
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return np.full(len(s), s.dt.tz is not None) & s.notna().to_numpy()
    obj = s.astype(object)
    arr = date_text.ascii_text(obj)
    if arr is not None:  # ASCII text alone (or missing): checked at C speed
        return date_text.offsets(arr)
    text = _texts(obj)
    return _offsets(text) | (text.isna().to_numpy() & _zoned(obj))


def _texts(obj: pd.Series) -> pd.Series:
    """Each value that is text as its own text (a str subclass through str's __str__, not
    its own), None for the others and for text UTF-8 cannot hold."""
    return obj.map(lambda v: str.__str__(v) if isinstance(v, str) and _utf8(v) else None)


def _offsets(text: pd.Series) -> np.ndarray:
    """The text values that carry a UTC offset (_OFFSET)."""
    return text.str.contains(_OFFSET, regex=True, na=False).to_numpy(dtype=bool)


def _zoned(objs: pd.Series) -> np.ndarray:
    """The objects that carry a time zone (tzinfo)."""
    return objs.map(lambda v: getattr(v, "tzinfo", None) is not None).to_numpy(dtype=bool)


def _dates(values: pd.Series, utc: bool, kinds: set, arr=None, **kw) -> list:
    """pd.to_datetime(values, errors="coerce") as parts (each a Series on values' index,
    at the resolution pandas chose for it): where pandas refuses the lot (zones mixed
    inside one kind, say; then `kinds` gets None: to_epoch would refuse it too), block by
    block, and a block it refuses too value by value; and the values it makes NaT parsed
    again, apart from the others, since pandas picks one resolution for the values it
    parses together (9999-12-31 beside a nanosecond is past it; apart, at a coarser one,
    it is not).  So a value that is no date is NaT, never an error, and no record decides
    how another is read.  arr: the values as date_text.ascii_text gives them, if known."""
    values = values.where(~no_date_text(values, arr), None)  # "now", "today", a NUL
    whole = _parsed(values, utc, kw, kinds)
    if whole is not None:
        return _retried(values, whole, utc, kw, kinds)
    kinds.add(None)
    parts = []
    for block in read_blocks(values):  # the odd value's block alone value by value
        t = _parsed(block, utc, kw, kinds)
        parts += _one_by_one(block, utc, kw) if t is None else \
            _retried(block, t, utc, kw, kinds)
    return parts


def _parsed(values: pd.Series, utc: bool, kw, kinds: set) -> pd.Series | None:
    """pd.to_datetime of the lot, or None where pandas refuses it; without utc, a lot in
    one zone (an offset _OFFSET does not see) as its instants in UTC, as _date reads
    each (`kinds` gets True: the column is not as to_epoch reads it)."""
    try:
        t = pd.Series(pd.to_datetime(values, errors="coerce", utc=utc, **kw))
    except (ValueError, TypeError, OverflowError):
        return None
    if utc or t.dt.tz is None:
        return t
    kinds.add(True)
    return t.dt.tz_convert("UTC")


def _one_by_one(values: pd.Series, utc: bool, kw) -> list:
    """Each value parsed alone (_date), in parts of one resolution each: together they
    would be brought to the finest, where a far date does not fit."""
    one = [_date(v, utc, kw) for v in values]  # in parts of one unit and awareness
    units = np.array(["" if t is pd.NaT else f"{t.unit} {t.tzinfo is not None}"
                      for t in one])
    return [pd.Series(pd.to_datetime(pd.Series([t for t, k in zip(one, units == u) if k],
                                               index=values.index[units == u],
                                               dtype=object), utc=u.endswith("True")))
            for u in np.unique(units)]


def _retried(values: pd.Series, t: pd.Series, utc: bool, kw, kinds: set) -> list:
    """[t], and its NaTs (of values not missing) parsed again, apart from the others: the
    nanosecond ones (text of 7 or more decimals, Timestamps in ns) together and the rest
    together, each so at the resolution it has alone (pandas takes microseconds unless a
    value needs nanoseconds; 9999-12-31 does not fit in them).  What stays NaT is NaT
    alone too."""
    miss = t.isna().to_numpy() & values.notna().to_numpy()
    if not miss.any():
        return [t]
    left = values[miss]
    fine = _nanoseconds(left)
    parts = [t[~miss]]
    for group in (fine, ~fine):
        if group.any():  # (a lot pandas refuses: by blocks, as _dates reads one)
            again = _parsed(left[group], utc, kw, kinds)
            parts += _dates(left[group], utc, kinds, **kw) if again is None else [again]
    return parts


def _nanoseconds(values: pd.Series) -> np.ndarray:
    """Values pandas reads at nanoseconds alone: text with 7 or more decimals of a second,
    Timestamps or datetime64 values in ns."""
    def fine(v):
        if isinstance(v, str):
            return _NANO.search(v) is not None
        unit = np.datetime_data(v)[0] if isinstance(v, np.datetime64) else \
            getattr(v, "unit", None)
        return unit == "ns"
    return values.map(fine).to_numpy(dtype=bool)


_NANO = re.compile(r"\.\d{7}")
_MARGIN = 2 * 86400 * 10 ** 9  # ns: more than any zone's offset


def _date(v, utc: bool, kw):
    """One value as a Timestamp (in UTC where it has an offset, found or expected; else
    naive), or NaT."""
    try:
        t = pd.to_datetime(v, errors="coerce", utc=utc, **kw)
    except (ValueError, TypeError, OverflowError):
        return pd.NaT
    if not isinstance(t, pd.Timestamp):
        return pd.NaT
    return t.tz_convert("UTC") if t.tzinfo is not None else t


def _put(ns, ok, clamped, spec, mask, t: pd.Series) -> None:
    """Epoch nanoseconds of the datetimes t (the rows of mask) into ns, clamped to the
    schema's range first (a date past pandas' nanosecond range, year 0202 for 2020, is
    then a bound, not an error); ok where valid, clamped where moved.  Instants (zoned
    t) in the schema's zone, wall times in it, or as UTC wall times without one; what
    lies days past the range is brought nearer first, where the zone rules still hold
    (year 9999 in New York is past them) and the clamp gives the same bound."""
    t = pd.Series(t).reset_index(drop=True)
    aware = t.dt.tz is not None
    if spec.timezone is not None:
        lo, hi = (pd.Timestamp(_epoch(b) + k * _MARGIN, unit="ns")
                  for b, k in ((spec.min, -1), (spec.max, 1)))
        t = t.clip(lower=lo.tz_localize("UTC"), upper=hi.tz_localize("UTC")) if aware \
            else t.clip(lower=lo, upper=hi)
        t = t.dt.tz_convert(spec.timezone) if aware else \
            t.dt.tz_localize(spec.timezone, ambiguous=np.ones(len(t), bool),
                             nonexistent="NaT")
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    elif aware:  # an offset where the schema has no zone: the UTC wall time
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    lo, hi = (pd.Timestamp(_epoch(b), unit="ns") for b in (spec.min, spec.max))
    moved = ((t < lo) | (t > hi)).to_numpy()
    t = t.clip(lower=lo, upper=hi)
    x = t.dt.as_unit("ns").to_numpy(dtype="datetime64[ns]").view(np.int64)
    good = ~t.isna().to_numpy()
    idx = np.flatnonzero(mask)
    ns[idx[good]] = x[good]
    ok[idx[good]] = True
    clamped[idx[good & moved]] = True
