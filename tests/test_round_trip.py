"""Every column type through fit/sample and through CSV and Parquet, via the CLI path."""
import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.dtypes import output_dtype
from gpu_dpsyn.data.encoding import encode, to_schema_types
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.data.schema import load_schema

CATS = ["NA", "None", "null", "02134", "Zürich", "東京"]
SPEC = {"columns": {
    "pid": {"type": "id"},
    "cat": {"type": "categorical", "values": CATS},
    "opt": {"type": "categorical", "values": ["x", "N/A"], "nullable": True},
    "code": {"type": "categorical", "values": [7, 15, 300]},
    "k": {"type": "numeric", "integer": True, "min": 0, "max": 50},
    "clock": {"type": "numeric", "integer": True, "support": "hhmm", "nullable": True,
              "edges": list(range(0, 2400, 300)) + [2400]},
    "f": {"type": "numeric", "min": 0, "max": 1, "bins": 8},
    "when": {"type": "datetime", "min": "2013-01-01", "max": "2013-12-31 23:59:59",
             "unit": "month", "timezone": "America/New_York", "nullable": True},
    "ts": {"type": "datetime", "min": "2020-03-01", "max": "2020-03-31", "bins": 6,
           "timezone": "UTC"},
    "hr": {"type": "derived", "from": "clock", "op": "floordiv", "by": 100},
    "mon": {"type": "derived", "from": "when", "op": "month"},
    # lookups: text from numbers (read as text, "02134"-safe), numbers from a nullable one
    "cname": {"type": "derived", "from": "code", "op": "lookup",
              "map": {"7": "007", "15": "Zürich", "300": "NA"}},
    "optn": {"type": "derived", "from": "opt", "op": "lookup", "map": {"x": 1, "N/A": 2.5}},
}}


def _real(n=1500, seed=0):
    r = np.random.default_rng(seed)
    clock = pd.array(r.integers(0, 24, n) * 100 + r.integers(0, 60, n), dtype="Int64")
    clock[r.random(n) < 0.1] = pd.NA
    when = pd.Series(pd.Timestamp("2013-01-01", tz="America/New_York")
                     + pd.to_timedelta(r.integers(0, 364 * 86400, n), unit="s"))
    when[r.random(n) < 0.1] = pd.NaT
    df = pd.DataFrame({
        "pid": np.arange(n) + 1000,
        "cat": r.choice(CATS, n),
        "opt": pd.Series(r.choice(["x", "N/A", None], n), dtype=object),
        "code": r.choice([7, 15, 300], n),
        "k": r.integers(0, 51, n),
        "clock": clock,
        "f": r.random(n),
        "when": when,
        "ts": pd.Series(pd.Timestamp("2020-03-01", tz="UTC")
                        + pd.to_timedelta(r.integers(0, 30 * 86400, n), unit="s")),
    })
    df["hr"] = df["clock"] // 100
    df["mon"] = df["when"].dt.month.astype("Int64")
    df["cname"] = df["code"].map({7: "007", 15: "Zürich", 300: "NA"})
    df["optn"] = df["opt"].map({"x": 1, "N/A": 2.5})
    return df


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("rt")
    df = _real()
    df.to_csv(tmp / "real.csv", index=False)
    df.to_parquet(tmp / "real.parquet", index=False)
    (tmp / "s.json").write_text(json.dumps(SPEC, ensure_ascii=False))
    return tmp


def _synthesize(tmp, src, out):
    assert main(["synthesize", str(tmp / src), "--schema", str(tmp / "s.json"),
                 "--epsilon", "4", "--delta", "1e-6", "--out", str(tmp / out), "--rows", "800",
                 "--seed", "3", "--iterations", "5", "--quiet"]) == 0
    return tmp / out


@pytest.mark.parametrize("src", ["real.csv", "real.parquet"])
def test_every_column_type_round_trips_through_csv_and_parquet(files, src):
    schema = load_schema(files / "s.json")
    stem = src.split(".")[1]
    back = {}
    for out in (f"{stem}_o.csv", f"{stem}_o.csv.gz", f"{stem}_o.parquet"):
        raw = read_table(str(_synthesize(files, src, out)), schema=schema)
        encode(raw, schema)  # every value allowed by the schema (support, range, rules)
        t = to_schema_types(raw, schema)
        assert {c: str(t[c].dtype) for c in t} == \
            {c.name: str(output_dtype(c)) for c in schema.columns}
        back[out] = t
    csv, gz, pq = back.values()
    pd.testing.assert_frame_equal(csv, pq)  # the same table in either format
    pd.testing.assert_frame_equal(csv, gz)
    t = pq
    assert set(t["cat"]) <= set(CATS) and {"NA", "None", "02134", "東京"} <= set(t["cat"])
    assert t["opt"].isna().any() and set(t["opt"].dropna()) <= {"x", "N/A"}
    assert set(t["code"]) <= {7, 15, 300} and t["k"].between(0, 50).all()
    clock = t["clock"].dropna()
    assert t["clock"].isna().any() and (clock % 100 < 60).all()
    assert (t["hr"].dropna() == clock // 100).all() and t["hr"].isna().equals(t["clock"].isna())
    when = t["when"].dropna()
    assert (when.dt.day == 1).all() and (when.dt.hour == 0).all()  # month starts, local
    assert (t["mon"].dropna() == when.dt.month).all()
    assert (t["cname"] == t["code"].map({7: "007", 15: "Zürich", 300: "NA"})).all()
    assert t["optn"].isna().equals(t["opt"].isna()) and \
        (t["optn"].dropna() == t["opt"].dropna().map({"x": 1, "N/A": 2.5})).all()
    assert t["pid"].tolist() == list(range(1, 801))


def test_parquet_keeps_the_declared_dtypes_without_help(files):
    schema = load_schema(files / "s.json")
    raw = pd.read_parquet(_synthesize(files, "real.csv", "plain.parquet"))
    for c in schema.columns:
        want = output_dtype(c)
        if want == np.dtype(object):  # pyarrow hands text back as pandas' string dtype
            assert pd.api.types.is_string_dtype(raw[c.name].dtype)
        else:
            assert raw[c.name].dtype == want, c.name


def test_decimals_are_written_at_a_thousandth_of_their_bin_and_stay_in_it():
    # 17-digit draws for 7-digit data were noise in every output file
    import io
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.generate.decode import decode
    schema = load_schema({"columns": {
        "x": {"type": "numeric", "min": -0.9, "max": 6.1, "bins": 32},
        "w": {"type": "numeric", "edges": [0, 0, 1e-7, 1000, 1e6]}}})
    r = np.random.default_rng(0)
    codes = [r.integers(0, 32, 5000).astype(np.uint8), r.integers(0, 4, 5000).astype(np.uint8)]
    out = decode(codes, schema, seed=3)
    for name, c in zip(("x", "w"), codes):  # each value stays in its bin
        np.testing.assert_array_equal(encode(out[[name]], load_schema(
            {"columns": {name: schema[name].to_dict()}}))[0], c)
    width = np.diff(schema["x"].edges)[0]  # 0.21875: four decimals
    assert (np.abs(out["x"] * 1e4 - np.rint(out["x"] * 1e4)) < 1e-6).all()
    assert len(np.unique(out["x"])) > 1000 and width / 1000 > 1e-4 / 2
    assert (out["w"][codes[1] == 0] == 0).all()  # a bin holding one value keeps it
    text = io.StringIO()
    out.to_csv(text, index=False)
    assert max(len(v) for v in text.getvalue().replace(",", " ").split()[2:]) <= 8
