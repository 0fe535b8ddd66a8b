import numpy as np
import pandas as pd
import pytest

from conftest import xyz_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.errors import DataError, DPSynError
from gpu_dpsyn.evaluation.evaluate import mean_tvd
from gpu_dpsyn.generate.gum import append_attribute, plan_structure
from gpu_dpsyn.backends.arrays import plan_update
from gpu_dpsyn.privacy import eps_delta_to_rho

COLS = ["month", "dep_delay", "carrier", "origin", "distance", "sched_dep_time", "dest"]
cpu = get_backend("cpu")


@pytest.fixture
def table(flights, flights_schema):
    return flights[COLS], {"columns": {c: flights_schema[c].to_dict() for c in COLS}}


def test_plan_structure_appends_leaves_and_splits_components():
    # a-b, b-c chain plus an isolated pair d-e
    st = plan_structure([(0, 1), (1, 2), (3, 4)], 5)
    assert st.appended == [(0, 0), (2, 1), (3, 2)]
    assert st.gum_targets == []
    st = plan_structure([(0, 1), (1, 2), (0, 2), (3, 4)], 5)
    assert st.appended == [(3, 3)]  # the triangle has no leaf
    assert st.gum_targets == [0, 1, 2] and st.groups[0] == [0, 1, 2]
    st = plan_structure([(0, 1), (1, 2), (0, 2), (3, 4), (4, 5), (3, 5)], 6, scope="component")
    assert st.groups[0] == [0, 1, 2] and st.groups[4] == [3, 4, 5]  # separate and join
    # neighbours: a path 0-1-2-3-4 in a cycle; (0, 1) copies 0, 1 and their neighbours
    cyc = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]
    st = plan_structure(cyc, 6, scope="neighbours")
    assert st.groups[0] == [0, 1, 2, 4]
    assert plan_structure(cyc, 6, scope="component").groups[0] == [0, 1, 2, 3, 4]
    assert plan_structure(cyc, 6, scope="all").groups[0] == [0, 1, 2, 3, 4, 5]  # whole records
    with pytest.raises(ValueError, match="scope"):
        plan_structure(cyc, 6, scope="nope")
    assert plan_structure([(0, 1), (1, 2)], 3, append=False).appended == []


def test_appending_from_a_3way_target_keeps_the_rest_in_gum():
    # x only in (x, y, z): x is appended, and (y, z), the target without x, stays in GUM
    # (else y and z keep independent 1-way draws and the 3-way marginal loses its pairs)
    st = plan_structure([(0, 1, 2), (1, 3), (2, 3)], 4)
    assert st.appended == [(0, 0)]
    assert st.gum_targets == [0, 1, 2] and st.attrs[0] == (1, 2) and st.attrs[1] == (1, 3)
    assert 0 not in st.groups[0] and st.groups[0] == [1, 2, 3]
    st = plan_structure([(0, 1)], 2)  # a 2-way target leaves one attribute: no GUM target
    assert st.appended == [(0, 0)] and st.gum_targets == []


@pytest.mark.parametrize("method", ["privsyn", "dpsyn"])
def test_a_3way_marginal_keeps_every_pair(method):
    df, schema = xyz_table()
    syn = Synthesizer(1.0, 1e-9, seed=0, method=method, iterations=20, progress=False,
                      backend="cpu").fit(df, schema)
    if method == "privsyn":
        assert syn.model.selected == [("x", "y", "z")]  # the triangle became one 3-way marginal
    out = syn.sample()
    for a, b in (("x", "y"), ("x", "z"), ("y", "z")):
        assert (out[a] == out[b]).mean() >= 0.95, (a, b)


def test_duplicate_copies_only_its_component():
    r = np.random.default_rng(0)
    cols = [r.integers(0, 3, 2000).astype(np.uint8) for _ in range(4)]
    before = [c.copy() for c in cols]
    cell, s = cpu.cell_histogram(cols, (0, 1), (3, 3))
    t = r.permutation(s).astype(float)
    add, rem = plan_update(np, s, t, 1.0)
    cpu.gum_apply(cols, (0, 1), (3, 3), cell, s, add, rem, 1.0, (1, 1), 0, 0, copy_cols=[0, 1])
    assert not np.array_equal(cols[0], before[0])
    assert np.array_equal(cols[2], before[2]) and np.array_equal(cols[3], before[3])


