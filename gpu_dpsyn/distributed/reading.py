"""A partitioned table as a dask DataFrame: one file, a directory of tables or a glob,
CSV or Parquet, read as ingest.read_table reads one file."""
from __future__ import annotations

import glob
import os

from gpu_dpsyn.data import line_ends, parquet_types
from gpu_dpsyn.data.dialect import plain_numbers
from gpu_dpsyn.data.files import packing
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import DataError, DPSynError
from gpu_dpsyn.data.csv_header import (check_header, check_separator, check_trailing,
                                       default_index)
from gpu_dpsyn.data.ingest import (csv_options, lenient_options, reading, table_format,
                                   without_ignored)

# binned on float64 anyway (encoding); a declared dtype keeps Dask from inferring int64
# from the first block and failing on a later block's missing value
_NUMBER_KINDS = ("numeric", "derived")


def table_files(path) -> list[str]:
    """The files `path` names: itself, a directory's tables (names starting with '.' or
    '_', such as _SUCCESS, left out) or a glob's matches; one format for all.  Among
    several, an empty file (0 bytes: no record, no header) is left out."""
    p = str(path)
    if "://" in p:  # a remote (fsspec) URL: Dask lists it
        table_format(p)
        return [p]
    if os.path.isdir(p):
        files = [f for f in sorted(glob.glob(os.path.join(glob.escape(p), "*")))
                 if os.path.isfile(f) and not os.path.basename(f).startswith((".", "_"))]
    elif os.path.isfile(p):  # a file's own name, "[1]" and all, before any glob
        files = [p]
    else:
        files = [f for f in sorted(glob.glob(p)) if os.path.isfile(f)] \
            if glob.has_magic(p) else []
    if len(files) > 1:
        files = [f for f in files if os.path.getsize(f) > 0] or files[:1]
    if not files:
        raise DPSynError(f"cannot read {shown(p)}: no table file there")
    formats = {table_format(f) for f in files}  # an unknown suffix is refused here
    if len(formats) > 1:
        raise DPSynError(f"{shown(p)} mixes CSV and Parquet files; give one format")
    packed = {packing(f) or "none" for f in files}  # Dask takes the first file's for all
    if len(packed) > 1:
        raise DPSynError(f"{shown(p)} mixes compressions ({', '.join(sorted(packed))}); "
                         "give one")
    return files


def read_partitioned(path, schema, row_local: bool = False):
    """A dask DataFrame of the files `path` names.  CSV is read as read_table reads it
    (text columns as written, only empty cells missing; numbers as float64, or for
    row_local, the row-local rule's reading: numbers as text, so that a cell that is no
    number reaches the repair instead of failing its whole partition, and bytes that are
    no UTF-8 read as lenient_options says).  A CSV file is one partition: a record may
    hold a quoted line break, so where a file could be cut is known only by reading it
    from its start (Dask cuts at the next "\\n" byte, and one record across the cut would
    refuse the run); a table of several files is read in parallel."""
    import dask.dataframe as dd
    from dask.dataframe.io.csv import make_reader  # dd.read_csv's own, for our parser
    files = table_files(path)
    if table_format(files[0]) == "parquet":  # each file's declared types, as read_table
        import pyarrow.parquet as pq
        fields = [_named(f, pq.read_schema) for f in files]  # each footer read once
        binary = sorted({b for f, a in zip(files, fields)
                         for b in parquet_types.check(f, schema, a)})
        same_columns(files, [a.names for a in fields])
        # index=False: a named index is a column, as parquet_types.index_columns reads it;
        # a row number (__index_level_0__, a RangeIndex, which Dask failed to read) none
        df = without_ignored(dd.read_parquet(_literal(files), index=False), schema)
        return df.map_partitions(parquet_types.as_text, binary) if binary else df
    d = schema.csv  # its dialect (data/dialect.py): numbers as text where not plain
    opts = dict(csv_options(schema), **d.read_options())
    opts["dtype"].update({c.name: str if row_local or not d.plain else "float64"
                          for c in schema.columns
                          if c.kind in _NUMBER_KINDS and c.values is None})  # (no lookup)
    if row_local:
        opts.update(lenient_options())
    heads = [_named(f, _first_rows, opts, schema) for f in files]
    same_columns(files, [list(h.columns) for h, _ in heads])
    trailing = any(t for _, t in heads)
    if trailing:  # the trailing field read as a column of its own, and checked empty in
        # every row (as read_table checks it), not cut: a value there past the first rows
        # was dropped, with a warning only that record drew.  The names are given, so
        # every file must hold the columns in one order
        order = [list(h.columns) for h, _ in heads]
        names = [str(c) for c in heads[0][0].columns] + [TRAILING]
        blank = {0}  # the blank lines before each file's header, where they are counted
        if all(t for _, t in heads):  # pandas finds each header (past blank lines)
            opts.update(index_col=False, header=0, names=names)
        else:  # some files without: their rows are a field short of the names, which
            # header=0 refuses, so the header is a line skipped (after the blank ones)
            blank = {_blank_lines(f) for f in files}
            opts.update(index_col=False, header=None, skiprows=min(blank) + 1, names=names)
        if any(o != order[0] for o in order[1:]) or len(blank) > 1:
            raise DataError(f"cannot read {shown(path)}: its files end rows with a delimiter "
                            "and order their columns, or start, differently; give every "
                            "file one order and no blank lines before the header")
    read_csv = make_reader(line_ends.read_csv, "read_csv", "CSV")  # Dask's, our parser
    df = read_csv(_literal(files), blocksize=None, **opts)
    if trailing:
        df = df.map_partitions(_no_trailing_value, ", ".join(map(shown, files)),
                               meta=df._meta.drop(columns=TRAILING))
    df = without_ignored(df, schema)
    return df if d.plain else df.map_partitions(plain_numbers, schema)


