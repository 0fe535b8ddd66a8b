"""How a data value is matched to a categorical column's listed values: by its text form
(value_key), so that 7, "7" and 7.0 are one value, as a CSV file cannot tell them apart;
number text written otherwise ("4.50") and float32 values by their value; in a flag,
False/True and 0/1 for each other.  Each value is read alone, so that no record changes
how another is read (factorized; number_alone, a value as a column's number)."""
from __future__ import annotations

import decimal
import re

import numpy as np
import pandas as pd

from gpu_dpsyn.core.batching import read_blocks
from gpu_dpsyn.core.checks import is_cudf


def plain(v):
    """A NumPy scalar as the Python value it prints as (float32 0.1 is 0.1, not
    0.10000000149011612: the value the user wrote); anything else as it is."""
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(str(v)) if np.isfinite(v) else float(v)
    return str(v) if isinstance(v, np.str_) else v


def value_key(v):
    # JSON cannot tell 1 from "1" apart in CSV-read data; match on the text form
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    if isinstance(v, str):  # its text, whatever a subclass's __str__ does
        return str.__str__(v)
    if isinstance(v, int) and not isinstance(v, bool):  # its digits, likewise
        try:
            return int.__repr__(v)
        except ValueError:  # past str()'s digit limit: by its hex form
            return f"int {int(v):#x}"
    try:
        return str(v)
    except Exception:  # an object without text: matches nothing
        return f"<{type(v).__name__} without text>"


# text that pandas' CSV reader would have read as a boolean; the schema reads it as text
BOOL_TEXT = {True: ("True", "true", "TRUE"), False: ("False", "false", "FALSE")}


# a flag's values, each with the spellings of the other kind it also takes
_FLAG = {"True": ("1", "1.0"), "False": ("0", "0.0"), "1": BOOL_TEXT[True],
         "0": BOOL_TEXT[False]}


def _lookup(col) -> dict:
    """Value key -> code, with the spellings of booleans that CSV files use.  In a flag (a
    column listing only False/True, 0/1 or "0"/"1"), False/True also take 0/1 ("1.0", as
    pandas writes a float column) and 0/1 take False/True, below any value's own key:
    where both are listed, each is read as itself."""
    out = {}
    keys = [value_key(bool(v) if isinstance(v, np.bool_) else v) for v in col.values]
    if set(keys) <= set(_FLAG):
        for i, k in enumerate(keys):
            out.update(dict.fromkeys(_FLAG[k], i))
    for i, v in enumerate(col.values):
        own = BOOL_TEXT[bool(v)] if isinstance(v, (bool, np.bool_)) else (value_key(v),)
        out.update(dict.fromkeys(own, i))
    return out


# a number as CSV files write it ("4.50", ".5", "7.0", "1e3"), not a code with leading
# zeros ("02134" is text)
_PLAIN_NUMBER = re.compile(r"^[+-]?(?!0\d)(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$", re.ASCII)
_EXACT = 2.0 ** 53  # beyond it a float64 stands for several integers: no match by value
_DIGITS = 400  # a whole number's text past this many digits matches nothing (no float is)
_FLOAT32_MAX = float(np.finfo(np.float32).max)


