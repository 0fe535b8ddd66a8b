"""The exact samplers: rounding of the parameters, Bernoulli(n/d) and Bernoulli(exp(-g))
frequencies, pmfs, moments and tails against the ideal laws with fixed critical values,
unbounded support, the fixed-width (NumPy) path equal to the unbounded reference, and
failure that releases nothing.  CUDA == NumPy: tests/test_gpu.py."""
import math
from fractions import Fraction

import numpy as np
import pytest
from stats_util import (CHI2_1E6, Z_1E6, binomial_z, chi_square, discrete_gaussian_pmf,
                        discrete_laplace_pmf)

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.backends.numpy import noise as N
from gpu_dpsyn.errors import PrivacyParameterError, SamplerError
from gpu_dpsyn.privacy import drawing as D
from gpu_dpsyn.privacy import samplers as S
from gpu_dpsyn.privacy.drawing import draw
from gpu_dpsyn.privacy.samplers import (FAIL, MAX_WORDS, OK, WIDE, DiscreteGaussian,
    DiscreteLaplace)

KEY = tuple(range(11, 19))
CPU = get_backend("cpu")


@pytest.mark.parametrize("x", [Fraction(1, 3), 0.25, 2.0, 52.3, 1e-7, 1e9, 2.0 ** 70,
                               Fraction(10 ** 30 + 7, 3)])
