"""The row-local rule for values the schema does not allow (data/repair.py): by default no
refusal, warning or count may depend on one record's values."""
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.data.preflight import findings
from gpu_dpsyn.data.repair import repair
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, ParameterError, SchemaError

SCHEMA = {"columns": {
    "n": {"type": "numeric", "integer": True, "min": 0, "max": 10, "bins": 5},
    "x": {"type": "numeric", "min": -1, "max": 1, "bins": 4, "fallback": 0.5},
    "k": {"type": "categorical", "values": ["a", "b", "c"]},
    "m": {"type": "categorical", "values": ["p", "q"], "nullable": True},
    "f": {"type": "categorical", "values": ["u", "v", "other"], "fallback": "other"},
    "t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "month"}}}
# values a record may hold that the schema does not allow, per column
BAD = {"n": [99, -5, "abc", True, 3.6, float("inf"), [1, 2], None, 2 + 1j,
             10 ** 400, -10 ** 400, "1" + "0" * 400],  # past float64: no float() takes them
       "x": [7.5, "no", None, float("-inf"), False, {"a": 1}],
       "k": ["z", None, 5, ["a"], "", "\ud800"],  # a lone surrogate: no UTF-8 for it
       "m": ["zz", 1.5, ("p",)],
       "f": ["w", None, 0],
       "t": ["not a date", "2031-01-01", "1999-05-05", None, 12, "2020-03-01T10:00+02:00"]}


def table(n=300, seed=0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    return pd.DataFrame({
        "n": r.integers(0, 11, n), "x": r.uniform(-1, 1, n),
        "k": r.choice(["a", "b", "c"], n), "m": r.choice(["p", "q"], n),
        "f": r.choice(["u", "v"], n),
        "t": pd.date_range("2020-01-01", periods=n, freq="D").astype(str)}).astype(object)


def with_record(df, **values) -> pd.DataFrame:
    """df and one more record: a valid one's values, with `values` put in."""
    row = df.iloc[[0]].copy()
    for k, v in values.items():
        row[k] = pd.Series([v], index=row.index, dtype=object)
    return pd.concat([df, row], ignore_index=True)


def _syn(**kw):
    return Synthesizer(1.0, 1e-9, seed=3, backend="cpu", progress=False, iterations=3,
                       adaptive_rounds=0, **kw)


# -- the rule, value by value, against what it says ---------------------------------------
def test_numbers_clamp_round_or_go_missing():
    s = load_schema(SCHEMA)
    df = table(10)
    df["n"] = [99, -5, 3.6, 3.4, float("inf"), "7", "abc", True, 4, 2]
    df["x"] = [7.5, -3, 0.25, "no", None, float("-inf"), 0.0, 1, -1, "0.5"]
    out = repair(df, s)
    # "abc" is no number: n is not nullable and has no fallback, its row goes; True is 1
    # (as pandas casts a column of numbers that one boolean joins)
    kept = [0, 1, 2, 3, 4, 5, 7, 8, 9]
    assert out["n"].tolist() == [10, 0, 4, 3, 10, 7, 1, 4, 2]
    # x: its fallback 0.5 for what is no number or missing; the rest clamps to [-1, 1]
    assert [float(v) for v in out["x"]] == [1, -1, 0.25, 0.5, 0.5, -1, 1, -1, 0.5]
    assert out["k"].tolist() == df["k"].iloc[kept].tolist()
    encode(out, s)  # what it gives is always allowed
    # whole numbers past float64's range clamp like any number past a bound
    df = table(3)
    df["n"] = [10 ** 400, -10 ** 400, "-" + "9" * 400]
    assert repair(df, s)["n"].tolist() == [10, 0, 0]


def test_categories_go_missing_to_the_fallback_or_drop_the_row():
    s = load_schema(SCHEMA)
    df = table(6)
    df["k"] = ["a", "z", None, "b", "c", "a"]
    df["m"] = ["p", "zz", "q", None, "p", 3]
    df["f"] = ["u", "v", "w", None, "u", "v"]
    out = repair(df, s)
    assert out["k"].tolist() == ["a", "b", "c", "a"]  # rows 1 and 2 dropped
    assert out["m"].tolist()[:1] == ["p"] and pd.isna(out["m"].iloc[1]) and \
        pd.isna(out["m"].iloc[3])  # unlisted -> missing in a nullable column
    assert out["f"].tolist() == ["u", "other", "u", "v"]


def test_datetimes_clamp_or_go():
    s = load_schema(SCHEMA)
    df = table(5)
    df["t"] = ["2021-06-01", "1999-01-01", "garbage", "2020-03-01T10:00+02:00", "2020-02-02"]
    out = repair(df, s)
    assert [str(v) for v in out["t"]] == ["2020-12-31 00:00:00", "2020-01-01 00:00:00",
                                          "2020-03-01 08:00:00", "2020-02-02 00:00:00"]


def test_missing_ids_drop_their_rows_and_derived_columns_follow_their_source():
    schema = {"columns": {"pid": {"type": "id"},
                          "n": {"type": "numeric", "integer": True, "min": 0, "max": 10},
                          "half": {"type": "derived", "from": "n", "op": "floordiv", "by": 2}}}
    df = pd.DataFrame({"pid": [1, None, 3, 4], "n": [4, 5, 99, 7], "half": [2, 0, 0, 0]})
    out = repair(df, load_schema(schema))
    assert out["pid"].tolist() == [1, 3, 4]
    assert out["n"].tolist() == [4, 10, 7] and out["half"].tolist() == [2, 5, 3]


def test_writing_into_the_repaired_table_leaves_the_input_alone():
    # derived columns made: the other columns are shared with the input, never written
    # through to it (a frame of the input's raw arrays would have been)
    schema = load_schema({"columns": {
        "n": {"type": "numeric", "integer": True, "min": 0, "max": 100},
        "half": {"type": "derived", "from": "n", "op": "floordiv", "by": 2}}})
    df = pd.DataFrame({"n": [4, 6, 8], "half": [2, 3, 4]})
    df.attrs["source"] = "survey"
    out = repair(df, schema)
    out.loc[0, "n"] = 100
    assert df["n"].tolist() == [4, 6, 8] and out.attrs == {"source": "survey"}


def test_support_values_at_the_range_ends_repair_alike_through_the_table(monkeypatch):
    # repair's support check gathered from a table over [min, max] (core.lookup) against
    # the search a value: values at both ends, past them (clamped), off the support, and
    # missing, in a column longer than its range
    from gpu_dpsyn.core import lookup
    schema = load_schema({"columns": {"v": {
        "type": "numeric", "integer": True, "min": -6, "max": 12, "nullable": True,
        "support": [-6, -3, 0, 4, 5, 11]}}})  # in at the low end, not the high
    r = np.random.default_rng(8)
    vals = np.concatenate([[-6, 12, -7, 13, -5, 11, 4], r.integers(-9, 16, 400)])
    missing = np.arange(len(vals)) >= 7
    missing &= r.random(len(vals)) < 0.05
    df = pd.DataFrame({"v": pd.array(np.where(missing, None, vals), dtype="Int64")})
    got, seen = repair(df, schema), findings(df, schema)
    monkeypatch.setattr(lookup, "TABLE_MAX", 0)
    pd.testing.assert_series_equal(got["v"], repair(df, schema)["v"])
    assert seen == findings(df, schema)
    head = got["v"].iloc[:7]
    assert head.iloc[[0, 2, 5, 6]].tolist() == [-6, -6, 11, 4]
    assert head.iloc[[1, 3, 4]].isna().all()


def test_a_valid_table_is_returned_as_it_is():
    df = table(50).infer_objects()  # numbers as numbers
    assert repair(df, load_schema(SCHEMA)) is df


# -- neighbours stay neighbours --------------------------------------------------------
@pytest.mark.parametrize("col", sorted(BAD))
def test_one_more_record_changes_the_repaired_table_by_at_most_that_record(col):
    s = load_schema(SCHEMA)
    df = table(40, seed=1)
    base = repair(df, s)
    for v in BAD[col]:
        out = repair(with_record(df, **{col: v}), s)
        assert len(out) - len(base) in (0, 1)
        # what is measured: the codes of every other record are the same
        for a, b in zip(encode(out, s), encode(base, s)):
            np.testing.assert_array_equal(a[:len(b)], b)


def test_fuzzed_tables_always_encode_after_repair():
    s = load_schema(SCHEMA)
    r = np.random.default_rng(7)
    for trial in range(20):
        df = table(30, seed=trial)
        for col, bad in BAD.items():
            for i in r.choice(30, 5, replace=False):
                df.at[int(i), col] = bad[r.integers(len(bad))]
        out = repair(df, s)
        encode(out, s, allow_empty=True)
        assert len(out) <= len(df)


def test_fit_neither_refuses_nor_warns_differently_on_a_neighbour_with_a_bad_record():
    df = table(200)
    runs = []
    for t in [df] + [with_record(df, **{c: v}) for c, vals in BAD.items() for v in vals[:2]]:
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            syn = _syn().fit(t, SCHEMA)
        runs.append((sorted(str(x.message) for x in w), syn.ledger))
    assert all(r == runs[0] for r in runs)  # same warnings, same charges


def test_an_empty_table_is_fitted_by_default_and_refused_when_strict():
    empty = table(5).iloc[:0]
    out = _syn().fit(empty, SCHEMA).sample(20)
    assert len(out) == 20
    with pytest.raises(DataError, match="empty"):
        _syn(on_invalid="error").fit(empty, SCHEMA)


def test_strict_mode_refuses_before_any_charge_naming_the_value():
    syn = _syn(on_invalid="error")
    with pytest.raises(DataError, match="'k' has values outside the schema: 'z'"):
        syn.fit(with_record(table(50), k="z"), SCHEMA)
    assert syn.ledger == []
    with pytest.raises(ParameterError, match="on_invalid"):
        _syn(on_invalid="clamp")


# -- the schema's fallback -----------------------------------------------------------------
@pytest.mark.parametrize("spec, message", [
    ({"type": "categorical", "values": ["a"], "fallback": "b"}, "not one of its 'values'"),
    ({"type": "numeric", "min": 0, "max": 1, "fallback": 2}, "not a value the column"),
    ({"type": "numeric", "min": 0, "max": 9, "integer": True, "fallback": 2.5},
     "not a value the column"),
    ({"type": "numeric", "min": 0, "max": 9, "integer": True, "support": [0, 2, 4, 6, 8],
      "fallback": 3}, r"integer, support \(a list of 5 values\)"),  # support unnamed
    ({"type": "numeric", "min": 0, "max": 1, "fallback": True}, "fallback"),
    ({"type": "datetime", "min": "2020-01-01", "max": "2021-01-01", "unit": "day",
      "fallback": "2020-05-05"}, "fallback"),
])
def test_a_fallback_the_column_cannot_take_is_refused(spec, message):
    with pytest.raises(SchemaError, match=message):
        load_schema({"columns": {"c": spec}})


def test_the_fallback_is_kept_when_the_schema_is_written():
    s = load_schema(SCHEMA)
    assert load_schema(s.to_dict())["f"].fallback == "other"
    assert s.to_dict()["columns"]["x"]["fallback"] == 0.5


# -- the curator's preflight -------------------------------------------------------------
def test_findings_count_what_the_rule_changes():
    df = table(20)
    df.loc[[1, 2], "n"] = [50, "abc"]
    df.loc[[3, 4, 5], "k"] = ["zz", None, "a"]
    got = {(c, w.split(":")[0]): k for c, w, k, _ in findings(df, load_schema(SCHEMA))}
    assert got == {("n", "outside the range (or a fraction in an integer column)"): 1,
                   ("n", "not allowed by the schema"): 1, ("k", "not allowed by the schema"): 1,
                   ("k", "missing but the column is not nullable"): 1}


def test_check_command_lists_the_findings_and_says_they_are_not_private(tmp_path, capsys):
    import json
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    good, bad = tmp_path / "good.csv", tmp_path / "bad.csv"
    table(30).to_csv(good, index=False)
    with_record(table(30), n=99).to_csv(bad, index=False)
    assert main(["check", str(good), "--schema", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out  # the counts' file says they are private too
    assert out.startswith("NOT private") and "every value" in out
    assert main(["check", str(bad), "--schema", str(tmp_path / "s.json")]) == 1
    out = capsys.readouterr()
    assert out.out.startswith("NOT private") and "n: 1 value outside the range" in out.out


def test_check_reads_a_directory_or_glob_of_parts_as_synthesize_workers_does(tmp_path,
                                                                           capsys):
    """synthesize --workers takes a directory (or glob) of parts; check refused it as
    "a directory".  Its findings are those of the parts together."""
    import json
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    d = tmp_path / "parts"
    d.mkdir()
    table(30).to_csv(d / "a.csv", index=False)
    with_record(table(30), n=99).to_csv(d / "b.csv", index=False)
    (d / "_SUCCESS").write_text("")  # left out, as the Dask reader leaves it out
    for given in (d, d / "*.csv"):
        assert main(["check", str(given), "--schema", str(tmp_path / "s.json")]) == 1
        out = capsys.readouterr().out
        assert out.startswith("NOT private") and "n: 1 value outside the range" in out
    with_record(table(30), n=99).to_parquet(d / "c.parquet")
    assert main(["check", str(d), "--schema", str(tmp_path / "s.json")]) == 2
    assert "mixes CSV and Parquet" in capsys.readouterr().err


def test_datetime_objects_and_local_times_that_do_not_exist():
    import datetime as dt
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                       "max": "2020-12-31", "unit": "day",
                                       "timezone": "Europe/Berlin", "nullable": True}}})
    v = [dt.datetime(2020, 3, 29, 2, 30),  # skipped by the daylight-saving change: invalid
         dt.datetime(2020, 5, 1, tzinfo=dt.timezone.utc), pd.Timestamp("2021-05-05"), 5,
         "2020-06-01", None, np.datetime64("2019-01-01")]
    out = repair(pd.DataFrame({"t": pd.Series(v, dtype=object)}), s)
    want = [None, "2020-05-01 02:00:00+02:00", "2020-12-31 00:00:00+01:00", None,
            "2020-06-01 00:00:00+02:00", None, "2020-01-01 00:00:00+01:00"]
    assert [None if pd.isna(x) else str(x) for x in out["t"]] == want
    encode(out, s)


# -- an independent review's cases: one record may neither refuse nor re-read the others
def _neighbours_fit_alike(base, extra, schema, first: bool = False):
    s = load_schema(schema)
    extra = pd.DataFrame({k: pd.Series([v], dtype=object) for k, v in extra.items()})
    more = pd.concat([extra, base] if first else [base, extra], ignore_index=True)
    a, b = encode(repair(base, s), s), encode(repair(more, s), s)
    for x, y in zip(a, b):  # every record of base is read as before
        kept = y[1:] if first and len(y) == len(x) + 1 else y[:len(x)]
        np.testing.assert_array_equal(kept, x)
    for t in (base, more):
        _syn().fit(t, schema)


@pytest.mark.parametrize("value", ["0202-05-01", "3020-01-01", "2020-05-01T10:00:00+02",
                                   np.datetime64("0001-01-01"), "2020-05-01T10:00+0200 "])
def test_dates_past_pandas_range_and_short_offsets(value):
    d = pd.date_range("2020-01-05", periods=40, freq="5D").strftime("%Y-%m-%d")
    schema = {"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                "max": "2020-12-31", "unit": "month"}}}
    _neighbours_fit_alike(pd.DataFrame({"t": d}), {"t": value}, schema)


@pytest.mark.parametrize("value", ["2020-05-01T10:00:00+02:00",
                                   pd.Timestamp("2020-05-01", tz="UTC")])
def test_a_zoned_column_of_datetime_objects_and_another_zone(value):
    d = pd.date_range("2020-01-05", periods=40, freq="5D").tz_localize("America/New_York")
    schema = {"columns": {"z": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                                "unit": "month", "timezone": "America/New_York"}}}
    _neighbours_fit_alike(pd.DataFrame({"z": pd.Series(list(d), dtype=object)}),
                          {"z": value}, schema)


def test_one_and_true_are_read_apart_whatever_comes_first():
    # pandas' factorize groups 1 with True and keeps the first: a leading 1 made every
    # True missing (or refused)
    schema = {"columns": {"b": {"type": "categorical", "values": [False, True],
                                "nullable": True}}}
    base = pd.DataFrame({"b": [True, False, True, True]}, dtype=object)
    _neighbours_fit_alike(base, {"b": 1}, schema, first=True)
    strict = {"columns": {"b": {"type": "categorical", "values": [False, True]},
                          "n": {"type": "numeric", "integer": True, "min": 0, "max": 10}}}
    base = pd.DataFrame({"b": [1] + [True, False] * 10, "n": [3] * 21}, dtype=object)
    _neighbours_fit_alike(base, {"b": True, "n": "abc"}, strict, first=True)


@pytest.mark.parametrize("column, extra", [
    (pd.Series(np.arange(30) % 10), pd.NaT),
    (pd.Series([None] * 20, dtype="boolean"), True),
    (pd.Series([None] * 20, dtype="boolean"), None)])
def test_missing_values_pandas_calls_missing_but_are_no_numbers(column, extra):
    schema = {"columns": {"x": {"type": "numeric", "min": 0, "max": 10, "nullable": True}}}
    _neighbours_fit_alike(pd.DataFrame({"x": column}), {"x": extra}, schema)


@pytest.mark.parametrize("value", [bytearray(b"a"), __import__("decimal").Decimal("sNaN")])
def test_values_pandas_cannot_hash_or_test(value):
    schema = {"columns": {"k": {"type": "categorical", "values": ["a", "b"],
                                "nullable": True}}}
    _neighbours_fit_alike(pd.DataFrame({"k": ["a", "b"] * 15}), {"k": value}, schema)


@pytest.mark.parametrize("odd", [10 ** 400, "1" + "0" * 5000, {"a": 1}])
def test_one_record_does_not_change_how_the_others_are_read(odd):
    # the column read value by value once one value stops pandas' whole-column read: the
    # others must come out as the whole-column read gives them (a Fraction, a Timestamp
    # or a Timedelta read as numbers beside 10**400, as missing alone)
    from fractions import Fraction
    s = load_schema({"columns": {"n": {"type": "numeric", "min": -1e20, "max": 1e20,
                                       "nullable": True}}})
    others = [Fraction(1, 2), pd.Timestamp("2020-01-01"), pd.Timedelta("5s"), 3, "7", 2.5,
              "x", None]
    base = repair(pd.DataFrame({"n": pd.Series(others, dtype=object)}), s)
    more = repair(pd.DataFrame({"n": pd.Series(others + [odd], dtype=object)}), s)
    assert more["n"].iloc[:len(others)].tolist() == base["n"].tolist() or \
        pd.Series(more["n"].iloc[:len(others)]).equals(pd.Series(base["n"]))


class _NoText:
    def __str__(self):
        raise RuntimeError("no text form")

    __repr__ = __str__


class _NoHash:
    __hash__ = None


def test_an_id_column_that_is_not_the_individual_s_is_never_read():
    # encode checked every schema column for list cells: a list in a record id column
    # that nothing reads refused the fit and showed the value and its row
    schema = {"columns": {"c": {"type": "categorical", "values": ["a", "b"]},
                          "pid": {"type": "id"}, "rid": {"type": "id"}},
              "individual_id": "pid", "max_records_per_individual": 2}
    base = pd.DataFrame({"c": ["a", "b"] * 20, "pid": np.arange(40) // 2,
                         "rid": np.arange(40)})
    for odd in ([123, 456], (1, 2), np.arange(3), _NoHash(), slice(1)):
        _neighbours_fit_alike(base, {"c": "a", "pid": 99, "rid": odd}, schema)


@pytest.mark.parametrize("odd", [slice(1), _NoHash(), pd.Series([1, 2]), [7, 8]])
def test_an_individual_id_that_cannot_be_hashed_names_no_individual(odd):
    schema = {"columns": {"c": {"type": "categorical", "values": ["a", "b"]},
                          "pid": {"type": "id"}},
              "individual_id": "pid", "max_records_per_individual": 2}
    base = pd.DataFrame({"c": ["a", "b"] * 20, "pid": np.arange(40) // 2})
    _neighbours_fit_alike(base, {"c": "b", "pid": odd}, schema)


@pytest.mark.parametrize("odd", [np.timedelta64(5, "D"), np.datetime64("2020-01-01"),
                                 pd.Period("2020-01", "M"), _NoText()])
def test_values_that_are_no_number_in_a_numeric_column(odd):
    schema = {"columns": {"k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}}
    _neighbours_fit_alike(pd.DataFrame({"k": pd.Series([1, 2, 3] * 10, dtype=object)}),
                          {"k": odd}, schema)


def test_a_column_of_periods_reads_as_one_of_period_objects():
    # a Period column was read as its ordinals; one record of text made it a column of
    # objects, and every Period became missing.  Under a datetime column each reads as its
    # start (a numeric one refuses the period dtype: test_periods)
    schema = {"columns": {"k": {"type": "datetime", "min": "2020-01-01",
                                "max": "2020-12-31", "unit": "day", "nullable": True}}}
    base = pd.DataFrame({"k": pd.period_range("2020-01-01", periods=30, freq="D")})
    _neighbours_fit_alike(base, {"k": "x"}, schema)


@pytest.mark.parametrize("odd", ["\udcff", _NoText(), _NoHash()])
def test_a_datetime_or_categorical_value_without_text_or_hash(odd):
    dates = {"columns": {"t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                               "unit": "month"}}}
    d = pd.date_range("2020-01-05", periods=40, freq="5D").strftime("%Y-%m-%d")
    _neighbours_fit_alike(pd.DataFrame({"t": pd.Series(d, dtype=object)}), {"t": odd}, dates)
    cats = {"columns": {"k": {"type": "categorical", "values": ["a", "b"]}}}
    _neighbours_fit_alike(pd.DataFrame({"k": ["a", "b"] * 15}), {"k": odd}, cats)


class _NoAttributes:
    """An object whose attribute lookup raises (a lazy proxy whose target is gone, say):
    pandas and the readers ask a value for isoformat, __len__, tzinfo..."""
    def __getattr__(self, name):
        raise RuntimeError(f"no attribute {name}")


class _SomeAttributes:
    """Raises only for the names a reader asks for (AttributeError for the rest)."""
    def __getattr__(self, name):
        if name in ("isoformat", "__len__", "tzinfo", "__array__", "dtype"):
            raise RuntimeError(f"gone {name}")
        raise AttributeError(name)


class _RaisingProperty:
    @property
    def tzinfo(self):
        raise RuntimeError("gone")


@pytest.mark.parametrize("odd", [_NoAttributes, _SomeAttributes, _RaisingProperty])
@pytest.mark.parametrize("kind", ["numeric", "datetime", "categorical", "id"])
def test_a_value_whose_attributes_raise_is_no_value(kind, odd):
    # it crashed a datetime column (isoformat) and a numeric one (__len__)
    schema = {"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                "max": "2020-12-31", "unit": "month", "nullable": True},
                          "x": {"type": "numeric", "min": 0, "max": 9, "nullable": True},
                          "c": {"type": "categorical", "values": ["a", "b"],
                                "nullable": True},
                          "pid": {"type": "id"}},
              "individual_id": "pid", "max_records_per_individual": 2}
    d = pd.date_range("2020-01-05", periods=40, freq="5D").strftime("%Y-%m-%d")
    base = pd.DataFrame({"t": pd.Series(d, dtype=object),
                         "x": pd.Series([1.0, 2.0] * 20, dtype=object),
                         "c": ["a", "b"] * 20, "pid": pd.Series(np.arange(40), dtype=object)})
    row = {"t": "2020-03-01", "x": 3.0, "c": "a", "pid": 99}
    row[{"numeric": "x", "datetime": "t", "categorical": "c", "id": "pid"}[kind]] = odd()
    _neighbours_fit_alike(base, row, schema)


@pytest.mark.parametrize("column, spec, odd, message", [
    # pandas reads "" as NaN: the value was binned as if it were a number
    ("f", {"type": "numeric", "min": 0, "max": 100, "bins": 10}, "", "non-numeric values: ''"),
    ("f", {"type": "numeric", "integer": True, "min": 0, "max": 100}, "",
     "non-numeric values: ''"),
    ("f", {"type": "numeric", "min": 0, "max": 100}, 10 ** 400, "past float64"),
    ("f", {"type": "numeric", "min": 0, "max": 100}, __import__("decimal").Decimal("sNaN"),
     "signaling NaN"),
    ("f", {"type": "numeric", "min": 0, "max": 100}, _NoHash(), "_NoHash"),
    ("t", {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "month"}, "",
     "not dates"),
    ("t", {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "month"}, "NaN",
     "not dates"),
    ("t", {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "month"},
     np.int64(-2 ** 63), "not dates"),
])
def test_strict_mode_refuses_what_is_no_value_of_the_column(column, spec, odd, message):
    first = pd.Timestamp("2020-06-15") if column == "t" else "5"
    df = pd.DataFrame({column: pd.Series([first] * 30 + [odd], dtype=object)})
    syn = _syn(on_invalid="error")
    with pytest.raises(DataError, match=message):
        syn.fit(df, {"columns": {column: spec}})
    assert syn.ledger == []
    if column == "f":  # text before it: a refusal still, naming the text
        df = pd.DataFrame({column: pd.Series([first] * 30 + ["abc", odd], dtype=object)})
        with pytest.raises(DataError, match="'abc'|signaling NaN|_NoHash"):
            _syn(on_invalid="error").fit(df, {"columns": {column: spec}})


def test_strict_mode_refuses_a_signaling_nan_in_a_derived_column():
    schema = {"columns": {"a": {"type": "numeric", "integer": True, "min": 0, "max": 10},
                          "b": {"type": "derived", "from": "a", "op": "floordiv", "by": 2}}}
    df = pd.DataFrame({"a": [4.0] * 20, "b": pd.Series([2.0] * 20, dtype=object)})
    df.at[3, "b"] = __import__("decimal").Decimal("sNaN")
    with pytest.raises(DataError, match="signaling NaN"):
        _syn(on_invalid="error").fit(df, schema)


@pytest.mark.parametrize("values, first, odd", [
    # pandas' factorize groups equal values and keeps the first it saw: one record's
    # spelling decided how every equal value was looked up
    (["1.50", "2.5"], __import__("decimal").Decimal("1.50"), __import__("decimal").Decimal("1.5")),
    (["2020-01-01 00:00:00+00:00", "x"], pd.Timestamp("2020-01-01 01:00", tz="Europe/Paris"),
     pd.Timestamp("2020-01-01", tz="UTC"))])
def test_equal_values_spelled_apart_are_each_read_alone(values, first, odd):
    schema = {"columns": {"c": {"type": "categorical", "values": values, "nullable": True}}}
    base = pd.DataFrame({"c": pd.Series([first] * 20, dtype=object)})
    _neighbours_fit_alike(base, {"c": odd}, schema, first=True)


def test_a_value_no_float32_holds_warns_no_more_than_another():
    schema = {"columns": {"c": {"type": "categorical", "values": [1, 2, 3]}}}
    base = pd.DataFrame({"c": [1.0, 2.0, 3.0] * 10})
    for odd in (1e39, -1e300):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # numpy's overflow in cast
            _neighbours_fit_alike(base, {"c": odd}, schema)


def test_a_whole_number_of_thousands_of_digits_in_a_categorical_column():
    schema = {"columns": {"c": {"type": "categorical", "values": [1, 2]}}}
    base = pd.DataFrame({"c": pd.Series([1, 2] * 10, dtype=object)})
    _neighbours_fit_alike(base, {"c": 10 ** 5000}, schema)


def test_a_drafted_schema_object_warns_at_fit_and_the_ledger_says_so():
    from gpu_dpsyn import infer_schema
    from gpu_dpsyn.data.inference import NonPrivateSchemaWarning
    df = pd.DataFrame({"k": ["a", "b"] * 20})
    with pytest.warns(NonPrivateSchemaWarning):
        schema = infer_schema(df)
    with pytest.warns(NonPrivateSchemaWarning, match="read off the private data"):
        syn = _syn().fit(df, schema)
    assert "k" in syn.privacy_report()["schema_drafted_from_data"]
    reviewed = load_schema({"columns": {"k": {"type": "categorical", "values": ["a", "b"]}}})
    assert "schema_drafted_from_data" not in _syn().fit(df, reviewed).privacy_report()


def test_one_odd_value_sends_only_its_block_to_the_slow_read(monkeypatch):
    # the whole column was read value by value: one record made a fit 14 times slower
    from gpu_dpsyn.core.batching import READ_BLOCK
    from gpu_dpsyn.data import repair as rep
    from gpu_dpsyn.data.types import date_repair as dt
    calls = {"number_alone": [], "_date": []}
    for module, name in ((rep, "number_alone"), (dt, "_date")):
        monkeypatch.setattr(module, name, lambda v, *a, f=getattr(module, name), k=name:
                            calls[k].append(v) or f(v, *a))
    n, at = 5 * READ_BLOCK, 2 * READ_BLOCK + 7
    numbers = pd.Series(np.arange(n) % 100, dtype=object)
    x = rep._read_numbers(numbers)
    numbers[at] = np.void(b"x")  # stops pandas' to_numeric (repair takes it out before)
    y = rep._read_numbers(numbers)
    assert 0 < len(calls["number_alone"]) <= READ_BLOCK
    np.testing.assert_array_equal(np.delete(y, at), np.delete(x, at))
    assert np.isnan(y[at])
    s = load_schema({"columns": {"x": {"type": "datetime", "min": "2020-01-01",
                                       "max": "2020-12-31", "unit": "hour"}}})
    dates = pd.Series(pd.date_range("2020-01-01", periods=n, freq="h").strftime(
        "%Y-%m-%dT%H:%M"), dtype=object)
    base = encode(repair(pd.DataFrame({"x": dates}), s), s)[0]
    dates[at] = "2020-06-01T10:00+5"  # an offset the others lack: pandas refuses the mix
    got = encode(repair(pd.DataFrame({"x": dates}), s), s)[0]
    assert 0 < len(calls["_date"]) <= READ_BLOCK
    np.testing.assert_array_equal(np.delete(got, at), np.delete(base, at))
    utc = encode(repair(pd.DataFrame({"x": ["2020-06-01T05:00"]}), s), s)[0]
    assert got[at] == utc[0]  # read alone, as its UTC time


def test_a_huge_whole_number_is_read_alike_beside_text_or_numbers():
    # beside text the column was mixed and str() of the number (past its digit limit)
    # made it no single value: invalid there, clamped to the bound beside numbers
    s = load_schema({"columns": {"n": {"type": "numeric", "min": 0, "max": 9,
                                       "nullable": True}}})
    for others in (["5", "x"], [5, 6]):
        out = repair(pd.DataFrame({"n": pd.Series(others + [10 ** 5000], dtype=object)}), s)
        assert out["n"].iloc[-1] == 9


def test_only_the_mixed_block_of_a_column_is_looked_at_value_by_value(monkeypatch):
    from gpu_dpsyn.core.batching import READ_BLOCK
    from gpu_dpsyn.data import encoding
    seen = []
    slow = encoding._no_single_value
    monkeypatch.setattr(encoding, "_no_single_value", lambda v: seen.append(v) or slow(v))
    s = pd.Series(["a"] * (4 * READ_BLOCK), dtype=object)
    s[READ_BLOCK + 3] = [1, 2]
    odd = encoding.odd_cells(s)
    assert np.flatnonzero(odd).tolist() == [READ_BLOCK + 3]
    assert len(seen) == READ_BLOCK


def test_a_mixed_column_keys_its_text_blocks_at_once(monkeypatch):
    from gpu_dpsyn.core.batching import READ_BLOCK
    from gpu_dpsyn.data import matching
    keyed = []
    key = matching.value_key
    monkeypatch.setattr(matching, "value_key", lambda v: keyed.append(v) or key(v))
    s = pd.Series(["b", "a", None] * (2 * READ_BLOCK), dtype=object)
    s[READ_BLOCK + 4] = 7
    codes, uniques = matching.factorized(s)
    assert len(keyed) <= READ_BLOCK
    assert [None if c < 0 else uniques[c] for c in codes] == s.tolist()


def test_a_column_of_numbers_made_object_by_one_record_is_read_a_block_at_a_time(
        monkeypatch):
    from gpu_dpsyn.core.batching import READ_BLOCK
    from gpu_dpsyn.data import repair as rep
    seen = []
    slow = rep._past_float
    monkeypatch.setattr(rep, "_past_float", lambda v: seen.append(v) or slow(v))
    s = load_schema({"columns": {"n": {"type": "numeric", "min": 0, "max": 99}}})
    n = 4 * READ_BLOCK
    base = pd.DataFrame({"n": np.arange(n) % 100})
    for odd in ("abc", 10 ** 400, "9" * 400):
        more = base.astype(object)
        more.at[7, "n"] = odd
        seen.clear()
        out = repair(more, s)
        assert len(seen) <= READ_BLOCK
        np.testing.assert_array_equal(out["n"].to_numpy(dtype=float)[8 - (odd == "abc"):],
                                      base["n"].to_numpy(dtype=float)[8:])
    text = base.astype(str).astype(object)
    text.at[3 * READ_BLOCK, "n"] = "9" * 400
    seen.clear()
    assert repair(text, s)["n"].iloc[3 * READ_BLOCK] == 99 and len(seen) == 1


_DAYS = {"columns": {"t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                           "unit": "day"}}}


@pytest.mark.parametrize("far, fine, codes", [
    # pandas parses values together at the finest resolution among them: beside a
    # nanosecond, 9999-12-31 was past it (NaT: invalid) instead of clamped, or raised
    (["9999-12-31", "0001-01-01"], "2020-05-01T00:00:00.000000001", [365, 0]),
    ([__import__("datetime").datetime(1, 1, 1), __import__("datetime").date(9999, 12, 31)],
     pd.Timestamp("2020-05-01T00:00:00.000000001"), [0, 365]),
    (["9999-12-31", "2020-05-01T00:00:00.000000001"], "2020-06-01T10+05", [365, 121])])
def test_a_far_date_is_clamped_whatever_its_neighbours_resolution(far, fine, codes):
    base = pd.DataFrame({"t": pd.Series(["2020-03-05"] * 30 + far, dtype=object)})
    _neighbours_fit_alike(base, {"t": fine}, _DAYS)
    s = load_schema(_DAYS)
    assert encode(repair(base, s), s)[0][30:].tolist() == codes
    apart = pd.Series(["2020-03-05"] * (2 * 4096 + 1), dtype=object)  # in other blocks
    apart[0], apart[5000], apart[8000] = far[0], fine, "2020-06-01T10+05"
    assert encode(repair(pd.DataFrame({"t": apart}), s), s)[0][0] == codes[0]


def test_a_column_of_short_offsets_reads_as_utc():
    # "T10+05" escapes the offset pattern: pandas read the lot in zone +05, and the
    # clamp compared zoned times with naive bounds (a TypeError)
    df = pd.DataFrame({"t": ["2020-06-01T10+05"] * 30})
    s = load_schema(_DAYS)
    alone = encode(repair(pd.DataFrame({"t": ["2020-06-01T05:00"]}), s), s)[0][0]
    assert encode(repair(df, s), s)[0].tolist() == [alone] * 30
    _neighbours_fit_alike(df, {"t": "2020-06-01T10:00"}, _DAYS)


class _TextNoHash(str):
    __hash__ = None


def test_text_that_cannot_be_hashed_is_read_as_its_text_wherever_it_sits():
    # in a block of text pandas' factorize raised on it; beside a number it was invalid
    schema = {"columns": {"k": {"type": "categorical", "values": ["a", "b"]}}}
    for others in (["a", "b"] * 15, ["a", "b", 3] * 10):
        base = pd.DataFrame({"k": pd.Series(others, dtype=object)})
        _neighbours_fit_alike(base, {"k": _TextNoHash("b")}, schema)
        s = load_schema(schema)
        more = pd.concat([base, pd.DataFrame({"k": pd.Series([_TextNoHash("a")],
                                                               dtype=object)})])
        codes = encode(repair(more.reset_index(drop=True), s), s)[0]
        assert len(codes) == len(encode(repair(base, s), s)[0]) + 1 and codes[-1] == 0


def test_equal_numbers_of_other_types_are_each_read_alone():
    # pandas' factorize grouped float32 0.5 with 0.500000001 (NumPy 2 compares them in
    # float32), and the float 0.10000000149011612 (float32 0.1 widened, which matches 0.1)
    # with its own text (which does not): the first one seen decided for the others
    f32 = np.float32
    schema = {"columns": {"c": {"type": "categorical", "values": [0.5, 1.5],
                                "nullable": True}}}
    base = pd.DataFrame({"c": pd.Series([f32(0.5), f32(0.5), f32(1.5)], dtype=object)})
    _neighbours_fit_alike(base, {"c": 0.500000001}, schema, first=True)
    schema = {"columns": {"c": {"type": "categorical", "values": [0.1, 0.5],
                                "nullable": True}}}
    wide = 0.10000000149011612
    base = pd.DataFrame({"c": pd.Series([wide, 0.5, wide], dtype=object)})
    _neighbours_fit_alike(base, {"c": "0.10000000149011612"}, schema, first=True)
    _neighbours_fit_alike(base, {"c": __import__("decimal").Decimal(repr(wide))}, schema,
                          first=True)


class _IntNoText(int):
    def __str__(self):
        raise RuntimeError("no text")


def test_a_number_whose_str_raises_is_read_by_its_value():
    schema = {"columns": {"c": {"type": "categorical", "values": ["a", 1],
                                "nullable": True}}}
    s = load_schema(schema)
    df = pd.DataFrame({"c": pd.Series(["a", _IntNoText(1)], dtype=object)})
    assert encode(repair(df, s), s)[0].tolist() == [0, 1]


@pytest.mark.parametrize("values, first", [
    (["03/05/2020"] * 3000, []),  # no ISO dates: each was parsed again alone
    (["2020-03-05", "9999-12-31"] * 3000 + ["2020-05-01T00:00:00.000000001"], [64, 365]),
    (["2020-06-01T10+05"] * 3000, [152, 152])])  # June 1st, 05:00 UTC
def test_dates_the_first_parse_misses_are_parsed_again_together(values, first,
                                                                monkeypatch):
    from gpu_dpsyn.data.types import date_repair as dt
    calls, slow = [], dt._date
    monkeypatch.setattr(dt, "_date", lambda v, *a: calls.append(v) or slow(v, *a))
    s = load_schema(_DAYS)
    codes = encode(repair(pd.DataFrame({"t": values}), s), s, allow_empty=True)[0]
    assert calls == [] and codes[:2].tolist() == first


@pytest.mark.parametrize("word", ["now", "today", " NOW "])
def test_now_and_today_are_no_dates(word):
    # pandas reads them off the clock: the same seed gave other bytes on another day
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2000-01-01",
                                       "max": "2100-12-31", "unit": "day",
                                       "nullable": True}}})
    for others in (["2020-03-05"], ["2020-05-01T00:00:00.000000001"]):
        out = encode(repair(pd.DataFrame({"t": others + [word]}), s), s)[0]
        assert out[-1] == s["t"].null_code


class _TextRaises(str):
    def __str__(self):
        raise ValueError("no text")


def test_text_whose_str_raises_is_read_as_its_text():
    # keyed by str(), which raised: beside numbers a traceback, beside text read as "a"
    schema = {"columns": {"k": {"type": "categorical", "values": ["a", "b"],
                                "nullable": True}}}
    s = load_schema(schema)
    for base in (["a", "b"] * 15, [1, 2, 3] * 10):
        df = pd.DataFrame({"k": pd.Series(base + [_TextRaises("a")], dtype=object)})
        assert encode(repair(df, s), s)[0][-1] == 0
        _neighbours_fit_alike(pd.DataFrame({"k": pd.Series(base, dtype=object)}),
                              {"k": _TextRaises("a")}, schema)


def test_strict_mode_refuses_now_and_today():
    df = pd.DataFrame({"t": ["2020-03-05"] * 10 + ["today"]})
    with pytest.raises(DataError, match="not .*dates.*today"):
        _syn(on_invalid="error").fit(df, _DAYS)


def test_a_far_date_with_nanoseconds_leaves_the_other_far_dates_clamped():
    # retried together, the far dates took its nanosecond resolution and all stayed NaT
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2000-01-01",
                                       "max": "2100-12-31", "unit": "day"}}})
    base = pd.DataFrame({"t": ["2020-03-05"] * 20 + ["9999-12-31", "0202-05-01"] * 10})
    for odd in ("3000-01-01T00:00:00.000000001", "9999-12-31T23:59:59.999999999"):
        _neighbours_fit_alike(base, {"t": odd}, {"columns": {"t": s["t"].to_dict()}})
    assert len(encode(repair(base, s), s)[0]) == 40


