"""A datetime column "after" another (data/types/gap.py): binned by the gap, decoded as
the start plus the gap, so that no synthetic record ends before it starts.  Binned alone,
a claims table's discharge came before its admission in a third of the synthetic rows."""
import json
import re

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.preflight import findings
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.evaluation.report import labels

DAY = 86400 * 10 ** 9
ADMIT = {"type": "datetime", "min": "2023-01-01", "max": "2023-12-31T23:59:00",
         "unit": "minute", "bins": 365, "format": "%Y-%m-%d %H:%M"}
AFTER = {"column": "admit", "max": "P60D", "bins": 60, "unit": "minute"}


def _schema(after=AFTER, **disch):
    return load_schema({"columns": {
        "admit": ADMIT,
        "disch": {"type": "datetime", "min": "2023-01-01", "max": "2024-03-31T23:59:00",
                  "format": "%Y-%m-%d %H:%M", "after": after, **disch},
        "charge": {"type": "numeric", "min": 0, "max": 60000, "bins": 40}}})


def _claims(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    admit = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 364 * 1440, n),
                                                         unit="min")
    stay = np.minimum(rng.gamma(1.5, 3.0, n), 59.0)  # days
    disch = admit + pd.to_timedelta(np.round(stay * 1440), unit="min")
    return pd.DataFrame({"admit": admit.strftime("%Y-%m-%d %H:%M"),
                         "disch": disch.strftime("%Y-%m-%d %H:%M"),
                         "charge": np.round(800 + 700 * stay, 2)}), stay


def test_the_gap_bins_are_whole_units_of_the_gap():
    col = _schema()["disch"]
    assert col.size == 60 and col.edges[:3] == [0, DAY, 2 * DAY]
    assert col.edges[-1] == 60 * DAY + 1  # the last bin holds the max itself
    hourly = _schema({"column": "admit", "max": "PT36H", "unit": "hour"})["disch"]
    assert hourly.size == 37 and hourly.edges[1] == 3600 * 10 ** 9  # 0 .. 36 hours
    assert _schema({"column": "admit", "max": "90 minutes", "bins": 3})["disch"].edges[:2] == \
        [0, 1800 * 10 ** 9]  # pandas' text for a duration, in whole seconds
    doc = _schema().to_dict()["columns"]["disch"]
    assert doc["after"] == AFTER and "unit" not in doc and "bins" not in doc
    assert load_schema(_schema().to_dict())["disch"].edges == col.edges  # reads back


@pytest.mark.parametrize("after,extra,says", [
    ({**AFTER, "column": "nope"}, {}, "does not have"),
    ({**AFTER, "column": "charge"}, {}, "another datetime column"),
    ({**AFTER, "column": "disch"}, {}, "another datetime column"),
    ({**AFTER, "max": "-P1D"}, {}, "positive duration"),
    ({**AFTER, "max": "soon"}, {}, "positive duration"),
    # pandas read P1M (a month) as a minute, P0.5D as 5 days
    ({**AFTER, "max": "P1M"}, {}, "fixed length"), ({**AFTER, "max": "P0.5D"}, {}, "fixed"),
    ({**AFTER, "max": "P1.5DT0H"}, {}, "fixed length"),
    ({**AFTER, "max": "P200000D"}, {}, "longer than"),  # past what a timestamp holds
    ({**AFTER, "max": "P\u0661\u0660D"}, {}, "fixed length"),  # Arabic-Indic digits
    ({**AFTER, "max": "PT90S"}, {}, "whole number of minutes"),
    ({"column": "admit", "max": "P60D", "unit": "second"}, {}, "too large a domain"),
    ({"column": "admit", "max": "P60D"}, {}, "needs 'bins'"),
    ({**AFTER, "months": 2}, {}, "unexpected"),
    (AFTER, {"unit": "day"}, "inside 'after'"),
    (AFTER, {"timezone": "UTC"}, "same \"timezone\""),
    ("admit", {}, "must be an object"),
])
def test_a_bad_after_is_refused_in_one_line(after, extra, says):
    with pytest.raises(SchemaError, match=says) as e:
        _schema(after, **extra)
    assert "\n" not in str(e.value)


