"""A datetime column's output text (datetime.as_output, date_output.py), written at C speed,
against the value-by-value writing it replaced (_reference: isoformat per value, or
pandas' strftime), to the byte and in the same dtype."""
import functools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data.dtypes import text_dtype
from gpu_dpsyn.data.draft_stamps import ZULU
from gpu_dpsyn.data.encoding import to_schema_types
from gpu_dpsyn.data.schema import column_from_spec, load_schema
from gpu_dpsyn.data.types import date_output, datetime
from gpu_dpsyn.data.types.datetime import ISO

ZONES = [None, "UTC", "Europe/Berlin", "Europe/Amsterdam", "America/St_Johns",
         "Asia/Kolkata", "Pacific/Chatham", "Australia/Lord_Howe"]
FAST = [ISO, ZULU, "%d.%m.%Y", "%m/%d/%Y %I:%M:%S %p", "%Y-%m-%d %H:%M:%S.%f",
        "%Y-%m-%d %H:%M:%S", "%f%f %Y", "%c|%x|%X|%a %A %b %B %h", "%G-W%V-%u %w",
        "%j %U %W %C %e %g %y", "%D %T %F %R %r", "%n%t%%Y 100%%", "%Y年%m月%d日 %H時",
        "at %H:%M on %d/%m/%Y!"]
SLOW = ["%s %Y-%m-%d", "%-d.%m.%Y", "%k:%M %d.%m.%Y", "%Ey %d.%m.%Y", "%d.%m.%Y %"]
NS = 10 ** 9


def _reference(t: pd.Series, fmt: str, want) -> pd.Series:
    """as_output as it was: each distinct value written in Python."""
    codes, uniq = pd.factorize(t)
    text = np.asarray([x.isoformat() for x in uniq] if fmt == ISO else
                      pd.Index(uniq).strftime(fmt), dtype=object)
    return pd.Series(np.where(codes < 0, None, text[np.maximum(codes, 0)]), index=t.index,
                     dtype=object).astype(want)