def test_a_short_offset_in_a_zoned_column_is_its_instant():
    # "T10+05" escaped the offset pattern: read as 05:00 UTC wall time, then as New York
    # time, four hours off the instant strict mode reads
    zoned = {"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                               "max": "2020-12-31", "unit": "hour",
                               "timezone": "America/New_York"}}}
    s = load_schema(zoned)
    for short, full in (("2020-06-01T10+05", "2020-06-01T10:00+05:00"),
                        ("2020-06-01T05Z", "2020-06-01T05:00Z")):
        got = encode(repair(pd.DataFrame({"t": [short]}), s), s)[0]
        assert got.tolist() == encode(pd.DataFrame({"t": [full]}), s)[0].tolist()


@pytest.mark.parametrize("odd", ["now\x00", "2020-06-01T10:00\x00", "\x00today"])
def test_text_with_a_nul_is_no_date_whatever_its_neighbours(odd):
    # pandas reads it alone (now: off the clock) but not beside others
    base = pd.DataFrame({"t": ["2020-06-01"] * 5})
    _neighbours_fit_alike(base, {"t": odd}, _DAYS)
    s = load_schema(_DAYS)
    for others in (["2020-06-01"], ["2020-06-01", "2020-06-01T10+05"]):
        out = encode(repair(pd.DataFrame({"t": others + [odd]}), s), s, allow_empty=True)[0]
        assert len(out) == len(others)  # dropped: no date


