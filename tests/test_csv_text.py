"""The Arrow CSV writer writes pandas' to_csv text byte for byte (pandas is the independent
reference), falls back to pandas for what it does not format, and compresses
deterministically."""
import bz2
import gzip
import io
import lzma
import time
import zipfile

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from gpu_dpsyn.core import threads
from gpu_dpsyn.data import csv_text
from gpu_dpsyn.data.ingest import write_table


def ours(df) -> bytes:
    fmts = csv_text.formatters(df)
    assert fmts is not None, df.dtypes
    out = io.BytesIO()
    csv_text.write_csv(df, fmts, out)
    return out.getvalue()


def pandas_text(df) -> bytes:
    return df.to_csv(index=False).encode()


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.decode().splitlines(), b.decode().splitlines()
    i = next((i for i, (x, y) in enumerate(zip(la, lb)) if x != y), min(len(la), len(lb)))
    return f"line {i}: {la[i:i + 1]} vs pandas {lb[i:i + 1]}"


def assert_as_pandas(df):
    a, b = ours(df), pandas_text(df)
    assert a == b, first_difference(a, b)


def every_kind(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-12, 22, n)
    x[::7] = np.nan
    x[1:4] = [-0.0, np.inf, -np.inf]
    texts = ["a", "b,c", 'q"x', "", "line\nbreak", "ünï", " sp "]
    cat = pd.Categorical(rng.choice(texts, n), categories=texts + ["unused"])
    cat[rng.random(n) < 0.1] = np.nan
    some = np.where(rng.random(n) < 0.2, None, rng.choice(texts, n))
    return pd.DataFrame({
        "f": x,
        "whole": rng.integers(-10**6, 10**6, n).astype(float),
        "F": pd.array(np.where(rng.random(n) < .1, None, np.rint(x * 100) / 100),
                      dtype="Float64"),
        "i": rng.integers(-10**12, 10**12, n),
        "u": rng.integers(0, 2**63, n, dtype=np.uint64) * np.uint64(2),
        "I": pd.array(np.where(rng.random(n) < .2, None, rng.integers(0, 100, n)),
                      dtype="Int64"),
        "b": rng.random(n) < .5,
        "B": pd.array(np.where(rng.random(n) < .2, None, rng.random(n) < .5),
                      dtype="boolean"),
        "c": cat,
        "o": pd.Series(some, dtype=object),
        "s": pd.Series(some, dtype="string"),
        "a,b": np.arange(n),  # a header that needs quotes
    })


@pytest.mark.parametrize("seed", [0, 1])
def test_every_kind_is_pandas_text(seed):
    assert_as_pandas(every_kind(3000, seed))


@pytest.mark.parametrize("sep,decimal,encoding", [(";", ",", "cp1252"), ("\t", ".", "utf-8"),
                                                  ("|", ",", "latin-1")])
def test_every_kind_in_a_dialect_is_pandas_text(sep, decimal, encoding):
    from gpu_dpsyn.data.dialect import Dialect
    df = every_kind(3000, 3)
    df["semi;colon"] = df.pop("a,b")
    for c in ("c", "o", "s"):  # text of the encoding (not U+FFFD), with the separators
        df[c] = df[c].map(lambda v: v if not isinstance(v, str) else v + ";|\t",
                          na_action="ignore").astype(df[c].dtype) if c != "c" else \
            df[c].cat.rename_categories(lambda v: v + ";|\t")
    d = Dialect(sep, decimal, None, encoding)
    fmts = csv_text.formatters(df, d)
    out = io.BytesIO()
    csv_text.write_csv(df, fmts, out, d)
    want = df.to_csv(index=False, sep=sep, decimal=decimal).encode(encoding)
    assert out.getvalue() == want


