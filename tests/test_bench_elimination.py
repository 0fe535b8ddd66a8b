"""bench/baselines/elimination.py, AIM's scorer: a log-linear model's marginals by variable
elimination equal the brute-force joint's (an independent computation), and, where
mbi is installed, mbi's own projections."""
import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "baselines"


@pytest.fixture(scope="module")
def elim():
    spec = importlib.util.spec_from_file_location("bench_elimination", BENCH / "elimination.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _model(seed: int):
    """A random model on 6 attributes: random cliques of 1-3 attributes (every attribute
    but the last in one), log-potentials of scale 3."""
    r = np.random.default_rng(seed)
    names = list("abcdef")
    sizes = {a: int(r.integers(2, 5)) for a in names}
    cliques = list(dict.fromkeys(
        [tuple(r.choice(names[:5], size=int(r.integers(1, 4)), replace=False))
         for _ in range(5)] + [(a,) for a in names[:5]]))
    pots = [(c, 3 * r.standard_normal([sizes[a] for a in c])) for c in cliques]
    return names, sizes, pots


def _brute(names, sizes, pots, query, total):
    """The joint over every attribute, then summed onto the query."""
    joint = np.zeros([sizes[a] for a in names])
    for attrs, table in pots:
        t = np.einsum(table, [names.index(a) for a in attrs], sorted(names.index(a) for a in attrs))
        shape = [sizes[a] if a in attrs else 1 for a in names]
        joint = joint + t.reshape(shape)
    p = np.exp(joint - joint.max())
    p = p / p.sum() * total
    keep = [names.index(a) for a in query]
    out = np.einsum(p, list(range(len(names))), keep)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_marginals_equal_the_brute_force_joint(elim, seed):
    names, sizes, pots = _model(seed)
    queries = [q for r in (1, 2, 3) for q in itertools.permutations(names, r)][::7]
    queries += [("f",), ("f", "a"), ("c", "f", "b")]  # f is in no potential: uniform
    for q in queries:
        got = elim.marginal(pots, sizes, q, 1234.5)
        assert got.shape == tuple(sizes[a] for a in q)
        np.testing.assert_allclose(got, _brute(names, sizes, pots, q, 1234.5),
                                   rtol=1e-10, atol=1e-12)


def test_an_attribute_in_no_potential_is_uniform_and_independent(elim):
    names, sizes, pots = _model(3)
    got = elim.marginal(pots, sizes, ("a", "f"), 1.0)
    np.testing.assert_allclose(got, got.sum(axis=1, keepdims=True) / sizes["f"] * np.ones(
        sizes["f"]), rtol=1e-12)


def test_greedy_order_eliminates_the_cheapest_first(elim):
    sizes = {"a": 10, "b": 2, "c": 3, "d": 50}
    # a chain a-b-c-d queried on (a, d): b's neighbours span 10*2*3, c's 2*3*50
    assert elim.greedy_order(sizes, [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")],
                             ["b", "c"]) == ["b", "c"]
    assert elim.greedy_order(sizes, [("a", "b"), ("b", "c"), ("c", "d")],
                             ["c", "b"]) == ["b", "c"]


def test_marginals_equal_mbis_own(elim):
    mbi = pytest.importorskip("mbi")
    import jax
    jax.config.update("jax_enable_x64", True)
    from mbi.marginal_oracles import variable_elimination
    names, sizes, pots = _model(5)
    dom = mbi.Domain(names, [sizes[a] for a in names])
    cv = mbi.CliqueVector(dom, [c for c, _ in pots],
                          {c: mbi.Factor(dom.project(c), jax.numpy.asarray(t)) for c, t in pots})
    for q in [("a", "b"), ("e", "c", "a"), ("f", "d")]:
        ref = np.asarray(variable_elimination(cv, q, 99.0).values)
        np.testing.assert_allclose(elim.marginal(pots, sizes, q, 99.0), ref, rtol=1e-10)
