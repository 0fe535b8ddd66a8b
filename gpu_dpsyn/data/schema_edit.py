"""Editing a schema file without writing JSON by hand (gpu-dpsyn schema): set a column's
keys, drop a column, mark drafted values reviewed.  The result is validated as any schema
is before it is written."""
from __future__ import annotations

from gpu_dpsyn.data.text import pasted, settings, shown  # noqa: F401 (capped values)

import json
import math

import pandas as pd

from gpu_dpsyn.data import edit_forms
from gpu_dpsyn.data.dialect import TAB_NAMES
from gpu_dpsyn.data.draft_after import _about
from gpu_dpsyn.data.draft_bins import kept_shape, shaped
from gpu_dpsyn.data.files import read_small
from gpu_dpsyn.data.schema import _TYPE_ALIASES, MAX_COLUMN_DOMAIN
from gpu_dpsyn.data.schema_zone import _kind, datetime_edits, rezoned
from gpu_dpsyn.data.types.gap import _duration
from gpu_dpsyn.errors import SchemaError

# setting a numeric column's range: drafted edges keep their shape inside it (_new_range)
RANGE_KEYS = ("min", "max", "bins")
# what a column keeps when its type changes: the rest belonged to the old type
KEPT_ON_RETYPE = ("name", "nullable", "dtype")


# the schema's own keys that --set reaches without a column (KEY=VALUE)
TOP_KEYS = ("max_records_per_individual", "max_rows", "individual_id")


def parse_setting(text: str, from_file: bool = False, columns=()) -> tuple:
    """'COLUMN.KEY=VALUE' -> (column, key, value) ("csv.KEY=VALUE": the schema's "csv"
    unless a column is named so), 'KEY=VALUE' for one of TOP_KEYS ->
    (None, key, value); VALUE as JSON when it parses (numbers, true/false, lists), else
    as text.  from_file (--set-file): VALUE names a JSON file holding the value.
    columns: the schema's names, for a name holding "=" (a=b.values=[...]): cut at the
    first "=" whose COLUMN.KEY names one of them (or a key of one: t.time_of_day.bins)."""
    flag = "--set-file" if from_file else "--set"
    where, eq, value = text.partition("=")
    for i in [i for i, c in enumerate(text) if c == "="] if columns else ():
        column, dot, key = text[:i].rpartition(".")
        if dot and key and (column in columns or column.rpartition(".")[0] in columns):
            where, value = text[:i], text[i + 1:]
            break
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
            raise SchemaError(f"{shown(name)} is in ignored_columns; "
                              f"{settings(name, ['type=...'])} brings it back as a column "
                              f"({pasted('--drop', name)} takes it out)")
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
    ranged = set()  # numeric columns whose drafted edges met a range
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
                                  "whole 'after' (" + settings(owner, [
                                      'after={"column": ..., "max": "P30D", "bins": 30}'])
                                  + ")")
            if value is None:
                after.pop(key, None)
            else:
                if key == "max" and f"{name}.bins" not in given:
                    _keep_width(after, value)
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
        if key in RANGE_KEYS and "edges" in spec and name not in ranged:
            if f"{name}.edges" not in drafted:  # the user's own: never dropped unsaid
                raise SchemaError(f"column {shown(name)} has edges of its own (not drafted): "
                                  f"setting {key!r} would drop them; remove them in the same "
                                  "command, before the range ("
                                  f"{settings(name, ['edges=null', 'min=...', 'max=...'])}), "
                                  "or edit the edges")
            ranged.add(name)  # (from all of its range keys at once: once)
            drafted = _new_range(name, spec, given, drafted)
        edit_forms.check(name, key, value, _kind(spec))  # a domain in a form it has not
        if key == "after" and isinstance(value, dict):  # the gap has the unit and bins
            spec.pop("unit", None)
            spec.pop("bins", None)
        if value is None:
            spec.pop(key, None)
        else:
            spec[key] = value
        drafted = [d for d in drafted if d != f"{name}.{key}"]
    drafted = datetime_edits(cols, ranges, first, {(n, k) for n, k, _ in sets}, drafted)
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


