"""MST (McKenna, Miklau, Sheldon 2021) written against the public API of mbi 2.0,
for bench/peers.py.  Same steps as the NIST-winning original: 1-way marginals
(rho/3), domain compression (values below 3 sigma merged), a maximum spanning tree
of pairs chosen by the exponential mechanism (rho/3), the tree's 2-way marginals
(rho/3), mirror-descent estimation, synthetic data from the fitted model."""
from __future__ import annotations

import itertools

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
from mbi import Dataset, Domain, LinearMeasurement, WeightedQuery  # noqa: E402
from mbi.estimation import MirrorDescent  # noqa: E402

from gpu_dpsyn.privacy import eps_delta_to_rho  # noqa: E402


def _measure(data, cliques, sigma, rng):
    out = []
    for cl in cliques:
        x = np.asarray(data.project(cl).datavector())
        out.append(LinearMeasurement(x + rng.normal(0, sigma, x.size), cl, stddev=sigma))
    return out


def _compress(data, log, sigma):
    """Merge the values of each attribute whose noisy count is below 3 sigma."""
    new_data, new_log, undo = {}, [], {}
    for m in log:
        col = m.clique[0]
        y = np.asarray(m.noisy_measurement)
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
        new_log.append(LinearMeasurement(y2 * w, (col,), stddev=sigma,
                                         query=WeightedQuery(w)))
        undo[col] = (np.nonzero(supp)[0], np.nonzero(~supp)[0])
    shape = [len(undo[a][0]) + 1 if a in undo else data.domain[a]
             for a in data.domain.attributes]
    dom = Domain(data.domain.attributes, shape)
    return Dataset(new_data, dom), new_log, undo


def _select(data, rho, log, rng, iters):
    est = MirrorDescent().estimate(data.domain, log, iters=iters)
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
    r = len(attrs)
    eps = np.sqrt(8 * rho / (r - 1))
    for _ in range(r - 1):
        cand = [e for e in cand if find(e[0]) != find(e[1])]
        w = np.array([weight[e] for e in cand])
        # exponential mechanism (sensitivity 1) by the Gumbel-max trick
        score = eps / 2.0 * (w - w.max()) + rng.gumbel(size=w.size)
        e = cand[int(np.argmax(score))]
        edges.append(e)
        parent[find(e[0])] = find(e[1])
    return edges


def mst(codes: dict, sizes: dict, epsilon: float, delta: float, seed: int = 0,
        iters: int = 2500) -> dict:
    """codes: {column: int array}; returns synthetic codes of the same columns."""
    rng = np.random.default_rng(seed)
    rho = eps_delta_to_rho(epsilon, delta)
    sigma = np.sqrt(3 / (2 * rho))
    dom = Domain(list(codes), [sizes[c] for c in codes])
    data = Dataset({c: np.asarray(v, dtype=np.int64) for c, v in codes.items()}, dom)
    log1 = _measure(data, [(c,) for c in codes], sigma, rng)
    data, log1, undo = _compress(data, log1, sigma)
    cliques = _select(data, rho / 3.0, log1, rng, min(iters, 1000))
    log2 = _measure(data, cliques, sigma, rng)
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
