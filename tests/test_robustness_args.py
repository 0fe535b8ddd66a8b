"""Arguments of the wrong type to the public functions: a one-line DPSynError naming the
argument, never a TypeError or AttributeError from inside."""
import json

import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn import Synthesizer, infer_schema, load_schema
from gpu_dpsyn.data.ingest import read_table, write_table
from gpu_dpsyn.errors import DataError, DPSynError, SchemaError


def _syn(**kw):
    return Synthesizer(1.0, 1e-9, backend="cpu", progress=False, **kw)


def _one_line(excinfo, *parts):
    msg = str(excinfo.value)
    assert "\n" not in msg and all(p in msg for p in parts), msg


@pytest.mark.parametrize("df", [None, 123, 3.5, b"bytes"])
def test_fit_of_something_that_is_no_table_is_a_data_error(df):
    _, schema = small_table(50)
    syn = _syn()
    with pytest.raises(DataError) as e:
        syn.fit(df, schema)
    _one_line(e, "DataFrame")
    assert syn.ledger == []


def test_a_public_table_that_is_no_table_is_a_data_error():
    df, schema = small_table(50)
    syn = _syn()
    with pytest.raises(DataError) as e:
        syn.fit(df, schema, public=42)
    _one_line(e, "public", "DataFrame")
    assert syn.ledger == []


@pytest.mark.parametrize("source", [None, 123, ["a"], 1.5])
def test_load_schema_of_the_wrong_type(source):
    with pytest.raises(SchemaError) as e:
        load_schema(source)
    _one_line(e, "schema must be", type(source).__name__)


@pytest.mark.parametrize("path", [None, 123, ["a.csv"]])
def test_read_table_of_no_path(path):
    with pytest.raises(DPSynError) as e:
        read_table(path)
    _one_line(e, "path", type(path).__name__)


def test_read_table_takes_a_schema_path_as_fit_does(tmp_path):
    df, schema = small_table(50)
    df = df.assign(color=df["color"].where(df.index != 3, "007"))
    schema["columns"]["color"]["values"].append("007")
    p, s = tmp_path / "t.csv", tmp_path / "schema.json"
    df.to_csv(p, index=False)
    s.write_text(json.dumps(schema))
    for given in (str(s), s, schema):
        got = read_table(p, schema=given)
        assert got["color"].iloc[3] == "007"  # read as text, as the schema says


def test_read_table_with_a_schema_of_the_wrong_type(tmp_path):
    df, _ = small_table(50)
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    with pytest.raises(SchemaError) as e:
        read_table(p, schema=42)
    _one_line(e, "schema must be")


def test_write_table_into_a_missing_directory(tmp_path):
    with pytest.raises(DPSynError) as e:
        write_table(pd.DataFrame({"a": [1]}), tmp_path / "nodir" / "o.csv")
    _one_line(e, "nodir", "not an existing directory")


def test_write_table_of_no_table(tmp_path):
    with pytest.raises(DPSynError) as e:
        write_table(None, tmp_path / "o.csv")
    _one_line(e, "DataFrame", "NoneType")
    assert not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("df", [None, 123, "table.csv"])
def test_infer_schema_of_no_table(df):
    with pytest.raises(DPSynError) as e:
        infer_schema(df)
    _one_line(e, "DataFrame", type(df).__name__)


@pytest.mark.parametrize("workload", [5, 2.5, True, [(5, 1.0)], [(("a", 7), 1.0)]])
def test_a_workload_of_the_wrong_shape(workload):
    with pytest.raises(DPSynError) as e:
        _syn(workload=workload)
    _one_line(e, "workload")


@pytest.mark.parametrize("cell", [["red"], {"c": "red"}, np.array(["red"]), ("red",)])
def test_lists_in_an_object_column_are_a_data_error(cell):
    df, schema = small_table(50)
    df["color"] = df["color"].astype(object)
    df.at[7, "color"] = cell
    syn = _syn(on_invalid="error")
    with pytest.raises(DataError) as e:
        syn.fit(df, schema)
    _one_line(e, "'color'", type(cell).__name__)
    assert syn.ledger == []


def test_lists_in_a_numeric_column_are_a_data_error():
    df, schema = small_table(50)
    df["size"] = df["size"].astype(object)
    df.at[2, "size"] = [1, 2]
    with pytest.raises(DataError) as e:
        _syn(on_invalid="error").fit(df, schema)
    _one_line(e, "'size'", "list")


