"""Output dtypes: from the public schema only, never from the private table.

pandas infers a table's dtypes from its values, so copying them to the output would
release a data-dependent fact (one added record turns an int column into text, one
NaN an int column into float).  Each column type has one default; a schema may name
another (`"dtype"`), checked at load to hold every value the schema allows.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import math
import re
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd

from gpu_dpsyn.errors import SchemaError

MAX_ROWS = 2 ** 31 - 1  # the most rows sample() writes; id columns number them 1..n
FLOAT_EXACT = 2 ** 53  # float64 holds every integer up to here; binning and decoding use it
# pandas' nullable numbers: they hold missing values (pd.NA) without turning into float
_MASKED = (pd.Int8Dtype, pd.Int16Dtype, pd.Int32Dtype, pd.Int64Dtype, pd.UInt8Dtype,
           pd.UInt16Dtype, pd.UInt32Dtype, pd.UInt64Dtype, pd.Float32Dtype, pd.Float64Dtype,
           pd.BooleanDtype)
_TEXTUAL = ("object", "string", "category")  # hold any categorical value
# Arrow's decimals by Arrow's own name of them (pandas parses no parameters in a name):
# "decimal128(10, 2)", also as pandas writes it, "decimal128(10, 2)[pyarrow]"
_DECIMAL = re.compile(r"\s*(decimal128|decimal256)\(\s*(-?\d{1,6})\s*,\s*(-?\d{1,6})\s*\)"
                      r"(\[pyarrow\])?\s*")
_MOST_DIGITS = {"decimal128": 38, "decimal256": 76}
# Arrow's dictionary text by Arrow's own name (infer-schema drafts it where the file's
# index is not pandas' own width): categories in pandas, written with that index.  Not
# large_string values: Parquet gives them back as string
_DICTIONARY = re.compile(r"\s*dictionary<values=(string), "
                         r"indices=(u?int(?:8|16|32|64)), ordered=([01])>\s*")


def _decimal_name(text) -> tuple | None:
    """(width, precision, scale) of a decimal's name, else None."""
    m = _DECIMAL.fullmatch(text) if isinstance(text, str) else None
    return None if m is None else (m.group(1), int(m.group(2)), int(m.group(3)))


def dictionary_type(text):
    """The Arrow dictionary type a "dtype" names by Arrow's name, else None."""
    m = _DICTIONARY.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        return None
    import pyarrow as pa
    return pa.dictionary(getattr(pa, m.group(2))(), getattr(pa, m.group(1))(),
                         m.group(3) == "1")


def dictionary_types(schema) -> dict:
    """{column: Arrow dictionary type} for the columns whose dtype names one: what a
    Parquet release writes them as (parquet_types.written_schema)."""
    return {c.name: t for c in schema.columns
            if (t := dictionary_type(c.dtype)) is not None}


def parse_dtype(text):
    """The dtype a schema's "dtype" names: pandas' names, Arrow's decimals as
    pd.ArrowDtype (their parameters checked by check_column), Arrow's dictionary text as
    pandas' categories (its index is the writer's, dictionary_types)."""
    if (t := dictionary_type(text)) is not None:
        return pd.CategoricalDtype(ordered=t.ordered)
    dec = _decimal_name(text)
    if dec is None:
        return pd.api.types.pandas_dtype(text)
    import pyarrow as pa
    width, precision, scale = dec
    return pd.ArrowDtype(getattr(pa, width)(precision, scale))


def _arrow_text(d) -> bool:
    """d is Arrow's text by name ("large_string[pyarrow]"): strings only, no numbers."""
    import pyarrow as pa
    return isinstance(d, pd.ArrowDtype) and (pa.types.is_string(d.pyarrow_dtype) or
                                             pa.types.is_large_string(d.pyarrow_dtype))


def _decimal(d):
    """d's Arrow decimal type, else None."""
    t = getattr(d, "pyarrow_dtype", None) if isinstance(d, pd.ArrowDtype) else None
    import pyarrow as pa
    return t if t is not None and pa.types.is_decimal(t) else None


def value_kind(values) -> str:
    """'bool', 'int' (integer-valued numbers), 'float' (other numbers) or 'text'."""
    if all(isinstance(v, (bool, np.bool_)) for v in values):
        return "bool"
    if all(isinstance(v, (int, float, np.integer, np.floating))
           and not isinstance(v, (bool, np.bool_)) for v in values):
        exact = all(isinstance(v, (int, np.integer)) or float(v).is_integer() for v in values)
        return "int" if exact else "float"
    return "text"


