"""The row-local rule for values the schema does not allow (fit's default,
on_invalid="repair").

If one invalid record made fit refuse, the refusal itself would tell two neighbouring
tables apart with certainty, whatever the noise.  So by default each value is mapped by
a public rule that reads that value and the schema alone, as OpenDP and Tumult do:

* numeric: text that is no number, complex numbers with an imaginary part and lists are
  invalid; booleans read as 1/0 and other complex numbers as their real part, as pandas'
  casts of a whole column read them (_real); numbers outside [min, max] (infinities
  too) clamp to the nearest bound; an integer column's fractions round to the nearest
  integer; a value off the column's support is invalid;
* categorical: a value that is not listed is invalid;
* datetime: see types.date_repair.repaired (unparseable is invalid, out of range clamps);
* an invalid or missing value becomes missing in a nullable column, else the column's
  "fallback" value where the schema names one, else the row is dropped;
* a record without an individual id is dropped;
* a derived column is recomputed from its (repaired) source: the data's copy is unused.

A changed record stays one changed record and a dropped one is a removed record, so
the repaired tables of two neighbours are neighbours, and the guarantee covers every
table with the schema's columns.  Nothing reports how many values were changed: that
count is private.  `preflight.findings` (the `gpu-dpsyn check` command) does report it,
for the curator's eyes only.
"""
from __future__ import annotations

import decimal
import math
import re
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_dpsyn.core.batching import read_blocks
from gpu_dpsyn.core.checks import is_cudf
from gpu_dpsyn.core.lookup import on_range
from gpu_dpsyn.data.encoding import _source_values, odd_cells
from gpu_dpsyn.data.matching import boolean_of, factorized, number_alone, value_codes
from gpu_dpsyn.data.schema import Column, Schema, load_schema
from gpu_dpsyn.data.types import gap, missing, support
from gpu_dpsyn.data.types.datetime import from_epoch, to_epoch
from gpu_dpsyn.data.types.date_repair import repaired as dates_repaired

@dataclass
class Repaired:
    """One column under the rule: its repaired values and what the rule did."""
    values: pd.Series | None  # None: unchanged
    invalid: np.ndarray  # values the schema does not allow (and no clamp fixes)
    missing: np.ndarray  # missing in a column that is not nullable
    clamped: np.ndarray  # moved to the range's bound, or rounded to an integer
    cast: np.ndarray | None = None  # booleans read as 1/0, complex numbers as real (_real)
    coded: np.ndarray | None = None  # codes of "missing_values", read as missing


def repair(df, schema: Schema):
    """df with the rule applied: values repaired, dropped rows removed (same columns).
    The input is never modified; a table that needs no repair is returned as it is.
    schema: a Schema, a dict or a JSON file's path, as evaluate_tables takes it."""
    schema = load_schema(schema)
    fixed, drop = {}, np.zeros(len(df), dtype=bool)
    for col, r in _columns(df, schema):
        bad = r.invalid | r.missing
        if not bad.any() and r.values is None:
            continue
        values = r.values if r.values is not None else _host(df[col.name])
        values = values.reset_index(drop=True)
        if bad.any():
            if col.nullable:  # (a repaired datetime column is missing there already)
                values = values if col.kind == "datetime" else \
                    values.astype(object).where(~bad, None)
            elif col.fallback is not None:
                values = values.astype(object).where(~bad, col.fallback)
            else:  # blanked too: a value pandas cannot even store (a lone surrogate in
                drop |= bad  # a string column) must not stop the table on its way out
                values = values.astype(object).where(~bad, None)
        fixed[col.name] = values
    unit = schema.unit_id
    if unit is not None:
        drop |= _no_id(_host(df[unit]))
    if not fixed and not drop.any():
        out = df
    else:
        out = (df.to_pandas() if is_cudf(df) else df).reset_index(drop=True).copy()
        for name, values in fixed.items():
            out[name] = values.array
        if drop.any():
            out = out.loc[~drop].reset_index(drop=True)
    out = _gaps_repaired(out, schema)
    rules = [col for col in schema.columns if col.kind == "derived"]
    if rules:  # the data's copy is never read: follow the rule
        base = out.to_pandas() if is_cudf(out) else out  # (a source is never derived)
        made = {col.name: col.derive.apply(_source_values(base, schema[col.derive.source]))
                for col in rules}
        # a shallow copy, the derived columns set anew: a deep copy of the whole table
        # was most of a clean 10^7-row table's repair.  Setting a column puts a new
        # array in (pandas >= 2), and copy-on-write keeps later writes off the input
        out = base.copy(deep=False)
        for name, values in made.items():
            out[name] = values
    return out


