"""Table formats: the --out suffix picks the writer, Parquet in and out through pyarrow."""
import gzip
import json

import pandas as pd
import pytest

from gpu_dpsyn.data import ingest
from gpu_dpsyn.cli import main
from gpu_dpsyn.errors import DPSynError

SCHEMA = {"columns": {"c": {"type": "categorical", "values": ["a", "b", "c"]},
                      "k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}


@pytest.fixture
def real(tmp_path):
    df = pd.DataFrame({"c": list("abc") * 100, "k": [i % 10 for i in range(300)]})
    path = tmp_path / "real.csv"
    df.to_csv(path, index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    return tmp_path, path, df


def _synth(tmp, real, out, *extra):
    return main(["synthesize", str(real), "--schema", str(tmp / "s.json"), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--rows", "50", "--seed", "1",
                 "--iterations", "2", "--quiet", *extra])


def test_out_parquet_writes_parquet(real):
    tmp, path, _ = real
    assert _synth(tmp, path, tmp / "o.parquet") == 0
    assert (tmp / "o.parquet").read_bytes()[:4] == b"PAR1"  # not CSV text
    back = pd.read_parquet(tmp / "o.parquet")
    assert len(back) == 50 and list(back.columns) == ["c", "k"]
    assert str(back["k"].dtype) == "int64" and set(back["c"]) <= {"a", "b", "c"}


@pytest.mark.parametrize("suffix,opener", [(".csv.gz", gzip.open), (".csv", open)])
def test_out_csv_follows_the_compression_suffix(real, suffix, opener):
    tmp, path, _ = real
    out = tmp / f"o{suffix}"
    assert _synth(tmp, path, out) == 0
    with opener(out, "rt") as f:
        assert f.readline().strip() == "c,k"


def test_parquet_input_is_read(real):
    tmp, _, df = real
    pq = tmp / "real.parquet"
    df.to_parquet(pq, index=False)
    assert _synth(tmp, pq, tmp / "o.csv") == 0
    assert len(pd.read_csv(tmp / "o.csv")) == 50


@pytest.mark.parametrize("name", ["o.txt", "o.xlsx", "o", "o.json"])
def test_unknown_out_suffix_fails_before_reading(real, capsys, monkeypatch, name):
    tmp, path, _ = real
    monkeypatch.setattr("gpu_dpsyn.cli.commands.read_table",
                        lambda *a, **k: pytest.fail("the input was read before the check"))
    assert _synth(tmp, path, tmp / name) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu-dpsyn: error: --out") and ".parquet" in err
    assert err.count("\n") == 1 and not (tmp / name).exists()


def test_unknown_input_suffix_is_an_error(tmp_path):
    p = tmp_path / "t.dat"
    p.write_text("a\n1\n")
    with pytest.raises(DPSynError, match=r"t\.dat.*\.csv.*\.parquet"):
        ingest.read_table(str(p))


def test_mixed_type_column_to_parquet_is_refused_before_fitting(real, capsys):
    # pyarrow cannot write a column holding both text and numbers: say so before the
    # budget is spent, not after
    tmp, _, df = real
    path = tmp / "mixed.csv"
    df.assign(c=["a", "b", 3] * 100).to_csv(path, index=False)
    spec = {"columns": {"c": {"type": "categorical", "values": ["a", "b", 3]},
                        "k": SCHEMA["columns"]["k"]}}
    (tmp / "s.json").write_text(json.dumps(spec))
    assert _synth(tmp, path, tmp / "o.parquet") == 2
    err = capsys.readouterr().err
    assert "'c'" in err and "Parquet" in err and '"dtype": "string"' in err
    assert not (tmp / "o.parquet").exists()


def test_pyarrow_is_a_dependency_not_an_extra():
    import tomllib
    from conftest import ROOT
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert any(d.startswith("pyarrow") for d in project["dependencies"])
