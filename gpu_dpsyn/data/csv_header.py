"""What a CSV file's first lines say, checked by every reader before its records count: a
separator other than the schema's (a header read as one column), a header naming a column
twice, no header at all, rows with more fields than the header.  The header alone decides
(no record does), and a line that may be a record is never shown."""
from __future__ import annotations

import codecs
import json
import re

import pandas as pd

from gpu_dpsyn.data import line_ends
from gpu_dpsyn.data.dialect import DEFAULT as DEFAULT_DIALECT, Dialect
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import DataError


def default_index(df) -> bool:
    return isinstance(df.index, pd.RangeIndex) and df.index.equals(pd.RangeIndex(len(df)))


def reread_trailing(path, df, opts: dict):
    """pandas makes a row's extra leading fields the index when every data row has more
    fields than the header, shifting every column by one.  A trailing delimiter (the extra
    field empty on every row) is read again without the index; anything else is refused."""
    check_trailing(path, df)
    return line_ends.read_csv(path, index_col=False, **opts)


def check_trailing(path, df) -> None:
    """DataError unless df's rows (read with their extra first field as the index) end in
    an empty field: a trailing delimiter."""
    last = df.iloc[:, -1] if df.shape[1] else pd.Series([], dtype=object)
    if not (df.index.nlevels == 1 and bool((last.isna() | (last == "")).all())):
        raise DataError(f"cannot read {shown(str(path))}: its data rows have more fields "
                        "than the header, which would shift every column; fix the header or "
                        "the rows")


_MANGLED = re.compile(r"^(.*)\.\d+$", re.S)


SEPARATOR_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs", "|": "vertical bars"}


def header_separator(columns, dialect: Dialect = DEFAULT_DIALECT) -> str | None:
    """The separator a header read as one column holds, other than the dialect's: the
    file is separated otherwise (a spreadsheet saved where decimals take commas, a TSV).
    The header alone decides (no record does)."""
    names = [str(c) for c in columns]
    return next((c for c in SEPARATOR_NAMES if c != dialect.separator and len(names) == 1
                 and c in names[0]), None)


def check_separator(path, columns, schema=None, dialect: Dialect = DEFAULT_DIALECT) -> None:
    """DataError when the header reads as one column holding another separator
    (header_separator), which would be read as one column of text; a schema declaring
    that very name says it is one."""
    sep = header_separator(columns, dialect)
    name = str(list(columns)[0]) if sep else ""
    if sep and schema is not None and name in schema.names:
        return  # a column so named: one column
    if sep:
        no_header(path, name.split(sep), schema)
        how = (f"declare it in the schema (\"csv\": {{\"separator\": {json.dumps(sep)}}}),"
               " or if it is one column, that column") if schema is not None else \
            (f"read it with that separator (infer-schema --separator {json.dumps(sep)}, or "
             "a schema's \"csv\")")
        raise DataError(f"cannot read {shown(str(path))}: its header is one column, "
                        f"{shown(name)}, so it looks separated by {SEPARATOR_NAMES[sep]}, not "
                        f"{SEPARATOR_NAMES.get(dialect.separator, repr(dialect.separator))}: "
                        + how)


def no_header(path, names, schema) -> None:
    """DataError when a header names none of the schema's columns (listed or ignored):
    no header row, or a blank first line, so the "names" are a record's values, not
    shown (encoding.check_columns says the same of a table)."""
    if schema is None or set(map(str, names)) & (set(schema.names) | set(schema.ignored)):
        return
    raise DataError(f"cannot read {shown(str(path))}: its first line names none of the "
                    "schema's columns; if the file has no header row (or a blank first "
                    "line), add one (the line is not shown: it may be a record)")


def check_header(path, df, dialect: Dialect = DEFAULT_DIALECT, schema=None) -> None:
    """DataError naming a column the CSV header gives twice (pandas would read the second
    as "color.1" and a drafted schema would name it so)."""
    names = [str(c) for c in df.columns]
    mark = codecs.BOM_UTF8.decode(dialect.encoding, errors="ignore") \
        if not dialect.encoding.replace("_", "-").lower().startswith("utf") else ""
    if len(mark) > 1 and names and names[0].startswith(mark):  # 'ï»¿' in cp1252
        raise DataError(f"cannot read {shown(str(path))}: it starts with UTF-8's byte-order "
                        f"mark, which {dialect.encoding} reads as {mark!r} in the first "
                        "column's name: the file is UTF-8; give \"encoding\": \"utf-8-sig\"")
    if not any(m and m.group(1) in names for m in map(_MANGLED.match, names)):
        return  # nothing that looks renamed: no second read
    header = line_ends.read_csv(path, header=None, nrows=1, dtype=str,
                                keep_default_na=False, index_col=False,
                                **dialect.read_options()).iloc[0].tolist()
    no_header(path, header, schema)
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"cannot read {shown(str(path))}: the header names column "
                            f"{shown(h)} more than once; give each column its own name")
        seen.add(h)
