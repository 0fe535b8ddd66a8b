"""Smoothing of a noisy marginal along its ordered axes (the bins of a number or a date),
each marginal by the amount that Stein's unbiased risk estimate (SURE) says lowers its
error most: none where the counts vary faster than the noise.  Post-processing of noisy
counts only: the amount is chosen from them and their noise sd.

Why.  Binned numbers are measured at their schema's bins in every marginal that holds
them.  A pair of two such columns at 32 bins each over 30,000 rows has about 30 records a
cell, and at eps 1 its noise is as large: the measured table spreads a correlation of
0.83 into 0.65 (0.32 at eps 0.3), and empirical Bayes (empirical_bayes.py) cannot help,
for it treats the cells as exchangeable.  Neighbouring bins of a number hold similar
counts, so averaging them trades a little bias for a large cut in noise: DPSyn measured
such columns at coarse bins for the same reason (its NIST report, 5.4).  Smoothing keeps
the fine bins and lets the measured counts say how far to average.

The smoother.  One step is the lazy random walk on the axis's bins with reflecting ends,
W = I - Lap / 4 (Lap: the path graph's Laplacian): symmetric, each row and column summing
to 1, so it moves no count off the axis and keeps every total along the others; h steps,
W^h.  Its eigenvalues are (1 + cos(pi k / L)) / 2, k = 0 .. L - 1 (Lap's with Neumann ends:
2 - 2 cos(pi k / L)), which give the trace of W^h in closed form.  Along several axes the
smoother is the product of each one's.

SURE.  For y = x + N(0, sigma^2 I) over N cells and a linear A, ||A y - y||^2 +
2 sigma^2 tr(A) - N sigma^2 is an unbiased estimate of ||A y - x||^2 (Stein 1981).  The
steps h of each ordered axis are chosen from H by coordinate descent on it, two sweeps.
Empirical Bayes then takes the smoothed counts only where their SURE after it beats the
raw counts' (empirical_bayes.smoothed_or_not).
"""
from __future__ import annotations

import math

import numpy as np

H = (1, 2, 4, 8, 16, 32, 64)  # the walk's steps tried on an axis (0: none)
SWEEPS = 2  # rounds of coordinate descent over the axes
MIN_ORDERED = 3  # an axis of fewer ordered bins is left alone


def walk(y: np.ndarray, axis: int, length: int, steps: int) -> np.ndarray:
    """W^steps applied along `axis` to its first `length` positions (the rest as they
    are); elementwise, so the same bits whatever the thread count."""
    t = np.moveaxis(np.array(y, dtype=np.float64, copy=True), axis, 0)
    near = np.empty_like(t[:length])
    for _ in range(steps):
        run = t[:length]
        near[1:] = run[:-1]  # each bin's neighbours summed, an end bin's own count
        near[:1] = run[:1]   # standing for the one past it (reflecting ends)
        near[:-1] += run[1:]
        near[-1:] += run[-1:]
        t[:length] = 0.5 * run + 0.25 * near
    return np.moveaxis(t, 0, axis)


def eigenvalues(length: int) -> np.ndarray:
    """W's eigenvalues on `length` bins: (1 + cos(pi k / length)) / 2."""
    return (1.0 + np.cos(np.pi * np.arange(length) / length)) / 2.0


def trace(length: int, steps: int) -> float:
    """tr(W^steps) on `length` bins, from W's eigenvalues."""
    return float((eigenvalues(length) ** steps).sum())


def axis_trace(size: int, length: int, steps: int) -> float:
    """The trace of one axis's smoother: W^steps on its ordered bins, the rest kept."""
    return trace(length, steps) + (size - length) if steps else float(size)


def dct(y: np.ndarray, axis: int, length: int) -> np.ndarray:
    """The orthonormal DCT-II (W's eigenbasis, in the order of its eigenvalues) of y's
    first `length` positions along `axis`, the rest as they are: by one FFT of the even
    then the reversed odd positions (Makhoul 1980), O(L log L) a line where the dense
    L x L basis was 3.2 GB at 20,000 bins.  numpy's FFT runs on one thread: the same bits
    whatever the thread count."""
    t = np.moveaxis(np.asarray(y, dtype=np.float64), axis, 0)
    run = t[:length]
    v = np.fft.fft(np.concatenate([run[0::2], run[1::2][::-1]]), axis=0)
    k = np.arange(length)
    turn = np.exp(-0.5j * np.pi * k / length).reshape((length,) + (1,) * (t.ndim - 1))
    scale = np.full(length, np.sqrt(2.0 / length))
    scale[0] = np.sqrt(1.0 / length)
    head = (turn * v).real * scale.reshape(turn.shape)
    return np.moveaxis(np.concatenate([head, t[length:]]), 0, axis)


