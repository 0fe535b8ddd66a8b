"""A drafted datetime column's unit, bins and range (data/draft_columns.py): the values'
own unit where its span keeps to the draft's limit, else bins of whole such units (each
decoded to a unit inside it), else the coarser unit or equal bins.  NOT private, as
every draft: min and max are read off the data."""
from __future__ import annotations

import pandas as pd

from gpu_dpsyn.data.schema import column_from_spec
from gpu_dpsyn.data.types.datetime import UNITS
from gpu_dpsyn.data.values import span_in, unit_start
from gpu_dpsyn.errors import SchemaError

FINEST_FIRST = ["second", "minute", "hour", "day", "month", "year"]
WHOLE = ("second", "minute", "hour", "day")  # units of one length: bins of them
ZULU = "%Y-%m-%dT%H:%M:%SZ"  # UTC text with its Z (ISO would write +00:00)
ZULU_TEXT = r"\s*\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s*"  # to the second, no fraction
MINUTE_TEXT = {sep: rf"\s*\d{{4}}-\d\d-\d\d{sep}\d\d:\d\d\s*" for sep in "T "}  # no seconds


def datetime_column(name, lo, hi, unit, tz, nullable, offsets: bool, limit: int,
                    bins: int, layout: tuple):
    """(column, its draft line) for datetimes from lo to hi (wall times) whose finest
    unit is `unit`: in it, where its span has at most `limit` of them; else in bins of
    whole such units, as many as the coarser unit that keeps to `limit` has (a zone's
    hours and days, the coarser unit itself); else in `bins` equal bins.  layout: (the
    "format" read, the other layouts that read every value too)."""
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
        spec = {**_unit_range(lo, hi, unit or finest), "unit": finest,
                "bins": int(span_in(unit, lo, hi)) if unit else min(bins, limit)}
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
    spec.update(extra)
    how = (f"{spec['bins']} bins of a{'n' if unit == 'hour' else ''} {unit} each, in whole "
           f"{finest}s" if unit else f"{spec['bins']} bins of whole {finest}s") if whole else \
        f"unit {unit}" if unit else f"{spec['bins']} equal bins"
    zone = f", time zone {tz}" if tz else ""
    note = "; the text had UTC offsets: name the real zone" if offsets else ""
    if fmt:  # read and written in it
        note += f"; written {fmt!r}" + (
            f" (day and month ambiguous: every value reads as {', '.join(map(repr, also))}"
            " too; set \"format\" if it is that)" if also else "")
    if whole:  # the output keeps the values' unit, not where they fall in a bin
        one = f"{'an' if finest == 'hour' else 'a'} {finest}"
        note += (f"; the values are to the {finest}, in bins of whole {finest}s to keep "
                 f"to {limit:,} (each decoded to {one} inside it, evenly)")
    elif unit != finest:  # the output loses what is finer: say so
        note += (f"; the values are to the {finest}, coarsened to keep to {limit:,} "
                 "bins (set \"unit\" finer for more cells)")
    return col, f"{spec['min']} .. {spec['max']}, {how}{zone}{note}"


def _unit_range(lo, hi, unit: str) -> dict:
    """min and max spanning the units lo and hi fall in."""
    end = unit_start(hi, unit) + pd.tseries.frequencies.to_offset(UNITS[unit]) \
        - pd.Timedelta(seconds=1)
    return {"min": unit_start(lo, unit).isoformat(), "max": end.isoformat()}
