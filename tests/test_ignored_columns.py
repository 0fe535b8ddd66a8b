"""A schema's "ignored_columns": columns of the table that the curator declares unused.
They are never read into the model, not synthesized and not in the output, while a table
column the schema neither lists nor ignores is still refused (a misspelt name must not
vanish unseen)."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, SchemaError

SCHEMA = {"columns": {"k": {"type": "categorical", "values": ["a", "b", "c"]}},
          "ignored_columns": ["email", "notes"]}


def _table(n=200):
    r = np.random.default_rng(0)
    return pd.DataFrame({"k": r.choice(["a", "b", "c"], n),
                         "email": [f"p{i}@x.org" for i in range(n)], "notes": [None] * n})


def test_ignored_columns_are_not_read_synthesized_or_written():
    s = load_schema(SCHEMA)
    assert s.ignored == ["email", "notes"] and s.to_dict()["ignored_columns"] == s.ignored
    kw = dict(seed=0, backend="cpu", progress=False, adaptive_rounds=0, iterations=2)
    out = Synthesizer(1.0, 1e-9, **kw).fit(_table(), s).sample(50)
    assert list(out.columns) == ["k"]
    # the same release as from the table without them: nothing of theirs was read
    bare = Synthesizer(1.0, 1e-9, **kw).fit(_table()[["k"]], s).sample(50)
    pd.testing.assert_frame_equal(out, bare)
    with pytest.raises(DataError, match=r"not in the schema: \['phone'\].*ignored_columns"):
        Synthesizer(1.0, 1e-9, **kw).fit(_table().assign(phone=1), s)


def test_a_column_both_listed_and_ignored_is_refused():
    with pytest.raises(SchemaError, match="'k'.*both"):
        load_schema({"columns": SCHEMA["columns"], "ignored_columns": ["k"]})
    with pytest.raises(SchemaError, match="ignored_columns"):
        load_schema({"columns": SCHEMA["columns"], "ignored_columns": "email"})


def test_infer_schema_ignores_an_empty_column_and_the_file_then_synthesizes(tmp_path, capsys):
    path = tmp_path / "t.csv"
    _table().rename(columns={"email": "ref"}).assign(
        ref=[f"R{i:05d}" for i in range(200)]).to_csv(path, index=False)
    schema = tmp_path / "s.json"
    assert main(["infer-schema", str(path), "--out", str(schema)]) == 0
    err = capsys.readouterr().err
    doc = json.loads(schema.read_text())
    assert doc["ignored_columns"] == ["notes"] and "notes" not in doc["columns"]
    assert any(x.strip().startswith("notes") and "empty" in x for x in err.splitlines())
    # ref, guessed an id, names the individual: ignored only once dropped as the unit
    assert main(["schema", str(schema), "--ignore", "ref"]) == 2
    assert "names the individual" in capsys.readouterr().err
    assert main(["schema", str(schema), "--drop", "ref", "--ignore", "ref",
                 "--reviewed", "all"]) == 0
    doc = json.loads(schema.read_text())
    assert doc["ignored_columns"] == ["notes", "ref"] and list(doc["columns"]) == ["k"]
    assert main(["check", str(path), "--schema", str(schema)]) == 0
    out = tmp_path / "o.csv"
    assert main(["synthesize", str(path), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--seed", "0", "--backend", "cpu", "--quiet",
                 "--adaptive-rounds", "0", "--iterations", "2", "--out", str(out)]) == 0
    assert pd.read_csv(out).columns.tolist() == ["k"]
    assert main(["evaluate", str(path), str(out), "--schema", str(schema), "--quiet"]) == 0


def test_the_readers_drop_ignored_columns(tmp_path):
    from gpu_dpsyn.data.ingest import read_table
    from gpu_dpsyn.distributed.reading import read_partitioned
    path = tmp_path / "t.csv"
    _table(30).to_csv(path, index=False)
    s = load_schema(SCHEMA)
    assert read_table(str(path), schema=s).columns.tolist() == ["k"]
    assert read_partitioned(str(path), s).compute().columns.tolist() == ["k"]
    assert read_table(str(path)).columns.tolist() == ["k", "email", "notes"]


def test_a_row_with_more_fields_is_still_refused_when_a_column_is_ignored(tmp_path):
    """usecols (to leave the ignored columns unread) stopped pandas refusing a row with
    more fields than the header: an unquoted comma in the ignored free text shifted the
    next column's value silently. The whole row is read, as without ignored columns."""
    from gpu_dpsyn.data.ingest import read_table
    from gpu_dpsyn.distributed.reading import read_partitioned
    path = tmp_path / "t.csv"
    path.write_text("k,notes,x\na,fine,1\nb,hello, 2,1\n")
    s = load_schema({"columns": {"k": {"type": "categorical", "values": ["a", "b"]},
                                 "x": {"type": "categorical", "values": [1, 2]}},
                     "ignored_columns": ["notes"]})
    with pytest.raises(DataError, match="fields"):
        read_table(str(path), schema=s)
    with pytest.raises(DataError, match="fields"):
        read_partitioned(str(path), s)
    path.write_text("k,email,email,x\na,p,q,1\n")  # a header naming a column twice
    with pytest.raises(DataError, match="more than once"):
        read_table(str(path), schema=s)


