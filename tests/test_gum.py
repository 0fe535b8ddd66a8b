import numpy as np
import pytest

from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.evaluation.evaluate import tvd_codes
from gpu_dpsyn.generate.gum import GUMConfig, run_gum
from gpu_dpsyn.backends.arrays import apportion, plan_update  # noqa: F401
from gpu_dpsyn.selection.greedy import dpsyn_plan
from gpu_dpsyn.measure.marginals import exact_marginals
from gpu_dpsyn.data.schema import Schema

COLS = ["month", "dep_delay", "carrier", "origin", "air_time", "distance", "sched_dep_time",
        "arr_delay"]


def _setup(flights, flights_schema, be):
    s = Schema([flights_schema[c] for c in COLS])
    codes = encode(flights[COLS], s)
    dom = s.domain
    ms = exact_marginals(be, [be.asarray(c) for c in codes], dom, dpsyn_plan(len(dom)))
    targets = [(m.attrs, m.shape, m.values) for m in ms if len(m.attrs) == 2]
    init = [m.values.astype(np.int64) for m in ms if len(m.attrs) == 1]
    return codes, dom, targets, init


def test_apportion_sums_and_bounds():
    v = np.array([3.0, 0.0, 7.0, 1.0, 9.0])
    for total in (0, 1, 7, 20):
        out = apportion(np, v, float(total))
        assert out.sum() == total and np.all(out <= v) and np.all(out >= 0)
    assert np.array_equal(apportion(np, v, v.sum()), v)


def test_plan_update_rules():
    s = np.array([10, 0, 5, 40, 20], dtype=np.int64)
    t = np.array([30.0, 4.0, 5.0, 20.0, 16.0])
    add, rem = plan_update(np, s, t, 0.5)
    # under cells: min(t - s, alpha s) = 5; empty cell: alpha t = 2
    assert add.tolist() == [5, 2, 0, 0, 0]
    assert add.sum() == rem.sum() == 7
    assert rem[:3].tolist() == [0, 0, 0] and np.all(rem <= np.maximum(s - t, 0))
    # beta applied to both over cells alike: min(s - t, beta s) with beta ~ 7/60
    assert rem.tolist()[3:] == [5, 2]


def test_plan_update_caps_additions_at_available_removals():
    s = np.array([1, 100], dtype=np.int64)
    t = np.array([60.0, 41.0])
    add, rem = plan_update(np, s, t, 100.0)
    assert add.tolist() == [59, 0] and rem.tolist() == [0, 59]


@pytest.mark.parametrize("dup", [0.0, 0.5, 1.0])
def test_one_update_moves_counts_exactly(backend, flights, flights_schema, dup):
    codes, dom, targets, _ = _setup(flights, flights_schema, get_backend("cpu"))
    cols = [backend.asarray(c.copy()) for c in codes]
    attrs, shape = (2, 4), (dom[2], dom[4])
    cell, s = backend.cell_histogram(cols, attrs, shape)
    t = np.random.default_rng(0).permutation(backend.to_numpy(s)).astype(float)
    add, rem = backend.plan_update(s, backend.asarray(t), 1.0)
    before = [backend.to_numpy(c).copy() for c in cols]
    backend.gum_apply(cols, attrs, shape, cell, s, add, rem, dup, (1, 2), 0, 0)
    after = [backend.to_numpy(c) for c in cols]
    s2 = backend.to_numpy(backend.histogram(cols, attrs, shape))
    assert np.array_equal(s2, backend.to_numpy(s + add - rem))
    assert np.abs(s2 - t).sum() < 0.5 * np.abs(backend.to_numpy(s) - t).sum()
    changed = np.zeros(len(after[0]), bool)
    for b, a in zip(before, after):
        changed |= b != a
    assert changed.sum() <= int(add.sum())
    rows_before = {tuple(r) for r in np.stack(before, 1)}
    new_rows = [tuple(r) for r in np.stack(after, 1)[changed]]
    if dup == 1.0 and np.all(backend.to_numpy(s)[backend.to_numpy(add) > 0] > 0):
        # Duplicate copies whole existing records
        assert all(r in rows_before for r in new_rows)
    if dup == 0.0:
        # Replace rewrites only this marginal's columns
        others = [j for j in range(len(before)) if j not in attrs]
        for j in others:
            assert np.array_equal(before[j], after[j])


def test_gum_fits_exact_marginals_on_real_data(flights, flights_schema):
    """With noise-free 2-way marginals GUM must get close to them; the public reference
    code silently returns independent 1-way samples here instead."""
    be = get_backend("cpu")
    codes, dom, targets, init = _setup(flights, flights_schema, be)
    res = run_gum(be, targets, be.init_records(init, (7, 7), 0), (7, 7), 0,
                  GUMConfig(iterations=50))
    two = tvd_codes(codes, res.cols, dom, 2).mean()
    indep = be.init_records(init, (7, 7), 0)
    two_indep = tvd_codes(codes, indep, dom, 2).mean()
    assert two < 0.02, two
    assert two < 0.2 * two_indep
    assert tvd_codes(codes, res.cols, dom, 3).mean() < 0.5 * tvd_codes(codes, indep, dom, 3).mean()
    assert res.history[-1] < 0.2 * res.history[0]  # the convergence record is real
    # the 1-way marginals are kept while the 2-way ones are fitted
    assert tvd_codes(codes, res.cols, dom, 1).mean() < 0.01


