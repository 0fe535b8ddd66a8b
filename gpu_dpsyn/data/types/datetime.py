"""Datetime columns: public min / max, binned by a calendar unit or a bin count.

Codes are bins of the int64 epoch value in nanoseconds (the UTC instant for a column
with a time zone, the wall time for one without).  A calendar unit (year ... second)
puts the edges on the zone's local calendar, so a day bin is midnight to midnight even
across a daylight-saving change, and decodes to the bin's start; a bin count cuts the
range into equal spans and decodes uniformly inside the bin, in whole seconds when the
range is given in whole seconds.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import settings, shown  # noqa: F401 (capped values in messages)

import numpy as np
import pandas as pd

from gpu_dpsyn.data.types import date_output, date_text, gap, periods
from gpu_dpsyn.errors import DataError, SchemaError

UNITS = {"year": "YS", "month": "MS", "day": "D", "hour": "h", "minute": "min", "second": "s"}
_SHORTEST = {"year": 365 * 86400, "month": 28 * 86400, "day": 82800, "hour": 3600,
             "minute": 60, "second": 1}  # seconds; a day can be 23 hours
_NS = 10 ** 9
_FIXED = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}  # seconds, in UTC
# a time of day followed by a UTC offset: "... 10:00:00+02:00", "...T10:00Z", an hour
# alone ("T10+05", " 05Z"), the basic format ("T1000Z"), spaces after
_OFFSET = (r"(?:\d\d:\d\d(?::\d\d(?:\.\d+)?)?|[Tt ]\d\d(?:\d\d){0,2}(?:\.\d+)?)\s*"
           r"(?:[Zz]|[+-]\d\d(?::?\d\d)?)\s*$")


ISO = "ISO8601"  # a "format": ISO 8601 text with a T, and the zone's offset where it has one


class DatetimeSpec:
    """What the schema says about one datetime column."""
    format = None  # a model saved before "format" has none (its pickle lacks the key)
    after = None  # a gap after another column (types/gap.py); a model saved before too

    @property
    def layout(self) -> str | None:
        """The strftime layout the column's text is read in, or None: ISO 8601 (as
        "format": "ISO8601" reads it too)."""
        return None if self.format == ISO else self.format

    def __init__(self, name: str, spec: dict, max_bins: int):
        self.timezone = _zone(name, spec.get("timezone"))
        self.min = self._stamp(name, spec, "min")
        self.max = self._stamp(name, spec, "max")
        if self.max <= self.min:
            raise SchemaError(f"column {shown(name)}: 'max' ({self.max}) must come after 'min' "
                              f"({self.min})")
        unit, bins = spec.get("unit"), spec.get("bins")
        if spec.get("after") is not None:
            self._after(name, spec, unit, bins, max_bins)
            return
        if unit is None and bins is None:
            raise SchemaError(f"column {shown(name)}: a datetime column needs 'unit' "
                              f"({', '.join(UNITS)}), 'bins' (a number of equal spans), or "
                              "both (bins of whole units)")
        if unit is not None and unit not in UNITS:
            raise SchemaError(f"column {shown(name)}: unknown unit {unit!r}; use one of "
                              f"{', '.join(UNITS)} (or 'bins')")
        if bins is not None and (isinstance(bins, bool) or
                                 not isinstance(bins, (int, np.integer)) or bins < 1):
            raise SchemaError(f"column {shown(name)}: 'bins' must be a positive integer, got "
                              f"{bins!r}")
        bins = None if bins is None else int(bins)
        self.unit, self.calendar = unit, unit is not None and bins is None
        self.format = _layout(name, spec.get("format"), unit, self.min)
        lo, hi = _epoch(self.min), _epoch(self.max)
        # whole seconds in, whole seconds out: no nanosecond noise in decoded values
        self.tick = _NS if lo % _NS == 0 and hi % _NS == 0 else 1
        if unit is not None and bins is not None:  # bins of whole units: decoded to units
            self.tick = self._unit_tick(name, unit, lo)
        if self.calendar:
            if (hi - lo) / _NS / _SHORTEST[unit] > max_bins:
                raise SchemaError(f"column {shown(name)}: {unit}s from {self.min} to {self.max} "
                                  f"are too large a domain (max {max_bins}); use a coarser "
                                  "unit or 'bins'")
            self.edges = self._calendar_edges(lo, hi)
        else:
            lo_t, span = lo // self.tick, hi // self.tick - lo // self.tick + 1
            k = min(bins, span)
            self.edges = [(lo_t + -((-j * span) // k)) * self.tick for j in range(k)] + [hi + 1]
        if len(self.edges) - 1 > max_bins:
            raise SchemaError(f"column {shown(name)}: {len(self.edges) - 1} bins is too large a "
                              f"domain (max {max_bins}); use a coarser unit or fewer bins")
        self.spec = {"min": self.min.isoformat(), "max": self.max.isoformat(),
                     **({"unit": unit} if unit is not None else {}),
                     **({"bins": bins} if bins is not None else {}),
                     **({"timezone": self.timezone} if self.timezone else {}),
                     **({"format": self.format} if self.format else {})}

    def _after(self, name, spec, unit, bins, max_bins) -> None:
        """A column after another: its codes are the gap's bins (types/gap.py)."""
        if unit is not None or bins is not None:
            raise SchemaError(f"column {shown(name)}: a column 'after' another is binned by "
                              "the gap between them, whose 'unit' and 'bins' are inside "
                              "'after': remove its own "
                              f"({settings(name, ['unit=null', 'bins=null'])})")
        self.after = gap.Gap(name, spec["after"], max_bins)
        self.unit, self.calendar = None, False
        given = spec["after"].get("unit")
        self.format = _layout(name, spec.get("format"), given if given in UNITS else None,
                              self.min)
        self.tick, self.edges = self.after.tick, self.after.edges
        self.after.step = gap.coarser(self.after.step, written_unit(self.format))
        self.spec = {"min": self.min.isoformat(), "max": self.max.isoformat(),
                     "after": self.after.to_dict(),
                     **({"timezone": self.timezone} if self.timezone else {}),
                     **({"format": self.format} if self.format else {})}

    @property
    def bounds(self) -> tuple:
        """(min, max) as epoch nanoseconds, as to_epoch gives values."""
        return _epoch(self.min), _epoch(self.max)

    def _unit_tick(self, name, unit: str, lo: int) -> int:
        """A unit's nanoseconds, for bins of whole units: units of one length (not month
        or year), counted in UTC (a zone's days are 23 or 25 hours across its changes, and
        its hours start off UTC's where its offset has minutes; seconds and minutes start
        alike everywhere), from a 'min' that starts one."""
        if unit not in _FIXED:
            raise SchemaError(f"column {shown(name)}: 'bins' of whole {unit}s: the unit must "
                              "be second, minute, hour or day (months and years vary in "
                              "length)")
        if self.timezone not in (None, "UTC") and unit in ("hour", "day"):
            raise SchemaError(f"column {shown(name)}: 'bins' of whole {unit}s are counted in "
                              f"UTC, where a zone's {unit}s need not start: give the column "
                              "no timezone or \"UTC\", a unit of seconds or minutes, or "
                              "'unit' alone")
        tick = _FIXED[unit] * _NS
        if lo % tick:
            raise SchemaError(f"column {shown(name)}: 'min' ({self.min}) must start a {unit} "
                              f"for 'bins' of whole {unit}s")
        return tick

    def _stamp(self, name, spec, key) -> pd.Timestamp:
        v = spec.get(key)
        try:  # ISO 8601 alone: pd.Timestamp reads "01/03/2013" month-first, silently, and
            # "now" off the clock
            t = pd.to_datetime(v, format="ISO8601") if isinstance(v, str) and \
                not no_date_text(pd.Series([v]))[0] else pd.NaT
        except (TypeError, ValueError, OverflowError):
            t = pd.NaT
        if t is pd.NaT:
            raise SchemaError(f"column {shown(name)}: '{key}' must be an ISO 8601 date or time "
                              f"text (2013-01-31, 2013-01-31T08:00), got {v!r}")
        if t.tz is not None and self.timezone is None:
            raise SchemaError(f"column {shown(name)}: '{key}' {v!r} has a UTC offset but the "
                              "column has no \"timezone\"; name one (e.g. \"UTC\")")
        if self.timezone is not None:
            t = t.tz_convert(self.timezone) if t.tz is not None else \
                t.tz_localize(self.timezone, ambiguous=True, nonexistent="shift_forward")
        wall = t.tz_localize(None) if t.tz is not None else t
        utc = t.tz_convert("UTC").tz_localize(None) if t.tz is not None else t
        if not all(_FIRST <= x <= _LAST for x in (wall, utc)):
            raise SchemaError(f"column {shown(name)}: '{key}' {v!r} lies outside the dates a "
                              f"column holds, {_FIRST.date()} to {_LAST}: nanosecond "
                              "timestamps, with room for a zone's offset and a calendar "
                              "bin's start")
        return t

    def _calendar_edges(self, lo: int, hi: int) -> list:
        """The first bin starts at min; later edges are the unit's local boundaries."""
        wall = self.min.tz_localize(None) if self.timezone else self.min
        top = self.max.tz_localize(None) if self.timezone else self.max
        start = {"year": pd.Timestamp(wall.year, 1, 1),
                 "month": pd.Timestamp(wall.year, wall.month, 1)}.get(
            self.unit) or wall.floor(UNITS[self.unit])
        marks = pd.date_range(start, top, freq=UNITS[self.unit])
        if self.timezone:  # a boundary in a skipped or doubled local hour: its first instant
            marks = marks.tz_localize(self.timezone, ambiguous=np.ones(len(marks), bool),
                                      nonexistent="shift_forward")
        inner = np.unique(np.asarray(marks.as_unit("ns").asi8, dtype=np.int64))
        return [lo] + [int(e) for e in inner if lo < e <= hi] + [hi + 1]

    def to_dict(self) -> dict:
        return dict(self.spec)


