"""Counter-based randomness shared by every backend.

Post-processing randomness (GUM, decoding, appending) is Philox4x32-10(key, counter)
with key = the 64-bit seed split in two 32-bit words and counter =
(element index, step, stream, call).  Measurement noise and contribution bounding
read ChaCha20 under a separate 256-bit key instead (privacy/keys.py, privacy/chacha.py),
with the stream ids below as a nonce word.  The CUDA kernels use the same layouts, so
the CPU and GPU backends draw bit-identical streams.
"""
from __future__ import annotations

import os

import numpy as np

from gpu_dpsyn.errors import DPSynError

# stream ids (counter word 2): one per purpose so streams never overlap
NOISE = 1
INIT = 2
GUM_SORT = 3
GUM_SLOT = 4
DECODE = 5
SELECT = 6
# 7: retired (GUM's random slot pairing; slots now pair in cell order)
UNMERGE = 8
APPEND = 9
PRIOR = 10
BOUND = 11  # contribution bounding (ChaCha20)
QUANTILE = 12  # private quantile bins' grid histogram (ChaCha20)
SHUFFLE = 13  # the neighbour shuffle after GUM (shuffle.py)
GIBBS = 14  # the Gibbs sweep's draws (gibbs.py)
POLISH = 15  # the polish's record order and ties (polish.py)

# Philox4x32-10 constants (Salmon et al. 2011, Random123)
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10


def make_seed(seed: int | None) -> int:
    """The user's seed, or 64 fresh bits from the OS when none is given.  A seed is an
    integer in [0, 2^64): larger ones would alias smaller ones."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
            or not 0 <= seed < 1 << 64:
        raise DPSynError(f"seed must be an integer in [0, 2^64), got {seed!r}")
    return int(seed)


def split_key(seed: int) -> tuple[int, int]:
    return seed & 0xFFFFFFFF, (seed >> 32) & 0xFFFFFFFF
