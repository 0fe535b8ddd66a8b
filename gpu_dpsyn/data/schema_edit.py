"""Editing a schema file without writing JSON by hand (gpu-dpsyn schema): set a column's
keys, drop a column, mark drafted values reviewed.  The result is validated as any schema
is before it is written."""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import json

from gpu_dpsyn.data.dialect import TAB_NAMES
from gpu_dpsyn.data.files import read_small
from gpu_dpsyn.data.schema import _TYPE_ALIASES
from gpu_dpsyn.data.schema_rules import MAX_BINS
from gpu_dpsyn.errors import SchemaError

# setting a numeric column's range replaces drafted edges: its bins keep their count
RANGE_KEYS = ("min", "max", "bins")
# what a column keeps when its type changes: the rest belonged to the old type
KEPT_ON_RETYPE = ("name", "nullable", "dtype")


# the schema's own keys that --set reaches without a column (KEY=VALUE)
TOP_KEYS = ("max_records_per_individual", "max_rows", "individual_id")


def parse_setting(text: str, from_file: bool = False) -> tuple:
    """'COLUMN.KEY=VALUE' -> (column, key, value) ("csv.KEY=VALUE": the schema's "csv"
    unless a column is named so), 'KEY=VALUE' for one of TOP_KEYS ->
    (None, key, value); VALUE as JSON when it parses (numbers, true/false, lists), else
    as text.  from_file (--set-file): VALUE names a JSON file holding the value."""
    flag = "--set-file" if from_file else "--set"
    where, eq, value = text.partition("=")
    column, dot, key = where.rpartition(".")
    if eq and not dot and key in TOP_KEYS:
        column = None
    elif not eq or not dot or not column or not key:
        raise SchemaError(f"{flag} takes COLUMN.KEY={'FILE' if from_file else 'VALUE'} (e.g. "
                          f"{'icd.values=codes.json' if from_file else 'age.max=120'}) or "
                          f"KEY={'FILE' if from_file else 'VALUE'} for {', '.join(TOP_KEYS)}, "
                          f"got {shown(text)}")
    if from_file:
        return column, key, _from_file(value)
    try:
        value = json.loads(value)
    except json.JSONDecodeError:
        pass  # text: a type name, a value
    return column, key, value


def _from_file(path: str):
    text = read_small(path, "--set-file", SchemaError)
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise SchemaError(f"--set-file: {shown(path)} holds no JSON (a list of values: "
                          "[\"A00\", \"A01\"])") from None


