"""A column's domain set with `gpu-dpsyn schema --set` in a form the schema does not take
(values="red,blue", the shell's [red,blue] for an unquoted ["red","blue"], a numeric
column's values=[1,200] or range=..., min=0..120) is refused in one line that gives the
edit in the form it takes, and that edit works pasted into a shell."""
import json
import shlex
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.cli import main


@pytest.fixture
def draft(tmp_path, capsys):
    r = np.random.default_rng(0)
    pd.DataFrame({"income": r.integers(0, 200000, 600),
                  "colour": r.choice(["red", "blue"], 600),
                  "age": r.integers(18, 40, 600)}).to_csv(tmp_path / "t.csv", index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(tmp_path / "t.csv"), "--out",
                     str(tmp_path / "s.json")]) == 0
    capsys.readouterr()
    return tmp_path / "s.json"


@pytest.mark.parametrize("given,wanted", [
    ("colour.values=red,blue", {"values": ["red", "blue"]}),
    ("colour.values=[red,blue]", {"values": ["red", "blue"]}),  # ["red","blue"] unquoted
    ("colour.values=['red', 'blue']", {"values": ["red", "blue"]}),
    ("income.values=[1,200000]", {"min": 1, "max": 200000}),
    ("income.range=0..250000", {"min": 0, "max": 250000}),
    ("income.min=0..250000", {"min": 0, "max": 250000}),
    ("age.values=18..65", {"type": "numeric", "min": 18, "max": 65}),
])
def test_a_domain_in_another_form_is_refused_with_the_form_it_takes(draft, capsys, given,
                                                                    wanted):
    before = draft.read_text()
    assert main(["schema", str(draft), "--set", given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--set" in err, err
    assert draft.read_text() == before
    name = given.split(".")[0]
    start = err.index(f"--set {name}.") if f"--set {name}." in err else err.index("--set '")
    words = shlex.split(err[start:].split(";")[0].split(")")[0])  # the first edit given
    assert main(["schema", str(draft)] + words) == 0, (words, capsys.readouterr().err)
    col = json.loads(draft.read_text())["columns"][name]
    assert {k: col.get(k) for k in wanted} == wanted, (words, col)


def test_one_setting_per_key(draft, capsys):
    assert main(["schema", str(draft), "--set", "income.min=0,income.max=5"]) == 2
    err = capsys.readouterr().err
    assert "one key per --set (--set income.min=... --set income.max=...)" in err, err


def test_null_still_takes_a_key_out(draft):
    assert main(["schema", str(draft), "--set", "income.values=null",
                 "--set", "colour.nullable=null"]) == 0