class _DateText(str):
    def __str__(self):
        return "1999-01-01"


def test_a_date_in_a_str_subclass_is_read_as_its_text():
    base = pd.DataFrame({"t": pd.Series(["2020-06-01"] * 5, dtype=object)})
    _neighbours_fit_alike(base, {"t": _DateText("2020-07-01")}, _DAYS)
    s = load_schema(_DAYS)
    more = pd.DataFrame({"t": pd.Series(["2020-06-01", _DateText("2020-07-01")],
                                        dtype=object)})
    assert encode(repair(more, s), s)[0].tolist() == [152, 182]


_ZONED = {"columns": {"t": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31",
                            "unit": "hour", "timezone": "America/New_York",
                            "nullable": True}}}


@pytest.mark.parametrize("far", ["9999-12-31T23:00", __import__("datetime").datetime(
    9999, 12, 31, 23), np.datetime64("10000-01-01"), "9999-12-31T23:00Z"])
def test_a_far_date_in_a_zoned_column_is_clamped_not_a_crash(far):
    # localized to the zone before it was clamped: past year 9999 the zone rules raised
    base = pd.DataFrame({"t": pd.Series(["2020-06-01T10:00"] * 5, dtype=object)})
    _neighbours_fit_alike(base, {"t": far}, _ZONED)
    s = load_schema(_ZONED)
    one = encode(repair(pd.DataFrame({"t": pd.Series([far], dtype=object)}), s), s)[0]
    assert one.tolist() == [s["t"].size - 1 - 1]  # the last hour (the null code after it)


