"""Exact samplers for the discrete Laplace and discrete Gaussian (Canonne, Kamath and
Steinke 2020, "The Discrete Gaussian for Differential Privacy", Alg. 1-3).

Everything uses uniform random 32-bit words and integer arithmetic only: no floating
point touches a random value, so every output has exactly the probability the
mechanism's proof assumes (no truncated tails, no quantized inverse CDF).

This module is the scalar reference, on Python's unbounded integers.  The NumPy
fallback (backends/numpy/noise.py) and the CUDA kernel (backends/cuda/noise.cu) run the same
algorithms on fixed-width integers and consume the same words in the same order; an
element whose intermediate values would not fit their widths is handed back (status
WIDE) and finished here, so all three give the same, exact, result.

Word order, shared by the three implementations:
* uniform_int(m): nothing if m == 1; else k = ceil(b / 32) words per try, b =
  bit_length(m - 1), most significant word first and masked to its b - 32(k-1) bits;
  tries repeat until the value is < m.
* bernoulli(n, d): uniform_int(d) < n, with the words of a try drawn only until the
  outcome is settled, and none when n is 0 or d (see bernoulli).
* Bernoulli(n / (d K)) is drawn as bernoulli(n, d) and then, only if that was true,
  bernoulli(1, K): the product of two independent events.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from gpu_dpsyn.errors import PrivacyParameterError, SamplerError
from gpu_dpsyn.privacy.chacha import WINDOW, block_of

# per-element status of the fixed-width samplers
OK, WIDE, FAIL = 0, 1, 2
# an element that needs more words than this fails closed (nothing is released): with
# sane parameters the chance is below 2^-(10^6); it bounds every loop of the kernels
MAX_WORDS = 1 << 24
PRECISION_BITS = 32  # sigma^2 and the Laplace scale are rounded up by < 2^-32 relative
MAX_NOISE_CELLS = 1 << 30  # elements of one draw: counter 4e + j % 4 stays 32-bit
_U64, _U128, _I63 = 1 << 64, 1 << 128, 1 << 63


@dataclass(frozen=True)
class DiscreteGaussian:
    """N_Z(0, sigma^2) with sigma^2 = p / q exactly: P(y) ~ exp(-y^2 / (2 sigma^2))."""
    p: int
    q: int

    @classmethod
    def at_least(cls, sigma2) -> "DiscreteGaussian":
        """The rational sigma^2 = p / 2^k >= sigma2 with p >= 2^32 (or k = 0): noise never
        below what the accountant asked for, and at most 2^-32 relatively above it."""
        return cls(*_round_up(sigma2, "sigma^2"))

    @property
    def sigma2(self) -> Fraction:
        return Fraction(self.p, self.q)

    @property
    def sigma(self) -> float:
        return math.sqrt(self.p / self.q)

    @property
    def t(self) -> int:
        """The discrete Laplace proposal's scale: floor(sigma) + 1."""
        return math.isqrt(self.p // self.q) + 1

    @property
    def accept_den(self) -> int:
        """gamma = (|Y| q t - p)^2 / (2 p q t^2): this is its denominator."""
        return 2 * self.p * self.q * self.t ** 2

    def fits_fixed(self) -> bool:
        """Whether the 64/128-bit samplers can run it (else every element is exact here)."""
        return (self.q * self.t < _U64 and self.p < _U64 and self.accept_den < _U128)

    def describe(self) -> dict:
        return {"distribution": "discrete_gaussian", "sigma2": f"{self.p}/{self.q}",
                "sigma": self.sigma}


@dataclass(frozen=True)
class DiscreteLaplace:
    """Discrete Laplace with scale t / s: P(y) ~ exp(-|y| s / t)."""
    t: int
    s: int

    @classmethod
    def at_least(cls, scale) -> "DiscreteLaplace":
        return cls(*_round_up(scale, "scale"))

    @property
    def scale(self) -> float:
        return self.t / self.s

    @property
    def sigma(self) -> float:
        """Standard deviation: sqrt(2 r) / (1 - r), r = exp(-s / t)."""
        r = math.exp(-self.s / self.t)
        return math.sqrt(2 * r) / (1 - r)

    def fits_fixed(self) -> bool:
        return self.t < _U64 and self.s < _U64

    def describe(self) -> dict:
        return {"distribution": "discrete_laplace", "scale": f"{self.t}/{self.s}",
                "sigma": self.sigma}


def _round_up(x, what: str) -> tuple[int, int]:
    """(a, 2^k) with a / 2^k >= x, a >= 2^32 unless k = 0: at most 2^-32 relatively above."""
    f = _positive_fraction(x, what)
    e = f.numerator.bit_length() - f.denominator.bit_length()  # floor(log2 f), exactly
    if (f.numerator << max(0, -e)) < (f.denominator << max(0, e)):
        e -= 1
    k = max(0, PRECISION_BITS - e)
    return -((-f.numerator << k) // f.denominator), 1 << k


def _positive_fraction(x, what: str) -> Fraction:
    """x as an exact Fraction; refuses NaN, infinities and non-positive values (fail
    closed: a NaN scale must never become zero noise)."""
    if isinstance(x, (bool, str)) or not isinstance(x, (int, float, Fraction, np.number)):
        raise PrivacyParameterError(f"noise {what} must be a number, got {x!r}")
    if isinstance(x, (float, np.floating)) and not math.isfinite(x):
        raise PrivacyParameterError(f"noise {what} must be finite, got {x!r}")
    f = Fraction(x)
    if f <= 0:
        raise PrivacyParameterError(f"noise {what} must be > 0, got {x!r}")
    return f


class WordStream:
    """The 32-bit words of one element's stream (layout: chacha.block_of)."""

    def __init__(self, key, element: int, stream: int, call: int, max_words: int = MAX_WORDS):
        self.key, self.element, self.stream, self.call = key, element, stream, call
        self.max_words, self.used, self._block = max_words, 0, []

    def next(self) -> int:
        if self.used >= self.max_words:
            raise SamplerError(f"a noise sampler needed more than {self.max_words} random "
                               "words; nothing was released")
        if self.used % 16 == 0:
            self._block = block_of(self.key, self.element, self.used // 16, self.stream,
                                   self.call)
        w = self._block[self.used % 16]
        self.used += 1
        return w


# -- the algorithms -----------------------------------------------------------------

def _word_layout(m: int) -> tuple[int, int]:
    """(words per try, mask of the most significant word) for values in [0, m), m >= 2:
    k = ceil(b / 32) words, b = bit_length(m - 1)."""
    bits = (m - 1).bit_length()
    nw = -(-bits // 32)
    return nw, (1 << (bits - 32 * (nw - 1))) - 1


def uniform_int(w, m: int) -> int:
    """Uniform on {0, ..., m-1}, words most significant first.  Proof: the masked words
    are uniform on [0, 2^b), 2^b >= m; conditioning on the value being < m leaves it
    uniform on [0, m), and a try succeeds with probability m / 2^b > 1/2."""
    if m == 1:
        return 0
    nw, top = _word_layout(m)
    while True:
        u = w.next() & top
        for _ in range(nw - 1):
            u = (u << 32) | w.next()
        if u < m:
            return u


def bernoulli(w, n: int, d: int) -> bool:
    """Bernoulli(n / d), 0 <= n <= d: [U <= n - 1] for U uniform on [0, d), compared
    lazily.  n = 0 and n = d are certain and draw nothing.  Otherwise U's words are drawn
    most significant first, as uniform_int(d) draws them, and only until both "U <= d-1"
    (else the try is rejected) and the comparison with n - 1 are settled by the words so
    far.  The outcome is the same function of the full U either way, so P = n / d
    exactly; usually one word decides."""
    if n == 0 or n >= d:
        return n > 0
    nw, top = _word_layout(d)
    dm, nm = d - 1, n - 1
    while True:
        below, cmp = False, 0  # U < d - 1 settled; sign of U - (n - 1) once settled
        for i in range(nw):
            shift = 32 * (nw - 1 - i)
            x = w.next() & (top if i == 0 else 0xFFFFFFFF)
            di, ni = (dm >> shift) & 0xFFFFFFFF, (nm >> shift) & 0xFFFFFFFF
            if not below:
                if x > di:
                    break  # U > d - 1: reject, try again
                below = x < di
            if cmp == 0:
                cmp = (x > ni) - (x < ni)
            if below and cmp:
                return cmp < 0
        else:
            return cmp <= 0  # U <= d - 1 holds; U == n - 1 if cmp is still 0


def bernoulli_exp_le1(w, n: int, d: int) -> bool:
    """Bernoulli(exp(-gamma)), gamma = n / d in [0, 1] (CKS Alg. 1, first part).
    Proof: with A_k ~ Bernoulli(gamma / k), the loop stops at the first K with A_K = 0,
    so P[K > k] = gamma^k / k!, and P[K odd] = sum_k (-gamma)^k / k! = exp(-gamma)."""
    k = 1
    while bernoulli(w, n, d) and bernoulli(w, 1, k):
        k += 1
    return k % 2 == 1


def bernoulli_exp(w, n: int, d: int) -> bool:
    """Bernoulli(exp(-n / d)) for any n >= 0 (CKS Alg. 1): exp(-gamma) =
    exp(-1)^floor(gamma) * exp(-(gamma - floor(gamma))), a product of independent
    Bernoullis, drawn until the first failure."""
    while n > d:
        if not bernoulli_exp_le1(w, 1, 1):
            return False
        n -= d
    return bernoulli_exp_le1(w, n, d)


def discrete_laplace(w, t: int, s: int) -> int:
    """P(y) ~ exp(-|y| s / t) (CKS Alg. 2).  Proof: U uniform on [0, t) kept with
    probability exp(-U/t) and V ~ Geometric(1 - exp(-1)) make X = U + tV geometric:
    P(X = x) ~ exp(-x / t); Y = floor(X / s) is then geometric with ratio exp(-s/t);
    a fair sign, with -0 rejected, gives the two-sided law."""
    while True:
        u = uniform_int(w, t)
        if not bernoulli_exp_le1(w, u, t):
            continue
        v = 0
        while bernoulli_exp_le1(w, 1, 1):
            v += 1
        y = (u + t * v) // s
        neg = bernoulli(w, 1, 2)
        if neg and y == 0:
            continue
        return -y if neg else y


def discrete_gaussian(w, g: DiscreteGaussian) -> int:
    """N_Z(0, p/q) (CKS Alg. 3).  Proof: propose Y from the discrete Laplace with scale
    t = floor(sigma) + 1 and accept with probability exp(-(|Y| - sigma^2/t)^2 /
    (2 sigma^2)); the product of proposal and acceptance is proportional to
    exp(-Y^2 / (2 sigma^2)), the terms in |Y| cancelling.  In integers:
    gamma = (|Y| q t - p)^2 / (2 p q t^2)."""
    t, den = g.t, g.accept_den
    while True:
        y = discrete_laplace(w, t, 1)
        a = abs(y) * g.q * t - g.p
        if bernoulli_exp(w, a * a, den):
            return y


def sample_ref(spec, key, element: int, stream: int, call: int,
               max_words: int = MAX_WORDS) -> int:
    """One element's noise, exactly, on unbounded integers (raises SamplerError)."""
    w = WordStream(key, element, stream, call, max_words)
    if isinstance(spec, DiscreteGaussian):
        y = discrete_gaussian(w, spec)
    else:
        y = discrete_laplace(w, spec.t, spec.s)
    if abs(y) >= _I63:  # cannot be stored: fail closed rather than wrap
        raise SamplerError("a noise value does not fit 64 bits; nothing was released")
    return y


def check_max_words(max_words: int) -> None:
    """The word cap every implementation enforces alike: a positive multiple of the
    window (NumPy checks it at window refills) and at most 2^32 (K and window indices
    then fit 32 bits everywhere)."""
    if not (0 < max_words <= 1 << 32 and max_words % WINDOW == 0):
        raise SamplerError(f"max_words must be a multiple of {WINDOW} in (0, 2^32], "
                           f"got {max_words}")
