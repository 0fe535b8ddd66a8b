"""Filter and combine low-count values (DPSyn): values whose noisy 1-way count is below
theta = 3 sigma (sqrt(2 ln c) sigma for a column of c values past about 90: theta_sigmas)
are merged into one new value (kept at count 0 if the merged total is still below theta,
unless every value merged or the rows the kept values miss say it holds a fifth of them).
The merged value is decoded back over its members by their noisy counts' posterior means
(decode_shares); a numeric column's merged ends, by the monotone fit of their noisy counts
(tail_shares).  Post-processing of the noisy 1-way marginals only."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.philox import philox4x32, uniform
from gpu_dpsyn.estimate.consistency import project_table
from gpu_dpsyn.estimate.empirical_bayes import npmle, posterior_means, truncated_likelihood
from gpu_dpsyn.core.types import Marginal
from gpu_dpsyn.core.types import Recode

THETA_SIGMAS = 3.0  # DPSyn's


def theta_sigmas(values: int) -> float:
    """The threshold in sigmas for a column of `values` values: DPSyn's 3, or where larger
    (past about 90 values) the universal threshold sqrt(2 ln values).  Of c values with no
    record, about c P(Z > 3) pass 3 sigma on their noise alone (88 of 65,536), each kept
    at its high noisy count, and consistency carries that upward bias into every marginal
    holding the column (a table of 300 rows was released with 1,150); past sqrt(2 ln c)
    sigma fewer than one passes in expectation, whatever c."""
    return max(THETA_SIGMAS, math.sqrt(2.0 * math.log(max(int(values), 1))))


def low_count_recode(m: Marginal, sigmas: float | None = None,
                     ordered: int = 0) -> Recode | None:
    """The recoding of one attribute from its noisy 1-way marginal (None: keep all);
    sigmas: the threshold (default theta_sigmas of its values); ordered: how many of its
    first values are bins of numbers in order (a nullable column's null code after them
    is not), whose merged ends decode by tail_shares."""
    sigmas = theta_sigmas(m.values.size) if sigmas is None else sigmas
    theta = sigmas * m.sigma
    v = m.values
    low = v < theta
    if low.sum() < 2:  # merging one value (or none) changes nothing
        return None
    lut = np.empty(v.size, dtype=np.int64)
    keep = np.nonzero(~low)[0]
    lut[keep] = np.arange(keep.size)
    lut[low] = keep.size
    merged = np.nonzero(low)[0]
    shares = decode_shares(v[merged], m.sigma, sigmas)
    if ordered > 1 and TAILS:
        shares = tail_shares(v, low, shares, ordered, m.sigma)
    return Recode(m.attrs[0], lut, merged, shares)


TAILS = True  # False: merged tails decode as any merged value (experiments:
# bench/experiments/tail_shares)


def tail_shares(y: np.ndarray, low: np.ndarray, shares: np.ndarray, ordered: int,
                sigma: float) -> np.ndarray:
    """Decode shares of merged values where the first `ordered` values are bins in order:
    the merged run at each end of them (a tail) shares its mass in proportion to the
    least-squares fit of its noisy counts that does not rise outward, or, where the
    counts clearly rise again (by mode_evidence: a cluster or second mode out in the tail,
    a top-coded last bin), the fit that rises once then falls; not by posterior means that
    see no order.  Other merged values keep their posterior means (as counts: their
    shares of the merged values' clipped noisy total).  Why: a heavy tail's 29 log-spaced
    bins merged into one decoded about evenly, so the last decade, 0.03% of the rows,
    came out with 4.8% (an event log's durations at epsilon 1).  A falling fit is capped
    by the body's last fall continued outward (falling_on)."""
    merged = np.flatnonzero(low)
    est = shares * max(float(y[merged].clip(min=0).sum()), 0.0)
    pos = {int(b): i for i, b in enumerate(merged)}
    inner = low[:ordered]
    if inner.all():  # every bin merged: no tail beside kept values
        return shares
    first, last = int(np.argmin(inner)), ordered - 1 - int(np.argmin(inner[::-1]))
    # each run read outward from the kept bins, with the body's two bins beside it
    # (None: a body of one bin)
    runs = []
    if first > 0:
        runs.append((np.arange(first - 1, -1, -1),
                     y[[first, first + 1]] if first + 1 <= last else None))
    if last + 1 < ordered:
        runs.append((np.arange(last + 1, ordered),
                     y[[last, last - 1]] if last - 1 >= first else None))
    if not runs:
        return shares
    for run, body in runs:
        out = y[run]
        # counts are not negative: each fit clipped at 0 (still the nearest under that
        # bound), so a rise from a run of negative noise is no mode
        fit = np.maximum(_pooled(out[::-1])[::-1], 0.0)  # not rising outward
        mode = np.maximum(unimodal(out), 0.0)
        if ((fit - out) ** 2).sum() - ((mode - out) ** 2).sum() > \
                mode_evidence(len(run)) * sigma ** 2:
            fit = mode
        elif body is not None:
            fit = np.minimum(fit, falling_on(body, len(run)))
        for b, f in zip(run, np.maximum(fit, 0.0)):
            est[pos[int(b)]] = f
    total = est.sum()
    return est / total if total > 0 else shares


def falling_on(body: np.ndarray, bins: int) -> np.ndarray:
    """The most each of `bins` merged bins outward may hold: the body's last fall (its
    edge bin over the one inside it, body = [edge, inner] noisy counts) continued
    geometrically from the edge.  Where a tail's counts are lost in the noise, the fit
    that only may not rise outward comes out flat, and a flat tail of log-spaced bins
    put a tenth of its mass in its last four bins (an order table's prices at eps 1:
    its mean 9 times the real one, where they held 0.8%)."""
    edge, inner = float(body[0]), float(body[1])
    fall = edge / inner if 0 < edge < inner else 1.0
    return max(edge, 0.0) * fall ** np.arange(1, bins + 1)


def mode_evidence(bins: int) -> float:
    """How much better (in noise variances) the fit that rises again must fit a run of
    `bins` noisy counts: what pure noise passes one time in ten, as simulated (the best
    of many rises is chosen: 4.5 at 5 bins, 11.3 at 29, 16.5 at 100), so a long empty tail
    seldom gets a mode of noise; never under 4 (a lone end bin about two noise standard
    deviations up is not one)."""
    return max(4.0, 3.6 * math.log(max(bins, 1)) - 1.0)


def unimodal(y: np.ndarray) -> np.ndarray:
    """The least-squares fit to y that rises, then falls (either part may be empty):
    the best split of a non-decreasing fit of a prefix and a non-increasing fit of the
    rest (pool adjacent violators, with every prefix's and suffix's error in one pass
    each)."""
    y = np.asarray(y, dtype=np.float64)
    up, down = _prefix_errors(y), _prefix_errors(y[::-1])[::-1]  # (a suffix falls
    # where it rises read backwards)
    # split after k values (k = 0..n): prefix error up[k], suffix error down[k]
    k = int(np.argmin(up + down))
    return np.concatenate([_pooled(y[:k]), _pooled(y[k:][::-1])[::-1]])


def _prefix_errors(y: np.ndarray) -> np.ndarray:
    """errs[k]: the squared error of the non-decreasing least-squares fit to y[:k]
    (k = 0..n), by pool adjacent violators kept up as values arrive."""
    sums, sizes, errs = [], [], [0.0]
    sq = 0.0  # the sum of squares of the values so far
    fitted = 0.0  # sum over blocks of block_sum^2 / block_size
    for v in y:
        sq += v * v
        s, c = float(v), 1
        while sums and sums[-1] / sizes[-1] > s / c:
            fitted -= sums[-1] ** 2 / sizes[-1]
            s, c = s + sums.pop(), c + sizes.pop()
        sums.append(s)
        sizes.append(c)
        fitted += s * s / c
        errs.append(max(sq - fitted, 0.0))
    return np.array(errs)


def _pooled(y: np.ndarray) -> np.ndarray:
    """The non-decreasing least-squares fit to y (pool adjacent violators)."""
    sums, sizes = [], []
    for v in y:
        s, c = float(v), 1
        while sums and sums[-1] / sizes[-1] > s / c:
            s, c = s + sums.pop(), c + sizes.pop()
        sums.append(s)
        sizes.append(c)
    return np.repeat([s / c for s, c in zip(sums, sizes)], sizes) if sums else y.copy()


def decode_shares(y: np.ndarray, sigma: float, sigmas: float = THETA_SIGMAS,
                  grid: int = 64, iterations: int = 200) -> np.ndarray:
    """Decode probabilities of merged values from their noisy counts y = x + noise(sigma),
    each below theta = sigmas * sigma: the posterior means E[x | y] under a prior
    g on the true counts estimated from the y themselves (nonparametric maximum
    likelihood, Kiefer-Wolfowitz; EM on a grid of counts in [0, theta + 2 sigma], as in
    Jiang and Zhang 2009).  The likelihood is the Gaussian's truncated to y < theta, since
    these values were merged for being below it: g is then the prior among merged values,
    and the posterior under it with the truncated likelihood is the posterior under the
    whole column's prior with the plain one.  Post-processing of noisy counts only (the
    noise is treated as Gaussian of its std, also where it is discrete Laplace).

    Why: counts lost in the noise (scorecard's 7,231 institutions of about 7 rows, sigma
    16) get an estimated g near one point, hence nearly even shares (DPSyn decodes evenly);
    sparse tails (most true counts 0) get g with mass at 0 and shares near 0 for low y.
    Shares from the clipped y put 0.46 of the scorecard names' mass in the wrong place,
    even ones 0.13, these 0.13; on a numeric tail (a movie-length histogram) clipped y
    0.48, even 0.62, these 0.48."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return y
    if not 0 < sigma < math.inf or y.size < 2:
        return np.full(y.size, 1.0 / y.size)
    xs, g = count_prior(y, sigma, sigmas * sigma, grid, iterations)
    est = posterior_means(truncated_likelihood(y, xs, sigma, sigmas * sigma), g, xs)
    return est / est.sum() if est.sum() > 0 else np.full(y.size, 1.0 / y.size)


def count_prior(y: np.ndarray, sigma: float, theta: float, grid: int = 64,
                iterations: int = 200) -> tuple:
    """(counts xs, their prior probabilities g): EM for the maximum-likelihood prior on a
    grid of counts in [0, theta + 2 sigma], the y's likelihood truncated to y < theta.
    EM runs on at most 2,048 weighted points (y rounded to a fine grid), so its cost does
    not grow with the column."""
    xs = np.linspace(0.0, theta + 2.0 * sigma, grid)
    lo, hi = float(y.min()), float(y.max())
    if y.size > 2048 and hi > lo:
        pts = np.linspace(lo, hi, 2048)
        cnt = np.bincount(np.rint((y - lo) / (hi - lo) * 2047).astype(np.int64),
                          minlength=2048).astype(np.float64)
        pts, cnt = pts[cnt > 0], cnt[cnt > 0]
    else:
        pts, cnt = y, np.ones(y.size)
    return xs, npmle(truncated_likelihood(pts, xs, sigma, theta), cnt, iterations)


def recoded_one_way(m: Marginal, r: Recode, sigmas: float | None = None,
                    rows: tuple | None = None) -> Marginal:
    """The 1-way marginal on the new domain; a merged total below theta (low_count_recode's)
    times its own noise's sd in sigmas (the square root of the noisy counts it sums)
    becomes 0, weighed as one count, unless every value merged, or unless the table's
    rows say the merged values hold a share of them: rows, (the noisy row count, its sd)
    from the columns' 1-way totals (rows_of), past the kept values' total by HELD_SHARE
    of the rows and THETA_SIGMAS sds of the difference.  There the merged total stays,
    weighed as the noisy counts it sums (1,400 rare codes held 56% of 20,000 rows at D 6:
    their total zeroed as one sure count, consistency took the row count down to
    17,038-17,964 and their rows to 4,726-5,266; now 19,879-20,014 and 10,986-11,197)."""
    vals = np.bincount(r.lut, weights=m.values, minlength=r.size).astype(np.float64)
    spread = spread_of(m, r)
    # the merged total of k empty values passes theta alone on its noise in P(Z > 3 /
    # sqrt(k)) of runs (19% at k = 12), and that noise came out as records spread over
    # its members
    theta = (theta_sigmas(r.lut.size) if sigmas is None else sigmas) * m.sigma * \
        math.sqrt(spread[-1])
    held = rows is not None and rows[0] - vals[:-1].sum() > max(
        HELD_SHARE * rows[0],
        THETA_SIGMAS * math.sqrt(rows[1] ** 2 + float(spread[:-1].sum()) * m.sigma ** 2))
    if vals[-1] < theta and r.size > 1 and not held:  # a tail beside kept values: about
        vals[-1] = 0.0                                # no rows (all merged, it is the
        return Marginal(m.attrs, (r.size,), vals, m.sigma)  # table's total, no tail)
    # summing k noisy cells adds k times the variance: the merged cell is less certain,
    # and consistency weighs it so (a cell of 65,536 noisy counts taken as one pulled
    # a table's total to twice its rows)
    return Marginal(m.attrs, (r.size,), vals, m.sigma, spread)


# the share of the rows a merged tail must hold to stay (recoded_one_way): on the 10
# held-out tables at eps 0.3, zeroed tails held up to 14% of the rows (z to 17), and
# keeping them (3 sd alone) raised the 3-way TVD on 7 tables, by up to 2.1% (mean 0.5%);
# a tail of half the rows zeroed took the row count 8-15% low, the tail's rows a third
HELD_SHARE = 0.2


def rows_of(one_ways: list) -> tuple:
    """(the row count, its sd) from noisy 1-way marginals: their totals by inverse
    variance (a total of c noisy counts has variance c sigma^2; one without noise is
    the count).  Post-processing."""
    exact = [m for m in one_ways if m.sigma <= 0]
    if exact:
        return float(exact[0].values.sum()), 0.0
    w = np.array([1.0 / (m.values.size * m.sigma ** 2) for m in one_ways])
    t = np.array([float(m.values.sum()) for m in one_ways])
    return float((w * t).sum() / w.sum()), float(w.sum() ** -0.5)


def spread_of(m: Marginal, r: Recode) -> np.ndarray:
    """m's spread (Marginal.spread) on the new domain of r's attribute: a merged cell
    sums its members'."""
    spread = np.ones(m.shape) if m.spread is None else m.spread.reshape(m.shape)
    return merged_cells(spread, m.attrs.index(r.attr), r).reshape(-1)


def merged_cells(table: np.ndarray, k: int, r: Recode) -> np.ndarray:
    """table with its axis k on r's new domain: each new value's cells summed, its old
    values in order (ufunc.at adds index by index), so the bits are the same on any
    machine, unlike a product with a 0/1 matrix (summed in the order of the BLAS kernel
    that the CPU selects)."""
    table = np.moveaxis(table, k, -1)
    out = np.zeros(table.shape[:-1] + (r.size,))
    np.add.at(out, (..., r.lut), table)
    return np.moveaxis(out, -1, k)


def undo(codes: np.ndarray, r: Recode, key, call: int) -> np.ndarray:
    """New codes back to old ones; the merged code draws a member by its decode share."""
    codes = np.asarray(codes, dtype=np.int64)
    inv = np.empty(r.size - 1, dtype=np.int64)
    keep = np.nonzero(r.lut < r.size - 1)[0]
    inv[r.lut[keep]] = keep
    out = np.empty(codes.size, dtype=np.int64)
    is_m = codes == r.size - 1
    out[~is_m] = inv[codes[~is_m]]
    idx = np.nonzero(is_m)[0]
    if idx.size:
        u = uniform(philox4x32(key, idx.astype(np.uint64), r.attr, rng.UNMERGE, call)[0])
        pick = np.minimum(np.searchsorted(np.cumsum(r.merged_p), u, side="right"),
                          r.merged.size - 1)
        out[idx] = r.merged[pick]
    return out


def one_way_of(m: Marginal, attr: int) -> Marginal:
    """m summed onto one attribute: the noisy 1-way marginal a grouped run measures as
    (attr, group); its cells each sum cells/size noisy counts."""
    size = m.shape[m.attrs.index(attr)]
    return Marginal((attr,), (size,), project_table(m, (attr,)),
                    m.sigma * float(np.sqrt(m.cells // size)))


def recoded(m: Marginal, r: Recode, rows: tuple | None = None) -> Marginal:
    """m on the new domain of r's attribute (merged values' cells summed); a 1-way
    marginal as recoded_one_way has it (rows: its)."""
    if len(m.attrs) == 1:
        return recoded_one_way(m, r, rows=rows)
    out = merged_cells(m.table(), m.attrs.index(r.attr), r)
    return Marginal(m.attrs, out.shape, out.reshape(-1), m.sigma, spread_of(m, r))
