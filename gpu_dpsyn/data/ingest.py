"""Reading and writing tables: pandas on the host, or cuDF straight into GPU memory.

The format follows the file name: .csv (plain or .gz/.bz2/.xz/.zip, pandas' compression)
or .parquet (pyarrow, a dependency).  With cuDF (the optional `cudf` extra) a Parquet
file is parsed on the GPU and encode() bins its columns there, so the private table
never round-trips through the host.  CSV goes to pandas: cuDF's CSV reader does not keep
to the row-local rules (choose_engine).
"""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io
import lzma
import os
import re
import warnings
import zipfile
import zlib
from collections import Counter
from pathlib import Path

import pandas as pd

from gpu_dpsyn.data import csv_text, line_ends, parquet_types
from gpu_dpsyn.data.csv_header import (check_header, check_separator, default_index,
                                       reread_trailing)
from gpu_dpsyn.data.dialect import (DEFAULT as DEFAULT_DIALECT, Dialect, number_columns,
                                    plain_numbers, unwritable)
from gpu_dpsyn.data.files import check_output, packing, replacing, target_of
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.data.schema import Schema, load_schema
from gpu_dpsyn.errors import DataError, DPSynError

ENGINES = ("auto", "pandas", "cudf")
CUDF_SUFFIXES = (".parquet",)
CSV_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip")


def table_format(path, flag: str | None = None) -> str:
    """'csv' or 'parquet' from the file name.  Anything else is refused up front: guessing
    would write CSV text into a file named .xlsx, or fail after the budget is spent."""
    name = Path(path).name.lower()
    if name.endswith(".parquet"):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    where = f"{flag} {shown(str(path))}" if flag else shown(str(path))
    raise DPSynError(f"{where}: cannot tell the table format from the name; use "
                     f"{', '.join(CSV_SUFFIXES)} or .parquet")


def check_writable(schema, path, flag: str = "--out") -> None:
    """Refuse, before anything is read, a schema whose output the format cannot store."""
    if table_format(path, flag) != "parquet":
        why = unwritable(schema, schema.csv)
        if why:  # (found once the fit drew it, after the spend)
            raise DPSynError(f"{flag} {shown(str(path))}: {why}; list it in its spelling "
                             "there, or write another \"encoding\" under \"csv\"")
        return
    from gpu_dpsyn.data.dtypes import output_dtype, value_kind
    for col in schema.columns:
        if col.values is None:  # (categorical and lookup columns list values)
            continue
        dtype = output_dtype(col)
        as_text = isinstance(dtype, pd.StringDtype)  # written as their text
        lo, hi = (0, 2 ** 64) if str(dtype).lower() == "uint64" else (-2 ** 63, 2 ** 63)
        big = next((v for v in col.values if isinstance(v, int) and not isinstance(v, bool)
                    and not lo <= v < hi), None)
        if big is not None and not as_text:  # (found once the fit drew it, after the spend)
            raise DPSynError(f"{flag} {shown(str(path))}: column {shown(col.name)} lists "
                             f"{shown(big)}, past the 64-bit integers Parquet stores; give "
                             "it \"dtype\": \"string\" in the schema, or write CSV")
        if value_kind(col.values) != "text":
            continue
        if not all(isinstance(v, str) for v in col.values) and \
                _family_name(dtype) in ("object", "category"):
            raise DPSynError(f"{flag} {shown(str(path))}: column {shown(col.name)} mixes text and "
                             "numbers, which Parquet cannot store in one column; give it "
                             "\"dtype\": \"string\" in the schema, or write CSV")


# what pyarrow's conversions raise for a column it cannot store
_ARROW_ERRORS = (ValueError, TypeError, NotImplementedError, OverflowError)


def parquet_problem(df, error: BaseException) -> str:
    """What pyarrow could not store, naming the first column it fails on (its own
    message names none)."""
    import pyarrow as pa
    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
    for name in df.columns:
        try:
            pa.Array.from_pandas(df[name])
        except _ARROW_ERRORS as e:
            why = (str(e).strip().splitlines() or [type(e).__name__])[0]
            return (f"column {shown(str(name))} cannot be stored ({shown(why)}): mixed types "
                    "need \"dtype\": \"string\" in the schema, or write CSV")
    return shown(first)


def _family_name(d) -> str:
    return "category" if isinstance(d, pd.CategoricalDtype) else str(d)


