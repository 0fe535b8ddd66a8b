"""The Gibbs sweep after GUM (gpu_dpsyn/gibbs.py): the conditional fit against a closed
form and an independent full-table IPF, zero cells never drawn, a 3-way interaction no
target holds removed while the targets stay within sampling noise, the size bound, and
its place in the pipeline (the sample and the adaptive rounds' records; the ledger
unchanged)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import fit_spied, small_table, xor_table

from stats_util import CHI2_1E6

from gpu_dpsyn.generate import records
import gpu_dpsyn.generate.gibbs as gibbs
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.privacy.keys import SeededNoiseWarning

BE = get_backend("cpu")
KEY = (2024, 11)


def hist(cols, attrs, sizes):
    idx = np.ravel_multi_index([cols[a] for a in attrs], [sizes[a] for a in attrs])
    return np.bincount(idx, minlength=math.prod(sizes[a] for a in attrs))


def test_one_target_gives_the_targets_own_conditional():
    # a single target (a, b): p(a | b) = t(a, b) / t(., b), whatever the contexts' counts
    r = np.random.default_rng(0)
    t = r.random((4, 5)) * 100
    ctx = np.arange(5)[:, None]
    p = gibbs.fit_conditional(ctx, r.random(5) * 50 + 1, [t], 4)
    assert np.allclose(p, (t / t.sum(axis=0)).T, atol=1e-12)


def full_ipf(margins, shape, iterations=3000):
    """The maximum-entropy table with the given 2-way margins (axes pairs), by plain IPF
    on the whole table from uniform: an independent computation."""
    q = np.full(shape, 1.0)
    for _ in range(iterations):
        for axes, m in margins.items():
            drop = tuple(k for k in range(len(shape)) if k not in axes)
            cur = q.sum(axis=drop, keepdims=True)
            q = q * np.where(cur > 0, m.reshape(cur.shape) / np.where(cur > 0, cur, 1), 0)
    return q


def test_two_targets_give_the_maximum_entropy_tables_conditional():
    # targets (a, b) and (a, c) with the contexts (b, c) at counts w: the fit is the
    # conditional a | (b, c) of the maximum-entropy table with margins (a, b), (a, c)
    # and (b, c) = w (the same log-linear model), computed here by IPF on the table
    r = np.random.default_rng(1)
    joint = r.random((3, 4, 2)) ** 3 * 100  # a 3-way interaction the margins lose
    ab, ac, bc = joint.sum(axis=2), joint.sum(axis=1), joint.sum(axis=0)
    ctx = np.array([(b, c) for b in range(4) for c in range(2)])
    w = np.array([bc[b, c] for b, c in ctx])
    p = gibbs.fit_conditional(ctx, w, [ab, ac], 3, iterations=500, tolerance=1e-13)
    q = full_ipf({(0, 1): ab, (0, 2): ac, (1, 2): bc}, (3, 4, 2))
    want = np.array([q[:, b, c] / q[:, b, c].sum() for b, c in ctx])
    assert np.allclose(p, want, atol=1e-8)
    # and not the true table's conditional: the interaction is not kept
    truth = np.array([joint[:, b, c] / joint[:, b, c].sum() for b, c in ctx])
    assert np.abs(p - truth).max() > 0.01


def test_a_value_with_target_zero_is_never_drawn():
    sizes = [3, 2]
    r = np.random.default_rng(2)
    cols = [r.integers(0, 3, 4000).astype(np.int32), r.integers(0, 2, 4000).astype(np.int32)]
    t = np.array([[500.0, 900.0], [0.0, 1100.0], [1500.0, 0.0]])  # (a, b)
    for call in range(3):
        c = [x.copy() for x in cols]
        assert gibbs.resample_column(BE, c, 0, [1], [((0, 1), (3, 2), t.ravel())], sizes,
                                     KEY, call)
        h = hist(c, (0, 1), sizes).reshape(3, 2)
        assert h[1, 0] == 0 and h[2, 1] == 0
        assert h[1, 1] > 0 and h[2, 0] > 0


def test_systematic_draws_hit_every_contexts_expected_counts_within_one():
    # 3 contexts of 1000, 7 and 1 records: each value's count in a context is within one
    # of w p(a | u), and each record alone draws from p(a | u) (positions uniform)
    p = np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8], [0.6, 0.0, 0.4]])
    inv = np.repeat(np.arange(3), [1000, 7, 1])
    w = np.array([1000, 7, 1])
    first = np.zeros(3)
    for call in range(4000):
        x = gibbs.systematic_positions(BE, inv, w, 0, KEY, call)
        assert ((x > 0) & (x < 1)).all()
        drawn = gibbs.draw_rows(BE, p, inv, x)
        for u in range(3):
            got = np.bincount(drawn[inv == u], minlength=3)
            assert (np.abs(got - w[u] * p[u]) < 1 + 1e-9).all(), (call, u, got)
        first[drawn[1000]] += 1  # the first record of context 1, alone
    e = 4000 * p[1]
    assert ((first - e) ** 2 / e).sum() < CHI2_1E6[2]


def test_a_draw_rounding_onto_the_next_row_keeps_to_positive_values():
    # row 2^22 - 2 with u just below 1: row + u rounds to the next row's start, and
    # (w - 1 + v) / w rounds to 1 for a large context; value 2 has probability 0
    cond = np.tile([0.5, 0.5, 0.0], (1 << 22, 1))
    row = np.array([(1 << 22) - 2, 5], dtype=np.int64)
    u = np.array([1.0 - 2.0 ** -33, gibbs.BELOW_ONE])
    assert (gibbs.draw_rows(BE, cond, row, u) == 1).all()
    inv = np.zeros(1 << 22, dtype=np.int64)
    x = gibbs.systematic_positions(BE, inv, np.array([1 << 22]), 0, KEY, 0)
    assert x.max() < 1.0


def test_targets_that_allow_no_common_value_do_not_unlock_forbidden_ones():
    # context 0: target 1 allows values {0, 1}, target 2 allows none (its context cell is
    # empty): value 2 stays forbidden; context 1: the targets allow {0} and {1}, no common
    # value: uniform over the two
    t1 = np.array([[5.0, 1.0], [5.0, 0.0], [0.0, 0.0]])  # (value, context cell)
    t2 = np.array([[0.0, 0.0], [0.0, 3.0], [0.0, 0.0]])
    ctx = np.array([[0, 0], [1, 1]])
    p = gibbs.fit_conditional(ctx, np.array([10.0, 2.0]), [t1, t2], 3)
    assert p[0, 2] == 0 and p[0, :2].sum() == pytest.approx(1)
    assert p[1, 2] == 0 and p[1, 0] > 0 and p[1, 1] > 0


def test_the_starting_conditional_follows_its_rule_context_by_context():
    """allowed, against the rule read off one context at a time (a target whose cell
    allows no value is left out; no common value: uniform over those any allows; none
    at all: uniform), on random tables with empty cells and conflicts."""
    r = np.random.default_rng(8)
    size, cells = 5, (4, 3, 6)
    tables = [r.integers(0, 3, (size, c)) * (r.random((size, c)) < 0.4) for c in cells]
    tables[1][:, 2] = 0  # a cell allowing nothing
    ctx = np.stack([r.integers(0, c, 400) for c in cells], axis=1)
    p = gibbs.allowed(ctx, [t.astype(float) for t in tables], size)
    for u in range(len(ctx)):
        masks = [t[:, k] > 0 for t, k in zip(tables, ctx[u])]
        every = np.logical_and.reduce([m for m in masks if m.any()] or [np.ones(size, bool)])
        some = np.logical_or.reduce(masks)
        pick = every if every.any() else some
        want = pick / pick.sum() if pick.any() else np.full(size, 1 / size)
        assert np.array_equal(p[u], want), u
    from gpu_dpsyn.backends.numpy import host_kernels
    lib = host_kernels.library()
    if lib is not None:  # the host build's start, written transposed: the same bits
        for U in (0, 1, 257, 400):
            got = host_kernels.allowed_transposed(lib, ctx[:U], [t.astype(float) for t in
                                                                 tables], size)
            assert got.flags.c_contiguous and got.tobytes() == np.ascontiguousarray(
                gibbs.allowed(ctx[:U], [t.astype(float) for t in tables], size).T).tobytes()


def xor_records(n, seed=0):
    r = np.random.default_rng(seed)
    a, b = (r.random(n) < 0.3).astype(int), (r.random(n) < 0.6).astype(int)
    return [x.astype(np.int32) for x in (a, b, a ^ b)]


def tvd(h, q):
    return 0.5 * np.abs(h / h.sum() - q / q.sum()).sum()


def test_a_sweep_removes_a_3way_interaction_no_target_holds():
    # c = a xor b: the records hold 4 of the 8 cells, a 3-way interaction that the three
    # pair targets do not ask for; the sweep leaves the maximum-entropy table with those
    # pairs (an independent IPF on the whole table), up to sampling noise
    n, sizes = 40000, [2, 2, 2]
    cols = xor_records(n)
    pairs = [((0, 1), (2, 2), hist(cols, (0, 1), sizes).astype(float)),
             ((1, 2), (2, 2), hist(cols, (1, 2), sizes).astype(float)),
             ((0, 2), (2, 2), hist(cols, (0, 2), sizes).astype(float))]
    q = full_ipf({(0, 1): pairs[0][2], (1, 2): pairs[1][2], (0, 2): pairs[2][2]},
                 (2, 2, 2)).ravel()
    assert tvd(hist(cols, (0, 1, 2), sizes), q) > 0.2
    assert gibbs.gibbs_sweep(BE, cols, pairs, sizes, KEY, 0) == []
    assert tvd(hist(cols, (0, 1, 2), sizes), q) < 0.02  # noise: about 0.005
    for attrs, shape, t in pairs:  # systematic draws: the pairs barely move
        assert tvd(hist(cols, attrs, sizes), t) < 0.005


def test_the_sweep_is_a_function_of_key_and_call():
    sizes = [2, 2, 2]
    base = xor_records(3000, seed=5)
    pairs = [((0, 1), (2, 2), hist(base, (0, 1), sizes).astype(float)),
             ((1, 2), (2, 2), hist(base, (1, 2), sizes).astype(float))]
    runs = []
    for call in (0, 0, 1):
        cols = [c.copy() for c in base]
        gibbs.gibbs_sweep(BE, cols, pairs, sizes, KEY, call)
        runs.append(cols)
    assert all(np.array_equal(x, y) for x, y in zip(runs[0], runs[1]))
    assert any(not np.array_equal(x, y) for x, y in zip(runs[0], runs[2]))


def test_a_column_past_the_size_bound_keeps_its_values(monkeypatch):
    sizes = [2, 2, 2]
    cols = xor_records(2000)
    before = [c.copy() for c in cols]
    pairs = [((0, 1), (2, 2), hist(cols, (0, 1), sizes).astype(float))]
    monkeypatch.setattr(gibbs, "MAX_CONTEXT_CELLS", 3)  # 2 contexts x 2 values > 3
    assert gibbs.gibbs_sweep(BE, cols, pairs, sizes, KEY, 0) == [0, 1]
    assert all(np.array_equal(x, y) for x, y in zip(cols, before))


def fit_sample(monkeypatch, **kw):
    """Fit and sample (small_table by default) with the sweep wrapped; (its calls' record
    counts, the synthesizer, the sample)."""
    seen = []

    def record(done, backend, cols, *rest):
        if done is None:
            seen.append(len(cols[0]))
    syn, out = fit_spied(monkeypatch, "gibbs_sweep", record, small_table(800), 700, **kw)
    return seen, syn, out


def test_the_rounds_records_are_swept_like_the_sample_and_the_ledger_does_not_change(
        monkeypatch):
    """The rounds rank triples by their error in S: S is swept like the release, so a
    triple the sweep already fits is not bought again (held-out tables, README)."""
    seen, syn, out = fit_sample(monkeypatch, table=xor_table(6000))
    assert "3-way errors" in [e.label for e in syn.accountant.ledger]  # rounds ran
    assert len(seen) >= 2 and seen[-1] == 700  # each round's S, then the sample
    assert all(s == seen[0] for s in seen[:-1]) and seen[0] != 700
    off, syn_off, out_off = fit_sample(monkeypatch, table=xor_table(6000), gibbs_sweep=False)
    assert off == []
    # the sweep changes which triples are bought (and, through the noise key, which
    # pairs), never what selection and a round's errors cost, nor the whole budget
    led = [(e.label, e.fraction) for e in syn.accountant.ledger]
    led_off = [(e.label, e.fraction) for e in syn_off.accountant.ledger]
    # (sets: without the sweep the rounds may run a round more, at the same share)
    for lab in ("indif", "3-way errors"):
        assert {f for x, f in led if x == lab} == {f for x, f in led_off if x == lab} != set()
    assert sum(f for _, f in led) == pytest.approx(1.0) == sum(f for _, f in led_off)
    assert not out.equals(out_off)


def test_the_repair_carries_an_appended_column_with_its_anchors(monkeypatch):
    # (without the polish, which repairs the sweep in its stead: test_polish.py)
    # small_table's selection is one 3-way marginal (0, 1, 2) with column 0 appended from
    # it: the repair's Duplicates copy 0 along with its anchors 1 and 2, and the sample
    # keeps that target (independent re-appending measured 0.0022-0.0030 here)
    calls = []
    real = records.run_gum

    def spy(backend, targets, cols, key, call, cfg, progress=None, groups=None, *a, **k):
        calls.append((cfg, groups))
        return real(backend, targets, cols, key, call, cfg, progress, groups, *a, **k)
    monkeypatch.setattr(records, "run_gum", spy)
    df, schema = small_table(3000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        syn = Synthesizer(8.0, 1e-6, seed=0, backend="cpu", progress=False,
                          adaptive_rounds=0, polish=False).fit(df, schema)
        out = syn.sample(20000)
    assert syn.last_run.structure.appended == [(0, 0)]
    (cfg, groups), = [c for c in calls if c[0] is gibbs.REPAIR]
    assert all(0 in g for g in groups if {1, 2} <= set(g))
    from gpu_dpsyn.data.encoding import encode
    codes = encode(out, syn.model.schema)
    (attrs, shape, t), = [x for x in syn.model.targets(20000) if len(x[0]) > 1]
    h = np.bincount(np.ravel_multi_index([codes[a] for a in attrs], shape),
                    minlength=int(np.prod(shape)))
    assert 0.5 * np.abs(h - t).sum() / 20000 < 0.0015  # measured 0.0008


def test_no_sweep_without_gum_iterations(monkeypatch):
    assert fit_sample(monkeypatch, iterations=0)[0] == []


def test_a_skipped_column_is_named_in_a_warning(monkeypatch):
    monkeypatch.setattr(gibbs, "MAX_CONTEXT_CELLS", 1)
    # in the user's terms: which column, how many values, why, and what to do
    with pytest.warns(UserWarning, match=r"^the Gibbs sweep left columns 'a' \(2 values\), "
                      r"'b' \(2 values\), 'c' \(2 values\).* as GUM made them: with .* "
                      r"would pass 1 cells .*fewer values in the schema"):
        fit_sample(monkeypatch, table=xor_table(6000), adaptive_rounds=0)


@pytest.mark.parametrize("kw", [dict(public=300), dict(group_by=["color"])])
def test_no_sweep_from_a_public_prior_or_grouped(monkeypatch, kw):
    assert fit_sample(monkeypatch, adaptive_rounds=0, **kw)[0] == []


def test_the_sweep_improves_an_unmeasured_triangle_on_a_table_with_none():
    # a table whose columns are pairwise dependent with no 3-way interaction beyond
    # that (a Gaussian copula): every triple's TVD with the sweep is no worse on average
    r = np.random.default_rng(3)
    z = r.multivariate_normal(np.zeros(5), 0.6 * np.ones((5, 5)) + 0.4 * np.eye(5), 20000)
    df = pd.DataFrame({f"x{j}": np.digitize(z[:, j], [-1, 0, 1]) for j in range(5)})
    schema = {"columns": [{"name": f"x{j}", "type": "categorical", "values": [0, 1, 2, 3]}
                          for j in range(5)]}
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.evaluation.evaluate import tvd_codes
    from gpu_dpsyn.data.schema import load_schema
    sc = load_schema(schema)
    real = encode(df, sc)
    tv = {}
    for on in (True, False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SeededNoiseWarning)
            syn = Synthesizer(1.0, 1e-6, seed=1, backend="cpu", progress=False,
                              adaptive_rounds=0, gibbs_sweep=on).fit(df, schema)
            tv[on] = float(tvd_codes(real, encode(syn.sample(), sc), sc.domain, 3).mean())
    assert tv[True] < tv[False]


def _worst_tvd(p, ctx, w, tables):
    """The largest TVD of a fitted margin (records w[u] spread by p(. | u)) to its target,
    summed context by context: an independent computation of the fit's own check."""
    worst = 0.0
    for i, t in enumerate(tables):
        E = np.zeros_like(t)
        for u in range(len(ctx)):
            E[:, ctx[u, i]] += p[u] * w[u]
        worst = max(worst, 0.5 * np.abs(E - t).sum() / t.sum())
    return worst


