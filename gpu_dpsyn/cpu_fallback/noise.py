"""Integer noise from the counter RNG.

Discrete Gaussian N_Z(0, sigma^2) by Canonne-Kamath-Steinke (2020), Alg. 3:
propose Y ~ discrete Laplace(t), t = floor(sigma) + 1, accept with probability
exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)).  Trial k of cell i uses the counter
(i, k, NOISE, call), so the result does not depend on how cells are batched.
"""
from __future__ import annotations

import numpy as np

from .. import rng
from .philox import philox4x32, uniform

MAX_TRIALS = 256  # acceptance rate is > 0.4 for every sigma; 256 misses ~1e-58


def _geometric(u: np.ndarray, t: float) -> np.ndarray:
    # P(G = g) = (1 - e^{-1/t}) e^{-g/t}, g >= 0, by inversion
    return np.floor(-t * np.log(u))


def discrete_laplace(key, n: int, scale: float, call: int) -> np.ndarray:
    """Two-sided geometric noise, P(y) ~ exp(-|y|/scale)."""
    w = philox4x32(key, np.arange(n, dtype=np.uint64), 0, rng.NOISE, call)
    return (_geometric(uniform(w[0]), scale) - _geometric(uniform(w[1]), scale)).astype(np.int64)


def discrete_gaussian(key, n: int, sigma: float, call: int) -> np.ndarray:
    """n draws of N_Z(0, sigma^2)."""
    if sigma <= 0:
        return np.zeros(n, dtype=np.int64)
    t = float(np.floor(sigma) + 1.0)
    s2 = sigma * sigma
    out = np.zeros(n, dtype=np.int64)
    todo = np.arange(n, dtype=np.uint64)
    for trial in range(MAX_TRIALS):
        if todo.size == 0:
            return out
        w = philox4x32(key, todo, trial, rng.NOISE, call)
        y = _geometric(uniform(w[0]), t) - _geometric(uniform(w[1]), t)
        d = np.abs(y) - s2 / t
        ok = uniform(w[2]) < np.exp(-(d * d) / (2.0 * s2))
        out[todo[ok].astype(np.int64)] = y[ok].astype(np.int64)
        todo = todo[~ok]
    raise RuntimeError("discrete Gaussian sampler did not finish")  # pragma: no cover


def continuous_noise(key, n: int, scale: float, mechanism: str, call: int) -> np.ndarray:
    """Real-valued Gaussian (Box-Muller, std = scale) or Laplace (scale b) noise, for
    real-valued statistics such as InDif scores."""
    w = philox4x32(key, np.arange(n, dtype=np.uint64), 0, rng.SELECT, call)
    u1, u2 = uniform(w[0]), uniform(w[1])
    if mechanism == "gaussian":
        return scale * np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return scale * (np.log(u1) - np.log(u2))  # difference of two exponentials
