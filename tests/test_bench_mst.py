"""The MST baseline of bench/suites/peers.py spends exactly its budget (it used to give every
marginal of a round the round's whole third, some 13x rho in all at 20 columns)."""
import importlib.util
import math
import sys
import types
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = {"mst": "baselines/mst.py", "aim": "baselines/aim.py", "peers": "suites/peers.py",
           "heldout": "experiments/heldout/heldout.py",
           "triples": "experiments/triples/triples.py"}


@pytest.fixture
def mst(monkeypatch):
    """bench/baselines/mst.py with a stand-in for mbi (not installed in CI): LinearMeasurement
    records what it is given."""
    fake = types.ModuleType("mbi")
    fake.LinearMeasurement = lambda y, clique, stddev, query=None: types.SimpleNamespace(
        noisy_measurement=y, clique=clique, stddev=stddev)
    est = types.ModuleType("mbi.estimation")
    est.MirrorDescent = object
    jax = types.ModuleType("jax")
    jax.config = types.SimpleNamespace(update=lambda *a: None)
    for name, mod in (("mbi", fake), ("mbi.estimation", est), ("jax", jax)):
        monkeypatch.setitem(sys.modules, name, mod)
    spec = importlib.util.spec_from_file_location("bench_mst", BENCH / SCRIPTS["mst"])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("n_attrs", [2, 8, 20])
def test_mst_spends_exactly_rho(mst, n_attrs):
    from gpu_dpsyn.privacy import eps_delta_to_rho
    rho = eps_delta_to_rho(1.0, 1e-9)
    sigma = math.sqrt(3 / (2 * rho))
    eps = mst.select_epsilon(rho, n_attrs)
    assert mst.total_rho(sigma, n_attrs, n_attrs - 1, n_attrs, eps) == pytest.approx(rho)


def test_each_marginal_of_a_round_gets_sigma_sqrt_k(mst):
    cliques = [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]  # k = 4
    data = types.SimpleNamespace(project=lambda cl: types.SimpleNamespace(
        datavector=lambda: np.zeros(50_000)))
    out = mst._measure(data, cliques, 2.0, np.random.default_rng(0))
    assert all(m.stddev == pytest.approx(4.0) for m in out)
    noise = np.concatenate([m.noisy_measurement for m in out])
    assert np.std(noise) == pytest.approx(4.0, rel=0.02)


def _load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / SCRIPTS[name])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("seed", range(5))
def test_aim_schedule_spends_exactly_rho_whatever_the_annealing(seed):
    aim = _load("aim")
    r = np.random.default_rng(seed)
    rho, d = 0.05 * (seed + 1), 7 + seed
    s = aim.Schedule(rho, d, 16 * d)
    spent = d / (2 * s.sigma ** 2)
    while not s.done:
        eps, sigma = s.next_round()
        spent += eps ** 2 / 8 + 1 / (2 * sigma ** 2)  # exponential mechanism + Gaussian
        if r.random() < 0.3:
            s.anneal()
    assert spent == pytest.approx(rho, rel=1e-12) and s.used == pytest.approx(spent)


def _bench_script(monkeypatch, name: str):
    """_load, for a script that imports its neighbours (no package): each puts
    bench/common/ on the path itself; AIM finds elimination.py in bench/baselines/."""
    monkeypatch.syspath_prepend(str(BENCH / "baselines"))
    return _load(name)


def test_aim_refuses_an_unknown_scorer_before_it_imports_mbi(monkeypatch):
    aim = _bench_script(monkeypatch, "aim")
    with pytest.raises(ValueError, match="scorer must be 'numpy' or 'mbi', not 'jax'"):
        aim.aim({"a": np.zeros(3, dtype=int)}, {"a": 2}, 1.0, 1e-9, scorer="jax")


def test_peer_summary_takes_aim_at_its_most_iterations(monkeypatch):
    """A short AIM run (fewer mirror-descent iterations a round) stops short of AIM's
    quality: where a run at more iterations exists, the checks use it alone."""
    peers = _bench_script(monkeypatch, "peers")

    def row(peer, tvd3, secs, batch, iters=None, eps=8.0):
        r = {"dataset": "t", "epsilon": eps, "peer": peer, "seed": 0, "batch": batch,
             "seconds": secs, "tvd_2way": 0.01, "tvd_3way": tvd3}
        return r if iters is None else {**r, "aim_iters": iters}
    rows = [row("gpu_dpsyn", 0.035, 5.0, "gpu_dpsyn+mst"), row("mst", 0.07, 50, "gpu_dpsyn+mst"),
            row("gpu_dpsyn", 0.035, 5.0, "gpu_dpsyn+aim"),
            row("aim", 0.070, 300, "gpu_dpsyn+aim", 300), row("aim", 0.023, 2900, "x", 1000)]
    out = peers.summary(rows)
    assert "0.0230 (1 seed) (1,000 it.)" in out
    assert "| 2900.0 (mbi-scored) |" in out  # timed with mbi's projections
    assert "(b) gpu_dpsyn 3-way TVD <= 1.2 x AIM's: 0 of 1" in out  # not passed on 0.070


