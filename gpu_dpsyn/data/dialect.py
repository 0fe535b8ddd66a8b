"""How a CSV file is written: its separator, its decimal mark and digit grouping, its text
encoding (the schema's "csv" object; a spreadsheet saved in a French or German locale
writes `2 399,80` separated by semicolons, in Windows-1252).  Public facts about the
file, not the data: every reader of the table takes them, and the synthetic CSV is written
the same way.

Numbers with a decimal comma are read by the row-local rule (data/repair.py): the columns
that hold numbers are read as text, and each value that is a number written in the
dialect becomes its plain text (`2 399,80` -> `2399.80`), alone; any other value stays as
written, so one record never changes how another is read.
"""
from __future__ import annotations

import codecs
import re
import sys
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpu_dpsyn.data.ascii import SPACE, ascii_text, mask
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import SchemaError

SEPARATORS = (",", ";", "\t", "|")  # none of them inside a number, a date or a time
TAB_NAMES = {"\\t": "\t", "tab": "\t", "TAB": "\t"}
DECIMALS = (".", ",")
GROUPINGS = (" ", ".", ",", "'", "\u00a0", "\u202f")  # 2 399 / 2.399 / 2,399 / 2'399
_PROBE = 'x\r\n,;\t|"x'  # what the readers and LineEnds take as ASCII bytes


@dataclass(frozen=True)
class Dialect:
    separator: str = ","
    decimal: str = "."
    thousands: str | None = None
    encoding: str = "utf-8"

    @property
    def plain(self) -> bool:
        """Numbers as Python writes them: pandas may read them itself."""
        return self.decimal == "." and self.thousands is None

    def to_dict(self) -> dict:
        return {k: v for k, v in (("separator", self.separator), ("decimal", self.decimal),
                                  ("thousands", self.thousands), ("encoding", self.encoding))
                if v != getattr(DEFAULT, k)}

    def read_options(self) -> dict:
        """pandas.read_csv's arguments for this dialect (its numbers are read as text:
        ingest.csv_options, then plain_numbers)."""
        return {"sep": self.separator, "encoding": self.encoding}

    @property
    def pattern(self) -> str:
        """A number written in this dialect: sign, whole part (grouped by `thousands`, or
        not), the decimal mark and fraction, an exponent."""
        return self.number_pattern()

    def number_pattern(self, space: str = r"\s", digit: str = r"\d",
                       named: bool = False) -> str:
        """pattern with its spaces and digits spelled `space` and `digit`, its groups
        named sign, whole, frac and exp if `named` (Arrow's kernels take named ones)."""
        g, d = re.escape(self.thousands or ""), re.escape(self.decimal)
        n = {k: f"?P<{k}>" if named else "" for k in ("sign", "whole", "frac", "exp")}
        whole = rf"{digit}{{1,3}}(?:{g}{digit}{{3}})+|{digit}+" if g else rf"{digit}+"
        return (rf"^{space}*({n['sign']}[+-]?)({n['whole']}{whole})(?:{d}({n['frac']}"
                rf"{digit}+))?({n['exp']}[eE][+-]?{digit}+)?{space}*$")

    def number(self, text: pd.Series) -> pd.Series:
        """Each value written as a number of this dialect as plain text (-2399.80 for
        "-2 399,80", 4.8e-05 for "4,8e-05"); other values as they are, each alone.  ASCII
        text at C speed (2.8 s a million values value by value), with the same result."""
        if self.plain:
            return text
        s = text.astype(object)
        arr = ascii_text(s)
        return number_one_by_one(self, s) if arr is None else _ascii_numbers(self, s, arr)


def number_one_by_one(d: Dialect, s: pd.Series) -> pd.Series:
    """Dialect.number of the object Series s, value by value (re's reading)."""
    is_str = s.map(lambda v: isinstance(v, str)).to_numpy(dtype=bool)
    if not is_str.any():
        return s
    parts = s[is_str].astype(str).str.extract(d.pattern)
    hit = parts[1].notna().to_numpy()
    whole = parts[1].fillna("")
    if d.thousands:
        whole = whole.str.replace(d.thousands, "", regex=False)
    plain = parts[0].fillna("") + whole + \
        parts[2].map(lambda f: "" if pd.isna(f) else "." + f) + parts[3].fillna("")
    out = s.copy()
    out.loc[s.index[is_str][hit]] = plain[hit].to_numpy()
    return out


def _ascii_numbers(d: Dialect, s: pd.Series, arr) -> pd.Series:
    """number_one_by_one for ASCII text `arr` (s's values): its pattern with \\s and \\d
    spelled out (data/ascii.py), matched and rewritten by Arrow's kernels."""
    import pyarrow as pa
    import pyarrow.compute as pc
    found = pc.extract_regex(arr, d.number_pattern(SPACE, "[0-9]", named=True))
    hit = mask(found.is_valid())
    if not hit.any():
        return s
    part = {k: pc.fill_null(found.field(k), "") for k in ("sign", "whole", "frac", "exp")}
    digits = pc.replace_substring(part["whole"], d.thousands, "") if d.thousands else \
        part["whole"]
    frac = pc.if_else(pc.equal(part["frac"], ""), "",  # (a fraction has a digit at least)
                      pc.binary_join_element_wise(".", part["frac"], ""))
    plain = pc.binary_join_element_wise(part["sign"], digits, frac, part["exp"], "")
    out = s.copy()
    out.iloc[np.flatnonzero(hit)] = pa.array(plain).filter(pa.array(hit)).to_pylist()
    return out


DEFAULT = Dialect()