def write_table(df, path, flag: str | None = None, dialect: Dialect = DEFAULT_DIALECT,
                then=None, dictionaries=None) -> None:
    """Write df in the format its name asks for (checked by table_format first), whole or
    not at all: to a temporary file beside it, which then replaces it (files.replacing);
    a failure is a DPSynError naming the path and leaves an earlier file as it was.  A
    CSV is written in `dialect` (the schema's "csv").  then(): run once the table is
    written, before it takes its name (its ledger); if it fails, the table is not.
    dictionaries: the Arrow types of a Parquet file's dictionary columns, by name
    (dtypes.dictionary_types of the schema)."""
    if not isinstance(df, pd.DataFrame):
        raise DataError(f"write_table needs a pandas DataFrame, got {type(df).__name__}")
    if not isinstance(path, (str, os.PathLike)):
        raise DPSynError(f"write_table's path must be a file path (str or os.PathLike), got "
                         f"{type(path).__name__}")
    twice = sorted(c for c, k in Counter(map(str, df.columns)).items() if k > 1)
    if twice:  # one header name twice: a file read_table refuses (Parquet: a KeyError)
        raise DataError(f"cannot write {shown(str(path))}: the table has more than one "
                        f"column named {', '.join(map(repr, twice))}; rename them")
    fmt = table_format(path, flag)
    check_output(path, flag)  # a missing directory, a device: named before writing
    name = target_of(path).name
    suffix = Path(name).suffix.lower()  # the real name's (the temporary one ends in .tmp)
    with replacing(path, flag) as tmp:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            try:  # (as df.to_parquet writes it, in the types of written_table)
                pq.write_table(parquet_types.written_table(df, dictionaries), tmp)
            except _ARROW_ERRORS as e:
                raise DataError(f"cannot write {shown(str(path))} as Parquet: "
                                f"{parquet_problem(df, e)}") from None
        else:
            with _compressing(tmp, suffix, name) as stream:
                _csv_into(df, stream, dialect)
        if then is not None:
            then()


def _csv_into(df, stream, dialect: Dialect = DEFAULT_DIALECT) -> None:
    """df as pandas' to_csv(index=False) text into a binary stream, in the dialect: by
    csv_text, or where it leaves a kind to pandas, by pandas (its text, our stream)."""
    fmts = csv_text.formatters(df, dialect)
    if fmts is None:  # (pandas' decimal= leaves the floats of object and category
        # columns their ".")
        df = df if dialect.decimal == "." else df.apply(csv_text.floats_as_text,
                                                        decimal=dialect.decimal)
        df.to_csv(stream, index=False, mode="wb", sep=dialect.separator,
                  decimal=dialect.decimal, encoding=dialect.encoding)
    else:
        csv_text.write_csv(df, fmts, stream, dialect)


@contextlib.contextmanager
def _compressing(tmp, suffix: str, name: str):
    """A binary stream into tmp, compressed as the real name's suffix asks, with fixed
    timestamps (pandas' gzip and zip carry the clock): one seed, the same bytes."""
    if suffix == ".zip":  # one member named after the table, as pandas names it
        member = zipfile.ZipInfo(name[:-len(suffix)])  # dated 1980-01-01
        member.compress_type = zipfile.ZIP_DEFLATED
        with zipfile.ZipFile(tmp, "w") as archive, \
                archive.open(member, "w", force_zip64=True) as stream:  # any size
            yield stream
        return
    with open(tmp, "wb") as raw:
        if suffix == ".gz":  # the header names the table, not the temporary file
            packed = gzip.GzipFile(name[:-len(suffix)], "wb", fileobj=raw, mtime=0)
        else:
            packed = {".bz2": bz2.BZ2File, ".xz": lzma.LZMAFile}.get(suffix)
            packed = packed(raw, "wb") if packed else contextlib.nullcontext(raw)
        with packed as stream:
            yield stream


def cudf_available() -> bool:
    try:
        import cudf  # noqa: F401
    except Exception:  # not installed, or no usable device
        return False
    return True


