"""Prior-aware synthesis: selection from a public table, GUM's stop rule near the prior."""
import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.backends import get_backend
from gpu_dpsyn.errors import DPSynError, ParameterError
from gpu_dpsyn.generate.gum import GUMConfig, hold_close, run_gum
from gpu_dpsyn.backends.numpy.ops import NumpyBackend
from gpu_dpsyn.measure.indif import public_scores

cpu = get_backend("cpu")
SPEC = {"type": "numeric", "integer": True, "min": 0, "max": 3}
SCHEMA = {"columns": {c: SPEC for c in "wxyz"}}


def _table(n, pair, seed):
    """w, x, y, z uniform on 0..3, the columns in `pair` equal."""
    r = np.random.default_rng(seed)
    df = pd.DataFrame({c: r.integers(0, 4, n) for c in "wxyz"})
    df[pair[1]] = df[pair[0]]
    return df


def _fit(df, public=None, **kw):
    kw = {"seed": 0, "iterations": 3, "progress": False, "backend": "cpu", **kw}
    return Synthesizer(1.0, 1e-9, **kw).fit(df, SCHEMA, public=public)


def test_public_selection_charges_nothing_and_depends_on_the_public_table_only(monkeypatch):
    public = _table(2000, "wx", 1)
    a, b = _table(4000, "yz", 0), _table(4000, "wy", 2)  # private tables that differ
    syn = _fit(a, public)
    assert "indif" not in [e.label for e in syn.ledger]
    assert ("w", "x") in syn.model.selected
    assert _fit(b, public).model.selected == syn.model.selected
    one = sum(e.fraction for e in syn.ledger if len(e.columns) == 1 and e.label == "marginal")
    assert one == pytest.approx(0.1 / 0.9)  # the selection's 10% went to the measurements
    assert sum(e.fraction for e in syn.ledger) == pytest.approx(1.0)
    assert syn.privacy_report()["selection"].startswith("public")
    # selection="private" keeps the noisy private InDif: charged, and it finds y = z
    from gpu_dpsyn.measure import privsyn
    scored = []
    real = privsyn.measure_indif
    monkeypatch.setattr(privsyn, "measure_indif",
                        lambda *x, **k: scored.append(real(*x, **k)) or scored[-1])
    own = _fit(a, public, selection="private")
    assert [e.label for e in own.ledger].count("indif") == 1
    def covers(syn, pair):  # measured as a pair or inside a combined 3-way marginal
        return any(set(pair) <= set(m) for m in syn.model.selected)
    own_b = _fit(b, public, selection="private")
    # each private table's dependent pair scores highest (InDif 1.5 n = 6,000 against a
    # noise sigma near 200) and is measured; which other pairs join it is up to the noise
    names = "wxyz"
    assert len(scored) == 2
    for (pairs, s), want in zip(scored, ["yz", "wy"]):
        assert "".join(names[i] for i in pairs[int(np.argmax(s))]) == want
    assert covers(own, ("y", "z")) and covers(own_b, ("w", "y"))
    assert own.privacy_report()["selection"].startswith("private")


def test_public_scores_are_indif_scaled_to_the_private_rows():
    a = np.repeat([0, 1], 500).astype(np.uint8)  # a == b on 1,000 public rows: InDif = n
    s = public_scores(NumpyBackend(), [a, a.copy()], (2, 2), [(0, 1)], 3000.0)
    assert s[0] == pytest.approx(3000.0)


def test_selection_is_checked_before_anything_is_charged():
    with pytest.raises(ParameterError, match="selection"):
        Synthesizer(1, 1e-9, selection="shared")
    with pytest.raises(ParameterError, match="dpsyn"):
        Synthesizer(1, 1e-9, method="dpsyn", selection="public")
    syn = Synthesizer(1, 1e-9, selection="public", progress=False)
    with pytest.raises(ParameterError, match="needs a public table"):
        syn.fit(_table(100, "wx", 0), SCHEMA)
    assert syn.ledger == []
    for bad in (-1, float("nan"), "1", True, None):
        with pytest.raises(ParameterError, match="prior_tolerance"):
            Synthesizer(1, 1e-9, prior_tolerance=bad)


