"""Fixed-critical-value tests for the sampler checks (as OpenDP's sampler tests do).

Each test fails with probability about 1e-6 when the sampler is right."""
import math

import numpy as np

Z_1E6 = 4.891638  # two-sided N(0, 1) critical value at p = 1e-6: norm.isf(0.5e-6)
# upper 1e-6 critical values of chi-square: scipy.stats.chi2.isf(1e-6, df)
CHI2_1E6 = {2: 27.631, 3: 30.6648, 4: 33.3768, 5: 35.8882, 6: 38.2583, 8: 42.7009,
            10: 46.863, 12: 50.8253, 16: 58.3244, 20: 65.4207, 24: 72.2289, 30: 82.0441,
            40: 97.653, 50: 112.6081, 60: 127.0964, 80: 155.0805, 100: 182.1268,
            148: 244.6044}


def binomial_z(count: int, n: int, p: float) -> float:
    return (count - n * p) / math.sqrt(n * p * (1 - p))


def chi_square(observed: np.ndarray, pmf: np.ndarray, lo: int, min_expected: float = 20):
    """(statistic, df): integer draws against a pmf on lo, lo + 1, ..., with the tails
    merged into the end bins until each expects at least min_expected draws."""
    n = observed.size
    exp = pmf * n
    keep = np.flatnonzero(exp >= min_expected)
    a, b = keep[0], keep[-1]
    expected = np.concatenate([[exp[:a + 1].sum()], exp[a + 1:b], [exp[b:].sum()]])
    idx = np.clip(observed - lo, a, b) - a  # values below / above fold into the end bins
    obs = np.bincount(idx, minlength=b - a + 1)
    expected *= n / expected.sum()
    return float(((obs - expected) ** 2 / expected).sum()), b - a


def discrete_gaussian_pmf(sigma2: float, half: int):
    k = np.arange(-half, half + 1)
    w = np.exp(-k.astype(float) ** 2 / (2 * sigma2))
    return w / w.sum(), -half


def discrete_laplace_pmf(scale: float, half: int):
    k = np.arange(-half, half + 1)
    r = math.exp(-1 / scale)
    return (1 - r) / (1 + r) * r ** np.abs(k), -half
