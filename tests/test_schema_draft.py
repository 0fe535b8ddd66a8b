"""A reviewable draft: infer-schema flags every value it read off the data, load_schema
warns while any is left, and `gpu-dpsyn schema` sets ranges, types and drops columns and
marks values reviewed without editing JSON by hand."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import NonPrivateSchemaWarning, load_schema
from gpu_dpsyn.cli import main
from gpu_dpsyn.errors import SchemaError


@pytest.fixture
def draft(tmp_path):
    # colour shuffled: repeating in step with age, it was a function of it (a lookup)
    df = pd.DataFrame({"age": list(range(18, 98)) * 5,
                       "colour": np.random.default_rng(0).permutation(
                           ["red", "blue", "green", "red"] * 100),
                       "when": pd.date_range("2020-01-01", periods=400, freq="D")
                       .strftime("%Y-%m-%d")})
    data = tmp_path / "t.csv"
    df.to_csv(data, index=False)
    out = tmp_path / "s.json"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(out)]) == 0
    return out


def test_the_draft_lists_what_it_read_off_the_data(draft, capsys):
    doc = json.loads(draft.read_text())
    flagged = doc["_drafted_from_data"]
    assert {"colour.values", "when.min", "when.max"} <= set(flagged)
    assert any(f.startswith("age.") for f in flagged)
    with pytest.warns(NonPrivateSchemaWarning, match=r"read off the private data .*colour"):
        load_schema(draft)


def test_the_schema_command_sets_a_range_and_marks_it_reviewed(draft, tmp_path, capsys):
    doc = json.loads(draft.read_text())
    age = doc["columns"]["age"]
    assert main(["schema", str(draft), "--set", "age.min=0", "--set", "age.max=120",
                 "--set", "age.bins=12", "--set", "age.type=numeric",
                 "--set", "age.integer=true", "--reviewed", "colour", "--drop", "when"]) == 0
    doc = json.loads(draft.read_text())
    age = doc["columns"]["age"]
    assert (age["min"], age["max"], age["bins"]) == (0, 120, 12) and "edges" not in age
    assert "values" not in age and age["type"] == "numeric"
    assert "when" not in doc["columns"]
    assert "_drafted_from_data" not in doc or not [
        f for f in doc["_drafted_from_data"] if f.split(".")[0] in ("age", "colour", "when")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", NonPrivateSchemaWarning)  # nothing drafted is left
        s = load_schema(draft)
    assert s["age"].size == 12
    assert "no drafted value left" in capsys.readouterr().err


def test_the_schema_command_refuses_bad_edits_and_writes_nothing(draft):
    before = draft.read_text()
    assert main(["schema", str(draft), "--set", "age.nullable=maybe"]) == 2
    assert main(["schema", str(draft), "--set", "nope.min=1"]) == 2
    assert main(["schema", str(draft), "--set", "age"]) == 2
    assert draft.read_text() == before
    with pytest.raises(SchemaError, match="did you mean"):  # a key set must be a known one
        from gpu_dpsyn.data.schema import schema_from_dict
        from gpu_dpsyn.data.schema_edit import edit
        schema_from_dict(edit(json.loads(before), [("colour", "valus", ["a"])]))


def test_a_long_value_is_set_from_a_file(draft, tmp_path, capsys):
    """A list of 74,000 codes passes what one argument may hold (bash: "Argument list too
    long"): --set-file reads the value from a JSON file, beside the --set edits."""
    codes = tmp_path / "colours.json"
    codes.write_text(json.dumps(["red", "blue", "green", "teal"]))
    assert main(["schema", str(draft), "--set", "colour.nullable=true",
                 "--set-file", f"colour.values={codes}", "--reviewed", "colour"]) == 0
    doc = json.loads(draft.read_text())["columns"]
    assert doc["colour"]["values"] == ["red", "blue", "green", "teal"]
    assert doc["colour"]["nullable"] is True
    before = draft.read_text()
    bom = tmp_path / "bom.json"  # saved by Notepad: read as JSON all the same
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(["red", "blue"]).encode())
    assert main(["schema", str(draft), "--set-file", f"colour.values={bom}"]) == 0
    assert main(["schema", str(draft), "--set-file", f"colour.values={codes}"]) == 0
    (tmp_path / "bad.json").write_text("red, blue")
    for arg, says in [(f"colour.values={tmp_path / 'none.json'}", "cannot read"),
                      (f"colour.values={tmp_path / 'bad.json'}", "no JSON")]:
        capsys.readouterr()
        assert main(["schema", str(draft), "--set-file", arg]) == 2
        err = capsys.readouterr().err
        assert says in err and err.count("\n") == 1
    assert draft.read_text() == before


