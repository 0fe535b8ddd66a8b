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
