"""Every bad parameter is refused before the first budget charge, with a DPSynError."""
import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.errors import DataError, ParameterError, PrivacyParameterError
from gpu_dpsyn.gum import GUMConfig


@pytest.mark.parametrize("kw,match", [
    ({"alpha_step": 0}, "alpha_step"), ({"alpha_step": -3}, "alpha_step"),
    ({"alpha_step": 2.5}, "alpha_step"), ({"alpha_step": True}, "alpha_step"),
    ({"alpha_decay": float("nan")}, "alpha_decay"), ({"alpha_decay": 0}, "alpha_decay"),
    ({"alpha_decay": -0.5}, "alpha_decay"), ({"alpha_decay": "0.8"}, "alpha_decay"),
    ({"alpha": float("nan")}, "alpha"), ({"alpha": float("inf")}, "alpha"),
    ({"alpha": 0}, "alpha"), ({"iterations": -1}, "iterations"),
    ({"iterations": 2.0}, "iterations"), ({"iterations": False}, "iterations"),
    ({"update_mix": "S9"}, "update mix"),
    ({"max_cells": 0}, "max_cells"), ({"max_cells": "many"}, "max_cells"),
    ({"max_cells": 1e6}, "max_cells"), ({"consistency_rounds": 0}, "consistency_rounds"),
    ({"consistency_rounds": 1.5}, "consistency_rounds"),
    ({"filter_low_counts": "no"}, "filter_low_counts"),
    ({"append_attributes": None}, "append_attributes"), ({"progress": "yes"}, "progress"),
])
def test_bad_tuning_parameters_are_refused_at_construction(kw, match):
    with pytest.raises(ParameterError, match=match):
        Synthesizer(1.0, 1e-9, backend="cpu", **kw)


def test_gum_config_raises_parameter_errors():
    with pytest.raises(ParameterError, match="alpha_step"):
        GUMConfig(alpha_step=0)
    assert GUMConfig(iterations=np.int64(3), alpha_step=np.int32(5)).alpha_at(6) \
        == pytest.approx(0.84)


@pytest.mark.parametrize("method", ["privsyn", "dpsyn"])
def test_unknown_mechanism_is_refused_at_construction(method):
    with pytest.raises(PrivacyParameterError, match="mechanism 'exponential'"):
        Synthesizer(1.0, 1e-9, backend="cpu", method=method, mechanism="exponential")


@pytest.mark.parametrize("bad", [0, -1, 1.5, 2.0, True, "2", float("nan")])
def test_sensitivity_must_be_a_positive_integer(bad):
    with pytest.raises(PrivacyParameterError, match="sensitivity"):
        Synthesizer(1.0, 1e-9, backend="cpu", sensitivity=bad)


def test_sensitivity_below_the_schema_max_records_is_refused_before_spending():
    df, schema = small_table(300)
    schema["max_records_per_individual"] = 3
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, sensitivity=2)
    with pytest.raises(PrivacyParameterError, match=r"sensitivity=2 .*\(3 records\)"):
        syn.fit(df, schema)
    assert syn.ledger == []
    with pytest.raises(PrivacyParameterError, match="sensitivity"):  # checked before the data
        syn.fit(df.drop(columns=["color"]), schema)


@pytest.mark.parametrize("given,used", [(None, 3), (3, 3), (5, 5)])
def test_sensitivity_at_or_above_the_schema_max_records_is_used(given, used):
    df, schema = small_table(300)
    schema["max_records_per_individual"] = 3
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, sensitivity=given,
                      iterations=1, method="dpsyn").fit(df, schema)
    assert syn.privacy_report()["sensitivity"] == used
    sigma1 = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, iterations=1,
                         method="dpsyn").fit(df, {**schema, "max_records_per_individual": 1})
    assert syn.ledger[0].sigma == pytest.approx(used * sigma1.ledger[0].sigma)