def _zone(name, tz):
    if tz is None:
        return None
    try:
        pd.Timestamp("2000-01-01").tz_localize(tz)
    except Exception:  # zoneinfo's and pytz's errors differ; any failure means unknown
        raise SchemaError(f"column {shown(name)}: unknown time zone {tz!r}; use an IANA name "
                          "such as \"UTC\" or \"America/New_York\"") from None
    if not isinstance(tz, str):
        raise SchemaError(f"column {shown(name)}: 'timezone' must be a name, got {tz!r}")
    return tz


# the dates a column may hold: nanosecond timestamps (1677-09-21 to 2262-04-11), less a
# margin that a zone's offset, a year bin's start and repair's +-2 days stay inside
_FIRST, _LAST = pd.Timestamp("1678-01-01"), pd.Timestamp("2261-12-31 23:59:59")
_PROBE = pd.Timestamp("2001-02-03 16:05:06")  # no field equal to another; afternoon
_FIELDS = ("year", "month", "day", "hour", "minute", "second")


def _back(fmt: str, t: pd.Timestamp):
    """t written in the layout and read back (NaT where it does not read)."""
    try:
        return pd.to_datetime(t.strftime(fmt), format=fmt)
    except (TypeError, ValueError):
        return pd.NaT


def written_unit(fmt) -> str | None:
    """The finest of day ... second that a "format" writes and reads back (None: ISO
    text, written as it is): what a gap's end is rounded to (types/gap.py)."""
    if not fmt or fmt == ISO:
        return None
    b = _back(fmt, _PROBE)  # the fields kept, coarse to fine: the last of them
    return ([f for f in _FIELDS[2:] if b is not pd.NaT and all(getattr(b, g) == getattr(
        _PROBE, g) for g in _FIELDS[:_FIELDS.index(f) + 1])] or ["day"])[-1]