def test_append_attribute_samples_the_conditional():
    n = 20000
    y = np.random.default_rng(1).integers(0, 4, n).astype(np.uint8)
    cols = [np.zeros(n, np.uint8), y]
    t = np.zeros((3, 4))  # x = y mod 3 exactly, except y = 3 -> x in {1, 2} half/half
    t[0, 0] = t[1, 1] = t[2, 2] = 100
    t[1, 3] = t[2, 3] = 50
    append_attribute(cpu, cols, 0, (0, 1), (3, 4), t.reshape(-1), (2, 2), 0)
    x = cols[0]
    assert np.array_equal(x[y < 3], y[y < 3])
    assert set(np.unique(x[y == 3])) == {1, 2}
    assert abs(np.mean(x[y == 3] == 1) - 0.5) < 0.03


def test_privsyn_end_to_end(table):
    df, schema = table
    syn = Synthesizer(1.0, 1e-9, seed=3, iterations=10, progress=False).fit(df, schema)
    out = syn.sample()
    rep = syn.privacy_report()
    labels = [e.label for e in syn.ledger]
    assert labels.count("indif") == 1 and rep["method"] == "privsyn"
    frac = {"one": 0.0, "indif": 0.0, "sel": 0.0}
    for e in syn.ledger:
        one_way = e.label == "marginal" and len(e.columns) == 1
        frac["indif" if e.label == "indif" else "one" if one_way else "sel"] += e.fraction
    assert frac == pytest.approx({"one": 0.1, "indif": 0.1, "sel": 0.8})
    assert sum(e.rho for e in syn.ledger) == pytest.approx(eps_delta_to_rho(1.0, 1e-9))
    assert all(1 <= len(m) <= 3 for m in syn.model.selected)
    res = mean_tvd(df, out, syn.model.schema, ways=(1, 2))
    assert res[1] < 0.03 and res[2] < 0.1, res
    # low-count destinations were merged, yet decoded back to real airport codes
    assert syn.model.recodes and set(out["dest"]) <= set(schema["columns"]["dest"]["values"])
    assert out["dest"].nunique() > 30


def test_privsyn_beats_independent_sampling(table):
    df, schema = table
    kw = dict(seed=3, progress=False)
    fitted = Synthesizer(2.0, 1e-9, iterations=20, **kw).fit(df, schema)
    indep = Synthesizer(2.0, 1e-9, iterations=0, **kw).fit(df, schema)
    a = mean_tvd(df, fitted.sample(), fitted.model.schema, ways=(2,))[2]
    b = mean_tvd(df, indep.sample(), indep.model.schema, ways=(2,))[2]
    assert a < 0.6 * b


def test_public_prior_seeds_gum(table):
    df, schema = table
    public = df.iloc[:3000]
    syn = Synthesizer(1.0, 1e-9, seed=1, iterations=0, progress=False,
                      filter_low_counts=False, append_attributes=False)
    out = syn.fit(df.iloc[3000:], schema, public=public).sample(2000)
    # with no GUM iteration the records are resampled public rows (compared as codes:
    # numeric values are redrawn inside their bins)
    from gpu_dpsyn.data.encoding import encode
    pub_rows = set(map(tuple, np.stack(encode(public, syn.model.schema), 1)))
    assert all(tuple(r) in pub_rows for r in np.stack(encode(out, syn.model.schema), 1))
    # and the prior helps: from a public start, GUM ends closer to the private data
    kw = dict(seed=1, iterations=5, progress=False)
    a = Synthesizer(1.0, 1e-9, **kw).fit(df, schema, public=public).sample()
    b = Synthesizer(1.0, 1e-9, **kw).fit(df, schema).sample()
    s = syn.model.schema
    assert mean_tvd(df, a, s, ways=(2,))[2] < mean_tvd(df, b, s, ways=(2,))[2] + 0.005


def test_public_table_must_match_schema(table):
    df, schema = table
    with pytest.raises(DataError, match="public table: .*missing from the data"):
        Synthesizer(1, 1e-9, progress=False).fit(df, schema,
                                                 public=df.drop(columns=["sched_dep_time"]))


