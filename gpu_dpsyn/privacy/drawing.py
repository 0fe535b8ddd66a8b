"""Exact noise drawn on a backend: the backend's fixed-width samplers (noise.cu, on the
device or built for the host, else backends/numpy/noise.py) for many draws in one call,
then samplers.sample_ref for any element they hand back (WIDE).  Any element that failed
or was never written raises, and nothing is released.

A draw is (spec, n, call): elements 0 .. n-1 of that call's word streams, so a draw's
values are the same whichever draws share its call to the backend."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core.batching import capped_runs
from gpu_dpsyn.errors import SamplerError
from gpu_dpsyn.privacy.samplers import (FAIL, MAX_NOISE_CELLS, MAX_WORDS, OK, WIDE,
                                        DiscreteGaussian, check_max_words, sample_ref)

NOISE_WORDS = 7  # noise.cu's words a draw of noise_draws
_U64_MASK = (1 << 64) - 1


def draw_params(spec, call: int) -> list[int]:
    """One draw's words for the kernels' noise_draws: call, 1 for the Gaussian, t, then
    q t and p and den's two 64-bit halves, or s (the Laplace); spec.fits_fixed()."""
    if isinstance(spec, DiscreteGaussian):
        den = spec.accept_den
        return [call, 1, spec.t, spec.q * spec.t, spec.p, den >> 64, den & _U64_MASK]
    return [call, 0, spec.t, spec.s, 0, 0, 0]


def kernel_layout(draws):
    """The (spec, n, call) draws as noise.cu's noise_draws reads them, on the host: (each
    draw's end, int64; its NOISE_WORDS words a row, uint64; the elements in all)."""
    ends = np.cumsum([n for _, n, _ in draws], dtype=np.int64)
    params = np.array([draw_params(spec, call) for spec, _, call in draws],
                      dtype=np.uint64).reshape(-1, NOISE_WORDS)
    return ends, params, int(ends[-1]) if len(ends) else 0


def finish(values, status, spec, key, stream: int, call: int,
           max_words: int = MAX_WORDS):
    """Complete a fixed-width draw: any FAIL raises (nothing is released); WIDE elements
    are drawn again here, on unbounded integers, from the same words."""
    status = np.asarray(status)
    if (status == FAIL).any():
        raise SamplerError(f"a noise sampler needed more than {max_words} random words; "
                           "nothing was released")
    if not np.isin(status, (OK, WIDE)).all():  # anything a kernel did not write
        raise SamplerError("a noise sampler left values not written; nothing was released")
    values = np.array(values, dtype=np.int64)
    for i in np.flatnonzero(status == WIDE):
        values[i] = sample_ref(spec, key, int(i), stream, call, max_words)
    return values


def draw(backend, spec, n: int, key, stream: int, call: int,
         max_words: int = MAX_WORDS):
    """n exact draws of spec on a backend, as a NumPy int64 array: the backend's
    fixed-width sampler, then the reference for any element it handed back."""
    return draw_many(backend, [(spec, n, call)], key, stream, max_words)[0]


def draw_many(backend, draws, key, stream: int, max_words: int = MAX_WORDS) -> list:
    """[draw(backend, spec, n, key, stream, call) for (spec, n, call) in draws], the same
    values: the fixed-width draws in runs of at most MAX_NOISE_CELLS elements, one backend
    call a run (on a device one launch and two reads, not two reads a draw); a spec past
    the fixed widths on the reference alone."""
    check_max_words(max_words)
    for _, n, call in draws:
        if n > MAX_NOISE_CELLS:
            raise SamplerError(f"{n:,} noise values in one draw; at most 2^30")
        if not 0 <= call < 1 << 32:  # the word streams' nonce holds 32 bits of it
            raise SamplerError(f"noise call {call} is outside 0 .. 2^32 - 1")
    out = [None] * len(draws)
    fixed = [i for i, d in enumerate(draws) if d[0].fits_fixed()]
    for run in capped_runs(fixed, lambda i: draws[i][1], MAX_NOISE_CELLS):
        values, status = backend.noise_draws([draws[j] for j in run], key, stream, max_words)
        values, status = backend.to_numpy(values), backend.to_numpy(status)
        cut = np.cumsum([draws[j][1] for j in run])[:-1]
        for j, v, st in zip(run, np.split(values, cut), np.split(status, cut)):
            spec, _, call = draws[j]
            out[j] = finish(v, st, spec, key, stream, call, max_words)
    for j, (spec, n, call) in enumerate(draws):
        if out[j] is None:  # beyond 64/128 bits: every element on unbounded integers
            out[j] = finish(np.zeros(n, dtype=np.int64), np.full(n, WIDE, dtype=np.uint8),
                            spec, key, stream, call, max_words)
    return out