def test_a_missing_start_needs_a_nullable_column_after_it():
    with pytest.raises(SchemaError, match="nullable"):
        load_schema({"columns": {"admit": {**ADMIT, "nullable": True}, "disch": {
            "type": "datetime", "min": "2023-01-01", "max": "2024-03-31", "after": AFTER}}})


def test_no_synthetic_record_ends_before_it_starts():
    df, stay = _claims()
    s = _schema()
    out = Synthesizer(4.0, 1e-9, seed=1, progress=False).fit(df, s).sample()
    a, d = (pd.to_datetime(out[c], format="%Y-%m-%d %H:%M") for c in ("admit", "disch"))
    gap = (d - a).dt.total_seconds().to_numpy() / 86400
    assert (gap >= 0).all() and (gap <= 60).all()
    assert (d <= pd.Timestamp("2024-03-31T23:59:00")).all()
    assert abs(gap.mean() - stay.mean()) < 0.15 * stay.mean()  # the stays' own marginal
    # the stay's link to the charge, which two unrelated dates lost
    assert np.corrcoef(gap, out["charge"])[0, 1] > 0.5
    again = Synthesizer(4.0, 1e-9, seed=1, progress=False).fit(df, s).sample()
    assert again.equals(out)


def test_a_record_ending_before_it_starts_is_repaired_row_locally():
    df, _ = _claims(200)
    df.loc[3, ["admit", "disch"]] = ["2023-06-01 12:00", "2023-06-01 08:00"]  # ends first
    df.loc[5, "disch"] = (pd.Timestamp(df.loc[5, "admit"]) + pd.Timedelta("P70D")
                          ).strftime("%Y-%m-%d %H:%M")  # past the gap's max
    s = _schema()
    with pytest.raises(DataError, match="comes before 'admit'"):
        encode(df, s)
    fixed = repair(df, s)
    assert len(fixed) == 199  # row 3 dropped: the column is not nullable
    gap = pd.to_datetime(fixed["disch"]) - pd.to_datetime(fixed["admit"])
    assert gap.max() == pd.Timedelta("P60D")  # row 5 clamped to the max
    encode(fixed, s)
    said = {what: k for _, what, k, _ in findings(df, s)}
    assert said["before admit (or without it): their rows dropped"] == 1
    assert said["more than P60D after admit: clamped to it"] == 1
    nullable = _schema(nullable=True)
    assert repair(df, nullable)["disch"].isna().sum() == 1  # made missing, row kept


def test_a_derived_part_of_a_column_after_another_is_its_decoded_value():
    df, _ = _claims(3000)
    df["disch_hour"] = pd.to_datetime(df["disch"]).dt.hour
    doc = _schema().to_dict()
    doc["columns"]["disch_hour"] = {"type": "derived", "from": "disch", "op": "hour"}
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, load_schema(doc)).sample()
    assert (out["disch_hour"] == pd.to_datetime(out["disch"]).dt.hour).all()


def test_the_report_labels_the_gap_bins_as_durations():
    col = _schema({"column": "admit", "max": "P60D", "bins": 20})["disch"]
    assert labels.code_texts(col)[:2] == ["+0 d – +3 d", "+3 d – +6 d"]


def test_the_cli_releases_and_checks_a_table_with_a_column_after_another(tmp_path, capsys):
    df, _ = _claims(2000)
    df.loc[0, ["admit", "disch"]] = ["2023-06-01 12:00", "2023-06-01 08:00"]
    data, schema, out = tmp_path / "c.csv", tmp_path / "s.json", tmp_path / "o.csv"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps(_schema().to_dict()))
    assert main(["check", str(data), "--schema", str(schema)]) == 1
    assert "before admit" in capsys.readouterr().out
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(out), "--seed", "0", "--quiet"]) == 0
    syn = pd.read_csv(out)
    assert (pd.to_datetime(syn["disch"]) >= pd.to_datetime(syn["admit"])).all()


