"""A CSV in another dialect (the schema's "csv": separator, decimal mark, digit grouping,
encoding): read as its UTF-8, comma-separated twin, row by row, and the synthetic CSV
written the same way."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.dialect import Dialect, dialect_from_spec
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DPSynError, SchemaError

FRENCH = {"separator": ";", "decimal": ",", "thousands": " ", "encoding": "cp1252"}


def _table(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"Région": rng.choice(["Île-de-France", "Bretagne", "Grand Est"], n),
                         "Revenu": np.round(rng.lognormal(7.7, 0.5, n), 2),
                         "Note": rng.choice([1.5, 2.5, 3.0], n),
                         "Âge": rng.integers(18, 90, n)})


def _columns(csv=None):
    doc = {"columns": {"Région": {"type": "categorical",
                                  "values": ["Bretagne", "Grand Est", "Île-de-France"]},
                       "Revenu": {"type": "numeric", "min": 0, "max": 20000, "bins": 16},
                       "Note": {"type": "categorical", "values": [1.5, 2.5, 3.0]},
                       "Âge": {"type": "numeric", "integer": True, "min": 0, "max": 120,
                               "bins": 12}}}
    if csv is not None:
        doc["csv"] = csv
    return doc


def _french(df: pd.DataFrame, path) -> None:
    """df as a French spreadsheet saves it: '2 399,80', semicolons, Windows-1252."""
    out = df.copy()
    out["Revenu"] = [f"{v:,.2f}".replace(",", " ").replace(".", ",") for v in df["Revenu"]]
    out["Note"] = [f"{v:.1f}".replace(".", ",") for v in df["Note"]]
    out.to_csv(path, sep=";", index=False, encoding="cp1252")


def test_a_file_in_a_dialect_reads_as_its_plain_twin(tmp_path):
    df = _table()
    plain, french = tmp_path / "p.csv", tmp_path / "f.csv"
    df.to_csv(plain, index=False)
    _french(df, french)
    a = load_schema(_columns())
    b = load_schema(_columns(FRENCH))
    got = encode(read_table(str(french), schema=b), b)
    want = encode(read_table(str(plain), schema=a), a)
    assert all(np.array_equal(x, y) for x, y in zip(got, want))


def test_one_bad_number_changes_no_other_record(tmp_path):
    df = _table(50)
    french = tmp_path / "f.csv"
    _french(df, french)
    text = french.read_bytes().decode("cp1252").splitlines()
    text[3] = text[3].replace(";", ";n/a", 1).replace(";n/a", ";", 1)
    cells = text[3].split(";")
    cells[1] = "n/a"  # Revenu
    text[3] = ";".join(cells)
    french.write_bytes(("\r\n".join(text) + "\r\n").encode("cp1252"))
    s = load_schema(_columns(FRENCH))
    read = read_table(str(french), schema=s)
    assert read["Revenu"].iloc[2] == "n/a"
    expect = df["Revenu"].round(2).to_numpy()
    got = pd.to_numeric(read["Revenu"], errors="coerce").to_numpy()
    keep = np.arange(50) != 2
    np.testing.assert_allclose(got[keep], expect[keep])


def test_synthesize_writes_the_dialect_it_read(tmp_path):
    df = _table(600, seed=1)
    data, schema, out = tmp_path / "f.csv", tmp_path / "s.json", tmp_path / "o.csv"
    _french(df, data)
    schema.write_text(json.dumps(_columns(FRENCH), ensure_ascii=False), encoding="utf-8")
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(out), "--seed", "3"]) == 0
    raw = out.read_bytes()
    raw.decode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")  # 'Région' in Windows-1252
    back = pd.read_csv(out, sep=";", decimal=",", thousands=" ", encoding="cp1252")
    assert list(back.columns) == ["Région", "Revenu", "Note", "Âge"]
    assert back["Revenu"].dtype == np.float64 and back["Revenu"].between(0, 20000).all()
    assert set(back["Note"]) <= {1.5, 2.5, 3.0}
    assert main(["evaluate", str(data), str(out), "--schema", str(schema)]) == 0


@pytest.mark.parametrize("spec,match", [
    ({"separator": ""}, "separator"), ({"separator": "ab"}, "separator"),
    ({"separator": '"'}, "separator"), ({"separator": "\n"}, "separator"),
    ({"decimal": "x"}, "decimal"), ({"separator": ",", "decimal": ","}, "apart"),
    ({"decimal": ",", "thousands": ","}, "apart"), ({"thousands": "_"}, "thousands"),
    ({"encoding": "utf-16"}, "ASCII"), ({"encoding": "no-such-codec"}, "unknown"),
    ({"sep": ";"}, "sep"), ({"encoding": 8}, "encoding")])
def test_bad_dialects_are_refused(spec, match):
    with pytest.raises(SchemaError, match=match):
        load_schema(_columns(spec))


def test_the_dialect_round_trips_and_defaults_are_left_out():
    s = load_schema(_columns(FRENCH))
    assert s.csv == Dialect(";", ",", " ", "cp1252")
    assert load_schema(s.to_dict()).csv == s.csv
    assert "csv" not in load_schema(_columns()).to_dict()
    assert dialect_from_spec({"separator": "\t"}).to_dict() == {"separator": "\t"}


def test_text_the_encoding_cannot_write_is_refused_before_the_fit(tmp_path, capsys):
    doc = _columns(FRENCH)
    doc["columns"]["Région"]["values"].append("Łódź")  # not in Windows-1252
    data, schema, out = tmp_path / "f.csv", tmp_path / "s.json", tmp_path / "o.csv"
    _french(_table(100), data)
    schema.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    ledger = tmp_path / "l.json"
    rc = main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
               "--delta", "1e-9", "--out", str(out), "--ledger", str(ledger)])
    assert rc != 0 and not out.exists() and not ledger.exists()
    assert "'Łódź'" in capsys.readouterr().err


def test_a_utf16_file_is_named_so(tmp_path, capsys):
    # its column names read as '\ufffd\ufffdc\x00': a garbled column mismatch
    data, schema = tmp_path / "u.csv", tmp_path / "s.json"
    data.write_bytes(_table(20).to_csv(index=False).encode("utf-16"))
    schema.write_text(json.dumps(_columns()))
    assert main(["check", str(data), "--schema", str(schema)]) == 2
    err = capsys.readouterr().err
    assert "UTF-16" in err and err.count("\n") == 1


def test_a_semicolon_header_without_a_dialect_names_the_key(tmp_path):
    data = tmp_path / "f.csv"
    _french(_table(20), data)
    with pytest.raises(DPSynError, match=r"\"csv\": \{\"separator\": \";\"\}"):
        read_table(str(data), schema=load_schema(_columns()))


def test_infer_schema_drafts_the_dialect(tmp_path, capsys):
    data, schema = tmp_path / "f.csv", tmp_path / "s.json"
    _french(_table(500, seed=4), data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema)]) == 0
    doc = json.loads(schema.read_text(encoding="utf-8"))
    assert doc["csv"] == FRENCH
    assert "Région" in doc["columns"] and doc["columns"]["Revenu"]["type"] == "numeric"
    assert doc["columns"]["Note"]["values"] == [1.5, 2.5, 3.0]
    err = capsys.readouterr().err
    assert "semicolon" in err and "cp1252" in err and "decimal" in err


def test_infer_schema_takes_the_dialect_given(tmp_path):
    data, schema = tmp_path / "t.tsv.csv", tmp_path / "s.json"
    _table(200).to_csv(data, sep="\t", index=False, encoding="latin-1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema), "--separator", "\t",
                     "--encoding", "latin-1"]) == 0
    doc = json.loads(schema.read_text(encoding="utf-8"))
    assert doc["csv"] == {"separator": "\t", "encoding": "latin-1"}
    assert "Île-de-France" in doc["columns"]["Région"]["values"]


@pytest.mark.parametrize("row_local", [False, True])
def test_dask_reads_the_dialect_as_read_table_does(tmp_path, row_local):
    from gpu_dpsyn.distributed.reading import read_partitioned
    df = _table(120, seed=5)
    french = tmp_path / "f.csv"
    _french(df, french)
    s = load_schema(_columns(FRENCH))
    got = read_partitioned(str(french), s, row_local=row_local).compute()
    want = read_table(str(french), schema=s)
    assert all(np.array_equal(x, y) for x, y in zip(encode(got.reset_index(drop=True), s),
                                                     encode(want, s)))


def test_the_schema_command_sets_the_dialect(tmp_path):
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(_columns()))
    assert main(["schema", str(schema), "--set", "csv.separator=;",
                 "--set", "csv.encoding=cp1252"]) == 0
    assert json.loads(schema.read_text())["csv"] == {"separator": ";", "encoding": "cp1252"}
    assert main(["schema", str(schema), "--set", "csv.encoding=utf-16"]) == 2  # validated
    assert main(["schema", str(schema), "--set", "csv.encoding=null"]) == 0
    assert json.loads(schema.read_text())["csv"] == {"separator": ";"}
