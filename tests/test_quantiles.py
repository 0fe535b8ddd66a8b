"""Private quantile bins: schema, the mechanism against an independent computation, the
ledger, and what they do to a skewed column."""
import copy
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer, load_schema
from gpu_dpsyn.core import rng
from gpu_dpsyn.data.encoding import encode
from gpu_dpsyn.errors import DataError, ParameterError, SchemaError
from gpu_dpsyn.privacy.samplers import sample_ref
from gpu_dpsyn.measure.quantiles import isotonic, quantile_cuts

K = 32


def wages(n=20000, seed=0):
    """A log-normal wage (CPS-like: 61% of it in the first of 32 equal-width bins), an
    education that rises with it, and a nullable categorical."""
    r = np.random.default_rng(seed)
    wage = np.clip(np.round(np.exp(r.normal(6.3, 0.7, n))), 50, 19000).astype(np.int64)
    edu = np.clip(np.round((np.log(wage) - 6.3) * 3 + r.normal(12, 2, n)), 0, 20)
    df = pd.DataFrame({"wage": wage, "edu": edu.astype(np.int64),
                       "region": r.choice(["north", "south"], n)})
    schema = {"columns": {
        "wage": {"type": "numeric", "integer": True, "min": 50, "max": 19000,
                 "bins": {"private_quantiles": K}},
        "edu": {"type": "numeric", "integer": True, "min": 0, "max": 20},
        "region": {"type": "categorical", "values": ["north", "south"]}}}
    return df, schema


def fit(df, schema, public=None, **kw):
    kw = {"seed": 0, "progress": False, "backend": "cpu", **kw}
    return Synthesizer(1.0, 1e-9, **kw).fit(df, schema, public=public)


def fattest_bin(df, schema, col="wage") -> float:
    codes = encode(df, load_schema(schema))[load_schema(schema).names.index(col)]
    return np.bincount(codes).max() / len(df)


# -- schema ------------------------------------------------------------------------

def test_schema_holds_the_grid_and_a_k_bin_placeholder():
    col = load_schema(wages(10)[1])["wage"]
    pq = col.private
    assert pq.k == K and col.bins == K  # the domain bound used before the fit
    g = np.array(pq.grid)
    # min > 0: log-spaced, integer cells: strictly increasing integers from min to max + 1
    assert g[0] == 50 and g[-1] == 19001 and (np.diff(g) >= 1).all()
    assert g.dtype.kind == "i" and 900 < pq.cells <= 1024
    assert np.diff(g)[-2] > 50 * np.diff(g)[1]  # wider cells where values are larger
    assert (g[1], g[-2]) == (51, 19000)  # the ends' own cells (top codes: test_top_codes)
    assert set(col.edges) <= set(pq.grid)  # the placeholder's bins are unions of cells


def test_float_grids_linear_from_zero_log_above():
    # 10 cells: the min's and the max's own ([0, 0], [10, 10]) and 8 between
    lin = load_schema({"columns": {"x": {"type": "numeric", "min": 0, "max": 10,
                                         "bins": {"private_quantiles": 4, "grid": 10}}}})["x"]
    assert lin.private.grid == pytest.approx([0, *np.linspace(0, 10, 9), 10])
    log = load_schema({"columns": {"x": {"type": "numeric", "min": 1, "max": 256,
                                         "bins": {"private_quantiles": 4, "grid": 10}}}})["x"]
    assert log.private.grid == pytest.approx([1, 1, 2, 4, 8, 16, 32, 64, 128, 256, 256])
    forced = load_schema({"columns": {"x": {"type": "numeric", "min": 1, "max": 256, "bins": {
        "private_quantiles": 4, "grid": 10, "spacing": "linear"}}}})["x"]
    assert forced.private.grid == pytest.approx([1, *np.linspace(1, 256, 9), 256])


def test_support_grid_groups_support_values():
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 2359, "support": "hhmm",
            "bins": {"private_quantiles": 6, "grid": 24}}
    col = load_schema({"columns": {"t": spec}})["t"]
    assert list(col.private.grid) == [h * 100 for h in range(24)] + [2360]  # one hour per cell


