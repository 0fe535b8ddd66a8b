"""Periods (pandas' Period dtype, or a Parquet column pandas stored from one: "2021-03" as
a month) under a datetime column read as their first instant, as the text "2021-03"
reads; under a numeric column they are refused by their dtype before anything is spent.
Before, each period was an invalid value: every row dropped (or the column missing in
the output) without a word."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError

N = 120
MONTHS = pd.period_range("2021-01", periods=12, freq="M")
DATES = {"type": "datetime", "min": "2021-01-01", "max": "2021-12-31", "unit": "month"}
KEEP = {"type": "categorical", "values": [0, 1, 2]}


def _table(freq="M"):
    r = np.random.default_rng(0)
    m = pd.period_range("2021-01-01", periods=12, freq=freq)[r.integers(0, 12, N)]
    return pd.DataFrame({"m": m, "k": r.integers(0, 3, N)})


@pytest.mark.parametrize("freq", ["M", "D", "h"])
@pytest.mark.parametrize("lenient", [True, False])
def test_periods_under_a_datetime_column_read_as_their_first_instant(freq, lenient):
    s = load_schema({"columns": {"m": DATES, "k": KEEP}})
    df = _table(freq)
    text = df.assign(m=df["m"].dt.start_time.dt.strftime("%Y-%m-%d %H:%M"))
    read = (lambda t: repair(t, s)) if lenient else (lambda t: t)
    assert len(read(df)) == N
    for a, b in zip(encode(read(df), s), encode(read(text), s)):
        np.testing.assert_array_equal(a, b)


def test_a_column_of_periods_and_one_of_period_objects_read_alike():
    """Row-local: one record of text makes the column one of objects; each period is
    still read as its first instant (the rest as before)."""
    s = load_schema({"columns": {"m": {**DATES, "nullable": True}, "k": KEEP}})
    df = _table()
    more = pd.concat([df, pd.DataFrame({"m": pd.Series(["x"], dtype=object), "k": [1]})],
                     ignore_index=True)
    a, b = encode(repair(df, s), s), encode(repair(more, s), s)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(y[:N], x)


def test_a_fit_of_periods_keeps_its_months(monkeypatch):
    from gpu_dpsyn import Synthesizer
    df = _table()
    out = Synthesizer(1e4, 1e-9, seed=0, progress=False, backend="cpu").fit(
        df, {"columns": {"m": DATES, "k": KEEP}}).sample(N)
    assert out["m"].notna().all()
    got = out["m"].dt.month.value_counts().sort_index()
    want = df["m"].dt.month.value_counts().sort_index()
    assert (got.index == want.index).all() and (abs(got - want) <= 3).all()


def test_periods_under_a_numeric_column_are_refused_before_any_charge(monkeypatch):
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.privacy import accountant
    spent, charge = [], accountant.Accountant.charge
    monkeypatch.setattr(accountant.Accountant, "charge",
                        lambda self, *a, **k: spent.append(a) or charge(self, *a, **k))
    schema = {"columns": {"m": {"type": "numeric", "min": 0, "max": 10 ** 6}, "k": KEEP}}
    with pytest.raises(DataError, match=r"column 'm' .*period\[M\].*datetime") as e:
        Synthesizer(1.0, 1e-9, seed=0, progress=False, backend="cpu").fit(_table(), schema)
    assert "\n" not in str(e.value) and not spent


def test_a_parquet_column_of_periods(tmp_path):
    """pandas stores a period column as int64 (its ordinals) marked "pandas.period": the
    reader had refused it under a datetime column as numbers, and read the ordinals (612
    for 2021-01) under a numeric one."""
    p = tmp_path / "t.parquet"
    _table().to_parquet(p)
    dates = load_schema({"columns": {"m": DATES, "k": KEEP}})
    df = read_table(p, schema=dates)
    assert len(repair(df, dates)) == N
    numbers = load_schema({"columns": {"m": {"type": "numeric", "min": 0, "max": 10 ** 6},
                                       "k": KEEP}})
    with pytest.raises(DataError, match=r"column 'm' .*period.*datetime") as e:
        read_table(p, schema=numbers)
    assert "\n" not in str(e.value)


def test_a_period_column_marked_in_the_file_metadata_alone(tmp_path):
    """A process that has not loaded pandas' Arrow extensions sees the ordinals as int64,
    the mark in the field's metadata."""
    pa = pytest.importorskip("pyarrow")
    from gpu_dpsyn.data import parquet_types
    marked = pa.schema([pa.field("m", pa.int64(), metadata={
        b"ARROW:extension:name": b"pandas.period"}), pa.field("k", pa.int64())])
    numbers = load_schema({"columns": {"m": {"type": "numeric", "min": 0, "max": 9},
                                       "k": KEEP}})
    with pytest.raises(DataError, match=r"int64 periods .*declare it datetime"):
        parquet_types.check(tmp_path / "t.parquet", numbers, fields=marked)
    assert parquet_types.check(tmp_path / "t.parquet", load_schema(
        {"columns": {"m": DATES, "k": KEEP}}), fields=marked) == []


def test_a_column_of_text_is_not_walked_value_by_value_for_periods():
    # each value of an object column was tested in Python (isinstance), on every read of
    # a datetime column: test_inference's draft of text columns grew 24,000 calls with
    # 6,000 more rows
    import sys
    from gpu_dpsyn.data.types.periods import as_times

    def calls(s):
        count = [0]

        def tally(frame, event, arg):
            count[0] += event in ("call", "c_call")
        sys.setprofile(tally)
        try:
            out = as_times(s)
        finally:
            sys.setprofile(None)
        return count[0], out
    days = ["2021-03-01", "2021-03-02", None]
    small, large = (calls(pd.Series(days * n, dtype=object)) for n in (1_000, 10_000))
    assert large[0] - small[0] < 50 and large[1] is not None
    mixed = pd.Series(days * 3 + [pd.Period("2021-04", "M")], dtype=object)
    assert as_times(mixed).iloc[-1] == pd.Timestamp("2021-04-01")  # (still read)
    assert as_times(mixed).iloc[0] == "2021-03-01"