def test_the_private_table_given_as_public_is_refused_before_any_charge():
    df = _table(100, "wx", 0)
    syn = Synthesizer(1, 1e-9, progress=False, backend="cpu")
    with pytest.raises(DPSynError, match="public= is the private table itself"):
        syn.fit(df, SCHEMA, public=df)
    assert syn.ledger == []


def test_hold_close_freezes_the_cells_within_slack():
    s = np.array([10, 0, 5, 7], dtype=np.int64)
    t = np.array([11.5, 0.4, 9.0, 2.0])
    assert hold_close(np, s, t, 1.5).tolist() == [10.0, 0.0, 9.0, 2.0]


def test_gum_leaves_records_alone_where_the_targets_are_within_slack():
    r = np.random.default_rng(0)
    cols = [r.integers(0, 4, 4000).astype(np.uint8) for _ in range(2)]
    s = np.bincount(cols[0] * 4 + cols[1], minlength=16)
    t = s + r.choice([-3.0, 3.0], 16)  # every cell 3 counts off
    t *= s.sum() / t.sum()
    cfg = GUMConfig(iterations=2)
    for slack, moved in ((4.0, False), (0.0, True)):
        c = [x.copy() for x in cols]
        run_gum(cpu, [((0, 1), (4, 4), t)], c, (1, 2), 0, cfg, slack=[slack])
        assert (not all(np.array_equal(a, b) for a, b in zip(c, cols))) == moved


def test_stop_rule_keeps_more_of_a_matching_prior():
    # the public table is a sample of the private one's distribution: with the stop rule
    # more synthetic records stay the public records GUM started from (same seed, same
    # start: iterations=0 returns it)
    private, public = _table(6000, "wx", 0), _table(3000, "wx", 1)
    start = _fit(private, public, iterations=0).sample(3000)
    changed = []
    for k in (0.0, 3.0):
        out = _fit(private, public, prior_tolerance=k, iterations=10).sample(3000)
        changed.append(1 - (out == start).all(axis=1).mean())
    assert changed[1] < 0.8 * changed[0], changed


def test_gum_from_a_prior_appends_nothing_by_default():
    # appending redraws a column from one marginal, dropping what the prior holds
    from conftest import xyz_table
    df, schema = xyz_table(3000, values=4)  # (a triple of 64 cells: combined)
    kw = dict(seed=0, iterations=2, progress=False, backend="cpu")
    alone = Synthesizer(1.0, 1e-9, **kw).fit(df, schema)
    alone.sample(500)
    assert alone.last_run.structure.appended  # x is appended from (x, y, z)
    prior = Synthesizer(1.0, 1e-9, **kw).fit(df, schema, public=df.iloc[:1000])
    prior.sample(500)
    assert prior.last_run.structure.appended == []
    forced = Synthesizer(1.0, 1e-9, append_attributes=True, **kw).fit(df, schema,
                                                                     public=df.iloc[:1000])
    forced.sample(500)
    assert forced.last_run.structure.appended


def test_a_prior_tolerance_without_a_public_table_is_refused_before_any_charge(tmp_path,
                                                                               capsys):
    # it was applied to every GUM run anyway, and changed the release
    syn = Synthesizer(1, 1e-9, prior_tolerance=1.0, progress=False, backend="cpu")
    with pytest.raises(ParameterError, match="prior_tolerance.*needs a public table"):
        syn.fit(_table(100, "wx", 0), SCHEMA)
    assert syn.ledger == []
    import json
    from gpu_dpsyn.cli import main
    real, s = tmp_path / "r.csv", tmp_path / "s.json"
    _table(100, "wx", 0).to_csv(real, index=False)
    s.write_text(json.dumps(SCHEMA))
    assert main(["synthesize", str(real), "--schema", str(s), "--epsilon", "1", "--delta",
                 "1e-9", "--out", str(tmp_path / "o.csv"), "--prior-tolerance", "1"]) == 2
    assert "--prior-tolerance needs a --public table" in capsys.readouterr().err