def test_gum_is_deterministic_and_seeded(flights, flights_schema):
    be = get_backend("cpu")
    _, _, targets, init = _setup(flights.iloc[:3000], flights_schema, be)
    cfg = GUMConfig(iterations=3)
    a = run_gum(be, targets, be.init_records(init, (1, 2), 0), (1, 2), 0, cfg).cols
    b = run_gum(be, targets, be.init_records(init, (1, 2), 0), (1, 2), 0, cfg).cols
    c = run_gum(be, targets, be.init_records(init, (1, 3), 0), (1, 3), 0, cfg).cols
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_alpha_schedule_and_config_errors():
    cfg = GUMConfig()
    assert cfg.alpha_at(0) == 1.0 and cfg.alpha_at(9) == 1.0
    assert cfg.alpha_at(10) == pytest.approx(0.7) and cfg.alpha_at(25) == pytest.approx(0.7 ** 2)
    old = GUMConfig(50, alpha_decay=0.84, alpha_step=20)
    assert old.alpha_at(19) == 1.0 and old.alpha_at(45) == pytest.approx(0.84 ** 2)
    with pytest.raises(ValueError, match="mix"):
        GUMConfig(mix="S9")
    with pytest.raises(ValueError, match="iterations"):
        GUMConfig(iterations=-1)


def test_auto_iterations_stop_when_the_fit_stalls():
    cfg = GUMConfig(patience=3, min_gain=0.01, max_iterations=50)
    assert cfg.limit == 50 and GUMConfig(7).limit == 7
    assert not cfg.converged([0.5, 0.3, 0.2, 0.15, 0.1])
    assert not cfg.converged([0.5, 0.2, 0.2, 0.2, 0.197])  # 1.5% below the best before
    assert cfg.converged([0.5, 0.2, 0.2, 0.2, 0.199])  # 0.5%: stalled for 3 iterations
    assert not GUMConfig(20, patience=3).converged([0.5, 0.2, 0.2, 0.2, 0.2])  # fixed count
    with pytest.raises(ValueError, match="iterations"):
        GUMConfig(iterations="forever")


def test_auto_iterations_fit_exact_targets_and_record_the_curve(flights, flights_schema):
    from gpu_dpsyn.backends import get_backend
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.generate.gum import run_gum
    from gpu_dpsyn.measure.marginals import exact_marginals
    be = get_backend("cpu")
    codes = encode(flights.iloc[:5000], flights_schema)
    dom = flights_schema.domain
    plan = [(0, 8), (8, 10), (1, 2), (2, 3)]
    targets = [(m.attrs, m.shape, m.values) for m in exact_marginals(be, codes, dom, plan)]
    init = be.init_records([np.bincount(c, minlength=d) for c, d in zip(codes, dom)], (1, 2), 0)
    res = run_gum(be, targets, init, (1, 2), 0, GUMConfig(patience=5, max_iterations=300))
    h = res.history
    assert 5 < len(h) - 1 < 300  # stopped by itself, before the cap
    assert h[-1] < 0.2 * h[0] and min(h[-6:]) > min(h[:-5]) * (1 - 0.005)  # the stall


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_replace_keeps_the_leading_column_when_its_counts_agree(backend, seed):
    """A Replace moves a removed record to the under slot at the same place in cell order
    (row-major), so where the first column's counts already match the target, only the
    second column changes: fewer values rewritten, less damage to the other marginals.
    A random pairing rewrites both columns of most moved records."""
    r = np.random.default_rng(seed)
    a = r.integers(0, 4, 3000)
    b = (a + r.integers(0, 2, 3000)) % 5
    # code columns as the pipeline holds them (the GPU kernels refuse int64)
    cols = [backend.asarray(x.astype(np.uint8)) for x in (a, b, b)]
    attrs, shape = (0, 1), (4, 5)
    cell, s = backend.cell_histogram(cols, attrs, shape)
    s_np = backend.to_numpy(s).reshape(4, 5).astype(float)
    t = np.stack([rw.sum() * r.dirichlet(np.ones(5)) for rw in s_np])  # same row sums
    add, rem = backend.plan_update(s, backend.asarray(t.reshape(-1)), 1.0)
    assert int(backend.to_numpy(add).sum()) > 300  # a real update
    backend.gum_apply(cols, attrs, shape, cell, s, add, rem, 0.0, (1, 2), 0, 0)
    assert np.array_equal(backend.to_numpy(backend.histogram(cols, attrs, shape)),
                          backend.to_numpy(s + add - rem))
    moved = backend.to_numpy(cols[1]) != b
    assert moved.sum() > 0
    # the plan rounds each row separately: a row may differ by a few records
    assert (backend.to_numpy(cols[0]) != a).sum() <= 8, (backend.to_numpy(cols[0]) != a).sum()
    assert np.array_equal(backend.to_numpy(cols[2]), b)  # not in the marginal: untouched