def _drafted(df):
    from gpu_dpsyn.data.inference import infer_schema_with_summary
    with pytest.warns(UserWarning):
        s, lines = infer_schema_with_summary(df)
    return s, {x.split()[0]: x for x in lines}


def test_a_draft_codes_a_column_after_another_by_the_gap():
    df, stay = _claims(4000)
    s, lines = _drafted(df)
    gap = s["disch"].time.after
    assert gap is not None and gap.column == "admit" and s["admit"].time.after is None
    days = int(-(-np.round(stay.max() * 1440) // 1440))  # the largest gap, up to a day
    # a bin a day: about the 32 bins a numeric column gets (at eps 1, 672 bins of an
    # hour spread the stays' noisy counts thin and lost their link to the charge)
    assert gap.max == pd.Timedelta(days=days) and s["disch"].size == days
    assert gap.tick == 60 * 10 ** 9  # in whole minutes, as the data
    assert "disch.after" in s.drafted  # read off the data: for the review
    assert "after 'admit' in every record" in lines["disch"]
    assert f"{days} bins of a day each, in whole minutes" in lines["disch"]


@pytest.mark.parametrize("change", ["one_before", "end_without_start"])
def test_a_draft_leaves_a_pair_alone_unless_every_record_keeps_the_order(change):
    df, _ = _claims(2000)
    if change == "one_before":
        df.loc[7, ["admit", "disch"]] = ["2023-06-01 12:00", "2023-06-01 08:00"]
    else:
        df.loc[7, "admit"] = None
    s, _ = _drafted(df)
    assert s["disch"].time.after is None and s["admit"].time.after is None


def test_a_start_long_before_the_ends_own_min_makes_its_record_invalid_not_a_refusal():
    """The clamp (start + max) fell below the end's own min: encode refused the repaired
    table over one record."""
    s = load_schema({"columns": {
        "admit": {"type": "datetime", "min": "2020-01-01", "max": "2023-12-31", "unit": "day"},
        "disch": {"type": "datetime", "min": "2023-01-01", "max": "2024-03-31",
                  "after": {"column": "admit", "max": "P10D", "unit": "day"}}}})
    df = pd.DataFrame({"admit": ["2023-05-01", "2020-01-05", "2023-06-01"],
                       "disch": ["2023-05-03", "2023-06-01", "2023-06-04"]})
    fixed = repair(df, s)
    assert list(fixed["admit"].astype(str).str[:10]) == ["2023-05-01", "2023-06-01"]
    encode(fixed, s)


def test_a_start_that_runs_past_the_ends_max_is_refused():
    with pytest.raises(SchemaError, match="past this column's 'max'"):
        load_schema({"columns": {
            "admit": {**ADMIT, "max": "2024-01-31T23:59:00"},
            "disch": {"type": "datetime", "min": "2023-01-01", "max": "2023-12-31T23:59:00",
                      "after": AFTER}}})


def test_a_sum_near_the_last_date_does_not_wrap_around():
    s = load_schema({"columns": {
        "a": {"type": "datetime", "min": "2261-01-01", "max": "2261-12-31", "unit": "day"},
        "b": {"type": "datetime", "min": "2261-01-01", "max": "2261-12-31T23:59:59",
              "after": {"column": "a", "max": "P20000D", "bins": 20}}}})
    rng = np.random.default_rng(0)
    a = pd.Timestamp("2261-01-01") + pd.to_timedelta(rng.integers(0, 300, 3000), unit="D")
    df = pd.DataFrame({"a": a, "b": a + pd.to_timedelta(rng.integers(0, 60, 3000), unit="D")})
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    assert (out["b"] >= out["a"]).all()


@pytest.mark.parametrize("zone", [None, "America/New_York"])
def test_an_end_written_to_the_day_comes_out_on_or_after_its_start(zone):
    """The decoded end carried the start's time of day: written to the day, 550 of 3,000
    ends read back before their start (and evaluate refused the release); across a
    daylight-saving change, a day's gap landed at 23:00 the evening before."""
    rng = np.random.default_rng(3)
    n = 3000
    admit = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 360 * 86400, n),
                                                         unit="s")
    disch = (admit + pd.to_timedelta(rng.integers(0, 10, n), unit="D")).normalize() + \
        pd.Timedelta("1D")
    tz = {"timezone": zone} if zone else {}
    s = load_schema({"columns": {
        "admit": {"type": "datetime", "min": "2023-01-01", "max": "2023-12-31", "bins": 365,
                  "format": "%Y-%m-%d %H:%M:%S", **tz},
        "disch": {"type": "datetime", "min": "2023-01-01", "max": "2024-01-31",
                  "format": "%Y-%m-%d", "after": {"column": "admit", "max": "P15D",
                                                  "bins": 15}, **tz}}})
    df = pd.DataFrame({"admit": admit.strftime("%Y-%m-%d %H:%M:%S"),
                       "disch": disch.strftime("%Y-%m-%d")})
    out = Synthesizer(4.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    a = pd.to_datetime(out["admit"], format="%Y-%m-%d %H:%M:%S")
    d = pd.to_datetime(out["disch"], format="%Y-%m-%d")
    assert (d >= a).all()
    encode(out, s)  # read back, as evaluate reads the release


def test_a_draft_pairs_no_dates_whose_gaps_span_the_ends_own_range():
    rng = np.random.default_rng(1)
    n = 3000  # a visit "after" a birth: coded by a gap of up to 90 years, visits fell
    birth = pd.Timestamp("1930-01-01") + pd.to_timedelta(rng.integers(0, 30000, n), "D")
    visit = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, n), "D")
    df = pd.DataFrame({"birth": birth.strftime("%Y-%m-%d"), "visit": visit.strftime("%Y-%m-%d")})
    s, _ = _drafted(df)
    assert s["visit"].time.after is None