def test_pending_schema_round_trips_and_chosen_one_writes_edges():
    df, schema = wages(3000)
    s = load_schema(schema)
    again = load_schema(s.to_dict())
    assert again["wage"].private == s["wage"].private
    syn = fit(df, schema)
    d = syn.model.schema.to_dict()["columns"]["wage"]
    assert "bins" not in d and d["edges"] == syn.privacy_report()["private_bins"]["wage"]


@pytest.mark.parametrize("bins,extra,match", [
    ({"private_quantiles": 1}, {}, "integer >= 2"),
    ({"private_quantiles": 2.5}, {}, "integer >= 2"),
    ({"private_quantiles": True}, {}, "integer >= 2"),
    ({"private_quantiles": 16}, {"max": 9}, "need at least 16 grid cells"),
    ({"private_quantiles": 16, "grid": 8}, {}, "need at least 16 grid cells"),
    # a log grid of integers past int64 failed in NumPy before the range's own check
    ({"private_quantiles": 4}, {"min": 1, "max": 1e20}, r"beyond \+-2\*\*53"),
    ({"private_quantiles": 4, "grid": 1}, {}, "'grid'"),
    ({"private_quantiles": 4, "grid": 1 << 17}, {}, "'grid'"),
    ({"private_quantiles": 4, "spacing": "sqrt"}, {}, "spacing"),
    ({"private_quantiles": 4, "spacing": "log"}, {"min": 0}, "min' > 0"),
    ({"quantiles": 4}, {}, "private_quantiles"),
    ({"private_quantiles": 4, "bits": 3}, {}, "private_quantiles"),
    ({"private_quantiles": 4}, {"min": None}, "'min' and 'max' for private_quantiles"),
    ({"private_quantiles": 4}, {"edges": [0, 5, 10]}, "not both"),
])
def test_bad_private_bins_are_schema_errors_before_any_charge(bins, extra, match):
    df = pd.DataFrame({"x": np.arange(10), "y": ["a", "b"] * 5})
    spec = {"type": "numeric", "integer": True, "min": 0, "max": 1000, "bins": bins, **extra}
    spec = {k: v for k, v in spec.items() if v is not None}
    schema = {"columns": {"x": spec, "y": {"type": "categorical", "values": ["a", "b"]}}}
    with pytest.raises(SchemaError, match=match):
        load_schema(schema)
    syn = Synthesizer(1.0, 1e-9, seed=0, progress=False)
    with pytest.raises(SchemaError, match=match):
        syn.fit(df, schema)
    assert syn.ledger == []


def test_data_outside_the_range_fails_before_any_charge_when_strict():
    df, schema = wages(500)
    df.loc[3, "wage"] = 19500
    syn = Synthesizer(1.0, 1e-9, seed=0, progress=False, on_invalid="error")
    with pytest.raises(DataError, match="outside the schema range"):
        syn.fit(df, schema)
    assert syn.ledger == []


@pytest.mark.parametrize("share", [0, 1, -0.1, 1.5, True, "0.05", float("nan")])
def test_bad_quantile_share_is_refused_at_construction(share):
    with pytest.raises(ParameterError, match="quantile_share"):
        Synthesizer(1.0, 1e-9, quantile_share=share)


# -- post-processing, closed forms -----------------------------------------------------

def test_isotonic_closed_forms_and_against_scikit_learn():
    assert isotonic([1, 3, 2, 4]).tolist() == [1, 2.5, 2.5, 4]
    assert isotonic([5, 4, 3]).tolist() == [4, 4, 4]
    up = np.array([0.0, 1, 1, 7])
    assert isotonic(up).tolist() == up.tolist()
    from sklearn.isotonic import IsotonicRegression
    y = np.cumsum(np.random.default_rng(1).normal(0.3, 3, 500))
    ref = IsotonicRegression().fit_transform(np.arange(500), y)
    assert isotonic(y) == pytest.approx(ref, abs=1e-9)


def test_cuts_of_a_uniform_histogram_are_equal_splits():
    assert quantile_cuts(np.full(64, 10.0), 8) == list(range(0, 65, 8))
    # targets at 2.5, 5 and 7.5 cells: halfway between two boundaries goes to the lower
    assert quantile_cuts(np.full(10, 7.0), 4) == [0, 2, 5, 7, 10]


