"""Smoothing of noisy marginals along ordered axes (estimate/smoothing.py): the walk against
its matrix, its trace against numpy's, SURE against the error it estimates, and what the
choice does on smooth and on rough tables."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.core.types import Marginal, Recode
from gpu_dpsyn.estimate import empirical_bayes as eb
from gpu_dpsyn.estimate import smoothing
from gpu_dpsyn.estimate.smoothing import (axis_trace, choose, diagonal, ordered_lengths,
                                          smooth, trace, walk)


def walk_matrix(n: int) -> np.ndarray:
    """W = I - Lap / 4 with reflecting ends, written out entry by entry."""
    w = np.zeros((n, n))
    for i in range(n):
        w[i, i] = 0.5
        w[i, max(i - 1, 0)] += 0.25
        w[i, min(i + 1, n - 1)] += 0.25
    return w


@pytest.mark.parametrize("n,h", [(3, 1), (7, 2), (12, 5), (30, 16)])
def test_walk_is_the_matrix_power_on_the_ordered_bins(n, h):
    rng = np.random.default_rng(n)
    y = rng.normal(10, 3, (n + 2, 4))  # two codes past the ordered bins: kept
    got = walk(y, 0, n, h)
    want = y.copy()
    want[:n] = np.linalg.matrix_power(walk_matrix(n), h) @ y[:n]
    assert np.allclose(got, want)
    assert np.array_equal(got[n:], y[n:])
    assert np.allclose(got.sum(axis=0), y.sum(axis=0))  # no count leaves the axis
    along = walk(y.T, 1, n, h)  # the same along the other axis
    assert np.allclose(along, want.T)


@pytest.mark.parametrize("n,h", [(3, 1), (3, 2), (5, 6), (8, 3), (25, 16), (64, 64)])
def test_trace_in_closed_form(n, h):
    assert trace(n, h) == pytest.approx(
        np.trace(np.linalg.matrix_power(walk_matrix(n), h)), rel=1e-9)
    assert axis_trace(n + 2, n, h) == pytest.approx(trace(n, h) + 2)
    assert axis_trace(n + 2, n, 0) == n + 2
    assert np.allclose(diagonal(n, h), np.diag(np.linalg.matrix_power(walk_matrix(n), h)))


def test_sure_estimates_the_smoothed_error():
    """Over noise draws, SURE's mean is the mean squared error of the smoothed table
    against the truth (the identity holds for every linear smoother)."""
    rng = np.random.default_rng(0)
    x = 40 * np.exp(-0.5 * ((np.arange(20)[:, None] - 9) ** 2 / 9
                            + (np.arange(16)[None, :] - 6) ** 2 / 16))
    sigma, hs = 5.0, {0: 4, 1: 2}
    tr = axis_trace(20, 20, 4) * axis_trace(16, 16, 2)
    sure, err = [], []
    for _ in range(400):
        y = x + rng.normal(0, sigma, x.shape)
        s = walk(walk(y, 0, 20, hs[0]), 1, 16, hs[1])
        sure.append(((s - y) ** 2).sum() + 2 * sigma ** 2 * tr - y.size * sigma ** 2)
        err.append(((s - x) ** 2).sum())
    assert np.mean(sure) == pytest.approx(np.mean(err), rel=0.05)


def spatial_sure(y, sigma, axes, steps):
    """SURE of the walks `steps` on y, computed in place (no eigenbasis)."""
    s, tr = y, 1.0
    for a in range(y.ndim):
        h = steps.get(a, 0)
        if h:
            s = walk(s, a, axes[a], h)
        tr *= axis_trace(y.shape[a], axes.get(a, y.shape[a]), h)
    return ((s - y) ** 2).sum() + 2 * sigma ** 2 * tr - y.size * sigma ** 2


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_choose_finds_the_least_sure_of_the_walks(seed):
    """The eigenbasis's risks against the walks' own, over every step count on one axis
    and every pair of them on two."""
    rng = np.random.default_rng(seed)
    a = np.arange(24)
    x = 25 * np.exp(-0.5 * ((a[:, None] - a[None, :]) ** 2 / (4 + 10 * seed)
                            + (a[:, None] - 11) ** 2 / 80))
    y = np.concatenate([x, np.full((2, 24), 30.0)]) + rng.normal(0, 6, (26, 24))
    grid = (0,) + smoothing.H
    one = {0: 24}
    best = min(grid, key=lambda h: spatial_sure(y, 6.0, one, {0: h}))
    assert choose(y, 6.0, one) == ({0: best} if best else {})
    two = {0: 24, 1: 24}
    risks = {(h, k): spatial_sure(y, 6.0, two, {0: h, 1: k}) for h in grid for k in grid
             if 4 * h <= 24 * 24 and 4 * k <= 24 * 24}
    got = choose(y, 6.0, two)
    assert spatial_sure(y, 6.0, two, got) == pytest.approx(min(risks.values()), rel=1e-9)


def test_smooth_tables_are_smoothed_and_come_closer():
    rng = np.random.default_rng(1)
    a, b = np.meshgrid(np.arange(32), np.arange(32), indexing="ij")
    x = 30 * np.exp(-0.5 * ((a - b) ** 2 / 8 + (a - 14) ** 2 / 60))  # a ridge
    sigma = 8.0
    y = x + rng.normal(0, sigma, x.shape)
    steps = choose(y, sigma, {0: 32, 1: 32})
    assert steps and all(h > 0 for h in steps.values())
    out, s_eff, diag = smooth(y.reshape(-1), x.shape, sigma, {0: 32, 1: 32})
    assert np.abs(out.reshape(x.shape) - x).sum() < 0.6 * np.abs(y - x).sum()
    assert 0 < s_eff < sigma
    assert out.sum() == pytest.approx(y.sum())
    want = np.multiply.outer(*(np.diag(np.linalg.matrix_power(walk_matrix(32), steps[a]))
                               for a in (0, 1)))
    assert np.allclose(diag, want.reshape(-1))  # each cell's own weight


def test_rough_tables_and_small_noise_are_left_alone():
    rng = np.random.default_rng(2)
    x = rng.choice([0.0, 500.0], size=(20, 20))  # neighbours unrelated, noise small
    y = x + rng.normal(0, 1.0, x.shape)
    assert choose(y, 1.0, {0: 20, 1: 20}) == {}
    out, s, diag = smooth(y.reshape(-1), y.shape, 1.0, {0: 20, 1: 20})
    assert np.array_equal(out, y.reshape(-1)) and s == 1.0 and diag is None


def _dct_basis(length: int) -> np.ndarray:
    """The orthonormal DCT-II as a matrix (rows: W's eigenvectors)."""
    k, i = np.arange(length)[:, None], np.arange(length)[None, :]
    c = np.sqrt(2.0 / length) * np.cos(np.pi * k * (i + 0.5) / length)
    c[0] /= np.sqrt(2.0)
    return c


@pytest.mark.parametrize("n,axis", [(3, 0), (4, 1), (7, 0), (16, 1), (33, 0)])
def test_the_transform_is_the_dct_basis_on_the_ordered_bins(n, axis):
    from gpu_dpsyn.estimate.smoothing import dct
    rng = np.random.default_rng(n)
    y = rng.normal(10, 3, (n + 2, 5) if axis == 0 else (5, n + 2))
    want = np.moveaxis(y, axis, 0).copy()
    want[:n] = np.einsum("ki,i...->k...", _dct_basis(n), want[:n])
    assert np.allclose(dct(y, axis, n), np.moveaxis(want, 0, axis))


def test_a_long_axis_is_smoothed_without_a_matrix_of_its_bins():
    """The DCT and the smoother's diagonal were dense L x L matrices: a marginal of a
    date in 4,000 bins beside 50 values took 3.6 s (20 s at 10,000 bins), and at 20,000
    bins (beside 50 values: within max_cells) each matrix held 3.2 GB: 65,536 bins, the
    most a column has, would not fit in memory, after the budget was spent."""
    import tracemalloc
    rng = np.random.default_rng(0)
    n = 6000
    x = 200 + 100 * np.sin(np.arange(n) / 300.0)
    y = np.stack([x, x / 2], axis=1) + rng.normal(0, 40, (n, 2))
    tracemalloc.start()
    try:
        out = eb.smoothed_or_not(y.reshape(-1), 40.0, (n, 2), ((0, n),))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 40 * 2 ** 20, peak  # the dense basis alone: 288 MB
    assert np.mean((out.reshape(n, 2)[:, 0] - x) ** 2) < 0.2 * 40 ** 2


def test_short_axes_and_exact_marginals_are_left_alone():
    y = np.arange(12.0)
    assert smooth(y, (2, 6), 3.0, {0: 2})[0] is y  # 2 ordered bins: too few
    assert smooth(y, (2, 6), 0.0, {1: 6})[0] is y  # no noise


def test_the_noise_left_after_smoothing():
    """smooth's sigma: the root mean square of the smoothed noise."""
    rng = np.random.default_rng(3)
    shape = (18, 5)  # two codes past the 16 bins, a column not ordered
    noise = [walk(rng.normal(0, 2.0, shape), 0, 16, 8) for _ in range(3000)]
    f = axis_trace(18, 16, 16) / 18
    assert np.sqrt(np.mean(np.square(noise))) == pytest.approx(2.0 * np.sqrt(f), rel=0.02)


class Col:
    def __init__(self, kind, bins):
        self.kind, self.bins = kind, bins


def test_ordered_lengths_count_the_kept_bins():
    cols = [Col("numeric", 10), Col("categorical", 5), Col("datetime", 6),
            Col("numeric", 4)]
    lut = np.array([3, 0, 1, 2, 3, 3, 3, 3, 3, 3, 3])  # bins 1-3 kept, the rest merged
    r = Recode(0, lut, np.array([0, 4, 5, 6, 7, 8, 9, 10]), np.full(8, 1 / 8))
    assert ordered_lengths(cols, {0: r}) == {0: 3, 2: 6, 3: 4}


def test_denoise_marginals_smooths_only_the_ordered_axes():
    rng = np.random.default_rng(4)
    a = np.arange(24)
    x = 40 * np.exp(-0.5 * (a[:, None] - a[None, :]) ** 2 / 6)
    y = (x + rng.normal(0, 12, x.shape)).reshape(-1)
    plain, ordered = (Marginal((0, 1), (24, 24), y.copy(), 12.0) for _ in range(2))
    eb.denoise_marginals([plain])
    assert np.array_equal(plain.values, eb.denoise(y, 12.0))  # as before without order
    eb.denoise_marginals([ordered], None, {0: 24, 1: 24})
    assert np.abs(ordered.values - x.reshape(-1)).sum() < \
        0.8 * np.abs(plain.values - x.reshape(-1)).sum()
    spread = Marginal((0, 1), (24, 24), y.copy(), 12.0, spread=np.ones(576))
    eb.denoise_marginals([spread], None, {0: 24, 1: 24})
    assert np.array_equal(spread.values, plain.values)  # cells of unequal noise: not


def test_a_fit_keeps_the_correlation_of_two_binned_numbers(monkeypatch):
    """Two numbers correlated 0.9 at 32 bins each (no sparse tails), 20,000 rows, eps 0.3:
    the synthetic correlation came out 0.54-0.56 without smoothing (seeds 0-2), 0.73-0.76
    with it.  H empty: never smoothed."""
    from gpu_dpsyn import Synthesizer
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 100, 20000)
    df = pd.DataFrame({"x": np.round(x, 1),
                       "y": np.round(np.clip(x + rng.normal(0, 15, 20000), 0, 100), 1),
                       "g": rng.choice(list("abcd"), 20000)})
    schema = {"columns": {"x": {"type": "numeric", "min": 0, "max": 100, "bins": 32},
                          "y": {"type": "numeric", "min": 0, "max": 100, "bins": 32},
                          "g": {"type": "categorical", "values": list("abcd")}}}
    real = df[["x", "y"]].corr().iloc[0, 1]

    def gap():
        eb._memo.clear()
        s = Synthesizer(0.3, 1e-9, seed=0, progress=False).fit(df, schema).sample()
        return abs(s[["x", "y"]].corr().iloc[0, 1] - real)
    with_smoothing = gap()
    monkeypatch.setattr(smoothing, "H", ())
    assert with_smoothing < 0.6 * gap()


