"""Truncated or corrupt compressed input: a one-line DataError naming the file, from
read_table and from the commands, never a traceback from the decompressor."""
import bz2
import gzip
import io
import json
import lzma
import zipfile

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.errors import DataError

SUFFIXES = [".csv.gz", ".csv.xz", ".csv.bz2", ".csv.zip"]


def _csv_bytes(n=20000) -> bytes:
    r = np.random.default_rng(0)
    df = pd.DataFrame({"a": r.integers(0, 5, n), "b": r.choice(["x", "y", "z"], n)})
    return df.to_csv(index=False).encode()


def _compress(data: bytes, suffix: str) -> bytes:
    if suffix == ".csv.gz":
        return gzip.compress(data)
    if suffix == ".csv.xz":
        return lzma.compress(data)
    if suffix == ".csv.bz2":
        return bz2.compress(data)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("t.csv", data)
    return buf.getvalue()


def _damaged(tmp_path, suffix, how) -> str:
    data = bytearray(_compress(_csv_bytes(), suffix))
    if how == "truncated":
        data = data[:len(data) // 2]
    elif how == "corrupt":  # the middle overwritten: the stream's checks fail
        mid = len(data) // 2
        data[mid:mid + 64] = bytes(64)
    else:  # not compressed at all, whatever the name says
        data = bytearray(b"this is not compressed\n" * 50)
    p = tmp_path / f"t{suffix}"
    p.write_bytes(bytes(data))
    return str(p)


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("how", ["truncated", "corrupt", "garbage"])
def test_a_damaged_compressed_table_is_a_one_line_data_error(tmp_path, suffix, how):
    p = _damaged(tmp_path, suffix, how)
    for kw in ({}, {"as_text": True}):
        with pytest.raises(DataError) as e:
            read_table(p, **kw)
        msg = str(e.value)
        assert "\n" not in msg and repr(p) in msg, msg


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.xz"])
def test_synthesize_and_infer_schema_name_the_damaged_file(tmp_path, capsys, suffix):
    p = _damaged(tmp_path, suffix, "truncated")
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"columns": {
        "a": {"type": "numeric", "integer": True, "min": 0, "max": 4},
        "b": {"type": "categorical", "values": ["x", "y", "z"]}}}))
    for args in (["synthesize", p, "--schema", str(schema), "--epsilon", "1", "--delta",
                  "1e-9", "--out", str(tmp_path / "o.csv"), "--rows", "10", "--quiet"],
                 ["infer-schema", p, "--out", str(tmp_path / "i.json")],
                 ["evaluate", p, p, "--schema", str(schema), "--quiet"]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith("gpu-dpsyn: error: ") and err.count("\n") == 1, err
        assert repr(p) in err, err
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "i.json").exists()


def test_an_intact_compressed_table_still_reads(tmp_path):
    for suffix in SUFFIXES:
        p = tmp_path / f"ok{suffix}"
        p.write_bytes(_compress(_csv_bytes(100), suffix))
        assert len(read_table(str(p))) == 100


def _parquet_bytes() -> bytes:
    buf = io.BytesIO()
    pd.read_csv(io.BytesIO(_csv_bytes(50))).to_parquet(buf)
    return buf.getvalue()


@pytest.mark.parametrize("packed, named", [
    (lambda: _compress(_csv_bytes(), ".csv.gz"), ".csv.gz"),
    (lambda: _compress(_csv_bytes(), ".csv.xz"), ".csv.xz"),
    (lambda: _compress(_csv_bytes(), ".csv.bz2"), ".csv.bz2"),
    (lambda: _compress(_csv_bytes(), ".csv.zip"), ".csv.zip"),
    (_parquet_bytes, ".parquet")])
def test_a_compressed_or_parquet_file_named_csv_is_named_for_what_it_is(tmp_path, capsys,
                                                                         packed, named):
    # was pandas' "Error tokenizing data. C error: Expected 2 fields in line 7, saw 6":
    # the user's one mistake (the suffix) went unnamed
    p = tmp_path / "t.csv"
    p.write_bytes(packed())
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps({"columns": {
        "a": {"type": "numeric", "integer": True, "min": 0, "max": 4},
        "b": {"type": "categorical", "values": ["x", "y", "z"]}}}))
    with pytest.raises(DataError, match=named.replace(".", r"\.")):
        read_table(str(p))
    for args in (["synthesize", str(p), "--schema", str(schema), "--epsilon", "1",
                  "--delta", "1e-9", "--out", str(tmp_path / "o.csv"), "--quiet"],
                 ["infer-schema", str(p), "--out", str(tmp_path / "i.json")],
                 ["check", str(p), "--schema", str(schema)]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert err.startswith("gpu-dpsyn: error: ") and err.count("\n") == 1, err
        assert repr(str(p)) in err and named in err and "tokenizing" not in err, err
    assert not (tmp_path / "o.csv").exists() and not (tmp_path / "i.json").exists()


def test_a_header_that_starts_like_a_signature_still_reads(tmp_path):
    # only the bytes no header writes are taken as a signature: a column named PAR1 reads
    p = tmp_path / "t.csv"
    p.write_bytes(b"PAR1,BZh9\n1,2\n3,4\n")
    assert list(read_table(str(p)).columns) == ["PAR1", "BZh9"]
