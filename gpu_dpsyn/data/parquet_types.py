"""Parquet columns by their declared Arrow type: the file's metadata, the same for every
table its writer stores (a file of no rows has it too), so deciding by it tells nothing of
any record.  A type that a schema column can never read is refused before anything is
spent; without this, every value of such a column was invalid under the row-local rule,
every row was dropped and a 1-row table released.  Binary columns are text: each value is
read as UTF-8 (bytes that are no UTF-8 as U+FFFD), as a CSV's bytes are.  A release writes
pandas' text as Arrow's `string` (written_schema)."""
from __future__ import annotations

import pandas as pd

from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import DataError

_HINTS = {
    ("numeric", "bool"): "; declare it categorical with values [false, true]",
    ("datetime", "number"): "; numbers name no date without a unit: store timestamps, dates "
                            "or ISO 8601 text",
    ("numeric", "time"): "; store it as numbers in a unit first (a duration's seconds: "
                         ".dt.total_seconds(); an interval's ends as two columns)",
    ("numeric", "period"): "; declare it datetime (periods read as their start: a month's, "
                           "\"unit\": \"month\"), or store numbers",
}
PERIOD = "pandas.period"  # the extension pandas marks a period column's ordinals with


def _family(t) -> str:
    """What a schema column sees of an Arrow type: nested, bool, number, text, binary,
    date (dates and timestamps), time (times of day, durations, intervals) or null."""
    import pyarrow as pa
    T = pa.types
    if T.is_dictionary(t):
        return _family(t.value_type)
    if T.is_nested(t) or T.is_union(t):
        return "nested"
    if T.is_boolean(t):
        return "bool"
    if T.is_integer(t) or T.is_floating(t) or T.is_decimal(t):
        return "number"
    if T.is_string(t) or T.is_large_string(t) or str(t) == "string_view":
        return "text"
    if T.is_binary(t) or T.is_large_binary(t) or T.is_fixed_size_binary(t) or \
            str(t) == "binary_view":
        return "binary"
    if T.is_timestamp(t) or T.is_date(t):
        return "date"
    if T.is_null(t):
        return "null"
    return "time"  # time32/64, duration, intervals


# what each kind of column cannot read at all
_NEVER = {"categorical": {"nested"}, "id": {"nested"},
          "numeric": {"nested", "bool", "date", "time", "period"},
          "datetime": {"nested", "bool", "number", "time"}}


def check(path, schema=None, fields=None) -> list[str]:
    """DataError naming the first schema column whose stored type its kind cannot read;
    else the names of the binary columns (the schema's, or without one every column) to
    read as text.  fields: the file's Arrow schema, if read already."""
    import pyarrow.parquet as pq
    kinds = {c.name: c.kind for c in schema.columns if c.kind in _NEVER} \
        if schema is not None else None
    listed = {c.name: c.values for c in schema.columns if c.kind == "categorical"} \
        if schema is not None else {}
    binary = []
    fields = fields if fields is not None else pq.read_schema(path)
    twice = next((n for i, n in enumerate(fields.names) if n in fields.names[:i]), None)
    if twice is not None:  # (Arrow's words: "Multiple matches for FieldRef.Name(k)")
        raise DataError(f"cannot read {shown(str(path))}: it holds a column {shown(twice)} "
                        "twice; rename one of them, or leave one out of the file")
    for field in fields:
        kind = kinds.get(field.name) if kinds is not None else "any"
        if kind is None:
            continue
        family = "period" if PERIOD in (getattr(field.type, "extension_name", None),
                                        (field.metadata or {}).get(
                                            b"ARROW:extension:name", b"").decode()) \
            else _family(field.type)  # (int64 ordinals, read back as periods)
        if family in _NEVER.get(kind, ()):
            raise DataError(f"cannot read {shown(str(path))}: column {shown(field.name)} is "
                            f"stored as {field.type}{' periods' * (family == 'period')} "
                            f"in Parquet, which a {kind} column cannot "
                            f"read{_HINTS.get((kind, family), '')}")
        # booleans only: pandas stores integers with one value missing as floats, and all
        # missing as floats or nulls, so one record would turn a refusal of numbers on or off
        if family == "bool" and field.name in listed and \
                not _could_read(listed[field.name], family):
            raise DataError(f"cannot read {shown(str(path))}: column {shown(field.name)} is "
                            f"stored as {field.type} in Parquet, and none of the values its "
                            f"schema lists ({shown(str(listed[field.name][:3]))}...) is "
                            "true or false: every row would be dropped")
        if family == "binary":
            binary.append(field.name)
    return binary