def _family(d) -> str | None:
    """Which of the supported kinds of dtype d is (None: unsupported)."""
    if _decimal(d) is not None:
        return "decimal"
    if _arrow_text(d):
        return "string"
    if isinstance(d, pd.CategoricalDtype):
        return "category"
    if isinstance(d, pd.DatetimeTZDtype) or (isinstance(d, np.dtype) and d.kind == "M"):
        return "datetime"
    if isinstance(d, pd.ArrowDtype) and str(d).startswith("date"):  # Arrow's dates alone
        return "datetime"
    if isinstance(d, pd.StringDtype) or (isinstance(d, np.dtype) and d.kind == "U"):
        return "string"
    np_d = d.numpy_dtype if isinstance(d, _MASKED) else d
    if not isinstance(np_d, np.dtype):
        return None
    return {"O": "object", "b": "bool", "i": "int", "u": "int", "f": "float"}.get(np_d.kind)


def _holds_missing(d) -> bool:
    return not (isinstance(d, np.dtype) and d.kind in "biu")


def _allowed(col) -> tuple:
    if col.kind == "id":
        return ("int",)
    if col.kind == "datetime":
        return ("datetime",)
    if col.kind == "derived" and col.values is None:  # integers by construction
        return ("int", "float")  # (a lookup lists its values: as a categorical column)
    if col.kind == "numeric":
        return ("int", "float", "decimal") if col.integer else ("float", "decimal")
    kind = value_kind(col.values)  # (a Parquet decimal's few values: listed, as decimals)
    return {"bool": ("bool",), "int": ("int", "float", "decimal"),
            "float": ("float", "decimal")}.get(kind, ()) + _TEXTUAL


def _check_storable(name: str, text: str, d) -> None:
    """SchemaError for a dtype that decode or a writer would fail on after the budget is
    spent: datetimes finer or coarser than pandas' four units (its cast refuses them),
    a foreign byte order or floats wider than float64 (Arrow and Parquet store neither;
    the values are float64 anyway)."""
    unit = getattr(d, "unit", None) if isinstance(d, pd.DatetimeTZDtype) else \
        np.datetime_data(d)[0] if isinstance(d, np.dtype) and d.kind == "M" else None
    if unit is not None and unit not in ("s", "ms", "us", "ns"):
        raise SchemaError(f"column {shown(name)}: dtype {shown(text)} is in units pandas does "
                          "not write; use seconds, ms, us or ns (e.g. 'datetime64[s]')")
    np_d = d.numpy_dtype if isinstance(d, _MASKED) else d
    if isinstance(np_d, np.dtype) and not np_d.isnative:
        raise SchemaError(f"column {shown(name)}: dtype {shown(text)} has the other byte "
                          "order, which Arrow and Parquet cannot store; use its native name "
                          "(e.g. 'float64', 'int32')")
    if isinstance(np_d, np.dtype) and np_d.kind in "fc" and np_d.itemsize > 8:
        raise SchemaError(f"column {shown(name)}: dtype {shown(text)} is wider than float64, "
                          "which Arrow and Parquet cannot store and the values never need; "
                          "use float64")


def _range(col) -> tuple:
    """(lowest, highest, integer-valued) of the values the column takes."""
    if col.kind == "id":
        return 1, MAX_ROWS, True
    if col.kind == "derived" and col.values is None:  # (a lookup: its listed values)
        return (*col.derive.value_range, True)
    if col.kind == "numeric":
        return (*col.value_range, col.integer)
    return min(col.values), max(col.values), value_kind(col.values) == "int"


def _holds(d, lo, hi, integer: bool) -> bool:
    np_d = d.numpy_dtype if isinstance(d, _MASKED) else d
    if np_d.kind in "iu":
        info = np.iinfo(np_d)
        return info.min <= lo and hi <= info.max
    big = max(abs(lo), abs(hi))
    fi = np.finfo(np_d)
    return big <= 2 ** (fi.nmant + 1) if integer else big <= float(fi.max)


