"""A datetime column written in another layout than ISO 8601 (24.12.2016, 12/24/2016):
"format" names it; values are read in it, and the output is written in it."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode, to_schema_types
from gpu_dpsyn.data.inference import infer_schema_with_summary
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, SchemaError

SPEC = {"type": "datetime", "min": "2016-01-01", "max": "2016-12-31", "unit": "day"}


def _schema(**extra):
    return load_schema({"columns": {"d": {**SPEC, **extra},
                                    "k": {"type": "categorical", "values": ["a", "b"]}}})


def _dates(n: int, seed: int = 0) -> pd.Series:
    rng = np.random.default_rng(seed)
    return pd.Series(pd.Timestamp("2016-01-01")
                     + pd.to_timedelta(rng.integers(0, 366, n), unit="D"))


def test_values_in_the_layout_encode_as_their_iso_text_does():
    t = _dates(200)
    k = np.where(np.arange(200) % 3, "a", "b")
    laid = pd.DataFrame({"d": t.dt.strftime("%d.%m.%Y"), "k": k})
    iso = pd.DataFrame({"d": t.dt.strftime("%Y-%m-%d"), "k": k})
    got = encode(laid, _schema(format="%d.%m.%Y"))
    want = encode(iso, _schema())
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


def test_the_schema_keeps_its_format():
    s = _schema(format="%m/%d/%Y %H:%M")
    assert s["d"].to_dict()["format"] == "%m/%d/%Y %H:%M"
    assert load_schema(s.to_dict())["d"].time.format == "%m/%d/%Y %H:%M"
    assert "format" not in _schema()["d"].to_dict()


@pytest.mark.parametrize("fmt,match", [
    ("dd.mm.yyyy", "read them back"), ("%H:%M", "read them back"),
    ("%d.%m", "read them back"),
    ("%d.%m.%Y %z", "time zone"), ("%d.%m.%Y %Z", "time zone"), (7, "format")])
def test_bad_formats_are_refused(fmt, match):
    with pytest.raises(SchemaError, match=r"'d'.*" + match):
        _schema(format=fmt)


def test_other_layouts_are_invalid_values():
    df = pd.DataFrame({"d": ["24.12.2016", "2016-12-24", "12/24/2016", None],
                       "k": ["a", "b", "a", "b"]})
    s = load_schema({"columns": {"d": {**SPEC, "format": "%d.%m.%Y", "nullable": True},
                                 "k": {"type": "categorical", "values": ["a", "b"]}}})
    with pytest.raises(DataError, match=r"'d'.*written as '%d\.%m\.%Y'.*2016-12-24"):
        encode(df, s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fixed = repair(df, s)
    assert fixed["d"].notna().tolist() == [True, False, False, False]


def test_the_output_is_written_in_the_layout(tmp_path):
    t = _dates(600, seed=1)
    df = pd.DataFrame({"d": t.dt.strftime("%d/%m/%Y"),
                       "k": np.where(t.dt.month > 6, "a", "b")})
    s = _schema(format="%d/%m/%Y")
    out = Synthesizer(3.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    assert out["d"].notna().all()
    assert out["d"].str.fullmatch(r"\d\d/\d\d/2016").all()
    back = to_schema_types(out, s)  # read back as it was written
    assert back["d"].tolist() == out["d"].tolist()
    assert all(np.array_equal(a, b) for a, b in zip(encode(back, s), encode(out, s)))


def test_the_command_line_reads_and_writes_the_layout(tmp_path):
    t = _dates(400, seed=2)
    data, schema, syn = tmp_path / "t.csv", tmp_path / "s.json", tmp_path / "o.csv"
    pd.DataFrame({"d": t.dt.strftime("%d.%m.%Y"),
                  "k": np.where(t.dt.day > 15, "a", "b")}).to_csv(data, index=False)
    schema.write_text(json.dumps({"columns": {"d": {**SPEC, "format": "%d.%m.%Y"},
                                              "k": {"type": "categorical",
                                                    "values": ["a", "b"]}}}))
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(syn), "--seed", "1"]) == 0
    got = pd.read_csv(syn, dtype=str)
    assert got["d"].str.fullmatch(r"\d\d\.\d\d\.2016").all()


def _draft(values):
    df = pd.DataFrame({"d": values, "n": np.arange(len(values)) % 4})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # no lookups: "n" is filler, and a periodic "d" is a function of it
        return infer_schema_with_summary(df, lookups=False)


@pytest.mark.parametrize("fmt", ["%d.%m.%Y", "%d/%m/%Y", "%m/%d/%Y", "%Y/%m/%d",
                                 "%d-%m-%Y", "%d.%m.%Y %H:%M", "%m/%d/%Y %H:%M:%S"])
def test_a_draft_names_the_layout_its_dates_are_written_in(fmt):
    t = _dates(500, seed=3) + pd.to_timedelta(np.arange(500) % 24, unit="h")
    s, lines = _draft(t.dt.strftime(fmt).tolist())
    col = s["d"]
    assert col.kind == "datetime" and col.time.format == fmt
    line = next(x for x in lines if x.strip().startswith("d "))
    assert fmt in line


def test_day_and_month_that_read_both_ways_are_said_to():
    s, lines = _draft(["01/02/2020", "03/04/2020", "05/06/2020", "07/08/2020"] * 30)
    assert s["d"].kind == "datetime"
    line = next(x for x in lines if x.strip().startswith("d "))
    assert "ambiguous" in line and "%d/%m/%Y" in line and "%m/%d/%Y" in line


def test_dates_in_several_layouts_are_never_an_id():
    rng = np.random.default_rng(4)  # nearly all distinct: drafted an id before
    t = pd.Timestamp("1950-01-01") + pd.to_timedelta(rng.integers(0, 25000, 900), unit="D")
    layouts = np.array(["%Y-%m-%d", "%m/%d/%Y", "%d.%m.%Y", "%b %d, %Y"])[np.arange(900) % 4]
    values = [d.strftime(f) for d, f in zip(t, layouts)]
    s, lines = _draft(values)
    assert "d" not in s.names and "d" in s.ignored
    assert s.unit_id is None
    line = next(x for x in lines if x.strip().startswith("d "))
    assert "layouts" in line and "ISO 8601" in line


# -- layouts that lose what they write (review) --------------------------------------------

@pytest.mark.parametrize("extra,match", [
    ({"format": "%d.%m.%y"}, "two-digit"),
    ({"format": "%d.%m.%Y %I:%M"}, "%p"),
    ({"unit": "hour", "format": "%d.%m.%Y"}, "hour"),
    ({"unit": None, "bins": 10, "min": "2016-01-01T12:00", "format": "%d.%m.%Y"},
     r"'min'.*12:00")])
def test_a_layout_that_loses_what_it_writes_is_refused(extra, match):
    spec = {k: v for k, v in {**SPEC, **extra}.items() if v is not None}
    with pytest.raises(SchemaError, match=r"'d'.*" + match):
        load_schema({"columns": {"d": spec}})


@pytest.mark.parametrize("unit,fmt", [("month", "%m/%Y"), ("year", "%Y"),
                                      ("hour", "%m/%d/%Y %I %p"),
                                      ("minute", "%d.%m.%Y %H:%M")])
def test_a_layout_as_fine_as_the_unit_is_taken(unit, fmt):
    spec = {**SPEC, "unit": unit, "format": fmt, "max": "2016-01-20T23:59:59"}
    assert load_schema({"columns": {"d": spec}})["d"].time.format == fmt


def test_a_draft_never_takes_two_digit_years():
    births = pd.Timestamp("1950-01-01") + pd.to_timedelta(
        np.random.default_rng(8).integers(0, 18000, 600), unit="D")
    s, _ = _draft(births.strftime("%d.%m.%y").tolist())
    assert "d" not in s.names or s["d"].kind != "datetime" or "%y" not in s["d"].time.format


@pytest.mark.parametrize("fmt", ["%m/%d/%Y %I:%M %p", "%d %b %Y", "%b %d, %Y"])
def test_a_draft_reads_layouts_with_names_and_twelve_hours(fmt):
    t = _dates(400, seed=9) + pd.to_timedelta(np.arange(400) % 24, unit="h")
    s, _ = _draft(t.dt.strftime(fmt).tolist())
    assert s["d"].kind == "datetime" and s["d"].time.format == fmt


@pytest.mark.parametrize("iso", [False, True])
def test_a_few_placeholders_among_dates_are_read_as_missing(iso):
    # "00.00.0000" among birth dates made the column a list of 2,643 birth dates
    t = _dates(600, seed=10)
    values = t.dt.strftime("%Y-%m-%d" if iso else "%d.%m.%Y").tolist()
    for i in range(0, 600, 40):
        values[i] = "0000-00-00" if iso else "00.00.0000"
    s, lines = _draft(values)
    assert s["d"].kind == "datetime" and s["d"].nullable
    line = next(x for x in lines if x.strip().startswith("d "))
    assert "00" in line and "missing" in line


def test_dates_in_several_layouts_are_left_out_however_many():
    t = _dates(300, seed=11)
    layouts = np.array(["%Y-%m-%d", "%m/%d/%Y", "%d.%m.%Y"])[np.arange(300) % 3]
    s, _ = _draft([d.strftime(f) for d, f in zip(t, layouts)])
    assert "d" in s.ignored


# -- second review ------------------------------------------------------------------------

def test_the_layout_that_reads_the_most_is_chosen():
    # 300 of MM/01/YYYY (both orders read them) beside 12 with a day past 12: %d/%m/%Y
    # was chosen, its "placeholders" the real dates
    t = pd.Timestamp("2020-01-01") + pd.DateOffset(months=1) * 0
    days = [f"{m:02d}/01/{y}" for y in (2020, 2021) for m in range(1, 13)] * 12 + \
        ["03/15/2020", "02/28/2021", "11/30/2020"] * 4
    s, lines = _draft(days)
    assert s["d"].time.format == "%m/%d/%Y" and not s["d"].nullable
    line = next(x for x in lines if x.strip().startswith("d "))
    assert "ambiguous" not in line and "no date" not in line


@pytest.mark.parametrize("values", [["1.9.8", "2.0.1", "1.10.3"] * 40,  # versions
                                    ["12-34-56", "65-43-21"] * 60])     # codes
def test_text_that_is_no_date_stays_text(values):
    s, _ = _draft(values)
    assert s["d"].kind == "categorical"


def test_unpadded_iso_dates_are_one_layout():
    t = _dates(200, seed=14)
    s, _ = _draft([f"{d.year}-{d.month}-{d.day}" for d in t])
    assert s["d"].kind == "datetime" and s["d"].time.format == "%Y-%m-%d"


def test_two_digit_years_are_left_out_saying_so():
    s, lines = _draft(_dates(200, seed=15).dt.strftime("%d.%m.%y").tolist())
    assert "d" in s.ignored
    line = next(x for x in lines if x.strip().startswith("d "))
    assert "two-digit" in line and "several layouts" not in line


def _events(n: int, seed: int = 0) -> pd.Series:
    """Times in Berlin across the spring change (+01:00, then +02:00)."""
    rng = np.random.default_rng(seed)
    return pd.Series(pd.Timestamp("2024-03-20", tz="Europe/Berlin")
                     + pd.to_timedelta(rng.integers(0, 20 * 86400, n), unit="s"))


ISO_T = r"2024-0[34]-\d\dT\d\d:\d\d:\d\d\+0[12]:00"


def test_iso_text_with_a_t_is_written_back_with_it(tmp_path):
    """2024-03-20T00:01:07+01:00 came back as 2024-03-20 01:00:00+01:00: "format":
    "ISO8601" writes ISO 8601 as text with the T and the zone's offset."""
    t = _events(800)
    data, schema, syn = tmp_path / "t.csv", tmp_path / "s.json", tmp_path / "o.csv"
    pd.DataFrame({"ts": t.map(lambda x: x.isoformat()),
                  "k": np.where(t.dt.hour > 11, "a", "b")}).to_csv(data, index=False)
    schema.write_text(json.dumps({"columns": {
        "ts": {"type": "datetime", "min": "2024-03-20T00:00:00", "max": "2024-04-08T23:59:59",
               "unit": "hour", "timezone": "Europe/Berlin", "format": "ISO8601"},
        "k": {"type": "categorical", "values": ["a", "b"]}}}))
    assert main(["synthesize", str(data), "--schema", str(schema), "--epsilon", "2",
                 "--delta", "1e-9", "--out", str(syn), "--seed", "1", "--quiet"]) == 0
    got = pd.read_csv(syn, dtype=str)["ts"]
    assert got.str.fullmatch(ISO_T).all(), got.head()
    assert got.str.endswith("+02:00").any() and got.str.endswith("+01:00").any()
    s = load_schema(json.loads(schema.read_text()))
    back = to_schema_types(pd.DataFrame({"ts": got, "k": "a"}), s)
    assert all(np.array_equal(a, b) for a, b in zip(
        encode(back, s), encode(pd.DataFrame({"ts": pd.to_datetime(got, utc=True), "k": "a"}),
                                s)))


