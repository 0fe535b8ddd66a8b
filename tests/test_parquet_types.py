"""Parquet columns by their declared Arrow type (file metadata, not a record's value): a
type that a schema column can never read is refused before the fit, naming the column and
the type; binary columns are text (UTF-8, as a CSV's bytes).  Before, each such column made
every value invalid, every row was dropped, and a 1-row table was released with the budget
spent."""
import json

import pandas as pd
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from gpu_dpsyn.cli import main  # noqa: E402
from gpu_dpsyn.data.ingest import read_table  # noqa: E402
from gpu_dpsyn.errors import DataError  # noqa: E402

N = 200
KEEP = pa.array([i % 10 for i in range(N)], pa.int64())
SPECS = {"cat": {"type": "categorical", "values": ["a", "b"]},
         "codes": {"type": "categorical", "values": ["1", "2"]},
         "flags": {"type": "categorical", "values": [False, True]},
         "num": {"type": "numeric", "integer": True, "min": 0, "max": 1},
         "date": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                  "unit": "month"}}


def _files(tmp_path, kind, array):
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": array, "k": KEEP}), p)
    schema = {"columns": {"x": SPECS[kind],
                          "k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}
    s = tmp_path / "s.json"
    s.write_text(json.dumps(schema))
    return p, s


def test_a_binary_column_reads_as_text(tmp_path):
    p, s = _files(tmp_path, "cat", pa.array([b"a", b"b", b"\xff"] * (N // 3) + [b"a"] * (N % 3),
                                            pa.binary()))
    df = read_table(p, schema=s)
    assert df["x"].tolist()[:3] == ["a", "b", "\ufffd"]
    out = tmp_path / "o.csv"
    assert main(["synthesize", str(p), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-9", "--seed", "0", "--out", str(out), "--quiet", "--rows", "100"]) == 0
    assert set(pd.read_csv(out)["x"]) == {"a", "b"}


@pytest.mark.parametrize("kind, array, named", [
    ("cat", pa.array([[1, 2]] * N, pa.list_(pa.int64())), "list"),
    ("cat", pa.array([{"a": 1}] * N, pa.struct([("a", pa.int64())])), "struct"),
    ("num", pa.array([True, False] * (N // 2), pa.bool_()), "bool"),
    ("num", pa.array([1000] * N, pa.time64("us")), "time64"),
    ("num", pa.array([5] * N, pa.duration("s")), "duration"),
    ("date", pa.array([3] * N, pa.int64()), "int64"),
    ("date", pa.array([5] * N, pa.duration("s")), "duration"),
    # booleans where the column lists only words: every row was dropped
    ("cat", pa.array([True, False] * (N // 2), pa.bool_()), "bool")])
def test_a_type_the_column_cannot_read_is_refused_before_anything_is_spent(
        tmp_path, capsys, kind, array, named):
    p, s = _files(tmp_path, kind, array)
    with pytest.raises(DataError, match=rf"column 'x' .*{named}"):
        read_table(p, schema=s)
    ledger = tmp_path / "l.json"
    assert main(["synthesize", str(p), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp_path / "o.csv"), "--ledger", str(ledger),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and named in err and not ledger.exists(), err


def test_types_each_kind_reads_are_accepted(tmp_path):
    for kind, array in (("cat", pa.array(["a", "b"] * (N // 2)).dictionary_encode()),
                        ("cat", pa.array([None] * N, pa.null())),
                        ("codes", pa.array([1, 2] * (N // 2), pa.int8())),  # listed "1"
                        ("flags", pa.array([True, False] * (N // 2), pa.bool_())),
                        # numbers: pandas stores integers with a value missing as floats,
                        # so refusing them would turn on one record
                        ("cat", pa.array([float("nan")] * N, pa.float64())),
                        ("cat", pa.array([1, 2] * (N // 2), pa.int64())),
                        ("num", pa.array(["0", "1"] * (N // 2), pa.large_string())),
                        ("num", pa.array([0.0, 1.0] * (N // 2), pa.float32())),
                        ("date", pa.array([pd.Timestamp("2020-03-01")] * N,
                                          pa.timestamp("ms", tz="UTC"))),
                        ("date", pa.array([18_000] * N, pa.date32()))):
        p, s = _files(tmp_path, kind, array)
        assert len(read_table(p, schema=s)) == N


def test_dask_reads_the_types_as_read_table_does(tmp_path):
    pytest.importorskip("dask.distributed")
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.distributed.reading import read_partitioned
    p, s = _files(tmp_path, "cat", pa.array([b"a", b"\xff"] * (N // 2), pa.binary()))
    got = read_partitioned(str(p), load_schema(json.loads(s.read_text()))).compute()
    assert got["x"].tolist() == read_table(p, schema=s)["x"].tolist()
    p, s = _files(tmp_path, "num", pa.array([True, False] * (N // 2), pa.bool_()))
    with pytest.raises(DataError, match="column 'x' .*bool"):
        read_partitioned(str(p), load_schema(json.loads(s.read_text())))


@pytest.mark.parametrize("array, want", [
    (pa.array([b"ab", b"cd", b"\xff"] * (N // 3) + [b"ab"] * (N % 3), pa.binary()),
     "categorical"),
    (pa.array([18_000 + i % 28 for i in range(N)], pa.date32()), "datetime"),
    (pa.array([18_000 * 86_400_000 + i for i in range(N)], pa.date64()), "datetime")])
def test_infer_schema_drafts_binary_and_date_columns(tmp_path, capsys, array, want):
    # binary and date columns ended in "TypeError: cannot write bytes (date) to JSON"
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": array, "k": KEEP}), p)
    out = tmp_path / "s.json"
    assert main(["infer-schema", str(p), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["columns"]["x"]["type"] == want
    if want == "categorical":
        assert "ab" in json.loads(out.read_text())["columns"]["x"]["values"]


def test_infer_schema_refuses_times_of_day_in_one_line(tmp_path, capsys):
    import datetime as dt
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": pa.array([dt.time(i % 24) for i in range(N)],
                                           pa.time64("us")), "k": KEEP}), p)
    assert main(["infer-schema", str(p), "--out", str(tmp_path / "s.json")]) == 2
    err = [x for x in capsys.readouterr().err.splitlines() if "warning:" not in x]
    assert len(err) == 1 and "column 'x'" in err[0] and "time" in err[0], err


def test_a_column_pandas_stored_as_the_index_is_read_as_a_column(tmp_path, capsys):
    """df.set_index("pid").to_parquet(): pandas reads 'pid' back as the index, and the
    table lost it: a draft had no id column (each row its own individual, unsaid), --id
    pid was "not a column", synthesize "missing from the data".  A named index is a
    column of the file; an unnamed one (a saved row number) is still left out."""
    df = pd.DataFrame({"pid": [i % 50 for i in range(N)],
                       "x": ["a", "b"] * (N // 2)})
    p = tmp_path / "t.parquet"
    df.set_index("pid").to_parquet(p)
    got = read_table(p)
    assert sorted(got.columns) == ["pid", "x"] and got["pid"].tolist() == df["pid"].tolist()
    assert list(got.index) == list(range(N))
    out = tmp_path / "s.json"
    assert main(["infer-schema", str(p), "--id", "pid", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["columns"]["pid"]["type"] == "id"
    q = tmp_path / "r.parquet"
    df.iloc[5:].to_parquet(q, index=True)  # a row number: __index_level_0__
    assert sorted(read_table(q).columns) == ["pid", "x"]
    pytest.importorskip("dask.distributed")
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.distributed.reading import read_partitioned
    got = read_partitioned(str(p), load_schema(json.loads(out.read_text()))).compute()
    assert sorted(got.columns) == ["pid", "x"] and got["pid"].tolist() == df["pid"].tolist()


def test_a_file_with_two_columns_of_one_name_is_refused_naming_it(tmp_path):
    # Arrow's own words had been the message: "Multiple matches for FieldRef.Name(x) in
    # x: string"
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table([pa.array(["a", "b"] * (N // 2)), KEEP, KEEP],
                            names=["x", "k", "k"]), p)
    with pytest.raises(DataError, match="column 'k' twice"):
        read_table(p)


def test_a_named_row_number_is_left_out_as_an_unnamed_one_is(tmp_path):
    """df.rename_axis("row").to_parquet(): pandas keeps a RangeIndex as the file's metadata
    only, no column of it.  read_table made it a column "row" (drafted as an id, numbered
    1..n in the output) where Dask read none, and the Dask read failed on it with a
    traceback (KeyError: '[nan] not in index')."""
    df = pd.DataFrame({"k": [i % 3 for i in range(N)], "x": ["a", "b"] * (N // 2)})
    p = tmp_path / "t.parquet"
    df.rename_axis("row").to_parquet(p)
    assert sorted(read_table(p).columns) == ["k", "x"]
    pytest.importorskip("dask.distributed")
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.distributed.reading import read_partitioned
    schema = load_schema({"columns": {"k": {"type": "categorical", "values": [0, 1, 2]},
                                      "x": {"type": "categorical", "values": ["a", "b"]}}})
    got = read_partitioned(str(p), schema).compute()
    assert sorted(got.columns) == ["k", "x"] and len(got) == N


@pytest.mark.parametrize("column, named", [
    (pd.to_timedelta(range(N), unit="s"), "timedelta64"),
    (pd.Series(pd.to_timedelta(range(N), unit="s")).astype("duration[s][pyarrow]"),
     "duration"),
    (pd.arrays.IntervalArray.from_breaks(range(N + 1)), "interval")])
def test_a_frame_of_durations_under_a_numeric_column_is_refused_by_its_dtype(
        monkeypatch, column, named):
    """A Timedelta (or Interval) column fitted under a numeric entry came out missing,
    each value invalid, without a word (nullable; else every row dropped): refused by
    its dtype, the frame's declared structure, before anything is spent, saying what to
    do; whatever its values (all missing too)."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.privacy import accountant
    spent, charge = [], accountant.Accountant.charge
    monkeypatch.setattr(accountant.Accountant, "charge",
                        lambda self, *a, **k: spent.append(a) or charge(self, *a, **k))
    schema = {"columns": {"x": {**SPECS["num"], "max": 10 ** 6, "nullable": True},
                          "k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}
    df = pd.DataFrame({"x": column, "k": KEEP.to_pylist()})
    for frame in (df, df.assign(x=df["x"].iloc[:0].reindex(df.index))):
        with pytest.raises(DataError, match=rf"column 'x' .*{named}.*numbers") as e:
            Synthesizer(1.0, 1e-9, seed=0, progress=False, backend="cpu").fit(frame, schema)
        assert "\n" not in str(e.value) and not spent


def test_a_parquet_duration_under_a_numeric_column_says_what_to_do(tmp_path):
    p, s = _files(tmp_path, "num", pa.array([5] * N, pa.duration("s")))
    with pytest.raises(DataError, match=r"duration.*numbers in a unit"):
        read_table(p, schema=s)


@pytest.mark.parametrize("kind, column, named", [
    ("num", pd.cut(range(N), 5), "interval"),  # pd.cut's bins: categories of intervals
    ("date", pd.cut(range(N), 5), "interval"),
    ("num", pd.period_range("2020-01", periods=N, freq="M").astype("category"), "period")])
def test_a_frame_of_cut_intervals_is_refused_by_its_dtype(monkeypatch, kind, column, named):
    """pd.cut's categories of intervals under a numeric or datetime entry (or categories
    of periods under a numeric one): every value was invalid, every row dropped and a
    2-row table released without a word.  Refused by the dtype, as durations are, before
    anything is spent."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.privacy import accountant
    spent, charge = [], accountant.Accountant.charge
    monkeypatch.setattr(accountant.Accountant, "charge",
                        lambda self, *a, **k: spent.append(a) or charge(self, *a, **k))
    schema = {"columns": {"x": {**SPECS[kind], "max": "2040-12-31"} if kind == "date" else
                          {**SPECS[kind], "max": 10 ** 6},
                          "k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}
    df = pd.DataFrame({"x": column, "k": KEEP.to_pylist()})
    with pytest.raises(DataError, match=rf"column 'x' .*{named}") as e:
        Synthesizer(1.0, 1e-9, seed=0, progress=False, backend="cpu").fit(df, schema)
    assert "\n" not in str(e.value) and not spent