def test_evaluate_without_a_schema_compares_dates_as_dates():
    from gpu_dpsyn.data.inference import comparison_schema
    df, _ = _claims(500)
    assert comparison_schema(df, df)["disch"].time.after is None


def test_long_gaps_have_labels_of_their_own():
    col = _schema({"column": "admit", "max": "P1500D", "unit": "day"},
                  max="2028-01-01")["disch"]
    texts = labels.code_texts(col)
    assert len(set(texts)) == len(texts) == 1501 and texts[-2] == "+1,499 d – +1,500 d"


def test_the_schema_command_edits_a_key_of_after(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schema().to_dict()))
    assert main(["schema", str(path), "--set", "disch.after.max=P30D",
                 "--set", "disch.after.bins=30"]) == 0
    assert json.loads(path.read_text())["columns"]["disch"]["after"] == \
        {**AFTER, "max": "P30D", "bins": 30}
    assert main(["schema", str(path), "--drop", "admit"]) == 2  # what to do instead
    assert "--set disch.after=null --set disch.unit=day" in capsys.readouterr().err
    assert main(["schema", str(path), "--set", "disch.after=null",
                 "--set", "disch.unit=day", "--drop", "admit"]) == 0


def _staff(n=6000, seed=2):
    """Hires over 19 years; a termination (or none yet) after each, by mid-2024."""
    rng = np.random.default_rng(seed)
    hire = pd.Timestamp("2005-01-01") + pd.to_timedelta(rng.integers(0, 7000, n), unit="D")
    tenure = pd.to_timedelta(np.round(rng.exponential(1500, n)), unit="D")
    end = hire + tenure
    left = end <= pd.Timestamp("2024-06-30")
    return pd.DataFrame({"hire": hire.strftime("%Y-%m-%d"),
                         "term": end.strftime("%Y-%m-%d").where(left, None)})