@pytest.mark.parametrize("text, instant", [
    ("2020-06-01T10:00Z ", "2020-06-01T10:00Z"), ("2020-06-01T10:00+00:00 ",
                                                  "2020-06-01T10:00Z"),
    ("20200601T1000Z", "2020-06-01T10:00Z"), ("2020-06-01T1000Z", "2020-06-01T10:00Z")])
def test_an_offset_the_pattern_missed_is_still_the_instant_in_a_zoned_column(text, instant):
    s = load_schema(_ZONED)
    got = encode(repair(pd.DataFrame({"t": [text]}), s), s)[0]
    assert got.tolist() == encode(pd.DataFrame({"t": [instant]}), s)[0].tolist()


def test_a_retry_pandas_refuses_goes_by_blocks_not_value_by_value(monkeypatch):
    # the far dates retried apart from a nanosecond value, with one offset among them
    # that pandas refuses beside naive times: every far date was parsed alone
    from gpu_dpsyn.data.types import date_repair as dt
    calls, slow = [], dt._date
    monkeypatch.setattr(dt, "_date", lambda v, *a: calls.append(v) or slow(v, *a))
    values = ["2020-03-05T00:00:00.000000001"] + ["2020-03-04", "0202-05-01"] * 6000 + \
        ["0202-05-01T10:00Z "]
    s = load_schema(_DAYS)
    codes = encode(repair(pd.DataFrame({"t": values}), s), s)[0]
    assert len(calls) <= 4096 and codes[2] == 0 and codes[-1] == 0