def notes(before: dict, after: dict) -> list:
    """What an edit changed beyond the keys it set, a line each: a drafted shape (reshaped),
    a zone's rewritten ends and bins (schema_zone.rezoned), a gap's bins (regapped)."""
    return reshaped(before, after) + rezoned(before, after) + regapped(before, after)


GAP_GROWTH = 4  # a gap's bins, its max set alone, grow this many times at most: a drafted
# P60D in 60 bins set to a decade's max would have made 3,650 bins, each pair with it huge


def _keep_width(after: dict, new) -> None:
    """A gap's equal bins keep their width where its max is set without its bins (in
    place), unless that leaves under half of them: a hospital's stays drafted up to P114D
    in 32 bins, set to a public P365D, had 32 bins of 11.4 days, and at eps 1 the synthetic
    median stay was 151 hours (real 70; as drafted, 74)."""
    wide = _wider(after, new)
    if wide is not None:
        after["bins"] = wide


def _wider(after: dict, new) -> int | None:
    """The bins of the gap `after` of the same width up to the max `new`, or None: no
    count of bins, or under half of them left."""
    k = after.get("bins")
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        return None
    try:  # (a max the rules refuse is named by them)
        was, now = (_duration("'after'", v).value for v in (after.get("max"), new))
    except SchemaError:
        return None
    wide = min(-(-now * k // was), GAP_GROWTH * k, MAX_COLUMN_DOMAIN)
    return wide if 2 * wide >= k else None


def regapped(before: dict, after: dict) -> list:
    """A line for each column whose gap's bins an edit of its max alone changed."""
    notes = []
    for name, was in (before.get("columns") or {}).items():
        now = (after.get("columns") or {}).get(name)
        g0, g1 = (c.get("after") if isinstance(c, dict) else None for c in (was, now))
        if isinstance(g0, dict) and isinstance(g1, dict) and g0.get("max") != g1.get(
                "max") and g0.get("bins") != g1.get("bins") and isinstance(g1.get(
                "bins"), int) and g1["bins"] == _wider(g0, g1["max"]):  # (not given)
            width = _about(pd.Timedelta(_duration("'after'", g1["max"]).value / g1["bins"],
                                        unit="ns"))
            said = f"keep their width (about {width})" if g1["bins"] < GAP_GROWTH * \
                g0["bins"] else f"grow {GAP_GROWTH} times, no more (to about {width} each)"
            notes.append(f"column {shown(name)}: the gap's bins {said} up to its new max: "
                         f"{g1['bins']} bins; {settings(name + '.after', ['bins=N'])} for "
                         "N instead")
    return notes


def reshaped(before: dict, after: dict) -> list:
    """A line for each numeric column whose drafted edges, not of equal widths (a skewed
    column's log-spaced bins, a common value's bin of its own), met a range: kept inside
    it (their inner edges still read off the data), or replaced by equal widths (bins
    given, or a range leaving under half of them), which spread such a value over its
    bin (a cart value of 0 on 70% of the rows came out on none)."""
    drafted = before.get("_drafted_from_data") or []
    notes = []
    for name, was in (before.get("columns") or {}).items():
        now = (after.get("columns") or {}).get(name)
        if not (isinstance(was, dict) and isinstance(now, dict) and f"{name}.edges" in
                drafted and isinstance(was.get("edges"), list) and _kind(now) == "numeric"
                and all(map(_number, was["edges"])) and now.get("edges") != was["edges"]
                and shaped(was["edges"])):
            continue
        e = [float(x) for x in was["edges"]]
        w = sorted(b - a for a, b in zip(e, e[1:]))
        # integers: [v, v + 1) is a value's own; a decimal's is a repeated edge only
        narrow = w[0] if was.get("integer") is True and 0 < w[0] < w[len(w) // 2] / 2.5 \
            else 0
        own = [a for a, b in zip(e, e[1:]) if b - a == 0 or b - a == narrow]
        what = ("not of equal widths (log-spaced for a skewed column, or a common value's "
                "bin of its own" + (f": {', '.join(f'{v:g}' for v in own)}" if own else "")
                + ")")
        if isinstance(now.get("edges"), list):
            notes.append(f"column {shown(name)}: the range keeps the shape of its drafted "
                         f"bins, {what}: {len(now['edges']) - 1} bins, the inner edges still "
                         f"read off the data; {settings(name, ['bins=N'])} for N equal bins "
                         "instead")
        elif isinstance(now.get("bins"), int):
            notes.append(f"column {shown(name)}: its drafted edges were {what}; replaced by "
                         f"{now['bins']} equal bins (bins given, or a range leaving under "
                         "half of them), which spread such values over their bins: to keep "
                         f"them, give the range alone, or set its edges "
                         f"({pasted('--set-file', name + '.edges=FILE')})")
    return notes


def _new_range(name: str, spec: dict, given: dict, drafted: list) -> list:
    """A numeric column's drafted edges (spec["edges"]) over the range the edit gives
    (given: "column.key" -> value); the drafted list after it.  Edges of a shape (log-
    spaced, a common value's bin of its own) keep it inside the new range (kept_shape:
    33 equal bins over 0..5000 gave a cart value 70% zero at eps 1 none at all), their
    inner edges still listed as drafted; equal widths, bins given or a range leaving
    under half the drafted bins: equal bins over the range, of the drafted count unless
    given.  An end not given is the drafted one (listed as drafted, if not set before)."""
    edges = spec["edges"]
    if not (isinstance(edges, list) and len(edges) > 1 and all(map(_number, edges))):
        return drafted  # left as they are: the rules name what is wrong with them
    del spec["edges"]
    integer = spec.get("integer") is True
    top = edges[-1]
    drafted_end = {"min": edges[0], "max": top - 1 if integer and float(top).is_integer()
                   else top}
    end = {k: given.get(f"{name}.{k}", spec.get(k)) for k in ("min", "max")}
    end = {k: drafted_end[k] if v is None else v for k, v in end.items()}
    if f"{name}.bins" not in given and all(_number(v) for v in end.values()) \
            and end["min"] < end["max"] and shaped(edges):
        step = spec["support"].get("step", 1) if isinstance(spec.get("support"), dict) else 1
        lo, hi = (math.ceil(end["min"]), math.floor(end["max"]) + 1) if integer else \
            (end["min"], end["max"])
        before = [spec.get("min"), spec["max"] + (1 if integer else 0)
                  if _number(spec.get("max")) else None]  # public ends, set before
        new = kept_shape(edges, lo, hi, integer, step if _number(step) else 1,
                         [v for v in before if _number(v)])
        if 2 * (len(new) - 1) >= len(edges) - 1:
            spec["edges"] = new
            if isinstance(spec.get("support"), dict):  # its grid from the new min
                spec["support"].pop("start", None)
            elif "support" in spec:  # the values seen: of the drafted range
                spec.pop("support")
                drafted = [d for d in drafted if d != f"{name}.support"]
            return drafted
    spec.setdefault("bins", len(edges) - 1)
    for k in ("min", "max"):  # an end not given: the drafted one, for review
        if f"{name}.{k}" not in given and k not in spec:
            spec[k] = drafted_end[k]
            drafted = drafted + [f"{name}.{k}"]
    if isinstance(spec.get("support"), dict):  # a step (amounts in hundreds): kept,
        spec["support"].pop("start", None)    # on the new range's grid
        return [d for d in drafted if d != f"{name}.edges"]
    spec.pop("support", None)  # the values seen: of the drafted range
    return [d for d in drafted if d not in (f"{name}.edges", f"{name}.support")]


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _whole_values(spec: dict) -> bool:
    """A categorical column listing integers only (no booleans): retyped numeric, it
    keeps "integer": true, or whole numbers would decode as fractions."""
    values = spec.get("values")
    return _kind(spec) == "categorical" and isinstance(values, list) \
        and bool(values) and all(isinstance(v, int) and not isinstance(v, bool) or
                                 isinstance(v, float) and v.is_integer() for v in values)
