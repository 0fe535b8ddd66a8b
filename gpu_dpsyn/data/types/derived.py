"""Derived columns: a fixed public operation on one other column, applied after synthesis.

{"type": "derived", "from": "sched_dep_time", "op": "floordiv", "by": 100}, or a fixed
map of a categorical column, {"op": "lookup", "map": {...}} (types/lookup.py).  The column is
never measured (it costs no budget); encode() only checks that the data follows the
declared rule, and decode() computes it from the synthesized source.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import numpy as np
import pandas as pd

from gpu_dpsyn.data.matching import plain
from gpu_dpsyn.data.types.datetime import UNITS
from gpu_dpsyn.data.types.lookup import Lookup, Presence, parse_map
from gpu_dpsyn.errors import DataError, SchemaError

ARITHMETIC = {"floordiv": "//", "mod": "%"}  # integer source, "by" a positive integer
DATE_PARTS = {"year": None, "month": (1, 12), "day": (1, 31), "hour": (0, 23),
              "minute": (0, 59), "weekday": (0, 6)}  # datetime source; weekday: Monday 0
KEYS = {"type", "kind", "name", "from", "op", "by", "map", "nullable", "dtype"}
LOOKUP = "lookup"  # a categorical source, "map" its value -> the column's
PRESENT = "present"  # a nullable source, "map" {"missing": v0, "present": v1}
_FINENESS = {u: i for i, u in enumerate(UNITS)}  # year, month, ... second: coarse to fine
_STEP_UNIT = {"s": "second", "min": "minute", "h": "hour", "D": "day"}  # types/gap.py
_PART_UNIT = {"year": "year", "month": "month", "day": "day", "weekday": "day", "hour": "hour",
              "minute": "minute"}  # the coarsest unit whose values the part varies over


class Derivation:
    def __init__(self, name: str, spec: dict):
        extra = sorted(set(spec) - KEYS)
        if extra:
            raise SchemaError(f"column {shown(name)}: a derived column takes from, op, by, "
                              f"map and dtype; unexpected {extra}")
        self.name, self.source, self.op, self.by = name, spec.get("from"), spec.get("op"), \
            spec.get("by")
        self.declared_nullable = spec.get("nullable")
        if self.op not in ARITHMETIC and self.op not in DATE_PARTS and \
                self.op not in (LOOKUP, PRESENT):
            raise SchemaError(f"column {shown(name)}: unknown op {self.op!r}; use one of "
                              f"{', '.join([*ARITHMETIC, *DATE_PARTS, LOOKUP, PRESENT])}")
        if "map" in spec and self.op not in (LOOKUP, PRESENT):
            raise SchemaError(f"column {shown(name)}: 'map' is for ops 'lookup' and "
                              f"'present', not {self.op!r}")
        self.map = parse_map(name, spec.get("map")) if self.op == LOOKUP else None
        # as Python values (NumPy keys would not write as JSON, nor seed a noise key)
        given = spec.get("map")  # (a lookup's was checked a dict by parse_map)
        self.given_map = None if self.op not in (LOOKUP, PRESENT) else \
            {plain(k): plain(v) for k, v in given.items()} if isinstance(given, dict) else given
        self.lookup = None  # set by resolve(), against the source's values
        if self.op in ARITHMETIC:
            if isinstance(self.by, bool) or not isinstance(self.by, (int, np.integer)) or \
                    self.by < 1:
                raise SchemaError(f"column {shown(name)}: op {self.op!r} needs 'by', a positive "
                                  f"integer, got {self.by!r}")
            self.by = int(self.by)
        elif self.by is not None:
            raise SchemaError(f"column {shown(name)}: op {self.op!r} takes no 'by'")
        if not isinstance(self.source, str):
            raise SchemaError(f"column {shown(name)}: 'from' must name a column, got "
                              f"{self.source!r}")
        self.value_range = None  # set by resolve(), from the source's range

    def resolve(self, col, source) -> None:
        """Check the source column and take nullability and range from it."""
        name = self.name
        if source is None:
            raise SchemaError(f"column {shown(name)}: 'from' {self.source!r} is not a column of "
                              "the schema")
        if source.kind in ("derived", "id"):
            raise SchemaError(f"column {shown(name)}: 'from' {self.source!r} is {'a derived' if source.kind == 'derived' else 'an id'} "
                              "column; derive from a synthesized one")
        if self.op in (LOOKUP, PRESENT):
            self.lookup = Lookup(name, self.map, self.given_map, source) if \
                self.op == LOOKUP else Presence(name, self.given_map, source)
            col.values = self.lookup.values  # its output: as a categorical column's
        if self.op in ARITHMETIC and not (source.kind == "numeric" and source.integer):
            raise SchemaError(f"column {shown(name)}: op {self.op!r} needs an integer numeric "
                              f"column, and {self.source!r} is not one")
        if self.op in DATE_PARTS and source.kind != "datetime":
            raise SchemaError(f"column {shown(name)}: op {self.op!r} needs a datetime column, and "
                              f"{self.source!r} is not one")
        # a time of day draws a day in its bin and a time down to its own unit
        tod = getattr(source.time, "time_of_day", None) if self.op in DATE_PARTS else None
        unit = tod.unit if tod is not None else (source.time.unit or _STEP_UNIT.get(
            getattr(source.time.after, "step", None))) if self.op in DATE_PARTS else None
        if unit is not None and _FINENESS[_PART_UNIT[self.op]] > _FINENESS[unit]:
            # a calendar unit decodes to its bin's start: the part would be one value
            raise SchemaError(f"column {shown(name)}: the {self.op} of {self.source!r}, whose "
                              f"{'time of day is drawn to the' if tod else 'unit is'} "
                              f"{unit}, is the same on every row (its values are "
                              f"the start of each {unit}); give {self.source!r} a unit of "
                              f"{_PART_UNIT[self.op]} or finer, or drop {shown(name)}")
        if self.declared_nullable is not None and bool(self.declared_nullable) != \
                (source.nullable and self.op != PRESENT):
            raise SchemaError(f"column {shown(name)}: " + (
                "a 'present' flag is never missing; drop 'nullable'" if self.op == PRESENT
                else f"nullable must follow its source {self.source!r} (nullable: "
                f"{source.nullable}); drop it"))
        col.nullable = source.nullable and self.op != PRESENT  # (a flag: never missing)
        if self.op == "floordiv":
            lo, hi = source.value_range
            self.value_range = (lo // self.by, hi // self.by)
        elif self.op == "mod":
            self.value_range = (0, self.by - 1)
        elif self.op in (LOOKUP, PRESENT):
            self.value_range = None  # listed values instead (col.values)
        elif self.op == "year":
            self.value_range = (source.time.min.year, source.time.max.year)
        else:
            self.value_range = DATE_PARTS[self.op]

    def rule(self) -> str:
        if self.op in ARITHMETIC:
            return f"{self.source} {ARITHMETIC[self.op]} {self.by}"
        if self.op == LOOKUP:
            return f"the lookup of {self.source} in its map"
        if self.op == PRESENT:
            return f"whether {self.source} is present"
        return f"the {self.op} of {self.source}"

    def to_dict(self) -> dict:
        d = {"type": "derived", "from": self.source, "op": self.op}
        if self.op in (LOOKUP, PRESENT):
            return {**d, "map": dict(self.given_map)}
        return {**d, "by": self.by} if self.op in ARITHMETIC else d

    def apply(self, source: pd.Series) -> np.ndarray:
        """float64 values (NaN where the source is missing) from the source's values:
        numbers for an arithmetic op, datetimes in the column's own zone for a date part;
        for a lookup, its values (object, None where the source is missing)."""
        if self.op in (LOOKUP, PRESENT):
            return self.lookup.apply(source)
        if self.op in ARITHMETIC:
            x = pd.to_numeric(source).to_numpy(dtype=np.float64, na_value=np.nan)
            return np.floor_divide(x, self.by) if self.op == "floordiv" else np.mod(x, self.by)
        part = "day_of_week" if self.op == "weekday" else self.op
        return getattr(source.dt, part).to_numpy(dtype=np.float64, na_value=np.nan)


def check_data(s, col, source_values: pd.Series) -> None:
    """DataError unless the column holds exactly the rule applied to its source (missing
    where the source is)."""
    d = col.derive
    if type(s).__module__.split(".")[0] == "cudf":
        s = s.to_pandas()
    s = s.reset_index(drop=True)
    if d.op in (LOOKUP, PRESENT):
        differ = lookup_differs(s, col, source_values)
        if differ.any():
            i = int(np.argmax(differ))
            was = (f"{d.source} {'is missing' if pd.isna(source_values.iloc[i]) else 'has a value'}"
                   if d.op == PRESENT else f"{d.source}={shown(source_values.iloc[i])}")
            raise DataError(f"column {shown(col.name)} is derived as {d.rule()} in the "
                            f"schema, but {int(differ.sum())} rows disagree (first: {was}, "
                            f"{col.name}={shown(s.iloc[i])})")
        return
    got = pd.to_numeric(s, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    text = np.isnan(got) & ~s.isna().to_numpy()
    if text.any():
        raise DataError(f"column {shown(col.name)} is numeric (derived) but has non-numeric values: "
                        + ", ".join(repr(v) for v in pd.unique(s[text])[:5]))
    want = d.apply(source_values)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    if not same.all():
        i = int(np.argmin(same))
        raise DataError(f"column {shown(col.name)} is derived as {d.rule()} in the schema, but "
                        f"{int((~same).sum())} rows disagree (first: {d.source}="
                        f"{_plain(source_values.iloc[i])}, {col.name}={s.iloc[i]})")


def lookup_differs(s, col, source_values) -> np.ndarray:
    """Where the data's copy of a lookup column is not its source's value in the map
    (missing where the source is)."""
    d = col.derive.lookup
    return d.data_codes(s, col) != d.output_codes(source_values)


def _plain(v):
    """A source value as written: a whole float (numbers are read as float64) as an int."""
    return int(v) if isinstance(v, float) and v.is_integer() else v