def test_a_long_tenure_beside_a_late_hire_spreads_out_rather_than_pile_on_max():
    """Employees: the drafted pair was refused (tenures as long as the range), and with
    "after" set, 7% of terminations fell on the column's last day (the real table: one):
    the start and gap were not measured together, and a gap past the max was clipped."""
    df = _staff()
    s, lines = _drafted(df)
    assert s["term"].time.after is not None and s["term"].time.after.column == "hire"
    assert re.search(r"in \d+ bins of [\d.]+ days each", lines["term"])  # not PT2463H
    syn = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(df, s)
    out = syn.sample()
    end = pd.to_datetime(out["term"])
    assert (end[end.notna()] >= pd.to_datetime(out["hire"])[end.notna()]).all()
    assert (end == end.max()).mean() < 0.01
    # nor just after the start: a gap past the room keeps its place in its own bin; scaled
    # by the room over the gap's max, the late hires' stays had median 42 days (real 102)
    def late_stays(d):
        h, e = pd.to_datetime(d["hire"]), pd.to_datetime(d["term"])
        return (e - h).dt.days[(h >= pd.Timestamp("2023-06-30")) & e.notna()]
    assert abs(late_stays(out).median() / late_stays(df).median() - 1) < 0.3


def test_the_start_and_the_gap_are_measured_together_whatever_the_scores():
    """Among strongly linked columns at a small budget, the selection left the (hire,
    termination) pair out, and a quarter of the terminations came before their hire."""
    df = _staff(6000)
    r = np.random.default_rng(0)
    for i in range(6):  # pairs the selection's budget would rather go to
        a = r.integers(0, 8, len(df))
        df[f"x{i}"], df[f"y{i}"] = a.astype(str), ((a + (r.random(len(df)) < .05)) % 8
                                                   ).astype(str)
    s, _ = _drafted(df)
    syn = Synthesizer(0.3, 1e-9, seed=0, progress=False).fit(df, s)
    assert any(set(m) >= {"hire", "term"} for m in syn.privacy_report()["selected_marginals"])


def test_setting_after_by_hand_takes_the_columns_own_unit_and_bins_out(tmp_path):
    path = tmp_path / "s.json"
    doc = _schema().to_dict()
    doc["columns"]["disch"] = {"type": "datetime", "min": "2023-01-01",
                               "max": "2024-03-31T23:59:00", "unit": "day", "bins": 30}
    path.write_text(json.dumps(doc))
    assert main(["schema", str(path), "--set", "disch.after=" + json.dumps(AFTER)]) == 0
    col = json.loads(path.read_text())["columns"]["disch"]
    assert col["after"] == AFTER and "unit" not in col and "bins" not in col


def test_an_end_in_a_doubled_hour_is_not_written_before_its_start():
    """At a fall-back, a start at 02:10 +01:00 plus 10 minutes rounded up to the minute
    read back as 02:21 +02:00: an hour before its start."""
    from gpu_dpsyn.data.types import gap
    s = load_schema({"columns": {
        "a": {"type": "datetime", "min": "2020-10-01", "max": "2020-11-30", "unit": "hour",
              "timezone": "Europe/Berlin"},
        "b": {"type": "datetime", "min": "2020-10-01", "max": "2020-11-30",
              "timezone": "Europe/Berlin",
              "after": {"column": "a", "max": "PT2H", "bins": 4, "unit": "second"}}}})
    col = s["b"]
    col.time.after.step = "min"  # as a format written to the minute makes it
    start = pd.Timestamp("2020-10-25 01:10", tz="UTC").value  # 02:10 +01:00, the second
    x, na = gap.decode(np.array([start]), np.array([False]), np.array([630 * 10 ** 9]),
                       np.array([False]), col, *col.time.bounds)
    assert x[0] >= start and not na[0]


