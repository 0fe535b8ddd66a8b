"""Philox4x32-10 vectorized with NumPy (uint64 products give mulhi/mullo)."""
from __future__ import annotations

import numpy as np

from ..rng import PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1

_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def philox4x32(key: tuple[int, int], c0, c1=0, c2=0, c3=0) -> tuple[np.ndarray, ...]:
    """Four uint32 words per counter; counters broadcast like NumPy arrays."""
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) & _MASK for c in (c0, c1, c2, c3))
    c0, c1, c2, c3 = np.broadcast_arrays(c0, c1, c2, c3)
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    for r in range(PHILOX_ROUNDS):
        if r:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
        p0 = c0 * m0
        p1 = c2 * m1
        c0, c1, c2, c3 = (
            (p1 >> _SHIFT) ^ c1 ^ np.uint64(k0),
            p1 & _MASK,
            (p0 >> _SHIFT) ^ c3 ^ np.uint64(k1),
            p0 & _MASK,
        )
    return tuple(x.astype(np.uint32) for x in (c0, c1, c2, c3))


def uniform(word) -> np.ndarray:
    """uint32 -> float64 in the open interval (0, 1)."""
    return (np.asarray(word, dtype=np.float64) + 0.5) * (1.0 / 4294967296.0)
