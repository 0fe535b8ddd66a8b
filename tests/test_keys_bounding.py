"""The noise key (secret, or derived from a seed with a warning) and contribution
bounding (at most D records per individual, enforced before measuring)."""
import pickle
import json
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.errors import DataError, SchemaError
from gpu_dpsyn.privacy.bounding import kept_rows
from gpu_dpsyn.privacy.keys import SeededNoiseWarning, noise_key
from gpu_dpsyn.data.schema import load_schema


def test_unseeded_keys_are_secret_and_seeded_ones_depend_on_the_parameters():
    assert noise_key(None) != noise_key(None)  # 256 bits from os.urandom
    with pytest.warns(SeededNoiseWarning, match="never publish two releases"):
        a = noise_key(7, epsilon=1.0, delta=1e-9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert a == noise_key(7, epsilon=1.0, delta=1e-9)
        assert a != noise_key(7, epsilon=0.5, delta=1e-9) != noise_key(8, epsilon=1.0,
                                                                         delta=1e-9)
    assert len(a) == 8 and all(0 <= w < 2 ** 32 for w in a)


def _noise(syn, df):
    from gpu_dpsyn.data.encoding import encode
    from gpu_dpsyn.measure.marginals import exact_marginals
    cols = encode(df, syn.model.schema)
    exact = exact_marginals(syn.backend, cols, syn.model.domain, [m.attrs for m in syn.model.marginals])
    return np.concatenate([m.values - e.values for m, e in zip(syn.model.marginals, exact)])


def test_one_seed_at_two_epsilons_gives_unrelated_noise():
    df, schema = small_table(400)
    kw = dict(seed=3, method="dpsyn", backend="cpu", progress=False, iterations=0,
              filter_low_counts=False)
    one = Synthesizer(1.0, 1e-6, **kw).fit(df, schema)
    half = Synthesizer(0.5, 1e-6, **kw).fit(df, schema)
    assert abs(np.corrcoef(_noise(one, df), _noise(half, df))[0, 1]) < 0.5  # was 0.97


def test_a_seeded_fit_warns_and_an_unseeded_one_does_not():
    df, schema = small_table(200)
    with pytest.warns(SeededNoiseWarning):
        Synthesizer(1.0, 1e-6, seed=1, backend="cpu", progress=False).fit(df, schema)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeededNoiseWarning)
        syn = Synthesizer(1.0, 1e-6, backend="cpu", progress=False).fit(df, schema)
    assert syn.privacy_report()["seeded"] is False


