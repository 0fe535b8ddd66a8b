"""The adaptive rounds' measurement: noisy errors of candidate triples against GUM's
records S (selection/triples.py has the reasoning and the sensitivity argument)."""
from __future__ import annotations

import math

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.measure.marginals import LocalCounts, batches, counts_source
from gpu_dpsyn.privacy.drawing import draw


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
    if not sets:
        return np.empty(0, dtype=np.int64)
    shapes = [tuple(int(domain[a]) for a in r) for r in sets]
    source = counts_source(backend, counts)
    if isinstance(source, LocalCounts):  # both tables in the backend's memory: a batch of
        xp = backend.xp  # sets a launch each, their sums stay there, all read at once
        sums = [set_sums(xp, backend.histograms(source.cols, batch),
                         backend.histograms(synth, batch), [math.prod(sh) for _, sh in batch],
                         n_syn, n_hat) for batch in batches(zip(sets, shapes))]
        total = backend.to_numpy(xp.concatenate(sums))
    else:  # a distributed source's counts arrive on the host
        real = source.histograms(zip(sets, shapes))
        fake = histograms(backend, synth, domain, sets)
        total = np.array([np.abs(n_syn * d.astype(np.int64) - n_hat * s.astype(np.int64))
                          .sum(dtype=np.uint64) for d, s in zip(real, fake)], dtype=np.uint64)
    return (total.astype(np.uint64) // np.uint64(max(n_syn, 1))).astype(np.int64)


def set_sums(xp, real, fake, sizes, n_syn: int, n_hat: int):
    """sum |n_syn d - n_hat s| over each set's run of cells (the histograms d, s end to
    end, runs of `sizes` cells), as uint64: the differences of one running sum, which
    may wrap past 2^64, but each set's own sum is below 2^63, so its difference modulo
    2^64 is exact."""
    diff = xp.abs(n_syn * real.astype(xp.int64) - n_hat * fake.astype(xp.int64))
    run = xp.cumsum(diff.astype(xp.uint64))
    ends = np.cumsum(sizes) - 1
    at = run[xp.asarray(ends)]
    return at - xp.concatenate([xp.zeros(1, dtype=xp.uint64), at[:-1]])


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

