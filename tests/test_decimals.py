"""A decimal column written to a fixed number of places ("decimals": 1 for a stay of 1.4
days): decoded values keep to it inside their bins, as the data was written (they came
out as 6.53), and infer-schema drafts it."""
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.core import rng
from gpu_dpsyn.data.inference import infer_schema_with_summary
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.generate.decode import decode


def _col(**extra):
    spec = {"type": "numeric", "min": 0, "max": 30, "bins": 12, **extra}
    return load_schema({"columns": {"x": spec}})


@pytest.mark.parametrize("edges,d", [(None, 1), (None, 0), ([0, 0.05, 0.1, 0.5, 30], 1),
                                     ([0, 0.013, 0.0131, 1, 30], 2)])
def test_decoded_values_keep_to_the_places_inside_their_bins(edges, d):
    extra = {"decimals": d} if edges is None else {"decimals": d, "edges": edges}
    if edges is not None:
        extra.update(min=None, max=None, bins=None)
        extra = {k: v for k, v in extra.items() if v is not None}
        s = load_schema({"columns": {"x": {"type": "numeric", **extra}}})
    else:
        s = _col(**extra)
    col = s["x"]
    codes = np.repeat(np.arange(col.bins), 400)
    x = decode([codes], s, seed=3)["x"].to_numpy()
    e = np.asarray(col.edges)
    last = codes == col.bins - 1  # the top bin is closed: the column's max is a value
    assert ((x >= e[codes]) & ((x < e[codes + 1]) | (last & (x <= e[-1])))).all()
    scaled = x * 10.0 ** d
    fits = np.isclose(scaled, np.rint(scaled), rtol=0, atol=1e-6)
    room = np.ceil(e[:-1] * 10 ** d) < e[1:] * 10 ** d  # a value of d places in the bin
    assert fits[room[codes]].all()  # to d places wherever the bin holds such a value
    text = pd.Series(x[room[codes]]).map(repr)
    assert (text.str.split(".").str[1].str.len() <= max(d, 1)).all()


def test_the_columns_max_comes_out():
    """A GPA of 4.00 (2% of the rows) never came out: the top bin was decoded as half-open,
    and 3.995-4.0 rounded down to 3.99."""
    s = load_schema({"columns": {"gpa": {"type": "numeric", "min": 1, "max": 4, "bins": 32,
                                         "decimals": 2}}})
    x = decode([np.full(20000, 31)], s, seed=1)["gpa"].to_numpy()
    assert x.max() == 4.0 and 0.03 < (x == 4.0).mean() < 0.08  # 4.00 holds 0.005 of 0.094
    assert abs((x == 3.99).mean() - (x == 3.95).mean()) < 0.02  # no pile one below it


@pytest.mark.parametrize("spec,match", [
    ({"decimals": -1}, "decimals"), ({"decimals": 16}, "decimals"),
    ({"decimals": 1.5}, "decimals"), ({"decimals": True}, "decimals"),
    ({"decimals": 1, "integer": True}, "integer")])
def test_bad_decimals_are_refused(spec, match):
    with pytest.raises(SchemaError, match=r"'x'.*" + match):
        _col(**spec)


def test_the_schema_keeps_them():
    assert _col(decimals=2)["x"].to_dict()["decimals"] == 2
    assert load_schema(_col(decimals=2).to_dict())["x"].decimals == 2
    assert "decimals" not in _col()["x"].to_dict()


def test_a_draft_reads_the_places_the_values_are_written_to():
    r = np.random.default_rng(0)
    stays = [f"{v:.1f}" for v in r.exponential(3.0, 2000)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, lines = infer_schema_with_summary(pd.DataFrame({"stay": stays,
                                                           "k": np.arange(2000) % 3}))
    assert s["stay"].kind == "numeric" and s["stay"].decimals == 1
    assert "stay.decimals" in s.drafted
    out = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(
        pd.DataFrame({"stay": pd.to_numeric(stays), "k": np.arange(2000) % 3}), s).sample()
    assert (out["stay"].map(repr).str.split(".").str[1].str.len() <= 1).all()
