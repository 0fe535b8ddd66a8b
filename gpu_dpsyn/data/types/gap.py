"""A datetime column that comes after another in every record (discharge after admission,
end after start): {"after": {"column": "admit_dt", "max": "P90D", "bins": 90}}.

Its codes are bins of the gap, this column's value less the other's, over [0, max]; it is
decoded as the other column's decoded value plus a gap drawn inside its bin, so no
synthetic record ends before it starts, and the gap's distribution (a length of stay) is
measured as a marginal of its own, jointly with the other columns.  Binned alone, the two
columns were two unrelated dates: a third of synthetic stays ended before they began.

The gap's bins: "bins" equal spans of [0, max], in whole "unit"s (second, minute, hour or
day) where one is given, else in whole seconds when max is; "unit" alone: a bin a unit.
The row-local rule (data/repair.py) reads a record's two values: a gap past "max" clamps
to it, a negative gap (or a value whose other column is missing) is invalid.
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd

from gpu_dpsyn.data.text import settings, shown
from gpu_dpsyn.data.types.wall import from_wall, to_wall
from gpu_dpsyn.errors import DataError, SchemaError

KEYS = ("column", "max", "bins", "unit")
SHAPE = ("'after' must be an object naming the column this one comes after: {\"column\": "
         "\"start\", \"max\": \"P30D\", \"bins\": 30}")
_NS = 10 ** 9
_UNITS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}  # fixed lengths
_FREQ = {"second": "s", "minute": "min", "hour": "h", "day": "D"}


def coarser(step: str | None, unit: str | None) -> str | None:
    """The coarser of a step (a frequency: "min") and a unit's ("day"); None: no bound."""
    if unit is None:
        return step
    if step is None:
        return _FREQ[unit]
    seconds = {f: _UNITS[u] for u, f in _FREQ.items()}
    return max(step, _FREQ[unit], key=seconds.get)


