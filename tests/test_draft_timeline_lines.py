"""What a drafted datetime column's line says of its bins (data/draft_stamps.py): the
width and count drafted, and the limit they keep to, stated as such.  A probe's
clickstream line said "122 bins of 12 hours" and "to keep to 133 bins" (a limit read as
the count), and three years of times said "32 bins of whole seconds" of bins ~34 days
wide."""
import re

import numpy as np
import pandas as pd

from conftest import drafted


def clicks(users: int, per: int, offsets: bool = True, seed: int = 0,
           days: int = 61, start: str = "2024-03-01") -> pd.DataFrame:
    """users x per events over `days` from `start` (March-April 2024) in Berlin, written
    in UTC with +00:00 (or naive local text); a user's device, mobile events mostly in
    the evening."""
    rng = np.random.default_rng(seed)
    n = users * per
    uid = np.repeat(np.arange(1, users + 1), per)
    dev = rng.choice(["mobile", "desktop"], users)[uid - 1]
    evening = np.where(dev == "mobile", rng.random(n) < 0.8, rng.random(n) < 0.14)
    hour = np.where(evening, rng.integers(17, 24, n), rng.integers(0, 17, n))
    wall = pd.Timestamp(start) + pd.to_timedelta(rng.integers(0, days, n), "D") + \
        pd.to_timedelta(hour * 3600 + rng.integers(0, 3600, n), "s")
    ts = pd.DatetimeIndex(wall).tz_localize("Europe/Berlin", ambiguous=True,
                                              nonexistent="shift_forward")
    text = [t.isoformat() for t in ts.tz_convert("UTC")] if offsets else \
        list(wall.strftime("%Y-%m-%d %H:%M:%S"))
    return pd.DataFrame({"user_id": uid, "device": dev, "event_ts": text,
                         "page": rng.choice(["home", "search", "item", "cart"], n)})


def test_a_line_of_bins_of_whole_units_says_the_limit_is_at_most():
    s, lines = drafted(clicks(3000, 10, days=6))  # 30,000 values: at most 300 bins
    line = lines["event_ts"]
    assert s["event_ts"].size == 288 and "288 bins of 30 minutes each" in line
    assert "bins of 30 minutes, the narrowest" in line and "at most 300 bins" in line
    # no other count of bins than the one drafted, but as a limit
    counts = {int(m.group(1).replace(",", "")) for m in re.finditer(
        r"(?<!at most )\b(\d[\d,]*) bins", line)}
    assert counts == {288}, line
    assert "in bins of whole seconds" not in line  # (bins 30 minutes wide)


def test_bins_that_no_width_keeps_to_say_their_width():
    r = np.random.default_rng(0)
    t = pd.Timestamp("2020-01-01", tz="Europe/Berlin") + pd.to_timedelta(
        r.integers(0, 3 * 365 * 86400, 3000), unit="s")
    s, lines = drafted(pd.DataFrame({"t": [x.isoformat() for x in t],
                                     "k": r.choice(["a", "b"], 3000)}))
    line = lines["t"]
    assert s["t"].size == 32
    assert "32 bins of about 34 days each" in line, line
    assert "bins of whole seconds" not in line
    assert "a month (36)" in line and "at most 32 bins" in line  # why: months would pass it


def test_an_id_given_bins_a_timeline_by_its_individuals_not_its_records():
    """An individual's records share one bound: at max_records_per_individual D the noise
    is D times a record's (without it, one record each is kept), so a bin holds about as
    much against it as the individuals do.  A clickstream of 1,500 users x 20 events over
    two months was drafted in 244 bins of 6 hours (a bin per 100 of its 30,000 values):
    at eps 1, D 20, seeds 1-3, its zone named, the evening share of mobile / desktop
    events came out 0.30 / 0.30 (real 0.80 / 0.14; hour x device TVD 0.32); drafted by its
    1,500 users, in months beside a time of day, 0.66 / 0.18 (TVD 0.12)."""
    df = clicks(1500, 20)
    s, lines = drafted(df, id_columns=["user_id"])
    spec, line = s.to_dict()["columns"]["event_ts"], lines["event_ts"]
    assert spec["unit"] == "month" and spec["time_of_day"] == {"bins": 24, "unit": "second"}
    assert "a bin per 100 of the 1,500 individuals its 30,000 values come from" in line
    assert "event_ts.unit" in s.drafted  # (from the count: for review)
    naive, lines = drafted(clicks(1500, 20, offsets=False), id_columns=["user_id"])
    spec = naive.to_dict()["columns"]["event_ts"]
    assert (spec["unit"], spec["bins"], spec["time_of_day"]["bins"]) == ("day", 31, 24)
    assert "31 bins of about 2 days each" in lines["event_ts"]  # (the last one day)
    # without --id each record is an individual: by its 30,000 values, bins finer than
    # a day would keep to the limit, but over 61 days it is drafted in days beside its
    # time of day all the same (test_draft_date_bins), with no word of individuals
    spec, line = drafted(df)[0].to_dict()["columns"]["event_ts"], drafted(df)[1]["event_ts"]
    assert spec["unit"] == "day" and "time_of_day" in spec and "individuals" not in line
    # an id of one record each: the same
    one = clicks(30000, 1)
    assert drafted(one, id_columns=["user_id"])[0].to_dict()["columns"]["event_ts"] == spec
