"""sorting.py gives NumPy's stable order (and numpy.unique's answers) by faster means:
checked against the stable sort and numpy.unique themselves, ties and digit edges
included."""
import numpy as np
import pytest

from gpu_dpsyn.sorting import argsort_bounded, argsort_distinct, argsort_stable, unique_ids


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


def test_argsort_stable_keeps_ties_in_index_order():
    a = np.array([2.0, 1.0, 2.0, 1.0])
    assert list(argsort_stable(np, a)) == [1, 3, 0, 2]
