"""DataFrame <-> columnar integer codes (one contiguous array per column).

Codes use the smallest unsigned dtype that holds the column's domain.
Decoding (generate/decode.py) draws numeric values inside their bin (or the midpoint),
using the counter RNG so the same seed gives the same table.
"""
from __future__ import annotations

import datetime as _dt
import decimal
import os
import unicodedata

import numpy as np
import pandas as pd

from gpu_dpsyn.data.dtypes import listed, output_dtype
from gpu_dpsyn.errors import DataError
from gpu_dpsyn.data.matching import factorized, number_alone, value_codes
from gpu_dpsyn.data.schema import Column, Schema
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.data.types import datetime, derived, gap, missing, support, time_of_day
from gpu_dpsyn.core.batching import kind_mapped
from gpu_dpsyn.core.checks import is_cudf
from gpu_dpsyn.core.lookup import on_range
from gpu_dpsyn.core.types import code_dtype


def check_frame(df, what: str = "the table") -> None:
    """DataError unless df is a pandas (or cuDF) DataFrame."""
    if not (isinstance(df, pd.DataFrame) or is_cudf(df)):
        hint = "; read the file with gpu_dpsyn.data.ingest.read_table(path) first" if \
            isinstance(df, (str, os.PathLike)) else ""
        raise DataError(f"{what} must be a pandas (or cuDF) DataFrame, got "
                        f"{type(df).__name__}{hint}")


# cells that are not one value: a Parquet list column, a column of dicts or arrays
_CONTAINERS = (list, tuple, dict, set, frozenset, np.ndarray, bytearray, memoryview)


def odd_cells(s) -> np.ndarray:
    """Mask of the cells that are no single value (lists, tuples, dicts, sets, arrays: a
    Parquet list column, say) in an object column.  pandas' C type inference looks
    first, so a column of text or numbers costs one fast pass, and a column it calls
    mixed is looked at value by value only in its mixed blocks (core.batching): one odd
    record costs a block's time, not the column's."""
    if is_cudf(s) or s.dtype != object or \
            pd.api.types.infer_dtype(s, skipna=True) not in _MIXED:
        return np.zeros(len(s), dtype=bool)
    # a block of one kind of scalar holds no odd value
    return kind_mapped(s, _no_single_value, lambda kind: kind in _MIXED, False)


_MIXED = ("mixed", "mixed-integer")
# values whose text form needs no check (an int past str()'s digit limit is a number)
_SCALARS = (str, bytes, int, float, complex, np.generic, decimal.Decimal, _dt.date, _dt.time,
            _dt.timedelta)


# what pandas and the readers ask a value for (an unknown name: a __getattr__ that raises
# for any); a value that raises on one of them, save AttributeError, is no value
_ASKED = ("_gpu_dpsyn_no_such_attribute", "isoformat", "tzinfo", "utcoffset", "__len__",
          "__iter__", "__array__", "__array_interface__", "__array_struct__", "dtype",
          "__float__", "__int__", "__index__", "item")


def _no_single_value(v) -> bool:
    """A container, or an object that pandas cannot hash (to group it), that has no text
    form (to look it up) or whose attribute lookup raises anything but AttributeError
    (the readers ask a value for isoformat, __len__, tzinfo...): no value a schema
    lists."""
    if isinstance(v, _CONTAINERS):
        return True
    if isinstance(v, str):  # text is read by its text, hashed or not
        return False
    try:
        hash(v)
        if not isinstance(v, _SCALARS):
            str(v)
            for name in _ASKED:
                getattr(v, name, None)
    except Exception:  # whatever the object's own methods raise
        return True
    return False


def check_cells(s, name: str) -> None:
    """DataError when an object column holds cells that are no single value (odd_cells)."""
    odd = odd_cells(s)
    if odd.any():
        i = int(np.argmax(odd))
        v = s.iloc[i]
        if isinstance(v, decimal.Decimal):  # the one Decimal that cannot be hashed
            raise _snan(name, f" in row {i}")
        why = "not a list column" if isinstance(v, _CONTAINERS) else \
            "this object cannot be hashed, shown as text or asked for its attributes"
        raise DataError(f"column {shown(name)} holds a {type(v).__name__} ({_short(v)}) in row "
                        f"{i}: each cell must be one value (text, a number, a boolean "
                        f"or a date); {why}")
    try:
        s.isna()
    except decimal.InvalidOperation:
        raise _snan(name, "") from None


def _snan(name: str, where: str) -> DataError:
    return DataError(f"column {shown(name)} holds a signaling NaN (Decimal('sNaN')){where}, "
                     "which no comparison can read: make it missing or a number")


