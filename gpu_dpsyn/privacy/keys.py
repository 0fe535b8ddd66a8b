"""The 256-bit key of the noise generator.

Without a seed it is 32 bytes from os.urandom: nobody, the curator included, can
reproduce the noise.  With a seed (tests, benchmarks) it is SHA-256 of the seed and the
run's public parameters, so the whole run is reproducible -- and so is its noise: two
releases made with one seed from neighbouring tables differ by exactly the data, which
leaks it.  A seeded fit therefore warns.  Mixing in the parameters keeps, say, an
epsilon = 1 and an epsilon = 0.5 release of one seed from sharing their noise.
"""
from __future__ import annotations

import hashlib
import json
import os
import warnings

from gpu_dpsyn.privacy.chacha import key_words
from gpu_dpsyn.errors import SeededNoiseWarning


SEEDED_MESSAGE = (
    "a seed was given, so the privacy noise is reproducible from it: never publish two "
    "releases made with the same seed (from the same or neighbouring data) -- comparing "
    "them can reveal individual records. Omit the seed for a release; the noise key then "
    "comes from os.urandom")


def noise_key(seed: int | None, **context) -> tuple[int, ...]:
    """Eight 32-bit words: os.urandom(32) without a seed; else SHA-256 of the seed and
    the public parameters in `context` (warns: SeededNoiseWarning)."""
    if seed is None:
        return key_words(os.urandom(32))
    warnings.warn(SEEDED_MESSAGE, SeededNoiseWarning, stacklevel=4)  # the caller of fit()
    text = json.dumps(context, sort_keys=True, default=str).encode()
    # each version: the same parameters measure other triples (v2 the neighbour shuffle,
    # v3 the Gibbs sweep on the rounds' records, v4 fewer sweep and polish passes on
    # them, v5 the sweep's IPF ending when a pass stops improving it, v6 at most 2^16
    # records of S, v7 low-count filtering's threshold growing with a column's values and
    # its merged cells weighed as the noisy counts they sum, v8 triangles combined only
    # where the triple's cells stand out of its noise); a seed must not repeat older
    # noise on them
    digest = hashlib.sha256(b"gpu_dpsyn/noise-key/v8\0" + int(seed).to_bytes(8, "little")
                            + text).digest()
    return key_words(digest)