def gap_rule(df, schema, col) -> tuple:
    """A column after another (types/gap.py) under the rule, its record's two values
    (each repaired already): (its epochs, missing, the gaps past its max (clamped in the
    epochs), the invalid ones (before the start, or a value without one))."""
    src = schema[col.time.after.column]
    x, na = to_epoch(missing.blank(_host(df[col.name]), col)[0], col)
    start, start_na = to_epoch(missing.blank(_host(df[src.name]), src)[0], src)
    g, bad = gap.gaps(x, na, start, start_na, col)
    past = g > col.time.after.max.value
    x = np.where(past, start + col.time.after.max.value, x)
    lo, hi = col.time.bounds  # clamped before its own min (a start long before it): the
    bad |= past & ((x < lo) | (x > hi))  # record is invalid, as one out of order is
    past &= ~bad
    return x, na | bad, past, bad


def _gaps_repaired(out, schema):
    """out with each column after another under the rule: a gap past its max clamped to
    it; an invalid one missing in a nullable column, else its row dropped."""
    drop = np.zeros(len(out), dtype=bool)
    copied = False
    for col in gap.order(schema.columns):  # a chain's start first: its end reads it
        x, na, past, bad = gap_rule(out, schema, col)  # (column by column: a clean cuDF
        if past.any() or (bad.any() and col.nullable):  # table is returned as it is)
            if not copied:
                out = (out.to_pandas() if is_cudf(out) else out).reset_index(drop=True).copy()
                copied = True
            out[col.name] = from_epoch(x, na, col).array
        if not col.nullable:
            drop |= bad
    if drop.any():
        out = (out.to_pandas() if is_cudf(out) else out).reset_index(drop=True)
        return out.loc[~drop].reset_index(drop=True)
    return out


def _columns(df, schema):
    for col in (c for c in schema.synth_columns if c.time_of is None):  # (a hidden time
        raw = df[col.name]  # of day is computed from its datetime column, never read)
        host = _host(raw)
        s, coded = missing.blank(host.reset_index(drop=True), col)
        r = (_datetime(s, col) if col.kind == "datetime" else
             _categorical(s, col) if col.kind == "categorical" else _numeric(s, col))
        changed = host is not raw or (coded is not None and coded.any())
        if r.values is None and not is_cudf(raw) and changed:
            r.values = s  # cleaned of what encode could not read, codes made missing
        r.coded = coded
        yield col, r


def _host(s) -> pd.Series:
    s = s.to_pandas() if is_cudf(s) else s
    return _no_snan(s) if s.dtype == object else s


def _no_snan(s: pd.Series) -> pd.Series:
    """s, with a signaling-NaN Decimal (on which pandas' isna raises) as missing."""
    try:
        s.isna()
    except decimal.InvalidOperation:
        return s.map(lambda v: None if isinstance(v, decimal.Decimal) and v.is_snan() else v)
    return s


def _missing(na: np.ndarray, col: Column) -> np.ndarray:
    """Missing values the column does not allow."""
    return np.zeros_like(na) if col.nullable else na


def _no_id(ids: pd.Series) -> np.ndarray:
    """Records that name no individual: a missing id, or a list where the id should be."""
    return ids.isna().to_numpy() | odd_cells(ids.reset_index(drop=True))


def _categorical(s: pd.Series, col: Column) -> Repaired:
    na = s.isna().to_numpy()
    odd = odd_cells(s)
    t = s.astype(object).where(~odd, None) if odd.any() else s
    fcodes, uniques = factorized(t)
    lut = np.append(value_codes(uniques, col), 0)  # the last for missing (factorize's -1)
    invalid = ((lut[fcodes] < 0) & ~na) | odd
    return Repaired(None, invalid, _missing(na, col), np.zeros(len(s), dtype=bool))


