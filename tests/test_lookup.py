"""Derived "lookup" columns: a fixed public map of a categorical column (units fixed by
the test), never measured and made from the synthesized source."""
import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.dtypes import output_dtype
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.data.schema_edit import edit
from gpu_dpsyn.errors import DataError, SchemaError

TESTS = [f"T{i:02d}" for i in range(1, 7)]
UNITS = {"T01": "mg/dL", "T02": "g/L", "T03": "mg/dL", "T04": "%", "T05": "U/L",
         "T06": "g/L"}


def _lab(n=3000, seed=0, nullable=False):
    r = np.random.default_rng(seed)
    test = r.choice(TESTS, n, p=[.3, .2, .2, .1, .1, .1])
    scale = {t: 10.0 ** (i % 3) for i, t in enumerate(TESTS)}
    df = pd.DataFrame({"test": pd.Series(test, dtype=object),
                       "result": [round(scale[t] * r.random(), 2) for t in test],
                       "sex": r.choice(["F", "M"], n)})
    if nullable:
        df.loc[r.random(n) < 0.1, "test"] = None
    df["units"] = df["test"].map(UNITS)
    return df


def _spec(nullable=False, **units):
    return {"columns": {
        "test": {"type": "categorical", "values": TESTS, "nullable": nullable},
        "result": {"type": "numeric", "min": 0, "max": 100, "bins": 20},
        "sex": {"type": "categorical", "values": ["F", "M"]},
        "units": {"type": "derived", "from": "test", "op": "lookup", "map": UNITS, **units}}}


@pytest.mark.parametrize("change, match", [
    ({"map": {k: v for k, v in UNITS.items() if k != "T03"}}, r"map.*'T03'.*of 'test'"),
    ({"map": {**UNITS, "T99": "x"}}, r"'T99'.*not a value"),
    ({"map": {**UNITS, "T01": None}}, r"map.*null"),
    ({"map": {**UNITS, "T01": True}}, r"map.*text or numbers"),
    ({"map": {**UNITS, "T01": [1]}}, r"map.*text or numbers"),
    ({"map": {**UNITS, "T01": 3}}, r"map.*mixes"),
    ({"map": {**UNITS, "T01": float("nan")}}, r"map"),
    ({"map": {}}, r"map"),
    ({"map": ["mg/dL"]}, r"map"),
    ({"map": None}, r"map"),
    ({"by": 3}, r"'by'"),
    ({"from": "result"}, r"categorical"),
    ({"from": "sex", "map": {"F": "f"}}, r"map.*'M'"),
    # a key written otherwise is named as written (it said "no entry for" the value)
    ({"map": {**{k: v for k, v in UNITS.items() if k != "T01"}, " T01": "mg/dL"}},
     r"names ' T01', which is not a value of 'test'"),
    ({"dtype": "int8"}, r"int8"),
    ({"nullable": True}, r"nullable"),
])
def test_a_bad_lookup_is_refused_at_load_in_one_line(change, match):
    spec = _spec()
    spec["columns"]["units"].update(change)
    with pytest.raises(SchemaError, match=r"'units'.*" + match) as e:
        load_schema(spec)
    assert "\n" not in str(e.value)


def test_map_only_with_lookup_and_lookup_needs_a_map():
    spec = _spec()
    spec["columns"]["r10"] = {"type": "derived", "from": "result", "op": "floordiv",
                              "by": 10, "map": {}}
    with pytest.raises(SchemaError, match=r"'r10'.*'map'"):
        load_schema(spec)
    spec = _spec()
    del spec["columns"]["units"]["map"]
    with pytest.raises(SchemaError, match=r"'units'.*map"):
        load_schema(spec)


def test_output_dtype_is_what_a_categorical_column_gets():
    s = load_schema(_spec())
    cat = load_schema({"columns": {"u": {"type": "categorical",
                                         "values": sorted(set(UNITS.values()))}}})
    assert output_dtype(s["units"]) == output_dtype(cat["u"])
    nums = load_schema({"columns": {
        "t": {"type": "categorical", "values": TESTS, "nullable": True},
        "k": {"type": "derived", "from": "t", "op": "lookup",
              "map": {t: i % 3 for i, t in enumerate(TESTS)}}}})
    assert nums["k"].nullable and str(output_dtype(nums["k"])) == "Int64"
    cat = load_schema(_spec(dtype="category"))
    assert set(output_dtype(cat["units"]).categories) == set(UNITS.values())
    # numbers as keys: a categorical source listing numbers, keys as JSON writes them
    codes = load_schema({"columns": {
        "c": {"type": "categorical", "values": [7, 15]},
        "n": {"type": "derived", "from": "c", "op": "lookup", "map": {"7": "a", "15": "b"}}}})
    assert codes["n"].derive.rule()


def test_lookup_costs_no_budget_and_the_release_follows_it_at_epsilon_1():
    df = _lab()
    syn = Synthesizer(1.0, 1e-6, seed=0, iterations=3, progress=False, backend="cpu")
    out = syn.fit(df, _spec()).sample(4000)
    assert (out["units"] == out["test"].map(UNITS)).all()  # 100% consistent
    assert not {c for m in syn.ledger for c in m.columns} & {"units"}
    again = Synthesizer(1.0, 1e-6, seed=0, iterations=3, progress=False, backend="cpu")
    pd.testing.assert_frame_equal(again.fit(df, _spec()).sample(4000), out)


