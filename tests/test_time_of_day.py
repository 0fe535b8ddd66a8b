"""A datetime column's time of day, synthesized beside its day-or-coarser timeline
("time_of_day": a hidden attribute measured like any other, never read or written)."""
import json

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.generate.decode import decode

NY = "America/New_York"
TOD = {"bins": 24}


def _schema(tod=TOD, **spec):
    spec = {"type": "datetime", "min": "2013-01-01", "max": "2013-12-31T23:59:59",
            "unit": "day", "timezone": NY, **spec}
    if tod is not None:
        spec["time_of_day"] = tod
    spec = {k: v for k, v in spec.items() if v is not None}
    return load_schema({"columns": {"d": spec, "k": {"type": "categorical",
                                                     "values": ["a", "b"]}}})


def test_the_hidden_attribute_is_synthesized_but_not_a_column_of_the_table():
    s = _schema()
    assert s.names == ["d", "k"]
    assert [c.name for c in s.synth_columns] == ["d", "d (time of day)", "k"]
    assert s.domain == (365, 24, 2)
    assert s.to_dict()["columns"]["d"]["time_of_day"] == {"bins": 24}
    assert load_schema(s.to_dict()).domain == s.domain  # round trip


@pytest.mark.parametrize("spec,says", [
    ({"unit": "hour"}, "whole local days"),
    ({"unit": "minute", "bins": 100}, "whole local days"),
    ({"unit": None, "bins": 10}, "whole local days"),
    ({"timezone": None, "unit": None, "bins": 365, "time_of_day": {"bins": 7}},
     "cut a day"),
    ({"time_of_day": {"bins": 48, "unit": "hour"}}, "whole hours"),
    ({"time_of_day": {"bins": 24, "unit": "day"}}, "time_of_day' must be an object"),
    ({"time_of_day": {"bins": 0}}, "time_of_day' must be an object"),
    ({"time_of_day": 24}, "time_of_day' must be an object"),
    ({"format": "%Y-%m-%d"}, "writes days"),
    ({"time_of_day": {"bins": 24, "unit": "second"}, "format": "%Y-%m-%d %H:%M"},
     "finer than"),
])
def test_a_time_of_day_it_cannot_keep_is_refused_in_one_line(spec, says):
    tod = spec.pop("time_of_day", TOD)
    base = {k: v for k, v in spec.items() if v is not None}
    drop = [k for k, v in spec.items() if v is None]
    full = {"type": "datetime", "min": "2013-01-01", "max": "2013-12-31T23:59:59",
            "unit": "day", "timezone": NY, **base, "time_of_day": tod}
    for k in drop:
        full.pop(k)
    with pytest.raises(SchemaError, match=says) as e:
        load_schema({"columns": {"d": full}})
    assert "\n" not in str(e.value)


def test_whole_day_bins_and_months_are_accepted():
    assert _schema(unit="month").domain == (12, 24, 2)
    assert _schema(timezone=None, bins=73).domain == (73, 24, 2)  # 5-day bins
    assert _schema(timezone="UTC", unit=None, bins=365).domain == (365, 24, 2)


def test_a_name_taken_by_another_column_is_refused():
    spec = _schema().to_dict()
    spec["columns"]["d (time of day)"] = {"type": "categorical", "values": ["x"]}
    with pytest.raises(SchemaError, match="time of day"):
        load_schema(spec)


def test_encode_reads_the_local_time_of_day_across_daylight_saving():
    s = _schema(nullable=True)
    d = pd.Series(["2013-03-10T01:30:00", "2013-03-10T03:30:00", "2013-11-03T01:30:00",
                   "2013-06-01T07:59:59", "2013-06-01T23:00:00", None])
    days, hours, _ = encode(pd.DataFrame({"d": d, "k": "a"}), s)
    assert hours.tolist() == [1, 3, 1, 7, 23, 24]  # 24: the null code
    utc = pd.Series(pd.to_datetime(["2013-07-01T12:15:00Z"]))  # 08:15 in New York
    assert encode(pd.DataFrame({"d": utc, "k": "a"}), _schema())[1].tolist() == [8]


