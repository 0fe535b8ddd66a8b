"""Table readers, and encode() on cuDF frames.

cuDF is not installed here (nor on the lent GPU machines), so the cuDF frame below is a
stand-in built on pandas that offers exactly the cuDF calls encode() makes
(isna().to_cupy, factorize, astype().to_cupy, to_pandas; cuDF's documented API): it
checks the cuDF branch's logic, not cuDF itself.
"""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data import ingest
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, DPSynError


class _Index:
    def __init__(self, idx):
        self.idx = idx

    def to_pandas(self):
        return self.idx


class FakeCudfSeries:
    __module__ = "cudf.core.series"

    def __init__(self, s: pd.Series):
        self.s = s

    def isna(self):
        return FakeCudfSeries(self.s.isna())

    def to_cupy(self, na_value=None):  # a NumPy array stands in for the device array
        if na_value is None:
            return self.s.to_numpy()
        return self.s.to_numpy(dtype=np.float64, na_value=na_value)

    def factorize(self, use_na_sentinel=True):
        codes, uniques = pd.factorize(self.s, use_na_sentinel=use_na_sentinel)
        return codes, _Index(pd.Index(uniques))

    def astype(self, dtype):
        return FakeCudfSeries(self.s.astype(dtype))

    def to_pandas(self):
        return self.s

    def __len__(self):
        return len(self.s)


class FakeCudfFrame:
    __module__ = "cudf.core.dataframe"

    def __init__(self, df: pd.DataFrame):
        self.df = df
        self.columns = df.columns

    def __getitem__(self, name):
        return FakeCudfSeries(self.df[name])

    def __len__(self):
        return len(self.df)


def test_encode_reads_cudf_frames_through_their_api(backend, flights, flights_schema):
    host = encode(flights, flights_schema)
    fake = encode(FakeCudfFrame(flights), flights_schema, backend.xp)
    assert all(np.array_equal(a, backend.to_numpy(b)) and a.dtype == b.dtype
               for a, b in zip(host, fake))


def test_cudf_frame_errors_name_the_problem(flights, flights_schema):
    bad = flights.copy()
    bad.loc[3, "carrier"] = "ZZ"
    with pytest.raises(DataError, match="carrier.*outside the schema.*'ZZ'"):
        encode(FakeCudfFrame(bad), flights_schema)
    bad = flights.copy().astype({"day": object})
    bad.loc[0, "day"] = "Monday"
    with pytest.raises(DataError, match="day.*non-numeric.*'Monday'"):
        encode(FakeCudfFrame(bad), flights_schema)


def test_reader_choice(tmp_path, monkeypatch):
    csv = tmp_path / "t.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(csv, index=False)
    monkeypatch.setattr(ingest, "cudf_available", lambda: False)
    assert ingest.choose_engine("auto", str(csv), gpu=True) == "pandas"
    with pytest.raises(DPSynError, match="needs cuDF"):
        ingest.choose_engine("cudf", str(tmp_path / "t.parquet"), gpu=True)
    # a CSV is refused first: installing cuDF would not help it
    with pytest.raises(DPSynError, match="reads Parquet files only"):
        ingest.choose_engine("cudf", str(csv), gpu=True)
    with pytest.raises(DPSynError, match="unknown reader"):
        ingest.choose_engine("polars", str(csv), gpu=True)
    monkeypatch.setattr(ingest, "cudf_available", lambda: True)
    # auto: cuDF for Parquet only; cuDF's CSV reader ends a record at a lone "\r" and
    # keeps bytes that are no UTF-8, which the row-local rule reads otherwise
    assert ingest.choose_engine("auto", str(csv), gpu=True) == "pandas"
    assert ingest.choose_engine("auto", str(tmp_path / "t.parquet"), gpu=True) == "cudf"
    # named: refused for a CSV, which would let one record count as two (fail closed)
    with pytest.raises(DPSynError, match=r"reader 'cudf' reads Parquet.*lone.*two"):
        ingest.choose_engine("cudf", str(csv), gpu=True)
    with pytest.raises(DPSynError, match=r"reader 'cudf' reads Parquet.*lone.*two"):
        ingest.read_table(str(csv), "cudf")
    assert ingest.choose_engine("cudf", str(tmp_path / "t.parquet"), gpu=True) == "cudf"
    assert ingest.choose_engine("auto", str(csv), gpu=False) == "pandas"
    assert ingest.choose_engine("auto", str(csv) + ".xz", gpu=True) == "pandas"
    with pytest.raises(DPSynError, match="reads Parquet"):
        ingest.choose_engine("cudf", str(csv) + ".xz", gpu=True)
    assert ingest.read_table(str(csv)).equals(pd.DataFrame({"a": [1, 2]}))
    with pytest.raises(DPSynError, match="no such file"):
        ingest.read_table(str(tmp_path / "missing.csv"))