def _layout(name, fmt, unit, lo: pd.Timestamp):
    """A "format": strftime codes that write the column's values and read them back: to
    its unit (bins: to the day), four-digit years, 12-hour clocks with AM/PM, and `min`
    as it is (a coarser layout would read it back before itself); no zone (a column's
    zone is its "timezone")."""
    if fmt is None or (isinstance(fmt, str) and fmt.upper() == ISO):  # ISO: read as
        return fmt and ISO  # without a format, written isoformat()
    where = f"column {shown(name)}: 'format' {fmt!r}"
    if not isinstance(fmt, str):
        raise SchemaError(f"column {shown(name)}: 'format' must be a layout such as "
                          f"\"%d.%m.%Y\", got {fmt!r}")
    if "%z" in fmt or "%Z" in fmt:
        raise SchemaError(f"{where} writes a time zone; give the column's zone as "
                          "\"timezone\" and leave it out of the format")
    if "%y" in fmt:
        raise SchemaError(f"{where} writes two-digit years, which read 69-99 as 19xx and "
                          "00-68 as 20xx: rewrite the data's years in four digits, then use "
                          "%Y")
    if "%I" in fmt and "%p" not in fmt:
        raise SchemaError(f"{where} writes 12-hour times (%I) without AM/PM (%p): 16:05 "
                          "would read back as 04:05")
    need = _FIELDS[:_FIELDS.index(unit or "day") + 1]
    b = _back(fmt, _PROBE)
    if b is pd.NaT or any(getattr(b, f) != getattr(_PROBE, f) for f in need):
        raise SchemaError(f"{where} does not write the column's values and read them back "
                          f"to the {unit or 'day'} (it needs {', '.join(need)}: e.g. "
                          "\"%d.%m.%Y\" for days)")
    wall = lo.tz_localize(None) if lo.tz is not None else lo
    if _back(fmt, wall) != wall:
        raise SchemaError(f"{where} writes 'min' ({wall}) as {wall.strftime(fmt)!r}, which "
                          "reads back before it: give a layout as fine as 'min', or a 'min' "
                          "it writes as it is")
    return fmt