def test_decode_puts_each_time_in_its_day_and_hour_bin_at_the_written_unit():
    s = _schema(tod={"bins": 48, "unit": "minute"}, unit="month")
    n = 5000
    rng = np.random.default_rng(0)
    months, halves = rng.integers(0, 12, n), rng.integers(0, 48, n)
    out = decode([months, halves, np.zeros(n, np.uint8)], s, seed=3)["d"]
    assert str(out.dtype) == "datetime64[ns, America/New_York]"
    assert (out.dt.month.to_numpy() - 1 == months).all()
    assert ((out.dt.hour * 60 + out.dt.minute).to_numpy() // 30 == halves).all()
    assert (out.dt.second == 0).all() and out.dt.day.nunique() == 31
    again = decode([months, halves, np.zeros(n, np.uint8)], s, seed=3)["d"]
    assert out.equals(again)


def test_a_date_part_down_to_the_time_of_days_unit_is_derived_from_it():
    """A probe's hour of a day-binned column with a time of day was refused as 'the same
    on every row (its values are the start of each day)': the column decodes to a day
    among its bin's and a time in its hidden bin, at the time of day's unit."""
    doc = _schema(tod={"bins": 48, "unit": "minute"}, unit="month").to_dict()
    doc["columns"].update({p: {"type": "derived", "from": "d", "op": p}
                           for p in ("hour", "minute", "day", "weekday")})
    s = load_schema(doc)
    n = 3000
    rng = np.random.default_rng(1)
    out = decode([rng.integers(0, 12, n), rng.integers(0, 48, n), np.zeros(n, np.uint8)],
                 s, seed=2)
    for p in ("hour", "minute", "day"):
        assert (out[p] == getattr(out["d"].dt, p)).all() and out[p].nunique() > 12
    assert (out["weekday"] == out["d"].dt.weekday).all()
    doc["columns"]["d"]["time_of_day"] = {"bins": 24, "unit": "hour"}
    with pytest.raises(SchemaError, match="the minute of 'd'.*same on every row"):
        load_schema(doc)  # drawn to the hour: its minute is 0 on every row


def test_decode_across_daylight_saving_keeps_the_day():
    s = _schema()
    days = np.full(48, 68)  # 2013-03-10: 02:00-03:00 is skipped in New York
    days[24:] = 306         # 2013-11-03: 01:00-02:00 comes twice
    hours = np.tile(np.arange(24), 2)
    out = decode([days, hours, np.zeros(48, np.uint8)], s)["d"]
    assert (out.dt.day_of_year.to_numpy() - 1 == days).all()
    assert out.dt.hour.tolist()[:4] == [0, 1, 3, 3]  # the skipped hour: shifted forward
    assert out.dt.hour.tolist()[24:] == list(range(24))


def _lab(n=30000, seed=0):
    """Two years of collections: the kind sets the hour (mornings for routine draws,
    evenings and nights for the emergency room), the amount follows the kind."""
    rng = np.random.default_rng(seed)
    kind = rng.choice(["routine", "er", "ward"], n, p=[0.6, 0.25, 0.15])
    hour = np.where(kind == "routine", rng.integers(7, 12, n),
                    np.where(kind == "er", (rng.integers(18, 30, n)) % 24,
                             rng.integers(0, 24, n)))
    day = rng.integers(0, 730, n)
    t = pd.Timestamp("2022-01-01") + pd.to_timedelta(day, "D") + \
        pd.to_timedelta(hour * 3600 + rng.integers(0, 3600, n), "s")
    amount = np.where(kind == "er", rng.integers(50, 100, n), rng.integers(0, 60, n))
    return pd.DataFrame({"taken": t.strftime("%Y-%m-%dT%H:%M:%S"), "kind": kind,
                         "amount": amount})


def _lab_schema(tod):
    taken = {"type": "datetime", "min": "2022-01-01", "max": "2023-12-31T23:59:59",
             "unit": "month", "timezone": NY}
    if tod:
        taken["time_of_day"] = TOD
    return load_schema({"columns": {
        "taken": taken, "kind": {"type": "categorical", "values": ["routine", "er", "ward"]},
        "amount": {"type": "numeric", "min": 0, "max": 100, "bins": 10, "integer": True}}})


def _tvd(a: pd.Series, b: pd.Series) -> float:
    p, q = a.value_counts(normalize=True), b.value_counts(normalize=True)
    return 0.5 * float(p.sub(q, fill_value=0).abs().sum())


def _cramers_v(x: pd.Series, y: pd.Series) -> float:
    t = pd.crosstab(x, y).to_numpy().astype(float)
    e = t.sum(1, keepdims=True) * t.sum(0, keepdims=True) / t.sum()
    chi2 = float(((t - e) ** 2 / e).sum())
    return (chi2 / t.sum() / (min(t.shape) - 1)) ** 0.5


def _scores(real, syn):
    hr = pd.to_datetime(real["taken"]).dt.hour
    hs = pd.to_datetime(syn["taken"]).dt.tz_localize(None).dt.hour
    pair = lambda h, df: h.astype(str) + "|" + df["kind"].astype(str)  # noqa: E731
    month = lambda df: pd.to_datetime(df["taken"]).dt.strftime("%Y-%m")  # noqa: E731
    return {"hour": _tvd(hr, hs), "hour_kind": _tvd(pair(hr, real), pair(hs, syn)),
            "v_real": _cramers_v(hr, real["kind"]), "v_syn": _cramers_v(hs, syn["kind"]),
            "kind": _tvd(real["kind"], syn["kind"]),
            "amount": _tvd(real["amount"] // 10, syn["amount"] // 10),
            "month": _tvd(month(real), month(syn))}


def test_a_fit_at_epsilon_1_keeps_the_hour_of_day_and_its_link_to_another_column():
    real = _lab()
    runs = {}
    for tod in (False, True):
        syn = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(
            real, _lab_schema(tod)).sample()
        runs[tod] = _scores(real, syn)
    before, after = runs[False], runs[True]
    print(json.dumps(runs, indent=1))
    assert before["hour"] > 0.5 and after["hour"] < 0.06
    assert after["hour_kind"] < 0.1 < before["hour_kind"]
    assert abs(after["v_syn"] - after["v_real"]) < 0.08
    for k in ("kind", "amount", "month"):  # the other columns: no worse beyond noise
        assert after[k] < before[k] + 0.02, (k, before[k], after[k])


def test_the_cli_synthesizes_and_evaluates_it_and_a_saved_model_samples_alike(tmp_path,
                                                                              capsys):
    real = _lab(3000)
    data, schema, out, res = (tmp_path / n for n in ("r.csv", "s.json", "o.csv", "e.json"))
    real.to_csv(data, index=False)
    schema.write_text(json.dumps(_lab_schema(True).to_dict()))
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    syn = pd.read_csv(out)
    assert list(syn.columns) == ["taken", "kind", "amount"]
    assert pd.to_datetime(syn["taken"], utc=True).dt.tz_convert(NY).dt.hour.nunique() > 12
    assert main(["check", str(out), "--schema", str(schema)]) == 0
    page = tmp_path / "r.html"
    assert main(["evaluate", str(data), str(out), "--schema", str(schema), "--json",
                 str(res), "--report", str(page)]) == 0
    assert json.loads(res.read_text())["sets"]["1way"]["evaluated"] == 4  # the hidden too
    assert "taken (time of day)" in page.read_text()
    capsys.readouterr()
    fitted = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(real, _lab_schema(True))
    loaded = Synthesizer.load(fitted.save(tmp_path / "m"))
    assert loaded.sample(500).equals(fitted.sample(500))


def test_the_schema_command_sets_a_key_of_time_of_day(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schema(tod=None).to_dict()))
    # a null key where there is no time of day changes nothing: it wrote {}, which is one
    # of 24 bins (a review's finding)
    assert main(["schema", str(path), "--set", "d.time_of_day.unit=null"]) == 0
    assert "time_of_day" not in json.loads(path.read_text())["columns"]["d"]
    assert main(["schema", str(path), "--set", "d.time_of_day.bins=48"]) == 0
    assert json.loads(path.read_text())["columns"]["d"]["time_of_day"] == {"bins": 48}
    assert main(["schema", str(path), "--set", "d.time_of_day.unit=minute"]) == 0
    assert load_schema(str(path)).domain == (365, 48, 2)


def test_group_by_the_hidden_attribute_is_refused():
    with pytest.raises(SchemaError, match="time of day"):
        Synthesizer(1.0, 1e-9, progress=False, group_by=["d (time of day)"]).fit(
            pd.DataFrame({"d": ["2013-01-01T10:00"] * 50, "k": ["a"] * 50}), _schema())


def test_on_dask_the_fit_and_the_parts_match_the_fit_in_memory(client, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    real, schema = _lab(4000), _lab_schema(True)
    kw = dict(seed=3, iterations=4, progress=False, backend="cpu")
    here = Synthesizer(1.0, 1e-9, **kw).fit(real, schema)
    there = Synthesizer(1.0, 1e-9, client=client, **kw).fit(
        dd.from_pandas(real, npartitions=3), schema)
    assert here.privacy_report() == there.privacy_report()
    for x, y in zip(here.model.marginals, there.model.marginals):
        assert x.attrs == y.attrs and np.array_equal(x.values, y.values)
    there.sample_to(tmp_path / "a", 3000, batch_rows=1000)  # on the cluster
    here.sample_to(tmp_path / "b", 3000, batch_rows=1000)
    a, b = pd.read_parquet(tmp_path / "a"), pd.read_parquet(tmp_path / "b")
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["taken", "kind", "amount"] and a["taken"].dt.hour.nunique() > 12


def _drafted(df):
    from gpu_dpsyn.data.inference import infer_schema_with_summary
    with pytest.warns(UserWarning):
        s, lines = infer_schema_with_summary(df)
    return s, {x.split()[0]: x for x in lines}


def test_a_draft_keeps_the_time_of_day_where_its_bins_are_days_or_coarser():
    s, lines = _drafted(_lab(30000))  # two years, 300 bins: about 3 days a bin
    spec = s.to_dict()["columns"]["taken"]
    assert spec["time_of_day"] == {"bins": 24, "unit": "second"} and spec["unit"] == "day"
    assert s.domain[:2] == (244, 24)
    assert "24 bins of an hour (\"time_of_day\")" in lines["taken"]
    assert "to the second, in bins of whole days" in lines["taken"]
    # read off the data (the values' own time of day): listed for review
    assert "taken.time_of_day" in s.drafted and \
        "time_of_day" in lines["taken"].split("[read off the data:")[1]
    zoned = _lab(3000).assign(taken=lambda d: d["taken"] + "-05:00")  # a zone: by the day
    assert _drafted(zoned)[0].to_dict()["columns"]["taken"]["time_of_day"]["bins"] == 24
    days = _lab(3000).assign(taken=lambda d: d["taken"].str[:10])  # no time: none
    assert "time_of_day" not in _drafted(days)[0].to_dict()["columns"]["taken"]
    week = _lab(60000).assign(taken=lambda d: "2022-01-0" + (
        d["taken"].str[8:10].astype(int) % 6 + 1).astype(str) + d["taken"].str[10:])
    assert "time_of_day" not in _drafted(week)[0].to_dict()["columns"]["taken"]  # (hours)
    # a month in bins under a day: in days all the same (test_draft_date_bins)
    trips = _lab(60000).assign(taken=lambda d: "2022-01-" + d["taken"].str[8:])
    assert "time_of_day" in _drafted(trips)[0].to_dict()["columns"]["taken"]


def test_a_drafted_time_of_day_survives_naming_the_real_zone_and_keeps_the_seasons(tmp_path):
    """A review's two findings: text with UTC offsets drafts "timezone": "UTC" for the
    curator to name the real one, and its bins of whole UTC days then refused that edit;
    ten years of zoned times were drafted in 10 yearly bins (50 of 73 days before)."""
    offsets = _lab(30000).assign(taken=lambda d: d["taken"] + "Z")
    s, _ = _drafted(offsets)
    path = tmp_path / "s.json"
    s.save(path)
    assert main(["schema", str(path), "--set", "taken.timezone=America/New_York"]) == 0
    assert load_schema(str(path))["taken"].time.timezone == "America/New_York"
    r = np.random.default_rng(0)
    decade = pd.Timestamp("2012-01-01", tz="Europe/Berlin") + pd.to_timedelta(
        r.integers(0, 10 * 365 * 86400, 5000), unit="s")
    spec = _drafted(pd.DataFrame({"t": decade, "k": r.choice(["a", "b"], 5000)}))[0] \
        .to_dict()["columns"]["t"]
    assert spec.get("unit") != "year" and "time_of_day" not in spec, spec
