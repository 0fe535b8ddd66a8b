"""A Parquet table's declared types as a draft's dtypes (infer-schema): the file's Arrow
type of each column (its metadata, the same for every table its writer stores), where
the drafted column can be written so: dictionary text as "category" (or by Arrow's name
of its type, where its index is not pandas' own), nullable integers as
"Int8", decimals as "decimal128(10, 2)", large_string text as "large_string[pyarrow]",
dates as "date32[pyarrow]", timestamps in their unit.  Without them the release
came back as text, Int64 and nanosecond timestamps."""
from __future__ import annotations

import pandas as pd

from gpu_dpsyn.data.dtypes import check_column
from gpu_dpsyn.data.schema import column_from_spec
from gpu_dpsyn.errors import SchemaError


def _dtype_of(t, col) -> str | None:
    """The pandas dtype name that writes col's values as the Arrow type t, or None."""
    import pyarrow as pa
    T = pa.types
    # a lookup lists its values: typed as a categorical column (a probe's int32, float32
    # and Int16 lookups came back int64)
    kind = "categorical" if col.kind == "derived" and col.values is not None else col.kind
    if T.is_dictionary(t):
        if kind != "categorical" or not (T.is_string(t.value_type) or
                                             T.is_large_string(t.value_type)):
            return None
        # "category" writes pandas' index (int8 up to 127 values): another (Arrow's
        # writers' int32) by Arrow's name, which a release keeps.  Unordered: the draft
        # lists the values sorted, not in the file's order
        own = pd.Categorical([], categories=col.values).codes.dtype
        return str(pa.dictionary(t.index_type, t.value_type)) if T.is_string(
            t.value_type) and t.index_type.to_pandas_dtype() != own else "category"
    if T.is_integer(t) and kind == "id":  # numbered 1..n: check_column refuses the
        return str(t)  # types too narrow for MAX_ROWS
    if T.is_decimal128(t) or T.is_decimal256(t):  # by its Arrow name, which dtypes parses
        return str(t) if kind == "numeric" or kind == "categorical" and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in col.values) \
            else None
    if T.is_large_string(t) and kind == "categorical":  # (pandas' own text is string)
        return "large_string[pyarrow]"
    if T.is_integer(t) and kind in ("categorical", "numeric"):
        name = str(t)  # int8, uint16, ...
        return name.replace("uint", "UInt").replace("int", "Int") if col.nullable else name
    if T.is_boolean(t) and kind == "categorical":
        return "boolean" if col.nullable else "bool"
    if T.is_float32(t) and kind in ("categorical", "numeric"):
        return "Float32" if col.nullable else "float32"
    if kind != "datetime":
        return None
    if T.is_date(t):
        return "date32[pyarrow]"
    if T.is_timestamp(t):
        return f"datetime64[{t.unit}" + (f", {t.tz}]" if t.tz else "]")
    return None


def _text_codes(t, col) -> bool:
    """A categorical column drafted as whole numbers from values the file stores as text
    (merchant codes "5411"): their text is the number's own (leading zeros stay text)."""
    import pyarrow as pa
    T = pa.types
    t = t.value_type if T.is_dictionary(t) else t
    return col.kind == "categorical" and (T.is_string(t) or T.is_large_string(t)) and \
        all(isinstance(v, int) and not isinstance(v, bool) for v in col.values)


def file_dtypes(path, schema, df) -> list[str]:
    """Give the drafted schema's columns the dtypes of the Parquet file at path, where
    they fit (check_column: range, missing values, zone); the names of those given.  df:
    the table the draft read (its texts, not read from the file again)."""
    import pyarrow.parquet as pq
    fields = {f.name: f.type for f in pq.read_schema(path)}
    given = []
    for i, col in enumerate(schema.columns):
        if col.name in fields and _text_codes(fields[col.name], col) and \
                set(df[col.name].dropna().astype(str).unique()) == \
                {str(v) for v in col.values}:  # codes such as "5411" stored as text
            col = schema.columns[i] = column_from_spec(col.name, {  # listed as such
                **col.to_dict(), "values": [str(v) for v in col.values]})  # ("1.0" not)
        name = _dtype_of(fields[col.name], col) if col.name in fields else None
        if name is None:
            continue
        drafted, col.dtype = col.dtype, name
        try:
            check_column(col)
        except SchemaError:  # a type the drafted column cannot be written in: the draft's
            col.dtype = drafted  # own stays ("string" for answer words among numbers)
            continue
        given.append(f"{col.name} {name}")
    return given
