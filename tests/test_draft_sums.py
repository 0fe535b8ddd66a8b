"""A number that is the sum of two others of its record, up to a constant (a taxi fare's
total: fare + tip + 3.00 of fixed charges; a gross amount: tax + net), is said on its
draft line: no column type derives it, and measured apart the synthetic rows break it (a
taxi table at eps 1: the total matched fare + tip + 3 on 1% of the synthetic rows)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from conftest import drafted


def _trips(n=3000, seed=0):
    r = np.random.default_rng(seed)
    fare = np.round(3 + 2.5 * r.lognormal(0.6, 0.8, n), 1)
    tip = np.where(r.random(n) < 0.7, np.round(fare * r.choice([.15, .2, .25], n), 2), 0.0)
    gross = np.round(r.gamma(3.0, 900.0, n), 2)
    tax = np.round(gross * r.uniform(0.1, 0.3, n), 2)
    return pd.DataFrame({"fare": fare, "tip": tip, "total": np.round(fare + tip + 3.0, 2),
                         "gross": gross, "tax": tax, "net": np.round(gross - tax, 2),
                         "miles": np.round(r.lognormal(0.5, 0.8, n), 2)})


def test_a_total_of_two_columns_is_said_with_the_edit_leaving_it_out():
    lines = drafted(_trips())[1]
    total = lines["total"]
    assert "'fare' + 'tip' + 3 in every record" in total, total
    assert "--drop total --ignore total" in total, total
    # net = gross - tax: said once, as a sum (gross = tax + net)
    said = [n for n in ("gross", "tax", "net") if "in every record" in lines[n]]
    assert said == ["gross"] and "'tax' + 'net' in every record" in lines["gross"]
    for name in ("fare", "tip", "miles"):
        assert "in every record" not in lines[name], lines[name]


def test_a_sum_off_by_more_than_its_rounding_is_not_said():
    df = _trips()
    df["total"] = df["total"] + np.random.default_rng(1).choice([0, 0.5, 1.0], len(df))
    assert "in every record" not in drafted(df)[1]["total"]


def test_whole_numbers_must_add_up_exactly():
    """Counts off by one on a third of the records are no sum (a tolerance of a
    decimal's rounding does not apply to whole numbers)."""
    r = np.random.default_rng(2)
    a, b = r.integers(0, 50, 3000), r.integers(0, 50, 3000)
    df = pd.DataFrame({"a": a, "b": b, "n": a + b + r.choice([0, 1], 3000, p=[.7, .3])})
    assert "in every record" not in drafted(df)[1]["n"]
    df["n"] = a + b
    assert "'a' + 'b' in every record" in drafted(df)[1]["n"]


def _sums_every_pair(data, cols) -> list:
    """What draft_spans.sums said as it was (86df15d): each number column tried against
    every pair of the others in order, the first sum found; its line's words, or ""."""
    from gpu_dpsyn.data import draft_spans as ds
    nums = {}
    for c in cols:
        x = ds._numbers(data[c.name]) if ds._numeric(c) else None
        if x is not None:
            nums[c.name] = (x, getattr(c, "decimals", None))
    names, out = list(nums), []
    for c in cols:
        said = ""
        for a, b in ((a, b) for j, a in enumerate(names) for b in names[j + 1:]
                     if c.name in nums and c.name not in (a, b)):
            k = ds._constant(nums[c.name][0], nums[a][0], nums[b][0],
                             [nums[n][1] for n in (c.name, a, b)])
            if k is not None:
                shift = "" if k == 0 else f" {'+' if k > 0 else '-'} {abs(k):g}"
                said = f"it is {a!r} + {b!r}{shift} in every record"
                break
        out.append(said)
    return out


def _tables():
    r = np.random.default_rng(5)
    for t in range(12):
        n = int(r.choice([60, 400, 3000]))
        df = pd.DataFrame({f"x{i}": r.integers(0, int(r.choice([4, 50, 1000])), n)
                           .astype(float) for i in range(int(r.integers(3, 9)))})
        df["d1"] = np.round(r.gamma(2.0, 30.0, n), 2)
        df["d2"] = np.round(r.gamma(2.0, 3.0, n), 1)
        df["s1"] = df["x0"] + df["x1"] + int(r.integers(-3, 4))  # planted sums
        df["s2"] = np.round(df["d1"] + df["d2"] + 0.25, 2)
        if t % 2:  # off on one record, late (past the records tried first)
            df.loc[n - 1, "s1"] += 1
        for c in r.choice(df.columns, 3, replace=False):  # missing values
            df.loc[r.random(n) < 0.3, c] = np.nan
        yield df


def _drafted(df):
    import warnings
    from gpu_dpsyn.data.inference import infer_schema
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema(df, pairs=False, lookups=False).columns


def test_the_screened_sums_say_what_every_pair_did():
    from gpu_dpsyn.data import draft_spans as ds
    found = 0
    for df in _tables():
        cols, data = _drafted(df), {str(n): df[n] for n in df.columns}
        whys = [""] * len(cols)
        ds.sums(data, cols, whys)
        for why, want in zip(whys, _sums_every_pair(data, cols)):
            assert (want in why) if want else "in every record" not in why, (why, want)
            found += bool(want)
    assert found >= 12  # (the planted sums were found: the comparison compared something)


def test_a_wide_table_tries_few_sums_in_full(monkeypatch):
    # every pair of the others for each number column: 80 columns took 11 s of a 12 s
    # draft (cubic: a 300-column one, some ten minutes)
    from gpu_dpsyn.data import draft_spans as ds
    r = np.random.default_rng(0)
    df = pd.DataFrame({f"c{i}": r.integers(0, 1000, 3000) for i in range(60)})
    df["t"] = df["c3"] + df["c7"]
    cols, data = _drafted(df), {str(n): df[n] for n in df.columns}
    calls = []
    real = ds._constant
    monkeypatch.setattr(ds, "_constant", lambda *a: calls.append(1) or real(*a))
    whys = [""] * len(cols)
    ds.sums(data, cols, whys)
    assert "'c3' + 'c7' in every record" in whys[-1]
    assert len(calls) < 100  # (every pair: 60 x 1,770 + 1,830)