@pytest.mark.parametrize("sep,drafted", [("T", "ISO8601"), (" ", None)])
def test_a_draft_keeps_the_t_of_iso_text(sep, drafted):
    t = _events(500, seed=4).dt.tz_convert("UTC").dt.tz_localize(None)
    s, lines = _draft(t.dt.strftime(f"%Y-%m-%d{sep}%H:%M:%S").tolist())
    assert s["d"].kind == "datetime" and s["d"].time.format == drafted


@pytest.mark.parametrize("sep", ["T", " "])
def test_iso_text_to_the_minute_comes_back_to_the_minute(sep):
    """2023-01-26 09:17 came back as 2023-12-26 18:59:00 (and 2023-01-26T09:17 with its
    seconds): the draft named no layout for ISO text without seconds."""
    t = _events(500, seed=4).dt.tz_convert("UTC").dt.tz_localize(None).dt.floor("min")
    layout = f"%Y-%m-%d{sep}%H:%M"
    s, lines = _draft(t.dt.strftime(layout).tolist())
    assert s["d"].time.format == layout
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(
        pd.DataFrame({"d": t.dt.strftime(layout), "n": np.arange(500) % 4}), s).sample()
    assert out["d"].str.fullmatch(rf"20\d\d-\d\d-\d\d{sep}\d\d:\d\d").all()


