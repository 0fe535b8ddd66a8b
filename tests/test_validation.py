"""Every bad parameter is refused before the first budget charge, with a DPSynError."""
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn import Synthesizer
from gpu_dpsyn.errors import (DataError, DPSynError, ParameterError, PrivacyParameterError,
                               SchemaError)
from gpu_dpsyn.generate.gum import GUMConfig


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
    ({"append_attributes": "maybe"}, "append_attributes must be True, False or 'auto'"),
    ({"denoise": "yes"}, "denoise must be True or False"), ({"denoise": 1}, "denoise"),
])
def test_bad_tuning_parameters_are_refused_at_construction(kw, match):
    with pytest.raises(ParameterError, match=match):
        Synthesizer(1.0, 1e-9, backend="cpu", **kw)


def test_gum_config_raises_parameter_errors():
    with pytest.raises(ParameterError, match="alpha_step"):
        GUMConfig(alpha_step=0)
    assert GUMConfig(iterations=np.int64(3), alpha_step=np.int32(5)).alpha_at(6) \
        == pytest.approx(0.7)  # the default decay


@pytest.mark.parametrize("method", ["privsyn", "dpsyn"])
def test_unknown_mechanism_is_refused_at_construction(method):
    with pytest.raises(PrivacyParameterError, match="mechanism 'exponential'"):
        Synthesizer(1.0, 1e-9, backend="cpu", method=method, mechanism="exponential")


@pytest.mark.parametrize("bad", [0, -1, 1.5, 2.0, True, "2", float("nan")])
def test_sensitivity_must_be_a_positive_integer(bad):
    with pytest.raises(PrivacyParameterError, match="sensitivity"):
        Synthesizer(1.0, 1e-9, backend="cpu", sensitivity=bad)


@pytest.mark.parametrize("where", ["synthesizer", "schema"])
def test_more_records_per_individual_than_a_table_holds_is_refused_before_spending(where):
    # 2^55 records per individual made the noise past 64 bits at random, after charges
    df, schema = small_table(300)
    big = 2 ** 31  # one more than a table's most rows
    if where == "synthesizer":
        with pytest.raises(PrivacyParameterError, match="at most 2147483647"):
            Synthesizer(1.0, 1e-9, backend="cpu", sensitivity=big)
        with pytest.raises(PrivacyParameterError, match=r"\(56 digits\)"):
            Synthesizer(1.0, 1e-9, backend="cpu", sensitivity=10 ** 55)
        with pytest.raises(PrivacyParameterError, match="bits"):  # past str()'s digits
            Synthesizer(1.0, 1e-9, backend="cpu", sensitivity=10 ** 5000)
        return
    schema["max_records_per_individual"] = big
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    with pytest.raises(SchemaError, match=r"max_records_per_individual must be an integer in"):
        syn.fit(df, schema)
    assert syn.ledger == []


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
    # the scale parameter (sigma, or the Laplace scale t/s) grows with D exactly
    assert syn.ledger[0].scale == pytest.approx(used * sigma1.ledger[0].scale)


def _wide(n=2000):
    r = np.random.default_rng(0)
    a = r.integers(0, 5, n)
    return pd.DataFrame({"a": a, "b": a, "c": (a + r.integers(0, 2, n)) % 5,
                         "d": r.integers(0, 40, n)}), {"columns": {
        x: {"type": "numeric", "integer": True, "min": 0, "max": k - 1, "bins": k}
        for x, k in (("a", 5), ("b", 5), ("c", 5), ("d", 40))}}


def test_privsyn_workload_3way_over_max_cells_is_refused_before_spending():
    df, schema = _wide()
    # (low-count filtering might shrink d enough after the 1-ways are bought; without it
    # the refusal came after 20% of the budget was spent)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False, max_cells=500,
                      filter_low_counts=False, workload={("a", "b", "d"): 2})  # 1000 cells
    with pytest.raises(DataError, match=r"a \(5 values\), b \(5 values\), d \(40 values\) "
                                        r"has 1,000 cells, more than max_cells=500"):
        syn.fit(df, schema)
    assert syn.ledger == []


