"""Empirical-Bayes estimates of counts measured with Gaussian noise: y = x + noise(sigma).

The true counts x of one marginal's cells are treated as draws from a prior g, estimated
from the y themselves by nonparametric maximum likelihood (Kiefer-Wolfowitz; EM on a grid
of counts, as in Jiang and Zhang 2009), and each cell is estimated by its posterior mean
E[x | y].  Post-processing of noisy counts only (the noise is treated as Gaussian of its
std, also where it is discrete Laplace).  Two users: denoise_marginals here, and the
decode shares of merged values (filtering.decode_shares, with truncated_likelihood).

Why for the measured marginals (denoise_marginals).  Where the noise is as large as the
counts (a pair of 1,000 cells over 35,000 rows at sigma 33), most cells hold a few rows
or none, and norm_sub (consistency.py), the Euclidean projection onto non-negative
tables, keeps the noise of every empty cell that came out high and takes its mass from
all the others.  Under a prior with mass near 0 the posterior mean shrinks those cells to
about 0 and leaves large ones as measured; the targets get closer to the data, and to
each other, so GUM fits them better.  Paired with the same noise (seed 0), 3-way TVD on
bench/heldout.py's tables went down in most cells (docs/method.md).
"""
from __future__ import annotations

import collections
import hashlib
import math
import os
import threading

import numpy as np

from gpu_dpsyn.core import threads
from gpu_dpsyn.estimate.smoothing import smooth

ITERATIONS = 200  # EM steps for the prior
FINE_SIGMAS = 12.0  # the grid is fine (sigma / 4) on [0, 12 sigma], geometric above
KEEP_SIGMAS = 8.0  # cells measured at or above 8 sigma are kept as measured, and from
BLEND_SIGMAS = 6.0  # 6 sigma up the estimate moves linearly from E[x | y] to y: no jump
MIN_CELLS = 8  # fewer cells say too little about a prior: kept as measured
FLOOR_SIGMAS = 40.0  # posterior means are tabled from -40 sigma (below: the first entry)


def npmle(like: np.ndarray, weights: np.ndarray, iterations: int = ITERATIONS) -> np.ndarray:
    """The prior's probabilities on a grid: EM for the maximum-likelihood mixing
    distribution, from like[i, k] = P(y_i | x_k) (up to a factor per row) and each
    point's weight (how many y it stands for).  Each step cannot lower the likelihood
    (EM), and its fixed points with full support satisfy Lindsay's condition
    sum_i w_i like[i, k] / f_i <= sum_i w_i for every k, f_i = sum_k g_k like[i, k]."""
    g = np.full(like.shape[1], 1.0 / like.shape[1])
    for _ in range(iterations):
        post = like * np.maximum(g, 1e-300)  # no row can lose all its mass
        post /= post.sum(axis=1, keepdims=True)
        # elementwise sums, not BLAS: the same bits whatever the thread count
        g = (weights[:, None] * post).sum(axis=0) / weights.sum()
    return g


def gaussian_likelihood(y: np.ndarray, xs: np.ndarray, sigma: float) -> np.ndarray:
    """P(y | x) for Gaussian noise, (y, xs), each row scaled to its largest entry 1 (in
    logs: a y far from every x cannot underflow its whole row)."""
    z = (y[:, None] - xs[None, :]) / sigma
    return _row_scaled(-0.5 * z * z)


def truncated_likelihood(y: np.ndarray, xs: np.ndarray, sigma: float,
                         theta: float) -> np.ndarray:
    """P(y | x) / P(y < theta | x) for Gaussian noise, (y, xs), up to a factor per y
    (scaled per row as gaussian_likelihood): the likelihood of counts that were kept for
    being below theta (filtering.decode_shares)."""
    below = np.array([0.5 * math.erfc((x - theta) / (sigma * math.sqrt(2.0))) for x in xs])
    z = (y[:, None] - xs[None, :]) / sigma
    return _row_scaled(-0.5 * z * z - np.log(below)[None, :])


def _row_scaled(log: np.ndarray) -> np.ndarray:
    return np.exp(log - log.max(axis=1, keepdims=True))


def posterior_means(like: np.ndarray, g: np.ndarray, xs: np.ndarray) -> np.ndarray:
    """E[x | y] of each row of like (P(y | x) on the grid xs) under the prior g."""
    post = like * g
    # elementwise sums, not BLAS: the same bits whatever the thread count
    return (post * xs).sum(axis=1) / post.sum(axis=1)