def edit(doc: dict, sets=(), drops=(), reviewed=(), ignores=()) -> dict:
    """The schema document with the edits applied (a new dict).  sets: (column, key,
    value); drops: columns; reviewed: columns whose drafted values are now public facts
    ("all": every column); ignores: table columns to list in "ignored_columns" (taken out
    of "columns" if there).  A key set is reviewed too."""
    doc = json.loads(json.dumps(doc))  # a copy
    given = {}
    for name, key, value in sets:  # one value a key: the last would win unseen
        where = key if name is None else f"{name}.{key}"
        if where in given and given[where] != value:
            raise SchemaError(f"--set gives {where} twice ({given[where]!r} and {value!r}); "
                              "give one value")
        given[where] = value
    cols = doc.get("columns")
    if not isinstance(cols, dict):
        raise SchemaError("gpu-dpsyn schema edits our schema form ('columns' as an object)")
    drafted = list(doc.get("_drafted_from_data") or [])
    first = set(drafted)  # as drafted, before this edit

    def of(d: str) -> str:  # a drafted "column.key" -> its column (a key has no dot)
        return d.rsplit(".", 1)[0]

    def column(name):
        if name in ignored:
            raise SchemaError(f"{shown(name)} is in ignored_columns; --set {name}.type=... "
                              f"brings it back as a column (--drop {name} takes it out)")
        if name not in cols:
            raise SchemaError(f"no column {shown(name)} in the schema; columns are {list(cols)}")
        return cols[name]
    ignored = list(doc.get("ignored_columns") or [])
    for name in drops:  # out of the columns, or out of the ignored ones
        if name in ignored:
            ignored = [c for c in ignored if c != name]
        else:
            column(name)
            del cols[name]
            if doc.get("individual_id") == name:  # it named the individual: no longer
                doc.pop("individual_id")
        drafted = [d for d in drafted if of(d) != name]
    ids = [n for n, c in cols.items() if _kind(c) == "id"]
    named = given.get("individual_id", doc.get("individual_id"))  # (--set first)
    unit = named or (ids[0] if ids else None)  # as Schema.unit_id
    for name in ignores:
        if name == unit:  # left unread, each record would be an individual: a weaker unit
            raise SchemaError(f"{shown(name)} names the individual (the unit of privacy), "
                              "and an id column is never written out (it comes out as "
                              "1..n): keep it; ignored, each record would be an individual "
                              "(if so, --drop it and --ignore it)")
        cols.pop(name, None)
        drafted = [d for d in drafted if of(d) != name]
        ignored += [] if name in ignored else [name]
    ranges = {n: dict(c) for n, c in cols.items() if _kind(c) == "datetime"}  # as they were
    # a type first: a new type starts from the column's common keys, then takes the rest
    for name, key, value in sorted(sets, key=lambda s: s[1] != "type"):
        owner, dot, sub = (name or "").rpartition(".")
        if dot and sub == "time_of_day" and name not in cols and owner in cols:  # a key
            if value is None and sub not in cols[owner]:  # (of it: taken.time_of_day.bins=
                continue  # 48); a null key of none: no time of day made ({} would be one)
            tod = cols[owner].setdefault(sub, {})
            if isinstance(tod, dict):
                if value is None:
                    tod.pop(key, None)
                else:
                    tod[key] = value
                continue
        if dot and sub == "after" and name not in cols and owner in cols:  # a key of the
            after = cols[owner].get("after")  # gap (disch.after.max=P30D): in its object
            if not isinstance(after, dict):
                raise SchemaError(f"column {shown(owner)} comes after no column: set its "
                                  f"whole 'after' ({owner}.after='{{\"column\": ..., "
                                  "\"max\": \"P30D\", \"bins\": 30}')")
            if value is None:
                after.pop(key, None)
            else:
                after[key] = value
            continue  # (drafted: its pairing and other keys too, until --reviewed)
        if name is not None and key in ("type", "kind") and name in ignored:  # back
            ignored = [c for c in ignored if c != name]
            cols[name] = {}
        if name is None:  # the schema's own key
            if value is None:
                doc.pop(key, None)
            else:
                doc[key] = value
            continue
        if name == "csv" and name not in cols:  # the file's dialect (data/dialect.py)
            csv = doc.setdefault("csv", {})
            if value is None:
                csv.pop(key, None)
            else:  # text: "--set csv.decimal=," and all; a tab as "\t" or "tab"
                csv[key] = TAB_NAMES.get(str(value), str(value)) if key == "separator" \
                    else str(value)
            if not csv:
                doc.pop("csv")
            continue
        spec = column(name)
        if key in ("type", "kind") and value != spec.get(key):
            whole = _whole_values(spec)  # listed integers stay whole as numbers
            for k in [k for k in spec if k not in KEPT_ON_RETYPE]:
                del spec[k]
            if whole and isinstance(value, str) and _TYPE_ALIASES.get(value) == "numeric":
                spec["integer"] = True
            drafted = [d for d in drafted if of(d) != name]
        if key in RANGE_KEYS and "edges" in spec:  # a public range replaces drafted edges
            if f"{name}.edges" not in drafted:  # the user's own: never dropped unsaid
                raise SchemaError(f"column {shown(name)} has edges of its own (not drafted): "
                                  f"setting {key!r} would drop them; remove them in the same "
                                  f"command, before the range (--set {name}.edges=null "
                                  f"--set {name}.min=... --set {name}.max=...), or edit the "
                                  "edges")
            edges = spec.pop("edges")
            spec.setdefault("bins", len(edges) - 1)
            if isinstance(spec.get("support"), dict):  # a step (amounts in hundreds): kept,
                spec["support"].pop("start", None)    # on the new range's grid
                drafted = [d for d in drafted if d != f"{name}.edges"]
            else:  # the values seen: of the drafted range
                spec.pop("support", None)
                drafted = [d for d in drafted if d not in (f"{name}.edges", f"{name}.support")]
        if key == "after" and isinstance(value, dict):  # the gap has the unit and bins
            spec.pop("unit", None)
            spec.pop("bins", None)
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
        drafted = [d for d in drafted if d != f"{name}.{key}"]
    given = {(n, k) for n, k, _ in sets}
    for name, was in ranges.items():  # a zone named: drafted ends as its local times
        spec = cols.get(name)
        if isinstance(spec, dict) and spec.get("timezone") != was.get("timezone"):
            local = _in_zone(was, spec.get("timezone"))  # (a user's own ends: never)
            spec.update({k: local[k] for k in ("min", "max") if k in local and
                         f"{name}.{k}" in first and (name, k) not in given})
    for name, was in ranges.items():  # bins of whole units keep their width over a new
        spec = cols.get(name)  # range (from the range before and after every edit)
        if isinstance(spec, dict) and "unit" in spec and isinstance(spec.get("bins"), int) \
                and (name, "bins") not in given and \
                (spec.get("min"), spec.get("max")) != (was.get("min"), was.get("max")):
            spec["bins"] = _same_width(was, spec, name)
    for name, was in ranges.items():  # drafted bins of whole hours or days, counted in UTC,
        spec = cols.get(name)  # which a zone refuses: drafted again as for the zone
        if isinstance(spec, dict) and spec.get("timezone") not in (None, "UTC") and \
                spec.get("timezone") != was.get("timezone") and \
                spec.get("unit") in ("hour", "day") and isinstance(spec.get("bins"), int) \
                and f"{name}.bins" in first and \
                not given & {(name, "unit"), (name, "bins"), (name, "time_of_day")}:
            new = _for_zone(name, spec)
            for k in ("unit", "bins", "time_of_day"):
                spec.pop(k, None)
            spec.update(new)
            drafted = [d for d in drafted if d not in {f"{name}.{k}" for k in (
                "unit", "bins", "time_of_day")} - {f"{name}.{k}" for k in new}]
            drafted += [f"{name}.{k}" for k in new if f"{name}.{k}" not in drafted]
    if ignored:
        doc["ignored_columns"] = ignored
    else:
        doc.pop("ignored_columns", None)
    for name in reviewed:
        if name != "all" and name not in ignored:
            column(name)
        drafted = [d for d in drafted if name != "all" and of(d) != name]
    if drafted:
        doc["_drafted_from_data"] = drafted
    else:
        doc.pop("_drafted_from_data", None)
    return doc


