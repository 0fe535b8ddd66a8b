"""GUM's targets from the fitted levels: the top marginals scaled to n records, the
row-count estimate, and pooling two measurements of one marginal (post-processing)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.core.types import Marginal


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