def as_output(t: pd.Series, col, want) -> pd.Series:
    """Datetimes t as the column's output of dtype `want`: text in its "format" where it
    has one (and `want` is no datetime dtype), missing staying missing; each distinct
    value written once, at C speed where the layout allows (date_output.py)."""
    if not col.time.format or pd.api.types.is_datetime64_any_dtype(want):
        return t.astype(want)
    return date_output.as_text(t, col.time.layout, want)


def _epoch(t: pd.Timestamp) -> int:
    return int(t.as_unit("ns").value)


def _on_host(s) -> pd.Series:
    """s as pandas: parsing and zone rules run on the host; Arrow's dates and timestamps
    as NumPy's datetime64 (pandas has no zone accessor for the one, and clips the other
    to the wrong bound), dates in seconds, which hold any date the schema can name."""
    if type(s).__module__.split(".")[0] == "cudf":
        s = s.to_pandas()
    if isinstance(s.dtype, pd.ArrowDtype):
        arrow = s.dtype.pyarrow_dtype
        if str(s.dtype).startswith("date"):
            s = s.astype("datetime64[s]")
        elif str(s.dtype).startswith("timestamp"):
            s = s.astype(pd.DatetimeTZDtype(arrow.unit, arrow.tz) if arrow.tz else
                         f"datetime64[{arrow.unit}]")
    return s


def to_epoch(s, col) -> tuple[np.ndarray, np.ndarray]:
    """(int64 nanoseconds, missing mask) of one column's values, checked against the
    schema: parseable, in the schema's time zone, inside [min, max]."""
    spec = col.time
    s = periods.as_times(_on_host(s))  # a month's period: its first day
    na = s.isna().to_numpy()
    t = _parse(s, col, na)
    unread = t.isna().to_numpy() & ~na  # "", "NaN" and NaT's integer parse as NaT
    if unread.any():
        raise DataError(f"column {shown(col.name)} has values that are not dates: "
                        f"{_few(s.reset_index(drop=True)[unread].unique())}")
    if spec.timezone is not None:
        if t.dt.tz is None:
            try:  # a doubled local time (autumn's fold): its first occurrence
                t = t.dt.tz_localize(spec.timezone, ambiguous=np.ones(len(t), bool),
                                     nonexistent="raise")
            except Exception:  # pytz and zoneinfo raise different errors
                how = "; write them with a UTC offset" if spec.layout is None else ""
                raise DataError(f"column {shown(col.name)} has local times that do not exist in "
                                f"{spec.timezone}{how}") from None
        else:
            t = t.dt.tz_convert(spec.timezone)
    elif t.dt.tz is not None:
        zoned = f"time zone {t.dt.tz}" if pd.api.types.is_datetime64_any_dtype(s.dtype) \
            else "times with a UTC offset"  # (text with offsets reads as UTC: no zone of theirs)
        raise DataError(f"column {shown(col.name)} has {zoned} but the schema has none; add "
                        "\"timezone\" to the column")
    bad = ((t < spec.min) | (t > spec.max)).to_numpy() & ~na
    if bad.any():
        raise DataError(f"column {shown(col.name)} has {int(bad.sum())} values outside the schema "
                        f"range [{spec.min}, {spec.max}]: {_few(t[bad])}")
    if t.dt.tz is not None:
        t = t.dt.tz_convert("UTC").dt.tz_localize(None)
    x = t.dt.as_unit("ns").to_numpy(dtype="datetime64[ns]").view(np.int64)
    return np.where(na, np.int64(0), x), na