def test_a_model_saved_before_ignored_columns_existed_still_describes_its_schema():
    import pickle
    s = load_schema(SCHEMA)
    old = pickle.loads(pickle.dumps(s))
    del old.__dict__["ignored"]  # as unpickled from a model saved at 7bf42ac
    again = pickle.loads(pickle.dumps(old))
    assert again.ignored == [] and "ignored_columns" not in again.to_dict()


def test_schema_drop_takes_a_name_back_out_of_ignored_columns():
    from gpu_dpsyn.data.schema_edit import edit
    doc = edit(SCHEMA, drops=["email"])
    assert doc["ignored_columns"] == ["notes"]
    assert "ignored_columns" not in edit(doc, drops=["notes"])


def test_ignoring_the_column_that_names_the_individual_is_refused():
    # --ignore pid left no id column: each record became an individual (a weaker unit)
    # while the table still passed every check
    from gpu_dpsyn.data.schema_edit import edit
    doc = {"columns": {"pid": {"type": "id"}, "k": SCHEMA["columns"]["k"]},
           "max_records_per_individual": 3}
    with pytest.raises(SchemaError, match="'pid' names the individual"):
        edit(doc, ignores=["pid"])
    aliased = {**doc, "columns": {**doc["columns"], "pid": {"kind": "identifier"}}}
    with pytest.raises(SchemaError, match="'pid' names the individual"):  # any type alias
        edit(aliased, ignores=["pid"])
    doc["columns"]["row"] = {"type": "id"}
    doc["individual_id"] = "pid"
    assert "row" not in edit(doc, ignores=["row"])["columns"]  # another id: fine