def _short(v) -> str:
    try:
        text = repr(v.tolist() if isinstance(v, np.ndarray) else v)
    except Exception:  # an object whose repr raises
        text = f"<{type(v).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def check_columns(df, schema: Schema, allow_empty: bool = False) -> None:
    """The table's columns are the schema's; allow_empty: one partition of a larger table."""
    if not (isinstance(df, pd.DataFrame) or is_cudf(df)):
        raise DataError(f"expected a pandas (or cuDF) DataFrame, got {type(df).__name__}")
    names = [str(c) for c in df.columns]
    missing = [c for c in schema.names if c not in names]
    extra = [c for c in names if c not in schema.names and c not in schema.ignored]
    if missing and len(missing) == len(schema.names):  # no header row, or a blank first
        # line: the "names" are a record's values, not shown
        raise DataError(f"data columns do not match the schema: none of its columns "
                        f"[{_describe(missing, 20)}] is in the data's header; if the file has "
                        "no header row (or a blank first line), add one (the header's "
                        f"{len(names)} fields are not shown: they may be a record)")
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing from the data: [{_describe(missing, 20)}]")
        if extra:  # never read, but refused: a misspelt column would vanish unseen
            parts.append(f"not in the schema: [{_describe(extra, 20)}] (add them to the "
                         "schema, list them in its \"ignored_columns\" (gpu-dpsyn schema "
                         "FILE --ignore NAME), or drop them from the table)")
        look_alike = [(a, b) for a in missing for b in extra
                      if unicodedata.normalize("NFC", a) == unicodedata.normalize("NFC", b)]
        if look_alike:  # the same letters, composed another way: shown as code points
            a, b = look_alike[0]
            parts.append(f"{a!r} and {b!r} differ only in how their letters are composed "
                         f"(Unicode normalization: {ascii(a)} in the schema, {ascii(b)} in "
                         "the data); write both one way")
        raise DataError("data columns do not match the schema; " + "; ".join(parts))
    if len(df) == 0 and not allow_empty:
        raise DataError("the table is empty: nothing to synthesize")


def _host(a) -> np.ndarray:
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def _on(xp, a):
    """a (NumPy or CuPy) as an xp array: CuPy refuses implicit copies to the host."""
    return _host(a) if xp is np else xp.asarray(a)


def _describe(vals, limit=5) -> str:
    vals = list(vals)
    more = f" (and {len(vals) - limit} more)" if len(vals) > limit else ""
    return ", ".join(_one(v) for v in vals[:limit]) + more


def _one(v) -> str:
    """One data value as the user wrote it: infinity as infinity (not inf or null), NumPy
    numbers as plain numbers, dates and durations as such; capped (text.shown)."""
    if isinstance(v, (float, np.floating)) and np.isinf(v):
        return "infinity" if v > 0 else "-infinity"
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, (pd.Timestamp, pd.Timedelta, np.datetime64, np.timedelta64)):
        return shown(str(pd.Timestamp(v) if isinstance(v, np.datetime64) else
                         pd.Timedelta(v) if isinstance(v, np.timedelta64) else v))
    return shown(v)


def check_number_kind(s, name: str) -> None:
    """DataError when a numeric column holds booleans (True/False would be read as 1/0)
    or complex numbers (their imaginary part would be dropped): neither is a number the
    schema's range and bins describe."""
    dtype = getattr(s, "dtype", None)
    if dtype is None:  # a frame-like without dtypes (a test double): the values decide
        return
    kind = getattr(dtype, "kind", None)
    if pd.api.types.is_bool_dtype(dtype):
        found = "true/false (boolean) values"
    elif kind == "c":
        found = "complex numbers"
    elif kind in ("m", "M"):
        what = "durations" if kind == "m" else "dates/times"
        first = s.dropna()
        example = f", e.g. {_one(first.iloc[0])}" if len(first) else ""
        hint = "" if kind == "m" else " (a date column is \"type\": \"datetime\")"
        raise DataError(f"column {shown(name)} is numeric in the schema but holds {what}"
                        f"{example}{hint}; convert them to numbers first")
    elif kind == "O" and not is_cudf(s):
        inferred = pd.api.types.infer_dtype(s, skipna=True)
        if inferred == "boolean":
            found = "true/false (boolean) values"
        elif inferred == "complex":
            found = "complex numbers"
        elif inferred.startswith("mixed"):
            odd = next((v for v in s if isinstance(v, (bool, np.bool_, complex,
                                                         np.complexfloating))), None)
            if odd is None:
                return
            found = ("true/false (boolean) values" if isinstance(odd, (bool, np.bool_))
                     else "complex numbers")
        else:
            return
    else:
        return
    hint = (" (a yes/no column is categorical: \"values\": [false, true])"
            if found.startswith("true") else "")
    raise DataError(f"column {shown(name)} is numeric in the schema but holds {found}"
                    f"{hint}")


