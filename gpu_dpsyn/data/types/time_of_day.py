"""A datetime column's time of day ("time_of_day": {"bins": K, "unit": ...}), synthesized
beside its timeline.

A column binned by whole local days or coarser loses the time of day: a bin decodes to
a day, never to a morning.  With "time_of_day" the column is measured as two attributes:
its timeline bins, and a hidden one, the local wall time of day in K equal bins (in the
column's zone: a doubled hour falls in its bin twice, a skipped one is never seen).  The
hidden codes are a function of the record's own value (no new sensitivity), computed in
encode and never read from or written to a table.  Decoding draws a day among the
timeline bin's days, a time in the hidden bin at the written unit, and localizes it
(a doubled time: its first occurrence; a skipped one: shifted forward).
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.data.text import shown
from gpu_dpsyn.data.types.datetime import ISO, written_unit
from gpu_dpsyn.data.types.wall import from_wall, to_wall
from gpu_dpsyn.errors import SchemaError

KEY = "time_of_day"
DAY_NS = 86400 * 10 ** 9
_UNIT_S = {"hour": 3600, "minute": 60, "second": 1}
_SAYS = {"x-message": "'time_of_day' must be an object {\"bins\": K (equal bins of a day, 24 "
                       "by default)[, \"unit\": hour|minute|second]}"}
RULES = {"type": "object", "additionalProperties": False, **_SAYS, "properties": {  # its shape
    "bins": {"type": "integer", "minimum": 1, "maximum": 86400, **_SAYS},  # (schema_rules)
    "unit": {"enum": list(_UNIT_S), **_SAYS}}}
_NEEDS = ("a datetime column binned by whole local days or coarser: 'unit' day, month or "
          "year, or 'bins' whose every edge ('min' included) is a local midnight")


class TimeOfDay:
    """K equal bins of the local day, decoded at `unit`; `column`: the hidden attribute
    (a categorical schema Column, made by schema.column_from_spec)."""
    column = None

    def __init__(self, bins: int, unit: str, given: dict):
        self.bins, self.unit, self.given = bins, unit, given

    @property
    def width_ns(self) -> int:
        return DAY_NS // self.bins

    def labels(self) -> list[str]:
        """Each bin's start, "07:00" (with seconds where a bin's width has them)."""
        secs = [k * 86400 // self.bins for k in range(self.bins)]
        full = any(s % 60 for s in secs)
        return [f"{s // 3600:02d}:{s // 60 % 60:02d}" + (f":{s % 60:02d}" if full else "")
                for s in secs]


def label(name: str) -> str:
    """The hidden attribute's name, as evaluate and the report show it."""
    return f"{name} (time of day)"


def of(col):
    """A datetime column's TimeOfDay, or None (a model saved before has no attribute)."""
    return getattr(col.time, KEY, None) if col.kind == "datetime" else None


def synth(columns) -> list:
    """(position, column) of each measured and synthesized column (not ids, not derived
    ones), a datetime column's hidden time of day right after it, at len(columns) + its
    rank (Schema.synth_indices)."""
    out, hidden = [], len(columns)
    for j, c in enumerate(columns):
        if c.kind not in ("id", "derived"):
            out.append((j, c))
            if of(c) is not None:
                out.append((hidden, of(c).column))
                hidden += 1
    return out


def check_names(synth_columns, names) -> None:
    """SchemaError where a column of the table has a hidden attribute's name."""
    taken = next((c for c in synth_columns if c.time_of and c.name in names), None)
    if taken is not None:
        raise SchemaError(f"column {shown(taken.name)} is also the name of the time of day "
                          f"of {shown(taken.time_of)}; rename the column")