def reshaped(before: dict, after: dict) -> list:
    """A line for each numeric column whose drafted edges, not of equal widths (a skewed
    column's log-spaced bins, a common value's bin of its own), an edit replaced by equal
    widths over a range: said, as such a value is then spread over its bin (a cart value
    of 0 on 70% of the rows came out on none)."""
    drafted = before.get("_drafted_from_data") or []
    notes = []
    for name, was in (before.get("columns") or {}).items():
        now = (after.get("columns") or {}).get(name)
        if not (isinstance(was, dict) and isinstance(now, dict) and f"{name}.edges" in
                drafted and isinstance(was.get("edges"), list) and "edges" not in now
                and isinstance(now.get("bins"), int) and _kind(now) == "numeric"):
            continue
        e = [float(x) for x in was["edges"] if isinstance(x, (int, float))]
        w = sorted(b - a for a, b in zip(e, e[1:]))
        if len(w) < 2 or w[0] > 0 and w[-1] <= 2.5 * w[len(w) // 2] and \
                w[0] >= w[len(w) // 2] / 2.5:
            continue  # equal widths, or near enough (integers): the same shape again
        narrow = w[0] if 0 < w[0] < w[len(w) // 2] / 2.5 else 0  # integers: [v, v + 1)
        own = [a for a, b in zip(e, e[1:]) if b - a == 0 or b - a == narrow]
        notes.append(f"column {shown(name)}: its drafted edges were not of equal widths "
                     "(log-spaced for a skewed column, or a common value's bin of its own"
                     + (f": {', '.join(f'{v:g}' for v in own)}" if own else "") + f"); the "
                     f"range replaced them by {now['bins']} equal bins, which spread such "
                     "values over their bins: to keep them, set its edges (--set-file "
                     f"{name}.edges=FILE, the drafted list with the public ends)")
    return notes


_WHOLE = {"D": "days", "h": "hours", "min": "minutes", "s": "seconds"}  # coarsest first


def _in_zone(was: dict, zone) -> dict:
    """A datetime column's min and max written with UTC offsets (a draft's, read off text
    with offsets: "timezone": "UTC" until the real zone is named) as local wall times in
    `zone` at whole units covering the same instants: the start of the local day (hour,
    minute, second: the coarsest both ends are whole in) holding min, the end of the one
    holding max.  The same instants alone would start a Berlin column's range at 01:00
    local time; the same wall times would leave out values near its ends.  {} where
    either has no offset (a local time already) or does not read."""
    import pandas as pd
    try:
        lo, hi = (pd.Timestamp(was[k]) for k in ("min", "max"))
        if lo.tz is None or hi.tz is None or not isinstance(zone, str):
            return {}
        end = hi + pd.Timedelta(seconds=1)
        unit = next((u for u in _WHOLE if lo == lo.floor(u) and end == end.floor(u)), "s")
        start = lo.tz_convert(zone).tz_localize(None).floor(unit)
        stop = end.tz_convert(zone).tz_localize(None).ceil(unit) - pd.Timedelta(seconds=1)
        return {**{k: t.tz_localize(zone, ambiguous=True, nonexistent="shift_forward")
                   .isoformat() for k, t in (("min", start), ("max", stop))},
                "whole": _WHOLE[unit]}
    except (KeyError, TypeError, ValueError, OverflowError):  # refused when it loads
        return {}


def _for_zone(name: str, spec: dict) -> dict:
    """The min, max and binning the draft gives values in whole units of spec's "unit"
    over its range in its zone, at most its bins many (draft_stamps.datetime_column: a
    zone's local days, the time of day beside them); spec's own where that fails."""
    import pandas as pd
    from gpu_dpsyn.data.draft_stamps import datetime_column
    zone = spec["timezone"]
    try:
        lo, hi = (pd.Timestamp(spec[k]) for k in ("min", "max"))
        lo, hi = (t.tz_convert(zone).tz_localize(None) if t.tz is not None else t
                  for t in (lo, hi))
        col, _ = datetime_column(name, lo, hi, spec["unit"], zone,
                                 bool(spec.get("nullable", False)), False, spec["bins"],
                                 spec["bins"], (spec.get("format"), ()))
    except (KeyError, TypeError, ValueError, OverflowError, SchemaError):
        return {k: spec[k] for k in ("unit", "bins") if k in spec}  # refused as it loads
    d = col.to_dict()
    return {k: d[k] for k in ("min", "max", "unit", "bins", "time_of_day") if k in d}


def rezoned(before: dict, after: dict) -> list:
    """A line for each datetime column whose zone an edit changed: its drafted ends
    rewritten as local times (_in_zone), or, kept as written with offsets (the user's
    own, never shifted), how the new zone's clock reads them where not at a whole unit."""
    import pandas as pd
    notes = []
    for name, was in (before.get("columns") or {}).items():
        now = (after.get("columns") or {}).get(name)
        if not (isinstance(was, dict) and isinstance(now, dict) and _kind(now) ==
                "datetime" and now.get("timezone") != was.get("timezone")):
            continue
        local = _in_zone(was, now.get("timezone"))
        ends = [k for k in ("min", "max") if k in local]
        moved = [k for k in ends if now.get(k) == local[k] != was.get(k)]
        kept = [k for k in ends if now.get(k) == was.get(k) and
                pd.Timestamp(local[k]) != pd.Timestamp(was[k])]
        if moved:
            notes.append(f"column {shown(name)}: its drafted {' and '.join(moved)}, written "
                         f"with UTC offsets, are now {now['timezone']} wall times at whole "
                         f"{local['whole']} holding the same instants: " + ", ".join(
                             f"{k} {now[k]}" for k in moved) + " (review them: the first "
                         "and last units may hold none of the data)")
        if was.get("unit") in ("hour", "day") and "bins" in was and "bins" not in now:
            tod = now.get("time_of_day")
            notes.append(f"column {shown(name)}: its bins of whole {was['unit']}s, counted "
                         f"in UTC, do not fit {now['timezone']}'s; drafted again for it: "
                         + (f"unit {now['unit']}" if "unit" in now else
                            f"{now.get('bins')} equal bins")
                         + (f", its time of day beside it in {tod.get('bins')} bins"
                            if isinstance(tod, dict) else "") + " (review them)")
        if kept:
            notes.append(f"column {shown(name)}: its {' and '.join(kept)} keep their UTC "
                         f"offsets, the same instants, which {now['timezone']} reads as "
                         + ", ".join(f"{k} {_local(now[k], now['timezone'])}" for k in kept)
                         + ": set them as local times if meant so")
    return notes


def _local(text: str, zone: str) -> str:
    """An instant written with an offset, as the zone's clock reads it."""
    import pandas as pd
    return pd.Timestamp(text).tz_convert(zone).isoformat()


def _same_width(was: dict, spec: dict, name: str) -> int:
    """A datetime column's bin count over its new range (spec) that keeps the width its
    bins had over the old one (was): 365 bins of a day over a year, 456 over 15 months,
    not 365 of 1.25 days each; as it was where a date does not read."""
    import pandas as pd
    try:
        old = pd.Timestamp(was["max"]) - pd.Timestamp(was["min"])
        span = pd.Timestamp(spec["max"]) - pd.Timestamp(spec["min"])
        bins = max(1, round(was["bins"] * span / old))
    except (KeyError, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return spec["bins"]
    if bins > MAX_BINS:
        raise SchemaError(f"column {shown(name)}: its {was['bins']} bins kept as wide over the "
                          f"new range would be {bins:,}, past {MAX_BINS:,}: give fewer in the "
                          f"same command (--set {name}.bins=N)")
    return bins


def _whole_values(spec: dict) -> bool:
    """A categorical column listing integers only (no booleans): retyped numeric, it
    keeps "integer": true, or whole numbers would decode as fractions."""
    values = spec.get("values")
    return _kind(spec) == "categorical" and isinstance(values, list) \
        and bool(values) and all(isinstance(v, int) and not isinstance(v, bool) or
                                 isinstance(v, float) and v.is_integer() for v in values)


def _kind(spec) -> str | None:
    """A column's type as the schema reads it ("type", else "kind"; aliases such as
    "identifier" for id), or None."""
    kind = spec.get("type") or spec.get("kind") if isinstance(spec, dict) else None
    return _TYPE_ALIASES.get(kind) if isinstance(kind, str) else None
