"""A top code (many rows at exactly the public max: incomes capped at 250,000 or coded
999,999) and a pile at the min (zero incomes) keep their atoms under private quantile
bins.  The grid's end cells spread each over a cell of hundreds of values (or the top
bin), and the release held almost no row at the top code (0.005% against 9%).  The
schema's min and max are public: the grid gives each a cell of its own, [max, max + 1)
for integers and [max, max] for decimals, whose noisy count the bins then see."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.schema import load_schema


def _incomes(top, integer, n=20000, seed=0):
    r = np.random.default_rng(seed)
    inc = np.exp(r.normal(10.5, 0.8, n)).round(0 if integer else 2).clip(max=top)
    inc[r.random(n) < 0.08] = top
    inc[r.random(n) < 0.2] = 0
    return pd.DataFrame({"income": inc.astype(np.int64) if integer else inc,
                         "k": r.integers(0, 3, n)})


@pytest.mark.parametrize("share", [0.005, 0.5])  # bins laid out publicly; by the data
@pytest.mark.parametrize("integer", [True, False])
@pytest.mark.parametrize("top", [250000, 999999])
def test_a_top_code_and_zeros_keep_their_atoms(top, integer, share):
    import warnings
    df = _incomes(top, integer)
    schema = {"columns": {"income": {"type": "numeric", "integer": integer, "min": 0,
                                     "max": top, "bins": {"private_quantiles": 32}},
                          "k": {"type": "categorical", "values": [0, 1, 2]}}}
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False,
                          quantile_share=share).fit(df, schema).sample(len(df))
    placed = any("placed by the noise" in str(w.message) for w in said)
    assert placed == (share < 0.1)  # both ways of laying the bins out are tested
    for at in (top, 0):
        real, got = (df["income"] == at).mean(), (out["income"] == at).mean()
        assert abs(got - real) < 0.02, (at, real, got)


def test_the_grid_gives_its_ends_cells_of_their_own():
    ints = load_schema({"columns": {"x": {"type": "numeric", "integer": True, "min": 0,
                                          "max": 1000, "bins": {"private_quantiles": 4,
                                                                "grid": 16}}}})["x"].private
    assert ints.grid[:2] == (0, 1) and ints.grid[-2:] == (1000, 1001) and ints.cells == 16
    floats = load_schema({"columns": {"x": {"type": "numeric", "min": 0, "max": 10,
                                            "bins": {"private_quantiles": 4,
                                                     "grid": 8}}}})["x"].private
    assert floats.grid[:2] == (0, 0) and floats.grid[-2:] == (10, 10) and floats.cells == 8


@pytest.mark.parametrize("integer", [True, False])
def test_a_drafted_top_code_under_five_percent_gets_a_bin_of_its_own(integer):
    # a common value gets a bin of its own at 5% of the rows: a top code of 1-4% shared
    # the top bin with the values below it, and none came out at the top code (0.0%)
    from conftest import drafted
    r = np.random.default_rng(0)
    n = 20000
    inc = np.exp(r.normal(10.5, 0.8, n)).round(0 if integer else 2).clip(max=250000)
    inc[r.random(n) < 0.015] = 250000
    df = pd.DataFrame({"income": inc.astype(np.int64) if integer else inc,
                       "k": r.integers(0, 3, n)})
    s, lines = drafted(df)
    assert "250000: " in lines["income"], lines["income"]
    out = Synthesizer(1.0, 1e-9, seed=1, iterations=3, progress=False).fit(
        df, s).sample(n)
    real, got = (df["income"] == 250000).mean(), (out["income"] == 250000).mean()
    assert abs(got - real) < 0.01, (real, got)
    # a column whose max is no spike keeps its bins: values spread evenly
    ages = pd.DataFrame({"v": r.integers(0, 100000, n), "k": r.integers(0, 3, n)})
    assert "bin of its own" not in drafted(ages)[1]["v"]
