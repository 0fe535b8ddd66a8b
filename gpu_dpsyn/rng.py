"""Counter-based randomness shared by every backend.

Every random number in the pipeline is Philox4x32-10(key, counter) with
key = the 64-bit seed split in two 32-bit words and counter =
(element index, step, stream, call).  The CUDA kernels use the same layout,
so the CPU and GPU backends draw bit-identical streams.
"""
from __future__ import annotations

import os

# stream ids (counter word 2): one per purpose so streams never overlap
NOISE = 1
INIT = 2
GUM_SORT = 3
GUM_SLOT = 4
DECODE = 5
SELECT = 6
GUM_PAIR = 7
UNMERGE = 8
APPEND = 9
PRIOR = 10

# Philox4x32-10 constants (Salmon et al. 2011, Random123)
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10


def make_seed(seed: int | None) -> int:
    """The user's seed, or 64 fresh bits from the OS when none is given."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, bool) or not isinstance(seed, (int,)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed) & 0xFFFFFFFFFFFFFFFF


def split_key(seed: int) -> tuple[int, int]:
    return seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