TRAILING = "\x00trailing field"  # a name no header gives


def _blank_lines(path) -> int:
    """The blank lines (empty, or spaces alone) before a file's header, which pandas'
    reader skips; lines end in \\n, \\r\\n or \\r alone (line_ends)."""
    from pandas.io.common import get_handle
    with get_handle(path, "rb", compression="infer", is_text=False) as handles:
        head = handles.handle.read(1 << 16)
    head = head.removeprefix(b"\xef\xbb\xbf").replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return next((i for i, line in enumerate(head.split(b"\n")) if line.strip()), 0)


def _no_trailing_value(part, where: str):
    """A partition without its trailing field, which must be empty in every row (a
    trailing delimiter); DataError as read_table's otherwise."""
    field = part[TRAILING]
    if (field.notna() & (field.astype(str) != "")).any():
        raise DataError(f"cannot read {where}: its data rows have more fields than the "
                        "header, which would shift every column; fix the header or the rows")
    return part.drop(columns=TRAILING)


def _literal(files) -> list:
    """Local file names as Dask's readers (fsspec) take them literally: they glob
    "[1]" too."""
    return [f if "://" in f else glob.escape(f) for f in files]


def _named(path, read, *args):
    """read(path, *args), a failure to read the file as one line naming it (as
    read_table's: ingest.reading)."""
    with reading(path):
        return read(path, *args)


def same_columns(files, columns) -> None:
    """DataError naming a file whose columns are not the first file's (Dask reads every
    file by the first's: a column missing later failed a worker, an extra one was
    dropped unseen)."""
    for f, cols in zip(files[1:], columns[1:]):
        if set(cols) != set(columns[0]):
            raise DataError(f"cannot read {shown(f)}: its columns {shown(sorted(cols))} are "
                            f"not those of {shown(files[0])} ({shown(sorted(columns[0]))}); "
                            "give every file the same columns")


def _first_rows(path, opts: dict, schema) -> tuple:
    """(header and first rows, trailing) of one file read as read_table reads it: a header
    naming a column twice, or rows with more fields than the header, are refused as there
    (DataError naming the file); trailing: the rows end in a trailing delimiter (then the
    header alone is returned, and the workers check every row's last field)."""
    head = line_ends.read_csv(path, nrows=100, **opts)
    check_separator(path, head.columns, schema, schema.csv)
    check_header(path, head, schema.csv, schema)
    if default_index(head):
        return head, False
    check_trailing(path, head)  # these rows; every row's, on the workers
    return line_ends.read_csv(path, nrows=0, **opts), True  # the header's names
