"""Saving a fitted synthesizer and loading it back: the same samples, no new spend, and a
clear refusal of other files and format versions."""
import pickle

import pandas as pd
import pytest
from conftest import small_table

from gpu_dpsyn import Synthesizer
from gpu_dpsyn import saving
from gpu_dpsyn.saving import ModelFileError


@pytest.fixture
def fitted():
    df, schema = small_table(400)
    return Synthesizer(1.0, 1e-9, seed=3, backend="cpu", progress=False).fit(df, schema)


def test_a_loaded_model_samples_what_the_fitted_one_would(fitted, tmp_path):
    path = fitted.save(tmp_path / "model.dpsyn")
    loaded = Synthesizer.load(path)
    ledger = loaded.ledger
    assert ledger == fitted.ledger and loaded.privacy_report() == fitted.privacy_report()
    pd.testing.assert_frame_equal(loaded.sample(300), fitted.sample(300))
    pd.testing.assert_frame_equal(loaded.sample(), fitted.sample())  # the next call, too
    assert loaded.ledger == ledger  # sampling spends nothing
    assert "fitted" in repr(loaded)


def test_a_loaded_model_cannot_be_fitted_again(fitted, tmp_path):
    loaded = Synthesizer.load(fitted.save(tmp_path / "m"))
    df, schema = small_table(100)
    with pytest.raises(Exception, match="already fitted"):
        loaded.fit(df, schema)


def test_an_unfitted_synthesizer_cannot_be_saved(tmp_path):
    with pytest.raises(Exception, match="fit"):
        Synthesizer(1.0, 1e-9, backend="cpu").save(tmp_path / "m")


def test_other_files_and_versions_are_refused(fitted, tmp_path):
    junk = tmp_path / "junk"
    junk.write_bytes(b"not a pickle")
    with pytest.raises(ModelFileError, match="not a gpu_dpsyn model file"):
        Synthesizer.load(junk)
    other = tmp_path / "other"
    other.write_bytes(pickle.dumps({"format": "something else"}))
    with pytest.raises(ModelFileError, match="not a gpu_dpsyn model file"):
        Synthesizer.load(other)
    path = fitted.save(tmp_path / "m")
    state = pickle.loads(path.read_bytes())
    state["version"] = saving.VERSION + 1
    path.write_bytes(pickle.dumps(state))
    with pytest.raises(ModelFileError, match=r"format version 2 .* reads version 1"):
        Synthesizer.load(path)
    with pytest.raises(ModelFileError, match="cannot read"):
        Synthesizer.load(tmp_path / "missing")
    with pytest.raises(ModelFileError, match="must be a string or path"):
        Synthesizer.load(None)


def test_saving_is_whole_or_nothing(fitted, tmp_path):
    with pytest.raises(ModelFileError, match="is a directory"):
        fitted.save(tmp_path)
    from gpu_dpsyn.errors import DPSynError
    with pytest.raises(DPSynError, match="missing_dir"):
        fitted.save(tmp_path / "missing_dir" / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no temporary file left


def test_load_can_move_the_sampling_to_another_backend(tmp_path):
    df, schema = small_table(300)
    syn = Synthesizer(1.0, 1e-9, seed=3, backend="auto", progress=False).fit(df, schema)
    loaded = Synthesizer.load(syn.save(tmp_path / "m"), backend="cpu")
    assert loaded.backend.name == "cpu" and loaded.model.settings.backend == "cpu"
    res = loaded.sample_to(tmp_path / "out", 200, batch_rows=100)  # the workers' backend too
    assert res["rows"] == 200


def test_saving_a_seeded_fit_warns(fitted, tmp_path):
    from gpu_dpsyn.errors import SeededNoiseWarning
    with pytest.warns(SeededNoiseWarning, match="re-derive its noise"):
        fitted.save(tmp_path / "m")


def test_a_path_with_a_nul_byte_is_a_one_line_refusal(fitted, tmp_path):
    from gpu_dpsyn.errors import DPSynError
    with pytest.raises(DPSynError, match="NUL byte"):
        fitted.save(str(tmp_path / "a\0b.dpsyn"))
    with pytest.raises(ModelFileError, match="NUL byte"):
        Synthesizer.load(str(tmp_path / "a\0b.dpsyn"))


def test_a_model_saved_before_the_newer_schema_keys_samples(tmp_path):
    # a model is budget already spent: one saved before "format", "missing_values",
    # "decimals" and "csv" (their attributes absent from its pickle) must still sample
    import numpy as np
    df = pd.DataFrame({"d": pd.Timestamp("2020-01-01") + pd.to_timedelta(
        np.arange(200) % 300, unit="D"), "x": np.arange(200) % 7 + 0.5,
        "k": ["a", "b"] * 100})
    schema = {"columns": {
        "d": {"type": "datetime", "min": "2020-01-01", "max": "2020-12-31", "unit": "day"},
        "x": {"type": "numeric", "min": 0, "max": 10, "bins": 5},
        "k": {"type": "categorical", "values": ["a", "b"]}}}
    syn = Synthesizer(2.0, 1e-9, seed=0, progress=False).fit(df, schema)
    with pytest.warns(UserWarning):  # (a seeded fit: saving it says so)
        syn.save(tmp_path / "new.model")
    want = Synthesizer.load(tmp_path / "new.model").sample(50)
    s = syn.model.schema
    for c in s.columns:  # as an older pickle holds them
        for key in ("missing_values", "decimals"):
            c.__dict__.pop(key, None)
        if c.time is not None:
            c.time.__dict__.pop("format", None)
    s.__dict__.pop("csv", None)
    with pytest.warns(UserWarning):
        syn.save(tmp_path / "old.model")
    assert Synthesizer.load(tmp_path / "old.model").sample(50).equals(want)


@pytest.mark.parametrize("key, value", [("model", None), ("accountant", None),
                                        ("next_call", "3"), ("next_call", True),
                                        ("next_call", -1), ("model", "delete"),
                                        ("accountant", "delete")])
def test_a_damaged_model_file_is_a_one_line_refusal(fitted, tmp_path, key, value):
    path = fitted.save(tmp_path / "m")
    state = pickle.loads(path.read_bytes())
    if value == "delete":
        del state[key]
    else:
        state[key] = value
    path.write_bytes(pickle.dumps(state))
    with pytest.raises(ModelFileError, match=f"damaged.*{key}"):
        Synthesizer.load(path)