def test_the_schema_command_sets_the_top_level_bounds(draft, capsys):
    # README step 2 asks for max_records_per_individual; --set could only reach columns
    assert main(["schema", str(draft), "--set", "max_records_per_individual=5",
                 "--set", "max_rows=50000"]) == 0
    doc = json.loads(draft.read_text())
    assert doc["max_records_per_individual"] == 5 and doc["max_rows"] == 50000
    assert main(["schema", str(draft), "--set", "max_rows=null"]) == 0
    assert "max_rows" not in json.loads(draft.read_text())
    before = draft.read_text()
    assert main(["schema", str(draft), "--set", "max_records=5"]) == 2  # no such key
    assert main(["schema", str(draft), "--set", "max_rows=-1"]) == 2  # validated
    assert draft.read_text() == before


@pytest.mark.parametrize("a,b", [("max_records_per_individual=5", "max_records_per_individual=1"),
                                 ('colour.values=["red","blue","green"]',
                                  'colour.values=["red","blue"]')])
def test_two_values_for_one_key_are_refused(draft, capsys, a, b):
    # the last one was kept, silently: one record a person where five were meant
    before = draft.read_text()
    assert main(["schema", str(draft), "--set", a, "--set", b]) == 2
    assert "twice" in capsys.readouterr().err
    assert draft.read_text() == before
    assert main(["schema", str(draft), "--set", a, "--set", a]) == 0  # the same: one


def test_marking_values_reviewed_names_each_one_as_now_public(draft, capsys):
    # --reviewed all cleared every warning without a word about what it vouched for
    assert main(["schema", str(draft), "--reviewed", "all"]) == 0
    err = capsys.readouterr().err
    assert "now taken as public facts" in err and "colour (values)" in err
    assert "when (min, max, bins)" in err  # (bins: from its count of values)


def test_a_column_of_whole_numbers_retyped_numeric_stays_integer():
    """--set age.type=numeric on a categorical of integers keeps them whole ("integer":
    true; the retype dropped it and ages came out as 17.748); integer=false says
    otherwise, and text or decimal values start without it."""
    from gpu_dpsyn.data.schema_edit import edit
    doc = {"columns": {"age": {"type": "categorical", "values": [18, 30, 41]},
                       "w": {"type": "categorical", "values": [0.5, 1]},
                       "c": {"type": "categorical", "values": ["a", "b"]}}}
    sets = [(n, "type", "numeric") for n in ("age", "w", "c")] + \
        [(n, k, v) for n in ("age", "w", "c") for k, v in (("min", 0), ("max", 120))]
    got = edit(doc, sets)["columns"]
    assert got["age"].get("integer") is True
    assert "integer" not in got["w"] and "integer" not in got["c"]
    assert "integer" not in edit(doc, sets + [("age", "integer", None)])["columns"]["age"]
    assert edit(doc, sets + [("age", "integer", False)])["columns"]["age"]["integer"] is False
    aliased = {"columns": {"age": {"type": "category", "values": [18, 30]}}}  # type aliases
    got = edit(aliased, [("age", "type", "numerical"), ("age", "min", 0), ("age", "max", 99)])
    assert got["columns"]["age"].get("integer") is True


def test_dropping_or_retyping_a_column_with_dots_in_its_name_clears_its_drafted_keys():
    from gpu_dpsyn.data.schema_edit import edit
    doc = {"columns": {"spend.usd": {"type": "numeric", "edges": [0, 1, 2]},
                       "spend": {"type": "numeric", "edges": [0, 1, 2]}},
           "_drafted_from_data": ["spend.usd.edges", "spend.edges"]}
    assert edit(doc, drops=["spend.usd"])["_drafted_from_data"] == ["spend.edges"]
    assert edit(doc, drops=["spend"])["_drafted_from_data"] == ["spend.usd.edges"]
    out = edit(doc, [("spend.usd", "type", "categorical"), ("spend.usd", "values", [1])])
    assert out["_drafted_from_data"] == ["spend.edges"]


def _doc(tmp_path, doc):
    p = tmp_path / "s.json"
    p.write_text(json.dumps(doc))
    return p