@pytest.mark.parametrize("fmt", ["%d.%m.%Y %H:%M", "ISO8601"])
def test_date_parts_of_a_column_with_a_format_are_derived(fmt):
    """A derived date part of a column with a "format" failed in sample(), after the
    budget was spent: it read the part off the output's text."""
    t = _events(600, seed=5)
    text = t.map(lambda x: x.isoformat()) if fmt == "ISO8601" else t.dt.strftime(fmt)
    df = pd.DataFrame({"ts": text, "h": t.dt.hour, "k": np.where(t.dt.hour > 11, "a", "b")})
    s = load_schema({"columns": {
        "ts": {"type": "datetime", "min": "2024-03-20T00:00:00", "max": "2024-04-08T23:59:59",
               "unit": "hour", "timezone": "Europe/Berlin", "format": fmt},
        "h": {"type": "derived", "from": "ts", "op": "hour"},
        "k": {"type": "categorical", "values": ["a", "b"]}}})
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, s).sample()
    read = pd.to_datetime(out["ts"], format=fmt, utc=fmt == "ISO8601")
    hours = (read.dt.tz_convert("Europe/Berlin") if fmt == "ISO8601" else read).dt.hour
    assert out["h"].notna().all() and (out["h"] == hours).all()


def test_utc_text_with_a_z_keeps_it_and_the_format_name_takes_any_case():
    """2024-03-05T10:00:00Z came back as 2024-03-05T10:00:00+00:00; "iso8601" in lower
    case was refused as a layout that does not read back."""
    t = _events(400, seed=6).dt.tz_convert("UTC")
    s, lines = _draft(t.dt.strftime("%Y-%m-%dT%H:%M:%SZ").tolist())
    assert s["d"].time.format == "%Y-%m-%dT%H:%M:%SZ" and s["d"].time.timezone == "UTC"
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(
        pd.DataFrame({"d": t.dt.strftime("%Y-%m-%dT%H:%M:%SZ"), "n": np.arange(400) % 4}),
        s).sample()
    assert out["d"].str.fullmatch(r"2024-0[34]-\d\dT\d\d:\d\d:\d\dZ").all()
    lower = load_schema({"columns": {"d": {**SPEC, "format": "iso8601"}}})
    assert lower["d"].time.format == "ISO8601"
