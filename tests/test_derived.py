"""Derived columns: computed after synthesis from a public rule, never measured (finding 2)."""
import json

import numpy as np
import pandas as pd
import pytest

from conftest import FLIGHTS_SCHEMA
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.data.schema import load_schema

HHMM = ["dep_time", "sched_dep_time", "arr_time", "sched_arr_time"]


def test_bundled_flights_schema_declares_clock_support_and_derived_parts(flights_schema):
    for c in HHMM:
        assert flights_schema[c].to_dict()["support"] == "hhmm"
    assert flights_schema["hour"].to_dict() == {"type": "derived", "from": "sched_dep_time",
                                                "op": "floordiv", "by": 100}
    assert flights_schema["minute"].to_dict()["op"] == "mod"
    assert "hour" not in [c.name for c in flights_schema.synth_columns]


def test_flights_synthesis_keeps_clock_values_and_the_hour_minute_rule(flights):
    syn = Synthesizer(1.0, 1e-9, seed=0, iterations=3, progress=False, backend="cpu")
    out = syn.fit(flights, str(FLIGHTS_SCHEMA)).sample(20000)
    for c in HHMM:
        v = out[c].dropna()
        assert len(v) > 0 and (v % 100 < 60).all(), c  # no 2267
    assert (out["sched_dep_time"] == out["hour"] * 100 + out["minute"]).all()
    assert out["hour"].dtype == np.int64 and out["minute"].between(0, 59).all()
    measured = {c for m in syn.ledger for c in m.columns}
    assert not measured & {"hour", "minute"}  # derived: never measured, no budget


def test_derived_columns_cost_no_budget(flights):
    cols = ["sched_dep_time", "carrier", "hour"]
    fs = load_schema(FLIGHTS_SCHEMA)
    with_hour = {"columns": {c: fs[c].to_dict() for c in cols}}
    without = {"columns": {c: fs[c].to_dict() for c in cols[:2]}}
    a = Synthesizer(1.0, 1e-9, seed=0, iterations=2, progress=False, method="dpsyn")
    b = Synthesizer(1.0, 1e-9, seed=0, iterations=2, progress=False, method="dpsyn")
    a.fit(flights[cols], with_hour)
    b.fit(flights[cols[:2]], without)
    assert [(m.columns, m.rho) for m in a.ledger] == [(m.columns, m.rho) for m in b.ledger]


def _dated():
    return load_schema({"columns": {
        "d": {"type": "datetime", "min": "2013-01-01", "max": "2014-12-31 23:59:59",
              "bins": 40, "timezone": "America/New_York", "nullable": True},
        "year": {"type": "derived", "from": "d", "op": "year"},
        "month": {"type": "derived", "from": "d", "op": "month"},
        "wd": {"type": "derived", "from": "d", "op": "weekday", "dtype": "Int8"},
        "hh": {"type": "derived", "from": "d", "op": "hour"}}})


def test_date_parts_are_local_and_follow_nulls():
    s = _dated()
    assert [c.name for c in s.synth_columns] == ["d"]
    codes = [np.append(np.arange(40), [40, 40]).astype(np.uint8)]  # 40: the null code
    out = decode(codes, s, seed=3)
    d = out["d"]
    assert str(out["year"].dtype) == "Int64" and str(out["wd"].dtype) == "Int8"
    assert out["year"].isna().sum() == 2 and out["hh"].isna().sum() == 2
    ok = d.notna()
    assert (out["year"][ok] == d[ok].dt.year).all() and (out["hh"][ok] == d[ok].dt.hour).all()
    assert (out["wd"][ok] == d[ok].dt.day_of_week).all() and (out["month"][ok] == d[ok].dt.month).all()
    assert np.array_equal(encode(out, s)[0], codes[0])  # and the output checks out


def test_data_must_match_the_declared_rule(flights, flights_schema):
    bad = flights.copy()
    bad.loc[[3, 7], "hour"] += 1
    with pytest.raises(DataError, match=r"'hour'.*sched_dep_time // 100.*2 rows"):
        encode(bad, flights_schema)
    bad = flights.copy().astype({"minute": object})
    bad.loc[0, "minute"] = "x"
    with pytest.raises(DataError, match=r"'minute'.*non-numeric.*'x'"):
        encode(bad, flights_schema)
    with pytest.raises(DataError, match=r"missing from the data: \['hour'\]"):
        encode(flights.drop(columns=["hour"]), flights_schema)


