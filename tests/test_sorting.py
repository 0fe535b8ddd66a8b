"""sorting.py gives NumPy's stable order (and numpy.unique's answers) by faster means:
checked against the stable sort and numpy.unique themselves, ties and digit edges
included."""
import numpy as np
import pytest

from gpu_dpsyn.core.sorting import (argsort_bounded, argsort_distinct, argsort_stable,
    first_k, lexsort_distinct, unique_ids)


def stable(a):
    return np.argsort(a, kind="stable")


BOUNDS = [1, 2, 255, 256, 65535, 65536, 65537, 1 << 20, 1 << 32, (1 << 32) + 1, 1 << 48,
          1 << 62]


@pytest.mark.parametrize("bound,dtype", [(b, d) for d in (np.int64, np.uint64, np.uint16,
                                                            np.uint8)
                                         for b in BOUNDS if b - 1 <= np.iinfo(d).max])
def test_bounded_is_the_stable_order(bound, dtype):
    rng = np.random.default_rng(bound % 997)
    # few distinct values near both ends of the range: many ties in every digit
    vals = np.unique(np.r_[0, bound - 1, rng.integers(0, bound, 20, dtype=np.uint64)])
    a = rng.choice(vals, 5000).astype(dtype)
    for b in (bound, None):
        assert np.array_equal(argsort_bounded(np, a, b), stable(a))


def test_bounded_takes_empty_negative_and_wide_inputs():
    assert argsort_bounded(np, np.zeros(0, dtype=np.int64)).size == 0
    a = np.array([3, -1, 3, 0, -1])  # negative: read as such, sorted stably all the same
    assert np.array_equal(argsort_bounded(np, a), stable(a))
    w = np.array([1 << 63, 5, 1 << 63, 0], dtype=np.uint64)  # past 4 digits: the stable sort
    assert np.array_equal(argsort_bounded(np, w, 1 << 64), stable(w))


def test_distinct_keys_and_ties_both_give_the_stable_order():
    rng = np.random.default_rng(7)
    k = rng.integers(0, 1 << 63, 20000, dtype=np.int64).astype(np.uint64)
    assert np.array_equal(argsort_distinct(np, k), stable(k))
    tied = rng.integers(0, 50, 20000).astype(np.uint64)  # the unstable sort reorders ties
    assert not np.array_equal(np.argsort(tied), stable(tied))
    assert np.array_equal(argsort_distinct(np, tied), stable(tied))
    one = k.copy()
    one[123] = one[9876]  # a single tie among distinct keys
    assert np.array_equal(argsort_distinct(np, one), stable(one))


def test_distinct_float_keys_with_a_nan_or_a_tie_give_the_stable_order():
    rng = np.random.default_rng(3)
    u = rng.random(20000)
    assert np.array_equal(argsort_distinct(np, u), stable(u))
    for bad in (np.nan, u[17]):  # NaNs are never equal: the tie check would miss them
        v = u.copy()
        v[[5, 900, 4000]] = bad
        assert np.array_equal(argsort_distinct(np, v), stable(v))


@pytest.mark.parametrize("seed", range(4))
def test_lexsort_distinct_is_numpys_lexsort(seed):
    """Keys with many ties (gains in quarters, -0.0 and 0.0 among them), ranks distinct
    in [0, bound): np.lexsort's order, on floats and integers, with NaNs (the two
    stable sorts) and at a bound past the combined key's range."""
    rng = np.random.default_rng(seed)
    n, bound = 30000, 100000
    ranks = rng.permutation(bound)[:n].astype(np.int64)
    gains = -np.round(rng.exponential(3, n) * 4) / 4
    gains[rng.integers(0, n, 50)] = 0.0
    gains[rng.integers(0, n, 50)] = -0.0
    for keys in (gains, (gains * 4).astype(np.int64)):
        assert np.array_equal(lexsort_distinct(np, keys, ranks, bound),
                              np.lexsort((ranks, keys)))
    nan = gains.copy()
    nan[rng.integers(0, n, 20)] = np.nan
    assert np.array_equal(lexsort_distinct(np, nan, ranks, bound), np.lexsort((ranks, nan)))
    assert np.array_equal(lexsort_distinct(np, gains, ranks, 1 << 60),
                          np.lexsort((ranks, gains)))
    assert lexsort_distinct(np, gains[:0], ranks[:0], bound).size == 0


@pytest.mark.parametrize("n,bound", [(1000, 7), (1000, 4000), (1000, 5000), (50, 1 << 40),
                                     (1, 1), (3000, 3000)])
def test_unique_ids_equal_numpy_unique(n, bound):
    rng = np.random.default_rng(n + bound % 1000)
    ids = rng.integers(0, bound, n).astype(np.int64)
    _, first, inv, counts = np.unique(ids, return_index=True, return_inverse=True,
                                      return_counts=True)
    for b in (bound, None):
        got = unique_ids(np, ids, b)
        for x, y in zip(got, (first, inv.reshape(-1), counts)):
            assert np.array_equal(x, y)


def test_unique_ids_of_few_wide_or_negative_ids_equal_numpy_unique():
    """Past the counted range (and with negative ids, which have no bound) the ids take
    the default sort, which reorders ties: first must still be each id's least index."""
    rng = np.random.default_rng(11)
    for vals in (rng.integers(0, 1 << 40, 30), rng.integers(-500, 500, 30)):
        ids = rng.choice(vals, 20000)
        _, first, inv, counts = np.unique(ids, return_index=True, return_inverse=True,
                                          return_counts=True)
        for got, want in zip(unique_ids(np, ids), (first, inv.reshape(-1), counts)):
            assert np.array_equal(got, want)