def test_a_schema_given_as_the_reader_is_named_in_one_short_line(tmp_path):
    # read_table(path, schema): the second argument is the reader; the error named it
    # with the schema's whole repr (thousands of characters)
    from gpu_dpsyn.data.schema import load_schema
    csv = tmp_path / "t.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(csv, index=False)
    schema = load_schema({"columns": {"a": {"kind": "numeric", "edges": [0, 1, 2, 3]}}})
    for engine in (schema, {"columns": {}}, 3):
        with pytest.raises(DPSynError, match=r"reader must be .*'pandas'.*schema=") as e:
            ingest.read_table(str(csv), engine)
        assert "\n" not in str(e.value) and len(str(e.value)) < 160, str(e.value)


# -- the reader follows the schema (finding 4) -------------------------------------------

TEXTY = {"columns": {
    "code": {"type": "categorical", "values": ["NA", "N/A", "None", "null", "02134", "2134"]},
    "opt": {"type": "categorical", "values": ["NA", "x"], "nullable": True},
    "k": {"type": "numeric", "integer": True, "min": 0, "max": 99, "bins": 100}}}


def _csv(tmp_path, text, name="t.csv"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_category_text_that_looks_missing_or_numeric_survives(tmp_path):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema(TEXTY)
    path = _csv(tmp_path, "code,opt,k\nNA,NA,1\nN/A,,2\nNone,x,3\nnull,NA,4\n02134,,5\n"
                          "2134,x,6\n")
    df = ingest.read_table(path, schema=schema)
    assert df["code"].tolist() == ["NA", "N/A", "None", "null", "02134", "2134"]
    assert df["opt"].isna().tolist() == [False, True, False, False, True, False]
    codes = encode(df, schema)
    assert codes[0].tolist() == [0, 1, 2, 3, 4, 5]  # "02134" and "2134" stay apart
    assert codes[1].tolist() == [0, 2, 1, 0, 2, 1]  # "NA" is a value, empty is the null code


def test_empty_cell_in_a_non_nullable_column_is_a_clear_error(tmp_path):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema(TEXTY)
    df = ingest.read_table(_csv(tmp_path, "code,opt,k\n,x,1\nNA,x,2\n"), schema=schema)
    with pytest.raises(DataError, match=r"'code' has 1 missing value.*nullable"):
        encode(df, schema)


def test_text_in_a_numeric_column_is_named(tmp_path):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema(TEXTY)
    df = ingest.read_table(_csv(tmp_path, "code,opt,k\nNA,x,NA\nNA,x,2\n"), schema=schema)
    with pytest.raises(DataError, match=r"'k'.*non-numeric.*'NA'"):
        encode(df, schema)


@pytest.mark.parametrize("via_csv", [False, True])
def test_non_integer_in_an_integer_column_is_refused(tmp_path, via_csv):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema(TEXTY)
    df = pd.DataFrame({"code": ["NA", "NA", "NA"], "opt": ["x"] * 3, "k": [1.0, 12.5, 3.0]})
    if via_csv:
        df = ingest.read_table(_csv(tmp_path, "code,opt,k\nNA,x,1\nNA,x,12.5\nNA,x,3\n"),
                               schema=schema)
    with pytest.raises(DataError, match=r"'k' is integer in the schema.*12\.5"):
        encode(df, schema)
    # whole numbers written as floats (a column pandas read with a NaN) are fine
    assert encode(df.assign(k=[1.0, 2.0, 3.0]), schema)[2].tolist() == [1, 2, 3]


def test_bool_categories_read_from_text(tmp_path):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema({"columns": {"b": {"type": "categorical", "values": [True, False]}}})
    df = ingest.read_table(_csv(tmp_path, "b\nTrue\nfalse\nTRUE\n"), schema=schema)
    assert encode(df, schema)[0].tolist() == [0, 1, 0]  # the spellings pandas reads as bools


def test_cli_synthesizes_category_text_that_looks_missing(tmp_path):
    import json

    from gpu_dpsyn.cli import main
    rows = "".join(f"{c},{o},{i % 100}\n" for i, (c, o) in enumerate(
        zip(["NA", "None", "null", "02134", "N/A"] * 60, ["NA", "", "x"] * 100)))
    path = _csv(tmp_path, "code,opt,k\n" + rows)
    (tmp_path / "s.json").write_text(json.dumps(TEXTY))
    out = tmp_path / "o.csv"
    assert main(["synthesize", path, "--schema", str(tmp_path / "s.json"), "--epsilon", "5",
                 "--delta", "1e-6", "--out", str(out), "--rows", "400", "--seed", "2",
                 "--iterations", "3", "--quiet"]) == 0
    from gpu_dpsyn.data.schema import load_schema
    back = ingest.read_table(str(out), schema=load_schema(TEXTY))
    assert set(back["code"]) <= set(TEXTY["columns"]["code"]["values"])
    assert "02134" in set(back["code"]) and "NA" in set(back["opt"])


def test_empty_text_as_a_declared_value(tmp_path):
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema({"columns": {"a": {"type": "categorical", "values": ["", "x"]},
                                      "k": {"type": "numeric", "min": 0, "max": 9}}})
    df = ingest.read_table(_csv(tmp_path, "a,k\n,1\nx,2\n"), schema=schema)
    assert encode(df, schema)[0].tolist() == [0, 1]  # not missing: the schema lists ""


def test_one_value_read_otherwise_in_a_later_chunk_raises_no_pandas_warning(tmp_path):
    # pandas' C reader guesses a numeric column's type chunk by chunk and warns when two
    # chunks disagree: one record of text there printed a warning its neighbour did not
    import warnings
    from gpu_dpsyn.data.ingest import read_table
    n = 140_000
    df = pd.DataFrame({c: np.arange(n) % 7 for c in "nabcd"})
    df["n"] = df["n"].astype(object)
    df.at[135_000, "n"] = "abc"
    df.to_csv(tmp_path / "t.csv", index=False)
    schema = {"columns": {c: {"type": "numeric", "integer": True, "min": 0, "max": 9}
                          for c in "nabcd"}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_table(str(tmp_path / "t.csv"), schema=schema)


def test_a_one_column_table_whose_name_holds_a_semicolon_reads_with_its_schema(tmp_path):
    """The header-only separator check refuses a header of one column holding ';' or a
    tab, unless the schema declares a column of that very name: then it is one column."""
    from gpu_dpsyn.data.schema import load_schema
    path = tmp_path / "t.csv"
    path.write_text("size;unit\n1\n2\n")
    with pytest.raises(DataError, match="semicolons.*--separator"):
        ingest.read_table(str(path))
    schema = load_schema({"columns": {"size;unit": {"type": "categorical",
                                                    "values": [1, 2]}}})
    df = ingest.read_table(str(path), schema=schema)
    assert list(df.columns) == ["size;unit"] and len(df) == 2
    from gpu_dpsyn.distributed.reading import read_partitioned
    assert len(read_partitioned(str(path), schema).compute()) == 2  # Dask's reading too


@pytest.mark.parametrize("name", ["t.parquet", "t.csv"])
def test_write_table_refuses_a_path_that_is_none_and_labels_a_header_repeats(tmp_path, name):
    # a number as the path was a TypeError traceback; two columns of one label a KeyError
    # (Parquet) or a CSV that read_table then refuses ("names column 'a' more than once")
    df = pd.DataFrame([[1, 2, 3]], columns=["a", "a", "b"])
    with pytest.raises(DataError, match=r"'a'"):
        ingest.write_table(df, tmp_path / name)
    with pytest.raises(DataError, match=r"'1'"):  # one header name in a file, 1 and "1"
        ingest.write_table(pd.DataFrame([[1, 2]], columns=[1, "1"]), tmp_path / name)
    with pytest.raises(DPSynError, match="path"):
        ingest.write_table(df.iloc[:, 1:], 5)
    assert list(tmp_path.iterdir()) == []
