"""A column whose counts the noise swamps is named at fit (post-processing of the noise
levels and the noisy total): a curator's table at 8 records a person and eps 1 came out
24% missing where 3% were, with nothing said but the report's "poor"."""
import re
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.core.types import Level, Marginal
from gpu_dpsyn.estimate.targets import noise_per_value


def test_the_noise_of_a_columns_counts_combines_its_marginals():
    # closed form: a 1-way (sigma 10, 4 values) and a 2-way (sigma 20, 4 x 5 cells):
    # variances 100 and 400 * 5 per value, combined 1 / (1/100 + 1/2000)
    one = Marginal((0,), (4,), np.full(4, 250.0), 10.0)
    two = Marginal((0, 1), (4, 5), np.full(20, 50.0), 20.0)
    lv = Level((), [one, two], [4, 20], total=1000.0)
    got = dict((a, (sd, mean)) for a, sd, mean in noise_per_value(lv))
    assert got[0][0] == pytest.approx((1 / (1 / 100 + 1 / 2000)) ** 0.5)
    assert got[0][1] == pytest.approx(250.0)
    assert got[1][0] == pytest.approx((400 * 4) ** 0.5) and got[1][1] == pytest.approx(200.0)


def _table(n, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.choice(list("abcdefgh"), n), "b": rng.integers(0, 90, n),
                         "c": rng.choice(["x", "y"], n)})


SCHEMA = {"columns": {"a": {"type": "categorical", "values": list("abcdefgh")},
                      "b": {"type": "numeric", "integer": True, "min": 0, "max": 89,
                            "bins": 30},
                      "c": {"type": "categorical", "values": ["x", "y"]}}}


def test_a_swamped_column_is_named_and_a_clear_one_is_not():
    with pytest.warns(UserWarning, match=r"'b'.*noise"):
        Synthesizer(0.05, 1e-9, seed=0, progress=False).fit(_table(2000), SCHEMA)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(_table(20000), SCHEMA)
    assert not any("noise" in str(w.message) and "'b'" in str(w.message) for w in seen)


def test_a_merged_column_says_how_many_of_its_values_went_below_the_noise():
    """'ts' (479 values merged into 1) read as if the output had one value left; it
    had 479, drawn by an estimate."""
    with pytest.warns(UserWarning, match=r"'b' \(\d+ of its 30 values below the noise"):
        Synthesizer(0.05, 1e-9, seed=0, progress=False).fit(_table(2000), SCHEMA)


def test_a_merged_column_says_its_rare_values_come_out_more_often():
    # a sensor's status 500 (0.08% of rows) came out 0.96% after its merge: the line
    # said only "their rows spread over them"
    with pytest.warns(UserWarning, match=r"spread evenly over them: the rarer more often "
                                         r"than they are"):
        Synthesizer(0.05, 1e-9, seed=0, progress=False).fit(_table(2000), SCHEMA)


