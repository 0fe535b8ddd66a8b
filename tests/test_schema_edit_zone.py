"""Naming a datetime column's real zone (gpu-dpsyn schema --set COL.timezone=...): text
with UTC offsets drafts "timezone": "UTC" for the curator to name it, but its drafted min
and max kept their +00:00, so a Berlin column's range began at 01:00 local time (its bins
of 6 hours at 01:00, 07:00, ...) unless retyped."""
import json
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.schema import load_schema
from conftest import drafted
from test_draft_timeline_lines import clicks


def _draft(tmp_path):
    # 6 days over the clocks' change: bins of 30 minutes (over a week, days beside the
    # time of day)
    df = clicks(3000, 10, days=6, start="2024-03-28")
    s, _ = drafted(df)
    path = tmp_path / "s.json"
    s.save(path)
    return df, path


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_schema(str(path))


def test_naming_the_zone_rewrites_drafted_ends_as_local_times_of_the_same_instants(
        tmp_path, capsys):
    df, path = _draft(tmp_path)
    was = json.loads(path.read_text())["columns"]["event_ts"]
    assert (was["min"], was["max"], was["bins"]) == (
        "2024-03-27T23:00:00+00:00", "2024-04-02T21:59:59+00:00", 286)
    assert main(["schema", str(path), "--set", "event_ts.timezone=Europe/Berlin"]) == 0
    doc = json.loads(path.read_text())
    spec = doc["columns"]["event_ts"]
    # whole local hours holding the drafted ends: every value drafted in is still in
    assert (spec["min"], spec["max"]) == ("2024-03-28T00:00:00+01:00",
                                          "2024-04-02T23:59:59+02:00")
    assert spec["bins"] == 286  # still 30 minutes each (6 days less the hour of DST)
    assert {"event_ts.min", "event_ts.max", "event_ts.bins"} <= set(doc["_drafted_from_data"])
    col = _load(path)["event_ts"]
    t = pd.to_datetime(df["event_ts"], utc=True).dt.tz_convert("Europe/Berlin")
    assert col.time.min <= t.min() and t.max() <= col.time.max
    err = capsys.readouterr().err
    assert "'event_ts'" in err and "Europe/Berlin wall times at whole hours" in err and \
        "2024-03-28T00:00:00+01:00" in err, err


def test_a_range_of_the_users_own_keeps_its_instants_and_is_said(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"columns": {"t": {
        "type": "datetime", "min": "2024-03-01T00:00:00+00:00", "timezone": "UTC",
        "max": "2024-04-30T23:59:59+00:00", "unit": "day"}}}))
    assert main(["schema", str(path), "--set", "t.timezone=Europe/Berlin"]) == 0
    spec = json.loads(path.read_text())["columns"]["t"]
    assert (spec["min"], spec["max"]) == ("2024-03-01T00:00:00+00:00",
                                          "2024-04-30T23:59:59+00:00")  # never shifted
    err = capsys.readouterr().err
    assert "offset" in err and "2024-03-01T01:00:00+01:00" in err, err  # as read now


def test_an_end_set_in_the_same_command_is_as_given(tmp_path, capsys):
    _, path = _draft(tmp_path)
    assert main(["schema", str(path), "--set", "event_ts.timezone=Europe/Berlin",
                 "--set", "event_ts.min=2024-03-01T00:00:00"]) == 0
    spec = json.loads(path.read_text())["columns"]["event_ts"]
    assert spec["min"] == "2024-03-01T00:00:00"  # the user's, as given; the drafted max
    assert spec["max"] == "2024-04-02T23:59:59+02:00"  # as local time, said
    assert "max" in capsys.readouterr().err


def _hourly(tmp_path, seed: int, n: int):
    """n values of January 1-6, 2024 to the hour, written in UTC with +00:00, drafted
    (in bins of whole hours: under a week) and saved: (the times, the draft, its path)."""
    rng = np.random.default_rng(seed)
    t = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(
        rng.integers(0, 6 * 24, n), "h")
    df = pd.DataFrame({"t": [x.isoformat() for x in t], "k": rng.integers(0, 3, n)})
    s, _ = drafted(df)
    path = tmp_path / "h.json"
    s.save(path)
    return t, s, path


