"""The neighbour shuffle after GUM (gpu_dpsyn/shuffle.py): every target's histogram is
kept exactly, each column ends independent of its non-neighbours given its neighbours,
the permutation inside a stratum is uniform, and the same key gives the same records."""
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import small_table, xor_table
from stats_util import CHI2_1E6

from gpu_dpsyn.generate import records
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.privacy.keys import SeededNoiseWarning
from gpu_dpsyn.generate.shuffle import neighbour_shuffle, neighbours, shuffle_within, strata

BE = get_backend("cpu")
KEY = (12345, 678)


def hist(cols, attrs, sizes):
    idx = np.ravel_multi_index([cols[a] for a in attrs], [sizes[a] for a in attrs])
    return np.bincount(idx, minlength=math.prod(sizes[a] for a in attrs))


def clumped(n, sizes, seed=0):
    """Records drawn from few donors (what GUM's Duplicates leave): strong dependence
    between every pair of columns."""
    r = np.random.default_rng(seed)
    donors = np.stack([r.integers(0, s, 40) for s in sizes])
    pick = r.integers(0, 40, n)
    return [np.ascontiguousarray(donors[j][pick].astype(np.int32)) for j in range(len(sizes))]


def test_every_target_histogram_is_kept_exactly_and_records_move():
    sizes = [3, 4, 2, 5, 3, 6]
    targets = [(0, 1), (1, 2, 3), (3, 4), (5,), (0, 4)]
    cols = clumped(5000, sizes)
    before = [c.copy() for c in cols]
    neighbour_shuffle(BE, cols, targets, sizes, KEY, 0)
    for t in targets:
        assert np.array_equal(hist(cols, t, sizes), hist(before, t, sizes)), t
    moved = sum(int((a != b).sum()) for a, b in zip(cols, before))
    assert moved > 5000  # not vacuous: values changed records
    # a projection no target holds does change: (2, 5) share no target
    assert not np.array_equal(hist(cols, (2, 5), sizes), hist(before, (2, 5), sizes))


def g_statistic(a, c, b, sa, sc, sb):
    """2 n I(a; c | b), plug-in: chi-square with (sa - 1)(sc - 1) sb degrees of freedom
    under conditional independence."""
    t = np.zeros((sb, sa, sc))
    np.add.at(t, (b, a, c), 1)
    nb = t.sum(axis=(1, 2), keepdims=True)
    pa, pc = t.sum(axis=2, keepdims=True), t.sum(axis=1, keepdims=True)
    expected = pa * pc / np.where(nb > 0, nb, 1)
    m = t > 0
    return float(2 * (t[m] * np.log(t[m] / expected[m])).sum())


def test_a_column_ends_independent_of_its_non_neighbours_given_its_neighbours():
    # targets (a, b) and (b, c): the maximum-entropy model has a independent of c given
    # b; the records start with c a copy of a (no target holds that)
    r = np.random.default_rng(3)
    n, sizes = 20000, [3, 4, 3]
    b = r.integers(0, 4, n)
    a = (b + r.integers(0, 2, n)) % 3
    cols = [a.astype(np.int32), b.astype(np.int32), a.astype(np.int32).copy()]
    df = 2 * 2 * 4
    assert g_statistic(cols[0], cols[2], cols[1], 3, 3, 4) > 10 * CHI2_1E6[16]
    neighbour_shuffle(BE, cols, [(0, 1), (1, 2)], sizes, KEY, 0)
    assert df == 16 and g_statistic(cols[0], cols[2], cols[1], 3, 3, 4) < CHI2_1E6[16]
    assert np.array_equal(hist(cols, (0, 1), sizes), np.bincount(a * 4 + b, minlength=12))


def test_the_permutation_inside_a_stratum_is_uniform():
    # one stratum of 3 records (the column shares no target): 6 orders, equally likely
    counts = {}
    for call in range(6000):
        cols = [np.array([0, 1, 2], dtype=np.int32)]
        neighbour_shuffle(BE, cols, [(0,)], [3], KEY, call)
        counts[tuple(cols[0])] = counts.get(tuple(cols[0]), 0) + 1
    assert sorted(counts) == sorted(itertools.permutations(range(3)))
    obs = np.array(list(counts.values()), dtype=float)
    assert ((obs - 1000) ** 2 / 1000).sum() < CHI2_1E6[5]


def test_same_key_and_call_same_records_another_call_others():
    sizes = [3, 4, 5]
    runs = []
    for call in (0, 0, 1):
        cols = clumped(3000, sizes, seed=1)
        neighbour_shuffle(BE, cols, [(0, 1)], sizes, KEY, call)
        runs.append(cols)
    assert all(np.array_equal(x, y) for x, y in zip(runs[0], runs[1]))
    assert not all(np.array_equal(x, y) for x, y in zip(runs[0], runs[2]))