def bin_codes(xp, edges: np.ndarray, x):
    """Each value's bin on the host array `edges`: [edges[k], edges[k + 1]), the top edge
    closed; an edge given twice (edges[k] == edges[k + 1]) is the bin holding just it."""
    codes = xp.clip(xp.searchsorted(xp.asarray(edges), x, side="right") - 1, 0, len(edges) - 2)
    for k in np.flatnonzero(edges[1:] == edges[:-1]).tolist():  # x == edges[k] fell into
        codes = xp.where(x == edges[k], k, codes)  # bin k + 1, [edges[k], ...)
    return codes


def _encode_column(s, col: Column, xp=np, epochs=None):
    """Codes of one column as an xp array.  The binning runs on xp (on the GPU for CuPy);
    a cuDF column stays on the device, a pandas one is copied there once.  epochs(c):
    a datetime column's (epochs, missing), each parsed once by the caller (a column, a
    gap's start, a rule's source); None: parsed here (a column after none)."""
    gpu_frame = is_cudf(s)
    na = _on(xp, s.isna().to_cupy() if gpu_frame else s.isna().to_numpy())
    n_na = int(na.sum())
    if n_na and not col.nullable:
        raise DataError(f"column {shown(col.name)} has {n_na} missing values (NaN) but the "
                        "schema does not allow them; set \"nullable\": true or clean the data")
    if col.kind == "categorical":
        fcodes, uniques = factorized(s)  # pandas and cuDF alike
        if gpu_frame:
            uniques = uniques.to_pandas()
        lut = value_codes(uniques, col)
        bad = [u for u, c in zip(uniques, lut) if c < 0]
        if bad:
            raise DataError(f"column {shown(col.name)} has values outside the schema: {_describe(bad)}")
        codes = (xp.asarray(lut)[_on(xp, fcodes)] if len(lut) else
                 xp.zeros(len(s), dtype=xp.int64))  # NA (-1) is overwritten below
    elif col.kind == "datetime":  # parsed on the host: text, zones, calendars
        x, na_h = datetime.to_epoch(s, col) if epochs is None else epochs(col)
        if col.time.after is not None:  # binned by its gap after its start
            x = gap.encode(x, na_h, *epochs(epochs.schema[col.time.after.column]), col)
        codes = bin_codes(xp, np.asarray(col.edges, dtype=np.int64), xp.asarray(x))
    else:
        check_number_kind(s, col.name)
        try:
            if gpu_frame:
                x = s.astype("float64").to_cupy(na_value=np.nan)
            else:
                x = pd.to_numeric(s, errors="raise").to_numpy(dtype=np.float64, na_value=np.nan)
        except OverflowError:  # pandas' read stops at a whole number past float64
            raise DataError(f"column {shown(col.name)} has values outside the schema range "
                            f"{list(col.value_range)}: a whole number past float64") from None
        except (ValueError, TypeError):
            x = None
        x = None if x is None else _on(xp, x)
        if x is None or bool((xp.isnan(x) & ~na).any()):  # "" reads as NaN, not missing
            h = s.to_pandas() if gpu_frame else s
            try:
                read = pd.to_numeric(h, errors="coerce")
            except (TypeError, ValueError, OverflowError):  # 10**400 beside text: each
                read = h.map(number_alone)                   # value alone, for the message
            bad = h[read.isna() & ~h.isna()].unique()
            raise DataError(f"column {shown(col.name)} is numeric in the schema but has non-numeric "
                            f"values: {_describe(bad)}")
        if col.integer:
            frac = (x != xp.floor(x)) & ~na
            if bool(frac.any()):
                raise DataError(f"column {shown(col.name)} is integer in the schema but has "
                                f"non-integer values: {_describe(np.unique(_host(x[frac])))}")
        edges = np.asarray(col.edges, dtype=np.float64)
        lo, hi = edges[0], float(col.value_range[1])
        out_of_range = ((x < lo) | (x > hi)) & ~na
        n_bad = int(out_of_range.sum())
        if n_bad:
            raise DataError(f"column {shown(col.name)} has {n_bad} values outside the schema range "
                            f"[{lo:g}, {hi:g}]: {_describe(np.unique(_host(x[out_of_range])))}")
        if col.support is not None:
            off = on_range(xp, lambda v: support.outside(col.support, xp, v),
                           xp.where(na, lo, x).astype(xp.int64), lo, hi) & ~na
            if bool(off.any()):
                raise DataError(f"column {shown(col.name)} has {int(off.sum())} values outside its "
                                f"support {support.describe(col.support)}: "
                                f"{_describe(np.unique(_host(x[off])))}")
        # whole numbers: a gather from the bins of every value in the range, where that
        # is shorter than the column (core.lookup), not a search a record
        codes = on_range(xp, lambda v: bin_codes(xp, edges, v), xp.where(na, lo, x), lo,
                         hi) if col.integer else bin_codes(xp, edges, x)
    if col.nullable:
        codes = xp.where(na, col.null_code, codes)
    return xp.ascontiguousarray(codes.astype(code_dtype(col.size)))