# -- one record's type recasts the whole column: pandas' casts, read as pandas casts ------
_NUMBER = {"columns": {"x": {"type": "numeric", "integer": True, "min": 0, "max": 10,
                             "nullable": True}}}
_CODES = {"columns": {"x": {"type": "categorical", "values": [1, 2, 3], "nullable": True}}}


@pytest.mark.parametrize("schema, base, extra", [
    (_NUMBER, pd.Series([3, 4, 5] * 20), pd.Series([1j])),          # int64 -> complex128
    (_NUMBER, pd.Series([3, 4, 5] * 20), pd.Series([2 + 0j])),
    (_CODES, pd.Series([1, 2, 3] * 20), pd.Series([1j])),
    (_NUMBER, pd.Series([True, False] * 30), pd.Series([7])),       # bool -> int64
    (_NUMBER, pd.Series([True, False] * 30), pd.Series(["abc"])),   # bool -> object
    (_NUMBER, pd.Series([True, None] * 30, dtype="boolean"), pd.Series([7.5])),
    (_NUMBER, pd.Series([3.0, 4.0] * 30), pd.Series([True])),       # float -> object
])
def test_a_record_that_recasts_the_column_changes_only_itself(schema, base, extra):
    # pandas casts a whole column for one record's type (a complex number makes every
    # int complex, an int makes every boolean 1/0): every other record reads as before
    s = load_schema(schema)
    one = pd.DataFrame({"x": base})
    more = pd.concat([one, pd.DataFrame({"x": extra})], ignore_index=True)
    a, b = encode(repair(one, s), s)[0], encode(repair(more, s), s)[0]
    np.testing.assert_array_equal(b[:len(a)], a)
    assert len(b) == len(a) + 1