def test_parameters_are_rounded_up_by_less_than_2_to_the_minus_31(x):
    g, lap = DiscreteGaussian.at_least(x), DiscreteLaplace.at_least(x)
    for got in (Fraction(g.p, g.q), Fraction(lap.t, lap.s)):
        assert got >= Fraction(x) and (got - Fraction(x)) / Fraction(x) < Fraction(1, 2 ** 31)
    assert g.t == math.isqrt(g.p // g.q) + 1


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf"), 0, -1.0, "3"])
def test_bad_parameters_fail_closed(bad):
    for cls in (DiscreteGaussian, DiscreteLaplace):
        with pytest.raises(PrivacyParameterError):
            cls.at_least(bad)


# -- Bernoulli(n/d) and Bernoulli(exp(-g)) --------------------------------------------

def _tape(n, max_words=MAX_WORDS):
    return N._Tape(KEY, 0, n, 1, 0, max_words), np.arange(n), np.zeros(n, dtype=np.int64)


def _limbs(n_int, size):
    return (np.full(size, n_int >> 64, dtype=np.uint64),
            np.full(size, n_int & (2 ** 64 - 1), dtype=np.uint64))


BERN = [(1, 3), (5, 7), (1, 2), (2 ** 32 - 1, 2 ** 32), (1, 2 ** 32 + 1),
        (3 * 2 ** 69 - 5, 2 ** 71 + 3), (2 ** 100, 2 ** 101 - 1)]


@pytest.mark.parametrize("n,d", BERN)
def test_bernoulli_frequency(n, d):
    size = 200_000
    T, I, p = _tape(size)
    res, _ = N._bernoulli(T, I, p, *_limbs(n, size), d)
    assert abs(binomial_z(int(res.sum()), size, n / d)) < Z_1E6


GAMMAS = [(0, 1), (1, 3), (1, 1), (5, 2), (29, 4), (3 * 2 ** 70 + 11, 2 ** 72 - 1)]


@pytest.mark.parametrize("n,d", GAMMAS)
def test_bernoulli_exp_frequency(n, d):
    size = 200_000
    T, I, p = _tape(size)
    res, _ = N._exp(T, I, p, *_limbs(n, size), d)
    if n == 0:
        assert res.all()
    else:
        assert abs(binomial_z(int(res.sum()), size, math.exp(-n / d))) < Z_1E6


@pytest.mark.parametrize("n,d", BERN + GAMMAS)
def test_numpy_bernoullis_equal_the_reference(n, d):
    size = 300
    T, I, p = _tape(size)
    b, pb = N._bernoulli(T, I, p.copy(), *_limbs(n, size), d)
    T2, I2, p2 = _tape(size)
    e, pe = N._exp(T2, I2, p2, *_limbs(n, size), d)
    for i in range(0, size, 7):
        w = S.WordStream(KEY, i, 1, 0)
        assert S.bernoulli(w, n, d) == b[i] and w.used == pb[i]
        w = S.WordStream(KEY, i, 1, 0)
        assert S.bernoulli_exp(w, n, d) == e[i] and w.used == pe[i]


# -- the distributions -----------------------------------------------------------------

@pytest.mark.parametrize("sigma2", [0.25, 3.0, 52.3])
def test_discrete_gaussian_pmf_moments_and_tails(sigma2):
    g = DiscreteGaussian.at_least(sigma2)
    x = draw(CPU, g, 200_000, KEY, 1, 0)
    pmf, lo = discrete_gaussian_pmf(float(g.sigma2), int(40 * g.sigma) + 10)
    stat, df = chi_square(x, pmf, lo)
    assert stat < CHI2_1E6[df]
    k = np.arange(lo, lo + pmf.size, dtype=float)
    var, m4 = (pmf * k ** 2).sum(), (pmf * k ** 4).sum()
    assert abs(x.mean()) < Z_1E6 * math.sqrt(var / x.size)
    assert abs((x.astype(float) ** 2).mean() - var) < Z_1E6 * math.sqrt((m4 - var ** 2) / x.size)
    edge = math.ceil(3 * g.sigma)  # P(|Z| >= 3 sigma), exactly
    tail = pmf[np.abs(k) >= edge].sum()
    assert abs(binomial_z(int((np.abs(x) >= edge).sum()), x.size, tail)) < Z_1E6


@pytest.mark.parametrize("scale", [0.3, 1.0, 12.5])
def test_discrete_laplace_pmf_and_variance(scale):
    lap = DiscreteLaplace.at_least(scale)
    x = draw(CPU, lap, 200_000, KEY, 1, 0)
    pmf, lo = discrete_laplace_pmf(lap.scale, int(60 * scale) + 20)
    stat, df = chi_square(x, pmf, lo)
    assert stat < CHI2_1E6[df]
    k = np.arange(lo, lo + pmf.size, dtype=float)
    var, m4 = (pmf * k ** 2).sum(), (pmf * k ** 4).sum()
    assert var == pytest.approx(lap.sigma ** 2, rel=1e-9)  # the ledger's std is exact
    assert abs((x.astype(float) ** 2).mean() - var) < Z_1E6 * math.sqrt((m4 - var ** 2) / x.size)


class _Script:
    """A word source that replays given words (to reach outcomes too rare to sample)."""

    def __init__(self, words):
        self.words, self.used = list(words), 0

    def next(self):
        self.used += 1
        return self.words[self.used - 1]


def _words_for_14_sigma():
    """sigma = 1 (t = 2, acceptance denominator 8): U = 0; V = 7 successes of
    Bernoulli(exp(-1)) (words 0, 1 each: K stops at 3), one failure (word 1: K stops at
    2); sign +; then exp(-(4V - 1)^2 / 8) accepted: exp(-1) successes while the
    numerator exceeds 8, and the remainder's first Bernoulli false (word 7)."""
    v = 7
    words = [0] + [0, 1] * v + [1] + [1]
    n = (4 * v - 1) ** 2
    while n > 8:
        words += [0, 1]
        n -= 8
    return words + [7]


def test_draws_beyond_12_sigma_are_possible(monkeypatch):
    g = DiscreteGaussian(1, 1)
    words = _words_for_14_sigma()
    src = _Script(words)
    assert S.discrete_gaussian(src, g) == 14 and src.used == len(words)  # 14 sigma
    # the NumPy path, fed the same words, agrees
    tape = np.zeros(256, dtype=np.uint32)
    tape[:len(words)] = words
    monkeypatch.setattr(N, "windows", lambda key, first, count, w, *a:
                        np.tile(tape[64 * w:64 * w + 64], (count, 1)))
    values, status = N.sample(g, 1, KEY, 1, 0, MAX_WORDS)
    assert values[0] == 14 and status[0] == OK


# -- fixed width == unbounded reference ------------------------------------------------

SPECS = [DiscreteGaussian.at_least(0.01), DiscreteGaussian.at_least(2.5 ** 2),
         DiscreteGaussian.at_least(1e6), DiscreteGaussian.at_least(2.0 ** 62),
         DiscreteLaplace.at_least(0.05), DiscreteLaplace.at_least(3.7),
         DiscreteLaplace(2 ** 62 + 1, 2 ** 20)]  # X >= 2^63 now and then: WIDE


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_numpy_sampler_equals_the_unbounded_reference(spec):
    n = 4000
    values, status = N.sample(spec, n, KEY, 2, 5, MAX_WORDS)
    assert not (status == FAIL).any()
    for i in list(range(0, n, 97)) + list(np.flatnonzero(status == WIDE)[:20]):
        ref = S.sample_ref(spec, KEY, int(i), 2, 5)
        assert status[i] == WIDE or values[i] == ref
    full = draw(CPU, spec, n, KEY, 2, 5)
    assert np.array_equal(full[status == OK], values[status == OK])
    if spec in (SPECS[3], SPECS[6]):
        assert (status == WIDE).sum() > 0  # this spec exercises the hand-back


def test_parameters_past_128_bits_run_on_the_reference_only():
    g = DiscreteGaussian.at_least(2.0 ** 64)  # p >= 2^64
    assert not g.fits_fixed()
    x = draw(CPU, g, 30, KEY, 1, 3)
    assert x.tolist() == [S.sample_ref(g, KEY, i, 1, 3) for i in range(30)]



@pytest.mark.parametrize("lib", ["host build", "numpy"])
def test_many_draws_at_once_are_each_draw_alone(monkeypatch, lib):
    """draw_many: each (spec, n, call) as draw gives it alone, whichever the order, with a
    spec past the fixed widths among them, an empty draw, and runs split at the cap."""
    from gpu_dpsyn.backends.numpy import host_kernels
    if lib == "numpy":
        monkeypatch.setattr(host_kernels, "library", lambda: None)
    elif host_kernels.library() is None:
        pytest.skip("no C++ compiler")
    wide = DiscreteGaussian.at_least(2.0 ** 64)
    draws = [(SPECS[0], 700, 3), (wide, 5, 1), (SPECS[3], 0, 2), (SPECS[1], 900, 0),
             (SPECS[6], 300, 7)]
    alone = [draw(CPU, spec, n, KEY, 4, call) for spec, n, call in draws]
    calls = []
    real = CPU.noise_draws
    monkeypatch.setattr(CPU, "noise_draws", lambda d, *a: calls.append(len(d)) or real(d, *a))
    got = D.draw_many(CPU, draws, KEY, 4)
    assert all(np.array_equal(g, w) for g, w in zip(got, alone)) and calls == [4]
    monkeypatch.setattr(D, "MAX_NOISE_CELLS", 1000)  # runs of at most 1,000 elements
    calls.clear()
    got = D.draw_many(CPU, draws[::-1], KEY, 4)
    assert all(np.array_equal(g, w) for g, w in zip(got, alone[::-1])) and calls == [1, 2, 1]
    with pytest.raises(SamplerError, match="at most 2"):
        D.draw_many(CPU, [(SPECS[0], 1001, 0)], KEY, 4)


def test_a_failure_in_any_draw_of_a_batch_releases_nothing(monkeypatch):
    """draw_many fails closed per draw: a FAIL, or an element never written, in the
    second draw of a call raises though the first draw is whole."""
    draws = [(SPECS[0], 50, 0), (SPECS[1], 40, 1)]
    real = CPU.noise_draws
    for bad, why in ((FAIL, "random words"), (7, "not written")):
        def one_bad(d, *a, bad=bad):
            values, status = real(d, *a)
            status = status.copy()
            status[50 + 39] = bad  # the second draw's last element
            return values, status
        monkeypatch.setattr(CPU, "noise_draws", one_bad)
        with pytest.raises(SamplerError, match=f"{why}.*nothing was released"):
            D.draw_many(CPU, draws, KEY, 4)


@pytest.mark.parametrize("call", [-1, 2 ** 32])
def test_a_call_past_32_bits_is_refused_not_wrapped(call):
    """The kernels' word streams take a 32-bit call: one past it would repeat another
    call's noise."""
    with pytest.raises(SamplerError, match="call"):
        D.draw_many(CPU, [(SPECS[0], 5, call)], KEY, 4)
    with pytest.raises(SamplerError, match="call"):
        draw(CPU, SPECS[1], 5, KEY, 4, call)

def test_noise_is_counter_based():
    g = DiscreteGaussian.at_least(49.0)
    full = draw(CPU, g, 70_000, KEY, 1, 4)  # crosses a chunk boundary
    assert np.array_equal(full[:10], draw(CPU, g, 10, KEY, 1, 4))
    assert not np.array_equal(full[:1000], draw(CPU, g, 1000, KEY, 1, 5))  # other call
    assert not np.array_equal(full[:1000], draw(CPU, g, 1000, KEY, 2, 4))  # other stream
    assert not np.array_equal(full[:1000], draw(CPU, g, 1000, (0,) + KEY[1:], 1, 4))


def test_a_sampler_out_of_words_releases_nothing():
    g = DiscreteGaussian.at_least(9.0)
    _, status = N.sample(g, 3000, KEY, 1, 0, 64)
    assert (status == FAIL).any() and (status == OK).any()
    with pytest.raises(SamplerError, match="nothing was released"):
        draw(CPU, g, 3000, KEY, 1, 0, max_words=64)
    with pytest.raises(SamplerError):
        S.sample_ref(g, KEY, int(np.flatnonzero(status == FAIL)[0]), 1, 0, 64)


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_host_build_of_the_cuda_samplers_equals_numpy(spec):
    from gpu_dpsyn.backends.numpy import host_kernels
    lib = host_kernels.library()
    if lib is None:
        pytest.skip("no C++ compiler: the NumPy samplers serve alone")
    v, st = host_kernels.sample(lib, [(spec, 5000, 1)], KEY, 3, MAX_WORDS)
    nv, nst = N.sample(spec, 5000, KEY, 3, 1, MAX_WORDS)
    assert np.array_equal(st, nst) and np.array_equal(v[st == OK], nv[st == OK])
    _, st64 = host_kernels.sample(lib, [(spec, 5000, 1)], KEY, 3, 64)
    assert np.array_equal(st64, N.sample(spec, 5000, KEY, 3, 1, 64)[1])  # FAIL alike


def test_the_numpy_samplers_serve_without_a_compiler(monkeypatch):
    from gpu_dpsyn.backends.numpy import host_kernels
    spec = SPECS[1]
    with_lib = draw(CPU, spec, 2000, KEY, 1, 2)
    monkeypatch.setattr(host_kernels, "library", lambda: None)
    assert np.array_equal(draw(CPU, spec, 2000, KEY, 1, 2), with_lib)


def test_unwritten_or_unknown_statuses_fail_closed():
    from gpu_dpsyn.privacy.drawing import finish
    with pytest.raises(SamplerError):
        finish([5, 7], [OK, 3], SPECS[1], KEY, 1, 0)  # 3: garbage in an unwritten slot
    assert finish([5, 7], [OK, OK], SPECS[1], KEY, 1, 0).tolist() == [5, 7]


@pytest.mark.parametrize("bad", [0, 100, 2 ** 32 + 64, -64])
def test_the_word_cap_must_fall_on_a_window_edge_within_32_bits(bad):
    with pytest.raises(SamplerError, match="max_words"):
        draw(CPU, SPECS[1], 10, KEY, 1, 0, max_words=bad)
    with pytest.raises(SamplerError, match="max_words"):
        N.sample(SPECS[1], 10, KEY, 1, 0, bad)


def test_huge_parameters_round_up_without_float_overflow():
    g = DiscreteGaussian.at_least(Fraction(10 ** 400 + 1, 3))
    assert Fraction(g.p, g.q) >= Fraction(10 ** 400 + 1, 3) and not g.fits_fixed()