def test_a_parquet_list_column_is_a_data_error(tmp_path):
    df, schema = small_table(50)
    df["color"] = [[c] for c in df["color"]]
    p = tmp_path / "t.parquet"
    df.to_parquet(p)
    with pytest.raises(DataError) as e:  # by its declared type, before anything is read
        read_table(p, schema=schema)
    _one_line(e, "'color'")
    table = read_table(p)
    with pytest.raises(DataError) as e:
        _syn(on_invalid="error").fit(table, schema)
    _one_line(e, "'color'")
    with pytest.raises(DataError) as e:
        infer_schema(table)
    _one_line(e, "'color'")


def test_infer_schema_of_a_list_column_is_a_data_error():
    df, _ = small_table(50)
    df["size"] = [[v] for v in df["size"]]
    with pytest.raises(DataError) as e:
        infer_schema(df)
    _one_line(e, "'size'", "list")


# -- documents nested past Python's recursion limit, ledgers with values of the wrong type --
def test_a_deeply_nested_schema_or_ledger_is_one_line(tmp_path, capsys):
    from gpu_dpsyn.cli import main
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    real = tmp_path / "r.csv"
    real.write_text("a\n1\n")
    assert main(["infer-schema", str(real), "--out", str(tmp_path / "s.json")]) == 0
    capsys.readouterr()
    for args in (["synthesize", str(real), "--schema", str(deep), "--epsilon", "1",
                  "--delta", "1e-9", "--out", str(tmp_path / "o.csv")],
                 ["evaluate", str(real), str(real), "--schema", str(tmp_path / "s.json"),
                  "--report", str(tmp_path / "r.html"), "--ledger", str(deep)]):
        assert main(args) == 2
        err = [x for x in capsys.readouterr().err.splitlines() if "warning:" not in x]
        assert len(err) == 1 and "deep.json" in err[0] and "nested" in err[0], err


@pytest.mark.parametrize("key, value", [("epsilon", None), ("delta", [1]), ("epsilon", True),
                                        ("guarantee", 3)])
def test_a_ledger_value_of_the_wrong_type_is_refused_before_the_evaluation(
        tmp_path, capsys, key, value):
    import json
    from gpu_dpsyn.cli import main
    real = tmp_path / "r.csv"
    real.write_text("a\n1\n2\n")
    ledger = tmp_path / "l.json"
    doc = {"epsilon": 1.0, "delta": 1e-9, "guarantee": "g", "measurements": []}
    doc[key] = value
    ledger.write_text(json.dumps(doc))
    assert main(["evaluate", str(real), str(real), "--report", str(tmp_path / "r.html"),
                 "--ledger", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and key in err, err


def test_evaluate_names_an_empty_synthetic_table_as_such(tmp_path, capsys):
    # with --schema it said "the table is empty: nothing to synthesize"
    import json
    from gpu_dpsyn.cli import main
    real, syn, schema = tmp_path / "r.csv", tmp_path / "s.csv", tmp_path / "s.json"
    real.write_text("a\nx\ny\n")
    syn.write_text("a\n")
    schema.write_text(json.dumps({"columns": {"a": {"type": "categorical",
                                                    "values": ["x", "y"]}}}))
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema)]) == 2
    err = capsys.readouterr().err
    assert "synthetic table has no rows: nothing to compare" in err and \
        "synthesize" not in err, err


def test_evaluate_reads_the_real_table_as_the_fit_did(tmp_path, capsys):
    # a value past the schema's range, which synthesize clamps, made evaluate refuse
    import json
    from gpu_dpsyn.cli import main
    real, syn, schema = tmp_path / "r.csv", tmp_path / "s.csv", tmp_path / "s.json"
    real.write_text("a,x\n" + "".join(f"{'xy'[i % 2]},{i % 10}\n" for i in range(60)) +
                    "x,1048\n")
    syn.write_text("a,x\n" + "".join(f"{'xy'[i % 2]},{i % 10}\n" for i in range(60)))
    schema.write_text(json.dumps({"columns": {
        "a": {"type": "categorical", "values": ["x", "y"]},
        "x": {"type": "numeric", "min": 0, "max": 60, "bins": 6}}}))
    assert main(["evaluate", str(real), str(syn), "--schema", str(schema), "--quiet"]) == 0
    bad = tmp_path / "bad.csv"  # the synthetic table is still held to the schema
    bad.write_text("a,x\nx,1048\ny,2\n")
    assert main(["evaluate", str(real), str(bad), "--schema", str(schema), "--quiet"]) == 2
    assert "synthetic" in capsys.readouterr().err