def test_check_counts_booleans_and_complex_numbers_read_as_numbers():
    s = load_schema(_NUMBER)
    df = pd.DataFrame({"x": pd.Series([True, False, 3, 1j, 2 + 0j, None], dtype=object)})
    found = {what: n for _, what, n, _ in findings(df, s)}
    assert found == {"not allowed by the schema: made missing": 1,
                     "true/false read as 1/0, or complex numbers with no imaginary part "
                     "as real numbers": 3}
    assert repair(df, s)["x"].tolist()[:3] == [1, 0, 3]


@pytest.mark.parametrize("extra", ["5", "abc"])
def test_a_csv_column_of_booleans_reads_alike_when_one_word_makes_it_text(tmp_path, extra):
    # pandas' CSV reader makes a column of True/False booleans, and text once one cell is
    # neither: each boolean word reads as the boolean would, whatever the other cells
    from gpu_dpsyn.data.ingest import read_table
    s = load_schema(_NUMBER)
    rows = ["True", "False", "TRUE", "false"] * 10
    one, more = tmp_path / "one.csv", tmp_path / "more.csv"
    one.write_text("x\n" + "\n".join(rows) + "\n")
    more.write_text("x\n" + "\n".join(rows + [extra]) + "\n")
    a = encode(repair(read_table(one, schema=s), s), s)[0]
    b = encode(repair(read_table(more, schema=s), s), s)[0]
    np.testing.assert_array_equal(b[:len(a)], a)
    assert repair(read_table(one, schema=s), s)["x"].tolist()[:4] == [1, 0, 1, 0]