def test_editing_one_key_of_a_drafted_after_keeps_it_for_review(tmp_path):
    """--set disch.after.bins=10 took "disch.after" off the drafted list: its max (the
    largest stay) and its pairing, read off the data, then drew no warning."""
    df, _ = _claims(2000)
    s, _ = _drafted(df)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(s.to_dict()))
    assert "disch.after" in json.loads(path.read_text())["_drafted_from_data"]
    assert main(["schema", str(path), "--set", "disch.after.bins=10"]) == 0
    assert "disch.after" in json.loads(path.read_text())["_drafted_from_data"]


def _bookings(n=5000, seed=4):
    rng = np.random.default_rng(seed)
    booked = pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 360, n), unit="D")
    check_in = booked + pd.to_timedelta(rng.integers(0, 200, n), unit="D")
    check_out = check_in + pd.to_timedelta(rng.integers(1, 15, n), unit="D")
    return pd.DataFrame({c: v.strftime("%Y-%m-%d") for c, v in
                         (("booked", booked), ("check_in", check_in),
                          ("check_out", check_out))})


def test_a_chain_of_dates_keeps_each_after_the_one_before():
    """check_out after check_in after booked: a start could not itself come after another,
    so the draft took check_out after check_in and left check_in free of booked: stays
    began before they were booked."""
    df = _bookings()
    s, lines = _drafted(df)
    assert s["check_out"].time.after.column == "check_in"
    assert s["check_in"].time.after.column == "booked"
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    b, i, o = (pd.to_datetime(out[c]) for c in ("booked", "check_in", "check_out"))
    assert (i >= b).all() and (o >= i).all()
    fixed = repair(df.assign(check_in=df["booked"]), s)  # (a chain repairs in its order)
    encode(fixed, s)
    doc = s.to_dict()  # a cycle: booked after check_out (every range ending alike)
    for c in ("booked", "check_in"):
        doc["columns"][c]["max"] = doc["columns"]["check_out"]["max"]
    doc["columns"]["booked"] = {k: v for k, v in doc["columns"]["booked"].items()
                                if k not in ("unit", "bins")}
    doc["columns"]["booked"]["after"] = {"column": "check_out", "max": "P30D", "unit": "day"}
    with pytest.raises(SchemaError, match="comes after itself"):
        load_schema(doc)