def test_a_nullable_source_makes_the_lookup_missing_there():
    df = _lab(nullable=True)
    syn = Synthesizer(2.0, 1e-6, seed=1, iterations=3, progress=False, backend="cpu")
    out = syn.fit(df, _spec(nullable=True)).sample(3000)
    assert out["test"].isna().any()
    assert out["units"].isna().equals(out["test"].isna())
    ok = out["test"].notna()
    assert (out["units"][ok] == out["test"][ok].map(UNITS)).all()


def test_a_disagreeing_record_is_refused_by_encode_and_recomputed_by_repair():
    df = _lab(200)
    df.loc[5, "units"] = "mmol/L" if df.loc[5, "units"] != "mmol/L" else "x"
    s = load_schema(_spec())
    with pytest.raises(DataError, match=r"'units'.*lookup.*1 row"):
        encode(df, s)
    fixed = repair(df, s)
    assert len(fixed) == len(df)  # recomputed from its source, as every derived column
    assert (fixed["units"] == fixed["test"].map(UNITS)).all()
    encode(fixed, s)
    with pytest.raises(DataError):
        Synthesizer(1.0, 1e-6, progress=False, on_invalid="error").fit(df, _spec())


def test_check_lists_the_disagreeing_rows(tmp_path, capsys):
    from gpu_dpsyn.cli import main
    df = _lab(300)
    df.loc[[3, 8], "units"] = "kg"
    df.to_csv(tmp_path / "t.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(_spec()))
    assert main(["check", str(tmp_path / "t.csv"), "--schema", str(tmp_path / "s.json")]) == 1
    line = next(x for x in capsys.readouterr().out.splitlines()
                if x.strip().startswith("units"))
    assert "2 " in line and "lookup" in line


def test_a_lookup_round_trips_and_edits(tmp_path):
    s = load_schema(_spec(nullable=True))
    assert load_schema(s.to_dict()).to_dict() == s.to_dict()
    s.save(tmp_path / "s.json")
    assert load_schema(str(tmp_path / "s.json")).to_dict() == s.to_dict()
    doc = edit(s.to_dict(), sets=[("units", "map", {**UNITS, "T04": "percent"})])
    assert load_schema(doc)["units"].derive.to_dict()["map"]["T04"] == "percent"
    from gpu_dpsyn.cli import main
    (tmp_path / "m.json").write_text(json.dumps({**UNITS, "T05": "IU/L"}))
    assert main(["schema", str(tmp_path / "s.json"), "--set-file",
                 f"units.map={tmp_path / 'm.json'}"]) == 0
    assert load_schema(str(tmp_path / "s.json"))["units"].derive.to_dict()["map"]["T05"] \
        == "IU/L"
    assert main(["schema", str(tmp_path / "s.json"), "--set", "units.map=3"]) != 0


def test_a_map_given_numpy_keys_and_values_saves_and_seeds_as_python_ones():
    """A probe's map built with NumPy integers loaded, then a seeded fit (its key reads
    the schema as JSON) and json.dumps of to_dict raised a TypeError."""
    codes = [7, 8, 9]
    spec = {"columns": {
        "k": {"type": "categorical", "values": codes},
        "v": {"type": "derived", "from": "k", "op": "lookup",
              "map": {np.int64(c): np.float32(c / 2) for c in codes}}}}
    s = load_schema(spec)
    assert json.loads(json.dumps(s.to_dict()))["columns"]["v"]["map"] == {
        "7": 3.5, "8": 4.0, "9": 4.5}
    df = pd.DataFrame({"k": np.random.default_rng(0).choice(codes, 500)})
    df["v"] = df["k"] / 2
    out = Synthesizer(1.0, 1e-6, seed=1, progress=False).fit(df, s).sample()
    assert ((out["k"] / 2) == out["v"]).all()


def test_a_boolean_source_takes_its_values_as_json_writes_them():
    """A probe's map {"true": ..., "false": ...} (JSON's text of the values, as the docs
    say a key is) was refused as naming no value; so was the file a schema saved from a
    map with Python booleans as keys, since json.dumps writes them so."""
    flag = {"columns": {"b": {"type": "categorical", "values": [False, True]},
                        "x": {"type": "numeric", "min": 0, "max": 1, "bins": 2}}}
    for given in ({"true": "yes", "false": "no"}, {"True": "yes", "False": "no"},
                  {True: "yes", False: "no"}):
        spec = json.loads(json.dumps(flag))
        spec["columns"]["v"] = {"type": "derived", "from": "b", "op": "lookup",
                                "map": given}
        s = load_schema(spec)
        saved = json.dumps(s.to_dict())
        assert json.dumps(load_schema(json.loads(saved)).to_dict()) == saved
        df = pd.DataFrame({"b": [True, False, True], "x": [0.1, 0.5, 0.9]})
        df["v"] = np.where(df["b"], "yes", "no")
        encode(df, s)  # the data follows the map
    spec["columns"]["v"]["map"] = {"true": "yes", "True": "si", "false": "no"}
    with pytest.raises(SchemaError, match=r"'v'.*twice"):
        load_schema(spec)
