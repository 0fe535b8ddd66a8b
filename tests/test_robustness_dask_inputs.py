"""The Dask path reads a CSV as read_table does: a trailing delimiter is read right, rows
with more fields than the header or a duplicated header are refused naming the file, and
an id column the schema leaves out is dropped as in memory."""
import pandas as pd
import pytest

pytest.importorskip("dask.distributed")

from gpu_dpsyn.data.schema import load_schema  # noqa: E402
from gpu_dpsyn.distributed.reading import read_partitioned  # noqa: E402
from gpu_dpsyn.errors import DataError  # noqa: E402

SCHEMA = {"columns": {"color": {"type": "categorical", "values": ["red", "blue"]},
                      "size": {"type": "numeric", "min": 0, "max": 9}}}


def test_a_trailing_delimiter_is_read_right_on_dask(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("color,size\nred,1,\nblue,2,\n")
    got = read_partitioned(str(p), load_schema(SCHEMA)).compute()
    assert got["color"].tolist() == ["red", "blue"] and got["size"].tolist() == [1, 2]


def test_extra_fields_with_values_are_refused_on_dask(tmp_path):
    p = tmp_path / "shifted.csv"
    p.write_text("color,size\nx,red,1\nx,blue,2\n")
    with pytest.raises(DataError, match="shifted.csv.*more fields"):
        read_partitioned(str(p), load_schema(SCHEMA))


def test_a_duplicated_header_is_refused_on_dask(tmp_path):
    p = tmp_path / "dup.csv"
    p.write_text("color,size,color\nred,1,red\n")
    with pytest.raises(DataError, match="dup.csv.*'color'"):
        read_partitioned(str(p), load_schema(SCHEMA))


def test_a_malformed_row_is_read_by_the_row_local_rule_on_dask(tmp_path):
    # as read_table(lenient=True) reads it: bytes that are no UTF-8 replaced; refused
    # without the rule
    from gpu_dpsyn.data.ingest import read_table
    p = tmp_path / "t.csv"
    p.write_bytes(b"color,size\nred,1\nblue,2\nred,\xff\n")
    got = read_partitioned(str(p), load_schema(SCHEMA), row_local=True).compute()
    want = read_table(p, schema=SCHEMA, lenient=True)
    assert got.astype(str).values.tolist() == want.astype(str).values.tolist()
    assert got["size"].tolist() == ["1", "2", "\ufffd"]
    from gpu_dpsyn.distributed.counting import reading_errors
    with pytest.raises(DataError, match="utf-8"), reading_errors():
        read_partitioned(str(p), load_schema(SCHEMA)).compute()
    dup = tmp_path / "dup.csv"
    dup.write_text("color,size,color\nred,1,red\n")
    with pytest.raises(DataError, match="dup.csv.*'color'"):
        read_partitioned(str(dup), load_schema(SCHEMA), row_local=True)


def test_a_quoted_line_break_where_a_file_would_be_cut_reads_as_in_memory(tmp_path):
    # Dask cut a plain CSV into 64 MB pieces at the next "\n" byte, blind to quotes: a
    # record holding a quoted line break across the cut made the run refuse (or not) by
    # that one record.  A CSV file is one partition, as read_table reads it.
    from gpu_dpsyn.data.ingest import read_table
    pad = "p" * 200
    schema = {"columns": {"a": {"type": "categorical", "values": ["x", "y"]},
                          "pad": {"type": "categorical", "values": [pad]},
                          "note": {"type": "categorical", "values": ["plain", "1\n2"]}}}
    row = f"x,{pad},plain\n".encode()
    n = (130 * 10**6) // len(row)
    p = tmp_path / "big.csv"
    with open(p, "wb") as f:
        f.write(b"a,pad,note\n" + row * (n // 2) + f'y,{pad},"1\n2"\n'.encode() +
                row * (n - n // 2))
    got = read_partitioned(str(p), load_schema(schema), row_local=True)
    got = got[got["a"] == "y"].compute()
    want = read_table(p, schema=schema)
    assert got["note"].tolist() == want.loc[want["a"] == "y", "note"].tolist() == ["1\n2"]


def _two_files(tmp_path, a: bytes, b: bytes, names=("a.csv", "b.csv")):
    d = tmp_path / "parts"
    d.mkdir()
    (d / names[0]).write_bytes(a)
    (d / names[1]).write_bytes(b)
    return d


def test_a_trailing_delimiter_in_a_later_file_is_read_right(tmp_path):
    # only the first file was looked at: the second's columns shifted by one, and every
    # one of its rows was dropped by the repair without a word
    d = _two_files(tmp_path, b"color,size\nred,1\nblue,2\n", b"color,size\nred,3,\nblue,4,\n")
    got = read_partitioned(str(d), load_schema(SCHEMA), row_local=True).compute()
    assert got["color"].tolist() == ["red", "blue"] * 2
    assert got["size"].astype(float).tolist() == [1, 2, 3, 4]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_files_with_other_columns_are_refused_naming_the_file(tmp_path, fmt):
    # a column missing from a later file was a worker's KeyError; an extra one in a later
    # Parquet file was dropped unseen (in the first file it is refused)
    first = pd.DataFrame({"color": ["red", "blue"], "size": [1, 2]})
    for later in (first[["color"]], first.assign(extra=1)):
        d = tmp_path / f"{fmt}{len(later.columns)}"
        d.mkdir()
        for name, df in (("a", first), ("b", later)):
            if fmt == "csv":
                df.to_csv(d / f"{name}.csv", index=False)
            else:
                df.to_parquet(d / f"{name}.parquet", index=False)
        with pytest.raises(DataError, match=rf"b\.{fmt}.* columns"):
            read_partitioned(str(d), load_schema(SCHEMA))


def test_a_file_name_with_glob_characters_is_that_file(tmp_path):
    # 'data[1].parquet' was read as a glob, matching data1.parquet: another table
    pd.DataFrame({"color": ["red"], "size": [1]}).to_parquet(tmp_path / "data[1].parquet")
    pd.DataFrame({"color": ["blue"], "size": [2]}).to_parquet(tmp_path / "data1.parquet")
    got = read_partitioned(str(tmp_path / "data[1].parquet"), load_schema(SCHEMA)).compute()
    assert got["color"].tolist() == ["red"]


def test_files_of_mixed_compressions_are_refused(tmp_path):
    import gzip
    from gpu_dpsyn.errors import DPSynError
    d = _two_files(tmp_path, gzip.compress(b"color,size\nred,1\n"), b"color,size\nblue,2\n",
                   ("a.csv.gz", "b.csv"))
    with pytest.raises(DPSynError, match="mixes compressions"):
        read_partitioned(str(d), load_schema(SCHEMA))


def test_an_empty_file_among_the_files_is_left_out(tmp_path):
    # a 0-byte file holds no record: it failed the whole run, unnamed
    d = _two_files(tmp_path, b"color,size\nred,1\nblue,2\n", b"")
    got = read_partitioned(str(d), load_schema(SCHEMA)).compute()
    assert got["color"].tolist() == ["red", "blue"]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_damaged_file_is_named(tmp_path, fmt):
    d = tmp_path / "parts"
    d.mkdir()
    pd.DataFrame({"color": ["red"], "size": [1]}).to_csv(d / "a.csv", index=False) \
        if fmt == "csv" else \
        pd.DataFrame({"color": ["red"], "size": [1]}).to_parquet(d / "a.parquet")
    (d / f"b.{fmt}").write_bytes(b"PAR1\x00\x01garbage" if fmt == "parquet" else b"\n\n")
    with pytest.raises(DataError, match=rf"b\.{fmt}"):
        read_partitioned(str(d), load_schema(SCHEMA))


def test_a_value_in_the_trailing_field_past_the_first_rows_is_refused_on_dask(tmp_path):
    """Dask decided "trailing delimiter" from the first 100 rows, then cut every row's
    extra field: a value there past row 100 was dropped with a pandas warning that only
    that record drew, where read_table refuses the file."""
    import warnings
    from gpu_dpsyn.data.ingest import read_table
    from gpu_dpsyn.distributed.counting import reading_errors
    rows = [f"red,{i % 9}," for i in range(300)]
    rows[201] = "red,1,x"
    p = tmp_path / "t.csv"
    p.write_text("color,size\n" + "\n".join(rows) + "\n")
    with pytest.raises(DataError, match="more fields"):
        read_table(p, schema=SCHEMA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning drawn by one record
        with pytest.raises(DataError, match="t.csv.*more fields"), reading_errors():
            read_partitioned(str(p), load_schema(SCHEMA)).compute()


def test_files_with_trailing_delimiters_in_two_column_orders_are_refused(tmp_path):
    (tmp_path / "a.csv").write_text("color,shade\nred,dark,\n")
    (tmp_path / "b.csv").write_text("shade,color\nlight,blue,\n")
    texts = {"columns": {"color": {"type": "categorical", "values": ["red", "blue"]},
                         "shade": {"type": "categorical", "values": ["dark", "light"]}}}
    with pytest.raises(DataError, match="order"):
        read_partitioned(str(tmp_path), load_schema(texts))


def test_blank_lines_before_a_header_with_trailing_delimiters_read_as_in_memory(tmp_path):
    """A blank first line made Dask read the header as a record (skipping one line where
    pandas skips blank ones)."""
    from gpu_dpsyn.data.ingest import read_table
    for start, end in (("\n\n", "\n"), (" \t\n", "\n"), ("\r\r", "\r")):
        p = tmp_path / "t.csv"
        p.write_bytes((start + f"color,size{end}" + "".join(
            f"red,{i % 9},{end}" for i in range(300))).encode())
        want = read_table(p, schema=SCHEMA)
        got = read_partitioned(str(p), load_schema(SCHEMA)).compute()
        assert len(got) == len(want) == 300, repr(start)
        assert got["color"].tolist() == want["color"].tolist()


def test_a_row_wider_than_the_header_is_named_in_words_on_dask(tmp_path, client):
    # past the rows read ahead on the client, the workers' read said "cannot read the
    # table: Error tokenizing data. C error: Expected 2 fields in line 152, saw 3"
    from gpu_dpsyn.distributed.counting import dask_counts
    (tmp_path / "a.csv").write_text("color,size\nred,1\n")
    (tmp_path / "b.csv").write_text("color,size\n" + "red,1\n" * 150 + "red,1,2\n")
    with pytest.raises(DataError, match="data row 151 has 3 fields, the header 2"):
        dask_counts(client, str(tmp_path), load_schema(SCHEMA), "cpu", "repair")
