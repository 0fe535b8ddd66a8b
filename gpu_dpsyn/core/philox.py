"""Philox4x32-10 vectorized with NumPy (uint64 products give mulhi/mullo)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core.rng import PHILOX_M0, PHILOX_M1, PHILOX_ROUNDS, PHILOX_W0, PHILOX_W1

_MASK = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


def philox4x32(key: tuple[int, int], c0, c1=0, c2=0, c3=0) -> tuple[np.ndarray, ...]:
    """Four uint32 words per counter; counters broadcast like NumPy arrays.  Each round
    writes into six arrays made once: a new array per operation cost twice the time
    (fresh pages each round)."""
    words = [np.asarray(c, dtype=np.uint64) for c in (c0, c1, c2, c3)]
    shape = np.broadcast_shapes(*(w.shape for w in words))
    c0, c1, c2, c3 = (np.bitwise_and(w, _MASK, out=np.empty(shape, dtype=np.uint64))
                      for w in words)
    k0, k1 = key[0] & 0xFFFFFFFF, key[1] & 0xFFFFFFFF
    m0, m1 = np.uint64(PHILOX_M0), np.uint64(PHILOX_M1)
    p0, p1 = np.empty(shape, dtype=np.uint64), np.empty(shape, dtype=np.uint64)
    for r in range(PHILOX_ROUNDS):
        if r:
            k0 = (k0 + PHILOX_W0) & 0xFFFFFFFF
            k1 = (k1 + PHILOX_W1) & 0xFFFFFFFF
        np.multiply(c0, m0, out=p0)
        np.multiply(c2, m1, out=p1)
        # (c0, c1, c2, c3) <- (hi(p1) ^ c1 ^ k0, lo(p1), hi(p0) ^ c3 ^ k1, lo(p0))
        np.right_shift(p1, _SHIFT, out=c0)
        c0 ^= c1
        c0 ^= np.uint64(k0)
        np.right_shift(p0, _SHIFT, out=c2)
        c2 ^= c3
        c2 ^= np.uint64(k1)
        np.bitwise_and(p1, _MASK, out=c1)
        np.bitwise_and(p0, _MASK, out=c3)
    return tuple(x.astype(np.uint32) for x in (c0, c1, c2, c3))


def uniform(word) -> np.ndarray:
    """uint32 -> float64 in the open interval (0, 1)."""
    return (np.asarray(word, dtype=np.float64) + 0.5) * (1.0 / 4294967296.0)
