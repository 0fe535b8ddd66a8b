"""CSV text by Arrow's vectorised casts, byte for byte what pandas' `to_csv` writes.

pandas formats every cell through Python-level loops: 3.2 s for 2·10^6 rows × 16 columns
on 2 cores.  Arrow casts numbers to text in C++ (about 16 ns an integer, 70 ns a float)
and joins the columns row by row in C++ too.  Our own joiner rather than
`pyarrow.csv.write_csv`, whose text is not pandas' (`7` for 7.0, `true`, every string
quoted, nanoseconds on every time): a reader would infer other dtypes, and files written
before would change.  Here the text is pandas':
- floats as NumPy's repr: Arrow writes the same shortest round-trip digits where its layout
  is positional (1e-4 <= |x| < 1e10, compared on 10^7 values); NumPy formats the others,
  and a whole number gets its ".0";
- booleans True / False, nulls empty;
- text quoted only where the csv module quotes it (the separator, a quote, a line break);
- datetimes in pandas' one layout per column: dates alone when every value is a midnight,
  else seconds with the fraction digits (3, 6 or 9) that the finest value needs.
A column of any other kind (time zones, float32, mixed objects) or a frame of one column
goes to pandas whole (`formatters` returns None): slower, never different.  A dialect
(data/dialect.py: another separator, a decimal comma, another encoding) is written as
`to_csv(sep=..., decimal=...)` writes it, then encoded.
"""
from __future__ import annotations

import codecs
import os
import re

import numpy as np
import pandas as pd

from gpu_dpsyn.core import threads
from gpu_dpsyn.data.dialect import DEFAULT, Dialect

ROWS = 1 << 20  # rows formatted and joined at a time: bounds the text held in memory
_NS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}
_YEARS = (-62135596800, 253402300800)  # seconds at 0001-01-01 and 10000-01-01


def _pa():
    import pyarrow as pa
    import pyarrow.compute as pc
    return pa, pc


def _s(x: str):
    pa, _ = _pa()
    return pa.scalar(x, pa.large_string())


def escaped(text, sep: str = ","):
    """Arrow strings as the csv module writes them (QUOTE_MINIMAL: where they hold the
    separator, a quote or a line break), nulls empty."""
    pa, pc = _pa()
    text = pc.fill_null(text.cast(pa.large_string()), "")
    need = pc.match_substring_regex(text, f'["{re.escape(sep)}\r\n]')
    if not pc.any(need).as_py():
        return text
    quoted = pc.binary_join_element_wise(_s('"'), pc.replace_substring(text, '"', '""'), _s('"'),
                                         _s(""))
    return pc.if_else(need, quoted, text)


def float_text(x: np.ndarray, decimal: str = "."):
    """NumPy's repr of each float64, which is pandas' float text (its "." the decimal
    mark given, as to_csv(decimal=...) writes it); NaN null (empty)."""
    pa, pc = _pa()
    text = pc.cast(pa.array(x), pa.large_string())
    whole = pc.invert(pc.match_substring_regex(text, "[.eni]"))  # 7 -> 7.0, -0 -> -0.0
    text = pc.if_else(whole, pc.binary_join_element_wise(text, _s(".0"), _s("")), text)
    a = np.abs(x)
    other = np.flatnonzero((a >= 1e10) | ((a < 1e-4) & (a > 0)))  # Arrow's layout differs
    if len(other):
        fixed = np.asarray(text.to_numpy(zero_copy_only=False), dtype=object)
        fixed[other] = x[other].astype(str)
        text = pa.array(fixed, pa.large_string())
    if decimal != ".":
        text = pc.replace_substring(text, ".", decimal)
    gone = np.isnan(x)
    return pc.if_else(pa.array(gone), pa.scalar(None, pa.large_string()), text) \
        if gone.any() else text


