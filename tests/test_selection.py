import itertools
import math

import numpy as np
import pytest

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.privacy import Accountant
from gpu_dpsyn.selection.greedy import (c23_fractions, combine_cliques, connect_isolated,
    greedy_select, noise_cost)
from gpu_dpsyn.measure.indif import indif, measure_indif

cpu = get_backend("cpu")


def test_indif_closed_forms():
    n = 1000
    dep = [np.repeat([0, 1], n // 2).astype(np.uint8)] * 2  # a == b
    assert indif(cpu, dep, (2, 2), [(0, 1)])[0] == pytest.approx(n)
    a = np.tile([0, 1], n // 2).astype(np.uint8)
    b = np.repeat([0, 1], n // 2).astype(np.uint8)  # exactly independent
    assert indif(cpu, [a, b], (2, 2), [(0, 1)])[0] == pytest.approx(0.0)


def test_indif_sensitivity_is_at_most_4():
    r = np.random.default_rng(0)
    for _ in range(200):
        n = int(r.integers(1, 40))
        a, b = r.integers(0, 3, n).astype(np.uint8), r.integers(0, 4, n).astype(np.uint8)
        x, y = r.integers(0, 3), r.integers(0, 4)
        base = indif(cpu, [a, b], (3, 4), [(0, 1)])[0]
        more = indif(cpu, [np.append(a, x).astype(np.uint8), np.append(b, y).astype(np.uint8)],
                     (3, 4), [(0, 1)])[0]
        assert abs(more - base) <= 4 + 1e-9


def test_indif_measurement_is_charged_with_its_sensitivity():
    acc = Accountant(1.0, 1e-9, sensitivity=2)
    acc.choose_mechanism([1.0], [1], "gaussian")
    cols = [np.zeros(10, np.uint8)] * 3
    pairs, scores = measure_indif(cpu, cols, (2, 2, 2), ["a", "b", "c"], acc, 0.1, (1,) * 8)
    assert pairs == [(0, 1), (0, 2), (1, 2)] and scores.shape == (3,)
    e = acc.ledger[0]
    assert e.label == "indif" and e.rho == pytest.approx(0.1 * acc.rho)
    assert e.sigma == pytest.approx(2 * 4 * math.sqrt(3) / math.sqrt(2 * 0.1 * acc.rho))


def test_noise_cost_closed_form():
    # two marginals of 8 and 27 cells: weights 4 and 9
    assert noise_cost(13.0, 0.5, 1.0) == pytest.approx(math.sqrt(13 / (math.pi * 0.5)) * 13)
    assert noise_cost(13.0, 0.5, 3.0) == pytest.approx(3 * noise_cost(13.0, 0.5, 1.0))


def test_greedy_select_trades_noise_for_dependency():
    scores = np.array([5000.0, 0.0, 3.0, 800.0])
    cells = [100, 100, 100, 100]
    chosen = greedy_select(scores, cells, rho=1.0)
    assert 0 in chosen and 3 in chosen and 1 not in chosen and 2 not in chosen
    assert greedy_select(scores, cells, rho=1e-9) == []  # noise swamps everything
    assert greedy_select(scores, cells, rho=1e-9, forced=[1]) == [1]


def test_connect_isolated_gives_every_attribute_a_pair():
    pairs = list(itertools.combinations(range(4), 2))
    scores = np.array([9.0, 1, 1, 1, 7, 2])  # (0,1) ... (1,3)=7 ... (2,3)=2
    out = connect_isolated([0], pairs, scores, 4)
    covered = {a for i in out for a in pairs[i]}
    # attribute 2's best pair is (2, 3), which also covers 3
    assert covered == {0, 1, 2, 3} and out == [0, pairs.index((2, 3))]


def test_combine_cliques():
    domain = (10, 10, 10, 100)
    m = [(0, 1), (0, 2), (1, 2), (2, 3), (0, 3), (1, 3)]
    out = combine_cliques(m, domain, max_cells=5000)
    assert (0, 1, 2) in out and (0, 1) not in out
    # every triangle with attribute 3 has 10,000 cells: too large to combine
    assert (2, 3) in out and not any(len(x) == 3 and 3 in x for x in out)
    covered = {p for x in out for p in itertools.combinations(x, 2)}
    assert set(m) <= covered


def test_c23_fractions():
    f = c23_fractions([8, 27, 1], 0.8)
    assert sum(f) == pytest.approx(0.8)
    assert f[1] / f[0] == pytest.approx(9 / 4)
    g = c23_fractions([8, 27], 1.0, weights=[3, 1])
    assert g[0] / g[1] == pytest.approx(3 * 4 / 9)


def _greedy_from_scratch(scores, cells, rho, sensitivity=1.0, forced=(), apart=None):
    """greedy_select by its definition: add the open pair whose set has the least noise
    plus unexplained InDif, each set's error summed afresh, while that is less than the
    chosen set's; a pair sharing a pair of columns with a chosen one closes."""
    import itertools
    import math
    from gpu_dpsyn.selection.greedy import noise_cost
    scores = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    w = np.asarray(cells, dtype=np.float64) ** (2.0 / 3.0)

    def err(chosen):
        left = sum(scores[i] for i in range(len(scores)) if i not in chosen)
        ws = sum(w[i] for i in chosen)
        return (noise_cost(ws, rho, sensitivity) if ws else 0.0) + left
    chosen = set(int(i) for i in forced)
    shared = [set(itertools.combinations(r, 2)) for r in apart] if apart is not None else None
    closed = set(chosen)
    while True:
        open_ = [i for i in range(len(scores)) if i not in closed]
        if not open_:
            break
        j = min(open_, key=lambda i: (err(chosen | {i}), i))
        if not err(chosen | {j}) < err(chosen) - 1e-9 * max(1.0, math.fabs(err(chosen))):
            break
        chosen.add(j)
        closed.add(j)
        if shared is not None:
            closed |= {i for i in open_ if shared[i] & shared[j]}
    return sorted(chosen)


def test_selection_steps_as_their_first_forms():
    """greedy_select, connect_isolated and combine_cliques, rewritten not to grow with
    every pair or triple of columns (300 columns: 44,850 pairs, 4.5 million triples),
    choose as their definitions say: greedy_select's sets' errors summed afresh, the
    others' every candidate against every other."""
    import itertools
    from gpu_dpsyn.selection.greedy import combine_cliques, connect_isolated, greedy_select
    rng = np.random.default_rng(0)
    for trial in range(60):
        d = int(rng.integers(3, 14))
        pairs = list(itertools.combinations(range(d), 2))
        scores = rng.exponential(50, len(pairs)) * (rng.random(len(pairs)) < 0.6)
        cells = rng.integers(4, 400, len(pairs))
        rho = float(rng.choice([0.01, 0.1, 1.0]))
        forced = list(rng.choice(len(pairs), int(rng.integers(0, 3)), replace=False))
        apart = pairs if trial % 2 else None
        got = greedy_select(scores, cells, rho, 1.0, forced, apart)
        assert got == _greedy_from_scratch(scores, cells, rho, 1.0, forced, apart)
        want = list(got)
        covered = {a for i in want for a in pairs[i]}
        for a in range(d):
            mine = [i for i, p in enumerate(pairs) if a in p]
            if a in covered or not mine:
                continue
            best = max(mine, key=lambda i: scores[i])
            want.append(best)
            covered.update(pairs[best])
        sel = connect_isolated(got, pairs, scores, d)
        assert sel == sorted(set(want))
        plan = [pairs[i] for i in sel]
        dom = list(rng.integers(2, 30, d))
        tris = [t for t in itertools.combinations(range(d), 3)
                if all(p in set(plan) for p in itertools.combinations(t, 2))]
        tris.sort(key=lambda t: (int(np.prod([dom[a] for a in t])), t))
        left, out = set(plan), []
        for t in tris:
            sub = list(itertools.combinations(t, 2))
            if np.prod([dom[a] for a in t]) <= 2000 and all(p in left for p in sub):
                out.append(t)
                left -= set(sub)
        assert combine_cliques(plan, dom, 2000) == sorted(out + sorted(left),
                                                         key=lambda m: (len(m), m))


def test_combine_cliques_only_where_the_triples_cells_stand_out_of_their_noise():
    """A triangle becomes its triple only where rows / c reaches floor(c, share), share the
    triple's c^(2/3) part of the plan it would make (as c23_fractions splits a budget)."""
    domain = (5, 32, 28, 4, 6)
    m = [(0, 1), (0, 2), (1, 2), (3, 4), (0, 3)]
    rest = [(3, 4), (0, 3)]
    share = c23_fractions([5 * 32 * 28] + [24, 20], 1.0)[0]  # the plan with the triple
    seen = []

    def floor(c, s):
        seen.append((c, s))
        return 2.0 / math.sqrt(s)
    need = 5 * 32 * 28 * 2.0 / math.sqrt(share)
    for rows, combined in ((need * 0.99, False), (need * 1.01, True)):
        seen.clear()
        out = combine_cliques(m, domain, 5000, rows, floor)
        assert ((0, 1, 2) in out) is combined
        assert all(p in out for p in rest) and ((0, 1) in out) is not combined
        assert seen[0][0] == 4480 and seen[0][1] == pytest.approx(share)
    assert combine_cliques(m, domain, 5000) == combine_cliques(m, domain, 5000, 1.0, None)


def test_a_triple_whose_cells_hold_less_than_their_noise_is_not_combined():
    """Three columns that copy one another close a triangle; at 16 x 16 x 16 cells and
    2,000 rows (about half a row a cell) the triple is not measured and its pairs are, at
    eps 1; with 60,000 rows at eps 8 it is."""
    import pandas as pd
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema({"columns": {c: {"type": "categorical", "values": list(range(16))}
                                      for c in "abc"}})
    for n, eps, triple in ((2000, 1.0, False), (60000, 8.0, True)):
        r = np.random.default_rng(0)
        a = r.integers(0, 16, n)
        df = pd.DataFrame({"a": a, "b": (a + r.integers(0, 2, n)) % 16,
                           "c": (a + r.integers(0, 2, n)) % 16})
        with pytest.warns(Warning):
            model = Synthesizer(eps, 1e-9, seed=0, progress=False, adaptive_rounds=0) \
                .fit(df, schema).model
        assert (("a", "b", "c") in model.selected) is triple, model.selected
        assert triple or {("a", "b"), ("a", "c"), ("b", "c")} <= set(model.selected)


def _greedy_every_step(scores, cells, rho, sensitivity=1.0, forced=(), apart=None):
    """greedy_select as it was (a5bcb76): every candidate's new error at each step, the
    first minimum (the loop kept as greedy._greedy_plain, for inputs the grouped form
    cannot order); the form its grouped steps must match choice for choice.  (Both are
    checked against the errors summed afresh: test_selection_steps_as_their_first_forms.)"""
    from gpu_dpsyn.selection.greedy import _greedy_plain, noise_cost
    scores = np.maximum(np.asarray(scores, dtype=np.float64), 0.0)
    w = np.asarray(cells, dtype=np.float64) ** (2.0 / 3.0)
    chosen = np.zeros(len(scores), dtype=bool)
    chosen[list(forced)] = True
    wsum, left = float(w[chosen].sum()), float(scores[~chosen].sum())
    err = noise_cost(wsum, rho, sensitivity) + left if wsum else left
    return _greedy_plain(scores, w, rho, sensitivity, chosen, apart, wsum, left, err)


@pytest.mark.parametrize("ties", ["integers", "reals", "few", "rounded"])
def test_greedy_select_chooses_as_every_step_did(ties):
    # the grouped form against the old loop, exactly: integer scores (floored InDif)
    # and few distinct cells tie often, and a tie goes to the lowest index
    from gpu_dpsyn.selection.greedy import greedy_select
    rng = np.random.default_rng(["integers", "reals", "few", "rounded"].index(ties))
    for trial in range(80):
        d = int(rng.integers(3, 14 if ties == "rounded" else 30))  # (all chosen: slow)
        k = 3 if trial % 3 == 0 else 2
        sets = list(itertools.combinations(range(d), k))
        n = len(sets)
        if ties == "integers":
            scores = rng.integers(-20, 200, n).astype(float)
        elif ties == "reals":
            scores = rng.exponential(50, n) * (rng.random(n) < 0.7)
        elif ties == "few":
            scores = rng.choice([0.0, 5.0, 40.0, 41.0, 300.0], n)
        else:  # so large that scores 1 apart have the same new error (its sum rounds)
            scores = 2.0 ** 52 + rng.integers(0, 6, n)
        cells = rng.choice(rng.integers(4, 300, int(rng.integers(1, 8))), n)
        rho = float(rng.choice([0.001, 0.01, 0.1, 1.0, 10.0]))
        sens = float(rng.choice([1.0, 4.0]))
        forced = list(rng.choice(n, min(n, int(rng.integers(0, 4))), replace=False))
        apart = sets if trial % 2 else None
        want = _greedy_every_step(scores, cells, rho, sens, forced, apart)
        assert greedy_select(scores, cells, rho, sens, forced, apart) == want
    assert greedy_select([], [], 1.0) == []
    nan = np.array([1.0, np.nan, 30.0, 4.0])
    assert greedy_select(nan, [4, 4, 9, 9], 0.1) == \
        _greedy_every_step(nan, [4, 4, 9, 9], 0.1)
