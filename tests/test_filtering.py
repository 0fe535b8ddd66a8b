import numpy as np

from gpu_dpsyn.filtering import low_count_recode, recoded_one_way, undo
from gpu_dpsyn.marginals import Marginal


def test_low_values_are_merged_at_three_sigma():
    m = Marginal((2,), (6,), np.array([500.0, 10.0, 29.0, 31.0, -4.0, 200.0]), 10.0)
    r = low_count_recode(m)
    # theta = 30: codes 1, 2, 4 merge; 0, 3, 5 keep their order
    assert r.lut.tolist() == [0, 3, 3, 1, 3, 2] and r.size == 4
    assert r.merged.tolist() == [1, 2, 4]
    assert np.allclose(r.merged_p, [10 / 39, 29 / 39, 0])
    one = recoded_one_way(m, r)
    assert one.values.tolist() == [500.0, 31.0, 200.0, 35.0]


def test_merged_total_below_theta_is_zeroed_and_single_lows_kept():
    m = Marginal((0,), (4,), np.array([500.0, 5.0, 6.0, 400.0]), 10.0)
    r = low_count_recode(m)
    assert recoded_one_way(m, r).values.tolist() == [500.0, 400.0, 0.0]
    assert low_count_recode(Marginal((0,), (3,), np.array([500.0, 5.0, 400.0]), 10.0)) is None


def test_undo_restores_kept_codes_and_spreads_the_merged_one():
    m = Marginal((1,), (5,), np.array([1000.0, 20.0, 60.0, 900.0, 5.0]), 30.0)
    r = low_count_recode(m)  # theta 90: 1, 2, 4 merge with shares 20:60:5
    new = np.array([0, 1] + [2] * 85000, dtype=np.uint8)
    old = undo(new, r, (4, 4), 0)
    assert old[:2].tolist() == [0, 3]
    frac = np.bincount(old[2:], minlength=5)[[1, 2, 4]] / 85000
    assert np.allclose(frac, [20 / 85, 60 / 85, 5 / 85], atol=0.01)
    assert np.array_equal(old, undo(new, r, (4, 4), 0))