def test_peer_summary_times_aim_by_its_numpy_scored_runs_where_there_are_any(monkeypatch):
    """AIM scored by mbi's projections spent most of its time there: where a run with
    the NumPy scorer exists for a cell, its time alone counts; the TVDs take each seed
    once, from the NumPy-scored runs where there are any (the same marginals)."""
    peers = _bench_script(monkeypatch, "peers")
    base = {"dataset": "t", "epsilon": 1.0, "seed": 0, "tvd_2way": 0.01}
    rows = [{**base, "peer": "gpu_dpsyn", "batch": "gpu_dpsyn+mst", "seconds": 20.0,
             "tvd_3way": 0.040},
            {**base, "peer": "mst", "batch": "gpu_dpsyn+mst", "seconds": 5.0, "tvd_3way": 0.09},
            {**base, "peer": "aim", "batch": "x", "seconds": 900.0, "tvd_3way": 0.035,
             "aim_iters": 1000},
            {**base, "peer": "aim", "batch": "x", "seconds": 900.0, "tvd_3way": 0.050,
             "aim_iters": 1000, "seed": 1},
            {**base, "peer": "aim", "batch": "y", "seconds": 60.0, "tvd_3way": 0.030,
             "aim_iters": 1000, "seed": 1, "aim_scorer": "numpy variable elimination"}]
    out = peers.summary(rows)
    assert "| 1 | 20.0 | 5.0 | 60.0 |" in out  # the NumPy-scored run's time alone
    assert "| 0.0400 | 0.0900 | 0.0325 (1,000 it.) |" in out  # seed 0 and seed 1's NumPy run
    assert "(c) gpu_dpsyn time (current code) <= AIM's / 5 (same machine): 0 of 1" in out
    # against MST, the rows of one interleaved run: 20 s against 5 s fails
    assert "(e) gpu_dpsyn time <= MST's (interleaved in one run): 0 of 1**; fails: t ε=1 " \
        "(20.0 s vs 5.0 s)" in out
    rows[0]["seconds"] = 4.0
    assert "(e) gpu_dpsyn time <= MST's (interleaved in one run): 1 of 1**" in \
        peers.summary(rows)


def test_peer_summary_compares_times_paired_alone_where_a_cell_has_them(monkeypatch):
    """AIM timed beside another run is slower than alone: where gpu_dpsyn and AIM were
    both run alone (batch "alone"), the times and the time check come from those rows."""
    peers = _bench_script(monkeypatch, "peers")
    base = {"dataset": "t", "epsilon": 8.0, "seed": 0, "tvd_2way": 0.01, "tvd_3way": 0.03}
    sc = {"aim_iters": 1000, "aim_scorer": "numpy variable elimination"}
    rows = [{**base, "peer": "gpu_dpsyn", "batch": "gpu_dpsyn+mst", "seconds": 20.0},
            {**base, "peer": "mst", "batch": "gpu_dpsyn+mst", "seconds": 5.0},
            {**base, "peer": "aim", "batch": "aim-numpy-scorer", "seconds": 110.0, **sc},
            {**base, "peer": "gpu_dpsyn", "batch": "alone", "seconds": 18.0},
            {**base, "peer": "aim", "batch": "alone", "seconds": 64.0, **sc}]
    out = peers.summary(rows)
    assert "| 8 | 18.0 | 5.0 | 87.0 (paired, alone) |" not in out  # AIM: alone rows only
    assert "| 8 | 18.0 | 5.0 | 64.0 (paired, alone) |" in out
    assert "(c) gpu_dpsyn time (current code) <= AIM's / 5 (same machine): 0 of 1" in out
    out = peers.summary(rows[:3] + rows[4:])  # no gpu_dpsyn alone: not paired
    assert "| 8 | 20.0 | 5.0 | 87.0 |" in out
    assert "(c) gpu_dpsyn time (current code) <= AIM's / 5 (same machine): 0 of 1" in out


def test_peer_summary_weighs_each_seed_once(monkeypatch):
    """A seed run twice (beside another run and alone) is still one seed: the mean is
    over seeds of each seed's mean, and "(1 seed)" counts seeds, not rows."""
    peers = _bench_script(monkeypatch, "peers")
    base = {"dataset": "t", "epsilon": 1.0, "tvd_2way": 0.01}
    sc = {"aim_iters": 1000, "aim_scorer": "numpy variable elimination"}
    rows = [{**base, "peer": "gpu_dpsyn", "batch": "gpu_dpsyn+mst", "seconds": 20.0,
             "tvd_3way": 0.040, "seed": s} for s in (0, 1)]
    rows += [{**base, "peer": "mst", "batch": "gpu_dpsyn+mst", "seconds": 5.0,
              "tvd_3way": 0.09, "seed": s} for s in (0, 1)]
    rows += [{**base, "peer": "aim", "batch": "x", "seconds": 900.0, "tvd_3way": 0.030,
              "seed": 0, **sc},
             {**base, "peer": "aim", "batch": "alone", "seconds": 900.0, "tvd_3way": 0.050,
              "seed": 0, **sc},
             {**base, "peer": "aim", "batch": "x", "seconds": 900.0, "tvd_3way": 0.100,
              "seed": 1, **sc}]
    out = peers.summary(rows)
    assert "| 0.0400 | 0.0900 | 0.0700 (1,000 it.) |" in out  # (0.04 + 0.10) / 2, not 0.06
    out = peers.summary(rows[:4] + rows[4:6])
    assert "0.0400 (1 seed) (1,000 it.)" in out


