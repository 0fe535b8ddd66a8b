"""infer-schema drafts a column fixed by a categorical one as a lookup of it, for review
(data/draft_lookup.py); never in a comparison schema."""
import json
import warnings

import numpy as np
import pytest
import pandas as pd

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.inference import comparison_schema, infer_schema_with_summary
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.data.schema_edit import edit
from test_lookup import UNITS, _lab


def _draft(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema_with_summary(df, **kw)


def test_the_draft_finds_a_lookup_flagged_for_review():
    df = _lab()
    df["state"] = np.random.default_rng(3).choice(["CA", "NY", "TX"], len(df))
    df["state_name"] = df["state"].map({"CA": "California", "NY": "New York",
                                        "TX": "Texas"})
    schema, lines = _draft(df)
    u = schema["units"]
    assert u.kind == "derived" and u.derive.op == "lookup" and u.derive.source == "test"
    assert u.derive.to_dict()["map"] == UNITS
    assert "units.map" in schema.drafted
    line = next(x for x in lines if x.strip().startswith("units"))
    assert "lookup" in line and "test" in line and "categorical" in line  # how to undo
    # a one-to-one pair: one is measured, the other looked up from it (no cycle)
    kinds = {schema["state"].kind, schema["state_name"].kind}
    assert kinds == {"categorical", "derived"}
    s2 = load_schema(schema.to_dict())  # loads as drafted
    out = Synthesizer(1.0, 1e-6, seed=0, iterations=2, progress=False).fit(df, s2).sample(500)
    assert (out["units"] == out["test"].map(UNITS)).all()


def test_the_draft_derives_from_the_source_with_most_values_only():
    r = np.random.default_rng(4)
    state = r.choice([f"S{i}" for i in range(12)], 4000)
    df = pd.DataFrame({"state": state,
                       "division": [f"D{int(s[1:]) // 3}" for s in state],
                       "region": [f"R{int(s[1:]) // 6}" for s in state],
                       "x": r.integers(0, 5, 4000).astype(str)})
    schema, _ = _draft(df)
    assert schema["state"].kind == "categorical"
    assert schema["division"].derive.source == "state"
    assert schema["region"].derive.source == "state"  # not from division, itself derived


def test_the_draft_leaves_near_functions_and_chance_ones_alone():
    df = _lab()
    df.loc[17, "units"] = "mg/dL" if df.loc[17, "units"] != "mg/dL" else "g/L"  # one off
    schema, _ = _draft(df)
    assert schema["units"].kind == "categorical"
    # a two-valued code beside a column of near-unique values: a function by chance
    r = np.random.default_rng(5)
    df = pd.DataFrame({"name": [f"n{i}" for i in r.permutation(90)] + ["n1"] * 10,
                       "flag": r.choice(["y", "n"], 100), "k": r.integers(0, 3, 100)})
    schema, _ = _draft(df, max_categories=100)
    assert schema["flag"].kind == "categorical"
    # a column with more values than the other is no lookup of it
    df = _lab()
    schema, _ = _draft(df)
    assert schema["test"].kind == "categorical" and schema["result"].kind == "numeric"


def test_the_draft_skips_missing_that_does_not_follow_the_source():
    df = _lab()
    df.loc[3, "units"] = None
    schema, _ = _draft(df)
    assert schema["units"].kind == "categorical"
    schema, _ = _draft(_lab(nullable=True))
    assert schema["units"].kind == "derived" and schema["units"].nullable


def test_comparison_schemas_draft_no_lookup():
    df = _lab(1000)
    s = comparison_schema(df, _lab(1000, seed=2))
    assert s["units"].kind == "categorical"


def test_the_drafts_undo_line_measures_the_column_again():
    schema, lines = _draft(_lab())
    line = next(x for x in lines if x.strip().startswith("units"))
    values = sorted(set(UNITS.values()))
    # the values to write are the public list, not the data's (set as they are, the tool
    # would mark them reviewed: a review's finding); the data's are named beside it
    assert "--set units.type=categorical --set 'units.values=[...]', its public values" \
        in line and all(v in line for v in values)
    doc = edit(schema.to_dict(), sets=[("units", "type", "categorical"),
                                       ("units", "values", values)])
    assert load_schema(doc)["units"].kind == "categorical"


def test_a_number_fixed_by_the_test_is_drafted_as_a_numeric_lookup():
    df = _lab()
    limit = {t: [5.5, 12.0, 0.25][i % 3] for i, t in enumerate(UNITS)}
    df["limit"] = df["test"].map(limit)
    df["result2"] = np.random.default_rng(9).normal(size=len(df))  # many values: none
    schema, _ = _draft(df)
    assert schema["limit"].kind == "derived" and schema["limit"].derive.source == "test"
    assert schema["limit"].derive.to_dict()["map"] == limit
    assert schema["result2"].kind == "numeric"


def test_a_drafted_lookup_keeps_the_parquet_files_type(tmp_path):
    """A probe's int32, float32 and Int16 columns fixed by a code were drafted lookups
    without the file's types, and came back int64 (the floats as integers)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from gpu_dpsyn.cli import main
    r = np.random.default_rng(0)
    src = r.choice(["a", "b", "c"], 3000)
    code = {"a": 1, "b": 2, "c": 3}
    table = pa.table({"src": pa.array(src),
                      "lk": pa.array([code[s] for s in src], pa.int32()),
                      "lk2": pa.array([float(code[s]) for s in src], pa.float32()),
                      "v": pa.array(r.integers(0, 9, 3000), pa.int32())})
    pq.write_table(table, tmp_path / "t.parquet")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(tmp_path / "t.parquet"), "--out",
                     str(tmp_path / "s.json")]) == 0
        spec = json.loads((tmp_path / "s.json").read_text())["columns"]
        assert spec["lk"]["op"] == "lookup" and spec["lk2"]["op"] == "lookup", spec
        assert main(["synthesize", str(tmp_path / "t.parquet"), "--schema",
                     str(tmp_path / "s.json"), "--epsilon", "1", "--delta", "1e-9",
                     "--out", str(tmp_path / "o.parquet"), "--quiet"]) == 0
    types = {f.name: str(f.type) for f in pq.read_schema(tmp_path / "o.parquet")}
    assert types["lk"] == "int32" and types["lk2"] == "float" and types["v"] == "int32", types


@pytest.mark.parametrize("name", ["subject_id", "subject", "patient", "mrn", "participant",
                                  "SubjectID", "case_no", "user_id", "id"])
def test_no_lookup_is_drafted_from_a_column_that_may_name_individuals(name):
    # a subject's arm keyed by its subject would list every real subject's arm in the
    # public schema (and copy it into the synthetic table); named so, also with many
    # records each (a user's 50 events)
    for keys, per in ((300, 8), (60, 50)):
        schema, _ = _draft(_trial(keys, per).rename(columns={"key": name}))
        assert schema["arm"].kind == "categorical", (keys, per)
        assert all(c.kind != "derived" for c in schema.columns)


@pytest.mark.parametrize("name", ["state_code", "species_id", "plot_id"])
def test_a_code_column_with_many_records_a_value_is_still_a_source(name):
    # state_code -> state name, species_id -> genus (ratdat's complete drafted four such
    # lookups, which a rule of id-like names had dropped): 40 codes of 100 records each
    df = _trial(40, 100).rename(columns={"key": name})
    schema, _ = _draft(df)
    assert schema["arm"].kind == "derived" and schema["arm"].derive.source == name
    # the same codes with a handful of records each (an individual's): none
    few = _trial(300, 8).rename(columns={"key": "ward"})
    assert _draft(few)[0]["arm"].kind == "categorical"


def _trial(keys: int, per: int) -> pd.DataFrame:
    r = np.random.default_rng(5)
    k = np.repeat(np.arange(keys), per)
    return pd.DataFrame({"key": [f"S{i:04d}" for i in k],
                         "arm": r.choice(["placebo", "low", "high"], keys)[k],
                         "visit": np.tile(np.arange(per), keys)})
