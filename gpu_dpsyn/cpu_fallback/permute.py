"""A random bijection of [0, A) without sorting: a 4-round Feistel network on 2h bits
with cycle walking.  Integer-only, so the CUDA kernel computes the same permutation."""
from __future__ import annotations

import numpy as np

from .. import rng
from .philox import philox4x32

ROUNDS = 4
_M32 = np.uint64(0xFFFFFFFF)


def round_keys(key, update_id: int, call: int) -> list[int]:
    w = philox4x32(key, np.arange(ROUNDS, dtype=np.uint64), update_id, rng.GUM_PAIR, call)[0]
    return [int(x) for x in w]


def half_bits(total: int) -> int:
    b = max(2, int(total - 1).bit_length())
    return (b + 1) // 2


def _hash32(x: np.ndarray) -> np.ndarray:
    # lowbias32 (Chris Wellons): good avalanche from two multiplies
    x = x ^ (x >> np.uint64(16))
    x = (x * np.uint64(0x7FEB352D)) & _M32
    x = x ^ (x >> np.uint64(15))
    x = (x * np.uint64(0x846CA68B)) & _M32
    return x ^ (x >> np.uint64(16))


def _feistel(x: np.ndarray, h: int, keys) -> np.ndarray:
    mask = np.uint64((1 << h) - 1)
    left, right = x >> np.uint64(h), x & mask
    for k in keys:
        left, right = right, left ^ (_hash32(right ^ np.uint64(k)) & mask)
    return (left << np.uint64(h)) | right


def feistel_permutation(total: int, keys) -> np.ndarray:
    """perm[j] for j in [0, total): a bijection onto [0, total)."""
    if total <= 0:
        return np.zeros(0, dtype=np.int64)
    h = half_bits(total)
    y = _feistel(np.arange(total, dtype=np.uint64), h, keys)
    bad = np.nonzero(y >= np.uint64(total))[0]
    while bad.size:  # cycle walking: the domain is < 4 * total, so few rounds
        y[bad] = _feistel(y[bad], h, keys)
        bad = bad[y[bad] >= np.uint64(total)]
    return y.astype(np.int64)