def test_a_gap_of_one_unit_tells_same_day_from_next_day():
    """A gap drafted up to P1D was one bin: 89% same-day stays came out half and half."""
    rng = np.random.default_rng(0)
    a = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 300, 3000), unit="D")
    b = a + pd.to_timedelta((rng.random(3000) < 0.1).astype(int), unit="D")
    df = pd.DataFrame({"a": a.strftime("%Y-%m-%d"), "b": b.strftime("%Y-%m-%d")})
    s, _ = _drafted(df)
    assert s["b"].time.after is not None and s["b"].size == 2
    out = Synthesizer(4.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    same = (pd.to_datetime(out["b"]) == pd.to_datetime(out["a"])).mean()
    assert 0.8 < same < 0.98


def test_an_end_written_more_coarsely_than_its_start_must_have_room():
    """A start to the hour on the last day, an end written to the day with the same max:
    rounded up it passed max, and written as it was it read back before its start (58 of
    2,007 rows); a gap max shorter than a day: 1,748 of 2,008."""
    a = {"type": "datetime", "min": "2021-01-01T00:00:00", "max": "2021-01-30T23:59:59",
         "unit": "hour", "format": "%Y-%m-%d %H:%M"}
    b = {"type": "datetime", "min": "2021-01-01T00:00:00", "max": "2021-01-30T23:59:59",
         "format": "%Y-%m-%d", "after": {"column": "a", "max": "P2D", "unit": "day"}}
    with pytest.raises(SchemaError, match="at the earliest, past this column's 'max'"):
        load_schema({"columns": {"a": a, "b": b}})
    short = {**b, "max": "2021-01-31", "after": {"column": "a", "max": "PT2H", "bins": 4}}
    with pytest.raises(SchemaError, match="shorter than the step the column is written in"):
        load_schema({"columns": {"a": a, "b": short}})
    load_schema({"columns": {"a": a, "b": {**b, "max": "2021-01-31"}}})  # room: accepted


def test_a_derived_part_finer_than_a_gaps_step_is_refused():
    """The hour of an end rounded to the day was 0 on every row (accepted; the same rule
    on a column with unit day was refused)."""
    doc = _schema({"column": "admit", "max": "P60D", "unit": "day"}).to_dict()
    doc["columns"]["disch"]["format"] = "%Y-%m-%d"
    doc["columns"]["h"] = {"type": "derived", "from": "disch", "op": "hour"}
    with pytest.raises(SchemaError, match="same on every row"):
        load_schema(doc)


def test_check_says_what_the_rule_does_to_an_end_clamped_before_its_start():
    """An end before its own min, clamped to it, then comes before its start and its row is
    dropped; check said only 'clamped'."""
    s = _schema()
    df = pd.DataFrame({"admit": ["2023-06-01 10:00", "2023-06-02 10:00"],
                       "disch": ["2022-01-01 10:00", "2023-06-03 10:00"],
                       "charge": [10.0, 20.0]})
    said = {what: k for _, what, k, _ in findings(df, s)}
    assert said.get("before admit (or without it): their rows dropped") == 1
    assert len(repair(df, s)) == 1


def _ordered(df, *cols):
    """The draft of df (it must load) and a release of it, with no record out of order."""
    s, _ = _drafted(df)
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    t = [pd.to_datetime(out[c]) for c in cols]
    for a, b in zip(t, t[1:]):
        assert (b[b.notna()] >= a[b.notna()]).all()
    return s


@pytest.mark.parametrize("case", ["tickets", "orders", "signups"])
def test_a_draft_always_loads_and_keeps_its_dates_in_order(case):
    """infer-schema wrote schemas its own load refused: an end written to the hour after a
    start to the minute on the last day (tickets), a delivery date after an order to the
    minute (orders), a chain whose middle's max the draft raised past its end's (signups)."""
    rng = np.random.default_rng(0)
    if case == "tickets":
        o = pd.Timestamp("2023-03-01") + pd.to_timedelta(
            rng.integers(0, (58 * 24 + 12) * 60, 2000), unit="min")
        c = o.ceil("h") + pd.to_timedelta(rng.integers(0, 4, 2000), unit="h")
        _ordered(pd.DataFrame({"opened": o.strftime("%Y-%m-%d %H:%M"),
                               "closed": c.strftime("%Y-%m-%d %H:00")}), "opened", "closed")
    elif case == "orders":
        o = pd.Timestamp("2021-01-01") + pd.to_timedelta(
            rng.integers(0, (3 * 365 - 25) * 1440, 2000), unit="min")
        d = o.normalize() + pd.to_timedelta(rng.integers(1, 6, 2000), unit="D")
        _ordered(pd.DataFrame({"ordered": o.strftime("%Y-%m-%d %H:%M"),
                               "delivered": d.strftime("%Y-%m-%d")}), "ordered", "delivered")
    else:
        a = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1255, 3000), "D")
        b = a + pd.to_timedelta(rng.integers(0, 5, 3000), unit="D")
        c = b + pd.to_timedelta(rng.integers(0, 3, 3000), unit="D")
        late = a >= pd.Timestamp("2021-01-01")
        s = _ordered(pd.DataFrame({"signup": a.strftime("%Y-%m-%d"),
                                   "activated": b.strftime("%Y-%m-%d").where(late),
                                   "first_order": c.strftime("%Y-%m-%d").where(late)}),
                     "signup", "activated", "first_order")
        assert s["first_order"].time.after is not None