def count_grid(top: float, sigma: float) -> np.ndarray:
    """Counts the prior may sit on: steps of sigma / 4 on [0, FINE_SIGMAS sigma], where
    posterior means are taken, then 24 geometric steps up to `top`, which only shape the
    prior of the large cells."""
    fine = np.arange(0.0, FINE_SIGMAS * sigma + 1e-9 * sigma, sigma / 4.0)
    if top <= fine[-1]:
        return fine
    return np.concatenate([fine, np.geomspace(fine[-1], top, 25)[1:]])


def binned(y: np.ndarray, sigma: float) -> tuple:
    """(points, weights) standing for y in the EM, so its cost does not grow with the
    cells: y below FINE_SIGMAS sigma rounded to sigma / 8, those above to 64 geometric
    bins (they only tell the prior that large counts exist)."""
    edge = FINE_SIGMAS * sigma
    low, high = y[y < edge], y[y >= edge]
    pts, cnt = [], []
    if low.size:
        k = np.rint(low / (sigma / 8.0)).astype(np.int64)
        u, c = np.unique(k, return_counts=True)
        pts.append(u * (sigma / 8.0))
        cnt.append(c)
    if high.size:
        edges = np.geomspace(edge, float(high.max()) * (1 + 1e-12) + sigma, 65)
        k = np.clip(np.searchsorted(edges, high, side="right") - 1, 0, 63)
        c = np.bincount(k, minlength=64)
        mid = np.sqrt(edges[:-1] * edges[1:])
        pts.append(mid[c > 0])
        cnt.append(c[c > 0])
    return np.concatenate(pts), np.concatenate(cnt).astype(np.float64)


def denoise(y: np.ndarray, sigma: float, iterations: int = ITERATIONS) -> np.ndarray:
    """Posterior means E[x | y] of counts y measured with noise sigma, under the NPMLE
    prior of the y's true counts (module).  Cells at or above KEEP_SIGMAS sigma are kept:
    there E[x | y] = y + sigma^2 d/dy log f(y) (Tweedie), small where the counts' density
    varies slowly on the scale of sigma, and the coarse grid up there would bias it; from
    BLEND_SIGMAS sigma up the estimate moves linearly to y, so that a prior with mass just
    above the cut cannot make the estimates jump there.  The estimates are >= 0 (the
    grid is).  Non-finite y (no noisy count is) are returned as they came."""
    y = np.asarray(y, dtype=np.float64)
    return posterior_map(y, sigma, iterations)(y)


def posterior_map(y: np.ndarray, sigma: float, iterations: int = ITERATIONS):
    """denoise's estimate as a function of a count, for the prior of the counts y (the
    identity where denoise keeps y as it came)."""
    y = np.asarray(y, dtype=np.float64)
    if y.size < MIN_CELLS or not 0 < sigma < math.inf or not np.isfinite(y).all():
        return np.copy
    xs = count_grid(max(float(y.max()), 0.0) + 2.0 * sigma, sigma)
    # below FLOOR_SIGMAS sigma a count says only "about the smallest": bounded bins
    pts, cnt = binned(np.maximum(y, -FLOOR_SIGMAS * sigma), sigma)
    g = npmle(gaussian_likelihood(pts, xs, sigma), cnt, iterations)
    low = y < KEEP_SIGMAS * sigma
    if not low.any():
        return np.copy
    # on a table of y at steps of sigma / 16, interpolated: the cost per cell does not
    # grow with the grid (a million cells in milliseconds); E[x | y] is smooth and
    # rising in y, so the line between steps is within a hundredth of a count of it
    # and keeps its order.  Below FLOOR_SIGMAS sigma it is about the smallest count
    # the prior holds: the table's first entry.
    ys = np.arange(max(float(y[low].min()), -FLOOR_SIGMAS * sigma),
                   KEEP_SIGMAS * sigma + sigma / 16.0, sigma / 16.0)
    table = posterior_means(gaussian_likelihood(ys, xs, sigma), g, xs)

    def estimate(v):
        out = np.array(v, dtype=np.float64)
        low = out < KEEP_SIGMAS * sigma
        mean = np.interp(out[low], ys, table)
        t = np.clip((out[low] - BLEND_SIGMAS * sigma) /
                    ((KEEP_SIGMAS - BLEND_SIGMAS) * sigma), 0.0, 1.0)
        out[low] = (1.0 - t) * mean + t * out[low]
        return out
    return estimate


def slope(estimate, v: np.ndarray, sigma: float) -> np.ndarray:
    """Each cell's d estimate / dv, across one step of posterior_map's table (sigma / 16)
    either side."""
    h = sigma / 16.0
    return (estimate(v + h) - estimate(v - h)) / (2.0 * h)