def test_a_point_mass_gets_a_bin_of_its_own_and_repeats_merge():
    h = np.zeros(100)
    h[40] = 1000.0
    assert quantile_cuts(h, 10) == [0, 40, 41, 100]
    h[90] = 1000.0  # half the mass each: the middle edge between them
    assert quantile_cuts(h, 2) in ([0, 41, 100], [0, 90, 100])


def test_all_noise_falls_back_to_equal_grid_counts():
    assert quantile_cuts(-np.ones(12), 4) == [0, 3, 6, 9, 12]
    assert quantile_cuts(np.zeros(7), 3) == [0, 3, 5, 7]


# -- decoding inside the chosen bins --------------------------------------------------

def test_within_draws_invert_the_piecewise_linear_cdf():
    from gpu_dpsyn.data.types.quantile_bins import Within
    w = Within(np.array([0.0, 10, 20, 30, 40]), np.array([0.0, 100, 100, 100, 200]),
               np.array([0, 2, 4]))  # bins [0, 20) and [20, 40), mass in cells 0 and 3
    codes, u = np.array([0, 0, 1, 1, 1, 2]), np.array([0.5, 0.99, 0.0, 0.5, 0.25, 0.5])
    assert w.draw(codes, u, False)[:5] == pytest.approx([5, 9.9, 30, 35, 32.5])
    empty = Within(np.array([0.0, 10, 20, 30, 40]), np.array([0.0, 0, 0, 50, 50]),
                   np.array([0, 2, 4]))  # a bin the fit left empty decodes uniformly
    # bin 1: all its mass in cell [20, 30)
    assert empty.draw(np.array([0, 1]), np.array([0.25, 0.5]), False) == pytest.approx([5, 25])
    ints = Within(np.array([0.0, 5, 10]), np.array([0.0, 0, 10]), np.array([0, 1, 2]))
    assert ints.draw(np.array([0, 1, 1]), np.array([0.5, 0.5, 1.0]), True).tolist() == \
        [2, 7, 9]  # u = 1 (rounding) stays inside the bin


def test_synthetic_wages_follow_the_noisy_shape_not_the_far_max():
    """Over 8 noise draws (not one): decoding inside the bins from the noisy shape beats
    uniform decoding in the mean on 7 draws of 8 at least (or both are within 5%), in the
    99th percentile over the draws (median error), and has less than half its bias on
    average; and every draw's mean is within 10%.  Before the top bin's inside was fitted
    as a thinning tail (quantiles.shaped_tails), its cumulative fit followed the random
    walk of the noise over the empty cells up to the far max: one draw in eight put the
    mean 19% high and the 99th percentile 6,600 out."""
    df, schema = wages(20000)
    real = df["wage"]
    means, flat_means, q99, q99_flat, worse = [], [], [], [], 0
    for seed in range(8):
        syn = fit(df, schema, seed=seed)
        w = syn.model.schema["wage"]
        assert w.within is not None and w.edges[-2] > 1500  # a top bin reaching 19001
        out = syn.sample()["wage"]
        assert (out == out.round()).all() and out.min() >= 50 and out.max() <= 19000
        syn.model.schema = syn.model.schema.with_edges(syn.model.bins.edges)  # the same bins, no shape
        flat = syn.sample()["wage"]
        # uniform inside the top bin puts 1/32 of the rows near (1500 + 19000) / 2; a
        # draw whose top bin came out small leaves both close (one in 8 under this noise
        # key: 27 and 26 high, both 4% of the mean)
        worse += abs(out.mean() - real.mean()) >= max(abs(flat.mean() - real.mean()),
                                                      0.05 * real.mean())
        q99.append(abs(out.quantile(0.99) - real.quantile(0.99)))
        q99_flat.append(abs(flat.quantile(0.99) - real.quantile(0.99)))
        means.append(out.mean())
        flat_means.append(flat.mean())
    assert worse <= 1
    assert np.abs(np.array(means) / real.mean() - 1).max() < 0.10
    assert np.median(q99) < 0.5 * np.median(q99_flat)
    assert abs(np.mean(means) - real.mean()) < 0.5 * abs(np.mean(flat_means) - real.mean())
    assert np.mean(means) == pytest.approx(real.mean(), rel=0.15)
    assert load_schema(syn.model.schema.to_dict())["wage"].within is None  # not saved


