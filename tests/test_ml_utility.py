"""Machine-learning utility: train on synthetic / on real, test on held-out real rows."""
import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.errors import DPSynError
from gpu_dpsyn.evaluation.evaluate import ml_utility

pytest.importorskip("sklearn")


@pytest.fixture(autouse=True)
def one_thread():
    """OpenMP threads spin against each other on a small shared machine (10x slower)."""
    from threadpoolctl import threadpool_limits
    with threadpool_limits(limits=1):
        yield

SCHEMA = {"columns": {
    "shape": {"type": "categorical", "values": ["circle", "square", "star", "heart"]},
    "size": {"type": "numeric", "integer": True, "min": 0, "max": 99, "bins": 20},
    "noise": {"type": "categorical", "values": ["a", "b", "c"]},
    "label": {"type": "categorical", "values": ["x", "y", "z"]},
    "price": {"type": "numeric", "min": -10, "max": 210, "bins": 10}}}


def table(n=1500, seed=0):
    """label is a function of shape (3 classes, about equal shares), price of size."""
    r = np.random.default_rng(seed)
    shape = r.choice(SCHEMA["columns"]["shape"]["values"], n, p=[1 / 3, 1 / 3, 1 / 6, 1 / 6])
    size = r.integers(0, 100, n)
    label = pd.Series(shape).map({"circle": "x", "square": "y", "star": "z", "heart": "z"})
    return pd.DataFrame({"shape": shape, "size": size, "noise": r.choice(list("abc"), n),
                         "label": label, "price": 2.0 * size + r.normal(0, 3, n)})


def broken(df, seed=1):
    """The same columns with the target's link cut: each column shuffled on its own."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({c: r.permutation(df[c].to_numpy()) for c in df.columns})


def test_classification_real_near_one_broken_synthetic_near_chance():
    real = table()
    good = ml_utility(real, table(seed=5), SCHEMA, "label")
    assert good["task"] == "classification" and good["test_rows"] == 450
    assert good["train_rows"] == {"real": 1050, "synthetic": 1500}
    assert good["real"]["accuracy"] == 1.0 and good["synthetic"]["accuracy"] == 1.0
    assert good["real"]["macro_f1"] == 1.0 and good["gap"]["accuracy"] == 0.0
    bad = ml_utility(real, broken(real), SCHEMA, "label")
    assert bad["real"] == good["real"]  # same split, same real model
    # no link left: about the commonest class's share (1/3), far below the real model
    assert abs(bad["synthetic"]["accuracy"] - 1 / 3) < 0.08
    assert bad["synthetic"]["macro_f1"] < 0.45
    assert bad["gap"]["accuracy"] == pytest.approx(1 - bad["synthetic"]["accuracy"])
    assert bad["majority_accuracy"] == pytest.approx(1 / 3, abs=0.05)


def test_regression_r2_on_values():
    real = table()
    res = ml_utility(real, table(seed=7), SCHEMA, "price")
    assert res["task"] == "regression" and set(res["real"]) == {"r2"}
    # the feature is size in 20 bins of 5: the model can do no better than the bin's middle,
    # R^2 = 1 - (var(noise) + 4 (5^2 - 1) / 12) / (4 (100^2 - 1) / 12) = 1 - 17 / 3333 = 0.995
    assert res["real"]["r2"] == pytest.approx(0.995, abs=0.004)
    assert res["synthetic"]["r2"] == pytest.approx(0.995, abs=0.004)
    bad = ml_utility(real, broken(real), SCHEMA, "price")
    assert bad["synthetic"]["r2"] < 0.05 and bad["gap"]["r2"] > 0.9  # no better than the mean


def test_same_seed_same_numbers_and_missing_numeric_targets_are_left_out():
    real, syn = table(), broken(table())
    assert ml_utility(real, syn, SCHEMA, "label") == ml_utility(real, syn, SCHEMA, "label")
    schema = json.loads(json.dumps(SCHEMA))
    schema["columns"]["price"]["nullable"] = True
    real = real.astype({"price": "Float64"})
    real.loc[:499, "price"] = pd.NA
    res = ml_utility(real, syn, schema, "price")
    assert res["test_rows"] == 300 and res["train_rows"]["real"] == 700


def test_a_one_class_synthetic_table_predicts_that_class():
    real = table()
    syn = real.assign(label="x")
    res = ml_utility(real, syn, SCHEMA, "label")
    assert res["synthetic"]["accuracy"] == pytest.approx(np.mean(real["label"] == "x"), abs=0.05)


@pytest.mark.parametrize("target,match", [("colour", "not a column"),
                                          ("when", "datetime column")])
def test_bad_targets(target, match):
    schema = json.loads(json.dumps(SCHEMA))
    schema["columns"]["when"] = {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                                 "unit": "month"}
    real = table(100).assign(when="2020-03-04")
    with pytest.raises(DPSynError, match=match):
        ml_utility(real, real, schema, target)


def test_too_few_rows():
    with pytest.raises(DPSynError, match="at least 10 real"):
        ml_utility(table(9), table(50), SCHEMA, "label")
    assert ml_utility(table(10), table(50), SCHEMA, "label")["test_rows"] == 3


def test_cli_target_prints_writes_json_and_reports(tmp_path, capsys, no_raster):
    pytest.importorskip("matplotlib")
    from gpu_dpsyn.cli import main
    real, syn, schema = tmp_path / "real.csv", tmp_path / "syn.csv", tmp_path / "s.json"
    res, page = tmp_path / "res.json", tmp_path / "r.html"
    table().to_csv(real, index=False)
    broken(table()).to_csv(syn, index=False)
    schema.write_text(json.dumps(SCHEMA))
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema), "--target", "label",
                 "--json", str(res), "--report", str(page)]) == 0
    printed = capsys.readouterr().out
    assert "ML utility, target 'label' (classification" in printed
    assert "accuracy: train on real 1.0000, train on synthetic 0.3" in printed
    got = json.loads(res.read_text())["ml_utility"]
    assert got == ml_utility(table(), broken(table()), SCHEMA, "label")
    html = page.read_text()
    assert "Machine-learning utility: predicting label" in html
    assert f"<td>{got['real']['accuracy']:.4f}</td><td>{got['synthetic']['accuracy']:.4f}" in html
    assert "macro F1" in html and "commonest class" in html


def test_cli_refuses_a_bad_target_before_reading_the_tables(tmp_path, capsys, monkeypatch):
    from gpu_dpsyn import cli
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(SCHEMA))
    monkeypatch.setattr(cli.commands, "read_table", lambda *a, **k: pytest.fail("read a table"))
    assert cli.main(["evaluate", "r.csv", "s.csv", "--schema", str(schema), "--target",
                     "colour"]) == 2
    assert "target 'colour' is not a column" in capsys.readouterr().err


def test_report_without_target_has_no_ml_section(flights, flights_schema, no_raster):
    pytest.importorskip("matplotlib")
    from gpu_dpsyn.evaluation.report import build_report
    from gpu_dpsyn.data.schema import Schema
    schema = Schema([flights_schema["carrier"], flights_schema["origin"]])
    real = flights[["carrier", "origin"]].iloc[:400]
    assert "Machine-learning utility" not in build_report(real, real, schema)
    page = build_report(real, real, schema, target="origin")
    assert "Machine-learning utility: predicting origin" in page


def test_without_scikit_learn_a_clear_error(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn now fails
    with pytest.raises(DPSynError, match=r"pip install 'gpu_dpsyn\[ml\]'"):
        ml_utility(table(50), table(50), SCHEMA, "label")
