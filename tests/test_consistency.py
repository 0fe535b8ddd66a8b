import numpy as np
import pytest

from gpu_dpsyn.estimate.consistency import (_subsets, consist, make_consistent, norm_cut,
    norm_sub)
from gpu_dpsyn.core.types import Marginal
from gpu_dpsyn.selection.greedy import dpsyn_plan


def test_norm_sub_is_the_simplex_projection():
    v = np.array([5.0, -2.0, 3.0, 0.5, -1.0])
    x = norm_sub(v, 6.0)
    assert x.sum() == pytest.approx(6.0) and x.min() >= 0
    # KKT: x = max(v - theta, 0) with one theta: positive cells share the same shift
    shift = (v - x)[x > 0]
    assert np.allclose(shift, shift[0])
    assert np.all(v[x == 0] <= shift[0] + 1e-12)
    assert np.array_equal(norm_sub(v, -1.0), np.zeros(5))


def test_norm_cut_keeps_total_and_cuts_smallest():
    v = np.array([10.0, -3.0, 1.0, 2.0, 5.0])
    x = norm_cut(v)
    assert x.sum() == pytest.approx(v.sum()) and x.min() >= 0
    assert x.tolist() == [10.0, 0.0, 0.0, 0.0, 5.0]
    assert np.array_equal(norm_cut(np.array([1.0, 2.0])), [1.0, 2.0])


def test_subsets_of_pairs():
    ms = [Marginal(a, (2,) * len(a), np.zeros(2 ** len(a)), 1.0) for a in [(0, 1), (1, 2), (0, 2)]]
    assert _subsets(ms) == [(), (0,), (1,), (2,)]


def _noisy(rng, shape_of, sigma, truth):
    out = []
    for attrs in dpsyn_plan(len(shape_of)):
        t = truth.sum(axis=tuple(i for i in range(truth.ndim) if i not in attrs)).reshape(-1)
        out.append(Marginal(attrs, tuple(shape_of[a] for a in attrs),
                            t + rng.normal(0, sigma, t.size), sigma))
    return out


def test_consistency_makes_projections_agree():
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 50, (3, 4, 5)).astype(float)
    ms = _noisy(rng, (3, 4, 5), 5.0, truth)
    total = make_consistent(ms)
    one = {m.attrs[0]: m.values for m in ms if len(m.attrs) == 1}
    for m in ms:
        assert m.values.min() >= 0
        assert m.values.sum() == pytest.approx(total, rel=1e-9)
        for i, a in enumerate(m.attrs):
            proj = m.table().sum(axis=tuple(j for j in range(len(m.attrs)) if j != i))
            assert np.allclose(proj, one[a], atol=0.02 * total / proj.size)
    assert total == pytest.approx(truth.sum(), rel=0.05)


def test_exact_marginals_are_left_alone():
    truth = np.random.default_rng(1).integers(1, 30, (2, 3, 4)).astype(float)
    ms = _noisy(np.random.default_rng(2), (2, 3, 4), 0.0, truth)
    before = [m.values.copy() for m in ms]
    make_consistent(ms)
    for m, b in zip(ms, before):
        assert np.allclose(m.values, b)


def test_weighted_mean_uses_inverse_variance():
    # two 1-way views of attribute 0 with totals 100 and 200: weights 1/1 and 1/4
    a = Marginal((0,), (2,), np.array([50.0, 50.0]), 1.0)
    b = Marginal((0, 1), (2, 1), np.array([100.0, 100.0]), 2.0)
    consist([a, b], [(), (0,)])
    w_tot = (1 * 100 + 0.25 * 200) / 1.25
    assert a.values.sum() == pytest.approx(w_tot) and b.values.sum() == pytest.approx(w_tot)
    assert np.allclose(a.values, b.values)


def _subsets_by_closure(sets) -> list:
    """The intersections closed pairwise until nothing new (the first form: quadratic)."""
    import itertools
    sets = {frozenset(s) for s in sets}
    found = {a & b for a, b in itertools.combinations(sets, 2)}
    frontier = set(found)
    while frontier:
        new = {x & y for x in frontier for y in found} - found
        found |= new
        frontier = new
    found.add(frozenset())
    return sorted((tuple(sorted(s)) for s in found), key=lambda s: (len(s), s))


def _random_marginals(rng, columns: int, most: int, least: int) -> tuple:
    """(column sets, marginals on them): up to `most` sets of `least` to 3 of 2 ..
    `columns` - 1 columns."""
    from gpu_dpsyn.core.types import Marginal
    d = int(rng.integers(2, columns))
    sets = [tuple(sorted(rng.choice(d, int(rng.integers(least, min(d, 3) + 1)),
                                    replace=False)))
            for _ in range(int(rng.integers(1, most)))]
    return sets, [Marginal(s, (2,) * len(s), np.ones(2 ** len(s)), 1.0) for s in sets]