def test_a_drafted_gap_of_a_bin_a_day_gives_its_max_a_bin():
    """Stays of 14 nights (15% of them) shared the last bin with 13 (0.4%), and came out
    about as often as each other."""
    rng = np.random.default_rng(0)
    a = pd.Timestamp("2022-01-01") + pd.to_timedelta(rng.integers(0, 700, 3000), unit="D")
    nights = np.where(rng.random(3000) < 0.15, 14, rng.integers(1, 13, 3000))
    b = a + pd.to_timedelta(nights, unit="D")
    s, lines = _drafted(pd.DataFrame({"a": a.strftime("%Y-%m-%d"),
                                      "b": b.strftime("%Y-%m-%d")}))
    assert s["b"].size == 15 and "15 bins of a day each" in lines["b"]


def test_a_chain_repairs_each_end_against_its_repaired_start():
    s = load_schema({"columns": {
        "a": {"type": "datetime", "min": "2021-01-01", "max": "2021-12-31", "unit": "day"},
        "b": {"type": "datetime", "min": "2021-01-01", "max": "2021-12-31",
              "after": {"column": "a", "max": "P10D", "unit": "day"}},
        "c": {"type": "datetime", "min": "2021-01-01", "max": "2021-12-31",
              "after": {"column": "b", "max": "P10D", "unit": "day"}}}})
    df = pd.DataFrame({"a": ["2021-01-01", "2021-03-01"], "b": ["2021-01-20", "2021-03-02"],
                       "c": ["2021-01-25", "2021-03-03"]})
    fixed = repair(df, s)  # b clamped to 01-11, then c to 01-21 after it
    assert str(pd.Timestamp(fixed["c"][0]).date()) == "2021-01-21"
    encode(fixed, s)
    said = {(c, what): k for c, what, k, _ in findings(df, s)}
    assert said[("c", "more than P10D after b: clamped to it")] == 1


def test_a_public_max_for_a_gap_keeps_its_bins_width(tmp_path, capsys):
    """A hospital table's stays, drafted after admission up to P114D in 32 bins of 3.6
    days: set to a public P365D, as the README asks of ranges, the 32 bins grew to 11.4
    days each and at eps 1 the synthetic median stay was 151 hours (real 70; drafted, 74).
    The max alone keeps the width (and says so); bins given beside it are kept."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schema().to_dict()))  # P60D in 60 bins: a day each
    assert main(["schema", str(path), "--set", "disch.after.max=P180D"]) == 0
    assert json.loads(path.read_text())["columns"]["disch"]["after"]["bins"] == 180
    err = capsys.readouterr().err
    assert "keep their width" in err and "180 bins" in err and \
        "--set disch.after.bins=N" in err, err
    assert main(["schema", str(path), "--set", "disch.after.max=P200D",
                 "--set", "disch.after.bins=40"]) == 0
    assert json.loads(path.read_text())["columns"]["disch"]["after"]["bins"] == 40
    assert main(["schema", str(path), "--set", "disch.after.max=P7D"]) == 0  # under half:
    assert json.loads(path.read_text())["columns"]["disch"]["after"]["bins"] == 40  # kept


def test_a_whole_new_after_is_taken_as_given_and_not_said_to_keep_a_width(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schema().to_dict()))
    new = json.dumps({**AFTER, "max": "P30D", "bins": 10})
    assert main(["schema", str(path), "--set", f"disch.after={new}"]) == 0
    assert json.loads(path.read_text())["columns"]["disch"]["after"]["bins"] == 10
    assert "keep their width" not in capsys.readouterr().err


def test_a_gaps_bins_grow_four_times_at_most_when_its_max_is_set(tmp_path, capsys):
    """P60D in 60 bins set to a decade's max would keep its width in 3,650 bins (each pair
    with the column 60 times as large): the bins grow four times, no more, and the line
    says so."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps(_schema().to_dict()))  # P60D in 60 bins
    assert main(["schema", str(path), "--set", "disch.after.max=P3650D"]) == 0
    assert json.loads(path.read_text())["columns"]["disch"]["after"]["bins"] == 240
    err = capsys.readouterr().err
    assert "grow 4 times, no more" in err and "240 bins" in err and "keep" not in err, err
