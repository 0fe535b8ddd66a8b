"""A Parquet table's declared types kept: infer-schema drafts each column's "dtype" from the
file's Arrow type (metadata, the same for every table the writer stores), and a date
column can be written back as dates ("date32[pyarrow]")."""
import json
import warnings

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError


def _customers(n: int = 1500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "plan": pd.Categorical(rng.choice(["basic", "plus", "pro"], n)),
        "active": rng.random(n) < 0.8,
        "churned": pd.array(np.where(rng.random(n) < 0.1, None, rng.random(n) < 0.2),
                            dtype="boolean"),
        "nps": pd.array(np.where(rng.random(n) < 0.3, None, rng.integers(0, 11, n)),
                        dtype="Int8"),
        "spend": rng.lognormal(4, 1, n).astype(np.float32),
        "signup": (pd.Timestamp("2020-01-01") + pd.to_timedelta(
            rng.integers(0, 1500, n), unit="D")).as_unit("us"),
        "signup_date": (pd.Timestamp("2020-01-01") + pd.to_timedelta(
            rng.integers(0, 1500, n), unit="D")).date,
    })


def test_a_draft_of_a_parquet_table_keeps_its_types_through_a_release(tmp_path):
    data, schema, out = tmp_path / "c.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    _customers().to_parquet(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    cols = json.loads(schema.read_text())["columns"]
    assert cols["plan"]["dtype"] == "category" and cols["nps"]["dtype"] == "Int8"
    assert cols["signup_date"]["dtype"] == "date32[pyarrow]"
    assert cols["signup"]["dtype"] == "datetime64[us]"
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    a, b = pq.read_schema(data), pq.read_schema(out)
    for name in ("plan", "active", "churned", "nps", "signup", "signup_date"):
        assert b.field(name).type == a.field(name).type, name


@pytest.mark.parametrize("ids,drafted", [("int32", "int32"), ("uint64", "uint64"),
                                         ("int16", None)])  # int16 cannot number 1..n
def test_an_id_column_keeps_its_integer_type(tmp_path, ids, drafted):
    data, schema, out = tmp_path / "c.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    df = _customers(300)[["plan", "active"]]
    df.insert(0, "reading_no", np.arange(1, 301).astype(ids))
    df.to_parquet(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema), "--id",
                     "reading_no"]) == 0
    assert json.loads(schema.read_text())["columns"]["reading_no"].get("dtype") == drafted
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    assert str(pq.read_schema(out).field("reading_no").type) == (drafted or "int64")


def test_codes_stored_as_text_stay_text(tmp_path):
    """Merchant codes stored as Parquet strings ("5411") were drafted as integers and came
    back as int64."""
    data, schema, out = tmp_path / "c.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    r = np.random.default_rng(0)
    pd.DataFrame({"mcc": r.choice(["4111", "5411", "5812", "5999"], 400),
                  "k": r.choice(["a", "b"], 400)}).to_parquet(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    assert pq.read_schema(out).field("mcc").type == pq.read_schema(data).field("mcc").type
    assert set(pd.read_parquet(out)["mcc"]) <= {"4111", "5411", "5812", "5999"}
    # text that is not the number's own ("1.0"): listed as "1", every row was dropped
    pd.DataFrame({"mcc": r.choice(["1.0", "2.0", "3.0"], 400),
                  "k": r.choice(["a", "b"], 400)}).to_parquet(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    assert main(["check", str(data), "--schema", str(schema)]) == 0  # every value allowed


def test_dates_are_written_as_dates():
    s = load_schema({"columns": {
        "d": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "day",
              "nullable": True, "dtype": "date32[pyarrow]"},
        "k": {"type": "categorical", "values": ["a", "b"]}}})
    t = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(300) % 366, unit="D")
    df = pd.DataFrame({"d": t, "k": np.where(np.arange(300) % 2, "a", "b")})
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    assert str(out["d"].dtype) == "date32[day][pyarrow]"


def test_a_date_dtype_on_a_zoned_column_is_refused():
    with pytest.raises(SchemaError, match=r"'d'.*date32"):
        load_schema({"columns": {"d": {"type": "datetime", "min": "2020-01-01",
                                       "max": "2020-12-31", "unit": "day",
                                       "timezone": "UTC", "dtype": "date32[pyarrow]"}}})


def test_nullable_booleans_of_another_writer_stay_booleans(tmp_path):
    """A bool column with nulls written by Arrow alone (Spark, DuckDB, R: no pandas
    metadata) reads as an object column of True, False and None; it was drafted as the
    integers 0..1 and released as int64."""
    import pyarrow as pa
    data, schema, out = tmp_path / "b.parquet", tmp_path / "s.json", tmp_path / "o.parquet"
    rng = np.random.default_rng(2)
    n = 800
    flags = [None if u < 0.2 else bool(u < 0.6) for u in rng.random(n)]
    pq.write_table(pa.table({"flag": pa.array(flags, pa.bool_()),
                             "k": pa.array(rng.choice(["a", "b"], n))}), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    col = json.loads(schema.read_text())["columns"]["flag"]
    assert [type(v) for v in col["values"]] == [bool, bool] and col.get("nullable") is True
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    assert pq.read_schema(out).field("flag").type == pa.bool_()
    got = pq.read_table(out).column("flag").to_pylist()
    assert set(got) <= {True, False, None} and None in got and True in got
