"""Amounts rounded to a step (incomes in hundreds) in a draft: a common value gets a bin
of its own, on the step's grid, as amounts rounded to 1 do (a curator probe's finding)."""
import numpy as np
import pandas as pd

from gpu_dpsyn import Synthesizer
from conftest import drafted


def _incomes(n=16000, seed=3):
    """A census extract's incomes to the 100: a third zero (children, no earnings), 1.4%
    business losses, a long right tail top-coded at 500,000."""
    r = np.random.default_rng(seed)
    inc = np.exp(r.normal(10.4, 0.9, n)).clip(max=500000)
    inc = np.where(r.random(n) < 0.34, 0, inc)
    inc = np.where(r.random(n) < 0.014, -r.exponential(8000, n), inc)
    inc = (np.round(inc, -2)).astype(np.int64)
    return pd.DataFrame({"income": inc, "sex": r.choice(["F", "M"], n)})


def test_a_common_amount_in_steps_gets_a_bin_of_its_own():
    # drafted in 32 equal bins of 17,000 in steps of 100, the zeros shared the bin
    # [-9600, 7400) with small incomes, decoded evenly over its 170 steps: at eps 1 the
    # synthetic table had 0.2% zeros (real 34%) and 23% negative incomes (real 1.4%)
    df = _incomes()
    s, lines = drafted(df)
    col = s["income"]
    e = list(col.edges)
    assert 0 in e and e[e.index(0) + 1] == 100, e  # [0, 100): the zeros alone
    assert col.support is not None  # still on the step: every output a multiple of 100
    assert "0: common, a bin of its own" in lines["income"], lines["income"]
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(df, s).sample(6000)
    inc = df["income"]
    assert abs((out["income"] == 0).mean() - (inc == 0).mean()) < 0.03
    assert abs((out["income"] < 0).mean() - (inc < 0).mean()) < 0.03
    assert (out["income"] % 100 == 0).all()
    assert 0.8 < np.median(out["income"]) / np.median(inc) < 1.25
