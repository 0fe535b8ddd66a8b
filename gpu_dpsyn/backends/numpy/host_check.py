"""The host library's load check (host_kernels.library): known answers from NumPy for
every loop it holds, so a build that computes anything else -- another compiler's
float mode, a miscompile -- is not used and NumPy serves."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.arrays import BISECT_STEPS, plan_update
from gpu_dpsyn.backends.arrays import removal_rate as rate_numpy
from gpu_dpsyn.backends.numpy import noise as numpy_noise
from gpu_dpsyn.backends.numpy.permute import feistel_ranks
from gpu_dpsyn.backends.numpy.update import update_records
from gpu_dpsyn.core.philox import philox4x32
from gpu_dpsyn.privacy.samplers import MAX_WORDS, DiscreteGaussian, DiscreteLaplace


def agrees(lib, calls) -> bool:
    """A known-answer check at load: the build must draw what the NumPy samplers draw,
    and each of its loops give what NumPy gives.  calls: host_kernels, whose wrappers
    are looked up as the check runs."""
    draws = [(DiscreteGaussian.at_least(30.25), 256, 0),
             (DiscreteLaplace.at_least(2.5), 200, 3)]
    got = calls.sample(lib, draws, tuple(range(8)), 1, MAX_WORDS)
    want = [numpy_noise.sample(spec, n, tuple(range(8)), 1, call, MAX_WORDS)
            for spec, n, call in draws]
    if not all(np.array_equal(g, np.concatenate(w)) for g, w in zip(got, zip(*want))):
        return False
    key, n = (0x9E3779B9, 0xFFFFFFFF), 1000
    want = philox4x32(key, np.arange(n, dtype=np.uint64), 7, 1 << 31, 0xFFFFFFFF)
    words = calls.philox_range(lib, key, n, 7, 1 << 31, 0xFFFFFFFF, 4)
    if not all(np.array_equal(g, w) for g, w in zip(words, want)):
        return False
    if not _philox_blocks_agree(lib, calls, key, want):
        return False
    size = np.arange(1, n + 1, dtype=np.int64) * 37
    r, salt = size // 3, np.arange(n, dtype=np.int64) * 7919
    keys = [int(x) for x in want[0][:4]]
    if not np.array_equal(calls.feistel(lib, r, size, salt, keys),
                          feistel_ranks(r, size, salt, keys)):
        return False
    cells = want[1] % 97
    thirds = [(0, n // 3), (n // 3, 2 * n // 3), (2 * n // 3, n)]  # the blocked sort too
    if not all(np.array_equal(got, np.argsort(cells, kind="stable"))
               for dt in (np.uint16, np.int64)
               for got in (calls.counting_argsort(lib, cells.astype(dt), 97),
                           calls.counting_in_blocks(lib, cells.astype(dt), 97, thirds))):
        return False
    cols = [(want[2] % 5).astype(np.uint8), (want[3] % 300).astype(np.uint16),
            (want[0] % 70).astype(np.uint32)]
    for shape in ((5,), (5, 300), (300, 70), (5, 300, 70)):  # the last past 2^16 cells
        k = len(shape)
        use = cols[:k] if k != 2 or shape[0] == 5 else cols[1:]
        flat = np.ravel_multi_index(use, shape)
        got = calls.cell_histogram(lib, use, shape)
        if got is None or not (np.array_equal(got[0], flat) and np.array_equal(
                got[1], np.bincount(flat, minlength=int(np.prod(shape))))):
            return False
    return _gum_agrees(lib, calls, want) and _float_kernels_agree(lib, calls, want) and \
        _draws_agree(lib, calls, np.random.default_rng(int(want[1][0])))


def _philox_blocks_agree(lib, calls, key, want, lo: int = 13, hi: int = 990,
                         fill: int = 0xA5A5A5A5) -> bool:
    """host_philox.cpp's loops (a loop a word where built vectorised): each word count
    over one block of counters starting past 0, written where they belong and nowhere
    else."""
    want = np.stack(want)
    n = want.shape[1]
    for words in (1, 2, 3, 4):
        got = calls.philox_block(lib, key, n, lo, hi, 7, 1 << 31, 0xFFFFFFFF, words, fill)
        if not (np.array_equal(got[:, lo:hi], want[:words, lo:hi]) and
                (got[:, :lo] == fill).all() and (got[:, hi:] == fill).all()):
            return False
    return True


def _draws_agree(lib, calls, r) -> bool:
    """draw.cu's CDFs (running sums capped at 1, the last entry 1, plus the row; each
    row's last positive value) and the draws' search within a row (clipped, as
    gum.draw_rows clips) against NumPy's cumsum and searchsorted: zeros, a row of none,
    sums past 1 by rounding, an odd start, and rows past 2^13 where r + 1 - 2^-40 rounds
    onto r + 1."""
    for R, size in ((37, 7), (5, 1), (9000, 3)):
        cond = r.gamma(0.3, 1.0, (R, size)) * (r.random((R, size)) < 0.6)
        cond /= np.where(cond.sum(1, keepdims=True) > 0, cond.sum(1, keepdims=True), 1.0)
        cond[1], cond[0] = 0.0, 1.0 / 3.0  # no positive value; past 1 where size > 3
        cdf = np.minimum(np.cumsum(cond, axis=1), 1.0)
        cdf[:, -1] = 1.0
        want = (cdf + np.arange(R)[:, None]).reshape(-1)
        last = size - 1 - np.argmax(cond[:, ::-1] > 0, axis=1)
        flat, got = np.empty(R * size), np.empty(R, dtype=np.int64)
        for lo, hi in ((0, 3), (3, R)):
            calls.cdf_rows(lib, cond, flat, got, lo, hi)
        if not (np.array_equal(flat, want) and np.array_equal(got, last)):
            return False
        row = np.r_[r.integers(0, R, 300), np.arange(R - 20, R) % R].astype(np.int64)
        u = np.r_[r.random(300), np.full(20, 1.0 - 2.0 ** -40)]
        at = np.searchsorted(want, row + u, side="right") - row * size
        drawn = np.empty(len(row), dtype=np.int64)
        calls.draw_rows(lib, flat, size, row, u, last, drawn, 0, len(row))
        if not np.array_equal(drawn, np.minimum(np.clip(at, 0, size - 1), last[row])):
            return False
    return True


def _float_kernels_agree(lib, calls, words) -> bool:
    """The float loops against NumPy: the IPF margin's rounding (halves, about 2^52), the
    removal rate's bisection and the best moves' sums, ties and second choices (a
    compiler that contracts or reassociates would fail here, and the build is then not
    used)."""
    half = np.array([0.5, 1.5, 2.5, 3.5, 2.0 ** 51 + 0.5, 2.0 ** 52 - 1.0, 7.25, 0.0])
    P, cells = np.ascontiguousarray(half[None, :]), np.arange(8, dtype=np.int64)
    out = np.empty((1, 8))
    calls.ipf_margin(lib, P, np.ones(8), cells, 8, 0.5, out, 0, 1)
    if not np.array_equal(out[0], np.rint(half) * 0.5):
        return False
    # products that round to just below or above a half: fused into the rint's + 2^52
    # (an FMA, which a native build has) they round the other way
    P = np.array([[0.7000000000000359, 0.700000000000055, 0.7000000000000929]])
    wg, out = np.full(3, 3.0 * 2.0 ** 44), np.empty((1, 3))
    calls.ipf_margin(lib, P, wg, np.arange(3, dtype=np.int64), 3, 1.0, out, 0, 1)
    if not np.array_equal(out, np.rint(P * wg)):
        return False
    if not _ipf_scale_agrees(lib, calls, np.random.default_rng(int(words[3][0]))):
        return False
    s = (words[0][:50] % 40).astype(np.float64)
    over = (words[1][:50] % 30).astype(np.float64) * 0.37
    for total in (0.0, 5.0, float(np.rint(over).sum())):
        if float(calls.removal_rate(lib, over, s, total, BISECT_STEPS)) != float(
                rate_numpy(np, over, s, total)):
            return False
    r = np.random.default_rng(int(words[2][0]))
    return all(_best_moves_agree(lib, calls, r, cells, floats)
               for cells, floats in (((1, 3, 4), False), ((2, 3, 4, 5), False),
                                     ((2, 3, 4, 5), True)))


def _best_moves_agree(lib, calls, r, cells, floats: bool) -> bool:
    """64 contexts of 5 values, half of them holding every value (both second choices
    finite: the one-value rule's comparison decides), g whole or half (ties) or floats
    (four targets: another order of the additions rounds otherwise)."""
    U, size = 64, 5
    X = r.integers(0, 3, (U, size)) * (r.random((U, size)) < 0.5)
    X[::2] = r.integers(1, 3, (U // 2, size))
    g = [r.normal(0.0, 0.7, (size, c)) if floats else
         r.integers(-3, 4, (size, c)) * r.choice([1.0, 0.5], (size, c)) for c in cells]
    ctx = np.stack([r.integers(0, c, U) for c in cells], axis=1)
    tables, want = _best_moves_reference(X, g, ctx)
    got = (np.empty(U, np.int64), np.empty(U, np.int64), np.empty(U))
    calls.best_moves(lib, *calls.moves_inputs(
        X, np.concatenate([t.reshape(-1) for t in tables]),
        np.cumsum([0] + [t.size for t in tables[:-1]]), ctx), 0, U, got)
    return all(np.array_equal(a, b) for a, b in zip(got, want))


def _ipf_scale_agrees(lib, calls, r) -> bool:
    """The IPF's rescale (built vectorised, host_build.NATIVE) against NumPy: products,
    the pairwise tree over an odd number of rows, divisions, a context summing to 0,
    blocks of 256 contexts, a tail and an odd start; with the next target's margin."""
    size, U, cells, nxt = 7, 603, 5, 3  # U: blocks of 256 and a tail of 91
    P = r.random((size, U)) * (r.random((size, U)) < 0.8)
    P[:, 17] = 0.0  # a context whose values all went to 0
    ratio, ctx = r.random((size, cells)) * 2, r.integers(0, cells, U)
    # weights that make the margin's products round (sums stay near 2^51, exact)
    wg, next_ctx = r.integers(1, 9, U) * 2.0 ** 44, r.integers(0, nxt, U)
    want = P * ratio[:, ctx]
    rows, width = want, size
    while width > 1:  # HostIPF's tree: pairs of rows, an odd width's last row carried up
        half = (width + 1) // 2
        up = np.empty((half, U))
        up[:width // 2] = rows[0:width - 1:2] + rows[1:width:2]
        if width % 2:
            up[half - 1] = rows[width - 1]
        rows, width = up, half
    want = want / np.where(rows[0] > 0, rows[0], 1.0)
    part = np.zeros((size, nxt))
    for c in range(nxt):
        part[:, c] = np.rint(want[:, next_ctx == c] * wg[next_ctx == c]).sum(axis=1)
    got = np.ascontiguousarray(P)
    got_part = sum(calls.ipf_scale_margin(lib, got, ratio, ctx, wg, next_ctx, nxt, lo, hi)
                   for lo, hi in ((0, 301), (301, U)))  # and a start off the vectors' grid
    return np.array_equal(got, want) and np.array_equal(got_part, part)


def _best_moves_reference(X, g, ctx):
    """(gain tables, (u, v, gain)) of generate.moves' rule, written out a context at a
    time (an independent reading of it, for the load check): the gains summed over the
    targets in order, leaving only values present, the first largest of each side, and
    where they are one value the better of the two second choices (the leaving one on a
    strict win)."""
    tables = [np.concatenate([np.clip(-2.0 * gi - 1.0, -1.0, 1.0).T,
                              np.clip(2.0 * gi - 1.0, -1.0, 1.0).T], axis=1) for gi in g]
    size = X.shape[1]
    out = (np.empty(len(X), np.int64), np.empty(len(X), np.int64), np.empty(len(X)))
    for k in range(len(X)):
        LA = tables[0][ctx[k, 0]].copy()
        for i in range(1, len(tables)):
            LA = LA + tables[i][ctx[k, i]]
        L, A = np.where(X[k] > 0, LA[:size], -np.inf), LA[size:]
        a, b = int(np.argmax(L)), int(np.argmax(A))
        if a == b:
            a2 = int(np.argmax(np.where(np.arange(size) == a, -np.inf, L)))
            b2 = int(np.argmax(np.where(np.arange(size) == b, -np.inf, A)))
            if L[a2] + A[b] > L[a] + A[b2]:
                a = a2
            else:
                b = b2
        out[0][k], out[1][k], out[2][k] = a, b, L[a] + A[b]
    return tables, out


def _gum_agrees(lib, calls, words) -> bool:
    """One GUM update of a 3-way marginal, host_gum.cpp against the NumPy body."""
    shape = (3, 4, 5)
    made = [[(words[j][:600] % d).astype(dt) for j, (d, dt) in enumerate(
        zip(shape + (7,), (np.uint8, np.uint16, np.uint32, np.uint8)))] for _ in range(2)]
    cell = np.ravel_multi_index(made[0][:3], shape)
    s = np.bincount(cell, minlength=60)
    add, rem = plan_update(np, s, np.roll(s, 7).astype(np.float64) + 0.4, 0.8)
    order = np.argsort(cell, kind="stable")
    update_records(made[0], (0, 1, 2), shape, order, s, add, rem, 0.5, (3, 4), 2, 1)
    calls.gum_apply(lib, made[1], (0, 1, 2), shape, order, s, add, rem, 0.5, (3, 4), 2, 1)
    return all(np.array_equal(a, b) for a, b in zip(*made))