def test_rotate_target_matches_the_histogram_of_the_rotated_columns():
    from gpu_dpsyn.generate.gum import rotate_target
    be = get_backend("cpu")
    r = np.random.default_rng(3)
    cols = [r.integers(0, d, 500) for d in (3, 4, 5)]
    attrs, shape = (0, 1, 2), (3, 4, 5)
    t = be.histogram(cols, attrs, shape).astype(float)
    for k in (0, 1, 2):
        a2, s2, t2 = rotate_target(attrs, shape, t, k)
        assert a2 == attrs[k:] + attrs[:k] and s2 == shape[k:] + shape[:k]
        assert np.array_equal(t2, be.histogram(cols, a2, s2))


class _Spy:
    """A CPU backend that records the column order of every update's cell histogram."""
    def __init__(self):
        self.be, self.leads = get_backend("cpu"), []

    def __getattr__(self, name):
        return getattr(self.be, name)

    def cell_histogram(self, cols, attrs, shape):
        self.leads.append(tuple(attrs))
        return self.be.cell_histogram(cols, attrs, shape)


@pytest.mark.parametrize("mix,rotate,expected", [
    ("half", True, [(0, 1), (1, 0), (0, 1), (1, 0)]),  # Replaces every iteration
    ("S5", True, [(0, 1), (1, 0), (1, 0), (0, 1)]),  # Replaces on even iterations only
    ("half", False, [(0, 1)] * 4),
])
def test_gum_leads_each_replace_iteration_with_the_next_column(mix, rotate, expected):
    """Each column of a marginal leads (keeps its value in a Replace) in turn."""
    r = np.random.default_rng(0)
    a = r.integers(0, 3, 400)
    cols = [a, (a + r.integers(0, 2, 400)) % 4]
    t = np.random.default_rng(1).dirichlet(np.ones(12)) * 400
    spy = _Spy()
    run_gum(spy, [((0, 1), (3, 4), t)], cols, (7, 7), 0,
            GUMConfig(iterations=4, mix=mix, rotate=rotate))
    assert spy.leads == expected


def test_rotate_must_be_a_flag():
    from gpu_dpsyn.errors import ParameterError
    with pytest.raises(ParameterError, match="rotate must be True or False"):
        GUMConfig(rotate="yes")


def test_row_search_counts_as_searchsorted_over_every_row():
    """draw_rows' NumPy search within each record's row gives searchsorted's position over
    the rows' CDFs laid end to end, clipped as draw_rows clips it: rows with zeros, draws
    at the ends of (0, 1), and row ids past 2^22 where r + u rounds onto r + 1."""
    from gpu_dpsyn.generate.gum import row_search
    r = np.random.default_rng(1)
    for t in range(200):
        rows, size = int(r.integers(1, 50)), int(r.integers(1, 40))
        cond = r.random((rows, size)) * (r.random((rows, size)) < 0.6)
        cond[cond.sum(axis=1) == 0, 0] = 1.0
        cdf = np.minimum(np.cumsum(cond / cond.sum(axis=1, keepdims=True), axis=1), 1.0)
        cdf[:, -1] = 1.0
        base = (1 << 22) if t % 2 else 0
        flat = (cdf + (np.arange(rows) + base)[:, None]).reshape(-1)
        idx = r.integers(0, rows, 3000)
        u = r.random(3000)
        u[:10], u[10:20] = np.nextafter(1.0, 0.0), 1e-300
        q = (idx + base).astype(np.float64) + u
        want = np.searchsorted(flat, q, side="right") - idx * size
        got = row_search(flat, idx, q, size)
        np.testing.assert_array_equal(np.clip(got, 0, size - 1), np.clip(want, 0, size - 1))
        np.testing.assert_array_equal(got[want < size], want[want < size])


@pytest.mark.parametrize("iterations", [50, "auto"])
def test_gum_stops_when_every_target_is_met_exactly(flights, flights_schema, iterations):
    # records that already match their targets ran every iteration (a flat curve of 0s),
    # each an update that moves nothing
    be = get_backend("cpu")
    codes = encode(flights.iloc[:3000], flights_schema)
    dom = flights_schema.domain
    targets = [(m.attrs, m.shape, m.values)
               for m in exact_marginals(be, codes, dom, [(0, 8), (1, 2)])]
    cols = [be.asarray(c.copy()) for c in codes]
    res = run_gum(be, targets, cols, (1, 2), 0, GUMConfig(iterations=iterations))
    assert res.history == [0.0]
    assert all(np.array_equal(a, b) for a, b in zip(res.cols, codes))