def _plateau_fit(stall, monkeypatch):
    """A fit whose contexts are counted unlike its targets (their (b, c) counts are not
    the joint's), so no pass reaches the tolerance: (p, passes run, worst TVD)."""
    r = np.random.default_rng(5)
    joint = r.random((3, 4, 2)) ** 3 * 100
    ab, ac = joint.sum(axis=2), joint.sum(axis=1)
    ctx = np.array([(b, c) for b in range(4) for c in range(2)])
    w = r.random(len(ctx)) * 50 + 1
    w *= joint.sum() / w.sum()
    calls = []
    real = gibbs.HostIPF.scale
    monkeypatch.setattr(gibbs.HostIPF, "scale",
                        lambda self, *a, **k: calls.append(1) or real(self, *a, **k))
    p = gibbs.fit_conditional(ctx, w, [ab, ac], 3, stall=stall)
    return p, len(calls) // 2, _worst_tvd(p, ctx, w, [ab, ac])


def test_the_fit_stops_once_a_pass_no_longer_improves_it(monkeypatch):
    """On a fit that cannot reach the tolerance, the stall rule ends it in a few passes
    where the bound ran all 20, and the fitted margins are as close to their targets."""
    p_all, passes_all, worst_all = _plateau_fit(float("-inf"), monkeypatch)
    p, passes, worst = _plateau_fit(gibbs.IPF_STALL, monkeypatch)
    assert passes_all == gibbs.IPF_ITERATIONS and passes < passes_all
    assert worst > gibbs.IPF_TOLERANCE  # a plateau: the tolerance is out of reach
    assert abs(worst - worst_all) < 0.02 * worst_all
    assert np.abs(p - p_all).max() < 0.05