def floats_as_text(s: pd.Series, decimal: str) -> pd.Series:
    """An object or category column's floats as float_text writes them with the decimal
    mark (NaN empty); other columns as they are: for pandas' writer, whose decimal=
    reaches float columns alone."""
    if isinstance(s.dtype, pd.CategoricalDtype):  # its categories, each written once
        cats = floats_as_text(pd.Series(s.cat.categories, dtype=object), decimal)
        codes = s.cat.codes.to_numpy()
        return pd.Series(np.where(codes < 0, None, cats.to_numpy()[np.maximum(codes, 0)]),
                         index=s.index, dtype=object)
    if isinstance(s.dtype, pd.ArrowDtype) and str(s.dtype).startswith("decimal"):
        # pandas writes a decimal as its str ("12.30"), the mark the dialect's
        return s.astype(object).map(lambda x: str(x).replace(".", decimal),
                                    na_action="ignore")
    if s.dtype != object:
        return s
    v = s.to_numpy()
    floats = np.fromiter((isinstance(x, (float, np.floating)) for x in v), bool, len(v))
    if not floats.any():
        return s
    out = v.copy()  # float_text of all of them at once: None where NaN (empty)
    out[floats] = float_text(v[floats].astype(np.float64), decimal).to_pylist()
    return pd.Series(out, index=s.index, dtype=object)


def datetime_layout(ints: np.ndarray, null: np.ndarray, unit: str):
    """(strftime format, unit to print at) of a naive datetime column, pandas' choice from
    all its values; None outside years 1-9999 (left to pandas)."""
    v = ints[~null]
    if len(v) == 0:
        return "%Y-%m-%d", "s"
    per_s = 10**9 // _NS[unit]
    if v.min() // per_s < _YEARS[0] or v.max() // per_s >= _YEARS[1]:
        return None
    if not (v % (86_400 * per_s)).any():
        return "%Y-%m-%d", "s"
    for u in ("s", "ms", "us"):  # the coarsest unit that every value is whole in
        step = _NS[u] // _NS[unit]
        if step >= 1 and not (v % step).any():
            return "%Y-%m-%d %H:%M:%S", u
    return "%Y-%m-%d %H:%M:%S", unit


def _lookup(texts: list, codes_of, sep: str = ","):
    """rows -> the text of each row's code (code -1: empty) from a short table."""
    pa, pc = _pa()
    table = escaped(pa.array(texts + [""], pa.large_string()), sep)

    def fmt(a, b):
        c = codes_of(a, b)
        return pc.take(table, pa.array(np.where(c < 0, len(texts), c)))
    return fmt


def formatter(s: pd.Series, dialect: Dialect = DEFAULT):
    """fmt(a, b): rows a..b of s as escaped Arrow text without nulls; None when this
    module does not write s's kind exactly (the frame then goes to pandas)."""
    pa, pc = _pa()
    sep, decimal = dialect.separator, dialect.decimal
    d = s.dtype
    if isinstance(d, pd.CategoricalDtype):
        cats, kind = d.categories, pd.api.types.infer_dtype(d.categories, skipna=False)
        codes = s.cat.codes.to_numpy()
        if kind == "floating" and decimal != ".":  # pandas' to_csv leaves these its "."
            texts = float_text(np.asarray(cats, dtype=np.float64), decimal).to_pylist()
            return _lookup(texts, lambda a, b: codes[a:b], sep)
        if kind != "string":
            return None
        return _lookup(list(cats), lambda a, b: codes[a:b], sep)
    if d == np.dtype(bool):
        x = s.to_numpy()
        return _lookup(["False", "True"], lambda a, b: x[a:b].view(np.int8))
    if isinstance(d, pd.BooleanDtype):
        x = s.to_numpy(dtype=np.int8, na_value=-1)
        return _lookup(["False", "True"], lambda a, b: x[a:b])
    if pd.api.types.is_integer_dtype(d):  # NumPy's, pandas' masked and Arrow's
        arr = pa.array(s.to_numpy() if isinstance(d, np.dtype) else s.array)
        return lambda a, b: pc.fill_null(pc.cast(arr.slice(a, b - a), pa.large_string()), "")
    if d == np.dtype(np.float64) or isinstance(d, pd.Float64Dtype):
        x = s.to_numpy(np.float64, na_value=np.nan)
        return lambda a, b: pc.fill_null(float_text(x[a:b], decimal), "")
    if isinstance(d, np.dtype) and d.kind == "M":
        unit = np.datetime_data(d)[0]
        ints = s.to_numpy().view(np.int64)
        null = np.isnat(s.to_numpy())
        layout = datetime_layout(ints, null, unit) if unit in _NS else None
        if layout is None:
            return None
        fmt, shown = layout
        arr = pa.array(s.to_numpy(), pa.timestamp(unit), mask=null)

        def dates(a, b):
            t = arr.slice(a, b - a).cast(pa.timestamp(shown))  # exact: shown divides all
            return pc.fill_null(pc.strftime(t, format=fmt, locale="C"), "")
        return dates
    kind = pd.api.types.infer_dtype(s, skipna=True) if d == np.dtype(object) else None
    if kind == "empty":  # nothing but missing values (None, NaN of any float type)
        return lambda a, b: pa.array([""] * (b - a), pa.large_string())
    if isinstance(d, pd.StringDtype) or kind == "string":
        return lambda a, b: escaped(pa.array(s.iloc[a:b].array, pa.large_string(),
                                             from_pandas=True), sep)
    return None