def choose_engine(engine: str, path: str, gpu: bool) -> str:
    """'auto': cuDF for a Parquet file when it is installed and the run is on the GPU;
    pandas for a CSV, as cuDF's CSV reader ends a record at a lone "\r" and keeps bytes
    that are no UTF-8, both of which the row-local rule reads otherwise (line_ends.py,
    lenient_options)."""
    if engine not in ENGINES:
        raise DPSynError(f"unknown reader {engine!r}; choose one of {ENGINES}")
    if engine == "auto":
        ok = gpu and Path(path).suffix == ".parquet" and cudf_available()
        return "cudf" if ok else "pandas"
    if engine == "cudf" and Path(path).suffix not in CUDF_SUFFIXES:
        raise DPSynError(_CUDF_CSV.format(shown(str(path))))
    if engine == "cudf" and not cudf_available():
        raise DPSynError("reader 'cudf' needs cuDF (pip install 'gpu_dpsyn[cudf]') and a CUDA "
                         "device; use --reader pandas")
    return engine


# cuDF's CSV reader ends a record at a lone "\r": one individual's record read as two
# would count twice against a bound calibrated to one (fail closed)
_CUDF_CSV = ("reader 'cudf' reads Parquet files only, not {}: its CSV reader ends a record "
             "at a lone carriage return, so one record could count as two; use --reader "
             "pandas")


# only an empty cell is missing: "NA", "None", "null" are category values like any other
_CSV_NA = {"keep_default_na": False, "na_values": [""]}
_TEXT_KINDS = ("categorical", "datetime", "id")  # read as written: "02134" stays "02134"


def csv_options(schema=None, as_text: bool = False) -> dict:
    """read_csv arguments: the schema says which columns are text (None: pandas guesses
    numbers; as_text: every column is text, for inferring a schema)."""
    opts = dict(_CSV_NA)
    if as_text:
        opts["dtype"] = str
    elif schema is not None:
        opts["dtype"] = {c.name: str for c in schema.columns  # (a lookup lists values)
                         if c.kind in _TEXT_KINDS or c.values is not None}
        if not schema.csv.plain:  # read by the row-local rule, value by value (dialect)
            opts["dtype"].update({c: str for c in number_columns(schema)})
        # a column that lists "" as a value (and has no null) reads empty cells as ""
        opts["na_values"] = {c.name: [""] for c in schema.columns
                             if not (c.values is not None and "" in c.values and
                                     not c.nullable)}
    return opts


def without_ignored(df, schema):
    """df without the schema's "ignored_columns", once the file's checks (fields a row,
    a header naming a column twice) have read them as every other: they are never used,
    and their memory goes at once."""
    gone = [c for c in (schema.ignored if schema is not None else ()) if c in df.columns]
    return df.drop(columns=gone) if gone else df


def lenient_options() -> dict:
    """A CSV read by the row-local rule (on_invalid="repair", data/repair.py): bytes that
    are no UTF-8 read as U+FFFD (text that no schema lists), within their field, so such a
    record is a changed record, not a refusal of the file.  Rows with more fields than the
    header are still refused: cutting them is not row-local, as a quote left open makes
    one field of the rows up to the next quote, and R's row names shift every row."""
    return {"encoding_errors": "replace"}


def read_table(path: str, engine: str = "pandas", schema=None, as_text: bool = False,
               lenient: bool = True, dialect: Dialect | None = None):
    """A pandas DataFrame (engine 'pandas') or a cuDF one (engine 'cudf').  Given the
    schema, a CSV's categorical, datetime and id columns are read as text and only empty
    cells are missing; encode() then checks every value against the schema.  lenient (as
    fit's default on_invalid="repair"): a CSV's bytes that are no UTF-8 are read by the
    row-local rule (lenient_options); False: refused, as on_invalid="error" refuses bad
    values.  A CSV is read in the schema's dialect ("csv"), else in `dialect` (a draft's),
    else as UTF-8 separated by commas."""
    if not isinstance(path, (str, os.PathLike)):
        raise DPSynError(f"read_table's path must be a file path (str or os.PathLike), got "
                         f"{type(path).__name__}")
    if schema is not None and not isinstance(schema, Schema):  # a path or a dict, as fit()
        schema = load_schema(schema)                            # takes
    p = Path(path)
    try:
        is_file, there = p.is_file(), p.exists()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        is_file = there = False
    if not is_file:
        raise DPSynError(f"cannot read {shown(str(path))}: " + (
            "not a regular file (a device, FIFO or socket); give a table file" if there else
            "no such file"))
    if not isinstance(engine, str):  # read_table(path, schema): its repr is the schema's
        raise DPSynError(f"read_table's reader must be 'pandas' or 'cudf', got a "
                         f"{type(engine).__name__} (a schema goes as schema=)")
    if engine not in ("pandas", "cudf"):
        raise DPSynError(f"unknown reader {engine!r}; use choose_engine() for 'auto'")
    parquet = table_format(path) == "parquet"
    d = schema.csv if schema is not None else dialect or DEFAULT_DIALECT
    if engine == "cudf" and not parquet:
        raise DPSynError(_CUDF_CSV.format(shown(str(path))))
    with reading(path):
        binary = parquet_types.check(p, schema) if parquet else []
        if engine == "cudf":
            import cudf
            return without_ignored(parquet_types.index_columns(cudf.read_parquet(p)), schema)
        if parquet:
            df = parquet_types.index_columns(pd.read_parquet(p))
            return without_ignored(parquet_types.as_text(df, binary), schema)
        opts = dict(csv_options(schema, as_text), **d.read_options(),
                    **(lenient_options() if lenient else {}))
        with warnings.catch_warnings():  # pandas guesses a numeric column's type chunk by
            # chunk and warns where two disagree: one record's text would decide that
            # warning, and repair reads each value alone whatever the guess
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            df = line_ends.read_csv(p, **opts)
            check_separator(p, df.columns, schema, d)
            if not default_index(df):  # rows with more fields than the header
                df = reread_trailing(p, df, opts)
        check_header(p, df, d, schema)
        if schema is not None:  # each value alone: the row-local rule
            df = plain_numbers(df, schema)
        return without_ignored(df, schema)