def check_frame(df, schema) -> None:
    """DataError naming the first schema column whose dtype in the DataFrame df (its
    declared structure, as a Parquet file's Arrow type: the same whatever its records
    hold) its kind cannot read: durations and intervals (pd.cut's categories too) under a
    numeric or datetime column, periods under a numeric one.  Fitted, each value was invalid: missing in the
    output, or every row dropped, without a word.  Object columns are read value by value
    (the repair), and other dtypes as it reads them (booleans as 1/0; periods under a
    datetime column as their start, types/periods.py)."""
    for col in schema.columns:
        if col.kind not in _NEVER or col.name not in df.columns:
            continue
        d = df[col.name].dtype
        held = d.categories.dtype if isinstance(d, pd.CategoricalDtype) else d  # pd.cut's
        family = _family(d.pyarrow_dtype) if isinstance(d, pd.ArrowDtype) else \
            "time" if isinstance(held, pd.IntervalDtype) or \
            getattr(held, "kind", None) == "m" else \
            "period" if isinstance(held, pd.PeriodDtype) else None
        if family in ("time", "period") and family in _NEVER[col.kind]:
            named = d if held is d else f"category (of {held})"
            raise DataError(f"column {shown(col.name)} is of dtype {named} in the table, "
                            f"which a {col.kind} column cannot read"
                            + _HINTS.get((col.kind, family), ""))


def _could_read(values, family: str) -> bool:
    """Whether a categorical column listing `values` could hold a boolean (or true/false,
    0/1)."""
    return any(isinstance(v, bool) or str(v).strip().lower() in ("true", "false", "0", "1")
               for v in values)


def as_text(df, names: list):
    """df with the binary columns `names` read as UTF-8 text, value by value."""
    if not names:
        return df
    df = df.copy()
    for name in names:
        df[name] = df[name].map(lambda v: v.decode("utf-8", "replace")
                                if isinstance(v, (bytes, bytearray)) else v,
                                na_action="ignore").astype(object)
    return df


# rows an Arrow `string` chunk is cast in: its offsets are 32-bit (2 GiB of text a chunk)
_TEXT_CHUNK_ROWS = 1 << 16


def written_schema(arrow, df, dictionaries=None):
    """The Arrow schema a Parquet release is written in: `arrow` (pa.Schema.from_pandas of
    df) with pandas' own text (`str`, `string`, categories of them) as Arrow's `string`,
    not the `large_string` pandas 3 makes of it.  From the dtypes alone, which follow the
    schema; a column named as Arrow's ("large_string[pyarrow]") stays as named.
    Categories' indices stay pandas' (int8 up to 127 categories), "category" naming no
    other; `dictionaries` ({column: Arrow dictionary type}, dtypes.dictionary_types) gives
    those whose schema dtype names Arrow's type (an input's int32 indices, say)."""
    import pyarrow as pa
    fields = []
    for field in arrow:
        d = df[field.name].dtype if field.name in df.columns else None
        t = field.type
        if isinstance(d, pd.StringDtype) and pa.types.is_large_string(t):
            t = pa.string()
        elif isinstance(d, pd.CategoricalDtype) and field.name in (dictionaries or {}):
            t = dictionaries[field.name]
        elif isinstance(d, pd.CategoricalDtype) and pa.types.is_dictionary(t):
            value = t.value_type
            if isinstance(d.categories.dtype, pd.StringDtype) and \
                    pa.types.is_large_string(value):
                value = pa.string()
            t = pa.dictionary(t.index_type, value, t.ordered)
        fields.append(field.with_type(t))
    return pa.schema(fields, metadata=arrow.metadata)


def written_table(df, dictionaries=None):
    """df as the Arrow table a Parquet release writes (written_schema)."""
    import pyarrow as pa
    table = pa.Table.from_pandas(df, preserve_index=False)
    schema = written_schema(table.schema, df, dictionaries)
    if schema.equals(table.schema):
        return table
    if any(a.type != b.type and pa.types.is_string(b.type)
           for a, b in zip(table.schema, schema)):  # chunks whose text fits 32-bit offsets
        table = pa.Table.from_batches(table.to_batches(max_chunksize=_TEXT_CHUNK_ROWS),
                                      table.schema)
    return table.cast(schema)


def index_columns(df):
    """df with the index levels pandas stored under a name (df.set_index("pid")
    .to_parquet()) back among its columns: pandas reads them as the index, where a table
    lost them (a draft its person's id, unsaid).  An unnamed level (a saved row number,
    `__index_level_0__`) stays the index, left out as before, and so does a RangeIndex
    named or not: a row number the file holds as metadata, no column (Dask reads none)."""
    if type(df.index).__name__ == "RangeIndex":  # (cuDF's too)
        return df
    names = [n for n in df.index.names if n is not None and n not in df.columns]
    return df.reset_index(level=names) if names else df
