"""Exact integer noise in NumPy: privacy/samplers.py's algorithms for many elements at
once, each element on its own ChaCha20 word stream, in 64-bit integers (128-bit ones
as two limbs).  Every element consumes the same words, in the same order, as the
scalar reference; one whose values outgrow the widths is marked WIDE and finished
there, one that runs out of words is marked FAIL.

The functions take element indices I and word positions p (aligned arrays: the
"cursor" of each element) and return their result with the advanced positions.  Each
loop runs its first pass on the whole aligned set and only its (few) repeats on index
subsets: gathers and scatters cost more than arithmetic.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.privacy.chacha import WINDOW, windows
from gpu_dpsyn.privacy.samplers import (FAIL, OK, WIDE, DiscreteGaussian, _word_layout,
    check_max_words)

CHUNK = 1 << 16  # elements drawn together
_U = np.uint64
_M32 = _U(0xFFFFFFFF)
_ONE = _U(1)
_SHIFT = WINDOW.bit_length() - 1


class _Tape:
    """The word streams of elements first .. first + n - 1: each element's current
    window of WINDOW words, refilled when its position enters the next one."""

    def __init__(self, key, first: int, n: int, stream: int, call: int, max_words: int):
        self.key, self.first, self.nonce = key, first, (stream, call)
        self.buf = windows(key, first, n, 0, stream, call)  # every first window at once
        self.flat = self.buf.reshape(-1)
        self.wide = np.zeros(n, dtype=bool)
        self.dead = np.zeros(n, dtype=bool)
        self.max_words = max_words

    def ok(self, I) -> np.ndarray:
        return ~(self.wide[I] | self.dead[I])

    def take(self, I, p) -> np.ndarray:
        """The word (uint32) at position p of each element in I (the caller advances p)."""
        lane = p & (WINDOW - 1)
        turn = (lane == 0) & (p > 0)
        if turn.any():
            self._refill(I[turn], p[turn] >> _SHIFT)
        return self.flat[(I << _SHIFT) + lane]

    def _refill(self, J, win):
        """Window `win` of elements J.  The cap is a multiple of WINDOW: checked here."""
        over = (win << _SHIFT) >= self.max_words
        self.dead[J[over]] = True
        for w in np.unique(win):
            K = np.unique(J[win == w])
            for r in np.split(K, np.flatnonzero(np.diff(K) != 1) + 1):  # contiguous runs
                self.buf[r] = windows(self.key, self.first + int(r[0]), len(r), int(w),
                                      *self.nonce)


def _mul64(a, b):
    """Full 128-bit product (hi, lo) of uint64 arrays (or scalars)."""
    a0, a1, b0, b1 = a & _M32, a >> _U(32), b & _M32, b >> _U(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    mid = (p00 >> _U(32)) + (p01 & _M32) + (p10 & _M32)  # < 3 * 2^32: no overflow
    return (p11 + (p01 >> _U(32)) + (p10 >> _U(32)) + (mid >> _U(32)),
            (p00 & _M32) | (mid << _U(32)))


def _repeat(T, I, p, first_pass, step):
    """Run step(idx) on the elements whose first pass did not settle them, until all
    are settled or failed; step returns the settled mask of its subset."""
    pend = np.flatnonzero(~first_pass)
    while pend.size:
        pend = pend[T.ok(I[pend])]
        if pend.size:
            pend = pend[~step(pend)]


# -- the samplers ----------------------------------------------------------------------

def _uniform(T, I, p, m: int):
    """uniform_int(m), m < 2^64 constant: (u, p)."""
    assert m < 1 << 64
    u = np.zeros(len(I), dtype=_U)
    if m == 1:
        return u, p
    nw, top = _word_layout(m)

    def draw(idx):
        v = T.take(I[idx], p[idx]) & np.uint32(top)
        if nw == 2:
            v = (v.astype(_U) << _U(32)) | T.take(I[idx], p[idx] + 1)
        p[idx] += nw
        good = v <= (np.uint32(m - 1) if nw == 1 else _U(m - 1))
        u[idx[good]] = v[good]
        return good
    _repeat(T, I, p, draw(np.arange(len(I))), draw)
    return u, p


def _bernoulli(T, I, p, n_hi, n_lo, d: int):
    """bernoulli(n, d), lazily, for n per element (uint64 limbs; n_hi may be None for
    n < 2^64) and a constant d."""
    dh, dl = _U(d >> 64), _U(d & 0xFFFFFFFFFFFFFFFF)
    if n_hi is None:
        n_hi = np.zeros_like(n_lo)
    zero = (n_hi == 0) & (n_lo == 0)
    full = (n_hi > dh) | ((n_hi == dh) & (n_lo >= dl))
    res = full.copy()  # n = d: true, n = 0: false, neither draws a word
    idx0 = np.flatnonzero(~zero & ~full)
    if not idx0.size:
        return res, p
    nw, top = _word_layout(d)
    dm = d - 1
    dw = [np.uint32((dm >> (32 * (nw - 1 - i))) & 0xFFFFFFFF) for i in range(nw)]
    borrow = (n_lo[idx0] == 0).astype(_U)  # words of n - 1, most significant first
    nm = _words_of(n_lo[idx0] - _ONE, n_hi[idx0] - borrow)[::-1][4 - nw:]

    def attempt(idx):
        """One try from its first word, for idx (positions in idx0): settled mask."""
        below = np.zeros(len(idx), dtype=bool)
        cmp = np.zeros(len(idx), dtype=np.int8)
        settled = np.zeros(len(idx), dtype=bool)
        live = np.arange(len(idx))  # positions in idx still drawing this try
        for i in range(nw):
            e, q = idx0[idx[live]], idx[live]
            x = T.take(I[e], p[e])
            p[e] += 1
            if i == 0:
                x &= np.uint32(top)
            ni = nm[i, q]
            rej = ~below[live] & (x > dw[i])
            below[live] |= x < dw[i]
            c = cmp[live]
            c = np.where(c == 0, (x > ni).astype(np.int8) - (x < ni).astype(np.int8), c)
            cmp[live] = c
            done = below[live] & (c != 0)
            res[e[done]] = c[done] < 0
            settled[live[done]] = True
            live = live[~done & ~rej]
        res[idx0[idx[live]]] = cmp[live] <= 0  # ran out of words: U <= d - 1 holds
        settled[live] = True
        return settled
    first = np.arange(len(idx0))
    pend = first[~attempt(first)]
    while pend.size:
        pend = pend[T.ok(I[idx0[pend]])]
        if pend.size:
            pend = pend[~attempt(pend)]
    return res, p


def _words_of(lo, hi):
    """(4, k) uint32 array: the 32-bit words of the 128-bit (hi, lo), least significant
    first."""
    return np.stack([lo & _M32, lo >> _U(32), hi & _M32, hi >> _U(32)]).astype(np.uint32)


def _bernoulli_recip(T, I, p, K):
    """bernoulli(1, K) for K per element (K < 2^32: the word cap keeps it so)."""
    res = np.ones(len(I), dtype=bool)
    idx0 = np.flatnonzero(K > _ONE)
    if not idx0.size:
        return res, p
    k32 = K.astype(np.uint32)
    mask = ((_ONE << np.frexp((K - _ONE).astype(np.float64))[1].astype(_U)) - _ONE) \
        .astype(np.uint32)

    def draw(idx):
        e = idx0[idx]
        x = T.take(I[e], p[e]) & mask[e]
        p[e] += 1
        good = x < k32[e]
        res[e[good]] = x[good] == 0
        return good
    pend = np.flatnonzero(~draw(np.arange(len(idx0))))
    while pend.size:
        pend = pend[T.ok(I[idx0[pend]])]
        if pend.size:
            pend = pend[~draw(pend)]
    return res, p


def _exp_le1(T, I, p, n_hi, n_lo, d: int):
    """Bernoulli(exp(-n/d)), n <= d: the K loop of bernoulli_exp_le1."""
    a, p = _bernoulli(T, I, p, n_hi, n_lo, d)  # K = 1: bernoulli(1, 1) is true
    res = ~a  # stopped at K = 1 (odd)
    act = np.flatnonzero(a)
    K = np.full(len(act), 2, dtype=_U)  # K of each element of act
    while act.size:
        act_ok = T.ok(I[act])
        act, K = act[act_ok], K[act_ok]
        a, p[act] = _bernoulli(T, I[act], p[act], None if n_hi is None else n_hi[act],
                               n_lo[act], d)
        sub = np.flatnonzero(a)
        if sub.size:
            e = act[sub]
            a[sub], p[e] = _bernoulli_recip(T, I[e], p[e], K[sub])
        res[act[~a]] = (K[~a] & _ONE) == _ONE
        act, K = act[a], K[a] + _ONE
    return res, p


def _exp_minus_one(T, I, p):
    return _exp_le1(T, I, p, None, np.ones(len(I), dtype=_U), 1)


def _exp(T, I, p, n_hi, n_lo, d: int):
    """Bernoulli(exp(-n/d)) for any n (128-bit per element), d constant: exp(-1) per
    whole d in n, then the remainder."""
    res = np.zeros(len(I), dtype=bool)
    n_hi, n_lo = n_hi.copy(), n_lo.copy()
    dh, dl = _U(d >> 64), _U(d & 0xFFFFFFFFFFFFFFFF)
    act = np.arange(len(I))
    while act.size:
        act = act[T.ok(I[act])]
        big = (n_hi[act] > dh) | ((n_hi[act] == dh) & (n_lo[act] > dl))
        fin = act[~big]
        if fin.size:
            res[fin], p[fin] = _exp_le1(T, I[fin], p[fin], n_hi[fin], n_lo[fin], d)
        act = act[big]
        if act.size:
            e, p[act] = _exp_minus_one(T, I[act], p[act])
            act = act[e]  # the others are False
            borrow = (n_lo[act] < dl).astype(_U)
            n_lo[act] -= dl
            n_hi[act] -= dh + borrow
    return res, p


def _laplace(T, I, p, t: int, s: int):
    """discrete_laplace(t, s) per element; X >= 2^63 marks the element WIDE."""
    y = np.zeros(len(I), dtype=np.int64)
    tt, ss = _U(t), _U(s)
    act = np.arange(len(I))
    while act.size:
        act = act[T.ok(I[act])]
        if not act.size:
            break
        u, p[act] = _uniform(T, I[act], p[act], t)
        keep, p[act] = _exp_le1(T, I[act], p[act], None, u, t)
        keep &= T.ok(I[act])
        g, ug = act[keep], u[keep]
        v = np.zeros(len(g), dtype=_U)
        va = np.arange(len(g))
        while va.size:
            e, p[g[va]] = _exp_minus_one(T, I[g[va]], p[g[va]])
            va = va[e & T.ok(I[g[va]])]
            v[va] += _ONE
        xh, xl = _mul64(v, tt)
        x = xl + ug
        xh = xh + (x < xl).astype(_U)
        T.wide[I[g[(xh != 0) | (x >= _U(1 << 63))]]] = True
        yv = (x // ss).astype(np.int64)
        neg, p[g] = _bernoulli(T, I[g], p[g], None, np.ones(len(g), dtype=_U), 2)
        rej = neg & (yv == 0)
        done = ~rej & T.ok(I[g])
        y[g[done]] = np.where(neg[done], -yv[done], yv[done])
        act = np.concatenate([act[~keep], g[rej]])
    return y, p


def _gaussian(T, n: int, g: DiscreteGaussian):
    out = np.zeros(n, dtype=np.int64)
    p = np.zeros(n, dtype=np.int64)
    t, qt, pp, den = g.t, _U(g.q * g.t), _U(g.p), g.accept_den
    act = np.arange(n)
    while act.size:
        act = act[T.ok(act)]
        y, p[act] = _laplace(T, act, p[act], t, 1)
        live = T.ok(act)
        act, y = act[live], y[live]
        ah, al = _mul64(np.abs(y).astype(_U), qt)  # a = |y| q t - p, |y| < 2^63
        ge = (ah != 0) | (al >= pp)
        rl = np.where(ge, al - pp, pp - al)
        rh = np.where(ge, ah - (al < pp).astype(_U), _U(0))
        T.wide[act[rh != 0]] = True
        live = rh == 0
        act, y, rl = act[live], y[live], rl[live]
        nh, nl = _mul64(rl, rl)
        acc, p[act] = _exp(T, act, p[act], nh, nl, den)
        acc &= T.ok(act)
        out[act[acc]] = y[acc]
        act = act[~acc]
    return out


def sample(spec, n: int, key, stream: int, call: int, max_words: int):
    """(values, status) of elements 0 .. n-1; spec.fits_fixed() must hold."""
    check_max_words(max_words)  # refills check the cap: it must fall on a window edge
    values = np.zeros(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.uint8)
    for first in range(0, n, CHUNK):
        m = min(CHUNK, n - first)
        T = _Tape(key, first, m, stream, call, max_words)
        if isinstance(spec, DiscreteGaussian):
            v = _gaussian(T, m, spec)
        else:
            v = _laplace(T, np.arange(m), np.zeros(m, dtype=np.int64), spec.t, spec.s)[0]
        values[first:first + m] = v
        status[first:first + m] = np.where(T.dead, FAIL, np.where(T.wide, WIDE, OK))
    return values, status
