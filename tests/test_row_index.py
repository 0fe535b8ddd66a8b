"""A CSV saved with pandas' row index (to_csv's default) has a blank first header cell,
read as 'Unnamed: 0', over the row numbers 0..n-1. Up to 100 rows it was drafted as a
categorical column listing them all (budget spent measuring a uniform column); past that,
as an id "looking like an identifier". It is now drafted as an id named a saved row
index, whatever the table's size; other values under such a header keep their draft."""
import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main


def _table(n):
    rng = np.random.default_rng(0)
    return pd.DataFrame({"age": rng.integers(18, 90, n), "city": rng.choice(list("abc"), n)})


def _draft(tmp_path, capsys, path):
    schema = tmp_path / "s.json"
    assert main(["infer-schema", str(path), "--out", str(schema)]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if x.strip().startswith("Unnamed: 0"))
    return schema, json.loads(schema.read_text())["columns"]["Unnamed: 0"], line, err


def _synthesize(tmp_path, path, schema):
    out = tmp_path / "o.csv"
    assert main(["synthesize", str(path), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--rows", "40", "--iterations", "1",
                 "--backend", "cpu", "--quiet"]) == 0
    return pd.read_csv(out)


@pytest.mark.parametrize("n, start", [(80, 0), (80, 1), (300, 0)])
def test_a_saved_row_index_is_drafted_as_an_id(tmp_path, capsys, n, start):
    path = tmp_path / "t.csv"
    df = _table(n)
    df.index += start
    df.to_csv(path)
    schema, col, line, err = _draft(tmp_path, capsys, path)
    assert col == {"type": "id"}
    assert "row index" in line and f"{start}..{n - 1 + start}" in line, line
    assert "blank header cell" not in err  # said by its line
    # its last line did not say "names the individual" of a row index (a probe's)
    assert "a saved row index, names records, not people" in err, err
    assert "guessed an id, names the individual" not in err
    syn = _synthesize(tmp_path, path, schema)
    assert list(syn.columns) == ["Unnamed: 0", "age", "city"]
    assert syn["Unnamed: 0"].tolist() == list(range(1, 41))


@pytest.mark.parametrize("values", ["shuffled", "gapped", "counts"])
def test_other_values_under_a_blank_header_keep_their_draft(tmp_path, capsys, values):
    path = tmp_path / "t.csv"
    df = _table(80)
    rng = np.random.default_rng(1)
    first = {"shuffled": rng.permutation(80), "gapped": np.arange(80) * 3,
             "counts": rng.integers(0, 20, 80)}[values]
    df.insert(0, "", first)  # a blank header cell over data
    df.to_csv(path, index=False)
    schema, col, line, err = _draft(tmp_path, capsys, path)
    assert "row index" not in line and col["type"] != "id"
    assert "blank header cell" in err
    syn = _synthesize(tmp_path, path, schema)
    assert list(syn.columns) == ["Unnamed: 0", "age", "city"]
