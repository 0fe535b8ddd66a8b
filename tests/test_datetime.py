"""The datetime column type (finding 3)."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.generate.decode import decode
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.data.schema import load_schema

NY = "America/New_York"


def _schema(**spec):
    spec = {"type": "datetime", "min": "2013-01-01", "max": "2013-12-31 23:59:59", **spec}
    return load_schema({"columns": {"d": spec}})


def _stamps(n=400, seed=0, tz=NY):
    r = np.random.default_rng(seed)
    start = pd.Timestamp("2013-01-01", tz=tz)
    secs = r.integers(0, 365 * 86400, n)
    return pd.Series(start + pd.to_timedelta(secs, unit="s"), name="d")


def test_month_bins_follow_the_local_calendar():
    s = _schema(unit="month", timezone=NY)
    assert s["d"].bins == 12
    d = _stamps()
    codes = encode(pd.DataFrame({"d": d}), s)[0]
    assert np.array_equal(codes, d.dt.month.to_numpy() - 1)
    out = decode([codes], s, seed=1)["d"]
    assert str(out.dtype) == "datetime64[ns, America/New_York]"
    # a calendar unit decodes to the bin's start: local midnight on the 1st
    assert (out.dt.day == 1).all() and (out.dt.hour == 0).all()
    assert np.array_equal(out.dt.month.to_numpy() - 1, codes)


def test_text_with_offsets_or_local_wall_time_encodes_the_same():
    s = _schema(unit="day", timezone=NY)
    d = _stamps(300, seed=3)
    aware = encode(pd.DataFrame({"d": d}), s)[0]
    as_text = d.astype(str)  # "2013-03-10 05:01:02-04:00", as CSV files hold them
    assert np.array_equal(encode(pd.DataFrame({"d": as_text}), s)[0], aware)
    wall = d.dt.tz_localize(None).dt.strftime("%Y-%m-%dT%H:%M:%S")  # local, no offset
    assert np.array_equal(encode(pd.DataFrame({"d": wall}), s)[0], aware)
    utc = d.dt.tz_convert("UTC")
    assert np.array_equal(encode(pd.DataFrame({"d": utc}), s)[0], aware)


def test_day_unit_across_daylight_saving_decodes_at_local_midnight():
    s = _schema(unit="day", timezone=NY)
    assert s["d"].bins == 365
    codes = np.arange(365, dtype=np.uint16)
    out = decode([codes], s)["d"]
    assert (out.dt.hour == 0).all() and (out.dt.minute == 0).all()
    assert out.dt.day_of_year.tolist() == list(range(1, 366))


@pytest.mark.parametrize("mode", ["uniform", "midpoint"])
def test_bin_count_decodes_inside_the_bin(mode):
    s = _schema(bins=10, timezone="UTC")
    d = _stamps(500, tz="UTC")
    codes = encode(pd.DataFrame({"d": d}), s)[0]
    out = decode([codes], s, seed=2, numeric_decode=mode)["d"]
    assert np.array_equal(encode(pd.DataFrame({"d": out}), s)[0], codes)
    assert (out.dt.nanosecond == 0).all() and (out.dt.microsecond == 0).all()  # whole seconds
    assert out.between(pd.Timestamp("2013-01-01", tz="UTC"),
                       pd.Timestamp("2013-12-31 23:59:59", tz="UTC")).all()
    if mode == "uniform":
        assert out.nunique() > 400


def test_naive_datetime_column_and_nulls():
    s = _schema(unit="hour", min="2013-01-01", max="2013-01-03 23:00", nullable=True)
    assert s["d"].bins == 72
    df = pd.DataFrame({"d": ["2013-01-01 05:30", "", "2013-01-03T23:00:00", None]}).replace(
        "", None)
    codes = encode(df, s)[0]
    assert codes.tolist() == [5, 72, 71, 72]
    out = decode([codes], s)["d"]
    assert str(out.dtype) == "datetime64[ns]" and out.isna().tolist() == [False, True] * 2
    assert out[0] == pd.Timestamp("2013-01-01 05:00")


def test_decode_on_the_backend_equals_numpy(backend):
    from gpu_dpsyn.core import rng
    s = _schema(bins=7, timezone=NY)
    codes = [np.arange(7).repeat(30).astype(np.uint8)]
    key = rng.split_key(9)
    host = decode(codes, s, seed=9)
    dev = decode(codes, s, seed=9, uniforms=lambda j, n: backend.to_numpy(
        backend.uniforms(key, n, j, rng.DECODE, 0)))
    pd.testing.assert_frame_equal(host, dev)


@pytest.mark.parametrize("values,match", [
    (["2014-01-02"], r"'d'.*1 value.*outside the schema range"),
    (["2013-05-01", "01/02/2013"], r"'d'.*not ISO 8601.*'01/02/2013'"),
    (["yesterday"], r"'d'.*not ISO 8601.*'yesterday'"),
    (["2013-03-10 02:30"], r"'d'.*do not exist in America/New_York"),
    (["2013-05-01 10:00+02:00", "2013-05-01 10:00"], r"'d'.*mixes.*offset"),
])
def test_bad_datetime_values(values, match):
    with pytest.raises(DataError, match=match):
        encode(pd.DataFrame({"d": values}), _schema(unit="day", timezone=NY))


def test_time_zone_in_the_data_but_not_in_the_schema():
    with pytest.raises(DataError, match=r"'d'.*time zone.*schema has none.*\"timezone\""):
        encode(pd.DataFrame({"d": _stamps(5)}), _schema(unit="day"))


@pytest.mark.parametrize("spec,match", [
    ({"unit": "fortnight"}, "unit"),
    ({}, r"'unit'.*'bins'.*or both"),
    ({"unit": "month", "bins": 4}, r"second, minute, hour or day"),
    ({"bins": 0}, "bins"),
    ({"unit": "day", "timezone": "Mars/Olympus"}, "time zone"),
    ({"unit": "day", "min": "soon"}, r"'min'"),
    # day and month in either order: read month-first they silently moved the range
    ({"unit": "day", "min": "01/03/2013"}, r"'min'.*ISO 8601.*'01/03/2013'"),
    ({"unit": "day", "max": "31.12.2013"}, r"'max'.*ISO 8601"),
    ({"unit": "day", "max": "Dec 31, 2013"}, r"'max'.*ISO 8601"),
    ({"unit": "day", "max": "2012-01-01"}, r"'max'.*after"),
    ({"unit": "minute"}, "too large"),
    ({"unit": "day", "min": "1500-01-01"}, r"1678-01-01"),
    ({"unit": "day", "min": "2013-01-01T00:00+01:00"}, r"offset.*\"timezone\""),
    # read off the clock: the domain (and the noise key) would change from run to run
    ({"unit": "hour", "min": "now", "max": "2030-12-31"}, r"'min'.*ISO 8601"),
    ({"unit": "day", "min": "2000-01-01", "max": "today"}, r"'max'.*ISO 8601"),
    # near the nanosecond range's ends: a zone's offset, a calendar bin's start or the
    # bin past max would leave it (tracebacks, one of them only once a date was read)
    ({"unit": "month", "min": "2000-01-01", "max": "2262-04-10", "timezone": "UTC"},
     r"'max'.*2261-12-31"),
    ({"unit": "month", "min": "1677-09-22", "max": "1700-01-01",
      "timezone": "Pacific/Kiritimati"}, r"'min'.*1678-01-01"),
    ({"unit": "month", "min": "1677-09-22", "max": "2262-04-11"}, r"'min'.*1678-01-01"),
    ({"unit": "day", "min": "2000-01-01", "max": "2262-04-11T23:47:16.854775807"},
     r"'max'.*2261-12-31"),
])
def test_bad_datetime_schema(spec, match):
    with pytest.raises(SchemaError, match=r"'d'.*" + match):
        _schema(**spec)


def test_datetime_schema_round_trips():
    for spec in ({"unit": "month", "timezone": NY}, {"bins": 12, "nullable": True},
                 {"unit": "year", "min": "2000-01-01", "max": "2020-12-31"}):
        s = _schema(**spec)
        again = load_schema(s.to_dict())
        assert again.to_dict() == s.to_dict() and again["d"].edges == s["d"].edges


def test_datetime_dtype_field():
    s = load_schema({"columns": {"d": {"type": "datetime", "min": "2013-01-01",
                                       "max": "2013-12-31", "unit": "day",
                                       "dtype": "datetime64[s]"}}})
    out = decode([np.array([0, 40], np.uint16)], s)["d"]
    assert str(out.dtype) == "datetime64[s]" and out[1] == pd.Timestamp("2013-02-10")
    with pytest.raises(SchemaError, match=r"'d'.*does not fit"):
        load_schema({"columns": {"d": {"type": "datetime", "min": "2013-01-01",
                                       "max": "2013-12-31", "unit": "day", "dtype": "int64"}}})


@pytest.mark.parametrize("on_invalid", ["repair", "error"])
def test_an_arrow_date_column_reads_as_its_dates(on_invalid):
    # pandas has no time zone accessor for Arrow's date32: a traceback
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.data.repair import repair
    schema = {"columns": {"t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                                "unit": "month", "nullable": True}}}
    days = pd.Series(pd.to_datetime(["2020-05-01", "2020-07-09", None] * 10))
    arrow = pd.DataFrame({"t": days.dt.date.astype("date32[pyarrow]")})
    s = load_schema(schema)
    want = encode(pd.DataFrame({"t": days}), s)[0]
    got = encode(arrow if on_invalid == "error" else repair(arrow, s), s)[0]
    np.testing.assert_array_equal(got, want)
    Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False, iterations=2,
                on_invalid=on_invalid).fit(arrow, schema)


def test_an_arrow_timestamp_column_clamps_to_the_nearer_bound():
    # pandas' clip on Arrow timestamps gave the lower bound for a date past the upper
    from gpu_dpsyn.data.repair import repair
    schema = load_schema({"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                            "max": "2020-12-31", "unit": "day"}}})
    for dtype in ("timestamp[us][pyarrow]", "timestamp[s, tz=UTC][pyarrow]"):
        t = pd.Series(pd.to_datetime(["2020-03-01", "9999-12-31", "1000-01-01"]).as_unit("s"))
        if "UTC" in dtype:
            t = t.dt.tz_localize("UTC")
        out = encode(repair(pd.DataFrame({"t": t.astype(dtype)}), schema), schema)[0]
        assert out.tolist() == [60, 365, 0]


def test_bins_of_whole_days_decode_to_days_spread_inside_each_bin():
    """Hire dates over five years were drafted by month (days would pass 1,000 bins), and
    99% of the release fell on the 1st of a month.  "unit" with "bins": equal bins of
    whole days, each decoded to a day inside it, evenly."""
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.schema import load_schema
    rng = np.random.default_rng(0)
    days = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 1826, 3000), unit="D")
    df = pd.DataFrame({"hired": days, "k": rng.choice(["a", "b"], 3000)})
    s = load_schema({"columns": {
        "hired": {"type": "datetime", "min": "2019-01-01", "max": "2023-12-31T23:59:59",
                  "unit": "day", "bins": 60},
        "k": {"type": "categorical", "values": ["a", "b"]}}})
    assert s["hired"].size == 60 and s.to_dict()["columns"]["hired"]["unit"] == "day"
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()["hired"]
    assert (out == out.dt.normalize()).all()  # whole days
    assert (out.dt.day == 1).mean() < 0.1 and out.dt.day.nunique() > 25


@pytest.mark.parametrize("extra,match", [
    ({"unit": "month", "bins": 12}, "second, minute, hour or day"),
    ({"unit": "day", "bins": 12, "timezone": "Europe/Berlin"}, "UTC"),
    ({"unit": "day", "bins": 12, "min": "2019-01-01T06:00"}, "start")])
def test_bins_of_whole_units_are_refused_where_units_vary(extra, match):
    from gpu_dpsyn.data.schema import load_schema
    from gpu_dpsyn.errors import SchemaError
    spec = {"type": "datetime", "min": "2019-01-01", "max": "2023-12-31T23:59:59", **extra}
    with pytest.raises(SchemaError, match=match):
        load_schema({"columns": {"t": spec}})


def test_zoned_times_to_the_second_come_out_spread_not_at_midnight():
    """Orders over a year in Europe/Berlin were drafted by day (seconds pass 1,000 bins)
    and every synthetic order came out at 00:00.  Bins of whole seconds or minutes are
    the same in any zone (offsets are whole minutes)."""
    import warnings
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.inference import infer_schema
    rng = np.random.default_rng(2)
    t = pd.Series(pd.Timestamp("2024-01-01", tz="Europe/Berlin")
                  + pd.to_timedelta(rng.integers(0, 365 * 86400, 3000), unit="s"))
    df = pd.DataFrame({"ts": t, "k": rng.choice(["a", "b"], 3000)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = infer_schema(df)
        # (since "time_of_day": the zone's months, and the hour of day beside them)
        assert s["ts"].time.unit == "month" and s.domain[:2] == (12, 24)
        out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()["ts"]
    assert out.dt.hour.nunique() > 12
    for unit in ("hour", "day"):  # a zone's hours and days need not start with UTC's
        with pytest.raises(SchemaError, match="UTC"):
            load_schema({"columns": {"t": {"type": "datetime", "min": "2024-01-01",
                                           "max": "2024-12-31T23:59:59", "unit": unit,
                                           "bins": 12, "timezone": "Asia/Kolkata"}}})
