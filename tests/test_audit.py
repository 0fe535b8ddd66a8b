"""An empirical privacy audit: the measurement of two neighbouring tables, 50,000 times
each, and a Clopper-Pearson lower bound on the epsilon that separates them.  It must
stay below the claimed epsilon, and must catch a deliberately weakened mechanism (the
control), so the audit has the power to see a broken sampler."""
import math

import numpy as np
import pytest

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.privacy import Accountant, zcdp_delta
from gpu_dpsyn.privacy.drawing import draw
from gpu_dpsyn.privacy.samplers import DiscreteGaussian, DiscreteLaplace

CPU = get_backend("cpu")
REPEATS = 50_000
CONFIDENCE = 1e-6  # total error probability of the audit's bounds
KEY = tuple(range(40, 48))


def _log_factorials(n: int) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1)))])


def _log_binom_tail(n: int, k: int, p: float) -> float:
    """log P[Binomial(n, p) >= k]."""
    if k <= 0:
        return 0.0
    lf = _log_factorials(n)
    j = np.arange(k, n + 1)
    terms = lf[n] - lf[j] - lf[n - j] + j * math.log(p) + (n - j) * math.log1p(-p)
    m = terms.max()
    return float(m + math.log(np.exp(terms - m).sum()))


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    """(lower, upper) bounds on a binomial p, each failing with probability alpha."""
    def bisect(f, lo, hi):
        for _ in range(60):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f(mid) else (lo, mid)
        return lo, hi
    lower = 0.0 if k == 0 else bisect(
        lambda p: _log_binom_tail(n, k, p) < math.log(alpha), 0.0, 1.0)[0]
    upper = 1.0 if k == n else bisect(  # P[X <= k] = 1 - P[X >= k + 1]
        lambda p: -math.expm1(_log_binom_tail(n, k + 1, p)) >= alpha, 0.0, 1.0)[1]
    return lower, upper


def neighbours():
    """Two tables that differ in one individual's record, and their exact counts."""
    x = np.repeat(np.arange(4, dtype=np.uint8), [120, 40, 7, 0])
    x_prime = np.append(x, np.uint8(3))  # one more record, in the empty cell
    return [(CPU.histogram([t], (0,), (4,))[3]) for t in (x, x_prime)]


def audit_epsilon(spec, delta: float, thresholds) -> float:
    """Largest Clopper-Pearson lower bound on epsilon over events {y >= c + j}."""
    c0, c1 = neighbours()
    assert (c0, c1) == (0, 1)
    y0 = c0 + draw(CPU, spec, REPEATS, KEY, 1, 0)  # 50,000 releases of each table
    y1 = c1 + draw(CPU, spec, REPEATS, KEY, 1, 1)
    alpha = CONFIDENCE / (2 * len(thresholds))  # Bonferroni over bounds and events
    best = -math.inf
    for j in thresholds:
        lo1 = clopper_pearson(int((y1 >= j).sum()), REPEATS, alpha)[0]
        hi0 = clopper_pearson(int((y0 >= j).sum()), REPEATS, alpha)[1]
        if lo1 - delta > 0:
            best = max(best, math.log((lo1 - delta) / hi0))
    return best


def test_clopper_pearson_against_closed_forms():
    # k = 0: upper = 1 - alpha^(1/n); k = n: lower = alpha^(1/n)
    assert clopper_pearson(0, 100, 0.01)[1] == pytest.approx(1 - 0.01 ** (1 / 100), rel=1e-6)
    assert clopper_pearson(100, 100, 0.01)[0] == pytest.approx(0.01 ** (1 / 100), rel=1e-6)
    lo, hi = clopper_pearson(300, 1000, 1e-3)
    assert lo < 0.3 < hi and hi - lo < 0.1


def _charged(mechanism: str, epsilon: float, delta: float):
    acc = Accountant(epsilon, delta)
    acc.choose_mechanism([1.0], [4], mechanism)
    return acc.charge(1.0, "count", ["a"], 4).noise, acc


def test_audit_laplace_stays_below_the_claim_and_catches_a_weakened_one():
    spec, _ = _charged("laplace", 1.0, 1e-9)  # claims (1, 0)-DP
    eps = audit_epsilon(spec, 0.0, [1, 2])
    assert 0.85 < eps <= 1.0, eps  # tight, and never above the claim
    weak = DiscreteLaplace.at_least(spec.scale / 2)  # really (2, 0)-DP
    assert audit_epsilon(weak, 0.0, [1, 2]) > 1.0


def test_audit_gaussian_stays_below_the_claim_and_catches_a_weakened_one():
    spec, acc = _charged("gaussian", 2.0, 1e-6)  # rho-zCDP, claims (2, 1e-6)-DP
    assert zcdp_delta(acc.rho, 2.0) <= 1e-6
    eps = audit_epsilon(spec, 1e-6, [1, 2, 3])
    assert 0.3 < eps <= 2.0, eps
    weak = DiscreteGaussian.at_least(spec.sigma2 / 64)  # sigma / 8
    assert audit_epsilon(weak, 1e-6, [1, 2, 3]) > 2.0
