"""Adaptive rounds of 3-way marginals, with GUM as the estimator (AIM's idea, in a few
rounds).

PrivSyn measures pairs and keeps a triangle of them as one 3-way marginal only when all
three pairs were selected; AIM instead asks, of every 3-way marginal, how far the current
model is from the data there.  Here the model is GUM's records S fitted to the noisy
marginals measured so far (post-processing), and each round asks the question of all
candidate triples r together:

    err_r = floor( || M_r(D) - (n_hat / N) M_r(S) ||_1 )

with n_hat the noisy row count and N = len(S), both fixed by earlier releases.  Adding or
removing one record of D moves one cell of M_r(D) by 1, so the real sum by at most 1,
and its floor by at most 1 (floor is monotone and floor(x + 1) = floor(x) + 1): the m
scores have L1 sensitivity m and squared L2 sensitivity m, and exact discrete Gaussian
noise on them is a Gaussian mechanism like every other measurement.  err_r is computed in
integers: sum |N M_r(D) - n_hat M_r(S)| // N.

The noisy errors then go through PrivSyn's greedy trade (selection.greedy_select): a
triple is measured while the error it would explain exceeds the noise its share of the
round's budget brings, and the triples together must gain more than the same budget
would by measuring the marginals already chosen again (pooling_gain): at small epsilon
their noise is what matters, at large epsilon the triples' errors.  When no triple is
worth it, no further round is run and what is left measures those marginals again,
pooled with the first measurement (inverse-variance), which is what measuring them once
with both shares would give.

A round's triples stay only if GUM can fit them (realised): S, refitted with them, must
remove at least REALISED of their error.  Where many overlapping triples are measured,
GUM cannot fit them together, and their targets pull its records away from everything
else; then they are dropped from the targets (their charge stays) and the rounds end.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from gpu_dpsyn.selection.greedy import greedy_select, noise_cost
from gpu_dpsyn.core.summing import left_sum

FIT_ROWS = 1 << 16  # records of S at most: on the tables past it, 2^16 records instead of
# 2^20 left 3-way TVD as low or lower, the fits in 0.29-1.19 of the time, mostly under
# half (bench/experiments/s_rows)
FIT_ITERATIONS = 25  # GUM's for S (auto, at most this): it ranks errors, it is not released
TRIPLE_MAX_CELLS = 100_000  # candidates: AIM's model cap keeps marginals this small too
MAX_CANDIDATES = 4096  # the smallest triples first: bounds the work after the first charge
ROUND_SHARE = 0.35  # of the selected marginals' budget, for all rounds
ROUNDS = 3
ERROR_SHARE = 0.15  # of a round's budget: the triples' noisy errors
REALISED = 0.5  # a round's triples are kept if S, refitted with them, removes this share
# of their error; bench/heldout.py's tables: 0.24-0.41 where the rounds hurt, 0.61-0.94
# on the others (docs/method.md)


def candidate_triples(domain, free, exclude, max_cells: int) -> list:
    """3-way column sets over `free` whose marginal fits max_cells, minus `exclude` and
    those with a column of one value (merged by filtering): a lower marginal in disguise.
    At most MAX_CANDIDATES, the fewest cells first (a public order: 100 columns have
    161,700 triples, each to be counted on the private table)."""
    skip = {tuple(sorted(m)) for m in exclude}
    free = [a for a in sorted(free) if domain[a] > 1]
    out = [(math.prod(int(domain[a]) for a in t), t) for t in itertools.combinations(free, 3)
           if t not in skip]
    out = sorted(x for x in out if x[0] <= max_cells)[:MAX_CANDIDATES]
    return sorted(t for _, t in out)


def could_gain(cells, n_hat: int, rho: float, sensitivity: float = 1.0,
               forgone: float = 0.0) -> np.ndarray:
    """Which candidates could be chosen at all: a triple's error is at most n + n_hat
    (about 2 n_hat), so one whose noise alone, plus what the budget gains otherwise,
    exceeds that is never worth measuring, and scoring it would only spend budget and
    add to every score's noise.  Public: cells, rho and the noisy n_hat."""
    noise = sensitivity * np.asarray(cells, dtype=np.float64) / math.sqrt(math.pi * rho)
    return noise + forgone < 2.0 * n_hat


def choose(scores, sets, cells, rho: float, sensitivity: float = 1.0,
           forgone: float = 0.0) -> list:
    """PrivSyn's greedy trade (selection.greedy_select) over the candidate sets, except
    that a set sharing a pair with one already chosen waits for the next round: measuring
    one triple also fixes much of the error of those that share a pair with it, so their
    errors, measured against the old records, overstate what they would add.  `forgone`:
    what the budget would gain spent otherwise (on the marginals already measured, see
    pooling_gain); the chosen sets together must gain more, or none is chosen."""
    chosen = greedy_select(scores, cells, rho, sensitivity, apart=sets)
    explained = float(np.maximum(np.asarray(scores, dtype=np.float64)[chosen], 0.0).sum())
    w = float(np.sum(np.asarray(cells, dtype=np.float64)[chosen] ** (2.0 / 3.0)))
    gain = explained - noise_cost(w, rho, sensitivity) if chosen else 0.0
    return chosen if gain > forgone else []


def pooling_gain(cells, rho: float, more: float, sensitivity: float = 1.0) -> float:
    """How much lower the expected L1 noise of marginals of these cells (sharing rho as
    c^(2/3)) is with `more` rho measured again and pooled: the round's alternative."""
    w = float(np.sum(np.asarray(cells, dtype=np.float64) ** (2.0 / 3.0)))
    if w == 0 or rho <= 0:  # nothing measured to pool with
        return 0.0
    return noise_cost(w, rho, sensitivity) - noise_cost(w, rho + more, sensitivity)


def realised(before, after, targets) -> float:
    """The share of a round's triples' error that GUM realised: S's histograms of them
    before the round (which scored them) and after S was refitted with them, each scaled
    to its target's total, against the (noisy, consistent) targets,

        sum_r (||b_r - t_r||_1 - ||a_r - t_r||_1) / sum_r ||b_r - t_r||_1.

    Post-processing: S and the targets only.  Where GUM cannot fit many overlapping
    triples (TV16: 20 columns), most of the error stays, and the triples' targets pull
    GUM's records away from the rest: the unmeasured triples and the pairs get worse."""
    def l1(h, t):
        h = np.asarray(h, dtype=np.float64).ravel()
        scale = t.values.sum() / h.sum() if h.sum() > 0 else 0.0
        return float(np.abs(h * scale - t.values).sum())
    err = left_sum(l1(b, t) for b, t in zip(before, targets))
    if err <= 0:
        return 1.0
    return (err - left_sum(l1(a, t) for a, t in zip(after, targets))) / err


