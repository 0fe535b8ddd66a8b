"""The CSV dialect a draft reads a file in (infer-schema; data/dialect.py): what the user
gave (--separator, --decimal, --thousands, --encoding), else what the file says: its
bytes (UTF-8 or not), its header (one column holding semicolons), its numbers (`2 399,80`
in most values of a column).  Read off the data, as every draft is: NOT private; each
part found gets a line, to review with the rest."""
from __future__ import annotations

import codecs
import re

import pandas as pd

from gpu_dpsyn.data import line_ends
from gpu_dpsyn.data.dialect import GROUPINGS, Dialect, dialect_from_spec
from gpu_dpsyn.data.ingest import SEPARATORS, header_separator, reading, table_format

NUMBER_SHARE = 0.9  # of a column's values written as numbers of the dialect: a number column
_CHUNK = 1 << 20


def file_dialect(path, given: dict) -> tuple[Dialect, list[str]]:
    """(the encoding and separator to read `path` in, a line for each found, not given)."""
    notes = []
    if table_format(path) != "csv":
        return dialect_from_spec(given), notes
    spec = dict(given)
    if "encoding" not in spec and not _decodes(path, "utf-8"):
        spec["encoding"] = "cp1252" if _decodes(path, "cp1252") else "latin-1"
        notes.append(f"encoding {spec['encoding']}: the file is no UTF-8 (a spreadsheet "
                     "saved on Windows?); set \"encoding\" under \"csv\" if it is another")
    if "separator" not in spec:
        with reading(path):
            head = line_ends.read_csv(path, nrows=0, dtype=str, encoding=spec.get(
                "encoding", "utf-8"), encoding_errors="replace")
        sep = header_separator(head.columns)
        if sep is not None:
            spec["separator"] = sep
            notes.append(f"separator {sep!r}: the header is one column holding "
                         f"{SEPARATORS[sep]}")
    return dialect_from_spec(spec), notes


def _decodes(path, encoding: str) -> bool:
    """Whether every byte of the file (decompressed as pandas would) reads in encoding."""
    from pandas.io.common import get_handle
    decoder = codecs.getincrementaldecoder(encoding)()
    with reading(path), get_handle(path, "rb", compression="infer", is_text=False) as h:
        try:
            while chunk := h.handle.read(_CHUNK):
                decoder.decode(chunk)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return False
    return True


def number_dialect(df: pd.DataFrame, d: Dialect, given: dict) -> tuple[Dialect, list[str]]:
    """d with the decimal comma and digit grouping that the table's numbers are written
    with, where a file not separated by commas has columns of them (2 399,80; 1.234,5)."""
    if d.separator == "," or "decimal" in given:
        return d, []
    groups = "".join(re.escape(g) for g in GROUPINGS if g != ",")
    pattern = rf"^\s*[+-]?\d{{1,3}}(?:([{groups}])\d{{3}})*,\d+\s*$|^\s*[+-]?\d+,\d+\s*$"
    seen, marks = None, {}
    for name in df.columns:
        text = df[name].dropna()
        text = text[text.map(lambda v: isinstance(v, str))]
        if not len(text):
            continue
        found = text.str.extract(pattern)  # group 0: the grouping mark, where there is one
        if text.str.match(pattern).mean() >= NUMBER_SHARE:
            seen = seen or name
            for g in found[0].dropna():
                marks[g] = marks.get(g, 0) + 1
    if seen is None:
        return d, []
    thousands = given.get("thousands", max(marks, key=marks.get) if marks else None)
    spec = dict(d.to_dict(), decimal=",", **({"thousands": thousands} if thousands else {}))
    return dialect_from_spec(spec), [
        "decimal ','" + (f", thousands {thousands!r}" if thousands else "") +
        f": numbers are written so (column {seen!r}, such as "
        f"{df[seen].dropna().iloc[0]!r})"]


def as_numbers(df: pd.DataFrame, d: Dialect) -> pd.DataFrame:
    """df with the columns whose values are mostly numbers of the dialect as plain number
    text (the draft then reads them as numbers; the schema's number columns are read so
    by every reader)."""
    if d.plain:
        return df
    out = {}
    for name in df.columns:
        s = df[name]
        plain = d.number(s)
        changed = (plain.astype(object) != s.astype(object)) & s.notna()
        out[name] = plain if changed.sum() >= NUMBER_SHARE * s.notna().sum() > 0 else s
    return pd.DataFrame(out, index=df.index)


def given_dialect(a) -> dict:
    """The dialect flags given to infer-schema, as the schema's "csv" keys."""
    return {k: v for k, v in (("separator", a.separator), ("decimal", a.decimal),
                              ("thousands", a.thousands), ("encoding", a.encoding))
            if v is not None}