def smoothed_or_not(y: np.ndarray, sigma: float, shape: tuple, axes: tuple) -> np.ndarray:
    """denoise of y, or of y smoothed along its ordered axes (smoothing.smooth; axes:
    (axis, ordered bins)), whichever has the lower SURE, each posterior-mean map taken as
    fixed: ||x^ - y||^2 + 2 sigma^2 sum dx^_i / dy_i (the smoothed one's derivative its
    map's slope times the smoother's diagonal).  Smoothing alone chose its steps against
    the raw counts, not against empirical Bayes, which shrinks empty cells to about 0 where
    smoothing fills them from their neighbours (a date beside its weekday: every other
    weekday's cell is empty)."""
    ys, s_eff, diag = smooth(y, shape, sigma, dict(axes))
    if diag is None:
        return denoise(y, sigma)
    plain_map, smooth_map = posterior_map(y, sigma), posterior_map(ys, s_eff)
    plain, smoothed = plain_map(y), smooth_map(ys)
    two_s2 = 2.0 * sigma * sigma
    risk_plain = float(((plain - y) ** 2).sum() + two_s2 * slope(plain_map, y, sigma).sum())
    risk_smoothed = float(((smoothed - y) ** 2).sum() +
                          two_s2 * (slope(smooth_map, ys, s_eff) * diag).sum())
    return smoothed if risk_smoothed < risk_plain else plain


def denoise_marginals(marginals: list, measured_cells=None, ordered=None) -> None:
    """Each multi-way marginal's cells, in place, before consistency: smoothed along its
    ordered axes where that lowers their risk (smoothing.py; ordered: {attr: its ordered
    bins}, smoothing.ordered_lengths), then by denoise.  Left as measured: 1-way marginals
    (filtering kept only values measured above its threshold and merged the rest, so
    their cells are not draws from one prior), and a marginal whose cells sum more noisy
    cells than it has (measured_cells[i] > cells: a grouped level's merged values), whose
    noise is larger than its sigma says."""
    todo = [m for i, m in enumerate(marginals) if len(m.attrs) > 1 and not (
        measured_cells is not None and measured_cells[i] != m.cells)]
    ordered = ordered or {}

    def each(lo, hi):  # each marginal on its own: several on the host's cores
        for m in todo[lo:hi]:
            # cells of unequal noise (spread) break SURE's one sigma: not smoothed
            axes = () if m.spread is not None else tuple(
                (i, ordered[a]) for i, a in enumerate(m.attrs) if a in ordered)
            m.values = remembered(m.values, m.sigma, m.shape, axes)
    threads.each(each, len(todo), threads.MIN_BLOCK)


MEMO_CELLS = 1 << 22  # cells of posterior means remembered (32 MiB)
_memo: collections.OrderedDict = collections.OrderedDict()
_memo_cells = 0  # cells held by _memo
_memo_lock = threading.Lock()


def _in_child() -> None:  # a fork while another thread held the lock must not keep it
    global _memo_lock
    _memo_lock = threading.Lock()


os.register_at_fork(after_in_child=_in_child)


def remembered(y: np.ndarray, sigma: float, shape: tuple = (), axes: tuple = ()
               ) -> np.ndarray:
    """denoise of y (shape) smoothed along its ordered axes ((axis, ordered bins)),
    remembered by the bytes of y, sigma and the axes: the adaptive rounds
    estimate a level's marginals once a round, and most of them come as measured each
    time (a 10^6-row fit on an H200 spent 3.9 s of its 19 s in denoise, 374 times for
    about 80 marginals).  The same numbers, to the bit; least recently used go first."""
    global _memo_cells
    y, sigma = np.ascontiguousarray(y, dtype=np.float64), float(sigma)
    key = (hashlib.sha256(y.tobytes()).digest(), y.shape, sigma, tuple(shape), axes)
    with _memo_lock:
        if key in _memo:
            _memo.move_to_end(key)
            return _memo[key].copy()
    # the sigma of the key: a float32 one would round otherwise
    out = smoothed_or_not(y, sigma, shape, axes) if axes else denoise(y, sigma)
    if out.size <= MEMO_CELLS // 4:
        with _memo_lock:
            if key not in _memo:  # another thread may have estimated it meanwhile
                _memo[key] = out.copy()
                _memo_cells += out.size
            while _memo_cells > MEMO_CELLS:  # a running total: no sum over the entries
                _memo_cells -= _memo.popitem(last=False)[1].size
    return out
