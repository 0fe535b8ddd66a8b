"""Grouped synthesis: group_by levels, checks before any charge, per-group counts."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, DPSynError, SchemaError
from gpu_dpsyn.evaluation.fidelity import group_tvd
from gpu_dpsyn.core.grouping import group_code, parse_group_by, split_group
from gpu_dpsyn.data.schema import load_schema

GROUPS = ["a", "b", "c", "d"]
SPEC = {"type": "numeric", "integer": True, "min": 0, "max": 3}
SCHEMA = {"columns": {"g": {"type": "categorical", "values": GROUPS},
                      "h": {"type": "categorical", "values": ["p", "q"]},
                      "x": SPEC, "y": SPEC, "z": SPEC}}


def _table(n=8000, seed=0):
    """Groups that differ: group k has 10k+10% of the rows and y = x + k (mod 4) in it."""
    r = np.random.default_rng(seed)
    g = r.choice(4, n, p=[0.1, 0.2, 0.3, 0.4])
    x = r.integers(0, 4, n)
    return pd.DataFrame({"g": np.array(GROUPS)[g], "h": np.where(r.random(n) < 0.5, "p", "q"),
                         "x": x, "y": (x + g) % 4, "z": r.integers(0, 4, n)})


def _fit(df, **kw):
    kw = {"seed": 0, "iterations": 15, "progress": False, "backend": "cpu", **kw}
    return Synthesizer(2.0, 1e-9, **kw).fit(df, SCHEMA)


def test_group_by_forms():
    assert parse_group_by(None) == []
    assert parse_group_by("g") == [("g",)]
    assert parse_group_by(["g", "h"]) == [("g", "h")]
    assert parse_group_by([["g"], ["h", "x"]]) == [("g",), ("h", "x")]
    for bad, match in (([], "column name"), ([["g"], []], "non-empty"), ([["g"], "g"], "twice"),
                       (3, "column name"), ([["g"], [1]], "non-empty")):
        with pytest.raises(DPSynError, match=match):
            parse_group_by(bad)


def test_group_code_round_trip():
    r = np.random.default_rng(0)
    domain = (3, 5, 7)
    cols = [r.integers(0, d, 100).astype(np.uint8) for d in domain]
    g = group_code(np, cols, (0, 2), domain)
    assert g.dtype == np.uint8 and g.max() < 21
    assert np.array_equal(g, cols[0] * 7 + cols[2])
    out = [np.zeros(100, np.uint8) for _ in domain]
    split_group(np, g, (0, 2), domain, out)
    assert np.array_equal(out[0], cols[0]) and np.array_equal(out[2], cols[2])


@pytest.mark.parametrize("kw,err,match", [
    (dict(group_by=["nope"]), SchemaError, "not a synthesized column"),
    (dict(group_by=["x"]), SchemaError, "categorical with its values listed"),
    (dict(group_by=["g"], workload={("x", "y", "z"): 2}), DPSynError, "at most 2 columns"),
    (dict(group_by=[["g"], ["h"]], max_cells=20), DataError, "max_cells"),
    (dict(group_by=[["g"], ["h"]], max_cells=100, workload={("x", "y"): 2}), DataError,
     "g \\(4 values\\), h \\(2 values\\), x \\(4 values\\), y \\(4 values\\) has 128"),
])
def test_bad_groups_are_refused_before_any_charge(kw, err, match):
    syn = Synthesizer(1, 1e-9, progress=False, **kw)
    with pytest.raises(err, match=match):
        syn.fit(_table(200), SCHEMA)
    assert syn.ledger == []


def test_a_group_by_of_every_column_is_refused():
    syn = Synthesizer(1, 1e-9, progress=False, group_by=[["g"], ["h"]])
    with pytest.raises(DPSynError, match="every column"):
        syn.fit(_table(200)[["g", "h"]], {"columns": {c: SCHEMA["columns"][c] for c in "gh"}})
    assert syn.ledger == []


def test_group_by_refusals():
    with pytest.raises(DPSynError, match="privsyn"):
        Synthesizer(1, 1e-9, method="dpsyn", group_by=["g"])
    syn = Synthesizer(1, 1e-9, progress=False, group_by=["g"])
    with pytest.raises(DPSynError, match="in memory"):  # before the path is read
        syn.fit("no/such/table.csv", SCHEMA)


def test_every_marginal_holds_the_group_and_levels_share_the_budget():
    syn = _fit(_table(), group_by=[["g"], ["h"]])
    assert [lv.group for lv in syn.model.levels] == [(0,), (0, 1)]  # cumulative: g, then g x h
    marg = [e for e in syn.ledger if e.label == "marginal"]
    first = [e for e in marg if e.columns[-1] == "g"]
    second = [e for e in marg if e.columns[-1] == "g x h"]
    assert len(first) + len(second) == len(marg)  # every marginal is measured per group
    assert {e.columns[0] for e in first if len(e.columns) == 2} == {"h", "x", "y", "z"}
    assert {e.columns[0] for e in second if len(e.columns) == 2} == {"x", "y", "z"}
    assert "indif" in [e.label for e in syn.ledger]
    indif = next(e for e in syn.ledger if e.label == "indif")
    assert indif.fraction == pytest.approx(0.1)
    assert sum(e.fraction for e in first) == pytest.approx(0.45)  # sequential: half each
    assert sum(e.fraction for e in second) == pytest.approx(0.45)
    rep = syn.privacy_report()
    assert rep["group_by"] == [["g"], ["h"]] and "one group" in rep["grouping"]
    with pytest.raises(DPSynError, match="sample\\(n\\)"):
        syn.sample_to("/tmp/never-written", 100)


def test_grouped_synthesis_keeps_each_groups_own_relationship():
    df = _table()
    sch = load_schema(SCHEMA)
    real = encode(df, sch)
    tvd = {}
    for by in (None, ["g"]):
        # ungrouped without the adaptive rounds: pairs alone cannot hold (g, x, y), which
        # the rounds' 3-way marginals do ungrouped too, and without the Gibbs sweep, whose
        # maximum-entropy draws recover part of it from the pairs
        syn = _fit(df, group_by=by) if by else _fit(df, adaptive_rounds=0,
                                                       gibbs_sweep=False)
        out = syn.sample()
        per = group_tvd(real, encode(out, syn.model.schema), sch.domain, [0], max_pairs=None)
        assert [p["group"] for p in per] == [(3,), (2,), (1,), (0,)]  # largest first
        tvd[by is not None] = per
    # within each group y = x + k: grouped, (x, y) per group is close to the real one
    out = _fit(df, group_by=["g"]).sample()
    for k, name in enumerate(GROUPS):
        part = out[out.g == name]
        assert ((part.x + k) % 4 == part.y).mean() > 0.85, name
        assert abs(len(part) - (df.g == name).sum()) < 0.05 * len(df)  # its noisy count
    assert np.mean([p["tvd_2way"] for p in tvd[True]]) < \
        np.mean([p["tvd_2way"] for p in tvd[False]])


def test_group_tvd_scores_a_missing_group_one():
    sch = load_schema(SCHEMA)
    df = _table(400)
    real = encode(df, sch)
    per = group_tvd(real, encode(df[df.g != "a"], sch), sch.domain, [0])
    assert {p["group"]: p["tvd_2way"] for p in per}[(0,)] == 1.0
    assert all(p["tvd_2way"] == pytest.approx(0.0) for p in per if p["group"] != (0,))


def test_group_columns_are_never_merged_as_low_counts():
    df = _table(3000)
    df.loc[3:, "g"] = df.loc[3:, "g"].replace({"a": "b", "c": "d"})
    df.loc[:2, "g"] = ["a", "c", "c"]  # "a" and "c": 3 rows, far below 3 sigma
    df["z"] = np.where(np.arange(3000) < 3, df["z"] % 2, 2 + df["z"] % 2)  # z 0, 1: rare
    # g groups the second level: at the first it is an ordinary column, yet kept whole
    syn = Synthesizer(0.5, 1e-9, seed=0, iterations=2, progress=False,
                      group_by=[["h"], ["g"]]).fit(df, SCHEMA)
    assert 0 not in syn.model.recodes and syn.model.domain[0] == 4  # g: public groups stay whole
    assert 4 in syn.model.recodes and syn.model.domain[4] == 3  # z's rare values are merged as usual


def test_a_pair_too_large_at_a_finer_level_is_left_out_not_refused_after_charges():
    # g x (x, y) fits max_cells (64 <= 100), g x h x (x, y) does not (128): the second
    # level must choose without it instead of failing with the first level spent
    syn = _fit(_table(3000), group_by=[["g"], ["h"]], max_cells=100)
    assert sum(e.fraction for e in syn.ledger) == pytest.approx(1.0)
    assert max(e.cells for e in syn.ledger) <= 100


def test_a_grouped_sample_counts_its_group_code_in_memory(monkeypatch):
    """A grouped level's GUM holds one more column (the group code, built in int64): the
    memory check before sampling counts it, so a size that fits ungrouped may not."""
    from gpu_dpsyn.generate import sample as sampling
    from gpu_dpsyn.errors import DataError
    sch = load_schema(SCHEMA)
    n = 10 ** 6
    per_row = sum(sampling.code_dtype(d).itemsize for d in sch.domain) \
        + sampling.WORK_BYTES_PER_ROW + sampling.OUTPUT_BYTES_PER_CELL * len(sch.domain)
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: n * (per_row + 1))
    kw = {"progress": False, "backend": "cpu"}
    assert Synthesizer(2.0, 1e-9, **kw).check_sample(n, SCHEMA) == n
    with pytest.raises(DataError, match=r"^sample\(1,000,000\) needs about"):
        Synthesizer(2.0, 1e-9, group_by=["g"], **kw).check_sample(n, SCHEMA)
