"""The curator's preflight (`gpu-dpsyn check`): what the row-local rule (data/repair.py)
would change in a table, counted exactly, with a few of the values.  NOT private: exact
counts and values read off the data, for the curator's eyes only; nothing here reaches a
release."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.core.individuals import individual_codes
from gpu_dpsyn.data.encoding import _one, _source_values
from gpu_dpsyn.data.repair import _columns, _host, _no_id, gap_rule
from gpu_dpsyn.data.schema import Schema
from gpu_dpsyn.errors import DataError
from gpu_dpsyn.data.types import date_repair, gap
from gpu_dpsyn.data.types.datetime import from_epoch
from gpu_dpsyn.data.types.derived import lookup_differs

EXAMPLES = 3  # distinct values shown a finding

# the findings --on-invalid error refuses (bounding drops records whatever it says)
REFUSED = ("not allowed", "missing but", "outside the range", "true/false",
           "with a UTC offset", "individual id missing", "not derived", "before ",
           "more than ")


def findings(df, schema: Schema) -> list[tuple[str, str, int, list]]:
    """(column, what the rule does, how many values, up to EXAMPLES of them as shown):
    what repair() would change."""
    out, read = [], {}
    for col, r in _columns(df, schema):
        read[col.name] = r
        to = "made missing" if col.nullable else \
            f"set to the fallback {col.fallback!r}" if col.fallback is not None else \
            "their rows dropped"
        raw = _host(df[col.name]).reset_index(drop=True)
        shifted = date_repair.aware(raw) & ~r.invalid \
            if col.kind == "datetime" and col.time.timezone is None else None
        for mask, what in ((r.coded, "listed in \"missing_values\": read as missing"),
                           (r.invalid, f"not allowed by the schema: {to}"),
                           (r.missing, f"missing but the column is not nullable: {to}"),
                           (r.clamped, "outside the range: clamped to it"
                            if col.kind == "datetime" else "outside the range (or a fraction "
                            "in an integer column): clamped to the range / rounded"),
                           (r.cast, "true/false read as 1/0, or complex numbers with no "
                                    "imaginary part as real numbers"),
                           (shifted, "with a UTC offset in a column without a time zone: "
                                       "read as UTC (add \"timezone\" to keep local times)")):
            if mask is not None and mask.any():  # (missing values need no example)
                seen = examples(raw[mask]) if mask is not r.missing else []
                out.append((col.name, what, int(mask.sum()), seen))
    out += _gaps(df, schema, read)
    out += _derived(df, schema, read)
    unit = schema.unit_id
    if unit is not None:
        ids = _host(df[unit])
        no_id = _no_id(ids)
        if no_id.any():
            out.append((unit, "individual id missing: their rows dropped",
                        int(no_id.sum()), []))
        bound = schema.max_records_per_individual or 1  # (the fit's default too)
        per = np.bincount(individual_codes(ids[~no_id])) if (~no_id).any() else np.zeros(0)
        past = int(np.maximum(per - bound, 0).sum())
        if past:
            out.append((unit, f"past max_records_per_individual ({bound}"
                        f"{'' if schema.max_records_per_individual else ', the default'}) "
                        "for their individual: dropped at random", past, []))
    return out


def _gaps(df, schema: Schema, read: dict) -> list:
    """The records whose column 'after' another comes before it, or too long after, as
    the rule reads their two values once each is repaired (clamped to its range; in a
    chain, the start as its own gap left it), among the rows it keeps."""
    out, keep = [], np.ones(len(df), dtype=bool)
    now = {}  # each column's values as repaired so far

    def values(c):
        if c.name not in now:
            r = read[c.name]
            now[c.name] = (r.values if r.values is not None else
                           _host(df[c.name])).reset_index(drop=True)
        return now[c.name]
    for c in schema.synth_columns:
        if c.kind == "datetime" and c.name in read:
            keep &= ~(read[c.name].invalid | read[c.name].missing)
    for col in gap.order(schema.columns):  # a chain's start first
        src = schema[col.time.after.column]
        rows = np.flatnonzero(keep)
        frame = pd.DataFrame({n: values(c).iloc[rows].reset_index(drop=True)
                              for n, c in ((col.name, col), (src.name, src))})
        try:
            x, na, past, bad = gap_rule(frame, schema, col)
        except DataError:  # a value only the rule reads (offsets in a naive column)
            continue
        fixed = from_epoch(x, na, col)
        now[col.name] = values(col).astype(object)
        now[col.name].iloc[rows] = fixed.astype(object).to_numpy()
        to = "made missing" if col.nullable else "their rows dropped"
        for mask, what in ((bad, f"before {src.name} (or without it): {to}"),
                           (past, f"more than {gap.iso(col.time.after.max)} after "
                                  f"{src.name}: clamped to it")):
            if mask.any():
                out.append((col.name, what, int(mask.sum()),
                            examples(frame[col.name][mask])))
        if not col.nullable:
            keep[rows[bad]] = False
    return out


def _derived(df, schema: Schema, read: dict) -> list:
    """The rows whose derived column disagrees with its rule (the data's copy is never
    read: synthesize makes it from the source; --on-invalid error refuses the table),
    among the rows whose source the rule leaves as it is."""
    out = []
    for col in (c for c in schema.columns if c.kind == "derived"):
        src = schema[col.derive.source]
        r = read.get(src.name)
        keep = np.ones(len(df), dtype=bool) if r is None else \
            ~(r.invalid | r.missing | r.clamped)
        rows = df.iloc[np.flatnonzero(keep)].reset_index(drop=True)
        try:
            want = col.derive.apply(_source_values(rows, src))
        except DataError:  # a source only the rule reads (offsets mixed): found above
            continue
        copy = _host(rows[col.name]).reset_index(drop=True)
        if getattr(col.derive, "lookup", None) is not None:  # matched as values are
            differ = lookup_differs(copy, col, _source_values(rows, src))
        else:
            got = pd.to_numeric(copy, errors="coerce").to_numpy(dtype=np.float64,
                                                                 na_value=np.nan)
            differ = ~((got == want) | (np.isnan(got) & np.isnan(want)))
        if differ.any():
            out.append((col.name, f"not derived as {col.derive.rule()} from their row's "
                        f"{src.name}: synthesize makes them so", int(differ.sum()),
                        examples(copy[differ])))
    return out


def examples(values: pd.Series) -> list[str]:
    """The first EXAMPLES distinct values, as the data's errors show one (encoding._one:
    dates as text, NumPy numbers as plain ones, capped); a missing value as None.  By
    their shown text: a list or a dict is no key."""
    seen = []
    for v in values:
        text = "None" if v is None or (isinstance(v, float) and v != v) else _one(v)
        if text not in seen:
            seen.append(text)
            if len(seen) == EXAMPLES:
                break
    return seen


def refused(what: str) -> bool:
    """Whether --on-invalid error refuses a table with this finding."""
    return what.startswith(REFUSED)


def coded(what: str) -> bool:
    """Whether the finding is of codes the schema lists as missing (no fault)."""
    return what.startswith("listed in")


def bounded(what: str) -> bool:
    """Whether the finding is of records past max_records_per_individual (dropped under
    either --on-invalid)."""
    return what.startswith("past max_records")