def test_every_swamped_column_is_named_past_the_fifth():
    """A lab panel at 12 visits a patient, eps 1: the noise swamped 7 columns and the
    warning named 5, with no word of 'ldl' and 'dx' (a bank table's at 10 records a
    customer: 5 of 6, its currency left unsaid)."""
    rng = np.random.default_rng(0)
    n = 2000
    cols = {f"q{i}": rng.integers(0, 90, n) for i in range(7)}
    schema = {"columns": {c: {"type": "numeric", "integer": True, "min": 0, "max": 89,
                              "bins": 30} for c in cols}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(0.05, 1e-9, seed=0, progress=False).fit(pd.DataFrame(cols), schema)
    said = " ".join(str(w.message) for w in seen if "noise swamps" in str(w.message))
    assert all(f"'{c}'" in said for c in cols), said


def test_a_rare_value_of_a_clear_column_is_named_when_the_noise_swamps_it():
    """A bank table's 0.3% fraud flag came out 2.2% at 30 records a customer, and nothing
    said so: the column's two values average thousands of records, far above the noise,
    and one rare value is not merged.  A flag of even shares is not named."""
    rng = np.random.default_rng(1)
    n = 20000
    df = pd.DataFrame({"fraud": (rng.random(n) < 0.003).astype(int),
                       "even": rng.integers(0, 2, n),
                       "kind": rng.choice(list("abcd"), n)})
    schema = {"columns": {"fraud": {"type": "categorical", "values": [0, 1]},
                          "even": {"type": "categorical", "values": [0, 1]},
                          "kind": {"type": "categorical", "values": list("abcd")}}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(0.02, 1e-9, seed=0, progress=False).fit(df, schema)
    said = " ".join(str(w.message) for w in seen if "rarest value" in str(w.message))
    assert "'fraud'" in said and "'even'" not in said and "'kind'" not in said, said
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(8.0, 1e-9, seed=0, progress=False).fit(df, schema)
    assert not any("rarest value" in str(w.message) for w in seen)


def test_a_public_ranges_empty_bins_merged_are_no_column_of_noise():
    """A survey's hours worked, 4-71 in a public range of 0-100 (20 bins), and an
    interview's minutes, 6-140 in 0-180: at eps 1 on 20,000 rows most bins merged, all
    but a few records out of them, and the warning said "their distribution will be
    mostly noise" while the synthetic quartiles matched the real ones to a bin.  Such a
    column is named for its rare values alone, with the share of records they hold."""
    rng = np.random.default_rng(0)
    n = 20000
    df = pd.DataFrame({"hours": np.clip(rng.normal(38, 9, n).round(), 1, 80).astype(int),
                       "c": rng.choice(["x", "y"], n)})
    schema = {"columns": {"hours": {"type": "numeric", "integer": True, "min": 0,
                                    "max": 299, "bins": 30},
                          "c": {"type": "categorical", "values": ["x", "y"]}}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(1.0, 1e-9, seed=0, progress=False).fit(df, schema)
    said = [str(w.message) for w in seen if "'hours'" in str(w.message)]
    assert said and not any("mostly noise" in s for s in said), said
    assert any(re.search(r"'hours' \(\d+ of its 30 values, about [\d.]+% of the records",
                         s) for s in said), said


def _hogged(code: str, num: str, cat: str, words: str) -> str:
    """The fit's warnings holding `words`, on a table whose column `code` lists 20,000
    public codes (60 occur) beside a binned number and a 3-valued column."""
    rng = np.random.default_rng(2)
    n, codes = 4000, [f"C{i:05d}" for i in range(20000)]
    df = pd.DataFrame({code: rng.choice(codes[:60], n), num: rng.integers(0, 90, n),
                       cat: rng.choice(["x", "y", "z"], n)})
    schema = {"columns": {code: {"type": "categorical", "values": codes},
                          num: {"type": "numeric", "integer": True, "min": 0, "max": 89,
                                "bins": 30},
                          cat: {"type": "categorical", "values": ["x", "y", "z"]}}}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(0.3, 1e-9, seed=0, progress=False).fit(df, schema)
    return " ".join(str(w.message) for w in seen if words in str(w.message))


def test_a_long_list_that_takes_the_one_way_budget_is_named_as_the_cause():
    """A hospital table listing the 17,000 codes of a public ICD list (1,907 occur):
    split by values^(2/3), the code's 1-way marginal took 91% of the 1-way budget, and
    sex, age, ward and the dates came out merged to one or two values, the warning
    naming them and not why.  It names the column that took the budget, and two edits
    that leave the others more."""
    said = _hogged("code", "b", "c", "noise swamps")
    assert re.search(r"'code' \(20,000 values\) took \d+% of the 1-way budget", said), said
    assert "--workload code:0.1" in said, said
    with warnings.catch_warnings(record=True) as seen:  # columns alike: no column named
        warnings.simplefilter("always")
        Synthesizer(0.05, 1e-9, seed=0, progress=False).fit(_table(2000), SCHEMA)
    assert not any("of the 1-way budget" in str(w.message) for w in seen)


def test_the_edit_named_for_a_long_list_pastes_for_any_column_name():
    # '--workload icd, code:0.1' was given as it is: a shell splits it at the space, and
    # a name holding ',' or ':' may read as other columns
    import shlex
    from gpu_dpsyn.cli.column_sets import parse_workload
    name = "icd, code"
    said = _hogged(name, "icd", "code", "1-way budget")
    m = re.search(r"or (--workload .*?) \(a tenth", said)
    assert m, said
    words = shlex.split(m[1])
    assert words[0] == "--workload" and len(words) == 2, words
    assert parse_workload(words[1:], [name, "icd", "code"]) == [((name,), 0.1)]