def test_derived_nulls_must_follow_the_source():
    s = _dated()
    df = pd.DataFrame({"d": ["2013-05-01 10:00", None], "year": [2013, 2013],
                       "month": [5, None], "wd": [2, None], "hh": [10, None]})
    with pytest.raises(DataError, match=r"'year'.*1 row"):
        encode(df, s)
    assert encode(df.assign(year=[2013, None]), s)[0].tolist() == [
        encode(df.assign(year=[2013, None]), s)[0][0], 40]


def test_derived_schema_round_trips():
    s = _dated()
    assert load_schema(s.to_dict()).to_dict() == s.to_dict()


BASE = {"n": {"type": "numeric", "integer": True, "min": 0, "max": 99},
        "f": {"type": "numeric", "min": 0, "max": 1},
        "t": {"type": "datetime", "min": "2013-01-01", "max": "2013-12-31", "unit": "day"},
        "pid": {"type": "id"}}


@pytest.mark.parametrize("spec,match", [
    ({"from": "n", "op": "sqrt"}, "unknown op"),
    ({"from": "n", "op": "floordiv"}, r"'by'"),
    ({"from": "n", "op": "mod", "by": 0}, r"'by'"),
    ({"from": "n", "op": "floordiv", "by": 2.5}, r"'by'"),
    ({"from": "t", "op": "year", "by": 2}, r"'by'"),
    ({"from": "nope", "op": "mod", "by": 2}, r"'nope'.*not a column"),
    ({"from": "x", "op": "mod", "by": 2}, "derived"),
    ({"from": "pid", "op": "mod", "by": 2}, "id"),
    ({"from": "f", "op": "mod", "by": 2}, "integer"),
    ({"from": "t", "op": "mod", "by": 2}, "integer"),
    ({"from": "n", "op": "month"}, "datetime"),
    ({"from": "n", "op": "mod", "by": 7, "nullable": True}, "nullable"),
    ({"from": "n", "op": "floordiv", "by": 1, "dtype": "int8", "extra": 1}, "extra"),
    ({"from": "n", "op": "mod", "by": 1000, "dtype": "int8"}, "int8"),
])
def test_bad_derived_column(spec, match):
    cols = {**BASE, "x": {"type": "derived", "from": "n", "op": "mod", "by": 3},
            "y": {"type": "derived", **spec}}
    with pytest.raises(SchemaError, match=r"'y'.*" + match):
        load_schema({"columns": cols})


@pytest.mark.parametrize("unit, op", [("day", "hour"), ("day", "minute"), ("month", "day"),
                                      ("month", "weekday"), ("year", "month"),
                                      ("hour", "minute")])
def test_a_date_part_finer_than_its_sources_unit_is_refused(unit, op):
    # a datetime column in days comes out at midnight: an "hour" derived from it was 0 on
    # every row, without a word
    spec = {"columns": {"t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                              "unit": unit},
                        "p": {"type": "derived", "from": "t", "op": op}}}
    with pytest.raises(SchemaError, match=rf"'p'.*{op}.*'t'.*{unit}"):
        load_schema(spec)


@pytest.mark.parametrize("unit, op", [("day", "day"), ("day", "weekday"), ("hour", "hour"),
                                      ("month", "year"), ("minute", "minute")])
def test_a_date_part_as_fine_as_its_sources_unit_is_accepted(unit, op):
    load_schema({"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                   "max": "2020-01-03", "unit": unit},
                             "p": {"type": "derived", "from": "t", "op": op}}})


def test_check_counts_the_rows_whose_derived_copy_disagrees(tmp_path, capsys):
    # check is the preflight of --on-invalid error, which refuses such a table: it said
    # nothing of them
    from gpu_dpsyn.cli import main
    rng = np.random.default_rng(0)
    x = rng.integers(0, 100, 200)
    df = pd.DataFrame({"x": x, "z": x // 10})
    df.loc[[4, 9, 11], "z"] += 1
    data, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps({"columns": {
        "x": {"type": "numeric", "integer": True, "min": 0, "max": 99},
        "z": {"type": "derived", "from": "x", "op": "floordiv", "by": 10}}}))
    assert main(["check", str(data), "--schema", str(schema)]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("z"))
    assert "3 " in line and "x // 10" in line
    assert "--on-invalid error" in out
    df.loc[[4, 9, 11], "z"] -= 1
    df.to_csv(data, index=False)
    assert main(["check", str(data), "--schema", str(schema)]) == 0


def test_the_disagreement_shows_integers_as_written():
    df = pd.DataFrame({"x": [63, 12], "z": [0, 1]})
    s = load_schema({"columns": {
        "x": {"type": "numeric", "integer": True, "min": 0, "max": 99},
        "z": {"type": "derived", "from": "x", "op": "floordiv", "by": 10}}})
    with pytest.raises(DataError, match=r"first: x=63, z=0\)"):
        encode(df, s)