def test_a_complex_number_with_an_imaginary_part_alone_in_its_block_is_invalid():
    # the only value _real reads as no number: made missing, nothing else changed
    s = load_schema(_NUMBER)
    df = pd.DataFrame({"x": pd.Series([3, 1j, 4, 2.5j + 1], dtype=object)})
    assert findings(df, s) == [("x", "not allowed by the schema: made missing", 2,
                                ["1j", "(1+2.5j)"])]
    out = repair(df, s)["x"]
    assert out.iloc[[0, 2]].tolist() == [3, 4] and out.iloc[[1, 3]].isna().all()


_SHARES = {"columns": {"x": {"type": "numeric", "min": 0.1, "max": 0.2, "bins": 4,
                             "nullable": True}}}
_TENTHS = {"columns": {"x": {"type": "categorical", "values": [0.1, 0.5, 2],
                             "nullable": True}}}


@pytest.mark.parametrize("schema, base, extra", [
    # a None among Timestamps or Timedeltas let pandas infer datetime64 for the block
    (_NUMBER, pd.Series([pd.Timedelta("5s")] * 30, dtype=object), pd.Series([1j])),
    (_NUMBER, pd.Series([pd.Timestamp("2020-01-01")] * 30, dtype=object),
     pd.Series([1j])),
    # complex64: its real parts stay float32 unless read as float64
    (_SHARES, pd.Series(np.array([0.1, 0.15, 0.2] * 20, dtype=np.float32)),
     pd.Series(np.array([1j], dtype=np.complex64))),
    (_TENTHS, pd.Series(np.array([0.1, 0.5, 2.0] * 20, dtype=np.float32)),
     pd.Series([2 + 0j])),
    # a bool column that an int recasts to int64, in a categorical column of 1..3
    (_CODES, pd.Series([True, False, True] * 20), pd.Series([3])),
])
def test_more_records_that_recast_the_column_change_only_themselves(schema, base, extra):
    test_a_record_that_recasts_the_column_changes_only_itself(schema, base, extra)
    s = load_schema(schema)
    more = pd.concat([pd.DataFrame({"x": base}), pd.DataFrame({"x": extra})],
                     ignore_index=True)
    _syn().fit(more, s)  # neither table is refused