def parse(name: str, spec: dict, time, column) -> TimeOfDay | None:
    """The column's "time_of_day" (its shape checked by schema_rules), or None; a
    SchemaError where the timeline bins are not whole local days or the bins or unit do
    not fit the day or the column's "format".  column(**fields): a schema Column, the
    hidden attribute (nullable as its datetime column: missing where it is)."""
    given = spec.get(KEY)
    if given is None:
        return None
    where = f"column {shown(name)}: '{KEY}'"
    if time.after is not None or not _whole_days(time):
        raise SchemaError(f"{where} needs {_NEEDS}")
    bins = int(given.get("bins", 24))
    written = None if time.format in (None, ISO) else written_unit(time.format)
    if written == "day":
        raise SchemaError(f"{where}: its 'format' {time.format!r} writes days only; give a "
                          "layout with the time (\"%Y-%m-%d %H:%M\") or drop 'time_of_day'")
    unit = given.get("unit") or (written if written in _UNIT_S else "second")
    if written in _UNIT_S and _UNIT_S[unit] < _UNIT_S[written]:
        raise SchemaError(f"{where} 'unit' {unit} is finer than its 'format' writes "
                          f"({written}s)")
    if 86400 % bins:
        raise SchemaError(f"{where} 'bins' must cut a day into equal whole seconds (24, 48, "
                          f"96, 1440 ...), got {bins}")
    if 86400 // bins % _UNIT_S[unit]:
        raise SchemaError(f"{where}: {bins} bins of a day are not whole {unit}s; give "
                          f"fewer bins or a finer 'unit'")
    tod = TimeOfDay(bins, unit, dict(given))
    tod.column = column(name=label(name), kind="categorical", values=tod.labels(),
                        time_of=name)
    time.spec[KEY] = dict(given)  # written back as given (Column.to_dict)
    setattr(time, KEY, tod)
    return tod


def _whole_days(time) -> bool:
    """Whether every timeline bin is whole local days: a calendar day, month or year (the
    first bin starts at min), or bins whose every start is a local midnight."""
    if time.calendar:
        return time.unit in ("day", "month", "year")
    return bool((to_wall(time.edges[:-1], time.timezone) % DAY_NS == 0).all())


def encode(x: np.ndarray, na: np.ndarray, col) -> np.ndarray:
    """The hidden codes of epochs x (to_epoch's): the local time of day's bin; the null
    code where the value is missing."""
    tod = of(col)
    wall = to_wall(np.where(na, 0, x).astype(np.int64), col.time.timezone)
    codes = np.mod(wall, DAY_NS) // tod.width_ns
    return np.where(na, tod.bins, codes)


def draw(col, codes, hidden, u_day, u_time) -> np.ndarray:
    """Epoch nanoseconds: a local day among the timeline bin's (u_day), a time in the
    hidden bin at the written unit (u_time; the null code: the whole day); None: the
    middle of each.  Clamped into the timeline bin (a first or last partial day)."""
    tod, time = of(col), col.time
    edges = np.asarray(col.edges, dtype=np.int64)
    lo, hi = np.append(edges[:-1], edges[-2]), np.append(edges[1:], edges[-1]) - 1
    first = to_wall(lo, time.timezone) // DAY_NS  # per bin: its first and last local day
    days = to_wall(hi, time.timezone) // DAY_NS - first + 1
    codes, hidden = np.asarray(codes, dtype=np.intp), np.asarray(hidden, dtype=np.int64)
    unit_ns = _UNIT_S[tod.unit] * 10 ** 9
    whole = hidden >= tod.bins  # no time of day: anywhere in the day
    start = np.where(whole, 0, hidden * tod.width_ns)
    steps = np.where(whole, DAY_NS, tod.width_ns) // unit_ns
    n = days[codes]
    day = (n - 1) // 2 if u_day is None else np.minimum(np.floor(u_day * n).astype(
        np.int64), n - 1)
    step = (steps - 1) // 2 if u_time is None else np.minimum(np.floor(
        u_time * steps).astype(np.int64), steps - 1)
    wall = (first[codes] + day) * DAY_NS + start + step * unit_ns
    return np.clip(from_wall(wall, time.timezone), lo[codes], hi[codes])
