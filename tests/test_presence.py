"""A derived "present" column: a flag fixed by whether its source has a value (graduated
and a graduation date; deceased and a date of death).  Measured as its own column the
flag and the date disagreed wherever the noise let them; derived, the release keeps the
rule on every row, and costs no budget."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, SchemaError
from conftest import drafted


def _students(n=3000, seed=0):
    r = np.random.default_rng(seed)
    start = pd.Timestamp("2015-09-01") + pd.to_timedelta(r.integers(0, 365 * 3, n), unit="D")
    done = r.random(n) < 0.6
    grad = pd.Series(start + pd.to_timedelta(r.integers(700, 1500, n), unit="D")).where(done)
    return pd.DataFrame({"field": r.choice(["arts", "law", "math"], n),
                         "grad": grad.dt.strftime("%Y-%m-%d"),
                         "graduated": np.where(done, "yes", "no")})


def _spec(**flag):
    return {"columns": {
        "field": {"type": "categorical", "values": ["arts", "law", "math"]},
        "grad": {"type": "datetime", "min": "2016-01-01", "max": "2023-12-31", "unit": "month",
                 "nullable": True},
        "graduated": {"type": "derived", "from": "grad", "op": "present",
                      "map": {"missing": "no", "present": "yes"}, **flag}}}


def test_the_release_keeps_the_flag_with_its_date_and_costs_nothing():
    df = _students()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        syn = Synthesizer(1.0, 1e-9, seed=1, progress=False).fit(df, load_schema(_spec()))
    out = syn.sample()
    assert ((out["graduated"] == "yes") == out["grad"].notna()).all()
    assert 0.4 < (out["graduated"] == "yes").mean() < 0.8
    assert all("graduated" not in str(e) for e in syn.ledger)  # never measured


@pytest.mark.parametrize("change, match", [
    ({"map": {"missing": "no"}}, r"'present'.*\"missing\".*\"present\""),
    ({"map": {"missing": "no", "present": "no"}}, r"two different values"),
    ({"map": {"missing": 0, "present": "yes"}}, r"two different values"),
    ({"map": {"missing": None, "present": "yes"}}, r"two different values"),
    ({"from": "field"}, r"'field' is never missing"),
    ({"nullable": True}, r"nullable"),
])
def test_a_bad_presence_is_refused_at_load_in_one_line(change, match):
    with pytest.raises(SchemaError, match=match) as e:
        load_schema(_spec(**change))
    assert "\n" not in str(e.value)


def test_true_false_flags_and_a_round_trip(tmp_path):
    spec = _spec(map={"missing": False, "present": True})
    s = load_schema(spec)
    assert s["graduated"].values == [False, True]
    again = load_schema(json.loads(json.dumps(s.to_dict())))
    assert again.to_dict()["columns"]["graduated"] == s.to_dict()["columns"]["graduated"]


def test_a_disagreeing_record_is_refused_by_encode_and_recomputed_by_repair():
    df = _students(200)
    df.loc[3, "graduated"] = "no" if df.loc[3, "graduated"] == "yes" else "yes"
    s = load_schema(_spec())
    with pytest.raises(DataError, match=r"'graduated'.*whether grad is present.*1 rows"):
        encode(df, s)
    fixed = repair(df, s)
    assert ((fixed["graduated"] == "yes") == fixed["grad"].notna()).all()


_draft = drafted  # (conftest: the draft and its lines by column)


def test_the_draft_derives_a_flag_from_its_date_flagged_for_review():
    s, lines = _draft(_students())
    g = s["graduated"]
    assert g.kind == "derived" and g.derive.op == "present" and g.derive.source == "grad"
    assert g.derive.to_dict()["map"] == {"missing": "no", "present": "yes"}
    assert "graduated.map" in s.drafted
    assert '"yes" wherever \'grad\' has a value' in lines["graduated"]
    out = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(_students(), s).sample(500)
    assert ((out["graduated"] == "yes") == out["grad"].notna()).all()


def test_a_flag_that_disagrees_once_or_a_source_missing_on_few_rows_is_measured():
    df = _students()
    df.loc[7, "graduated"] = "no" if df.loc[7, "graduated"] == "yes" else "yes"
    assert _draft(df)[0]["graduated"].kind == "categorical"
    few = _students()
    few = few[few["grad"].notna() | (np.arange(len(few)) < 40)]  # some 16 rows missing
    assert few["grad"].isna().sum() < 50
    assert _draft(few.reset_index(drop=True))[0]["graduated"].kind == "categorical"


def test_a_flag_held_twice_and_a_parquet_bool_flag_are_both_derived(tmp_path):
    """A review's findings: with the flag held twice (Y/N and 1/0), the lookup draft ran
    first and made one the other's source, so it was measured and 2 of 410 synthetic rows
    contradicted the source; a Parquet bool flag crashed the draft (np.bool_ in JSON)."""
    from gpu_dpsyn.cli import main
    r = np.random.default_rng(2)
    cat = pd.Series(r.choice(["a", "b", "c"], 600)).where(r.random(600) < 0.6)
    df = pd.DataFrame({"cat": cat, "has": np.where(cat.isna(), "N", "Y"),
                       "has01": np.where(cat.isna(), 0, 1), "z": r.choice(["u", "v"], 600)})
    s, lines = _draft(df)
    assert s["has"].kind == s["has01"].kind == "derived", lines
    assert {s["has"].derive.source, s["has01"].derive.source} == {"cat"}
    df[["cat"]].assign(flag=df["cat"].notna()).to_parquet(tmp_path / "m.parquet")
    assert main(["infer-schema", str(tmp_path / "m.parquet"), "--out",
                 str(tmp_path / "m.json")]) == 0
    spec = json.loads((tmp_path / "m.json").read_text())["columns"]["flag"]
    assert spec["map"] == {"missing": False, "present": True}, spec


def test_a_present_flag_declared_nullable_is_told_it_never_is():
    with pytest.raises(SchemaError, match=r"a 'present' flag is never missing; drop "):
        load_schema(_spec(nullable=True))
