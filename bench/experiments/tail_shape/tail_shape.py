"""The top private-quantile bin's inside: today's thinning fit (quantiles.shaped_tails)
against a log-concave parametric tail chosen by AIC.  Not adopted (see the results file
and bench/results/README.md): a modest gain on heavy tails, values past twice the real
max in 1 run in 18, and no gain where the tail is well above the noise.

Simulates one column's pipeline from the noisy grid histogram to the decoded values: the
bins chosen as fit() chooses them, each record kept in its real bin (GUM's target), its
value drawn by quantile_bins.Within from the shaped cumulative counts.  30,000 rows, a
log grid of 1,024 cells, K = 32, noise sigma 7.5 (one column's 5% share of eps 4) and 25.
    python bench/experiments/tail_shape/tail_shape.py > bench/results/tail_shape_x86_64_2_cores.jsonl
"""
import json
import sys

import numpy as np

from gpu_dpsyn.data.types.quantile_bins import Within, parse
from gpu_dpsyn.measure import quantiles as Q


def log_concave(y):
    """Least squares fit of exp(a - b j - c j^2), b, c >= 0, over a grid of (b, c)."""
    j = np.arange(len(y), dtype=float)
    best = None
    for c in np.r_[0.0, np.geomspace(1e-7, 1.0, 80)]:
        for b in np.r_[0.0, np.geomspace(1e-4, 5.0, 80)]:
            v = np.exp(-np.minimum(c * j * j + b * j, 700))
            a = max(float(y @ v) / float(v @ v), 0.0)
            sse = float(y @ y) - a * float(y @ v)
            if best is None or sse < best[0]:
                best = (sse, a * v)
    return best[1]


def aic_tail(cum, noisy, cuts, sigma):
    """The top bin shaped by whichever of the thinning fit and the log-concave one has
    the smaller SSE / sigma^2 + 2 * parameters (blocks + 1 against 3)."""
    out = np.diff(cum)
    lo, hi = cuts[-2], cuts[-1]
    y = np.asarray(noisy[lo:hi], float)
    spike = y > Q.SPIKE_SIGMAS * sigma
    body = np.where(spike, 0.0, y)
    iso = Q._significant(body[::-1], sigma)[::-1]
    lcc = log_concave(body)
    aic_iso = float(((body - iso)[~spike] ** 2).sum()) / sigma ** 2 + \
        2 * (len(np.unique(iso[iso > 0])) + 1)
    aic_lcc = float(((body - lcc)[~spike] ** 2).sum()) / sigma ** 2 + 6
    fit = np.where(spike, y, lcc if aic_lcc < aic_iso else iso)
    total = cum[hi] - cum[lo]
    if fit.sum() > 0 and total > 0:
        out[lo:hi] = fit * (total / fit.sum())
    return np.concatenate([[0.0], np.cumsum(out)])


def decoded(x, hi, sigma, seed, shaper, k=32):
    pq = parse("c", {"min": 1.0, "max": hi, "bins": {"private_quantiles": k}}, 1.0, hi, False)
    grid = np.asarray(pq.grid, float)
    g = len(grid) - 1
    codes = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, g - 1)
    r = np.random.default_rng(seed)
    noisy = np.bincount(codes, minlength=g) + np.round(r.normal(0, sigma, g))
    cum = Q.cumulative(noisy)
    cuts = Q._cuts(cum, k)
    lut = np.searchsorted(np.asarray(cuts[1:-1]), np.arange(g), side="right")
    within = Within(grid, shaper(cum, noisy, cuts, sigma), np.asarray(cuts, dtype=np.int64))
    return within.draw(lut[codes], r.random(len(x)), False)


def tables(r, n=30000):
    return [("lognormal s1.2", np.exp(r.normal(np.log(5000), 1.2, n)), 2e6),
            ("lognormal s2", np.exp(r.normal(np.log(500), 2.0, n)), 1e8),
            ("pareto 1.5", 1000 * (1 + r.pareto(1.5, n)), 1e7),
            ("pareto 3", 1000 * (1 + r.pareto(3, n)), 1e6),
            ("uniform to 50k", r.uniform(100, 50000, n), 1e6),
            ("wages", np.exp(r.normal(10.5, 0.7, n)), 5e6),
            ("exponential", r.exponential(2000, n), 1e6),
            ("gamma 2", r.gamma(2, 3000, n), 1e6),
            ("mixture", np.r_[r.uniform(10, 100, n // 2),
                              np.exp(r.normal(8, 1.5, n - n // 2))], 1e7)]


def main():
    for seed in range(8):
        for name, x, hi in tables(np.random.default_rng(100 + seed)):
            x = np.minimum(x, hi)
            p99, p999 = np.quantile(x, [0.99, 0.999])
            for sigma in (7.5, 25.0):
                for shape, shaper in (("thinning", Q.shaped_tails), ("aic", aic_tail)):
                    y = decoded(x, hi, sigma, seed, shaper)
                    print(json.dumps({"table": name, "sigma": sigma, "seed": seed,
                                      "shape": shape, "mean_ratio": y.mean() / x.mean(),
                                      "share_past_p99": (y > p99).mean(),
                                      "share_past_p999": (y > p999).mean(),
                                      "max_ratio": y.max() / x.max()}))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
