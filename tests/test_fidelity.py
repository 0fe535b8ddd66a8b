"""evaluate_tables: TVD per k-way marginal with its yardsticks, and Cramér's V."""
import numpy as np
import pandas as pd
import pytest

from conftest import xyz_table
from gpu_dpsyn.evaluation import evaluate
from gpu_dpsyn.evaluation.evaluate import density_score, tvd_codes
from gpu_dpsyn.evaluation.fidelity import evaluate_tables
from gpu_dpsyn.data.schema import load_schema


def _uniform(n, seed, cols=4, values=6):
    r = np.random.default_rng(seed)
    spec = {"type": "numeric", "integer": True, "min": 0, "max": values - 1, "bins": values}
    return (pd.DataFrame({f"c{i}": r.integers(0, values, n) for i in range(cols)}),
            load_schema({"columns": {f"c{i}": spec for i in range(cols)}}))


def test_equal_columns_are_far_from_independent_and_fully_associated():
    df, spec = xyz_table(n=20000, values=8)
    ev = evaluate_tables(df, df, load_schema(spec))
    two = ev.ways[2]
    assert two.tvd.max() == 0
    # x = y: the joint sits on the diagonal, the product of marginals spreads it evenly,
    # TVD 1 - 1/8 (up to the sample's own uneven marginals)
    assert two.independent == pytest.approx(np.full(3, 0.875), abs=0.01)
    assert np.allclose(two.v_real, 1) and np.allclose(two.v_syn, 1)
    assert ev.ways[3].independent == pytest.approx([1 - 1 / 64], abs=0.01)


def test_sampling_level_matches_two_samples_of_one_population():
    # two independent samples of one distribution: their TVD is what the level predicts
    (a, schema), (b, _) = _uniform(3000, 1), _uniform(2000, 2)
    ev = evaluate_tables(a, b, schema)
    for k in (1, 2, 3):
        ratio = ev.ways[k].tvd.mean() / ev.ways[k].sampling.mean()
        assert 0.85 < ratio < 1.15, (k, ratio)
    # and they are independent columns: V near 0, TVD near the independence yardstick's
    assert ev.ways[2].v_real.max() < 0.06
    assert ev.ways[2].independent.mean() < 1.3 * ev.ways[2].sampling.mean()


def test_sparse_counting_gives_the_dense_results(monkeypatch):
    # 60 values: pairs have 3,600 cells, more than 2 per row, so with no dense allowance
    # every marginal is counted over the cells that occur (np.unique)
    (a, schema), (b, _) = _uniform(800, 3, cols=3, values=60), _uniform(700, 4, cols=3,
                                                                          values=60)
    b["c1"] = b["c0"]  # an association to measure
    dense = evaluate_tables(a, b, schema)
    monkeypatch.setattr(evaluate, "_DENSE_CELLS", 0)
    sparse = evaluate_tables(a, b, schema)
    for k in (1, 2, 3):
        for field in ("tvd", "independent", "sampling", "v_real", "v_syn"):
            x, y = getattr(dense.ways[k], field), getattr(sparse.ways[k], field)
            assert (x is None and y is None) or np.allclose(x, y), (k, field)
    assert sparse.ways[2].v_syn.max() == pytest.approx(1)


def test_an_empty_table_is_a_clear_error():
    from gpu_dpsyn.errors import DPSynError
    df, schema = _uniform(10, 0)
    with pytest.raises(DPSynError, match="the synthetic table has no rows"):
        evaluate_tables(df, df.iloc[:0], schema)


def test_a_wide_table_scores_at_most_2000_random_triples_unless_asked(monkeypatch):
    """63 columns: all 39,711 triples made evaluate take longer than synthesize; a random
    2,000 tell the mean to about a thousandth and a half.  Pairs are all scored."""
    import gpu_dpsyn.evaluation.fidelity as fidelity
    monkeypatch.setattr(fidelity, "DEFAULT_TRIPLES", 30)  # the rule, on a small table
    df, schema = _uniform(300, 7, cols=8)  # 56 triples
    ev = evaluate_tables(df, df, schema)
    assert len(ev.ways[3].sets) == 30 and ev.ways[3].total == 56
    assert ev.ways[3].describe() == "30 random of 56 column triples"
    assert len(ev.ways[2].sets) == ev.ways[2].total == 28
    assert len(evaluate_tables(df, df, schema, max_sets=100).ways[3].sets) == 56


def test_max_sets_labels_and_reuses_the_draw_for_the_density_score():
    df, schema = _uniform(400, 5, cols=6)
    syn, _ = _uniform(400, 6, cols=6)
    ev = evaluate_tables(df, syn, schema, max_sets=5)
    three = ev.ways[3]
    assert three.sampled and len(three.sets) == 5 and three.total == 20
    assert three.describe() == "5 random of 20 column triples"
    assert ev.ways[1].describe() == "all 6 columns"
    # the same sets as tvd_codes draws: terminal, report and library agree
    assert three.tvd == pytest.approx(tvd_codes(ev.real, ev.syn, ev.domain, 3, 5))
    assert ev.density_score() == pytest.approx(density_score(ev.real, ev.syn, ev.domain))
    assert three.worst(2)[0][1] == three.tvd.max()