def choose(y: np.ndarray, sigma: float, axes: dict) -> dict:
    """{axis: steps} for the ordered axes (axis: ordered length) of the table y (noise sd
    sigma per cell) by SURE, steps 0 where none lowers it.  In W's eigenbasis (the
    DCT-II along each ordered axis, orthonormal) the smoother is a product of per-axis
    multipliers m, so ||A y - y||^2 = sum (prod m - 1)^2 e, e the transformed y squared:
    each risk one pass over e, no walk."""
    z = y
    for a, length in axes.items():
        z = dct(z, a, length)
    e = z * z
    n, s2 = y.size, sigma * sigma
    lam = {a: np.concatenate([eigenvalues(length), np.ones(y.shape[a] - length)])
           for a, length in axes.items()}
    steps = {a: 0 for a in axes}

    def risk(trial):
        mult = np.ones(())  # the smoother's multiplier of each transformed cell
        for a, h in trial.items():
            if h:
                shape = [1] * y.ndim
                shape[a] = y.shape[a]
                mult = mult * (lam[a] ** h).reshape(shape)
        tr = math.prod(axis_trace(y.shape[a], axes[a], h) / y.shape[a]
                       for a, h in trial.items()) * n
        return float((((mult - 1.0) ** 2) * e).sum()) + 2 * s2 * tr - n * s2

    best = risk(steps)
    for _ in range(SWEEPS):
        for a, length in axes.items():
            for h in (0,) + H:
                if h * 4 > length * length:  # past spreading over the whole axis
                    break
                trial = {**steps, a: h}
                r = risk(trial)
                if r < best:
                    best, steps = r, trial
    return {a: h for a, h in steps.items() if h}


def diagonal(length: int, steps: int) -> np.ndarray:
    """The diagonal of W^steps on `length` bins, in O(length + steps): W is the lazy walk
    on the integers (h steps: a move d with probability C(2h, h + d) / 4^h) folded onto
    the bins by reflection, bin i's images at i + 2 L m and -1 - i + 2 L m, so a bin keeps
    the moves d = 2 L m and those with 2 i + 1 = -d (mod 2 L)."""
    out = np.zeros(length)
    for d in range(-steps, steps + 1):
        p = math.comb(2 * steps, steps + d) / 4.0 ** steps
        if d % (2 * length) == 0:
            out += p
        r = (-d - 1) % (2 * length)
        if r % 2 == 0:
            out[r // 2] += p
    return out


def smooth(values: np.ndarray, shape: tuple, sigma: float, axes: dict) -> tuple:
    """(values smoothed by choose's steps, the noise sd a cell has after it on average,
    the smoother's diagonal: each cell's own weight in its smoothed value), or (values,
    sigma, None) where no smoothing lowers the risk.  axes: {axis: ordered length} of the
    ordered axes of this marginal."""
    axes = {a: n for a, n in axes.items() if n >= MIN_ORDERED}
    if not axes or not 0 < sigma < math.inf or not np.isfinite(values).all():
        return values, sigma, None
    y = np.asarray(values, dtype=np.float64).reshape(shape)
    steps = choose(y, sigma, axes)
    if not steps:
        return values, sigma, None
    diag = np.ones(())
    for a, h in steps.items():
        y = walk(y, a, axes[a], h)
        d = np.ones(shape[a])
        d[:axes[a]] = diagonal(axes[a], h)
        diag = diag * d.reshape([-1 if b == a else 1 for b in range(len(shape))])
    # each cell's noise: sigma times its smoother row's norm; W symmetric, so the mean
    # squared norm along an axis is tr(W^2h) / size
    f = math.prod(axis_trace(shape[a], axes[a], 2 * h) / shape[a] for a, h in steps.items())
    return y.reshape(-1), sigma * math.sqrt(f), np.broadcast_to(diag, shape).reshape(-1)


def ordered_lengths(columns, recodes: dict) -> dict:
    """{attr: how many of its first codes are bins in order} for the binned numbers and
    dates among the synthesized columns; after low-count filtering (recodes), the kept
    bins, in their order (the merged code, last, is not among them).  A bin merged from
    inside the run leaves its two kept neighbours side by side: smoothed as adjacent
    (the SURE comparison with empirical Bayes alone still decides; a grouped eps 0.3
    date kept 27 of 40 days)."""
    out = {}
    for a, col in enumerate(columns):
        if col.kind not in ("numeric", "datetime"):
            continue
        n = col.bins
        r = recodes.get(a)
        if r is not None:
            n = int((r.lut[:n] < r.size - 1).sum())
        out[a] = n
    return out
