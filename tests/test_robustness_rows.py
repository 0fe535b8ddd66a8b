"""Late failures: the release's row count is bounded before any spend (by --rows, or by a
public maximum the noisy estimate is clamped to), and evaluate checks its ML target before
it computes anything."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import no_reading, one_line_error, small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data import schema as schema_module
from gpu_dpsyn.data.schema import load_schema
from gpu_dpsyn.errors import DataError, RowCountWarning, SchemaError

COLS = ["month", "carrier", "origin"]


@pytest.fixture
def files(tmp_path, flights, flights_schema):
    real = tmp_path / "real.csv"
    flights[COLS].iloc[:2000].to_csv(real, index=False)
    spec = {"columns": {c: flights_schema[c].to_dict() for c in COLS}}
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps(spec))
    return tmp_path, real, schema, spec


def _fit_with_total(monkeypatch, total, schema):
    """A fit whose pooled noisy row count is `total` (what a tiny epsilon gives)."""
    monkeypatch.setattr("gpu_dpsyn.measure.fit.pooled_total", lambda levels: (total, 1e8))
    df, _ = small_table(300)
    syn = Synthesizer(1.0, 1e-6, seed=1, backend="cpu", progress=False, iterations=1,
                      adaptive_rounds=0)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        syn.fit(df, schema)
    return syn, [w for w in got if issubclass(w.category, RowCountWarning)]


# -- the public maximum ------------------------------------------------------------------
def test_a_huge_estimate_is_clamped_to_the_schemas_max_rows(monkeypatch):
    _, schema = small_table()
    schema["max_rows"] = 700
    syn, warned = _fit_with_total(monkeypatch, 2.75e8, schema)
    assert syn.model.n_estimate == 700
    assert len(warned) == 1 and "700" in str(warned[0].message) and \
        "max_rows" in str(warned[0].message)


def test_a_clamped_estimate_is_not_said_to_be_unreliable_after(monkeypatch):
    """Clamped to max_rows 50, sample() then said "the row count is estimated at 50 with a
    standard error of about 21 ... the schema's rule may have dropped them": the count
    was clamped, and nothing was dropped."""
    _, schema = small_table()
    schema["max_rows"] = 50
    syn, warned = _fit_with_total(monkeypatch, 1988.0, schema)
    monkeypatch.setattr(syn.model, "n_standard_error", 21.0)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        assert len(syn.sample()) == 50
    assert len(warned) == 1 and not [w for w in got if "estimated at" in str(w.message)]


def test_without_max_rows_the_default_cap_applies(monkeypatch):
    _, schema = small_table()
    syn, warned = _fit_with_total(monkeypatch, 2.75e12, schema)
    assert syn.model.n_estimate == schema_module.DEFAULT_MAX_ROWS and len(warned) == 1


def test_a_negative_estimate_is_clamped_to_one_with_a_warning(monkeypatch):
    _, schema = small_table()
    syn, warned = _fit_with_total(monkeypatch, -4e6, schema)
    assert syn.model.n_estimate == 1 and len(warned) == 1


def test_an_estimate_inside_the_range_is_kept_without_a_clamping_warning(monkeypatch):
    _, schema = small_table()
    syn, warned = _fit_with_total(monkeypatch, 512.4, schema)
    assert syn.model.n_estimate == 512 and warned == []


def test_tiny_epsilon_fits_and_samples_at_most_max_rows(files, capsys):
    tmp, real, _, spec = files
    spec["max_rows"] = 400
    schema = tmp / "capped.json"
    schema.write_text(json.dumps(spec))
    # the noisy count is about +-10^7: a seed whose count comes out above max_rows is
    # clamped to it (where it failed after the spend), one below 1 to 1
    rows, clamped = [], False
    for seed in range(6):
        out = tmp / f"o{seed}.csv"
        assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "2e-7",
                     "--delta", "1e-9", "--out", str(out), "--iterations", "1", "--seed",
                     str(seed), "--adaptive-rounds", "0", "--backend", "cpu", "--quiet"]) == 0
        rows.append(len(pd.read_csv(out)))
        err = capsys.readouterr().err
        clamped |= rows[-1] == 400 and "gpu-dpsyn: warning:" in err and "max_rows" in err
    assert all(1 <= r <= 400 for r in rows) and clamped, rows


@pytest.mark.parametrize("value", [0, -3, 1.5, "10", True, 2 ** 31])
def test_max_rows_must_be_a_positive_integer(value):
    _, schema = small_table()
    schema["max_rows"] = value
    with pytest.raises(SchemaError, match="max_rows"):
        load_schema(schema)


def test_max_rows_is_kept_by_to_dict_and_with_edges():
    _, schema = small_table()
    schema["max_rows"] = 1234
    s = load_schema(schema)
    assert s.max_rows == 1234 and s.row_cap == 1234
    assert load_schema(s.to_dict()).max_rows == 1234
    assert s.with_edges({"score": [0, 5, 10]}).max_rows == 1234
    assert load_schema(small_table()[1]).row_cap == schema_module.DEFAULT_MAX_ROWS


def test_nist_max_records_is_the_public_maximum():
    params = {"schema": {"SEX": {"dtype": "uint8", "values": [1, 2]}},
              "runs": [{"epsilon": 1, "delta": 1e-9, "max_records": 1350000,
                        "max_records_per_individual": 7}]}
    assert load_schema(params).max_rows == 1350000


# -- the memory for the cap is checked before the fit ------------------------------------
def test_without_rows_the_cap_must_fit_in_memory_before_reading(files, capsys, monkeypatch):
    tmp, real, schema, _ = files
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 26)  # 64 MiB: 10^7 rows do not fit
    no_reading(monkeypatch)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--backend", "cpu",
                 "--quiet"]) == 2
    one_line_error(capsys, f"{getattr(schema_module, 'DEFAULT_MAX_ROWS', 10 ** 7):,}", "--rows",
                    "max_rows")
    assert not (tmp / "o.csv").exists()


def test_a_small_max_rows_passes_the_memory_check(files, capsys, monkeypatch):
    tmp, real, _, spec = files
    spec["max_rows"] = 5000
    schema = tmp / "capped.json"
    schema.write_text(json.dumps(spec))
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 26)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--backend", "cpu",
                 "--iterations", "1", "--adaptive-rounds", "0", "--quiet"]) == 0


def _memory_taken_by_the_fit(monkeypatch):
    """Free memory as if the private table and the fit held most of it: plenty before
    fit(), 64 KiB after."""
    from gpu_dpsyn.synthesizer import Synthesizer
    fitted, fit = [], Synthesizer.fit

    def fit_and_hold(self, *args, **kwargs):
        out = fit(self, *args, **kwargs)
        fitted.append(True)
        return out
    monkeypatch.setattr(Synthesizer, "fit", fit_and_hold)
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 16 if fitted else 2 ** 40)


@pytest.mark.parametrize("rows", [["--rows", "3000"], []])
def test_memory_is_not_checked_again_after_the_charge(files, monkeypatch, rows):
    # the check before reading covers the release; checked again after the fit, free
    # memory (less what the private table takes) decided whether a spent run refused
    tmp, real, _, spec = files
    spec["max_rows"] = 5000
    schema = tmp / "capped.json"
    schema.write_text(json.dumps(spec))
    _memory_taken_by_the_fit(monkeypatch)
    assert main(["synthesize", str(real), "--schema", str(schema), "--epsilon", "1",
                 "--delta", "1e-9", "--out", str(tmp / "o.csv"), "--backend", "cpu",
                 "--iterations", "1", "--adaptive-rounds", "0", "--quiet"] + rows) == 0


def test_sample_checks_memory_only_past_what_was_checked_before_fit(monkeypatch):
    df, schema = small_table(300)
    syn = Synthesizer(1.0, 1e-9, seed=0, iterations=1, progress=False, backend="cpu")
    assert syn.check_sample(1000, schema) == 1000
    _memory_taken_by_the_fit(monkeypatch)
    syn.fit(df, schema)
    assert len(syn.sample(1000)) == 1000
    with pytest.raises(DataError, match="needs about"):
        syn.sample(10 ** 6)


# -- evaluate: the ML target is checked before the TVDs ------------------------------------
def _no_tvds(monkeypatch):
    def fail(*a, **k):
        pytest.fail("the TVDs were computed before the check")
    monkeypatch.setattr("gpu_dpsyn.evaluation.fidelity.evaluate_tables", fail)


def test_evaluate_unknown_target_without_schema_fails_before_the_tvds(files, capsys,
                                                                       monkeypatch):
    pytest.importorskip("sklearn")
    tmp, real, _, _ = files
    _no_tvds(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--target", "nope", "--quiet"]) == 2
    one_line_error(capsys, "'nope'", "not a column")


def test_evaluate_with_too_few_real_rows_fails_before_the_tvds(files, capsys, monkeypatch):
    pytest.importorskip("sklearn")
    tmp, real, schema, _ = files
    few = tmp / "few.csv"
    pd.read_csv(real).iloc[:5].to_csv(few, index=False)
    _no_tvds(monkeypatch)
    for extra in ([], ["--schema", str(schema)]):
        assert main(["evaluate", str(few), str(real), "--target", "carrier", "--quiet",
                     *extra]) == 2
        one_line_error(capsys, "at least 10 real", "got 5")


def test_evaluate_numeric_target_counts_rows_with_a_value(tmp_path, capsys, monkeypatch):
    pytest.importorskip("sklearn")
    r = np.random.default_rng(0)
    df = pd.DataFrame({"a": r.integers(0, 3, 40), "y": r.uniform(0, 1, 40)})
    df.loc[5:, "y"] = np.nan  # 5 rows with a value
    real = tmp_path / "r.csv"
    df.to_csv(real, index=False)
    spec = {"columns": {"a": {"type": "categorical", "values": [0, 1, 2]},
                        "y": {"type": "numeric", "min": 0, "max": 1, "nullable": True}}}
    schema = tmp_path / "s.json"
    schema.write_text(json.dumps(spec))
    _no_tvds(monkeypatch)
    assert main(["evaluate", str(real), str(real), "--schema", str(schema), "--target", "y",
                 "--quiet"]) == 2
    one_line_error(capsys, "at least 10 real", "got 5")