def _parse(s: pd.Series, col, na: np.ndarray) -> pd.Series:
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return s.reset_index(drop=True)
    s = s.reset_index(drop=True)
    text = s.astype(object).where(~na, None)
    arr = date_text.ascii_text(text)  # ASCII text alone: checked at C speed
    clock = no_date_text(text, arr)
    if clock.any():
        raise DataError(f"column {shown(col.name)} has values that are not dates: "
                        f"{_few(text[clock].unique())}")
    if arr is None and not text.map(lambda v: isinstance(v, str) or v is None).all():
        # datetime objects in an object column
        try:
            return pd.Series(pd.to_datetime(text, errors="raise"))
        except (TypeError, ValueError) as e:
            raise DataError(f"column {shown(col.name)} has values that are not dates: {e}") from None
    if col.time.layout is not None:  # its layout alone
        t = pd.to_datetime(text, format=col.time.layout, errors="coerce")
        unparsed = t.isna().to_numpy() & ~na
        if unparsed.any():
            raise DataError(f"column {shown(col.name)} has values that are not dates written "
                            f"as {col.time.layout!r}: {_few(text[unparsed].unique())}")
        return pd.Series(t)
    aware = date_text.offsets(arr) if arr is not None else \
        text.str.contains(_OFFSET, regex=True, na=False).to_numpy()
    if aware[~na].any() and not aware[~na].all():
        raise DataError(f"column {shown(col.name)} mixes times with a UTC offset and times without "
                        "one; write every value the same way")
    t = pd.to_datetime(text, format="ISO8601", errors="coerce", utc=bool(aware.any()))
    unparsed = t.isna().to_numpy() & ~na
    if unparsed.any():
        raise DataError(f"column {shown(col.name)} has values that are not ISO 8601 dates/times: "
                        f"{_few(text[unparsed].unique())}")
    return pd.Series(t)


def from_epoch(x: np.ndarray, na: np.ndarray, col) -> pd.Series:
    """Decoded nanoseconds back to datetime64 in the schema's zone (NaT where na)."""
    x = np.where(na, np.iinfo(np.int64).min, x)  # int64 min is NaT
    t = pd.Series(x.view("datetime64[ns]"))
    if col.time.timezone is not None:
        t = t.dt.tz_localize("UTC").dt.tz_convert(col.time.timezone)
    return t


def draw(col, codes: np.ndarray, u, midpoint: bool) -> np.ndarray:
    """Nanoseconds inside each code's bin: its start for a calendar unit, else uniform
    (or the middle) in ticks; the null code decodes to a placeholder."""
    edges = np.asarray(col.edges, dtype=np.int64)
    lo = np.append(edges[:-1], edges[-2])[codes]
    if col.time.calendar:
        return lo
    tick = col.time.tick
    # ticks per bin, rounded up: the last edge is max + 1 ns
    width = ((np.append(np.diff(edges), 1) + tick - 1) // tick)[codes]
    if midpoint:
        step = (width - 1) // 2
    else:  # the float product can round up to width; stay inside the bin
        step = np.minimum(np.floor(u * width).astype(np.int64), width - 1)
    return lo + step * tick


def _few(vals, limit=5) -> str:
    vals = [str(v) for v in list(vals)[:limit + 1]]
    more = " ..." if len(vals) > limit else ""
    return ", ".join(repr(v) for v in vals[:limit]) + more


def no_date_text(values: pd.Series, arr=None) -> np.ndarray:
    """Text no reading takes for a date: "now" and "today", which pandas reads off the
    clock (one seed would give other bytes each day), and text holding a NUL, which
    pandas reads as a date alone and as none beside others.  arr: values as
    date_text.ascii_text gives them, where the caller has it (not made twice)."""
    arr = date_text.ascii_text(values) if arr is None else arr
    if arr is not None:  # the usual column, at C speed (the same answers)
        return date_text.odd(arr)

    def odd(v):
        return isinstance(v, str) and ("\x00" in v or v.strip().lower() in ("now", "today"))
    return values.map(odd).to_numpy(dtype=bool)