def formatters(df: pd.DataFrame, dialect: Dialect = DEFAULT):
    """One formatter a column, or None when pandas must write df."""
    if df.shape[1] < 2 or not df.columns.is_unique or \
            not all(isinstance(c, str) for c in df.columns):
        return None  # one column: the csv module quotes its empty fields; names: pandas'
    out = []
    for j in range(df.shape[1]):
        f = formatter(df.iloc[:, j], dialect)
        if f is None:
            return None
        out.append(f)
    return out


def write_csv(df: pd.DataFrame, fmts: list, stream, dialect: Dialect = DEFAULT) -> None:
    """df as pandas' to_csv(index=False, sep=..., decimal=...) text in the dialect's
    encoding, into a binary stream, ROWS rows at a time; the blocks of a chunk are
    formatted on the host's threads (Arrow's kernels release the GIL) and written in
    order.  fmts: formatters(df, dialect)."""
    pa, pc = _pa()
    nl, sep = os.linesep, dialect.separator  # pandas' line terminator
    utf8 = dialect.encoding == "utf-8"  # (dialect_from_spec's name for it)
    encoder = codecs.getincrementalencoder(dialect.encoding)()  # a BOM once, at the start

    def write(data) -> None:  # Arrow's text is UTF-8
        stream.write(data if utf8 else encoder.encode(bytes(data).decode("utf-8")))
    head = escaped(pa.array([str(c) for c in df.columns], pa.large_string()), sep)
    write((sep.join(head.to_pylist()) + nl).encode())
    for a in range(0, len(df), ROWS):
        b = min(a + ROWS, len(df))
        text = {}

        def block(lo, hi):
            cols = [f(a + lo, a + hi).cast(pa.large_string()) for f in fmts]
            # a column Arrow holds in pieces (pd.concat, read_csv, Parquet row groups)
            cols = [c.combine_chunks() if isinstance(c, pa.ChunkedArray) else c for c in cols]
            row = pc.binary_join_element_wise(*cols, _s(sep))
            text[lo] = pc.binary_join_element_wise(row, _s(""), _s(nl))  # row + nl + ""
        threads.each(block, b - a, len(fmts))
        for lo in sorted(text):
            _, offsets, data = text[lo].buffers()
            o = np.frombuffer(offsets, np.int64)[text[lo].offset:][:len(text[lo]) + 1]
            write(memoryview(data)[int(o[0]):int(o[-1])])
    if not utf8:  # what the encoder held back (a multi-byte encoder may keep a character)
        stream.write(encoder.encode("", final=True))
