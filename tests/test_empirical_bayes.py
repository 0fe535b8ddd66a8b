"""Empirical-Bayes denoising of the measured marginals (gpu_dpsyn/empirical_bayes.py):
against the closed-form posterior of a known prior, Lindsay's optimality condition for
the estimated prior, and against the projection consistency would do alone."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.estimate.consistency import norm_sub
from gpu_dpsyn.estimate.empirical_bayes import (BLEND_SIGMAS, KEEP_SIGMAS, binned, count_grid,
    denoise, denoise_marginals, gaussian_likelihood, npmle)
from gpu_dpsyn.core.types import Marginal


def test_posterior_means_match_the_closed_form_of_a_two_point_prior():
    # true counts 0 (70%) or 12 (30%), noise sigma 4: E[x | y] = 12 P(12 | y) with
    # P(12 | y) = 0.3 phi(y - 12) / (0.3 phi(y - 12) + 0.7 phi(y)), whatever the prior's
    # estimate; seeds 0-4 came within 0.10-0.15 on average (clipped y: 1.22-1.24)
    r = np.random.default_rng(0)
    sigma = 4.0
    x = np.where(r.random(20000) < 0.7, 0.0, 12.0)
    y = x + r.normal(0, sigma, x.size)
    hi = 0.3 * np.exp(-0.5 * ((y - 12) / sigma) ** 2)
    want = 12 * hi / (hi + 0.7 * np.exp(-0.5 * (y / sigma) ** 2))
    got = denoise(y, sigma)
    assert np.abs(got - want).mean() < 0.2
    assert np.abs(np.maximum(y, 0) - want).mean() > 1.0  # the test can tell them apart
    # a Gaussian location family's posterior mean never falls as y rises
    low = y < KEEP_SIGMAS * sigma
    order = np.argsort(y[low])
    assert np.all(np.diff(got[low][order]) >= -1e-9)
    assert got.min() >= 0.0


def test_the_tabled_posterior_means_are_within_a_hundredth_of_a_count():
    # denoise interpolates E[x | y] between steps of sigma / 16: against the posterior
    # mean of every cell computed directly under the same prior
    r = np.random.default_rng(0)
    sigma = 4.0
    x = np.where(r.random(20000) < 0.7, 0.0, 12.0)
    y = x + r.normal(0, sigma, x.size)
    xs = count_grid(float(y.max()) + 2 * sigma, sigma)
    pts, cnt = binned(y, sigma)
    g = npmle(gaussian_likelihood(pts, xs, sigma), cnt)
    low = y < BLEND_SIGMAS * sigma  # above, blended towards y
    post = gaussian_likelihood(y[low], xs, sigma) * g
    exact = (post * xs).sum(axis=1) / post.sum(axis=1)
    assert np.abs(denoise(y, sigma)[low] - exact).max() < 0.01


def test_the_prior_is_the_maximum_likelihood_one():
    # Lindsay (1983): g maximises the likelihood over priors on the grid iff
    # D(x) = mean_i f(y_i | x) / f_g(y_i) <= 1 everywhere, = 1 on g's support
    r = np.random.default_rng(1)
    x = np.where(r.random(5000) < 0.9, 0.0, r.poisson(50, 5000)).astype(float)
    y = x + r.normal(0, 10.0, x.size)
    xs = count_grid(float(y.max()) + 20.0, 10.0)
    pts, cnt = binned(y, 10.0)
    assert cnt.sum() == y.size and pts.size < 400  # fewer points than cells
    like = gaussian_likelihood(pts, xs, 10.0)
    g = npmle(like, cnt)
    d = (cnt[:, None] * like / (like * g).sum(axis=1, keepdims=True)).sum(axis=0) / cnt.sum()
    assert abs(g.sum() - 1) < 1e-9 and d.max() < 1.01
    assert np.all(np.abs(d[g > 1e-3] - 1) < 0.02)
    assert g[0] > 0.8  # most of the 90% true zeros sit at 0


def test_a_sparse_histogram_gets_closer_to_the_truth_than_by_projection():
    # what consistency's norm_sub alone does: keeps the high noise of empty cells; seeds
    # 0-4: L1 error 0.43-0.51 of the projection's
    r = np.random.default_rng(0)
    x = np.where(r.random(5000) < 0.9, 0.0, r.poisson(50, 5000)).astype(float)
    y = x + r.normal(0, 10.0, x.size)
    assert np.abs(denoise(y, 10.0) - x).sum() < 0.6 * np.abs(norm_sub(y) - x).sum()


def test_large_cells_and_small_or_noiseless_marginals_stay_as_measured():
    r = np.random.default_rng(2)
    y = np.concatenate([r.normal(0, 5.0, 200), [40.0, 41.0, 500.0, 1e6]])
    got = denoise(y, 5.0)
    assert np.array_equal(got[-4:], y[-4:])  # at or above 8 sigma
    assert np.all(got[:200] >= 0) and np.abs(got[:200]).max() < np.abs(y[:200]).max()
    few = np.array([-3.0, 1.0, 2.0])
    assert np.array_equal(denoise(few, 5.0), few)
    assert np.array_equal(denoise(y, 0.0), y) and np.array_equal(denoise(y, np.inf), y)


def test_no_jump_where_the_cells_are_kept_as_measured(monkeypatch):
    # half the counts at 0, half at 9 sigma: E[x | y] just below 8 sigma is pulled up
    # towards 9 sigma, a cell just above is kept; between 6 and 8 sigma the estimate moves
    # linearly to y, so neighbouring measurements get neighbouring estimates
    import gpu_dpsyn.estimate.empirical_bayes as eb
    r = np.random.default_rng(4)
    x = np.where(r.random(4000) < 0.5, 0.0, 9.0)
    y = np.concatenate([x + r.normal(0, 1.0, x.size), np.arange(5.0, 9.0, 0.01)])
    got = denoise(y, 1.0)[x.size:]
    assert np.abs(np.diff(got)).max() < 0.05  # steps of 0.01 in y
    assert got[-1] == y[-1]
    monkeypatch.setattr(eb, "BLEND_SIGMAS", 7.999)  # (nearly) no blend: a jump at 8
    assert np.abs(np.diff(denoise(y, 1.0)[x.size:])).max() > 0.2


def test_non_finite_counts_come_back_as_they_came():
    y = np.array([1.0, 2.0, np.nan, 3.0, -1.0, 0.0, 5.0, 4.0, 2.0])
    got = denoise(y, 1.0)
    assert np.array_equal(got, y, equal_nan=True)
    assert np.isfinite(denoise(np.array([-1e300, 0.0, 1, 2, 3, 4, 5, 6]), 1.0)).all()


def test_a_count_far_below_zero_does_not_underflow():
    # exp(-z^2/2) underflows for every grid count once y < -38 sigma: in logs, each row
    # scaled to its largest term, it still gets a posterior (near 0)
    y = np.array([-1000.0, 0.5, 1.0, 2.0, 30.0, 31.0, 29.0, 0.0, -1.0, 60.0])
    got = denoise(y, 1.0)
    assert np.all(np.isfinite(got)) and got[0] < 1.0


def test_only_multiway_marginals_of_single_noisy_cells_are_denoised():
    r = np.random.default_rng(3)
    one = Marginal((0,), (20,), r.normal(5, 5, 20), 5.0)
    two = Marginal((0, 1), (20, 20), r.normal(0, 5, 400), 5.0)
    merged = Marginal((0, 2), (20, 4), r.normal(0, 5, 80), 5.0)  # a grouped 1-way
    before = [m.values.copy() for m in (one, two, merged)]
    denoise_marginals([one, two, merged], [20, 400, 800])
    assert np.array_equal(one.values, before[0])  # filtering cut it at 3 sigma: no prior
    assert not np.array_equal(two.values, before[1]) and two.values.min() >= 0
    assert np.array_equal(merged.values, before[2])  # some cells sum several: larger noise


def test_a_grouped_fit_keeps_its_merged_marginals_as_measured(monkeypatch):
    from gpu_dpsyn.estimate import targets
    seen = []
    real = targets.denoise_marginals

    def spy(marginals, measured_cells, ordered=None):
        before = [m.values.copy() for m in marginals]
        real(marginals, measured_cells, ordered)
        seen.extend((c != m.cells, np.array_equal(b, m.values))
                    for m, b, c in zip(marginals, before, measured_cells))
    monkeypatch.setattr(targets, "denoise_marginals", spy)
    r = np.random.default_rng(5)
    n = 6000
    g = r.integers(0, 3, n)
    a = np.where(r.random(n) < 0.9, r.integers(0, 3, n), r.integers(3, 60, n))  # rare tail
    df = pd.DataFrame({"g": g, "a": a, "b": (a + r.integers(0, 2, n)) % 60})
    from gpu_dpsyn.data.schema import load_schema
    schema = load_schema({"columns": [
        {"name": "g", "type": "categorical", "values": [0, 1, 2]},
        {"name": "a", "type": "categorical", "values": list(range(60))},
        {"name": "b", "type": "categorical", "values": list(range(60))}]})
    with pytest.warns(Warning):
        Synthesizer(0.5, 1e-9, seed=0, progress=False, backend="cpu", group_by=["g"],
                    iterations=1).fit(df, schema)
    assert any(merged for merged, _ in seen), "no merged marginal: the test sees nothing"
    assert all(same for merged, same in seen if merged)
    assert not all(same for merged, same in seen if not merged)


def _band_table(n=20000, seed=0):
    # four columns of 30 values, each near another: most of a pair's 900 cells are empty
    r = np.random.default_rng(seed)
    a = r.integers(0, 30, n)
    b = np.clip(a + r.integers(-1, 2, n), 0, 29)
    c = np.clip(b + r.integers(-1, 2, n), 0, 29)
    d = np.clip(a + r.integers(-2, 3, n), 0, 29)
    return pd.DataFrame({k: v for k, v in zip("abcd", (a, b, c, d))})


def test_the_fit_denoises_its_targets_at_no_cost():
    """The consistent targets get closer to the table's marginals (mean L1 error over
    the multi-way ones, seeds 0-2: 0.12 against 0.20 without), and nothing is charged
    for it.  With only two columns the pair's 1-way corrections, spread evenly over each
    row by consistency, can undo the gain: hence four."""
    from gpu_dpsyn.data.schema import load_schema
    df = _band_table()
    values = list(range(30))
    schema = load_schema({"columns": [{"name": c, "type": "categorical", "values": values}
                                      for c in "abcd"]})
    errs, ledgers = {}, {True: [], False: []}
    for on in (True, False):
        e = []
        for seed in range(3):
            syn = Synthesizer(1.0, 1e-9, seed=seed, progress=False, denoise=on,
                              adaptive_rounds=0, backend="cpu", iterations=1,
                              filter_low_counts=False)
            with pytest.warns(Warning):
                syn.fit(df, schema)
            for m in syn.model.marginals:
                if len(m.attrs) > 1:
                    cols = [df.iloc[:, a].to_numpy() for a in m.attrs]
                    h = np.bincount(np.ravel_multi_index(cols, m.shape), minlength=m.cells)
                    e.append(np.abs(m.values - h).sum() / h.sum())
            assert min(m.values.min() for m in syn.model.marginals) >= 0
            ledgers[on].append([(x.label, x.columns, x.fraction)
                                for x in syn.accountant.ledger])
        errs[on] = np.mean(e)
    # post-processing: the same charges (the key differs, but four columns in a chain
    # give every seed the same choice of pairs here)
    assert ledgers[True] == ledgers[False]
    assert errs[True] < 0.8 * errs[False]


def test_a_marginal_denoised_again_is_not_estimated_again(monkeypatch):
    """The adaptive rounds estimate the level's marginals once a round, and most come as
    measured each time: their posterior means are remembered, the same to the bit, and
    anything that changes them (a value, sigma) is estimated afresh."""
    from gpu_dpsyn.estimate import empirical_bayes as eb
    import collections
    r = np.random.default_rng(8)
    y = r.normal(0, 5, 400)
    expected = denoise(y, 5.0)
    calls = []
    real = eb.npmle
    monkeypatch.setattr(eb, "npmle", lambda *a, **k: calls.append(1) or real(*a, **k))
    monkeypatch.setattr(eb, "_memo", collections.OrderedDict())

    def fresh(values, sigma=5.0):
        return Marginal((0, 1), (20, 20), values.copy(), sigma)
    first = fresh(y)
    denoise_marginals([first])
    again = fresh(y)
    denoise_marginals([again])
    assert len(calls) == 1 and np.array_equal(first.values, again.values)
    assert np.array_equal(again.values, expected)  # what the estimate gives
    again.values[0] = 99.0  # the remembered result is a copy: editing it changes nothing
    moved = y.copy()
    moved[7] += 1.0
    for m in (fresh(y, 6.0), fresh(moved), fresh(y)):
        denoise_marginals([m])
    assert len(calls) == 3  # sigma 6 and the moved cell: new; y at sigma 5: remembered
    assert np.array_equal(m.values, first.values)


def test_the_memo_keeps_a_running_count_of_its_cells_and_stays_within_it(monkeypatch):
    import collections
    from gpu_dpsyn.estimate import empirical_bayes as eb
    monkeypatch.setattr(eb, "_memo", collections.OrderedDict())
    monkeypatch.setattr(eb, "_memo_cells", 0)
    monkeypatch.setattr(eb, "MEMO_CELLS", 1000)
    r = np.random.default_rng(9)
    for size in (100, 250, 200, 150, 240, 90):
        eb.remembered(r.normal(0, 3, size), 3.0)
        assert eb._memo_cells == sum(v.size for v in eb._memo.values()) <= 1000
    assert len(eb._memo) < 6  # the oldest went


def test_the_memo_estimates_with_the_sigma_of_its_key():
    """A float32 sigma is the float it rounds to, whichever call comes first."""
    from gpu_dpsyn.estimate import empirical_bayes as eb
    y = np.random.default_rng(10).normal(0, 1.1, 300)
    s32 = np.float32(1.1)
    assert np.array_equal(eb.remembered(y, s32), denoise(y, float(s32)))