def test_workload_gets_forced_and_weighted(table):
    df, schema = table
    syn = Synthesizer(0.3, 1e-9, seed=0, iterations=1, progress=False,
                      workload={("origin", "sched_dep_time"): 5.0,
                                ("month", "carrier", "origin"): 2.0})
    syn.fit(df, schema)
    assert ("origin", "sched_dep_time") in syn.model.selected or \
        ("month", "origin", "sched_dep_time") in syn.model.selected
    assert ("month", "carrier", "origin") in syn.model.selected
    # the selected marginals' one split (the adaptive rounds measure triples from their
    # own share, and measure again with weights over a different set)
    first = syn.ledger[:next((i for i, e in enumerate(syn.ledger) if e.label == "3-way errors"),
                             len(syn.ledger))]
    sel = {e.columns: e for e in first if e.label == "marginal" and len(e.columns) > 1}
    w = sel[("origin", "sched_dep_time")]
    other = next(e for c, e in sel.items() if c not in (("origin", "sched_dep_time"),
                                                        ("month", "carrier", "origin")))
    ratio = (w.fraction / w.cells ** (2 / 3)) / (other.fraction / other.cells ** (2 / 3))
    assert ratio == pytest.approx(5.0)


@pytest.mark.parametrize("workload,err,match", [
    ({("carrier", "nope"): 2}, DataError, "unknown column"),
    ({("carrier",): 0}, DPSynError, "positive"),
    ({("a", "b", "c", "d"): 1}, DPSynError, "1 to 3"),
    ([("carrier",)], DPSynError, "columns, weight"),
])
def test_bad_workload(table, workload, err, match):
    df, schema = table
    with pytest.raises(err, match=match):
        Synthesizer(1, 1e-9, progress=False, workload=workload).fit(df, schema)


def test_privsyn_refuses_laplace():
    with pytest.raises(DPSynError, match="Gaussian"):
        Synthesizer(1, 1e-9, mechanism="laplace")


@pytest.mark.parametrize("method", ["privsyn", "dpsyn"])
def test_one_and_two_column_tables(method, flights, flights_schema):
    for cols in (["carrier"], ["carrier", "origin"]):
        schema = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
        syn = Synthesizer(1.0, 1e-6, seed=0, progress=False, method=method)
        out = syn.fit(flights[cols].iloc[:2000], schema).sample()
        assert list(out.columns) == cols and abs(len(out) - 2000) < 200
        assert sum(e.fraction for e in syn.ledger) == pytest.approx(1.0)
        if method == "privsyn":
            assert ("indif" in [e.label for e in syn.ledger]) == (len(cols) == 2)


def test_one_way_workload_weight_is_used(table):
    # 1-way marginals are always measured; a 1-way workload weight must still count
    df, schema = table
    syn = Synthesizer(0.3, 1e-9, seed=0, iterations=1, progress=False,
                      workload={("carrier",): 4.0}).fit(df, schema)
    one = {e.columns[0]: e for e in syn.ledger if len(e.columns) == 1 and e.label == "marginal"}
    w, other = one["carrier"], one["origin"]
    ratio = (w.fraction / w.cells ** (2 / 3)) / (other.fraction / other.cells ** (2 / 3))
    assert ratio == pytest.approx(4.0)
    assert sum(e.fraction for e in one.values()) == pytest.approx(0.1)


def test_a_workload_naming_a_column_not_synthesized_says_why():
    # '--workload pid,age' said "unknown column(s) ['pid']" of the table's id column
    df = pd.DataFrame({"pid": range(200), "a": [0, 1] * 100, "b": [0, 1, 2, 3] * 50,
                       "gone": 1})
    schema = {"columns": {"pid": {"type": "id"},
                          "a": {"type": "categorical", "values": [0, 1]},
                          "b": {"type": "categorical", "values": [0, 1, 2, 3]}},
              "ignored_columns": ["gone"]}
    for col, why in (("pid", "the id column"), ("gone", "ignored")):
        with pytest.raises(DataError, match=f"'{col}': it is {why}, not synthesized"):
            Synthesizer(1, 1e-9, progress=False, workload={("a", col): 1}).fit(df, schema)