def _numeric(s: pd.Series, col: Column) -> Repaired:
    n = len(s)
    na = s.isna().to_numpy()
    kind = s.dtype.kind
    if kind in "mM" or isinstance(s.dtype, pd.PeriodDtype):  # no numbers at all
        x, invalid = np.full(n, np.nan), ~na                  # (Periods: as objects)
        cast = None
    elif kind == "c":  # complex numbers: each one's value (_real)
        z = s.to_numpy()
        x = np.where(z.imag == 0, z.real.astype(np.float64), np.nan)
        invalid = np.isnan(x) & ~na
        cast = ~np.isnan(x)
    else:  # booleans read as 1/0 (a bool column too: kind "b"; pandas reads them so)
        if kind == "O":  # lists among the values; booleans and complex numbers by _real,
            odd = odd_cells(s)  # the words of booleans among what reads as no number
            s, cast = _reals(s.where(~odd, None) if odd.any() else s)
            x, words = _words(s, _numbers(s), na | odd)
            cast |= words
        else:
            odd = np.zeros(n, dtype=bool)
            cast = ~na if kind == "b" else None
            x = _numbers(s)
        invalid = (np.isnan(x) & ~na) | odd
    lo, hi = col.value_range
    ok = ~np.isnan(x)
    y = np.clip(np.rint(x) if col.integer else x, lo, hi)
    clamped = ok & (y != x)
    if col.support is not None:
        off = ok & on_range(np, lambda v: support.outside(col.support, np, v),
                            np.where(ok, y, lo).astype(np.int64), lo, hi)
        invalid |= off
        y = np.where(off, np.nan, y)
        clamped &= ~off
    # given back as floats unless the column is plain numbers already: a NaT or an
    # all-missing boolean column is missing to isna but no number to encode
    plain = kind in "iuf" and not isinstance(s.dtype, pd.CategoricalDtype)
    values = pd.Series(y) if (clamped.any() or invalid.any() or not plain) else None
    return Repaired(values, invalid, _missing(na, col), clamped, cast)


def _numbers(s: pd.Series) -> np.ndarray:
    """float64 values, NaN where a value is missing or no number; each value read alone,
    as the whole column's read gives it (so no value changes how another is read)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        s = s.astype(object)
    big = None
    if s.dtype.kind not in "iufb":  # whole numbers past float64 stop pandas' read: +-inf
        big = _past_floats(s)
        if np.isnan(big).all():
            big = None
        else:
            s = s.where(np.isnan(big), None)
    x = _read_numbers(s)
    return x if big is None else np.where(np.isnan(big), x, big)


def _read_numbers(s: pd.Series) -> np.ndarray:
    """pd.to_numeric(s, errors="coerce") as float64; where an object stops pandas (it
    cannot even coerce it), block by block, and that block one value at a time, as the
    whole column's read would give each (core.batching.read_blocks)."""
    def floats(x):
        return pd.Series(x).to_numpy(dtype=np.float64, na_value=np.nan)
    stops = (TypeError, ValueError, OverflowError)
    try:
        return floats(pd.to_numeric(s, errors="coerce"))
    except stops:
        pass
    parts = []
    for block in read_blocks(s):
        try:
            parts.append(floats(pd.to_numeric(block, errors="coerce")))
        except stops:
            parts.append(floats(block.map(number_alone)))
    return np.concatenate(parts)


_WHOLE = re.compile(r"\s*([+-]?)0*(\d+)\s*")
_FLOAT_MAX = int(sys.float_info.max)


def _real(v) -> tuple:
    """(v as read as a number, whether that is a cast): a boolean is 1 or 0, a complex
    number with no imaginary part its real part, another complex number no number
    (None: invalid); anything else as it is.  pandas casts a whole column for one value's
    type (one complex number makes every int complex, one int makes every boolean 1/0),
    so each is read as that cast reads it: one record's type never changes how another
    record reads."""
    if isinstance(v, (bool, np.bool_)):
        return int(v), True
    if isinstance(v, (complex, np.complexfloating)):
        return (float(v.real), True) if v.imag == 0 else (None, False)
    return v, False


