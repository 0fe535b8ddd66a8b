"""How finely a draft bins a datetime column: no more bins than the table's size supports
(data/draft_stamps.py).  A month of 30k trips drafted 744 bins of an hour; at eps 1 the
noisy counts of ~40 records a bin (~8 a cell beside a 5-value column) swamped the
hour-of-day pattern."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.inference import comparison_schema
from gpu_dpsyn.data.schema import load_schema
from conftest import drafted


def _trips(n: int, fmt="%Y-%m-%d %H:%M", seed=0, days=31):
    """n trips over January 2023 (its first `days`), to the minute, most of them by
    day."""
    rng = np.random.default_rng(seed)
    p = np.array([3, 2, 1, 1, 1, 2, 4, 7, 8, 6, 5, 5, 5, 5, 5, 6, 7, 8, 8, 7, 6, 5, 4, 4.])
    hour = rng.choice(24, n, p=p / p.sum())
    t = pd.Timestamp("2023-01-01") + pd.to_timedelta(
        rng.integers(0, days, n) * 1440 + hour * 60 + rng.integers(0, 60, n), unit="min")
    night = (hour >= 22) | (hour < 5)
    return pd.DataFrame({"pickup": t.strftime(fmt),
                         "kind": np.where(night, "bar", rng.choice(["office", "shop"], n))})


_draft = drafted  # (conftest: the draft and its lines by column)


def test_few_rows_draft_coarser_bins_of_whole_units():
    """6,000 rows over 6 days: a bin per 100 records at most (60), so 3 hours a bin
    (48), each a whole number of the values' minutes; a bin starts on the hour, as hours
    of the day do."""
    s, lines = _draft(_trips(6_000, days=6))
    col = s["pickup"]
    assert col.time.unit == "minute" and col.size == 48
    assert s.to_dict()["columns"]["pickup"]["bins"] == 48
    edges = pd.to_datetime(np.asarray(col.edges[:-1]), unit="ns")
    assert (edges.hour % 3 == 0).all() and (edges.minute == 0).all()
    assert "48 bins of 3 hours each, in whole minutes" in lines["pickup"]
    assert "a bin per 100" in lines["pickup"]
    assert "pickup.bins" in s.drafted  # (from the count of values: for the review)
    small, lines = _draft(_trips(3_000))  # 32 at least, as a numeric column gets
    assert small["pickup"].size == 31 and small.domain == (31, 24, 3)  # + time of day
    assert "unit day" in lines["pickup"] and "time_of_day" in lines["pickup"]


def test_a_week_or_more_binned_finer_than_a_day_is_drafted_in_days_with_the_time_of_day():
    """30k trips over January were drafted in 248 bins of 3 hours: each bin holds ~120
    records, a few a cell beside another column's values, and at eps 1 hour-of-day beside
    the others came out 3-5 times further from the real table than with days and the time
    of day beside them (bench/experiments/tod_days)."""
    s, lines = _draft(_trips(30_000))
    col = s["pickup"]
    assert col.time.unit == "day" and col.size == 31 and s.domain == (31, 24, 3)
    assert "over 31 days" in lines["pickup"] and "time_of_day" in lines["pickup"]
    assert s.to_dict()["columns"]["pickup"]["time_of_day"] == {"bins": 24, "unit": "minute"}
    hours = _trips(100_000, fmt="%Y-%m-%d %H:00")  # the values' own hours fit: kept
    assert _draft(hours)[0]["pickup"].size == 744


def test_many_rows_keep_the_values_own_unit():
    hours = _trips(100_000, fmt="%Y-%m-%d %H:00")
    s, lines = _draft(hours)
    assert s["pickup"].time.unit == "hour" and s["pickup"].time.calendar
    assert s["pickup"].size == 744 and "unit hour" in lines["pickup"]
    assert "pickup.bins" not in s.drafted and "pickup.unit" not in s.drafted
    days = pd.DataFrame({"d": (pd.Timestamp("2021-01-01") + pd.to_timedelta(
        np.arange(80_000) % 730, unit="D")).strftime("%Y-%m-%d"), "k": np.arange(80_000) % 3})
    assert _draft(days)[0]["d"].time.calendar  # 730 days, 800 allowed
    s, lines = _draft(days.iloc[:30_000])  # 300 allowed: 3 days a bin
    assert s["d"].time.unit == "day" and s["d"].size == 244
    assert "244 bins of about 3 days each, in whole days" in lines["d"]


def test_a_table_compared_by_evaluate_keeps_the_values_own_unit():
    """comparison_schema is no release: no noise, its bins as fine as the values."""
    df = _trips(3_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = comparison_schema(df, df)
    assert s["pickup"].size == 744


def test_the_output_keeps_the_values_written_resolution(tmp_path):
    df = _trips(5_000)
    s, _ = _draft(df)
    assert s["pickup"].size < 100  # coarser than the hours
    out = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(df, s).sample()["pickup"]
    assert out.str.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d").all()  # to the minute, as read
    t = pd.to_datetime(out)
    assert t.dt.minute.nunique() > 50 and t.dt.hour.nunique() == 24


def test_after_pairs_and_chains_are_drafted_and_pass_check(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 20_000
    booked = pd.Timestamp("2023-01-01") + pd.to_timedelta(
        rng.integers(0, 60 * 1440, n), unit="min")
    check_in = booked + pd.to_timedelta(rng.integers(0, 20 * 1440, n), unit="min")
    check_out = check_in + pd.to_timedelta(rng.integers(60, 5 * 1440, n), unit="min")
    df = pd.DataFrame({c: t.strftime("%Y-%m-%d %H:%M") for c, t in
                       (("booked", booked), ("check_in", check_in), ("check_out", check_out))})
    df["room"] = rng.choice(["a", "b", "c"], n)
    s, lines = _draft(df)
    assert s["booked"].size <= n // 100 and s["booked"].time.unit == "day"  # (60 days)
    assert s["check_in"].time.after.column == "booked"
    assert s["check_out"].time.after.column == "check_in"
    data, schema = tmp_path / "b.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    schema.write_text(json.dumps(s.to_dict()))
    assert main(["check", str(data), "--schema", str(schema)]) == 0
    load_schema(json.loads(schema.read_text()))


@pytest.mark.parametrize("rows,bins", [(3_000, 32), (30_000, 300), (500_000, 1000)])
def test_the_limit_is_a_bin_per_100_records_between_bins_and_1000(rows, bins):
    from gpu_dpsyn.data.draft_stamps import row_limit
    assert row_limit(rows, 32, 1000) == bins


@pytest.mark.parametrize("stamp", ["2020-09-13 21:26:40", "2020-09-13 21:26:40.250",
                                   "2020-09-13T21:26:40+09:00"])
def test_a_column_of_one_second_is_drafted(stamp):
    """Every value in one second (a table's extraction time): the draft had min == max,
    which the schema refuses, so infer-schema failed on the whole table ("'max' must come
    after 'min'"); now the range runs to the next second, and the data fits it."""
    t = pd.Series([pd.Timestamp(stamp)] * 300)
    df = pd.DataFrame({"at": t, "kind": ["a", "b", "c"] * 100})
    s, lines = _draft(df)
    col = s["at"]
    lo = pd.Timestamp(stamp).floor("s")
    assert pd.Timestamp(s.to_dict()["columns"]["at"]["min"]) == lo
    assert pd.Timestamp(s.to_dict()["columns"]["at"]["max"]) == lo + pd.Timedelta("1s")
    assert col.size == 2 and "unit second" in lines["at"]
