"""Parquet columns by their declared Arrow type: the file's metadata, the same for every
table its writer stores (a file of no rows has it too), so deciding by it tells nothing of
any record.  A type that a schema column can never read is refused before anything is
spent; without this, every value of such a column was invalid under the row-local rule,
every row was dropped and a 1-row table released.  Binary columns are text: each value is
read as UTF-8 (bytes that are no UTF-8 as U+FFFD), as a CSV's bytes are."""
from __future__ import annotations

from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import DataError

_HINTS = {
    ("numeric", "bool"): "; declare it categorical with values [false, true]",
    ("datetime", "number"): "; numbers name no date without a unit: store timestamps, dates "
                            "or ISO 8601 text",
}


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
          "numeric": {"nested", "bool", "date", "time"},
          "datetime": {"nested", "bool", "number", "time"}}


def check(path, schema=None, fields=None) -> list[str]:
    """DataError naming the first schema column whose stored type its kind cannot read;
    else the names of the binary columns (the schema's, or without one every column) to
    read as text.  fields: the file's Arrow schema, if read already."""
    import pyarrow.parquet as pq
    kinds = {c.name: c.kind for c in schema.columns if c.kind in _NEVER} \
        if schema is not None else None
    binary = []
    for field in fields if fields is not None else pq.read_schema(path):
        kind = kinds.get(field.name) if kinds is not None else "any"
        if kind is None:
            continue
        family = _family(field.type)
        if family in _NEVER.get(kind, ()):
            raise DataError(f"cannot read {shown(str(path))}: column {shown(field.name)} is "
                            f"stored as {field.type} in Parquet, which a {kind} column cannot "
                            f"read{_HINTS.get((kind, family), '')}")
        if family == "binary":
            binary.append(field.name)
    return binary


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