def test_peer_summary_takes_mst_at_the_most_iterations(monkeypatch):
    """MST rerun at private-pgm's 5,000 iterations replaces the rows at bench/baselines/mst.py's
    former 2,500 (rows without mst_iters) in the means."""
    peers = _bench_script(monkeypatch, "peers")
    base = {"dataset": "t", "epsilon": 1.0, "seed": 0, "tvd_2way": 0.01}
    rows = [{**base, "peer": "gpu_dpsyn", "batch": "gpu_dpsyn+mst", "seconds": 20.0,
             "tvd_3way": 0.040},
            {**base, "peer": "mst", "batch": "gpu_dpsyn+mst", "seconds": 5.0, "tvd_3way": 0.09},
            {**base, "peer": "mst", "batch": "mst-5000", "seconds": 9.0, "tvd_3way": 0.03,
             "mst_iters": 5000}]
    out = peers.summary(rows)
    assert "| 1 | 20.0 | 9.0 |" in out
    assert "(a) gpu_dpsyn 3-way TVD <= MST's: 0 of 1" in out
    out = peers.summary(rows[:2])
    assert "| 1 | 20.0 | 5.0 |" in out
    assert "(a) gpu_dpsyn 3-way TVD <= MST's: 1 of 1" in out
    # a row without the field is one at 2,500: averaged with a row that says 2,500
    out = peers.summary(rows[:2] + [{**rows[2], "seed": 1, "mst_iters": 2500}])
    assert "| 1 | 20.0 | 7.0 |" in out


def test_heldout_summary_shows_each_variant_and_a_missing_run(monkeypatch):
    """bench/experiments/heldout/heldout.py's table: one line per (table, epsilon), a run that failed (an
    MST out of memory) shown as n/a rather than shifting the columns."""
    heldout = _bench_script(monkeypatch, "heldout")

    def row(table, eps, variant, tvd3):
        return {"table": table, "epsilon": eps, "variant": variant, "seconds": 12.4,
                "tvd_2way": 0.01, "tvd_3way": tvd3}
    rows = [row("a", 1.0, "default", 0.05), row("a", 1.0, "mst", 0.09),
            row("a", 8.0, "default", 0.03), row("b", 1.0, "mst", 0.2)]
    lines = heldout.summary(rows).splitlines()
    assert lines[0] == "| table | ε | default s, 2-way, 3-way | mst s, 2-way, 3-way |"
    assert lines[2:] == ["| a | 1 | 12, 0.0100, 0.0500 | 12, 0.0100, 0.0900 |",
                         "| a | 8 | 12, 0.0100, 0.0300 | n/a |",
                         "| b | 1 | n/a | 12, 0.0100, 0.2000 |"]


def test_triples_diagnostic_groups_the_scored_triples_by_what_was_measured(monkeypatch):
    """bench/experiments/triples/triples.py: a triple inside a measured 3- or 4-way marginal counts as
    measured (whatever order its columns are given in); the others by how many of their
    pairs a measured marginal holds, each group with its own mean."""
    triples = _bench_script(monkeypatch, "triples")
    sets = [(2, 1, 0), (0, 1, 3), (3, 4, 5), (1, 2, 4), (5, 6, 7), (0, 5, 9)]
    out = triples.by_coverage(sets, [0.1, 0.2, 0.3, 0.5, 0.7, 0.9],
                              [(0, 1, 2), (4, 3), (1, 4), (7, 6, 5, 8)])
    assert out == [("measured triples", 2, pytest.approx(0.4)),
                   ("unmeasured, 0 pairs measured", 1, 0.9),
                   ("unmeasured, 1 pairs measured", 2, pytest.approx(0.25)),
                   ("unmeasured, 2 pairs measured", 1, 0.5)]


def test_triples_diagnostic_takes_settings_after_the_seed(monkeypatch):
    """`triples.py TV16 64 --seed 1 adaptive_rounds=0` once failed: argparse took no
    positionals after an option."""
    triples = _bench_script(monkeypatch, "triples")
    a = triples.parse(["TV16", "64", "--seed", "1", "adaptive_rounds=0", "alpha=0.3"])
    assert (a.table, a.epsilon, a.seed) == ("TV16", 64.0, 1)
    assert triples.settings(a) == {"adaptive_rounds": 0, "alpha": 0.3}