def number_columns(schema) -> list[str]:
    """The columns whose numbers are read in the dialect: numeric and derived ones,
    categorical ones listing a number (beside text too: [1.5, "x"] is written 1,5)."""
    return [c.name for c in schema.columns if c.kind == "numeric" or (
        c.kind == "derived" and c.values is None) or (  # (a lookup lists its values)
        c.values is not None and any(isinstance(v, (int, float)) and
                                     not isinstance(v, bool) for v in c.values))]


def plain_numbers(df, schema):
    """df (read as text in the schema's dialect) with its number columns' values that are
    numbers of the dialect as plain number text, each value alone (Dialect.number): what
    every CSV reader, in memory or on Dask partitions, does with them."""
    d = schema.csv
    if not d.plain:
        for c in number_columns(schema):
            if c in df.columns:
                df[c] = d.number(df[c])
    return df


def dialect_from_spec(spec) -> Dialect:
    """The schema's "csv" object (its keys' types checked with the document) as a Dialect,
    refused where a reader could not tell its parts apart."""
    if spec is None:
        return DEFAULT
    d = parts(spec)
    clash = next(((a, b) for a, b in (("separator", "decimal"), ("separator", "thousands"),
                                      ("decimal", "thousands"))
                  if getattr(d, a) == getattr(d, b)), None)
    if clash:
        raise SchemaError(f"csv: '{clash[0]}' and '{clash[1]}' are both "
                          f"{shown(getattr(d, clash[0]))}; a reader could not tell them apart")
    return d


def parts(spec: dict) -> Dialect:
    """The dialect's parts, each checked alone (dialect_from_spec checks them together)."""
    sep = spec.get("separator", ",")
    sep = TAB_NAMES.get(sep, sep)  # "\\t" and "tab" as a command line writes a tab
    d = Dialect(sep, spec.get("decimal", "."), spec.get("thousands"),
                spec.get("encoding", "utf-8"))
    if sep not in SEPARATORS:  # numbers, dates and times are written unquoted
        raise SchemaError(f"csv: 'separator' must be one of {shown(list(SEPARATORS))} (a "
                          f"tab as \"\\t\"), got {shown(sep)}: numbers, dates and times "
                          "hold the others")
    if d.decimal not in DECIMALS:
        raise SchemaError(f"csv: 'decimal' must be \".\" or \",\", got {shown(d.decimal)}")
    if d.thousands is not None and d.thousands not in GROUPINGS:
        raise SchemaError(f"csv: 'thousands' must be one of {shown(list(GROUPINGS))}, got "
                          f"{shown(d.thousands)}")
    return Dialect(sep, d.decimal, d.thousands, _encoding(d.encoding))


# multi-byte encodings that read each character from its own bytes (no shift state):
# a record's bytes decode alone, whatever came before them
_MULTIBYTE = {"utf-8-sig", "shift_jis", "cp932", "shift_jis_2004", "shift_jisx0213",
              "euc_jp", "euc_jis_2004", "euc_jisx0213", "euc_kr", "cp949", "johab",
              "gb2312", "gbk", "gb18030", "big5", "big5hkscs", "cp950", "ascii"}


def _encoding(name: str) -> str:
    """A codec Python knows that writes ASCII as ASCII (the separators, quotes and line
    ends the readers look for): not UTF-16 or UTF-32; and reads each record's bytes alone:
    an 8-bit code page or a multi-byte encoding without shift states (not hz, ISO-2022,
    UTF-7, idna or the escape codecs, where one record's bytes change how every later
    record reads: a neighbouring table would differ by hundreds of records)."""
    try:
        info = codecs.lookup(name)
        if info.name == "utf-8":  # UTF8, utf_8, U8: the default
            return "utf-8"
        ok = _PROBE.encode(name).endswith(_PROBE.encode("ascii"))  # a BOM first is fine
    except (LookupError, UnicodeError, TypeError):
        raise SchemaError(f"csv: unknown 'encoding' {shown(name)}; use a name Python knows, "
                          "such as \"utf-8\", \"cp1252\" or \"latin-1\"") from None
    if not ok:
        raise SchemaError(f"csv: 'encoding' {shown(name)} does not write ASCII as ASCII "
                          "(UTF-16, UTF-32): save the file as UTF-8 or an 8-bit encoding")
    if info.name not in _MULTIBYTE and not _single_byte(info):
        raise SchemaError(f"csv: 'encoding' {shown(name)} reads bytes by what earlier text "
                          "switched on (shift states or escapes), so one record could change "
                          "how the others read: save the file as UTF-8")
    return name


def _single_byte(info) -> bool:
    """A code page of one byte a character (Python's charmap codecs: cp1252, latin-1,
    koi8-r): stateless.  Their module, loaded by the lookup, holds a decoding table."""
    module = sys.modules.get(getattr(info.decode, "__module__", None) or "")
    return info.name == "iso8859-1" or hasattr(module, "decoding_table")


def unwritable(schema, dialect: Dialect) -> str | None:
    """The first text the output would hold (a column name, a listed value, a date
    layout's own text) that the dialect's encoding cannot write, named, or None."""
    texts = [("column name", c.name, c.name) for c in schema.columns] + [
        ("value", c.name, v) for c in schema.columns if c.values is not None
        for v in c.values if isinstance(v, str)] + [
        ("date layout", c.name, c.time.format) for c in schema.columns
        if c.kind == "datetime" and c.time.format]
    for what, col, v in texts:
        try:
            v.encode(dialect.encoding)
        except UnicodeEncodeError:
            where = "" if what == "column name" else f" of column {shown(col)}"
            return (f"the {what} {shown(v)}{where} has characters {dialect.encoding} "
                    "cannot write")
    return None
