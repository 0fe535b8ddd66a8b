"""GUM's targets from the fitted levels: the top marginals scaled to n records, the
row-count estimate, and pooling two measurements of one marginal (post-processing)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core.holding import holding
from gpu_dpsyn.core.types import Marginal
from gpu_dpsyn.estimate.consistency import make_consistent
from gpu_dpsyn.estimate.empirical_bayes import denoise_marginals


def estimate(marginals, measured_cells, denoise: bool, rounds: int, ordered=None) -> float:
    """The noisy marginals, in place, as GUM's targets: each multi-way one's cells
    smoothed along its ordered axes (ordered: {attr: ordered bins}, smoothing.py) and by
    their posterior means (empirical_bayes.py; denoise=False keeps them as measured),
    then consistent and non-negative.  Returns their common total."""
    if denoise:
        denoise_marginals(marginals, measured_cells, ordered)
    return make_consistent(marginals, max_rounds=rounds)


def top(marginals) -> list:
    """The marginals inside no other one: each checked against the marginals that hold
    its first attribute (every pair checked took 135 s at 300 columns, a probe's profile)."""
    sets = [frozenset(m.attrs) for m in marginals]
    held_by, every = holding(sets), range(len(sets))  # (an empty set is inside any other)
    return [m for m, s in zip(marginals, sets)
            if not any(s < sets[i] for i in (held_by[min(s)] if s else every))]


def scaled_targets(level, n: int) -> list:
    """GUM's targets (attrs, shape, counts): the level's most detailed marginals (those
    inside no other), scaled to n records."""
    out = []
    for m in top(level.marginals):
        tot = m.values.sum()
        t = m.values * (n / tot) if tot > 0 else np.full(m.cells, n / m.cells)
        out.append((m.attrs, m.shape, t))
    return out


def pooled_total(levels) -> tuple:
    """(row count estimate, its standard error): the levels' common totals pooled by
    inverse variance (one level: its own)."""
    if len(levels) == 1:
        return levels[0].total, levels[0].standard_error
    w = np.array([1.0 / max(lv.standard_error, 1e-12) ** 2 for lv in levels])
    t = np.array([lv.total for lv in levels])
    return float((w * t).sum() / w.sum()), float(1.0 / np.sqrt(w.sum()))


def private_row_estimate(one_way) -> float:
    """The row count estimated from the noisy 1-way marginals (post-processing)."""
    return float(np.mean([m.values.sum() for m in one_way]))



def pool(first: Marginal, second: Marginal) -> Marginal:
    """Two independent noisy measurements of one marginal as one: inverse-variance
    weights, sigma^-2 = sigma_1^-2 + sigma_2^-2 (Gaussian: what one measurement with
    both budgets gives)."""
    w1, w2 = first.sigma ** -2, second.sigma ** -2
    values = (w1 * first.values + w2 * second.values) / (w1 + w2)
    return Marginal(first.attrs, first.shape, values, (w1 + w2) ** -0.5)


def noise_per_value(level) -> list:
    """(column, noise sd of its counts, noisy records a value) for each column of the
    level's marginals: each noisy marginal holding it gives its counts with variance
    sigma^2 times the cells summed into one value, and they combine by inverse variance
    (as consistency does, about); the records a value are the level's noisy total over
    its values.  From noise levels and noisy values: post-processing."""
    inv, size = {}, {}
    for m in level.marginals:
        if m.sigma <= 0:
            continue
        for a, k in zip(m.attrs, m.shape):
            size[a] = k
            inv[a] = inv.get(a, 0.0) + 1.0 / (m.sigma ** 2 * m.cells / k)
    return [(a, inv[a] ** -0.5, max(level.total, 0.0) / size[a]) for a in sorted(inv)]