def test_floats_at_every_magnitude_and_layout_boundary():
    rng = np.random.default_rng(2)
    n = 200_000
    x = np.concatenate([
        rng.standard_normal(n) * 10.0 ** rng.integers(-320, 308, n),
        rng.standard_normal(n) * 10.0 ** rng.integers(-7, 18, n),
        np.rint(rng.standard_normal(n) * 1e6) / 10.0 ** rng.integers(0, 9, n),
        [1e-4, np.nextafter(1e-4, 0), 1e10, np.nextafter(1e10, 0), 1e16, np.nextafter(1e16, 0),
         5e-324, 1.7976931348623157e308, 0.1 + 0.2, 2.5, -0.0]])
    assert_as_pandas(pd.DataFrame({"x": x, "k": np.arange(len(x))}))


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_datetimes_in_pandas_layout_per_column(unit):
    """Dates alone for midnights, else the fraction digits the finest value needs, in each
    unit, before and after 1970, with NaT."""
    rng = np.random.default_rng(3)
    n, day = 2000, 86_400 * 10**9
    for step in (day, 10**9, 10**6, 10**3, 1):
        v = rng.integers(-20_000, 20_000, n) * day + rng.integers(0, day // step, n) * step
        t = pd.Series(v.astype("datetime64[ns]")).astype(f"datetime64[{unit}]")
        t[::5] = pd.NaT
        assert_as_pandas(pd.DataFrame({"t": t, "k": np.arange(n)}))


def test_chunks_and_blocks_join_in_order(monkeypatch):
    """Many chunks, each split over the threads: the same text as one piece."""
    monkeypatch.setattr(csv_text, "ROWS", 97)
    monkeypatch.setattr(threads, "MIN_BLOCK", 16)
    df = every_kind(1000, 4)
    assert_as_pandas(df)
    assert_as_pandas(df.iloc[:0])  # no rows: the header alone


@pytest.mark.parametrize("df", [
    pd.DataFrame({"t": pd.date_range("2020-01-01", periods=3, tz="UTC"), "k": [1, 2, 3]}),
    pd.DataFrame({"f": np.array([0.1, 1.0, 2.5], np.float32), "k": [1, 2, 3]}),
    pd.DataFrame({"o": pd.Series([1, "a", 2.5], dtype=object), "k": [1, 2, 3]}),
    pd.DataFrame({"c": pd.Categorical([1, 2, None]), "k": [1, 2, 3]}),
    pd.DataFrame({"t": np.array(["0001-01-01", "2020-01-01", "NaT"], "datetime64[s]")
                  - np.timedelta64(1, "s"), "k": [1, 2, 3]}),
    pd.DataFrame({"only": ["", "a", None]}),
    pd.DataFrame({0: [1, 2], None: [3, 4]}),
], ids=["tz", "float32", "mixed", "int-categories", "year-0", "one-column", "names"])
def test_other_kinds_go_to_pandas(df, tmp_path):
    assert csv_text.formatters(df) is None
    write_table(df, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == pandas_text(df)


def test_columns_arrow_holds_in_pieces_and_columns_of_nothing():
    """pd.concat leaves Arrow-backed columns (str, int64[pyarrow]) as chunked arrays, and
    an object column of only missing values (a float32 NaN among them) has no text."""
    part = pd.DataFrame({"s": pd.Series(["a", "b,c", None], dtype="str"),
                         "i": pd.Series([1, None, 3], dtype="int64[pyarrow]"),
                         "o": pd.Series([np.float32("nan"), None, np.nan], dtype=object)})
    df = pd.concat([part] * 3, ignore_index=True)
    assert isinstance(pa.array(df["s"].array), pa.ChunkedArray)
    assert_as_pandas(df)


def test_a_carriage_return_is_quoted_and_reads_back(tmp_path):
    """Python 3.11's csv module leaves a lone \r unquoted, and pandas then reads it as a
    line break; quoting it (as later Pythons do) keeps the value."""
    df = pd.DataFrame({"s": ["cr\rlf", "x"], "k": [1, 2]})
    assert ours(df) == b'"s","k"\n'.replace(b'"', b"") + b'"cr\rlf",1\nx,2\n'
    write_table(df, tmp_path / "t.csv")
    assert pd.read_csv(tmp_path / "t.csv")["s"].tolist() == ["cr\rlf", "x"]


def test_write_table_is_pandas_text(tmp_path):
    df = every_kind(500, 5)
    write_table(df, tmp_path / "t.csv")
    assert (tmp_path / "t.csv").read_bytes() == pandas_text(df)


@pytest.mark.parametrize("suffix,unpack", [
    (".csv.gz", gzip.decompress), (".csv.bz2", bz2.decompress), (".csv.xz", lzma.decompress),
    (".csv.zip", lambda b: zipfile.ZipFile(io.BytesIO(b)).read("t.csv"))])
@pytest.mark.parametrize("kind", ["arrow", "pandas"])
def test_compressed_text_is_the_same_and_bytes_repeat(suffix, unpack, kind, tmp_path,
                                                       monkeypatch):
    """The archive holds pandas' text, and writing twice (a second apart) gives the same
    bytes, also for a frame csv_text leaves to pandas (pandas' own gzip and zip record
    the clock and the temporary file's name)."""
    df = every_kind(500, 6) if kind == "arrow" else \
        pd.DataFrame({"t": pd.date_range("2020-01-01", periods=3, tz="UTC"), "k": [1, 2, 3]})
    assert (csv_text.formatters(df) is None) == (kind == "pandas")
    path = tmp_path / f"t{suffix}"
    write_table(df, path)
    first = path.read_bytes()
    clock = time.time()
    monkeypatch.setattr(time, "time", lambda: clock + 3600.0)  # an hour later
    write_table(df, path)
    assert path.read_bytes() == first
    assert unpack(first) == pandas_text(df)
    if suffix == ".csv.gz":
        assert b"t.csv\x00" in first[:40]  # the header names the table


def test_an_encoder_that_holds_text_back_is_flushed_at_the_end():
    """An incremental encoder may keep text until it sees what follows (idna: a label up
    to its dot); never flushed, the file ended short, or empty, after the budget was
    spent.  (Such encodings are refused at load; the writer flushes whatever it uses.)"""
    from gpu_dpsyn.data.dialect import Dialect
    df = pd.DataFrame({"d": ["01.09.2020", "02.09.2020"], "k": ["a", "b"]})
    d = Dialect(",", ".", None, "idna")
    out = io.BytesIO()
    csv_text.write_csv(df, csv_text.formatters(df, d), out, d)
    assert out.getvalue().decode("idna") == df.to_csv(index=False)