def test_subsets_are_the_closure_of_the_pairwise_intersections():
    rng = np.random.default_rng(0)
    for trial in range(300):
        sets, ms = _random_marginals(rng, 12, 25, 1)
        assert _subsets(ms) == _subsets_by_closure(sets), sets


def test_top_is_the_marginals_inside_no_other():
    from gpu_dpsyn.estimate.targets import top
    rng = np.random.default_rng(1)
    for trial in range(300):
        sets, ms = _random_marginals(rng, 10, 20, 0)
        want = [m for m in ms if not any(set(m.attrs) < set(o.attrs) for o in ms)]
        assert [id(m) for m in top(ms)] == [id(m) for m in want], sets


def _consist_as_it_was(marginals, subsets, total=None) -> None:
    """consist as it was (a5bcb76), plan and pass: each marginal's projection, the
    weighted mean and the change, one marginal at a time; the definition its batched
    form must match bit for bit."""
    from gpu_dpsyn.core.summing import left_sum
    for sub in subsets:
        views = [m for m in marginals if set(sub) <= set(m.attrs)]
        if len(views) < 2 and (sub or total is None):
            continue
        entries = []
        for m in views:
            collapsed = m.cells // int(np.prod([m.shape[m.attrs.index(a)] for a in sub]
                                               or [1]))
            axes = tuple(i for i, a in enumerate(m.attrs) if a not in sub)
            shape = [d if a in sub else 1 for a, d in zip(m.attrs, m.shape)]
            share, noisy = None, collapsed
            if m.spread is not None:
                spread = m.spread.reshape(m.shape)
                kept = spread.sum(axis=axes, keepdims=True) if axes else spread
                share = spread / kept
                noisy = kept.reshape([d for a, d in zip(m.attrs, m.shape) if a in sub])
            entries.append((m, axes, m.weight / noisy, collapsed, shape, share))
        proj = [m.table().sum(axis=axes) if axes else m.table() for m, axes, *_ in entries]
        if not sub and total is not None:
            target = np.asarray(float(total))
        else:
            target = left_sum(e[2] * p for e, p in zip(entries, proj)) / \
                left_sum(e[2] for e in entries)
        for (m, _, _, c, shape, share), p in zip(entries, proj):
            if share is None:
                diff = ((target - p) / c).reshape(shape)
            else:
                diff = (target - p).reshape(shape) * share
            m.values = (m.table() + diff).reshape(-1)


def _family(rng):
    """Random marginals: singles, pairs and triples over up to 9 columns (overlapping
    triples make 2-way subsets), some exact, some with merged values (spread)."""
    import itertools
    d = int(rng.integers(3, 10))
    dom = rng.integers(1, 7, d)
    sets = [s for k in (1, 2, 3) for s in itertools.combinations(range(d), k)
            if rng.random() < (0.5, 0.4, 0.15)[k - 1]]
    out = []
    for s in sets or [(0,), (0, 1)]:
        shape = tuple(int(dom[a]) for a in s)
        n = int(np.prod(shape))
        sigma = float(rng.choice([0.0, 0.5, 3.0, 10.0]))
        spread = rng.integers(1, 4, n).astype(float) if rng.random() < 0.2 else None
        out.append(Marginal(s, shape, rng.normal(20, 15, n), sigma, spread))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_consist_matches_its_first_form_bit_for_bit(seed, monkeypatch):
    import copy
    from gpu_dpsyn.estimate import consistency
    if seed % 2:  # every marginal's change broadcast over its table, none by its index
        monkeypatch.setattr(consistency, "GATHER_CELLS", 0)
    rng = np.random.default_rng(seed)
    for trial in range(25):
        ms = _family(rng)
        subsets = _subsets(ms)
        total = None if trial % 3 else float(rng.normal(500, 50))
        want, got = copy.deepcopy(ms), copy.deepcopy(ms)
        from gpu_dpsyn.estimate.consistency import consist_plan
        plan = consist_plan(got, subsets, total)
        for _ in range(3):
            _consist_as_it_was(want, subsets, total)
            consist(got, subsets, total, plan)
            for m in want + got:  # as make_consistent's rounds do between passes
                m.values = norm_sub(m.values)
        for a, b in zip(want, got):
            assert a.values.tobytes() == b.values.tobytes(), (trial, a.attrs)