def test_argsort_stable_keeps_ties_in_index_order():
    a = np.array([2.0, 1.0, 2.0, 1.0])
    assert list(argsort_stable(np, a)) == [1, 3, 0, 2]


def plain_unique(xp, ids, bound=None):
    _, first, inv, counts = np.unique(ids, return_index=True, return_inverse=True,
                                      return_counts=True)
    return first, inv.reshape(-1), counts


def test_a_fit_gives_the_records_of_the_plain_sorts(monkeypatch):
    """End to end, with cells and strata past 2^16 (two radix digits) and below the
    row count (counted ids): the same table as with NumPy's stable sorts, numpy.unique
    and no host build, patched in wherever the fast ones are used."""
    import warnings

    import pandas as pd

    import gpu_dpsyn.backends.numpy.ops as ops
    import gpu_dpsyn.generate.gibbs as gibbs
    import gpu_dpsyn.generate.polish as polish
    import gpu_dpsyn.generate.shuffle as shuffle
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.backends.numpy import host_kernels
    from gpu_dpsyn.privacy.keys import SeededNoiseWarning

    r = np.random.default_rng(5)
    n = 40000
    a = r.integers(0, 300, n)
    b = (a + r.integers(0, 5, n)) % 300
    c = (a // 40 + r.integers(0, 2, n)) % 8
    d = (c + r.integers(0, 2, n)) % 4
    names = np.array([f"v{i}" for i in range(300)])
    df = pd.DataFrame({"a": names[a], "b": names[b], "c": names[c], "d": names[d]})
    spec = {k: {"type": "categorical", "values": list(names[:m])}
            for k, m in (("a", 300), ("b", 300), ("c", 8), ("d", 4))}

    def release():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            syn = Synthesizer(8.0, 1e-6, seed=1, backend="cpu", progress=False)
            return syn.fit(df, {"columns": spec}).sample(n)
    fast = release()
    stable_bounded = (lambda xp, a, bound=None: np.argsort(a, kind="stable"))
    for mod in (ops, gibbs, polish, shuffle):
        if hasattr(mod, "argsort_bounded"):
            monkeypatch.setattr(mod, "argsort_bounded", stable_bounded)
        if hasattr(mod, "argsort_distinct"):
            monkeypatch.setattr(mod, "argsort_distinct",
                                lambda xp, k: np.argsort(k, kind="stable"))
        if hasattr(mod, "lexsort_distinct"):
            monkeypatch.setattr(mod, "lexsort_distinct",
                                lambda xp, k, r, bound: np.lexsort((r, k)))
    monkeypatch.setattr(gibbs, "unique_ids", plain_unique)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    assert SeededNoiseWarning and fast.equals(release())


def test_gibbs_positions_with_contexts_past_one_digit(monkeypatch):
    """70,000 contexts: the sort by context takes two radix digits."""
    import gpu_dpsyn.generate.gibbs as gibbs
    from gpu_dpsyn.backends import get_backend
    be = get_backend("cpu")
    inv = np.random.default_rng(2).permutation(np.arange(150000) % 70000)
    w = np.bincount(inv)
    fast = gibbs.systematic_positions(be, inv, w, 3, (1, 2), 0)
    monkeypatch.setattr(gibbs, "argsort_bounded", lambda xp, a, bound=None: stable(a))
    monkeypatch.setattr(gibbs, "argsort_distinct", lambda xp, k: stable(k))
    assert np.array_equal(fast, gibbs.systematic_positions(be, inv, w, 3, (1, 2), 0))


def _rank_below(keys, k):
    """The definition: the stable ascending order's first k (rank < k)."""
    order = np.argsort(keys, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank < k


@pytest.mark.parametrize("seed", range(40))
def test_first_k_is_the_stable_orders_first_k(seed):
    """Ties at the k-th key go to the lower index, NaNs rank last, as in the stable sort;
    k below 1 (or NaN) takes none, past the length (or infinite) all, and k need not be
    whole: rank < k."""
    r = np.random.default_rng(seed)
    n = int(r.integers(1, 300))
    kind = seed % 4
    if kind == 0:
        keys = r.random(n)
    elif kind == 1:  # few distinct values: ties at the threshold
        keys = r.integers(0, 4, n) / 4.0
    elif kind == 2:  # signed zeros, infinities and NaNs
        keys = r.choice([-0.0, 0.0, -0.5, np.nan, 0.25, np.inf, -np.inf], n)
    else:
        keys = -np.floor(r.random(n) * 3) / 7
    for k in [-1, 0, 0.5, 1, n // 3, n // 2 + 0.25, n - 1, n, n + 2, float(r.integers(0, n + 1)),
              np.inf, -np.inf, np.nan]:
        np.testing.assert_array_equal(first_k(keys, k), _rank_below(keys, k),
                                      err_msg=f"k={k}")


def test_apportion_takes_the_same_cells_as_the_stable_sort():
    """gum.apportion by selection (NumPy) against the largest-remainder definition by a
    stable sort, on vectors with many equal remainders."""
    from gpu_dpsyn.backends.arrays import apportion
    r = np.random.default_rng(5)
    for _ in range(200):
        n = int(r.integers(1, 2000))
        v = r.integers(0, 6, n).astype(np.float64) * r.choice([1.0, 3.0, 7.0])
        total = float(r.integers(0, 3 * n))
        S = v.sum()
        q = v * (total / S if S > 0 else 0.0)
        base = np.floor(q)
        want = base + _rank_below(-(q - base), total - base.sum())
        np.testing.assert_array_equal(apportion(np, v, total), want)
