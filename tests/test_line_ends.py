"""Where a CSV record ends: at "\n" or "\r\n" (a file's own line ends), never at a lone
"\r" inside a record.  pandas (and Arrow, and the csv module) also end a record at a lone
"\r": one record written with a stray carriage return would count as two, so one person
would weigh twice in every marginal, and the second half would land in the wrong
columns.  A file whose header ends in a lone "\r" (old Mac text) keeps pandas' reading."""
import gzip

import pandas as pd
import pytest

from gpu_dpsyn.data import line_ends
from gpu_dpsyn.data.ingest import read_table

SCHEMA = {"columns": {"color": {"type": "categorical", "values": ["red", "blue"]},
                      "size": {"type": "numeric", "min": 0, "max": 9}}}


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"])
def test_a_lone_carriage_return_stays_in_its_record(tmp_path, nl):
    p = tmp_path / "t.csv"
    p.write_bytes(nl.join([b"size,color", b"1,re\rd", b"2,blue", b"3,", b""]))
    df = read_table(p, schema=SCHEMA)
    assert df.columns.tolist() == ["size", "color"]
    assert df["size"].tolist() == [1, 2, 3]
    assert df["color"].tolist()[:2] == ["re\rd", "blue"] and pd.isna(df["color"][2])


@pytest.mark.parametrize("nl", [b"\n", b"\r\n"])
def test_the_last_column_reads_alike_at_either_line_end(tmp_path, nl):
    # numbers stay numbers, an empty last field is missing, a quoted one keeps its comma
    p = tmp_path / "t.csv"
    p.write_bytes(nl.join([b"color,size", b"red,1.5", b"blue,", b'"r,d",7', b""]))
    df = read_table(p)
    assert df["size"].dtype == float and df["size"].tolist()[::2] == [1.5, 7.0]
    assert pd.isna(df["size"][1]) and df["color"].tolist() == ["red", "blue", "r,d"]


def test_a_crlf_file_is_read_across_reading_chunks(tmp_path):
    # "\r" ending one chunk of the reader and "\n" starting the next
    rows = [b"%d,red" % i for i in range(200_000)]
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(b"\r\n".join([b"size,color"] + rows + [b""])))
    df = read_table(p)
    assert len(df) == 200_000 and (df["color"] == "red").all()
    assert df["size"].tolist() == list(range(200_000))


def test_old_mac_line_ends_read_as_pandas_reads_them(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"color,size\rred,1\rblue,2\r")
    df = read_table(p)
    assert df["color"].tolist() == ["red", "blue"] and df["size"].tolist() == [1, 2]


def test_the_stream_turns_only_crlf_into_lf():
    import io
    data = b"a,b\r\n" + b"x\ry,\r\r\n" * 50_000 + b"\r"
    s = line_ends.LineEnds(io.BytesIO(data))
    assert not s.lone_cr
    got = b"".join(iter(lambda: s.read(4093), b""))
    assert got == data[:-1].replace(b"\r\n", b"\n") + b"\n"  # the last "\r" ends a line
    assert line_ends.LineEnds(io.BytesIO(b"a,b\rx,y\r\n")).lone_cr
    assert not line_ends.LineEnds(io.BytesIO(b"")).lone_cr


def test_dask_reads_a_lone_carriage_return_as_read_table_does(tmp_path):
    pytest.importorskip("dask.distributed")
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.distributed.reading import read_partitioned
    p = tmp_path / "t.csv"
    p.write_bytes(b"color,size\r\nre\rd,1\r\nblue,\r\nred,3\r\n")
    for row_local in (False, True):
        got = read_partitioned(str(p), load_schema(SCHEMA), row_local=row_local).compute()
        assert got["color"].tolist() == ["re\rd", "blue", "red"]
        assert got["size"].astype(float).fillna(-1).tolist() == [1, -1, 3]


class _ShortReads:
    """A raw stream that hands back at most a few bytes a read, so that every byte
    boundary of the text is a read boundary somewhere."""
    def __init__(self, data: bytes, seed: int):
        import random
        self.data, self.at, self.r = data, 0, random.Random(seed)

    def read(self, n=-1):
        k = self.r.randint(1, 3)
        out = self.data[self.at:self.at + min(k, n if n >= 0 else k)]
        self.at += len(out)
        return out


@pytest.mark.parametrize("seed", range(5))
def test_a_carriage_return_at_any_read_boundary(seed):
    # "\r" as the last byte of one read and "\n" the first of the next: one line end
    data = b"a,b\r\n" + b"x\r\ry\r\n\r\r\n" * 50 + b"z\r\n"
    s = line_ends.LineEnds(_ShortReads(data, seed))
    got = b"".join(iter(lambda: s.read(5), b""))
    assert got == data.replace(b"\r\n", b"\n")


@pytest.mark.parametrize("pad", [line_ends._CHUNK - 4, line_ends._CHUNK - 3,
                                 3 * line_ends._CHUNK])
def test_a_header_at_or_past_a_chunk(tmp_path, pad):
    # the header's line end at the chunk's edge, or chunks past it
    name = "c" * pad
    p = tmp_path / "t.csv"
    p.write_bytes(f"a,{name}\r\n1,x\ry\r\n".encode())
    df = read_table(p)
    assert df.columns.tolist() == ["a", name] and df[name].tolist() == ["x\ry"]


def test_a_file_ending_in_a_lone_carriage_return_ends_its_last_record(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"a,b\r\n1,x\r\n2,y\r")
    assert read_table(p)["b"].tolist() == ["x", "y"]
