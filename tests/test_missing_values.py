"""Codes for a missing value (-1, 999, "?"): a nullable column's "missing_values" reads
them as missing, each value alone, where they were clamped to the range (999 as a
120-year-old) or refused; infer-schema drafts them for isolated sentinels."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.inference import infer_schema_with_summary
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError

AGE = {"type": "numeric", "integer": True, "min": 0, "max": 120, "bins": 12,
       "nullable": True, "missing_values": [-1, 999]}
SEX = {"type": "categorical", "values": ["F", "M"], "nullable": True,
       "missing_values": ["?", "unknown"]}


def _schema(**cols):
    return load_schema({"columns": cols})


def test_listed_codes_read_as_missing_in_every_spelling():
    s = _schema(age=AGE, sex=SEX)
    df = pd.DataFrame({"age": ["34", "-1", "999", "999.0", None, "120", "200"],
                       "sex": ["F", "?", "M", "unknown", None, "F", "?"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = repair(df, s)
    assert fixed["age"].isna().tolist() == [False, True, True, True, True, False, False]
    assert fixed["age"].iloc[6] == 120  # past the range and not listed: clamped, as before
    assert fixed["sex"].isna().tolist() == [False, True, False, True, True, False, True]
    codes = encode(fixed, s)
    assert codes[0][1] == s["age"].null_code and codes[1][1] == s["sex"].null_code


def test_the_strict_reading_takes_them_as_missing_too():
    s = _schema(age=AGE, sex=SEX)
    df = pd.DataFrame({"age": [34, -1, 999, 50], "sex": ["F", "?", "M", "F"]})
    codes = encode(df, s)
    assert codes[0].tolist()[1:3] == [s["age"].null_code] * 2
    assert codes[1].tolist()[1] == s["sex"].null_code


@pytest.mark.parametrize("spec,match", [
    ({**AGE, "nullable": False}, "nullable"),
    ({**AGE, "missing_values": []}, "missing_values"),
    ({**AGE, "missing_values": 999}, "missing_values"),
    ({**AGE, "missing_values": [[1]]}, "missing_values"),
    ({**SEX, "missing_values": ["F"]}, r"'F'.*both"),
    ({**AGE, "missing_values": [50]}, r"50.*inside"),
    ({"type": "datetime", "min": "2000-01-01", "max": "2001-01-01", "unit": "day",
      "nullable": True, "missing_values": ["1900-01-01"]}, "missing_values")])
def test_bad_missing_values_are_refused(spec, match):
    with pytest.raises(SchemaError, match=r"'x'.*" + match):
        _schema(x=spec, k={"type": "categorical", "values": ["a"]})


def test_the_schema_keeps_them():
    s = _schema(age=AGE)
    assert s["age"].to_dict()["missing_values"] == [-1, 999]
    assert load_schema(s.to_dict())["age"].missing_values == [-1, 999]


def test_no_sentinel_reaches_the_output_and_check_counts_them(tmp_path, capsys):
    rng = np.random.default_rng(0)
    age = rng.integers(0, 95, 800).astype(object)
    at = rng.choice(800, 50, replace=False)
    age[at[:30]], age[at[30:]] = 999, -1
    df = pd.DataFrame({"age": age, "sex": rng.choice(["F", "M", "?"], 800)})
    s = _schema(age=AGE, sex=SEX)
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    assert out["age"].dropna().between(0, 120).all()
    assert out["age"].isna().any()  # the codes' share comes out as missing
    data, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps({"columns": {"age": AGE, "sex": SEX}}))
    assert main(["check", str(data), "--schema", str(schema)]) == 0  # codes: no fault
    lines = capsys.readouterr().out.splitlines()
    line = next(x for x in lines if x.startswith("age:"))
    assert "50 values" in line and "missing_values" in line


def _draft(values, name="age"):
    df = pd.DataFrame({name: values, "k": np.arange(len(values)) % 3})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema_with_summary(df)


def test_a_draft_reads_isolated_sentinels_as_missing_values():
    rng = np.random.default_rng(1)
    ages = list(rng.integers(0, 95, 2000)) + [999] * 12 + [-1] * 15
    s, lines = _draft([str(a) for a in ages])
    col = s["age"]
    assert col.missing_values == [-1, 999] and col.nullable
    seen = col.values if col.kind == "categorical" else col.value_range
    assert max(seen) < 200 and min(seen) >= 0
    line = next(x for x in lines if x.strip().startswith("age"))
    assert "-1" in line and "999" in line and "missing" in line


@pytest.mark.parametrize("low", [11.0, -20.0])
def test_a_draft_reads_a_negative_sentinel_far_below_a_narrow_range_as_missing(low):
    # a sensor's temperatures (2 places) with 1% -999: the draft hinted it only and binned
    # -1000..35 in 32 bins of 32 degrees; at eps 1 (39,000 rows) no -999 came out but 1.25%
    # of the values between -990 and 0 (-855.47), the others spread evenly over 3..35
    rng = np.random.default_rng(2)
    t = np.round(rng.uniform(low, 35, 3000), 2)
    t[rng.random(3000) < 0.01] = -999
    s, lines = _draft(t, name="temp")
    col = s["temp"]
    assert col.missing_values == [-999] and col.nullable, lines
    assert col.value_range[0] >= low - 5
    line = next(x for x in lines if x.strip().startswith("temp"))
    assert "-999" in line and "missing" in line


@pytest.mark.parametrize("values", [
    [9, 99, 999, 5, 50, 500] * 100,                  # 999 among values of its size
    list(range(0, 1000)) * 2,                        # a count up to 999
    list(np.arange(0, 90)) * 20 + [99] * 400,       # 99 too common to be a code
    [0, 1] * 500 + [-1] * 30,                        # a direction, not a code
    list(np.arange(-50, 60)) * 20 + [-99] * 30,      # a scale that runs below 0
])
def test_a_draft_leaves_values_that_belong_to_the_data(values):
    s, _ = _draft(values)
    assert not s["age"].missing_values


def test_a_derived_columns_source_reads_its_codes_as_missing(tmp_path, capsys):
    # the derived rule read 999 as an age (a decade of 99) and "n/a" stopped the read
    spec = {**AGE, "missing_values": [999, "n/a"]}
    s = _schema(age=spec, decade={"type": "derived", "from": "age", "op": "floordiv",
                                  "by": 10})
    df = pd.DataFrame({"age": ["34", "999", "n/a", "70"], "decade": [3, None, None, 7]})
    assert len(encode(df, s)) == 1  # the strict reading agrees with the rule
    data, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps(s.to_dict()))
    assert main(["check", str(data), "--schema", str(schema)]) == 0  # codes: said, not a fault
    out = capsys.readouterr().out
    assert "decade" not in out and "missing_values" in out


@pytest.mark.parametrize("code,data", [(999, "0999"), (999, " 999 "), (-1, "-1.0")])
def test_a_numeric_code_matches_every_spelling_of_its_number(code, data):
    s = _schema(age={**AGE, "missing_values": [code]})
    assert encode(pd.DataFrame({"age": [data, "40"]}), s)[0][0] == s["age"].null_code


@pytest.mark.parametrize("spec,match", [
    ({**AGE, "missing_values": ["50"]}, r"50.*inside"),
    ({"type": "categorical", "values": [1, 2, 3], "nullable": True,
      "missing_values": ["1.0"]}, r"'1\.0'.*both")])
def test_a_code_spelled_as_data_is_refused(spec, match):
    with pytest.raises(SchemaError, match=match):
        _schema(x=spec)
