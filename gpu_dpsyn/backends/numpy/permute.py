"""Random bijections without sorting: a 4-round Feistel network on 2h bits with cycle
walking.  Integer-only, so the CUDA kernels compute the same permutations.

Its use in a GUM update: which rem[c] of the s[c] records of an over cell are removed
(a bijection of [0, s[c]) salted by the cell)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.philox import philox4x32

ROUNDS = 4
_M32 = np.uint64(0xFFFFFFFF)


def round_keys(key, update_id: int, call: int, stream: int = rng.GUM_SORT) -> list[int]:
    w = philox4x32(key, np.arange(ROUNDS, dtype=np.uint64), update_id, stream, call)[0]
    return [int(x) for x in w]


def half_bits(total) -> np.ndarray:
    """h = ceil(max(2, bit_length(total - 1)) / 2) per element: 2^(2h) >= total."""
    t = np.asarray(total, dtype=np.int64)
    b = np.maximum(2, np.frexp(np.maximum(t - 1, 0).astype(np.float64))[1])  # exact < 2^53
    return ((b + 1) // 2).astype(np.uint64)


def _hash32(x: np.ndarray) -> np.ndarray:
    # lowbias32 (Chris Wellons): good avalanche from two multiplies
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x7FEB352D)) & _M32
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(0x846CA68B)) & _M32
    return x ^ (x >> np.uint64(16))


def _feistel(x, h, keys, salt) -> np.ndarray:
    mask = (np.uint64(1) << h) - np.uint64(1)
    left, right = x >> h, x & mask
    for k in keys:
        rk = _hash32(np.uint64(k) ^ salt)
        left, right = right, left ^ (_hash32(right ^ rk) & mask)
    return (left << h) | right


def feistel_ranks(r, size, salt, keys) -> np.ndarray:
    """pi(r) for each element: pi a bijection of [0, size) chosen by (keys, salt)."""
    r = np.asarray(r, dtype=np.uint64)
    size = np.asarray(size, dtype=np.uint64)
    salt = np.asarray(salt, dtype=np.uint64) & _M32
    h = half_bits(size)
    y = _feistel(r, h, keys, salt)
    bad = np.nonzero(y >= size)[0]
    while bad.size:  # cycle walking: the domain is < 4 * size, so few rounds
        y[bad] = _feistel(y[bad], h[bad], keys, salt[bad])
        bad = bad[y[bad] >= size[bad]]
    return y.astype(np.int64)