# -- the mechanism, recomputed independently --------------------------------------------

def _reference_edges(codes, g, k, spec, key, call, grid):
    """Histogram in NumPy, noise from the scalar reference sampler, isotonic fit from
    scikit-learn, edges by brute force over every boundary."""
    from sklearn.isotonic import IsotonicRegression
    counts = np.bincount(codes[codes < g], minlength=g)
    noise = np.array([sample_ref(spec, key, i, rng.QUANTILE, call) for i in range(g)])
    cum = IsotonicRegression().fit_transform(np.arange(g), np.cumsum(counts + noise))
    cum = np.concatenate([[0.0], np.maximum(cum, 0)])
    cuts = {0, g}
    for j in range(1, k):
        q = cum[-1] * j / k
        cuts.add(int(np.argmin(np.abs(cum - q))))  # ties: the first boundary
    return [grid[i] for i in sorted(cuts)]


@pytest.mark.parametrize("method", ["privsyn", "dpsyn"])
def test_edges_equal_an_independent_computation(method, backend, monkeypatch):
    from gpu_dpsyn.measure import marginals, quantiles
    keys = {}  # the noise key each module drew with (the fitted object forgets it)

    def spy(module):
        real = module.draw

        def draw(be, spec, n, key, stream, call, *a, **k):
            keys.setdefault(module.__name__, set()).add(tuple(key))
            keys.setdefault(module.__name__ + " calls", []).append((stream, call))
            return real(be, spec, n, key, stream, call, *a, **k)
        monkeypatch.setattr(module, "draw", draw)
    spy(quantiles)
    real_many = marginals.draw_many

    def draw_many(be, draws, key, *a, **k):
        keys.setdefault(marginals.__name__, set()).add(tuple(key))
        return real_many(be, draws, key, *a, **k)
    monkeypatch.setattr(marginals, "draw_many", draw_many)
    df, schema = wages(4000, seed=3)
    schema["columns"]["wage"]["bins"] = {"private_quantiles": 8, "grid": 48}
    schema["columns"]["edu"]["bins"] = {"private_quantiles": 4}  # 21 cells, linear
    syn = fit(df, schema, method=method, backend=backend.name)
    (key,) = keys["gpu_dpsyn.measure.quantiles"]
    assert keys["gpu_dpsyn.measure.marginals"] == {key}  # the run's one noise key
    assert keys["gpu_dpsyn.measure.quantiles calls"] == [(rng.QUANTILE, 0), (rng.QUANTILE, 1)]
    s = load_schema(schema)
    q = [(i, e) for i, e in enumerate(syn.ledger) if e.label == "quantiles"]
    assert [e.columns for _, e in q] == [("wage",), ("edu",)] and [i for i, _ in q] == [0, 1]
    for (call, entry), name in zip(q, ("wage", "edu")):
        pq = s[name].private
        grid_codes = np.searchsorted(pq.grid, df[name], side="right") - 1
        want = _reference_edges(grid_codes, pq.cells, pq.k, entry.noise, key, call, pq.grid)
        assert syn.privacy_report()["private_bins"][name] == want == syn.model.schema[name].edges
        assert entry.cells == pq.cells


# -- accounting ---------------------------------------------------------------------------

@pytest.mark.parametrize("method,mechanism", [("privsyn", "auto"), ("dpsyn", "gaussian"),
                                              ("dpsyn", "laplace")])
def test_ledger_shows_the_quantile_spend_and_the_budget_is_kept(method, mechanism):
    df, schema = wages(3000)
    schema["columns"]["edu"]["bins"] = {"private_quantiles": 8}
    syn = fit(df, schema, method=method, mechanism=mechanism)
    acc = syn.accountant
    f = Fraction(int(0.05 / 2 * 2 ** 30), 2 ** 30)  # 2.5% each, to 2^-30
    q = [e for e in syn.ledger if e.label == "quantiles"]
    assert syn.ledger[:2] == q and all(Fraction(e.fraction) == f for e in q)
    assert all(e.mechanism == acc.mechanism == (
        "laplace" if mechanism == "laplace" else "gaussian") for e in syn.ledger)
    # the quantile shares and the rest sum to 1 exactly; the method's own float split of
    # the rest may leave ~1e-16 of it unspent, as without private bins, never more than 1
    # (the ledger shows each share as a float: their sum may round either way)
    assert 1 - Fraction(1, 2 ** 50) < acc._spent <= 1
    assert sum(e.fraction for e in syn.ledger) == pytest.approx(1, abs=1e-15)
    rep = syn.privacy_report()
    assert rep["spent_fraction"] == pytest.approx(1) and set(rep["private_bins"]) == {"wage",
                                                                                     "edu"}
    if mechanism != "laplace":
        assert sum(e.rho for e in syn.ledger) == pytest.approx(acc.rho, rel=1e-12)
        assert q[0].rho == pytest.approx(float(f) * acc.rho)
        assert q[0].sigma >= 1 / np.sqrt(2 * q[0].rho)


