"""A drafted datetime column's unit, bins and range (data/draft_columns.py): the values'
own unit where its span keeps to the draft's limit, else bins of whole such units (each
decoded to a unit inside it), else the coarser unit or equal bins.  The limit falls with
the rows (row_limit): a month of 30k trips by the hour gave 744 bins of ~40 records, and at
eps 1 their noisy counts swamped the hours' pattern.  NOT private, as every draft: min and
max, and the number of values, are read off the data."""
from __future__ import annotations

import math

import pandas as pd

from gpu_dpsyn.data.schema import column_from_spec
from gpu_dpsyn.data.types import time_of_day
from gpu_dpsyn.data.types.datetime import UNITS
from gpu_dpsyn.data.values import span_in, unit_start
from gpu_dpsyn.errors import SchemaError

FINEST_FIRST = ["second", "minute", "hour", "day", "month", "year"]
WHOLE = ("second", "minute", "hour", "day")  # units of one length: bins of them
ZULU = "%Y-%m-%dT%H:%M:%SZ"  # UTC text with its Z (ISO would write +00:00)
ZULU_TEXT = r"\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s*"  # to the second, no fraction
MINUTE_TEXT = {sep: rf"\s*\d{{4}}-\d\d-\d\d{sep}\d\d:\d\d\s*" for sep in "T "}  # no seconds
# A bin per this many values at most.  A bin of 100 records beside a partner of 5-10
# values holds 10-20 a cell, about the noise of a date's pair cells at eps 1 (sigma 9-12
# on 6-column tables of 10k-100k rows); measured at eps 1, a month of trips read its
# hour-of-day x kind best at 60-150 records a bin (TVD 0.28 at 744 hourly bins, 30k rows;
# 0.22 at 248 of 3 hours; 0.36 at 31 of a day), and by the hour from 100k rows on.
ROWS_PER_BIN = 100
# A timeline this long or longer whose values are finer than its drafted bins is drafted
# in days, its time of day beside them (as bins a day wide are): at eps 1, on event
# tables of 8-31 days and 30k-50k rows, hour-of-day beside the other columns came out
# 2.8-4.8 times closer (TVD 0.17 -> 0.04) than from sub-day bins (experiments/tod_days)
WEEK = pd.Timedelta(days=7)
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
_SIXTY = (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30)
# bin widths (seconds) in whole units: each divides the next unit (3 hours start on the
# hours of a day that 3 divides, as a day's pattern is read), then up to a week of days
WIDTHS = [w for w in _SIXTY] + [60 * w for w in _SIXTY] + \
    [3600 * w for w in (1, 2, 3, 4, 6, 8, 12)] + [86400 * w for w in range(1, 8)]


