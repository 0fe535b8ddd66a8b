"""A schema's "ignored_columns": columns of the table that the curator declares unused.
They are never read into the model, not synthesized and not in the output, while a table
column the schema neither lists nor ignores is still refused (a misspelt name must not
vanish unseen)."""
import json

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
    _table().to_csv(path, index=False)
    schema = tmp_path / "s.json"
    assert main(["infer-schema", str(path), "--out", str(schema)]) == 0
    err = capsys.readouterr().err
    doc = json.loads(schema.read_text())
    assert doc["ignored_columns"] == ["notes"] and "notes" not in doc["columns"]
    assert any(x.strip().startswith("notes") and "empty" in x for x in err.splitlines())
    assert main(["schema", str(schema), "--ignore", "email", "--reviewed", "all"]) == 0
    doc = json.loads(schema.read_text())
    assert doc["ignored_columns"] == ["notes", "email"] and list(doc["columns"]) == ["k"]
    assert main(["check", str(path), "--schema", str(schema)]) == 0
    out = tmp_path / "o.csv"
    assert main(["synthesize", str(path), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--seed", "0", "--backend", "cpu", "--quiet",
                 "--adaptive-rounds", "0", "--iterations", "2", "--out", str(out)]) == 0
    assert pd.read_csv(out).columns.tolist() == ["k"]
    assert main(["evaluate", str(path), str(out), "--schema", str(schema), "--quiet"]) == 0


def test_a_csv_reader_leaves_ignored_columns_unread(tmp_path):
    from gpu_dpsyn.data.ingest import read_table
    from gpu_dpsyn.distributed.reading import read_partitioned
    path = tmp_path / "t.csv"
    _table(30).to_csv(path, index=False)
    s = load_schema(SCHEMA)
    assert read_table(str(path), schema=s).columns.tolist() == ["k"]
    assert read_partitioned(str(path), s).compute().columns.tolist() == ["k"]
    assert read_table(str(path)).columns.tolist() == ["k", "email", "notes"]