def test_quantile_share_is_a_parameter():
    df, schema = wages(3000)
    syn = fit(df, schema, quantile_share=0.2)
    assert syn.ledger[0].label == "quantiles" and syn.ledger[0].fraction == pytest.approx(0.2)
    assert 1 - Fraction(1, 2 ** 50) < syn.accountant._spent <= 1


def test_a_seeded_key_depends_on_the_quantile_share_when_a_column_asks(monkeypatch):
    # the share changes every measurement's budget: one seed, two shares, unrelated noise
    from gpu_dpsyn.measure import fit as measuring
    keys = []
    real = measuring.noise_key
    monkeypatch.setattr(measuring, "noise_key", lambda *a, **k: keys.append(real(*a, **k)) or keys[-1])
    df, schema = wages(3000)
    fit(df, schema, quantile_share=0.2, adaptive_rounds=0)
    fit(df, schema, quantile_share=0.3, adaptive_rounds=0)
    assert keys[0] != keys[1]


def test_a_schema_without_private_bins_spends_as_before():
    df, schema = wages(3000)
    schema["columns"]["wage"]["bins"] = 32
    a = fit(df, schema)
    b = fit(df, schema, quantile_share=0.3)  # no column asks: the share is not spent
    assert [e.fraction for e in a.ledger] == [e.fraction for e in b.ledger]
    assert all(e.label != "quantiles" for e in a.ledger) and a.model.bins is None


# -- what it is for -----------------------------------------------------------------------

def test_skewed_column_bins_hold_near_equal_shares():
    df, schema = wages(20000)
    equal = copy.deepcopy(schema)
    equal["columns"]["wage"]["bins"] = K
    assert fattest_bin(df, equal) > 0.55  # equal width: most wages in the first bin
    syn = fit(df, schema)
    share = fattest_bin(df, syn.model.schema)
    assert syn.model.schema["wage"].bins >= K - 2 and share < 2.5 / K
    out = syn.sample()
    # the synthetic wages follow the real quantiles, not the equal-width bins
    assert np.median(out["wage"]) == pytest.approx(np.median(df["wage"]), rel=0.1)


def test_same_seed_same_edges_other_seed_other_edges():
    df, schema = wages(8000)  # a grid the noise leaves the edges to (lost_in_noise)
    schema["columns"]["wage"]["bins"] = {"private_quantiles": K, "grid": 64}
    a, b, c = fit(df, schema), fit(df, schema), fit(df, schema, seed=1)
    assert a.model.bins.edges == b.model.bins.edges and a.model.bins.edges != c.model.bins.edges
    assert a.sample().equals(b.sample())


def test_nullable_and_public_prior_use_the_chosen_bins():
    df, schema = wages(4000)
    df["wage"] = df["wage"].astype("Float64")
    df.loc[::10, "wage"] = pd.NA
    schema["columns"]["wage"]["nullable"] = True
    pub = df.sample(300, random_state=0).reset_index(drop=True)
    syn = fit(df, schema, public=pub, filter_low_counts=False)
    col = syn.model.schema["wage"]
    assert col.null_code == col.bins and (syn.model.public[0] == col.null_code).any()
    # the public codes are the public table binned with the chosen edges
    assert np.array_equal(syn.model.public[0], encode(pub, syn.model.schema)[0])
    out = syn.sample()
    assert out["wage"].isna().mean() == pytest.approx(0.1, abs=0.03)