def test_strata_ids_are_equal_iff_the_values_are_past_the_int64_radix():
    r = np.random.default_rng(0)
    sizes = [2 ** 40, 2 ** 40, 3, 2 ** 30]  # their product is far past 2^63
    cols = [r.integers(0, 3, 4000) for _ in sizes]
    ids = strata(np, cols, [0, 1, 2, 3], sizes)
    _, want = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
    _, got = np.unique(ids, return_inverse=True)
    # the same partition of the records: a bijection between the two labellings
    pairs = set(zip(want.reshape(-1).tolist(), got.tolist()))
    assert len(pairs) == len(set(want.reshape(-1).tolist())) == len(set(got.tolist()))


def test_a_later_sweep_of_the_same_call_draws_other_keys():
    sizes = [3, 4, 2]
    runs = []
    for sweep in (0, 0, 1):
        cols = clumped(3000, sizes, seed=4)
        neighbour_shuffle(BE, cols, [(0, 1)], sizes, KEY, 7, sweep=sweep)
        runs.append(cols)
    assert all(np.array_equal(a, b) for a, b in zip(runs[0], runs[1]))
    assert any(not np.array_equal(a, b) for a, b in zip(runs[0], runs[2]))


def test_neighbours_are_the_columns_sharing_a_target():
    assert neighbours([(0, 1), (1, 2, 3), (4,)], 5) == [[1], [0, 2, 3], [1, 3], [1, 2], []]


def run_fit(monkeypatch, **kw):
    """Fit and sample with the shuffle wrapped: what it was given and what it returned."""
    seen = []

    def spy(backend, cols, targets, sizes, key, call, **more):
        before = [c.copy() for c in cols]
        neighbour_shuffle(backend, cols, targets, sizes, key, call, **more)
        seen.append((targets, list(sizes), before, [c.copy() for c in cols]))
    monkeypatch.setattr(records, "neighbour_shuffle", spy)
    df, schema = kw.pop("table", None) or small_table(800)
    public = kw.pop("public", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        syn = Synthesizer(8.0, 1e-6, seed=2, backend="cpu", progress=False,
                          **{"gibbs_sweep": False, "polish": False, **kw})  # its second
        # shuffle, after either of them: test_gibbs, test_polish
        syn.fit(df, schema, public=None if public is None else df.iloc[:public])
        syn.sample()
    return seen


def test_the_synthesizer_shuffles_after_gum_and_keeps_its_targets(monkeypatch):
    seen = run_fit(monkeypatch, adaptive_rounds=0)
    assert len(seen) == 1  # the one sample (no rounds)
    targets, sizes, before, after = seen[0]
    assert any(len(t) > 1 for t in targets)
    for t in targets:
        assert np.array_equal(hist(after, t, sizes), hist(before, t, sizes))
    assert any(not np.array_equal(a, b) for a, b in zip(after, before))


def test_the_adaptive_rounds_records_are_shuffled_too(monkeypatch):
    df, schema = xor_table(6000)
    seen = run_fit(monkeypatch, table=(df, schema))  # the rounds' records, then the sample
    assert len(seen) >= 2
    for targets, sizes, before, after in seen:
        for t in targets:
            assert np.array_equal(hist(after, t, sizes), hist(before, t, sizes))


def test_each_of_two_strata_is_permuted_uniformly_and_apart():
    counts = [{}, {}]
    stratum = np.array([0, 0, 0, 1, 1, 1], dtype=np.int64)
    for call in range(6000):
        cols = [np.array([0, 1, 2, 3, 4, 5], dtype=np.int32)]
        shuffle_within(BE, cols, stratum, 0, KEY, call)
        for g in range(2):
            counts[g][tuple(cols[0][3 * g:3 * g + 3])] = \
                counts[g].get(tuple(cols[0][3 * g:3 * g + 3]), 0) + 1
    for g, c in enumerate(counts):
        assert sorted(c) == sorted(itertools.permutations(range(3 * g, 3 * g + 3)))
        obs = np.array(list(c.values()), dtype=float)
        assert ((obs - 1000) ** 2 / 1000).sum() < CHI2_1E6[5]


@pytest.mark.parametrize("kw", [dict(neighbour_shuffle=False), dict(public=300),
                                dict(group_by=["color"])])
def test_no_shuffle_when_off_from_a_public_prior_or_grouped(monkeypatch, kw):
    assert run_fit(monkeypatch, adaptive_rounds=0, **kw) == []