def check_column(col) -> None:
    """SchemaError unless the column's values can be binned and written exactly: integer
    ranges within float64's exact integers, and a requested dtype that fits."""
    name = col.name
    if col.kind == "numeric":
        if col.integer and max(map(abs, col.value_range)) > FLOAT_EXACT:
            lo, hi = (float(v) for v in col.value_range)  # (not 300 digits)
            raise SchemaError(f"column {shown(name)}: integer range [{lo:g}, {hi:g}] goes "
                              f"beyond +-2**53; values are binned in float64, exact only up "
                              "to there: shift or rescale the column, or make it an id column")
        if not all(math.isfinite(b - a) for a, b in zip(col.edges, col.edges[1:])):
            raise SchemaError(f"column {shown(name)}: range too wide for float64 bins")
    if col.dtype is None:
        return
    _check_decimal_name(name, col.dtype)
    try:
        d = parse_dtype(col.dtype) if isinstance(col.dtype, str) else None
    except (TypeError, ValueError, ImportError, NotImplementedError):
        d = None
    if d is None:  # (a dictionary type misspelt: its own form, in full)
        raise SchemaError(f"column {shown(name)}: 'dtype' {shown(col.dtype)} is not a pandas dtype "
                          "name (e.g. 'int32', 'Int16', 'float32', 'string', 'category', "
                          "'decimal128(10, 2)'" + (", 'dictionary<values=string, indices=int32, "
                                                   "ordered=0>'" * str(col.dtype).strip()
                                                   .lower().startswith("dictionary")) + ")")
    _check_storable(name, col.dtype, d)
    allowed = _allowed(col)
    if _family(d) not in allowed:
        raise SchemaError(f"column {shown(name)}: dtype {shown(col.dtype)} does not fit a {col.kind} "
                          f"column like this one; use a dtype of kind {', '.join(allowed)}")
    if col.kind == "datetime" and _zone(d) != col.time.timezone:
        raise SchemaError(f"column {shown(name)}: dtype {shown(col.dtype)} has time zone {_zone(d)} but "
                          f"the column's is {col.time.timezone}; use e.g. "
                          f"{str(_default_datetime(col))!r}")
    if col.nullable and not _holds_missing(d):
        raise SchemaError(f"column {shown(name)} is nullable but dtype {shown(col.dtype)} cannot hold "
                          "missing values; use a nullable one (e.g. 'Int64', 'boolean')")
    if _family(d) in ("int", "float") and not _holds(d, *_range(col)):
        lo, hi, _ = _range(col)
        raise SchemaError(f"column {shown(name)}: dtype {shown(col.dtype)} cannot hold the schema's "
                          f"range [{lo}, {hi}] exactly; use a wider dtype")
    if _arrow_text(d) and not all(isinstance(v, str) for v in col.values):
        raise SchemaError(f"column {shown(name)}: dtype {shown(col.dtype)} holds text only and "
                          "the column lists numbers; use 'string'")
    if _decimal(d) is not None:
        _check_decimal_range(col, _decimal(d))
        _check_decimal_values(col, _decimal(d))
    if (t := dictionary_type(col.dtype)) is not None:
        _check_dictionary(col, t)


def _check_decimal_name(name: str, text) -> None:
    """SchemaError for a decimal's precision or scale that Arrow refuses, or a scale below
    0 (the values would be rounded to tens) or above the precision."""
    dec = _decimal_name(text)
    if dec is None:
        return
    width, precision, scale = dec
    if not 1 <= precision <= _MOST_DIGITS[width]:
        raise SchemaError(f"column {shown(name)}: dtype {shown(text)} has precision "
                          f"{precision}; {width} holds 1 to {_MOST_DIGITS[width]} digits"
                          + (" (decimal256 up to 76)" if width == "decimal128" else ""))
    if not 0 <= scale <= precision:
        raise SchemaError(f"column {shown(name)}: dtype {shown(text)} has scale {scale}; use a "
                          f"scale from 0 to its precision, {precision}")


def _decimal_digits(big: Fraction, scale: int) -> int:
    """The digits a decimal of this scale needs to hold +-big rounded to the scale (half
    even, as Arrow casts: 999.5 at scale 0 is 1000)."""
    n = big * 10 ** scale
    return max(1, len(str(math.floor(n + Fraction(1, 2)))))


def _check_decimal_range(col, t) -> None:
    """SchemaError unless every value of the schema's range, rounded to t's scale, fits
    t's precision: decode casts its floats so after the budget is spent, where Arrow
    would refuse one that does not fit."""
    lo, hi, _ = _range(col)
    big = max(abs(Fraction(lo)), abs(Fraction(hi)))
    need = _decimal_digits(big, t.scale)
    if need > t.precision:
        hint = f"decimal128({need}, {t.scale})" if need <= 38 else \
            f"decimal256({need}, {t.scale})" if need <= 76 else "float64"
        raise SchemaError(f"column {shown(col.name)}: dtype {shown(col.dtype)} cannot hold the "
                          f"schema's range [{lo}, {hi}] at scale {t.scale}, which needs "
                          f"{need} digits; use e.g. {hint!r}")