def _code_of(lookup: dict, u, numbers: bool) -> int:
    """The code of data value u: by its text form; where the column lists numbers and u is
    number text written otherwise ("4.50", ".5", "7.0" for 4.5, 0.5, 7), by its value; a
    float32 value by its shortest text (float32 0.1 is 0.10000000149011612 in float64)."""
    if isinstance(u, (complex, np.complexfloating)) and u.imag == 0:
        u = u.real  # as pandas' cast made it (one complex record makes a column complex)
    code = lookup.get(value_key(u), -1)
    b = boolean_of(u) if code < 0 else None
    if b is not None:  # a boolean, or its word as pandas' CSV reader takes it (any case);
        code = lookup.get(BOOL_TEXT[b][0], -1)  # where only numbers are listed, 1 or 0:
        if code < 0 and numbers:  # one int record makes a column of booleans 1/0
            code = lookup.get(value_key(int(b)), -1)
    if code >= 0 or not numbers:
        return code
    if isinstance(u, decimal.Decimal):  # by its text, as a CSV file writes it ("4.50")
        u = str(u)
        code = lookup.get(u, -1)
        if code >= 0:
            return code
    if isinstance(u, str) and _PLAIN_NUMBER.match(u.strip()):
        d = decimal.Decimal(u.strip())  # exactly as written: "1e+22" is 10^22
        if d.adjusted() <= _DIGITS and d == d.to_integral_value():
            return lookup.get(value_key(int(d)), -1)
        return lookup.get(value_key(float(u)), -1) if abs(float(u)) < _EXACT else -1
    if isinstance(u, (float, np.floating)) and abs(float(u)) <= _FLOAT32_MAX and \
            float(np.float32(u)) == float(u):  # (no cast past float32: it warns)
        return lookup.get(value_key(float(str(np.float32(u)))), -1)  # float32 data, 0.1
    return -1


def boolean_of(u):
    """True or False for a boolean or its word (true or false in any letter case, as
    pandas' CSV reader takes one), else None."""
    if isinstance(u, (bool, np.bool_)):
        return bool(u)
    if isinstance(u, str):
        t = str.__str__(u)
        return {"true": True, "false": False}.get(t.lower()) if t.isascii() else None
    return None


def number_alone(v) -> float:
    """v as pd.to_numeric reads it within a column, NaN where it is no number (a lone
    value reads otherwise: a Fraction or a Timestamp as a number)."""
    try:
        return float(pd.to_numeric(pd.Series([v], dtype=object), errors="coerce").iloc[0])
    except (TypeError, ValueError, OverflowError):
        return np.nan


def value_codes(values, col) -> np.ndarray:
    """The code of each of `values` (distinct data values) in the categorical column
    col, -1 where the schema does not list it."""
    lookup = _lookup(col)
    numbers = any(isinstance(v, (int, float, np.number)) and not isinstance(v, bool)
                  for v in col.values)
    return np.array([_code_of(lookup, u, numbers) for u in values], dtype=np.int64)


# object values whose equal ones always share a key (value_key)
_ONE_SPELLING = ("string", "integer", "boolean", "empty", "bytes")  # not floats: NumPy 2
# compares float32 0.5 and 0.500000001 in float32, equal


def factorized(s):
    """s.factorize(use_na_sentinel=True), but a column whose equal values can be spelled
    apart is grouped by each value's type and key (value_key), as the lookup reads it:
    pandas groups 1, 1.0 and True, Decimal 1.5 and 1.50, float32 0.5 and 0.500000001, or
    one instant in two time zones, as one value and keeps the first it saw, so one record
    decided how the others were read.  (codes, one representative value a group, in code
    order)."""
    if is_cudf(s) or s.dtype != object or \
            pd.api.types.infer_dtype(s, skipna=True) in _ONE_SPELLING:
        try:
            return s.factorize(use_na_sentinel=True)
        except TypeError:  # text pandas cannot hash (a str subclass): by its key
            pass
    na = s.isna().to_numpy()
    keys = np.empty(len(s), dtype=object)
    lo = 0
    for block in read_blocks(s):  # each value's type and key: equal keys of two types
        hi = lo + len(block)     # can look up apart (a float's float32 reading)
        if pd.api.types.infer_dtype(block, skipna=True) == "string":  # at once
            text, m = block.to_numpy(dtype=object), na[lo:hi]
            keys[lo:hi][~m] = "str:" + text[~m]
        else:
            keys[lo:hi] = [None if m else f"{type(v).__name__}:{value_key(v)}"
                           for v, m in zip(block, na[lo:hi])]
        lo = hi
    codes, _ = pd.Series(keys, dtype=object).factorize(use_na_sentinel=True)
    groups, first = np.unique(codes, return_index=True)
    return codes, list(s.iloc[first[groups >= 0]])