def test_a_drafted_id_naming_the_individual_can_be_dropped_and_ignored(tmp_path, capsys):
    # every attempt failed: the unit was read before --set, and --drop left individual_id
    doc = {"columns": {"Telefonnummer": {"type": "id"}, "PLZ": {"type": "id"},
                       "k": {"type": "categorical", "values": ["a"]}},
           "individual_id": "Telefonnummer"}
    p = _doc(tmp_path, doc)
    assert main(["schema", str(p), "--drop", "Telefonnummer", "--ignore",
                 "Telefonnummer"]) == 0, capsys.readouterr().err
    got = json.loads(p.read_text())
    assert "Telefonnummer" not in got["columns"] and got["ignored_columns"] == ["Telefonnummer"]
    assert "individual_id" not in got
    assert "now named by 'PLZ', not 'Telefonnummer'" in capsys.readouterr().err  # said
    p = _doc(tmp_path, doc)
    assert main(["schema", str(p), "--set", "individual_id=PLZ", "--ignore",
                 "Telefonnummer"]) == 0, capsys.readouterr().err
    assert json.loads(p.read_text())["individual_id"] == "PLZ"


def test_an_ignored_column_comes_back_with_a_type(tmp_path, capsys):
    doc = {"columns": {"k": {"type": "categorical", "values": ["a"]}},
           "ignored_columns": ["d", "e"]}
    p = _doc(tmp_path, doc)
    assert main(["schema", str(p), "--set", "d.type=categorical",
                 "--set", 'd.values=["x", "y"]']) == 0, capsys.readouterr().err
    got = json.loads(p.read_text())
    assert got["columns"]["d"] == {"type": "categorical", "values": ["x", "y"]}
    assert got["ignored_columns"] == ["e"]
    assert main(["schema", str(p), "--set", "z.min=3"]) == 2  # no type: no new column
    before = p.read_text()  # a name neither listed nor ignored: a typo, not a new column
    assert main(["schema", str(p), "--set", "K.type=id"]) == 2
    assert p.read_text() == before and "no column 'K'" in capsys.readouterr().err


def test_a_schema_the_rules_now_refuse_can_still_be_mended(tmp_path, capsys):
    # edit_schema read the document before as a Schema too, and refused to touch it
    doc = {"columns": {"d": {"type": "datetime", "min": "2016-01-01", "max": "2016-12-31",
                             "unit": "day", "format": "%d.%m.%y"},
                       "k": {"type": "categorical", "values": ["a"]}},
           "csv": {"separator": ":"}}
    p = _doc(tmp_path, doc)
    assert main(["schema", str(p), "--set", "d.format=%d.%m.%Y",
                 "--set", "csv.separator=;"]) == 0, capsys.readouterr().err
    got = json.loads(p.read_text())
    assert got["columns"]["d"]["format"] == "%d.%m.%Y" and got["csv"] == {"separator": ";"}


def test_a_range_set_beside_public_edges_is_refused_not_dropping_them(tmp_path, capsys):
    """--set age.max=129 on a column whose edges and support were written by hand wrote
    "bins": 3 in their place, saying nothing."""
    path = tmp_path / "e.json"
    doc = {"columns": {"age": {"type": "numeric", "integer": True, "min": 0, "max": 119,
                               "edges": [0, 18, 65, 120], "support": [0, 18, 30, 65, 100]},
                       "sex": {"type": "categorical", "values": ["F", "M"]}}}
    path.write_text(json.dumps(doc))
    for setting in ("age.max=129", "age.bins=3"):
        assert main(["schema", str(path), "--set", setting]) == 2
        err = capsys.readouterr().err
        assert "edges" in err and err.count("\n") == 1
        assert json.loads(path.read_text()) == doc
    # the advice, followed as written
    assert "--set age.edges=null --set age.min=... --set age.max=..." in err
    assert main(["schema", str(path), "--set", "age.edges=null", "--set", "age.support=null",
                 "--set", "age.max=129", "--set", "age.bins=3"]) == 0
    assert json.loads(path.read_text())["columns"]["age"]["max"] == 129


def test_a_drafted_nullable_is_listed_as_read_off_the_data(tmp_path):
    """One record's empty cell made the draft nullable; only the values were listed, so
    the review could end with that fact about one record left in."""
    data, out = tmp_path / "t.csv", tmp_path / "s.json"
    c = ["a", "b", "c"] * 333 + ["a"]
    c[17] = ""
    pd.DataFrame({"c": c, "k": list(range(5)) * 200}).to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["columns"]["c"]["nullable"] is True
    assert "c.nullable" in doc["_drafted_from_data"]
    assert "k.nullable" not in doc["_drafted_from_data"]


def test_an_edit_names_what_is_left_to_review_in_a_few_words(tmp_path, capsys):
    """Each edit of a 47-column survey's draft printed every drafted value left, about
    fifty names on one line."""
    data, out = tmp_path / "t.csv", tmp_path / "s.json"
    pd.DataFrame({f"q{i:02d}": [str(j % (i + 2)) for j in range(200)] for i in range(40)}
                 ).to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["schema", str(out), "--reviewed", "q00"]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.startswith("wrote"))
    assert "39 columns" in line and "q39" not in line and len(line) < 400, line