def csv_as_text(df):
    """df as read_table(as_text=True) reads the CSV that write_table writes of it: a
    Parquet table's timestamps, numbers and missing values as that text, so that it
    compares with a CSV table (evaluate without a schema)."""
    buf = io.BytesIO()
    _csv_into(df, buf)
    buf.seek(0)
    return pd.read_csv(buf, **csv_options(as_text=True))


@contextlib.contextmanager
def reading(path):
    """Reading the file `path`: a failure to read it becomes one line naming it (a
    DPSynError, which is a ValueError, is said once, as it is)."""
    try:
        yield
    except DPSynError:
        raise
    except ImportError as e:  # Parquet without pyarrow, say
        raise DPSynError(f"cannot read {shown(str(path))}: {e}") from None
    except READ_ERRORS as e:
        raise DataError(read_error(path, e)) from None


# what reading a damaged file raises: pandas' and pyarrow's parse and I/O errors, and the
# decompressors' own (a truncated .gz or .xz ends in EOFError, a damaged .xz in
# LZMAError, a damaged .zip in BadZipFile or zlib.error)
READ_ERRORS = (OSError, ValueError, UnicodeDecodeError, RuntimeError, EOFError,
               lzma.LZMAError, zipfile.BadZipFile, zlib.error)


def read_error(path, e: BaseException) -> str:
    """One line naming the file and what was wrong with it."""
    first = (str(e).strip().splitlines() or [""])[0] or type(e).__name__
    packed = packing(path)
    if packed and isinstance(e, (EOFError, lzma.LZMAError, zipfile.BadZipFile, zlib.error,
                                 OSError)):
        return (f"cannot read {shown(str(path))}: the {packed} file is truncated or damaged "
                f"({first})")
    if isinstance(e, UnicodeDecodeError):  # the file's own encoding is another
        return (f"cannot read {shown(str(path))}: bytes that are no {e.encoding} text "
                f"({first}); name the file's encoding as \"encoding\" under \"csv\" in "
                "the schema (cp1252 for a Windows spreadsheet, say)")
    said = malformed(first)
    if said:
        return f"cannot read {shown(str(path))}: {said}"
    return f"cannot read {shown(str(path))} as a table: {first}"


def malformed(first: str) -> str | None:
    """pandas' tokenizer's error `first` in words, by data row (pandas counts records,
    the header as the first, or from 0 at the header), or None for another error."""
    wide, open_ = _FIELDS.search(first), _OPEN_QUOTE.search(first)
    if wide:
        want, line, saw = map(int, wide.groups())
        return (f"data row {line - 1:,} has {saw} fields, the header {want} (a separator "
                "inside an unquoted value?); a row with more fields than the header is "
                "refused, not cut: fix it")
    if open_:
        return (f"a quote opened in data row {int(open_.group(1)):,} is never closed, so no "
                "row after it can be told apart: close it, or double a quote inside a "
                "quoted value (\"\")")
    return None


# pandas' tokenizer's words for a row wider than the header and for a quote left open
_FIELDS = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")
_OPEN_QUOTE = re.compile(r"EOF inside string starting at row (\d+)")
