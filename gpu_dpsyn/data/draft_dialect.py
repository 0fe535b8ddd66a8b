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
from gpu_dpsyn.data.dialect import GROUPINGS, Dialect, dialect_from_spec, parts
from gpu_dpsyn.data.csv_header import SEPARATOR_NAMES, header_separator
from gpu_dpsyn.data.ingest import reading, table_format
from gpu_dpsyn.data.values import comma_decimals

NUMBER_SHARE = 0.9  # of a column's values written as numbers of the dialect: a number column
_CHUNK = 1 << 20


def file_dialect(path, given: dict) -> tuple[Dialect, list[str]]:
    """(the encoding and separator to read `path` in, a line for each found, not given)."""
    notes = []
    spec = dict(given)
    if spec.get("thousands") == "." and "decimal" not in spec:  # then the comma is
        spec["decimal"] = ","
    parts(spec)  # a bad flag refused before the file is read (together: once found)
    if table_format(path) != "csv":
        return dialect_from_spec(spec), notes
    if "encoding" not in spec and not _decodes(path, "utf-8"):
        spec["encoding"] = "cp1252" if _decodes(path, "cp1252") else "latin-1"
        notes.append(f"encoding {spec['encoding']}: the file is no UTF-8 (a spreadsheet "
                     "saved on Windows?); set \"encoding\" under \"csv\" if it is another")
    elif "encoding" not in spec and _starts(path, codecs.BOM_UTF8):
        spec["encoding"] = "utf-8-sig"  # kept: Excel reads such a file as UTF-8
        notes.append("encoding utf-8-sig: the file starts with a byte order mark, and the "
                     "output will too")
    if "separator" not in spec:
        with reading(path):
            head = line_ends.read_csv(path, nrows=0, dtype=str, encoding=spec.get(
                "encoding", "utf-8"), encoding_errors="replace")
        sep = header_separator(head.columns)
        if sep is not None:
            spec["separator"] = sep
            notes.append(f"separator {sep!r}: the header is one column holding "
                         f"{SEPARATOR_NAMES[sep]}")
    return dialect_from_spec(spec), notes


def _starts(path, head: bytes) -> bool:
    """Whether the file (decompressed as pandas would) starts with these bytes."""
    from pandas.io.common import get_handle
    with reading(path), get_handle(path, "rb", compression="infer", is_text=False) as h:
        return h.handle.read(len(head)) == head


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
    """d with the decimal comma (and digit grouping) the table's numbers are written with,
    in a file not separated by commas, on evidence only: no number anywhere written with
    a decimal dot (28.71, 0.250); a column of numbers so written (NUMBER_SHARE of its
    values, whole ones too: a spreadsheet writes 12 beside 12,5) with a comma before 1-2
    or 4+ digits (1,234 may group thousands); a grouping mark (the one given, or found)
    where every value holding it groups digits by threes, a dot only beside 3-digit
    numbers without one, a value of two groups, or a decimal comma (2.804 beside 891)."""
    if d.separator == "," or "decimal" in given or d.decimal == ",":
        return d, []
    texts = {name: t for name in df.columns if len(t := _texts(df[name]))}
    every = pd.concat(list(texts.values())) if texts else pd.Series([], dtype=str)
    dotted = every[every.str.fullmatch(r"\s*[+-]?\d+\.\d+\s*")]
    if not dotted.str.fullmatch(_DOT_GROUPS).all():  # the file's decimal mark is a dot
        return d, []
    marks = [given["thousands"]] if "thousands" in given else \
        [g for g in GROUPINGS if g != ","]
    found, seen = None, None
    for g in [None] + marks:
        trial = Dialect(d.separator, ",", g, d.encoding)
        for name, text in texts.items():
            if text.str.match(trial.pattern).mean() >= NUMBER_SHARE and \
                    (comma_decimals(text) if g is None else _grouped(text, g)):
                found, seen = trial, name
                break
        if found is not None and found.thousands is not None:
            break
    if found is None:
        return d, []
    if "thousands" in given:  # the mark given, whatever the evidence for it
        found = Dialect(d.separator, ",", given["thousands"], d.encoding)
    return found, ["decimal ','" + (f", thousands {found.thousands!r}" if found.thousands
                                     else "") + f": numbers are written so (column {seen!r},"
                   f" such as {texts[seen].iloc[0]!r})"]


_DOT_GROUPS = r"\s*[+-]?[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?\s*"  # 2.804, 1.234,5: not 0.250


def _grouped(text: pd.Series, g: str) -> bool:
    """Whether the mark g groups the column's digits by threes (see number_dialect)."""
    held = text[text.str.contains(rf"\d{re.escape(g)}\d")]
    if len(held) < GROUPED:
        return False
    if g != ".":
        return True
    plain = text[~text.str.contains(".", regex=False)]
    return bool(held.str.fullmatch(_DOT_GROUPS).all() and (
        plain.str.fullmatch(r"\s*[+-]?\d{3}\s*").any() or
        held.str.contains(r"\.\d{3}\.|,").any()))


GROUPED = 5  # values grouped by a mark before it is taken for one (not a lone "2.5")


def _texts(s: pd.Series) -> pd.Series:
    s = s.dropna()
    return s[s.map(lambda v: isinstance(v, str))].astype(str)


def as_numbers(df: pd.DataFrame, d: Dialect) -> pd.DataFrame:
    """df with the columns whose values are mostly numbers of the dialect (NUMBER_SHARE)
    as plain number text (the draft then reads them as numbers; the schema's number
    columns are read so by every reader)."""
    if d.plain:
        return df
    out = {}
    for name in df.columns:
        s, text = df[name], _texts(df[name])
        ok = len(text) and text.str.match(d.pattern).mean() >= NUMBER_SHARE
        out[name] = d.number(s) if ok else s
    return pd.DataFrame(out, index=df.index)


def given_dialect(a) -> dict:
    """The dialect flags given to infer-schema, as the schema's "csv" keys."""
    return {k: v for k, v in (("separator", a.separator), ("decimal", a.decimal),
                              ("thousands", a.thousands), ("encoding", a.encoding))
            if v is not None}