def _instants(seed=0) -> np.ndarray:
    """UTC nanoseconds: random over the schema's years (whole seconds, microseconds,
    nanoseconds), every 15 minutes around daylight-saving changes (the doubled and the
    skipped hours), around zones' first standard offsets (1893, 1937: offsets with
    seconds before), and days around New Year (ISO weeks)."""
    rng = np.random.default_rng(seed)
    lo, hi = pd.Timestamp("1678-01-02").value, pd.Timestamp("2261-12-30").value
    x = rng.integers(lo, hi, 1500)
    parts = [x // NS * NS, x // 1000 * 1000, x, x // NS * NS + rng.integers(1, 1000, 1500)]
    for day in ["1893-03-31", "1916-04-30", "1937-06-30", "1945-05-24", "1969-12-31",
                "2021-03-28", "2021-10-31", "2038-03-28", "2100-10-31", "2200-03-25",
                "2261-10-30"]:
        start = pd.Timestamp(day).value - 86400 * NS
        parts.append(start + np.arange(3 * 96) * 900 * NS)
        parts.append(start + np.arange(3 * 96) * 900 * NS + 1)  # nanoseconds there
    for year in range(1680, 2261, 7):
        start = pd.Timestamp(f"{year}-12-24").value
        parts.append(start + np.arange(16) * 86400 * NS + 3600 * NS * (year % 24))
    return np.concatenate(parts)


@functools.lru_cache(maxsize=None)  # (read, never changed)
def _series(zone, seed=0) -> pd.Series:
    x = _instants(seed)
    na = np.zeros(len(x), bool)
    na[::97] = True
    t = datetime.from_epoch(x, na, SimpleNamespace(time=SimpleNamespace(timezone=zone)))
    return pd.Series(t.to_numpy() if zone is None else t.array, index=np.arange(len(x)) * 3)


def _col(fmt):
    return SimpleNamespace(time=SimpleNamespace(format=fmt,
                                                layout=None if fmt == ISO else fmt))


def _same(got: pd.Series, want: pd.Series):
    assert got.dtype == want.dtype
    assert type(got.array) is type(want.array)
    pd.testing.assert_series_equal(got, want, check_exact=True)
    assert got.isna().tolist() == want.isna().tolist()
    assert [v for v in got.dropna()] == [v for v in want.dropna()]
    if hasattr(want.array, "_pa_array"):
        assert got.array._pa_array.type == want.array._pa_array.type


@pytest.mark.parametrize("zone,fmt", [(z, f) for f in FAST for z in ZONES] +
                         [(z, f) for f in SLOW for z in (None, "Europe/Berlin")])
def test_the_text_is_what_python_writes(zone, fmt):
    t = _series(zone)
    _same(datetime.as_output(t, _col(fmt), text_dtype()), _reference(t, fmt, text_dtype()))


@pytest.mark.parametrize("want", [object, "string", "string[pyarrow]", "str",
                                  "large_string[pyarrow]", "category"])
@pytest.mark.parametrize("zone", [None, "Europe/Berlin"])
def test_every_output_dtype_gets_the_same_values(want, zone):
    t = _series(zone, seed=1).iloc[:2000]
    for fmt in (ISO, "%d.%m.%Y %H:%M:%S"):
        _same(datetime.as_output(t, _col(fmt), want), _reference(t, fmt, want))


def test_the_codes_written_here_and_the_rest_value_by_value(monkeypatch):
    assert all(date_output.plan(f) is not None for f in FAST if f != ISO)
    assert date_output.plan("%f%f %Y") == ["f", "f", b" ", "Y"]
    assert date_output.plan("%D%%") == ["m", b"/", "d", b"/", "y", b"%"]
    assert all(date_output.plan(f) is None for f in SLOW)
    # another locale's words: value by value; digits alike in every locale
    monkeypatch.setattr(date_output.locale, "setlocale", lambda *a: "de_DE.UTF-8")
    assert date_output.plan("%d %b %Y") is None and date_output.plan("%c") is None
    assert date_output.plan("%d.%m.%Y %H:%M") is not None


def test_an_empty_column():
    for zone in (None, "Europe/Berlin"):
        t = _series(zone).iloc[:0]
        for fmt in (ISO, "%d.%m.%Y"):
            _same(datetime.as_output(t, _col(fmt), text_dtype()),
                  _reference(t, fmt, text_dtype()))


@pytest.mark.parametrize("fmt", [ISO, "%d.%m.%Y", "%s"])
def test_a_column_of_missing_values_stays_missing(fmt):
    """The value-by-value writing took text[0] of no text (IndexError) where every value
    was missing."""
    for zone in (None, "Europe/Berlin"):
        t = pd.Series(pd.NaT, index=[5, 6], dtype=_series(zone).dtype)
        _same(datetime.as_output(t, _col(fmt), text_dtype()),
              pd.Series([None, None], index=[5, 6], dtype=object).astype(text_dtype()))


def test_a_table_whose_formatted_dates_are_all_missing_gets_its_types():
    s = load_schema({"columns": {
        "d": {"type": "datetime", "min": "2016-01-01", "max": "2016-12-31", "unit": "day",
              "nullable": True, "format": "%d.%m.%Y"},
        "k": {"type": "categorical", "values": ["a", "b"]}}})
    out = to_schema_types(pd.DataFrame({"d": [None, None], "k": ["a", "b"]}), s)
    assert out["d"].isna().all() and out["d"].dtype == text_dtype()


def test_a_schema_column_writes_as_before():
    """The real call: decoded values of a column with a zone and a format."""
    for spec in ({"min": "2021-03-27", "max": "2021-11-01", "unit": "second", "bins": 500,
                  "timezone": "Europe/Berlin", "format": "ISO8601"},
                 {"min": "1901-01-01T00:00:00.5", "max": "2200-01-01", "bins": 3000,
                  "timezone": "Europe/Amsterdam", "format": "ISO8601"},
                 {"min": "2020-01-01", "max": "2020-12-31", "unit": "second", "bins": 99,
                  "timezone": "UTC", "format": ZULU},
                 {"min": "1700-01-01", "max": "2250-12-31", "bins": 4000,
                  "format": "%d.%m.%Y %H:%M:%S"}):
        col = column_from_spec("d", {"type": "datetime", "nullable": True, **spec})
        codes = np.random.default_rng(2).integers(0, len(col.edges), 5000)
        codes[codes == len(col.edges) - 1] = col.null_code
        x = datetime.draw(col, codes, np.random.default_rng(3).random(5000), False)
        t = datetime.from_epoch(x, codes == col.null_code, col)
        _same(datetime.as_output(t, col, text_dtype()),
              _reference(t, col.time.format, text_dtype()))