def test_naming_the_zone_of_hourly_values_redrafts_their_bins_for_it(tmp_path, capsys):
    # text to the hour with +00:00: drafted in bins of whole hours, counted in UTC, which
    # a zone refuses; naming the zone (as the draft line asks) drafts them as a zone's
    # would be: local days, with the time of day beside them
    t, s, path = _hourly(tmp_path, 1, 3000)
    was = json.loads(path.read_text())["columns"]["t"]
    assert was["unit"] == "hour" and "bins" in was and was["timezone"] == "UTC"
    assert main(["schema", str(path), "--set", "t.timezone=Europe/Berlin"]) == 0
    doc = json.loads(path.read_text())
    spec = doc["columns"]["t"]
    assert spec["unit"] == "day" and "bins" not in spec
    assert spec["time_of_day"] == {"bins": 24, "unit": "hour"}
    assert {"t.unit", "t.time_of_day"} <= set(doc["_drafted_from_data"])
    assert "t.bins" not in doc["_drafted_from_data"]  # gone: nothing left to review
    col = _load(path)["t"]  # loads: no bins of whole hours in a zone
    local = t.tz_convert("Europe/Berlin")
    assert col.time.min <= local.min() and local.max() <= col.time.max
    err = capsys.readouterr().err
    assert "'t'" in err and "time of day" in err, err
    # a unit the user set in the same command is theirs: refused when it loads, as before
    s.save(path)
    assert main(["schema", str(path), "--set", "t.timezone=Europe/Berlin",
                 "--set", "t.unit=hour"]) != 0


def test_a_drafted_max_in_the_doubled_hour_keeps_its_instant():
    # a range whose last value falls in the hour a zone repeats (Berlin, 2024-10-27):
    # the rewritten max holds the same instant, not an hour earlier (a review)
    from gpu_dpsyn.data.schema_zone import _in_zone
    local = _in_zone({"min": "2024-10-25T01:00:00+00:00", "max": "2024-10-27T00:59:59+00:00"},
                     "Europe/Berlin")
    assert pd.Timestamp(local["max"]) >= pd.Timestamp("2024-10-27T00:59:59+00:00")
    assert pd.Timestamp(local["min"]) <= pd.Timestamp("2024-10-25T01:00:00+00:00")


def test_hourly_values_in_a_half_hour_zone_keep_their_minutes(tmp_path):
    # hourly UTC text named Asia/Kolkata (+05:30): its values fall at :30 local, so it is
    # drafted again to the minute (bins of whole minutes, which any zone counts alike),
    # not to the local hour (every synthetic value had come out at :30 UTC, every real
    # one at :00)
    t, _, path = _hourly(tmp_path, 2, 3000)
    assert main(["schema", str(path), "--set", "t.timezone=Asia/Kolkata"]) == 0
    spec = json.loads(path.read_text())["columns"]["t"]
    assert spec["unit"] == "minute" and "time_of_day" not in spec
    col = _load(path)["t"]
    local = t.tz_convert("Asia/Kolkata")
    assert col.time.min <= local.min() and local.max() <= col.time.max


def test_an_hourly_columns_ends_are_rounded_to_its_hours_not_days():
    # UTC days named New York: an hourly column's range grew by a day of bins the data
    # could not fill (72 hours to 96; a review); to its own unit, 5 hours more at most
    from gpu_dpsyn.data.schema_zone import _in_zone
    was = {"min": "2024-03-01T00:00:00+00:00", "max": "2024-03-03T23:59:59+00:00",
           "unit": "hour"}
    local = _in_zone(was, "America/New_York")
    span = pd.Timestamp(local["max"]) - pd.Timestamp(local["min"])
    assert span < pd.Timedelta(hours=73)
    assert pd.Timestamp(local["min"]) <= pd.Timestamp(was["min"])
    assert pd.Timestamp(local["max"]) >= pd.Timestamp(was["max"])