def encode(df, schema: Schema, xp=np, allow_empty: bool = False,
           derived_made: bool = False) -> list:
    """Validate the table against the schema and return one code array per synth column
    (NumPy, or CuPy for xp=cupy; df may be pandas or cuDF).  allow_empty: df is one
    partition of a larger table.  derived_made: the derived columns were just made from
    their rule (repair.repair), so they are not checked against it again."""
    check_columns(df, schema, allow_empty)
    for c in schema.columns:  # an id column other than the individual's is never read
        if c.kind != "id" or c.name == schema.unit_id:
            check_cells(df[c.name], c.name)
    epochs = _Epochs(df, schema)
    codes = [_encode_column(missing.blank(df[c.name], c)[0], c, xp, epochs)
             if c.time_of is None else  # a hidden time of day: from its datetime column
             xp.asarray(time_of_day.encode(*epochs(schema[c.time_of]), schema[c.time_of])
                        .astype(code_dtype(c.size))) for c in schema.synth_columns]
    sources = {}  # parsed once however many columns derive from one source
    for col in schema.columns:  # only that the data follows the declared rule
        if col.kind == "derived" and not derived_made:
            src = col.derive.source
            if src not in sources:
                sources[src] = _source_values(df, schema[src], epochs)
            derived.check_data(df[col.name], col, sources[src])
    return codes


class _Epochs(dict):
    """Each datetime column's (epochs, missing), parsed once when first asked for: its own
    codes, a gap's start (types/gap.py) and a derived rule's source read the same text
    (a start was parsed two or three times)."""

    def __init__(self, df, schema: Schema):
        super().__init__()
        self.df, self.schema = df, schema

    def __call__(self, c: Column):
        if c.name not in self:
            self[c.name] = datetime.to_epoch(missing.blank(self.df[c.name], c)[0], c)
        return self[c.name]


def _source_values(df, src: Column, epochs=None) -> pd.Series:
    """A derived column's source as the rule reads it: numbers, datetimes in the
    source's zone, or a lookup's categorical values as written (already validated by
    its own encoding; epochs: encode's, parsed once)."""
    s = missing.blank(df[src.name], src)[0]  # its codes for missing: missing
    if src.kind == "categorical":  # a lookup's: as written, matched as encode matches it
        s = s.to_pandas() if is_cudf(s) else s
        return s.reset_index(drop=True)
    if src.kind == "datetime":
        x, na = datetime.to_epoch(s, src) if epochs is None else epochs(src)
        return datetime.from_epoch(x, na, src)
    s = s.to_pandas() if is_cudf(s) else s
    return pd.Series(pd.to_numeric(s).to_numpy(dtype=np.float64, na_value=np.nan))


def to_schema_types(df, schema: Schema) -> pd.DataFrame:
    """df with every column in the dtype the schema declares (dtypes.output_dtype), values
    unchanged: how a table read back from CSV text gets the types sample() gave it.
    Checks the table with encode() first."""
    encode(df, schema)
    if is_cudf(df):
        df = df.to_pandas()
    out = {}
    for col in schema.columns:
        s, want = df[col.name].reset_index(drop=True), output_dtype(col)
        if col.kind == "categorical":  # exact: a code per value, and back
            s = categorical_lut(col, want).array.take(
                _encode_column(s, col).astype(np.intp))
        elif col.values is not None:  # a lookup: its values as its source's map gives
            s = col.derive.apply(_source_values(df, schema[col.derive.source]))
            s = pd.Series(s, dtype=object)
        elif col.kind == "datetime":
            s = datetime.as_output(datetime.from_epoch(*datetime.to_epoch(s, col), col), col,
                                   want)  # as decode writes it
        elif col.kind == "id":  # ours are 1..n; other ids stay as written ("007")
            n = pd.to_numeric(s, errors="coerce")
            s = n if n.notna().all() and (n.astype(str) == s.astype(str)).all() else s
            want = want if pd.api.types.is_numeric_dtype(s) else s.dtype
        else:
            s = pd.to_numeric(s)
        out[col.name] = pd.Series(s, name=col.name).astype(want)
    return pd.DataFrame(out)


def categorical_lut(col: Column, want) -> pd.Series:
    """One output value per code (the last: the null code) in the output dtype."""
    vals = list(col.values) + [None if col.nullable else col.values[0]]  # [-1]: placeholder
    return listed(vals, want)