def test_boolean_words_in_any_letter_case_read_alike_in_a_csv(tmp_path):
    # pandas' CSV reader takes true/false in any case for booleans
    from gpu_dpsyn.data.ingest import read_table
    s = load_schema(_NUMBER)
    rows = ["tRUE", "False", "TrUe", "fAlSe"] * 10
    one, more = tmp_path / "one.csv", tmp_path / "more.csv"
    one.write_text("x\n" + "\n".join(rows) + "\n")
    more.write_text("x\n" + "\n".join(rows + ["abc"]) + "\n")
    a = encode(repair(read_table(one, schema=s), s), s)[0]
    b = encode(repair(read_table(more, schema=s), s), s)[0]
    np.testing.assert_array_equal(b[:len(a)], a)
    assert repair(read_table(more, schema=s), s)["x"].tolist()[:4] == [1, 0, 1, 0]


def test_check_counts_times_with_an_offset_read_in_utc():
    """A column without a zone reads a time with a UTC offset as its UTC instant (the
    rule): check says so, as --on-invalid error refuses those values (it said nothing,
    while error refused the table)."""
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2021-01-01",
                                       "max": "2021-12-31", "unit": "hour"}}})
    df = pd.DataFrame({"t": ["2021-08-18T14:05:00+02:00", "2021-08-18T10:00:00",
                             "2021-08-19T10:00:00"] * 3})
    found = {(c, what.split(":")[0]): n for c, what, n, _ in findings(df, s)}
    assert found == {("t", "with a UTC offset in a column without a time zone"): 3}
    assert str(repair(df, s)["t"][0]) == "2021-08-18 12:05:00"
    assert findings(df.iloc[[1, 2]], s) == []


def test_check_shows_a_few_of_the_values_it_counts(tmp_path, capsys):
    import json
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    bad = tmp_path / "bad.csv"
    df = table(30)
    df.loc[[1, 2, 3, 4], "k"] = ["zz", "yy", "zz", "ww"]
    df.to_csv(bad, index=False)
    assert main(["check", str(bad), "--schema", str(tmp_path / "s.json")]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("k: 4 values not allowed"))
    assert "'zz'" in line and "'yy'" in line and "'ww'" in line and line.count("'zz'") == 1
    assert "refuses the table (--on-invalid error)" in out


def test_check_does_not_say_error_refuses_what_bounding_drops(tmp_path, capsys):
    """Records past max_records_per_individual are dropped at random whatever
    --on-invalid says: check's closing line does not claim error refuses them."""
    import json
    schema = {"columns": {"pid": {"type": "id"}, "k": {"type": "categorical",
                                                       "values": ["a", "b"]}},
              "max_records_per_individual": 2}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    path = tmp_path / "t.csv"
    pd.DataFrame({"pid": [1, 1, 1, 2, 3], "k": ["a", "b", "a", "b", "a"]}).to_csv(
        path, index=False)
    assert main(["check", str(path), "--schema", str(tmp_path / "s.json")]) == 1
    out = capsys.readouterr().out
    assert "pid: 1 row past max_records_per_individual" in out
    assert "--on-invalid error" not in out and "whatever --on-invalid" in out


def test_repair_leaves_the_preflights_offset_count_to_check(monkeypatch):
    # every fit's repair computed the offset mask only check reads: 2e6 dates took 7.1 s
    # against 4.55 s without it
    from gpu_dpsyn.data.types import date_repair

    def never(*a):
        raise AssertionError("the offset mask is check's alone")
    monkeypatch.setattr(date_repair, "aware", never)
    monkeypatch.setattr("gpu_dpsyn.data.repair.aware", never, raising=False)
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2021-01-01",
                                       "max": "2021-12-31", "unit": "hour"}}})
    df = pd.DataFrame({"t": ["2021-08-18T14:05:00+02:00", "2021-08-18T10:00:00"]})
    assert len(repair(df, s)) == 2


def test_check_shows_datetimes_as_text_and_says_they_clamp():
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2021-01-01",
                                       "max": "2021-12-31", "unit": "day",
                                       "timezone": "Europe/Berlin"}}})
    t = pd.Series(pd.to_datetime(["2020-03-01", "2021-05-01"]).tz_localize("Europe/Berlin"))
    (_, what, n, seen), = findings(pd.DataFrame({"t": t}), s)
    assert n == 1 and what.startswith("outside the range: clamped") and "fraction" not in what
    assert seen == ["'2020-03-01 00:00:00+01:00'"]  # as text is shown, not as a repr


def test_offsets_in_a_zoneless_column_are_named_as_such_by_the_strict_reading():
    from gpu_dpsyn.data.encoding import encode
    s = load_schema({"columns": {"t": {"type": "datetime", "min": "2020-01-01",
                                       "max": "2020-12-31", "unit": "day"}}})
    with pytest.raises(DataError, match="UTC offset.*\"timezone\"") as e:
        encode(pd.DataFrame({"t": ["2020-01-01T10:00:00+05:00"] * 3}), s)
    assert "time zone UTC" not in str(e.value)