def _words(s: pd.Series, x: np.ndarray, skip: np.ndarray) -> tuple:
    """(x with the values that read as no number but are a boolean's word as 1/0, their
    mask): looked at one by one, only where x is NaN (and skip is not).  A word is true or
    false in any letter case (matching.boolean_of), as pandas' CSV reader takes it: a
    column of them is read as booleans, and as text once one cell is neither."""
    at = np.flatnonzero(np.isnan(x) & ~skip)
    read = np.array([boolean_of(v) for v in s.iloc[at]], dtype=object) if len(at) else \
        np.zeros(0, dtype=object)
    hit = np.array([r is not None for r in read], dtype=bool)
    words = np.zeros(len(x), dtype=bool)
    if hit.any():
        x = x.copy()
        x[at[hit]] = read[hit].astype(np.float64)
        words[at[hit]] = True
    return x, words


def _reals(s: pd.Series) -> tuple:
    """(s with _real applied, the mask of values it cast): value by value only in the
    blocks whose kind can hold a boolean or a complex number (core.batching.read_blocks),
    each kept an object block (pandas would infer a dtype for it: Timestamps beside the
    None of a complex number became datetime64, read as nanoseconds)."""
    parts, cast, lo, mapped = [], np.zeros(len(s), dtype=bool), 0, False
    for block in read_blocks(s):
        if pd.api.types.infer_dtype(block, skipna=True) not in _NO_BOOLS:
            pairs = [_real(v) for v in block]
            cast[lo:lo + len(block)] = [c for _, c in pairs]
            block = pd.Series([v for v, _ in pairs], index=block.index, dtype=object)
            mapped = True
        parts.append(block)
        lo += len(block)
    return (pd.concat(parts) if mapped else s), cast


# inferred kinds of a block with no boolean or complex value; with no whole number
_NO_BOOLS = ("integer", "floating", "mixed-integer-float", "string", "empty", "decimal",
             "datetime", "date", "time", "timedelta", "period", "interval", "bytes")
_NO_WHOLE = ("floating", "empty", "decimal", "boolean", "datetime", "date", "time",
             "timedelta", "period", "interval", "bytes", "complex")


def _past_floats(s: pd.Series) -> np.ndarray:
    """_past_float of each value: a block of whole numbers that float64 holds, or of text
    too short for 309 digits, at once; the others value by value (as
    core.batching.kind_mapped, one odd record costing its block)."""
    out = np.full(len(s), np.nan)
    lo = 0
    for block in read_blocks(s):
        kind, hi = pd.api.types.infer_dtype(block, skipna=True), lo + len(block)
        if kind == "string":
            long = (block.str.len() >= 309).to_numpy(dtype=bool, na_value=False)
            out[lo:hi][long] = block[long].map(_past_float).to_numpy(dtype=np.float64)
        elif kind not in _NO_WHOLE and not (kind == "integer" and _float_holds(block)):
            out[lo:hi] = block.map(_past_float).to_numpy(dtype=np.float64)
        lo = hi
    return out


def _float_holds(block: pd.Series) -> bool:
    try:
        np.asarray(block.dropna().to_numpy(), dtype=np.float64)
    except OverflowError:  # an int past float64
        return False
    return True


def _past_float(v) -> float:
    """+-inf for a whole number too large for float64 (a Python int, or its digits as
    text, however many), else NaN."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_,
                                                                np.timedelta64)):
        return (math.inf if v > 0 else -math.inf) if abs(int(v)) > _FLOAT_MAX else np.nan
    m = _WHOLE.fullmatch(v) if isinstance(v, str) else None
    if m is None or len(m.group(2)) < 309 or (len(m.group(2)) == 309 and
                                              int(m.group(2)) <= _FLOAT_MAX):
        return np.nan
    return -math.inf if m.group(1) == "-" else math.inf


def _datetime(s: pd.Series, col: Column) -> Repaired:
    odd = odd_cells(s)
    t = s.where(~odd, None) if odd.any() else s
    values, invalid, clamped = dates_repaired(t, col)
    if odd.any():  # invalid, and missing in the result as every invalid value is
        values, invalid = (t if values is None else values), invalid | odd
    return Repaired(values, invalid, _missing(s.isna().to_numpy(), col), clamped)