class Gap:
    """What the schema says of a column's gap after another column."""

    def __init__(self, name: str, spec, max_bins: int):
        where = f"column {shown(name)}: 'after'"
        if not isinstance(spec, dict) or not isinstance(spec.get("column"), str):
            raise SchemaError(f"column {shown(name)}: {SHAPE}")
        extra = sorted(set(spec) - set(KEYS))
        if extra:
            raise SchemaError(f"{where} takes {', '.join(KEYS)}; unexpected {extra}")
        self.column = spec["column"]
        self.max = _duration(where, spec.get("max"))
        unit, bins = spec.get("unit"), spec.get("bins")
        if unit is not None and unit not in _UNITS:
            raise SchemaError(f"{where}: 'unit' must be one of {', '.join(_UNITS)} (units of "
                              f"one length), got {shown(unit)}")
        if bins is not None and (isinstance(bins, bool) or not isinstance(bins, int) or
                                 not 1 <= bins <= max_bins):
            raise SchemaError(f"{where}: 'bins' must be an integer in [1, {max_bins}], got "
                              f"{shown(bins)}")
        if unit is None and bins is None:
            raise SchemaError(f"{where} needs 'bins' (equal spans of the gap), 'unit' (a bin "
                              "a unit) or both (bins of whole units)")
        hi = self.max.value
        self.tick = _UNITS[unit] * _NS if unit else _NS if hi % _NS == 0 else 1
        if hi % self.tick:
            raise SchemaError(f"{where}: 'max' ({iso(self.max)}) must be a whole number of "
                              f"{unit}s")
        span = max(hi // self.tick, 1)  # ticks in [0, max)
        if bins is None and span + 1 > max_bins:
            raise SchemaError(f"{where}: {span + 1:,} {unit}s up to 'max' are too large a "
                              f"domain (max {max_bins}); give 'bins' (bins of whole {unit}s)")
        if bins is None or bins > span:  # a bin a unit: max its own too (a gap of 0 or 1
            span += 1  # day in one bin came out half and half)
        k = min(bins or span, span)
        self.edges = [-((-j * span) // k) * self.tick for j in range(k)] + [hi + 1]
        self.step = _FREQ[unit] if unit else None  # what decode rounds up to (DatetimeSpec
        # makes it coarser where the column's format writes less: datetime.written_unit)
        self.spec = {"column": self.column, "max": iso(self.max),
                     **({"bins": bins} if bins is not None else {}),
                     **({"unit": unit} if unit is not None else {})}

    def to_dict(self) -> dict:
        return dict(self.spec)


# ISO 8601 durations of fixed lengths (weeks, days, hours, minutes, seconds; whole but the
# seconds), or "90 days": pandas read P1M (a month) as a minute and P0.5D as 5 days
_ISO = re.compile(r"P(?:(?P<W>\d+)W|(?:(?P<D>\d+)D)?(?:T(?=\d)(?:(?P<H>\d+)H)?(?:(?P<M>\d+)M)?"
                  r"(?:(?P<S>\d+(?:\.\d{1,9})?)S)?)?)", re.IGNORECASE | re.ASCII)
_WORDS = re.compile(r"(\d+)\s*(week|day|hour|minute|second)s?", re.IGNORECASE | re.ASCII)
_SIZE = {"W": 604800, "D": 86400, "H": 3600, "M": 60, "S": 1}


def _duration(where: str, v) -> pd.Timedelta:
    """An ISO 8601 duration of fixed length (P90D, PT12H, P1DT6H, P2W) or "90 days"."""
    text = v.strip() if isinstance(v, str) else ""
    m, w = _ISO.fullmatch(text), _WORDS.fullmatch(text)
    ns = None
    if m and text.upper() not in ("P", "PT"):
        ns = sum(int(round(float(x) * _SIZE[k] * _NS)) for k, x in m.groupdict().items()
                 if x is not None)
    elif w:
        ns = int(w.group(1)) * _SIZE[w.group(2)[0].upper()] * _NS
    if ns and ns >= 1 << 62:  # (a timestamp holds +-292 years)
        raise SchemaError(f"{where}: 'max' {shown(v)} is longer than the dates a column "
                          "holds span")
    if not ns or ns <= 0:
        raise SchemaError(f"{where}: 'max' must be a positive duration of fixed length, "
                          f"such as \"P90D\", \"PT12H\" (ISO 8601) or \"90 days\" (months "
                          f"and years vary: give days), got {shown(v)}")
    return pd.Timedelta(ns, unit="ns")


def iso(t: pd.Timedelta) -> str:
    """A duration as ISO 8601 text that reads back to itself (P90D, PT36H, PT1H30M)."""
    days, rest = divmod(t.value, 86400 * _NS)
    if not rest:
        return f"P{days}D"
    if t.value % _NS:
        return t.isoformat()
    h, rest = divmod(t.value // _NS, 3600)
    m, sec = divmod(rest, 60)
    return "PT" + "".join(f"{v}{u}" for v, u in ((h, "H"), (m, "M"), (sec, "S")) if v)


def resolve(col, source) -> None:
    """SchemaError unless the column named by col's 'after' can be the gap's start: a
    datetime column of the same time zone (it may come after another itself: a chain,
    order() decodes it first)."""
    gap, where = col.time.after, f"column {shown(col.name)}: 'after'"
    if source is None:
        raise SchemaError(f"{where} names {shown(gap.column)}, which the schema does not have "
                          f"(to drop it, give this column a 'unit' or 'bins' of its own "
                          f"instead: {settings(col.name, ['after=null', 'unit=day'])})")
    if source.name == col.name or source.kind != "datetime":
        raise SchemaError(f"{where} must name another datetime column, got "
                          f"{shown(gap.column)} ({source.kind})")
    if source.nullable and not col.nullable:
        raise SchemaError(f"{where}: {shown(source.name)} may be missing, and then so is "
                          "this column: make it \"nullable\" too")
    if source.time.timezone != col.time.timezone:
        raise SchemaError(f"{where}: {shown(source.name)} has time zone "
                          f"{source.time.timezone} and this column {col.time.timezone}: give "
                          "both the same \"timezone\"")
    step = pd.Timedelta(1, unit=gap.step) if gap.step else None
    if step is not None and gap.max < step:
        raise SchemaError(f"{where}: 'max' {iso(gap.max)} is shorter than the step the column "
                          f"is written in ({iso(step)}): a value written so could read back "
                          "before its start; give a longer max or a finer format")
    wall, col_wall = latest(source), local_wall(col.time.max)
    if step is not None and wall.ceil(step) > col_wall:
        raise SchemaError(f"{where}: this column is written to the {iso(step)}, so a record "
                          f"that starts at {shown(source.name)}'s last value ({wall}) ends "
                          f"at {wall.ceil(step)} at the earliest, past this column's 'max' "
                          f"({col_wall}): give it a 'max' at or after that")
    if source.time.max > col.time.max:
        raise SchemaError(f"{where}: {shown(source.name)} runs to {source.time.max}, past this "
                          f"column's 'max' ({col.time.max}): a record that starts then could "
                          "not end after it; give this column a 'max' at or after it")


def local_wall(t: pd.Timestamp) -> pd.Timestamp:
    return t.tz_localize(None) if t.tz is not None else t


def latest(c) -> pd.Timestamp:
    """The latest value a datetime column decodes to, in local wall time: its last
    calendar bin's start, its max to its tick, or (a gap's end) to its step."""
    t = c.time
    hi = t.bounds[1]
    x = t.edges[-2] if t.calendar else hi if t.after is not None else hi // t.tick * t.tick
    ts = pd.Timestamp(int(x), unit="ns")
    if t.timezone is not None:
        ts = ts.tz_localize("UTC").tz_convert(t.timezone).tz_localize(None)
    return ts.floor(t.after.step) if t.after is not None and t.after.step else ts


def order(columns) -> list:
    """The columns that come after another, each after the column it comes after where
    that one comes after another too (a chain: booked, check_in, check_out); SchemaError
    for a column that would come after itself."""
    after = {c.name: c for c in columns if c.kind == "datetime" and c.time.after is not None}
    out, placed = [], set()

    def place(c, seen=()):
        if c.name in placed:
            return
        if c.name in seen:
            raise SchemaError(f"column {shown(c.name)} comes after itself (through "
                              f"{' -> '.join(map(repr, seen))}): a chain of 'after' must end "
                              "at a column that comes after none")
        start = after.get(c.time.after.column)
        if start is not None:
            place(start, (*seen, c.name))
        placed.add(c.name)
        out.append(c)
    for c in after.values():
        place(c)
    return out


def gaps(x, na, start, start_na, col) -> tuple:
    """(gap in ns, invalid mask) of a record's value x after its start, both epochs as
    datetime.to_epoch gives them: invalid where the gap is negative or the start is
    missing beside a value; a missing value has gap 0."""
    present = ~na
    g = np.where(present & ~start_na, x - start, 0)
    bad = present & (start_na | (g < 0))
    return g, bad


def encode(x, na, start, start_na, col) -> np.ndarray:
    """The gap of each record (DataError where it is invalid or past 'max'), for binning."""
    g, bad = gaps(x, na, start, start_na, col)
    gap = col.time.after
    if bad.any():
        raise DataError(f"column {shown(col.name)} comes before {shown(gap.column)} (or has a "
                        f"value where it is missing) in {int(bad.sum()):,} rows, but the "
                        "schema says it comes after")
    past = g > gap.max.value
    if past.any():
        raise DataError(f"column {shown(col.name)} comes more than {iso(gap.max)} after "
                        f"{shown(gap.column)} in {int(past.sum()):,} rows, past its 'after' "
                        "max")
    return g


def decode(start, start_na, gap_ns, na, col, lo: int, hi: int) -> tuple:
    """(epochs, missing) of the column: its start plus the drawn gap, rounded up to the
    column's step (its unit, or its format's finest field: a date written to the day
    after a start at 19:07 would read back before it), in local time, kept in [lo, hi]
    (the column's own range, which holds the start's: resolve); missing where either
    is.  A gap that would pass hi is drawn again within the room left (_within_room), so
    such ends spread over what is left rather than pile on hi; no sum passes hi, so none
    wraps around int64."""
    na = na | start_na
    s = np.where(na, lo, start)
    room = np.maximum(hi - s, 0)
    x = np.maximum(s + _within_room(gap_ns, room, col.time.after.edges), lo)
    step = col.time.after.step
    if step is not None:  # up, else down where up passes max or the gap's max (and
        up, down = _rounded(x, step, col.time.timezone)  # down stays after the start)
        top = np.minimum(hi, s + col.time.after.max.value)
        # (in a doubled hour, a local time read back may be the other one: never past x)
        x = np.where((up <= top) & (up >= x), up, np.where((down >= s) & (down <= x), down, x))
    return np.where(na, 0, x), na


def _within_room(g, room, edges) -> np.ndarray:
    """Gaps g kept within `room`: one past it keeps its place in its own bin, the bin cut
    at the room ([lo, hi) to [lo, room)), or where the whole bin is past it, over [0,
    room).  Clipped, 7% of an employee table's terminations fell on the last day; scaled
    by room over the gap's max, they piled up just after the start."""
    e = np.asarray(edges, dtype=np.int64)
    b = np.clip(np.searchsorted(e, g, side="right") - 1, 0, len(e) - 2)
    b_lo, b_hi = e[b], e[b + 1]
    frac = (g - b_lo) / np.maximum(b_hi - b_lo, 1).astype(np.float64)
    cut = np.where(room > b_lo, b_lo + frac * (room - b_lo), frac * room)
    return np.where(g > room, cut.astype(np.int64), g)


def _rounded(x, step: str, zone) -> tuple:
    """Epochs x rounded up and down to `step` in the zone's local time (its days start at
    its midnight; a skipped hour shifts forward, a doubled one takes its first)."""
    wall = pd.DatetimeIndex(to_wall(x, zone).view("datetime64[ns]"))
    return tuple(from_wall(r.asi8, zone) for r in (wall.ceil(step), wall.floor(step)))
