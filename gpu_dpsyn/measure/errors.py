"""The adaptive rounds' measurement: noisy errors of candidate triples against GUM's
records S (selection/triples.py has the reasoning and the sensitivity argument)."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.measure.marginals import LocalCounts, counts_source
from gpu_dpsyn.privacy.samplers import draw


def histograms(backend, source, domain, sets) -> list:
    """The flat histogram of each column set over a counts source (or code columns)."""
    shapes = [tuple(int(domain[a]) for a in r) for r in sets]
    return counts_source(backend, source).histograms(zip(sets, shapes))


def errors(backend, counts, synth, domain, sets, n_hat: int) -> np.ndarray:
    """floor(|| M_r(D) - (n_hat / N) M_r(S) ||_1) of each column set r, exactly in
    integers (each term stays below N (n + n_hat) < 2^63).  Reads the private data:
    charge before calling.  counts: a counts source of D; synth: S's code columns.
    n_hat, a noisy count unbounded at tiny epsilon, is capped at MAX_ROWS (post-processing)
    so that those sums stay exact: past 2^64 / N they wrapped, and one record moved a
    score by far more than the sensitivity 1 it is charged for."""
    n_hat = min(int(n_hat), MAX_ROWS)
    n_syn = int(len(synth[0]))
    if isinstance(counts_source(backend, counts), LocalCounts):
        return _errors_on_device(backend, counts_source(backend, counts).cols, synth, domain,
                                 sets, n_hat, n_syn)
    real = histograms(backend, counts, domain, sets)
    fake = histograms(backend, synth, domain, sets)
    out = np.empty(len(sets), dtype=np.int64)
    for k, (d, s) in enumerate(zip(real, fake)):
        dev = np.abs(n_syn * d.astype(np.int64) - int(n_hat) * s.astype(np.int64))
        out[k] = int(dev.sum(dtype=np.uint64)) // max(n_syn, 1)
    return out


def _errors_on_device(backend, cols, synth, domain, sets, n_hat: int, n_syn: int):
    """errors() with both tables in the backend's memory: each set's sum stays there, and
    the host reads them all at once (a GPU syncs once, not once per candidate)."""
    xp = backend.xp
    if not sets:
        return np.empty(0, dtype=np.int64)
    sums = []
    for r in sets:  # one set's histograms at a time
        shape = tuple(int(domain[a]) for a in r)
        d = backend.histogram(cols, r, shape).astype(xp.int64)
        s = backend.histogram(synth, r, shape).astype(xp.int64)
        sums.append(xp.abs(n_syn * d - n_hat * s).sum(dtype=xp.uint64))
    total = backend.to_numpy(xp.stack(sums)).astype(np.uint64)
    return (total // np.uint64(max(n_syn, 1))).astype(np.int64)


def measure_errors(backend, counts, synth, domain, sets, n_hat: int, accountant, fraction,
                   key) -> np.ndarray:
    """Noisy errors of the column sets, charged as one measurement (see the module), less
    sigma sqrt(2 ln m), about the largest of m noise draws: a lower bound on each error
    that the luckiest draw does not beat, so that no triple is measured for its noise."""
    m = len(sets)
    entry = accountant.charge(fraction, "3-way errors", ["candidate triples"], m, l1=m,
                              l2_sq=m)
    exact = errors(backend, counts, synth, domain, sets, n_hat)
    noise = draw(backend, entry.noise, m, key, rng.SELECT, len(accountant.ledger) - 1)
    return (exact + noise).astype(np.float64) - entry.sigma * math.sqrt(2 * math.log(max(m, 2)))