def row_limit(rows: int, bins: int, limit: int) -> int:
    """The most bins a datetime column of `rows` values is drafted in: a bin per
    ROWS_PER_BIN of them, at least `bins` (as many as a numeric column gets whatever its
    rows), at most `limit`."""
    return min(limit, max(bins, rows // ROWS_PER_BIN))


def datetime_column(name, lo, hi, unit, tz, nullable, offsets: bool, limit: int,
                    bins: int, layout: tuple, rows: int | None = None,
                    individuals: int | None = None):
    """(column, its draft line) for datetimes from lo to hi (wall times) whose finest
    unit is `unit`: in it, where its span has at most `limit` of them (row_limit of
    `rows` values, where given, or of the `individuals` they come from where fewer: an
    individual's records share one bound, so the noise grows with the records it may
    add, and a bin holds about as much against it as its individuals do; a clickstream
    of 1,500 users x 20 events over two months, drafted in 248 bins of 6 hours, came out
    at eps 1 with the evening share of mobile / desktop events 0.30 / 0.30, real 0.80 /
    0.14, and by its users, in months beside a time of day, 0.66 / 0.18); else in bins
    of whole such units, as wide as the first
    of WIDTHS that keeps to it (a zone's hours and days: the coarser unit itself), else
    as many as the months, else `limit`; else in `bins` equal bins.  layout: (the "format"
    read, the other layouts that read every value too)."""
    given = limit
    if unit == "second" and unit_start(lo, unit) == unit_start(hi, unit):
        # one second (an extraction time): a schema's max comes after its min
        hi = unit_start(lo, unit) + pd.Timedelta(seconds=1)
    people = rows is not None and individuals is not None and individuals < rows
    if rows is not None:
        limit = row_limit(individuals if people else rows, bins, limit)
    finest = unit
    for unit in FINEST_FIRST[FINEST_FIRST.index(unit):]:
        if span_in(unit, lo, hi) <= limit:
            break
    else:
        unit = None
    whole = unit != finest and finest in WHOLE and (
        tz in (None, "UTC") or finest in ("second", "minute"))  # (datetime._unit_tick)
    fmt, also = layout
    extra = {"type": "datetime", "nullable": nullable, **({"timezone": tz} if tz else {}),
             **({"format": fmt} if fmt else {})}
    if whole:  # coarser bins of whole units of the values' own: decoded to such units
        # spread inside each bin (by month, 99% of hire dates fell on the 1st)
        spec, width = _whole_bins(lo, hi, finest, limit)
        try:
            col = column_from_spec(name, {**extra, **spec})
        except SchemaError:  # a zone whose offset then had seconds (Amsterdam, 1935):
            whole = False    # its minutes start off UTC's; the coarser unit
    if not whole and unit is None:
        spec = {"min": lo.floor("s").isoformat(), "max": hi.ceil("s").isoformat(),
                "bins": min(bins, limit)}
    elif not whole:
        spec = {**_unit_range(lo, hi, unit), "unit": unit}
    if not whole:
        col = column_from_spec(name, {**extra, **spec})
    wide = _day_wide(spec) if whole else unit in ("day", "month", "year")
    # a release's draft (by its rows) binned coarser than its values over a week or more
    weeks = rows is not None and unit != finest and hi - lo >= WEEK
    days = _whole_days(lo, hi, tz, limit, offsets) if finest in ("second", "minute",
                                                                  "hour") and (
        wide or weeks) else None
    daily = days is not None
    if daily:  # bins a day wide or more lose the time of day: kept beside them, on days
        spec, width = days
        spec[time_of_day.KEY] = {"bins": 24, "unit": finest}  # drawn to the values' unit
        col, whole, written = column_from_spec(name, {**extra, **spec}), "bins" in spec, finest
        finest = "day"
        unit = spec["unit"]
    spec.update(extra)
    if whole and not width:  # as many bins as the limit: their width, not the unit's
        width = _about(_mean_width(spec))
    how = f"{spec['bins']} bins of {width} each, in whole {finest}s" if whole else \
        f"unit {unit}" if unit else \
        f"{spec['bins']} equal bins of {_about(_mean_width(spec))} each"
    zone = f", time zone {tz}" if tz else ""
    note = "; the text had UTC offsets: name the real zone" if offsets else ""
    if fmt:  # read and written in it
        note += f"; written {fmt!r}" + (
            f" (day and month ambiguous: every value reads as {', '.join(map(repr, also))}"
            " too; set \"format\" if it is that)" if also else "")
    # the limit is a most, not the count drafted (a line read "122 bins of 12 hours ...
    # to keep to 133 bins")
    of = f"the {individuals:,} individuals its {rows:,} values come from" if people else \
        f"its {rows:,} values" if rows is not None else ""
    why = f"at most {limit:,} bins" + (
        f", a bin per {ROWS_PER_BIN} of {of} (finer, their noisy counts would be mostly "
        "noise" + ("; the noise grows with the records an individual may add" if people
                   else "") + ")" if limit < given else "")
    if daily:
        kept = "bins of whole days" if whole else f"{unit}s"
        n_days = (hi.normalize() - lo.normalize()).days + 1
        tod = ("their time of day is kept beside the days in 24 bins of an hour "
               "(\"time_of_day\"), measured as a column of its own")
        note += (f"; the values are to the {written}, in {kept} to keep to {why}; {tod}"
                 if wide else f"; the values are to the {written}, over {n_days} days: in "
                 f"{kept}; {tod} (in bins finer than a day, each would hold too few records "
                 "beside another column's values to show the day's pattern)")
    elif whole:  # the output keeps the values' unit, not where they fall in a bin
        one = f"{'an' if finest == 'hour' else 'a'} {finest}"
        note += (f"; the values are to the {finest}; "
                 + _why_width(spec["bins"], width, lo, hi, limit, why)
                 + f"; each decoded to {one} inside it, evenly")
    elif unit != finest:  # the output loses what is finer: say so
        note += (f"; the values are to the {finest}, coarsened to {unit}s to keep to {why} "
                 "(set \"unit\" finer for more cells)")
    return col, f"{spec['min']} .. {spec['max']}, {how}{zone}{note}"


def _why_width(bins: int, width: str, lo, hi, limit: int, why: str) -> str:
    """Why bins of whole units are as wide as they are: the narrowest of WIDTHS, else a
    month, else as many equal ones as the limit (`why`) allows."""
    if width == "a month":
        return f"bins of a month, as none up to a week wide keeps to {why}"
    if bins == limit and width.startswith("about"):  # (_whole_bins' last resort)
        weeks = math.ceil(span_in("day", lo, hi) / 7)
        return (f"equal bins of {width}, as bins of a week ({weeks:,}) or a month "
                f"({int(span_in('month', lo, hi)):,}) would pass {why}")
    return f"bins of {width}, the narrowest of whole units that keep to {why}"


def _mean_width(spec: dict) -> float:
    """The seconds a bin spans, on average, of a spec's min, max and bins."""
    span = (pd.Timestamp(spec["max"]) - pd.Timestamp(spec["min"])).total_seconds() + 1
    return span / spec["bins"]


def _day_wide(spec: dict) -> bool:
    """Whether bins of whole units are a day wide or more, on average."""
    return _mean_width(spec) >= 86400


def _whole_days(lo, hi, tz, limit: int, placeholder: bool = False) -> tuple | None:
    """(spec, width in words or None) of timeline bins of whole local days that keep to
    `limit`, as "time_of_day" needs: a day a bin, else bins of whole days (a naive or UTC
    column: a zone's days are not all 24 hours), else its months; None where only years
    would keep to it.  placeholder: a zone read off UTC offsets, which the curator is to
    replace: calendar units only (bins of whole UTC days would then be refused)."""
    if span_in("day", lo, hi) <= limit:
        return {**_unit_range(lo, hi, "day"), "unit": "day"}, None
    if tz in (None, "UTC") and not placeholder:
        return _whole_bins(lo, hi, "day", limit)
    if span_in("month", lo, hi) > limit:  # years only: the seasons lost for the hours
        return None  # (ten years of Berlin times: 50 bins of 73 days, not 10 years)
    return {**_unit_range(lo, hi, "month"), "unit": "month"}, None


def _whole_bins(lo, hi, finest: str, limit: int) -> tuple:
    """(spec, width in words) of the bins of whole `finest` units that keep to `limit`:
    the narrowest of WIDTHS, from the start of the unit it divides (widths in days: from
    a day's; the last bin may be shorter); else a bin a month; else `limit` bins (width
    None)."""
    size = _SECONDS[finest]
    for w in (w for w in WIDTHS if w > size and w % size == 0):
        align = next((u for u in ("minute", "hour", "day") if _SECONDS[u] % w == 0), "day")
        rng = _unit_range(lo, hi, align)
        span = (pd.Timestamp(rng["max"]) - pd.Timestamp(rng["min"])).total_seconds() + 1
        k = math.ceil(span / w)
        if k <= limit:
            return {**rng, "unit": finest, "bins": k}, _width(w, span % w == 0)
    months = int(span_in("month", lo, hi))
    if months <= limit:  # (a bin a month, from the 1st)
        return {**_unit_range(lo, hi, "month"), "unit": finest, "bins": months}, "a month"
    return {**_unit_range(lo, hi, finest), "unit": finest, "bins": limit}, None


def _about(w: float) -> str:
    """A mean width of w seconds in words: "about 34 days", "about 3.7 years" (the
    largest unit it holds twice)."""
    years = w / (365.25 * 86400)
    if years >= 2:
        return f"about {years:.1f} years" if years < 10 else f"about {years:.0f} years"
    unit = next((u for u in ("day", "hour", "minute") if w >= 2 * _SECONDS[u]), "second")
    return f"about {round(w / _SECONDS[unit])} {unit}s"


def _width(w: int, even: bool) -> str:
    """w seconds in words: "an hour", "3 hours", "about 3 days" (not even: some shorter)."""
    unit = next(u for u in ("day", "hour", "minute", "second") if w % _SECONDS[u] == 0)
    q = w // _SECONDS[unit]
    words = f"{'an' if unit == 'hour' else 'a'} {unit}" if q == 1 else f"{q} {unit}s"
    return words if even else f"about {words}"


def _unit_range(lo, hi, unit: str) -> dict:
    """min and max spanning the units lo and hi fall in."""
    end = unit_start(hi, unit) + pd.tseries.frequencies.to_offset(UNITS[unit]) \
        - pd.Timedelta(seconds=1)
    return {"min": unit_start(lo, unit).isoformat(), "max": end.isoformat()}