def test_an_ignored_column_named_like_an_id_is_warned_of_when_no_column_names_the_individual():
    # --drop pid --ignore pid (or a hand-edited list) left records as individuals and the
    # bound unenforced, with nothing said on the terminal
    df = _table().assign(pid=np.arange(200) // 4)
    s = load_schema({**SCHEMA, "ignored_columns": ["email", "notes", "pid"],
                     "max_records_per_individual": 4})
    kw = dict(seed=0, backend="cpu", progress=False, adaptive_rounds=0, iterations=2)
    with pytest.warns(UserWarning, match="'pid'.*named like an identifier.*individual"):
        Synthesizer(1.0, 1e-9, **kw).fit(df, s)


def test_an_ignored_columns_mistakes_say_so():
    from gpu_dpsyn.data.schema_edit import edit
    with pytest.raises(SchemaError, match="'k' is in ignored_columns.*--drop"):
        edit({**SCHEMA, "ignored_columns": ["k"], "columns": {"x": {"type": "id"}}},
             [("k", "values", ["a"])])
    with pytest.raises(SchemaError, match="ignored_columns"):
        load_schema({**SCHEMA, "ignored_columns": [""]})
    with pytest.raises(SchemaError, match="individual_id 'pid' is in ignored_columns"):
        load_schema({**SCHEMA, "ignored_columns": ["pid"], "individual_id": "pid"})


def test_infer_schema_leaves_out_the_columns_given_by_ignore(tmp_path, capsys):
    """A curator who knows a column is personal data could not say so to infer-schema: it
    took `schema --set individual_id=... --ignore ...` after the draft."""
    import json
    import warnings
    from gpu_dpsyn.cli import main
    data, out = tmp_path / "t.csv", tmp_path / "s.json"
    n = 300
    pd.DataFrame({"name": [f"P{i % 40}" for i in range(n)], "k": [i % 3 for i in range(n)],
                  "ward": ["A", "B"] * (n // 2)}).to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(out), "--ignore", "name"]) == 0
    doc = json.loads(out.read_text())
    assert "name" not in doc["columns"] and doc["ignored_columns"] == ["name"]
    assert not [d for d in doc.get("_drafted_from_data", []) if d.startswith("name.")]
    err = capsys.readouterr().err
    assert "given by --ignore" in err
    for bad in (["--ignore", "nope"], ["--ignore", "k", "--id", "k"]):
        assert main(["infer-schema", str(data), "--out", str(tmp_path / "x.json")] + bad) == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_a_column_given_by_ignore_is_not_read_at_all(tmp_path, capsys):
    """--ignore secret still read the column: its decimal commas set the draft's
    "decimal", and its bytes could be warned of."""
    from gpu_dpsyn.cli import main
    path, out = tmp_path / "t.csv", tmp_path / "s.json"
    path.write_text("a;secret\n" + "".join(f"{'xyz'[i % 3]};{i},5\n" for i in range(300)))
    assert main(["infer-schema", str(path), "--out", str(out), "--ignore", "secret"]) == 0
    doc = json.loads(out.read_text())
    assert doc["ignored_columns"] == ["secret"] and "csv" in doc
    assert doc["csv"].get("decimal", ".") == "."
    assert "decimal ','" not in capsys.readouterr().err


def test_a_synthesized_column_named_like_an_id_is_warned_of_when_no_column_names_the_individual():
    """A draft without --id made a patient id column numbers to synthesize: each record
    then counted as an individual (17 records of one patient, bound unenforced), and
    nothing on the terminal said so (a curator probe).  A code (country_code) is no id."""
    df = _table().assign(patient_id=900001 + np.arange(200) // 4,
                         country_code=np.where(np.arange(200) % 3, "DE", "FR"))
    cols = {**SCHEMA["columns"],
            "patient_id": {"type": "numeric", "integer": True, "min": 900001,
                           "max": 906000, "bins": 32},
            "country_code": {"type": "categorical", "values": ["DE", "FR"]}}
    kw = dict(seed=0, backend="cpu", progress=False, adaptive_rounds=0, iterations=2)
    s = load_schema({**SCHEMA, "columns": cols, "ignored_columns": ["email", "notes"]})
    with pytest.warns(UserWarning, match=r"'patient_id' is named like an identifier.*"
                                         r"synthesized.*no column names the individual"):
        Synthesizer(1.0, 1e-9, **kw).fit(df, s)
    del cols["patient_id"]
    s = load_schema({**SCHEMA, "columns": cols, "ignored_columns": ["email", "notes"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        warnings.filterwarnings("ignore", message=".*(noise swamps|a seed was given).*")
        Synthesizer(1.0, 1e-9, **kw).fit(df.drop(columns="patient_id"), s)


def test_a_saved_row_index_as_the_only_id_does_not_hide_a_person_id():
    """A CSV saved with pandas' index drafts it an id, hence the individual: the warning
    about patient_id returned early, and the run said the bound was enforced (a review)."""
    df = _table().assign(patient_id=900001 + np.arange(200) // 4)
    df.insert(0, "Unnamed: 0", np.arange(200))
    cols = {"Unnamed: 0": {"type": "id"}, **SCHEMA["columns"],
            "patient_id": {"type": "numeric", "integer": True, "min": 900001,
                           "max": 906000, "bins": 32}}
    s = load_schema({**SCHEMA, "columns": cols, "ignored_columns": ["email", "notes"]})
    kw = dict(seed=0, backend="cpu", progress=False, adaptive_rounds=0, iterations=2)
    with pytest.warns(UserWarning, match=r"'Unnamed: 0' is a saved row index.*records, not "
                                         r"people"):
        with pytest.warns(UserWarning, match=r"'patient_id' is named like an identifier"):
            Synthesizer(1.0, 1e-9, **kw).fit(df, s)