def _synthesized(tmp_path, rows: int):
    """wages(rows) synthesized by the CLI with a ledger: (table, schema, (real, schema,
    synthetic and ledger paths), the ledger)."""
    import json
    from gpu_dpsyn.cli import main
    df, schema = wages(rows)
    paths = real, sch, out, ledger = (tmp_path / "real.csv", tmp_path / "s.json",
                                      tmp_path / "syn.csv", tmp_path / "l.json")
    df.to_csv(real, index=False)
    sch.write_text(json.dumps(schema))
    assert main(["synthesize", str(real), "--schema", str(sch), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(out), "--seed", "2", "--iterations", "3", "--ledger",
                 str(ledger), "--quiet"]) == 0
    return df, schema, paths, json.loads(ledger.read_text())


def test_cli_ledger_lists_the_edges_and_evaluate_uses_them(tmp_path):
    pytest.importorskip("matplotlib")
    import json
    from gpu_dpsyn.cli import main
    from gpu_dpsyn.evaluation.evaluate import mean_tvd
    df, schema, (real, sch, out, ledger), rep = _synthesized(tmp_path, 3000)
    res, page = tmp_path / "tvd.json", tmp_path / "r.html"
    edges = rep["private_bins"]["wage"]
    assert rep["measurements"][0]["label"] == "quantiles" and edges[0] == 50
    assert edges[-1] == 19001 and len(edges) - 1 <= K
    assert main(["evaluate", str(real), str(out), "--schema", str(sch), "--json", str(res),
                 "--report", str(page), "--ledger", str(ledger)]) == 0
    chosen = load_schema(schema).with_edges({"wage": edges})
    syn = pd.read_csv(out)
    assert json.loads(res.read_text())["tvd_1way"] == pytest.approx(
        mean_tvd(df, syn, chosen, ways=(1,))[1])
    assert mean_tvd(df, syn, chosen, ways=(1,))[1] != mean_tvd(df, syn, load_schema(schema),
                                                               ways=(1,))[1]
    html = page.read_text()
    assert "Private quantile bins" in html and ", ".join(f"{e:g}" for e in edges) in html


def test_evaluate_refuses_a_ledger_whose_private_bins_this_schema_could_not_choose(
        tmp_path, capsys):
    """A probe's ledger of another run was taken as it came: bins past the schema's range
    (scored on a wider range, or the synthetic table blamed for 'values outside the
    schema range [100, 300]'), 200,000 of them where K bins were asked for, a ledger
    with no bins for the column (the placeholder bins used unsaid), bins of a column
    the schema does not have; each is refused, naming the ledger."""
    import json
    from gpu_dpsyn.cli import main
    df, schema, (real, sch, out, ledger), rep = _synthesized(tmp_path, 600)
    edges = rep["private_bins"]["wage"]
    grid = load_schema(schema)["wage"].private.grid
    cases = {"narrow": {"wage": [100, 200, 300]}, "wide": {"wage": [0, *edges[1:-1], 10**6]},
             "many": {"wage": list(grid)}, "none": {},
             "stray": {"wage": edges, "bonus": [0, 1]}}
    for name, bins in cases.items():
        bad = tmp_path / f"{name}.json"
        bad.write_text(json.dumps({**rep, "private_bins": bins}))
        capsys.readouterr()
        assert main(["evaluate", str(real), str(out), "--schema", str(sch), "--ledger",
                     str(bad), "--quiet"]) != 0, name
        err = capsys.readouterr().err.strip()
        assert f"{name}.json" in err and "private bins" in err and "\n" not in err, err
    assert main(["evaluate", str(real), str(out), "--schema", str(sch), "--ledger",
                 str(ledger), "--quiet"]) == 0


def _top_bin_draws(counts, sigma, seed, k=8):
    from gpu_dpsyn.data.types.quantile_bins import Within
    from gpu_dpsyn.measure import quantiles as q
    r = np.random.default_rng(seed)
    noisy = counts + np.round(r.normal(0, sigma, len(counts)))
    cum = q.cumulative(noisy)
    cuts = np.asarray(q.quantile_cuts(noisy, k), dtype=np.int64)
    grid = np.arange(len(counts) + 1, dtype=np.float64)
    top = np.full(200_000, len(cuts) - 2)
    u = r.random(len(top))
    shaped = Within(grid, q.shaped_tails(cum, noisy, cuts, sigma), cuts).draw(top, u, False)
    fitted = Within(grid, cum, cuts).draw(top, u, False)
    return shaped, fitted, cuts