def as_numbers(x, col, want):
    """Decoded numbers (float64, NaN for nulls) for pd.Series(x, dtype=want): for a decimal
    dtype, kept within the schema's range, which check_column found it holds, so Arrow's
    cast rounds them half-even at the scale and never refuses one (after the spend)."""
    if _decimal(want) is None:
        return x
    lo, hi, _ = _range(col)
    return as_decimals(np.clip(x, float(lo), float(hi)), _decimal(want))


def as_decimals(x, t):
    """x (float64, NaN for nulls) as Arrow decimals of type t (pandas' array of them):
    each the decimal its float stands for, its shortest text, where every one fits t's
    scale (98.33 at scale 18 was the float's binary 98.329999999999998295); else the
    floats cast, rounded half-even at the scale (a bin's 3-place draws at scale 2)."""
    import pyarrow as pa
    floats = pa.array(np.asarray(x, dtype=np.float64), from_pandas=True)
    try:
        return pd.arrays.ArrowExtensionArray(floats.cast(pa.string()).cast(t))
    except pa.ArrowInvalid:  # (a place past the scale: "would cause data loss")
        return pd.arrays.ArrowExtensionArray(floats.cast(t))


def listed(values: list, want) -> pd.Series:
    """A column's listed values (None: a null) as a Series of dtype want; numbers under a
    decimal dtype each as its shortest text (as_decimals: 0.1, not 0.100000000000000006)."""
    if _decimal(want) is None:
        return pd.Series(values, dtype=object).astype(want)
    x = [np.nan if v is None else float(v) for v in values]
    return pd.Series(as_decimals(x, _decimal(want)), dtype=want)


def _check_dictionary(col, t) -> None:
    """SchemaError unless Arrow's dictionary type t holds the column's values (text) and
    their codes (0 to one less than their number) in its index: else its writer would
    fail after the spend."""
    if not all(isinstance(v, str) for v in col.values):
        raise SchemaError(f"column {shown(col.name)}: dtype {shown(col.dtype)} holds text "
                          "only and the column lists other values; use 'category'")
    most = np.iinfo(t.index_type.to_pandas_dtype()).max
    if len(col.values) - 1 > most:
        raise SchemaError(f"column {shown(col.name)}: dtype {shown(col.dtype)} has "
                          f"{t.index_type} indices, which cannot number its "
                          f"{len(col.values):,} values (at most {most + 1:,}); use a wider "
                          "index or 'category'")


def _check_decimal_values(col, t) -> None:
    """SchemaError for a listed value with more places than t's scale: written, it would
    round onto another (0.125 and 0.12 both 0.12 at scale 2)."""
    for v in col.values if col.kind != "numeric" else ():
        if -Decimal(repr(float(v))).as_tuple().exponent > t.scale:
            raise SchemaError(f"column {shown(col.name)}: dtype {shown(col.dtype)} has "
                              f"{t.scale} decimal places, and the column lists {v!r}, which "
                              "needs more; use a wider scale")


def output_dtype(col):
    """The dtype a decoded column gets: the schema's `dtype`, else one per column type."""
    if col.dtype is not None:
        d = parse_dtype(col.dtype)
        # categories from the schema, so they do not depend on which values were drawn
        return pd.CategoricalDtype(col.values, ordered=bool(d.ordered)) \
            if isinstance(d, pd.CategoricalDtype) else d
    if col.kind == "id":
        return np.dtype(np.int64)
    if col.kind == "datetime":  # in its layout: text, as it was read
        return text_dtype() if col.time.format else _default_datetime(col)
    kind = "int" if (col.kind == "numeric" and col.integer) or \
        (col.kind == "derived" and col.values is None) else \
        "float" if col.kind == "numeric" else value_kind(col.values)
    if kind == "int" and _holds(np.dtype(np.int64), *_range(col)):
        return pd.Int64Dtype() if col.nullable else np.dtype(np.int64)
    if kind == "bool":
        return pd.BooleanDtype() if col.nullable else np.dtype(bool)
    if kind == "float":
        return np.dtype(np.float64)
    return text_dtype() if all(isinstance(v, str) for v in col.values) else np.dtype(object)


def text_dtype():
    """pandas' own dtype for a column of strings, the one its read_csv gives text: `str`
    (Arrow-backed) from pandas 3, object before.  Not object everywhere: 10^7 Python
    objects cost memory and make every writer walk them one by one."""
    return pd.Series(["a"]).dtype


def _zone(d) -> str | None:
    tz = getattr(d, "tz", None)
    return None if tz is None else str(tz)


def _default_datetime(col):
    tz = col.time.timezone
    return pd.DatetimeTZDtype("ns", tz) if tz else np.dtype("datetime64[ns]")
