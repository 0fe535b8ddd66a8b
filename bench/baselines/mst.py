"""MST (McKenna, Miklau, Sheldon 2021) written against the public API of mbi 2.0,
for bench/suites/peers.py.  Same steps as the NIST-winning original: 1-way marginals
(rho/3), domain compression (values below 3 sigma merged), a maximum spanning tree
of pairs chosen by the exponential mechanism (rho/3), the tree's 2-way marginals
(rho/3), mirror-descent estimation (5,000 iterations, as private-pgm's
mechanisms/mst.py; the selection's estimate 1,000), synthetic data from the fitted model.

As in private-pgm's mechanisms/mst.py, the k marginals of one measuring round share
their third of rho: each is weighted 1/sqrt(k), i.e. gets noise sigma sqrt(k) in count
units, so a round costs 1/(2 sigma^2) = rho/3 in all (total_rho checks the sum)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from gpu_dpsyn.privacy import eps_delta_to_rho


def _mbi():
    """mbi (and JAX) only when MST runs: the budget arithmetic is tested without them."""
    import jax
    jax.config.update("jax_enable_x64", True)
    import mbi
    from mbi.estimation import MirrorDescent
    return mbi, MirrorDescent


def round_stddev(sigma: float, k: int) -> float:
    """Noise std of each of the k marginals measured in one round."""
    return sigma * math.sqrt(k)


def select_epsilon(rho: float, n_attrs: int) -> float:
    """Each of the n_attrs - 1 exponential-mechanism rounds costs eps^2 / 8 of rho / 3."""
    return math.sqrt(8 * (rho / 3) / (n_attrs - 1))


def total_rho(sigma: float, k1: int, k2: int, n_attrs: int, eps: float) -> float:
    """zCDP of the whole run: two Gaussian rounds of k1 and k2 marginals plus the
    exponential-mechanism rounds of the tree."""
    gauss = sum(k / (2 * round_stddev(sigma, k) ** 2) for k in (k1, k2))
    return gauss + (n_attrs - 1) * eps ** 2 / 8


def _measure(data, cliques, sigma, rng):
    mbi, _ = _mbi()
    std = round_stddev(sigma, len(cliques))
    out = []
    for cl in cliques:
        x = np.asarray(data.project(cl).datavector())
        out.append(mbi.LinearMeasurement(x + rng.normal(0, std, x.size), cl, stddev=std))
    return out


def _compress(data, log):
    """Merge the values of each attribute whose noisy count is below 3 sigma (its own
    measurement's std)."""
    mbi, _ = _mbi()
    new_data, new_log, undo = {}, [], {}
    for m in log:
        col = m.clique[0]
        y = np.asarray(m.noisy_measurement)
        sigma = m.stddev
        supp = y >= 3 * sigma
        if supp.all() or (~supp).sum() < 2:
            new_data[col] = data.data[col]
            new_log.append(m)
            continue
        mapping = np.where(supp, np.cumsum(supp) - 1, supp.sum())
        new_data[col] = mapping[data.data[col]]
        y2 = np.append(y[supp], y[~supp].sum())
        w = np.ones(y2.size)
        w[-1] = 1.0 / np.sqrt((~supp).sum())  # the merged cell sums many noisy cells
        new_log.append(mbi.LinearMeasurement(y2 * w, (col,), stddev=sigma,
                                             query=mbi.WeightedQuery(w)))
        undo[col] = (np.nonzero(supp)[0], np.nonzero(~supp)[0])
    shape = [len(undo[a][0]) + 1 if a in undo else data.domain[a]
             for a in data.domain.attributes]
    dom = mbi.Domain(data.domain.attributes, shape)
    return mbi.Dataset(new_data, dom), new_log, undo


def _select(data, eps, log, rng, iters):
    """The tree's edges, each by the exponential mechanism at eps (sensitivity 1)."""
    est = _mbi()[1]().estimate(data.domain, log, iters=iters)
    attrs = list(data.domain.attributes)
    cand = list(itertools.combinations(attrs, 2))
    weight = {}
    for a, b in cand:
        x = np.asarray(data.project((a, b)).datavector())
        xhat = np.asarray(est.project((a, b)).datavector())
        weight[a, b] = np.abs(x - xhat).sum()
    parent = {a: a for a in attrs}

    def find(a):
        while parent[a] != a:
            a = parent[a]
        return a
    edges = []
    for _ in range(len(attrs) - 1):
        cand = [e for e in cand if find(e[0]) != find(e[1])]
        w = np.array([weight[e] for e in cand])
        # exponential mechanism (sensitivity 1) by the Gumbel-max trick
        score = eps / 2.0 * (w - w.max()) + rng.gumbel(size=w.size)
        e = cand[int(np.argmax(score))]
        edges.append(e)
        parent[find(e[0])] = find(e[1])
    return edges


def mst(codes: dict, sizes: dict, epsilon: float, delta: float, seed: int = 0,
        iters: int = 5000) -> dict:
    """codes: {column: int array}; returns synthetic codes of the same columns."""
    mbi, MirrorDescent = _mbi()
    rng = np.random.default_rng(seed)
    rho = eps_delta_to_rho(epsilon, delta)
    sigma = math.sqrt(3 / (2 * rho))
    dom = mbi.Domain(list(codes), [sizes[c] for c in codes])
    data = mbi.Dataset({c: np.asarray(v, dtype=np.int64) for c, v in codes.items()}, dom)
    log1 = _measure(data, [(c,) for c in codes], sigma, rng)
    data, log1, undo = _compress(data, log1)
    eps = select_epsilon(rho, len(codes))
    cliques = _select(data, eps, log1, rng, min(iters, 1000))
    log2 = _measure(data, cliques, sigma, rng)
    assert math.isclose(total_rho(sigma, len(codes), len(cliques), len(codes), eps), rho)
    est = MirrorDescent().estimate(data.domain, log1 + log2, iters=iters)
    syn = est.synthetic_data()
    out = {}
    for c in codes:
        v = np.asarray(syn.data[c])
        if c in undo:
            keep, merged = undo[c]
            full = np.empty(v.size, dtype=np.int64)
            is_m = v >= keep.size
            full[~is_m] = keep[v[~is_m]]
            full[is_m] = rng.choice(merged, int(is_m.sum()))
            v = full
        out[c] = v
    return out