def test_the_top_bins_inside_thins_out_instead_of_following_its_tails_noise():
    # a decaying body in the first 300 of 1,024 cells, nothing after: the top bin's draws
    # past cell 400 (the empty tail) are few, where the cumulative fit put many
    x = np.arange(1024)
    counts = np.where(x < 300, np.round(4000 * np.exp(-x / 40)), 0).astype(float)
    past, past_fitted = [], []
    for seed in range(6):
        shaped, fitted, cuts = _top_bin_draws(counts, 25.0, seed)
        assert cuts[-2] < 300
        past.append((shaped > 400).mean())
        past_fitted.append((fitted > 400).mean())
    assert np.median(past) < 0.02 and np.median(past) < 0.25 * np.median(past_fitted)


def test_a_top_coded_value_keeps_its_mass_in_the_top_bin():
    # 3% of the rows at the maximum (a top code): a cell far above the noise stays a spike
    x = np.arange(1024)
    counts = np.where(x < 300, np.round(4000 * np.exp(-x / 40)), 0).astype(float)
    counts[-1] = 0.03 * counts.sum()
    for seed in range(3):
        shaped, _, cuts = _top_bin_draws(counts, 25.0, seed)
        in_top = counts[cuts[-2]:].sum()
        assert (shaped >= 1023).mean() == pytest.approx(counts[-1] / in_top, rel=0.2)


# -- a budget too small for the column's grid ---------------------------------------------

def test_quantiles_lost_in_the_noise_fall_back_to_public_spaced_bins():
    # a curator's 5,000 visits, 4 a patient, 3 columns sharing 5% of eps 1: the cumulative
    # noise at the middle edge (~4,000) dwarfed a bin's mass (~300) and the chosen edges
    # were [0, 0.36, 0.71, 365]: synthetic stays had a median of 147-319 days (real: 2)
    from gpu_dpsyn.measure.quantiles import lost_in_noise, public_cuts
    assert lost_in_noise(5000, 179.0, 1024, 16) and not lost_in_noise(20000, 25.0, 1024, 32)
    assert lost_in_noise(1000, 10.0, 2 * 101 ** 2, 10) == (10.0 * 101 > 100)
    grid = np.linspace(0.0, 365.0, 1025)
    cuts = public_cuts(grid, 16)
    assert cuts[0] == 0 and cuts[-1] == 1024 and cuts == sorted(set(cuts))
    widths = np.diff(grid[cuts])
    assert (np.diff(widths) >= -1e-9).all() and widths[-1] > 10 * widths[1]  # log-spaced
    neg = np.linspace(-50.0, 50.0, 101)
    assert public_cuts(neg, 4) == [0, 25, 50, 75, 100]  # below 0: equal widths
    years = np.linspace(1900.0, 2020.0, 121)  # from min > 0: log from min, nearly even
    w = np.diff(years[public_cuts(years, 12)])  # (shifted from 0: half in 1900-1911)
    assert w.max() <= 2 * w.min()
    rng_ = np.random.default_rng(0)
    n = 3000
    df = pd.DataFrame({"stay": np.round(rng_.exponential(3.0, n), 1),
                       "ward": rng_.choice(["a", "b", "c"], n)})
    schema = {"max_records_per_individual": 4, "columns": {
        "stay": {"type": "numeric", "min": 0, "max": 365, "bins": {"private_quantiles": 16}},
        "ward": {"type": "categorical", "values": ["a", "b", "c"]}}}
    with pytest.warns(UserWarning, match=r"'stay'.*noise.*spaced"):
        syn = fit(df, schema, quantile_share=0.0167)
    edges = syn.privacy_report()["private_bins"]["stay"]
    pq = load_schema(schema)["stay"].private  # its ends cells of their own (top codes)
    assert pq.atoms and edges == [float(pq.grid[i]) for i in public_cuts(pq.grid, 16, True)]
    assert edges[:2] == [0.0, 0.0] and edges[-2:] == [365.0, 365.0]
    out = syn.sample()
    assert out["stay"].median() < 20  # not spread up to the public max