def test_combined_triangles_stay_within_max_cells():
    # a, b, c depend on each other: their three pairs are selected and would combine into
    # one 125-cell marginal, over max_cells, after the budget is spent
    df, schema = _wide()
    df, schema["columns"] = df[["a", "b", "c"]], {x: schema["columns"][x] for x in "abc"}
    syn = Synthesizer(50.0, 1e-6, backend="cpu", progress=False, max_cells=100, seed=0,
                      iterations=2).fit(df, schema)
    assert {("a", "b"), ("a", "c"), ("b", "c")} <= set(syn.model.selected)
    assert max(e.cells for e in syn.ledger) <= 100
    big = Synthesizer(50.0, 1e-6, backend="cpu", progress=False, seed=0,
                      iterations=2).fit(df, schema)
    assert ("a", "b", "c") in big.model.selected  # the triangle is combined when it fits


def test_check_sample_before_fit_needs_the_schema():
    df, schema = small_table(100)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    with pytest.raises(DPSynError, match="needs the schema"):
        syn.check_sample(10)
    assert syn.check_sample(np.int64(10), schema) == 10
    with pytest.raises(DataError, match="number of rows"):
        syn.check_sample(0, schema)


@pytest.mark.parametrize("eps,delta", [(np.float32(1.0), 1e-9), (1.0, np.float32(1e-9)),
                                       (np.int64(3), np.float64(1e-9))])
def test_numpy_scalars_are_accepted_for_the_budget_and_seed(eps, delta):
    df, schema = small_table(300)
    syn = Synthesizer(eps, delta, seed=np.int64(3), backend="cpu", progress=False,
                      iterations=1).fit(df, schema)
    assert type(syn.settings.epsilon) is float and type(syn.settings.delta) is float
    assert syn.privacy_report()["epsilon"] == float(eps)


@pytest.mark.parametrize("eps", [1e300, 10 ** 400, 1e25])
def test_absurd_epsilon_is_refused_at_construction(eps):
    with pytest.raises(PrivacyParameterError, match=r"^epsilon must be at most"):
        Synthesizer(eps, 1e-9, backend="cpu")


@pytest.mark.parametrize("weight", [1e100, 1e308, 1e-300, 5e-324, 1e4, 1e-4])
def test_workload_weights_past_their_range_are_refused_at_construction(weight):
    # a weight of 1e100 left the other marginals noise past 64 bits, found after the
    # first charges; 1e308 overflowed to a traceback
    with pytest.raises(DPSynError, match=r"workload weight for \('a',\) must be between"):
        Synthesizer(1.0, 1e-9, backend="cpu", workload={"a": weight})
    for w in (1e3, 1e-3):
        Synthesizer(1.0, 1e-9, backend="cpu", workload={"a": w})


@pytest.mark.parametrize("eps,delta,sensitivity", [(1e-30, 1e-20, 1), (1e-9, 1e-9, 1),
                                                   (1e-3, 1e-9, 2 ** 31 - 1)])
def test_a_budget_that_buys_only_noise_past_any_table_is_refused_at_construction(
        eps, delta, sensitivity):
    # (1e-30, 1e-20) drew noise past 64 bits after the first charges
    with pytest.raises(PrivacyParameterError, match="buys too little") as e:
        Synthesizer(eps, delta, backend="cpu", progress=False, sensitivity=sensitivity)
    # checked before the schema names its bound: "1 record(s) per individual" misled
    # where the schema said 2
    assert ("record" in str(e.value)) == (sensitivity > 1)


@pytest.mark.parametrize("schema", [None, 42, 1.5, ["a"]])
def test_schema_of_the_wrong_type_is_a_schema_error(schema):
    from gpu_dpsyn.errors import SchemaError
    df, _ = small_table(100)
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    with pytest.raises(SchemaError, match="schema must be"):
        syn.fit(df, schema)
    if schema is not None:  # (None: check_sample says it needs the schema)
        with pytest.raises(SchemaError, match="schema must be"):
            syn.check_sample(10, schema)
    assert syn.ledger == []


def _relabel(df, labels):
    df = df.copy()
    df.columns = labels
    return df


