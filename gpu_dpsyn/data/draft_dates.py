"""Dates written as text in a draft (data/draft_columns.py): the one layout a column's
values are written in, ISO 8601 or another (24.12.2016, 12/24/2016 04:30 PM, 24 Dec 2016),
a few placeholder words among them ("00.00.0000") read as missing, or several layouts
(left out of the draft: no one "format" reads them).  Read off the data: NOT private."""
from __future__ import annotations

import re
import warnings

import pandas as pd

from gpu_dpsyn.data.text import shown
from gpu_dpsyn.data.values import ISO_TEXT, PLACEHOLDER_SHARE, PLACEHOLDERS

_CLOCK = r"(?:[ T]\d{1,2}:\d\d(?::\d\d)?(?:\s*[AaPp][Mm])?)?"
# day, month and year as numbers (01/31/2020) or with a month's name (31 Jan 2020, Jan 31,
# 2020), a time of day after
_DATED = re.compile(rf"^\s*(?:\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{4}}|\d{{4}}[/.-]\d{{1,2}}[/.-]"
                    rf"\d{{1,2}}|\d{{1,2}}\s+[A-Za-z]{{3,9}}\.?\s+\d{{4}}|[A-Za-z]{{3,9}}\.?\s+"
                    rf"\d{{1,2}},?\s+\d{{4}}){_CLOCK}\s*$")  # a four-digit year: no version
_TWO_DIGIT = re.compile(rf"^\s*\d{{1,2}}[/.-]\d{{1,2}}[/.-]\d{{2}}{_CLOCK}\s*$")
_DAYS = ("%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d", "%d-%m-%Y", "%m-%d-%Y", "%Y.%m.%d",
         "%Y-%m-%d", "%d %b %Y", "%b %d, %Y", "%d %B %Y", "%B %d, %Y")  # in this order;
# four-digit years only (two read 69-99 as 19xx: types/datetime refuses %y)
_LAYOUTS = tuple(d + t for t in ("", " %H:%M", " %H:%M:%S", " %I:%M %p", " %I:%M:%S %p")
                 for d in _DAYS)
ISO = "ISO8601"  # a layout of its own here: ISO text with a few placeholders among it


def looks_dated(vals: pd.Series, layout=_DATED) -> bool:
    """Text most of whose values (90% of the first 200) are dates written in a layout
    this module reads (or in `layout`)."""
    sample = vals.dropna().iloc[:200].astype(str)
    return bool(len(sample)) and sample.str.fullmatch(layout).mean() >= 0.9


def two_digit_years(vals: pd.Series) -> bool:
    """Dates whose years have two digits (24.12.16): no layout the schema takes.  Shaped
    so, and read as dates by such a layout (not codes such as 12-34-56)."""
    if not looks_dated(vals, _TWO_DIGIT):
        return False
    sample = vals.dropna().iloc[:200].astype(str).str.strip()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return any(pd.to_datetime(sample.str.split(" ").str[0], format=f,
                                  errors="coerce").notna().mean() >= 0.9
                   for f in ("%d.%m.%y", "%d/%m/%y", "%m/%d/%y", "%d-%m-%y", "%y-%m-%d"))


def date_layout(vals: pd.Series):
    """(the first layout that reads the values, the others that do too: day and month
    ambiguous, the placeholder words it does not read) or None.  A layout reads them
    where what it leaves is at most PLACEHOLDERS distinct words on PLACEHOLDER_SHARE of
    the values; ISO first (then no "format": its layout None), then _LAYOUTS.  Tried on
    200 distinct values first, then on every one."""
    text = vals.dropna().astype(str)
    uniq = pd.Series(pd.unique(text))
    if not len(uniq):
        return None

    def left(fmt, values):
        try:
            t = pd.to_datetime(values, format=fmt, errors="coerce")
        except (TypeError, ValueError):  # ISO text mixing offsets
            return None
        out = t.isna().to_numpy().copy()
        if fmt == ISO:  # pandas' ISO reading takes 2016/01/05 too: a layout of its own
            out |= ~values.str.match(ISO_TEXT).to_numpy(dtype=bool)
        return values[out]

    def fits(fmt, values) -> bool:
        out = left(fmt, values)
        return out is not None and len(out) <= PLACEHOLDERS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = [f for f in (ISO,) + _LAYOUTS if fits(f, uniq.iloc[:200]) and fits(f, uniq)]
        unread = {f: left(f, uniq) for f in found}
        # a placeholder is what no layout reads (00.00.0000), never a date another reads
        # (03/15/2020 beside %d/%m/%Y); of the layouts left, the first reading the most
        dated = set().union(*(set(uniq) - set(u) for u in unread.values())) if found \
            else set()
        found = [f for f in found if not set(unread[f]) & dated and
                 text.isin(unread[f]).mean() <= PLACEHOLDER_SHARE]
    if not found:
        return None
    words = sorted(unread[found[0]])
    return (None if found[0] == ISO else found[0],
            tuple(f for f in found[1:] if f != ISO and not len(unread[f])), words)


def dates_hint(vals: pd.Series) -> str:
    """A hint when text reads as dates in several layouts (01/31/2020 beside 2020-01-31),
    which no one "format" reads: say how to keep them."""
    sample = vals.iloc[:200].astype(str)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        read = pd.to_datetime(sample, errors="coerce", format="mixed")
    if read.notna().mean() < 0.9:
        return ""
    return (f"; its values look like dates ({shown(sample.iloc[0])}): write them as ISO "
            "8601 (2020-01-31) for a datetime column")