def test_the_cli_prints_the_seeded_warning(tmp_path, capsys):
    df, schema = small_table(300)
    df.to_csv(tmp_path / "in.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(schema))
    args = ["synthesize", str(tmp_path / "in.csv"), "--schema", str(tmp_path / "s.json"),
            "--epsilon", "1", "--delta", "1e-6", "--out", str(tmp_path / "o.csv"),
            "--iterations", "2", "--quiet", "--overwrite"]
    assert main(args + ["--seed", "5"]) == 0
    assert "warning: a seed was given" in capsys.readouterr().err
    assert main(args) == 0
    assert "a seed was given" not in capsys.readouterr().err


# -- contribution bounding -------------------------------------------------------------

def _people(big=501, others=99):
    """One person with `big` records, `others` people with one record each."""
    pid = np.r_[np.zeros(big, dtype=int), np.arange(1, others + 1)]
    color = np.r_[np.full(big, "red"), np.full(others, "blue")].astype(object)
    df = pd.DataFrame({"pid": pid, "color": color})
    schema = {"columns": {"pid": {"type": "id"},
                          "color": {"type": "categorical", "values": ["red", "blue"]}}}
    return df, schema


@pytest.mark.parametrize("d", [1, 3])
def test_each_individual_keeps_at_most_d_random_records(d):
    df, _ = _people()
    keep = kept_rows(df, "pid", d, tuple(range(8)))
    counts = df.iloc[keep]["pid"].value_counts()
    assert counts[0] == d and (counts.drop(0) == 1).all() and len(counts) == 100
    # which of the big individual's records stay is uniform: every one is picked by some key
    picked = np.concatenate([kept_rows(df, "pid", d, (k,) * 8)[:d] for k in range(1000)])
    assert picked.max() < 501
    seen = np.bincount(picked, minlength=501)  # 1000 d picks of 501: chi-square, df 500
    assert ((seen - seen.mean()) ** 2 / seen.mean()).sum() < 664.96  # chi2.isf(1e-6, 500)
    assert kept_rows(df[df.pid > 0], "pid", d, tuple(range(8))) is None  # nothing to drop


def test_fit_measures_the_bounded_table():
    df, schema = _people()
    syn = Synthesizer(50.0, 1e-6, backend="cpu", progress=False, method="dpsyn").fit(df, schema)
    assert abs(syn.model.n_estimate - 100) < 10  # 100 individuals, not 600 rows
    rep = syn.privacy_report()
    assert "'pid'" in rep["unit_of_privacy"] and "at most 1" in rep["unit_of_privacy"]
    assert rep["neighbouring"] == "add or remove all records of one individual"
    syn3 = Synthesizer(50.0, 1e-6, backend="cpu", progress=False, method="dpsyn") \
        .fit(df, {**schema, "max_records_per_individual": 3})
    assert abs(syn3.model.n_estimate - 102) < 10 and syn3.privacy_report()["sensitivity"] == 3


def test_missing_individual_ids_are_refused_before_spending_when_strict():
    df, schema = _people()
    df.loc[3, "pid"] = np.nan
    syn = Synthesizer(1.0, 1e-6, backend="cpu", progress=False, on_invalid="error")
    with pytest.raises(DataError, match="missing values"):
        syn.fit(df, schema)
    assert syn.ledger == []


def test_several_id_columns_need_the_individual_named():
    cols = {"a": {"type": "id"}, "b": {"type": "id"},
            "c": {"type": "categorical", "values": ["x"]}}
    with pytest.raises(SchemaError, match="individual_id"):
        load_schema({"columns": cols})
    assert load_schema({"columns": cols, "individual_id": "b"}).unit_id == "b"
    with pytest.raises(SchemaError, match="must name an id column"):
        load_schema({"columns": cols, "individual_id": "c"})


def _holds(obj, key, seen) -> bool:
    """Whether obj, or anything it refers to, is the key (as a tuple or list of words)."""
    if id(obj) in seen:
        return False
    seen.add(id(obj))
    if isinstance(obj, (tuple, list)) and tuple(obj) == key:
        return True
    if isinstance(obj, dict):
        return any(_holds(v, key, seen) for v in obj.values())
    if isinstance(obj, (tuple, list, set)):
        return any(_holds(v, key, seen) for v in obj)
    return hasattr(obj, "__dict__") and _holds(vars(obj), key, seen)


def test_fit_forgets_the_noise_key(monkeypatch):
    from gpu_dpsyn.measure import fit as measuring
    keys, real = [], measuring.noise_key
    monkeypatch.setattr(measuring, "noise_key", lambda *a, **k: keys.append(real(*a, **k))
                        or keys[-1])
    df, schema = small_table(200)
    syn = Synthesizer(1.0, 1e-6, backend="cpu", progress=False).fit(df, schema)
    assert len(keys) == 1 and _holds([keys[0]], keys[0], set())  # the walk finds it
    # a pickled fitted object cannot redraw the noise
    assert not _holds(pickle.loads(pickle.dumps(syn)), keys[0], set())


def test_kernel_builds_and_table_size_fail_before_the_first_charge(monkeypatch):
    from gpu_dpsyn.measure import fit as measuring
    df, schema = small_table(200)
    syn = Synthesizer(1.0, 1e-6, backend="cpu", progress=False)

    def broken():
        raise DataError("no compiler")
    monkeypatch.setattr(syn.backend, "prepare", broken)
    with pytest.raises(DataError, match="no compiler"):
        syn.fit(df, schema)
    assert syn.ledger == []
    monkeypatch.setattr(measuring, "MAX_ROWS", 100)  # InDif's exact sums assume n < 2^31
    syn = Synthesizer(1.0, 1e-6, backend="cpu", progress=False)
    with pytest.raises(DataError, match="rows"):
        syn.fit(df, schema)
    assert syn.ledger == []


def test_max_cells_stays_within_one_noise_stream():
    from gpu_dpsyn.errors import ParameterError
    with pytest.raises(ParameterError, match="2\\^30"):
        Synthesizer(1.0, 1e-6, max_cells=2 ** 30 + 1)


def test_seeded_keys_differ_with_grouping_selection_rounds_and_a_public_table(monkeypatch):
    """What is measured depends on group_by, the selection, the adaptive rounds and a
    public table: one seed must not give related noise across them."""
    from gpu_dpsyn.measure import fit as measuring
    keys = []
    real = measuring.noise_key
    monkeypatch.setattr(measuring, "noise_key", lambda *a, **k: keys.append(real(*a, **k)) or keys[-1])
    df, schema = small_table(600)
    kw = dict(seed=5, backend="cpu", progress=False, iterations=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        Synthesizer(1.0, 1e-6, **kw).fit(df, schema)
        Synthesizer(1.0, 1e-6, group_by=["color"], **kw).fit(df, schema)
        Synthesizer(1.0, 1e-6, selection="private", **kw).fit(df, schema)
        Synthesizer(1.0, 1e-6, **kw).fit(df, schema, public=df.iloc[:200])
        Synthesizer(1.0, 1e-6, adaptive_rounds=1, **kw).fit(df, schema)
        Synthesizer(1.0, 1e-6, **kw).fit(df, schema)
    assert keys[0] == keys[5]  # still reproducible
    assert len(set(keys[:5])) == 5, "a seed's key must depend on each of these"


def test_seeded_keys_differ_with_every_setting_the_rounds_depend_on(monkeypatch):
    """The adaptive rounds choose triples from GUM's records: every setting that changes
    those records (or the domain, or the plan) changes what is measured, so one seed must
    not give the same noise across them."""
    from gpu_dpsyn.measure import fit as measuring
    keys = []
    real = measuring.noise_key
    monkeypatch.setattr(measuring, "noise_key", lambda *a, **k: keys.append(real(*a, **k)) or keys[-1])
    df, schema = small_table(600)
    kw = dict(seed=5, backend="cpu", progress=False, adaptive_rounds=0)
    variants = [{}, dict(update_mix="half"), dict(alpha=0.5),
                dict(alpha_decay=0.5), dict(alpha_step=3), dict(duplicate_scope="all"),
                dict(append_attributes=False), dict(neighbour_shuffle=False),
                dict(gibbs_sweep=False), dict(consistency_rounds=3),
                dict(filter_low_counts=False), dict(max_cells=5000),
                dict(denoise=False), dict(polish=False)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        for v in variants:
            Synthesizer(1.0, 1e-6, **kw, **v).fit(df, schema)
        Synthesizer(1.0, 1e-6, iterations=7, **kw).fit(df, schema)
        Synthesizer(1.0, 1e-6, quantile_share=0.1, **kw).fit(df, schema)
    n = len(variants)
    assert len(set(keys[:n])) == n, "a seed's key must depend on each setting"
    # the rounds fix their own GUM iterations; no column asks for private quantiles
    assert keys[n] == keys[n + 1] == keys[0]


def test_seeded_keys_differ_with_the_public_tables_contents(monkeypatch):
    """A public table chooses the marginals and starts the rounds' records: two public
    tables, one seed, unrelated noise."""
    from gpu_dpsyn.measure import fit as measuring
    keys = []
    real = measuring.noise_key
    monkeypatch.setattr(measuring, "noise_key", lambda *a, **k: keys.append(real(*a, **k)) or keys[-1])
    df, schema = small_table(600)
    kw = dict(seed=5, backend="cpu", progress=False, iterations=0, adaptive_rounds=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SeededNoiseWarning)
        for pub in (df.iloc[:200], df.iloc[200:400], df.iloc[:200].copy()):
            Synthesizer(1.0, 1e-6, **kw).fit(df, schema, public=pub)
    assert keys[0] != keys[1] and keys[0] == keys[2]


def test_an_individual_id_without_a_bound_is_warned_of():
    # one record a person was kept (the default bound) and the rest dropped in silence
    import warnings
    df = pd.DataFrame({"c": ["a", "b"] * 50, "pid": np.arange(100) // 4})
    schema = {"columns": {"c": {"type": "categorical", "values": ["a", "b"]},
                          "pid": {"type": "id"}}, "individual_id": "pid"}
    kw = dict(backend="cpu", progress=False, iterations=1, adaptive_rounds=0)
    with pytest.warns(UserWarning, match="id 'pid' but no max_records_per_individual: 1 rec"):
        Synthesizer(1.0, 1e-9, **kw).fit(df, schema)
    with warnings.catch_warnings():  # (a 100-row table: the noise warning is due)
        warnings.filterwarnings("error", message=".*no max_records_per_individual")
        Synthesizer(1.0, 1e-9, **kw).fit(df, dict(schema, max_records_per_individual=4))
        Synthesizer(1.0, 1e-9, sensitivity=4, **kw).fit(df, schema)


@pytest.mark.parametrize("bound, past", [(None, 74), (2, 49), (4, 0)])
def test_check_counts_the_records_past_the_bound(tmp_path, capsys, bound, past):
    # check said "every value ... is allowed" while the fit dropped two thirds of the rows
    df = pd.DataFrame({"c": ["a", "b"] * 50, "pid": np.arange(100) // 4})
    df.loc[3, "pid"] = None
    p, s = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(p, index=False)
    spec = {"columns": {"c": {"type": "categorical", "values": ["a", "b"]},
                        "pid": {"type": "id"}}, "individual_id": "pid"}
    if bound:
        spec["max_records_per_individual"] = bound
    s.write_text(json.dumps(spec))
    assert main(["check", str(p), "--schema", str(s)]) == 1  # (the missing id)
    out = capsys.readouterr().out
    assert "pid: 1 row individual id missing" in out
    assert (f"pid: {past} rows past max_records_per_individual ({bound or 1}" in out) == \
        bool(past), out


def test_one_individual_written_several_ways_is_one_individual():
    """Ids were matched by exact value and type: ' 1', '1', '1.0', '01', 1 and 1.0 were six
    individuals, each keeping D records, so one person written six ways kept 6 D (an
    audit's finding).  Ids are matched as text without surrounding spaces, and text that
    is a number as that number; merging two ids only drops more records."""
    from gpu_dpsyn.core.individuals import individual_codes
    ids = pd.Series([" 1", "1", "1.0", "01", 1, 1.0, "1e0", "2", "x", " x ", "X",
                     "12345678901234567891",
                     "12345678901234567890"], dtype=object)
    codes = individual_codes(ids)
    assert len(set(codes[:7])) == 1 and len(set(codes)) == 6  # 1; 2; x; X; two long ids
    # trailing zeros, exponents, long digit runs with a leading zero: exactly, no rounding
    # ("10" and "10.0" stayed two: Decimal.normalize writes 1E+1); an exponent past any
    # context read one record's id as a decimal.Overflow traceback
    same = [["10", "10.0", "1e1", " 010 "], ["1000", "1e3", "1000.000"], ["-0", "0", "0.0"],
            ["0123456789012345678901234567890", "123456789012345678901234567890"],
            ["1e999999999", "10e999999998"],
            ["111", "1\u06611", "\u0661\u0661\u0661"]]  # (Arabic-Indic digits: 1 written 3 ways)
    for group in same:
        assert len(set(individual_codes(pd.Series(group, dtype=object)))) == 1, group
    apart = pd.Series(["01234567890123456789012345678901", "01234567890123456789012345678902",
                       "1.5", "15", "0.15"], dtype=object)
    assert len(set(individual_codes(apart))) == 5
    df = pd.DataFrame({"pid": ids, "v": range(len(ids))})
    keep = kept_rows(df, "pid", 2, tuple(range(8)))
    assert len(keep) == 2 + 6 and sum(k < 7 for k in keep) == 2
    # check counts them so too
    from gpu_dpsyn.data.preflight import findings
    schema = load_schema({"columns": {"pid": {"type": "id"}, "v": {
        "type": "numeric", "min": 0, "max": 20, "bins": 4}}, "individual_id": "pid",
        "max_records_per_individual": 2})
    past = [f for f in findings(df, schema) if "past max_records" in f[1]]
    assert past and past[0][2] == 5  # 7 records of one individual, 2 kept


@pytest.mark.parametrize("ids", [
    [True, 1, "1"], [1 + 0j, 1, "1"], [2.0 ** 60, 2 ** 60, "1152921504606846976"],
    [np.float64(2.0 ** 60), "1152921504606846976"], [0.5, "5e-1"],
    [Fraction(1, 2), 0.5, " 0.50"],
    [0.1, "0.1000000000000000055511151231257827021181583404541015625"]])
def test_an_id_held_equal_to_another_number_is_never_split_from_it(ids):
    """pd.factorize makes Python-equal ids one (True == 1 == 1 + 0j, 2.0**60 == 2**60) and
    only its first was read as text: "True", "(1+0j)" and "1.152921504606847e+18" are no
    number, so the int 1 went with True and "1" apart; with D = 1 one person written so
    kept 2 records (an audit's finding).  A number id is also keyed by its exact value."""
    from gpu_dpsyn.core.individuals import individual_codes
    assert len(set(individual_codes(pd.Series(ids + ["x"], dtype=object)))) == 2, ids
    df = pd.DataFrame({"pid": pd.Series(ids, dtype=object)})
    assert len(kept_rows(df, "pid", 1, tuple(range(8)))) == 1