def test_smoothing_gives_way_to_empirical_bayes_where_neighbours_differ():
    """A date beside its weekday: each date's row has one non-empty cell, its neighbours'
    in other columns.  Smoothing along the dates filled the empty cells from their
    neighbours (Birthdays at eps 0.3: 2-way TVD +4-5% on three seeds); empirical Bayes
    alone keeps them near 0, and smoothed_or_not keeps that.  A smooth ridge: smoothed."""
    rng = np.random.default_rng(6)
    days = 364
    x = np.zeros((days, 7))
    x[np.arange(days), np.arange(days) % 7] = 40 + 10 * np.sin(np.arange(days) / 58)
    y = x + rng.normal(0, 15, x.shape)
    steps = choose(y, 15.0, {0: days})
    assert steps  # the raw counts alone ask for smoothing
    out = eb.smoothed_or_not(y.reshape(-1), 15.0, x.shape, ((0, days),))
    assert np.array_equal(out, eb.denoise(y.reshape(-1), 15.0))
    plain_err = np.abs(out - x.reshape(-1)).sum()
    smoothed, s, _ = smooth(y.reshape(-1), x.shape, 15.0, {0: days})
    assert np.abs(eb.denoise(smoothed, s) - x.reshape(-1)).sum() > plain_err  # rightly
    a = np.arange(32)
    ridge = 30 * np.exp(-0.5 * (a[:, None] - a[None, :]) ** 2 / 8)
    noisy = (ridge + rng.normal(0, 10, ridge.shape)).reshape(-1)
    got = eb.smoothed_or_not(noisy, 10.0, ridge.shape, ((0, 32), (1, 32)))
    assert np.abs(got - ridge.reshape(-1)).sum() < \
        0.8 * np.abs(eb.denoise(noisy, 10.0) - ridge.reshape(-1)).sum()


def test_the_slope_of_a_posterior_map():
    """slope: the derivative of denoise's map, against a finer difference summed over
    a range, as SURE sums it (pointwise they part at the table's kinks: one step of it
    averages them), and 1 where the map keeps the counts (at 8 sigma and up)."""
    rng = np.random.default_rng(7)
    y = np.concatenate([np.zeros(300), rng.poisson(30, 200)]) + rng.normal(0, 5, 500)
    f = eb.posterior_map(y, 5.0)
    v = np.linspace(-10, 60, 2000)
    fine = (f(v + 1e-4) - f(v - 1e-4)) / 2e-4
    assert eb.slope(f, v, 5.0).sum() == pytest.approx(fine.sum(), rel=0.01)
    assert np.allclose(eb.slope(f, np.array([45.0, 80.0]), 5.0), 1.0)
    assert np.array_equal(f(y), eb.denoise(y, 5.0))