def test_a_public_range_keeps_the_drafted_step_of_amounts(tmp_path):
    """Salaries in steps of 100 were drafted with "support": {"step": 100}; setting their
    public range dropped it unsaid, and 1.1% of the release's salaries were whole
    hundreds, against all of the real ones."""
    data, out = tmp_path / "t.csv", tmp_path / "s.json"
    r = np.random.default_rng(0)
    pd.DataFrame({"salary": (r.integers(300, 2500, 2000) * 100),
                  "k": r.choice(["a", "b"], 2000)}).to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(out)]) == 0
    assert json.loads(out.read_text())["columns"]["salary"]["support"]["step"] == 100
    assert main(["schema", str(out), "--set", "salary.min=10000", "--set", "salary.max=250000",
                 "--set", "salary.bins=24"]) == 0
    doc = json.loads(out.read_text())
    col = doc["columns"]["salary"]
    assert col["support"]["step"] == 100 and "salary.support" in doc["_drafted_from_data"]
    s = load_schema(doc)
    assert s["salary"].support is not None


def test_a_new_range_keeps_the_width_of_bins_of_whole_units(tmp_path, capsys):
    """--set when.max=... kept 365 bins of whole minutes over the longer range: each bin
    silently became 1.25 days wide."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"columns": {"when": {
        "type": "datetime", "min": "2023-01-01T00:00:00", "max": "2023-12-31T23:59:59",
        "unit": "minute", "bins": 365}}}))
    assert main(["schema", str(path), "--set", "when.max=2024-03-31T23:59:59"]) == 0
    assert json.loads(path.read_text())["columns"]["when"]["bins"] == 456  # still a day
    assert main(["schema", str(path), "--set", "when.min=2023-07-01T00:00:00",
                 "--set", "when.bins=10"]) == 0  # a count given: as given
    assert json.loads(path.read_text())["columns"]["when"]["bins"] == 10
    # both ends moved in one command, in either order: from the range before and after
    for order in (["min", "max"], ["max", "min"]):
        path.write_text(json.dumps({"columns": {"when": {
            "type": "datetime", "min": "2023-01-01T00:00:00", "max": "2023-12-31T23:59:59",
            "unit": "minute", "bins": 365}}}))
        new = {"min": "2200-01-01T00:00:00", "max": "2200-12-31T23:59:59"}
        assert main(["schema", str(path)] + [x for k in order
                                             for x in ("--set", f"when.{k}={new[k]}")]) == 0
        assert json.loads(path.read_text())["columns"]["when"]["bins"] == 365, order


def test_bins_kept_as_wide_past_the_limit_say_so(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"columns": {"when": {
        "type": "datetime", "min": "2023-01-01T00:00:00", "max": "2023-12-31T23:59:59",
        "unit": "minute", "bins": 365}}}))
    assert main(["schema", str(path), "--set", "when.min=1700-01-01T00:00:00"]) == 2
    err = capsys.readouterr().err
    assert "kept as wide" in err and "--set when.bins=N" in err and err.count("\n") == 1



def test_columns_named_with_signs_can_be_edited(tmp_path, capsys):
    """A name holding "=" was cut at it (a=b.values=[...]: column "a"), and one starting
    with "-" read as an option: --set=NAME.KEY=VALUE takes it, and argparse's refusal of
    --set -neg.min=0 says so."""
    r = np.random.default_rng(0)
    df = pd.DataFrame({"a=b": r.choice(["x", "y", "z"], 600), "income:usd":
                       r.integers(0, 10 ** 5, 600), "x,y": r.integers(0, 4, 600),
                       "-neg": r.normal(size=600).round(2),
                       "k=1,2:3": r.choice(["p", "q"], 600)})
    data, doc = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(doc)]) == 0
    capsys.readouterr()
    assert main(["schema", str(doc), "--set", 'a=b.values=["x","y","z","w"]',
                 "--set", "income:usd.min=0", "--set", "x,y.values=[0,1,2,3,4]",
                 "--set=-neg.min=-5", "--set", 'k=1,2:3.values=["p","q","r"]',
                 "--set", "a=b.nullable=true"]) == 0, capsys.readouterr().err
    cols = json.loads(doc.read_text())["columns"]
    assert cols["a=b"]["values"] == ["x", "y", "z", "w"] and cols["a=b"]["nullable"] is True
    assert cols["income:usd"]["min"] == 0 and cols["-neg"]["min"] == -5
    assert cols["x,y"]["values"] == [0, 1, 2, 3, 4]
    assert cols["k=1,2:3"]["values"] == ["p", "q", "r"]
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["schema", str(doc), "--set", "-neg.max=5"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set=" in err, err