@pytest.mark.parametrize("labels,match", [
    (["color", "color", "score"], r"duplicate column label\(s\) \['color'\]"),
    (["color", "size", "score", "color"], r"duplicate column label\(s\) \['color'\]"),
    (["color", "size", 7], r"column labels of the (public )?table must be strings, "
                               r"got 7 \(int\)"),
])
@pytest.mark.parametrize("where", ["data", "public"])
def test_bad_column_labels_are_refused_before_spending(labels, match, where):
    df, schema = small_table(300)
    bad = _relabel(df.assign(extra=df["color"]) if len(labels) == 4 else df, labels)
    if where == "data":  # a schema column named "7" must not match the label 7 either
        schema["columns"]["7"] = schema["columns"].pop("score")
    syn = Synthesizer(1.0, 1e-9, backend="cpu", progress=False)
    with pytest.raises(DataError, match=match):
        syn.fit(bad, schema) if where == "data" else syn.fit(df, schema, public=bad)
    assert syn.ledger == []


def test_a_noisy_row_count_warns_from_the_estimate_and_noise_levels():
    from gpu_dpsyn.errors import RowCountWarning
    df, schema = small_table(3000)
    kw = dict(seed=0, iterations=1, progress=False, backend="cpu")
    syn = Synthesizer(1e-4, 1e-9, **kw).fit(df, schema)
    with pytest.warns(RowCountWarning, match=rf"estimated at {syn.model.n_estimate:,} with a "
                                             r"standard error of about [\d,]+ .*--rows.*"
                                             r"gpu-dpsyn check"):
        syn.sample()  # (and where rows the schema's rule drops went: a small estimate)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RowCountWarning)
        syn.sample(500)  # the size was chosen: nothing to warn about
        Synthesizer(1.0, 1e-9, **kw).fit(df, schema).sample()
    # the standard error comes from noise levels and domains only, never the data
    se = [Synthesizer(0.01, 1e-9, method="dpsyn", **kw).fit(d, schema).model.n_standard_error
          for d in (df, small_table(1000, seed=1)[0])]
    assert se[0] == se[1] > 0


def test_an_estimated_row_count_beyond_memory_names_the_estimate(monkeypatch):
    from gpu_dpsyn.data.schema import DEFAULT_MAX_ROWS
    df, schema = small_table(300)
    monkeypatch.setattr("gpu_dpsyn.backends.numpy.ops.NumpyBackend.free_memory",
                        lambda self: 2 ** 26)  # 64 MiB: the default maximum does not fit
    for seed in range(20):  # some noise draws at this epsilon pass the maximum
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the clamp's RowCountWarning
            syn = Synthesizer(2e-7, 1e-9, seed=seed, iterations=1, progress=False,
                              backend="cpu", adaptive_rounds=0).fit(df, schema)
        if syn.model.n_estimate == DEFAULT_MAX_ROWS:
            break
    # the noise made it absurd (past 10^7): clamped to the public maximum
    assert syn.model.n_estimate == DEFAULT_MAX_ROWS
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(DataError, match=rf"^the row count is estimated at "
                                            rf"{syn.model.n_estimate:,} .*needs about .*--rows N"):
            syn.sample()
    assert len(syn.sample(100)) == 100


@pytest.mark.parametrize("method, spec", [
    ("privsyn", {"k": {"type": "numeric", "integer": True, "min": 0, "max": 9}}),
    ("dpsyn", {"k": {"type": "categorical", "values": list("abc")},
               "j": {"type": "categorical", "values": list("abc")}})])
def test_check_plan_refuses_a_marginal_past_max_cells_before_the_table_is_read(method, spec):
    # fit refused it only after reading and encoding the table
    syn = Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False, method=method,
                      max_cells=4 if method == "privsyn" else 5)
    with pytest.raises(DPSynError, match="more than max_cells"):
        syn.check_plan({"columns": spec})


def test_a_large_delta_is_warned_of():
    from gpu_dpsyn.errors import LargeDeltaWarning
    with pytest.warns(LargeDeltaWarning, match="delta=0.5"):
        Synthesizer(1.0, 0.5, backend="cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDeltaWarning)
        Synthesizer(1.0, 1e-6, backend="cpu")
