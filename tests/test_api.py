import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import small_table
from gpu_dpsyn import LargeDomainWarning, Synthesizer
from gpu_dpsyn.errors import BackendError, DataError, DPSynError, PrivacyParameterError
from gpu_dpsyn.evaluation.evaluate import mean_tvd
from gpu_dpsyn.privacy import eps_delta_to_rho

COLS = ["month", "dep_delay", "carrier", "origin", "distance", "sched_dep_time"]


@pytest.fixture
def table(flights, flights_schema):
    sub = {"columns": {c: flights_schema[c].to_dict() for c in COLS}}
    return flights[COLS], sub


def _fit(table, **kw):
    df, schema = table
    kw = {"seed": 11, "iterations": 10, "progress": False, "backend": "cpu", "method": "dpsyn",
          **kw}
    return Synthesizer(2.0, 1e-6, **kw).fit(df, schema)


def test_end_to_end_shape_dtypes_and_quality(table):
    df, schema = table
    syn = _fit(table)
    out = syn.sample()
    assert list(out.columns) == COLS
    assert abs(len(out) - len(df)) < 0.02 * len(df)  # DP estimate of the row count
    assert out["month"].dtype == np.int64 and str(out["dep_delay"].dtype) == "Int64"
    assert set(out["carrier"].unique()) <= set(schema["columns"]["carrier"]["values"])
    assert out["dep_delay"].isna().any()  # missing values are synthesized too
    res = mean_tvd(df, out, syn.model.schema, ways=(1, 2))
    assert res[1] < 0.03 and res[2] < 0.08, res
    assert syn.last_run.history[-1] < syn.last_run.history[0]


def test_ledger_spends_exactly_the_budget(table):
    syn = _fit(table)
    k = len(COLS) + len(COLS) * (len(COLS) - 1) // 2
    assert len(syn.ledger) == k
    rep = syn.privacy_report()
    assert rep["mechanism"] == "gaussian"
    assert sum(e.rho for e in syn.ledger) == pytest.approx(eps_delta_to_rho(2.0, 1e-6))
    assert "(2, 1e-06)-DP" in rep["guarantee"]
    assert {tuple(e.columns) for e in syn.ledger} >= {("month", "carrier"), ("sched_dep_time",)}


def test_same_seed_same_output(table):
    a = _fit(table).sample(2000)
    b = _fit(table).sample(2000)
    c = _fit(table, seed=12).sample(2000)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


@pytest.mark.parametrize("given", [(2, 1e-6), (np.float32(2.0), 1e-6), (2.0, np.float64(1e-6))])
def test_same_budget_written_another_way_same_output(table, given):
    """epsilon 2 and 2.0 are one budget: a seeded run must give the same bytes (the
    seeded key mixes in the parameters as text, where 2 and 2.0 differ)."""
    df, schema = table
    kw = dict(seed=11, iterations=2, progress=False, backend="cpu", method="dpsyn")
    a = Synthesizer(2.0, 1e-6, **kw).fit(df.iloc[:3000], schema).sample(500)
    b = Synthesizer(*given, **kw).fit(df.iloc[:3000], schema).sample(500)
    pd.testing.assert_frame_equal(a, b)



def test_sensitivity_as_a_numpy_integer_same_output(table):
    """sensitivity=np.int64(2) (from an array of settings) is sensitivity 2: the seeded key
    once read it as the text "2" where the int is 2, and the same run wrote other rows."""
    df, schema = table
    kw = dict(seed=11, iterations=2, progress=False, backend="cpu", method="dpsyn")
    a = Synthesizer(2.0, 1e-6, sensitivity=2, **kw).fit(df.iloc[:3000], schema).sample(500)
    b = Synthesizer(2.0, 1e-6, sensitivity=np.int64(2), **kw).fit(df.iloc[:3000], schema)
    pd.testing.assert_frame_equal(a, b.sample(500))
    assert type(b.settings.sensitivity) is int

def test_no_seed_gives_fresh_randomness(table):
    df, schema = table
    small = df.iloc[:2000]
    a = Synthesizer(1, 1e-6, iterations=2, progress=False).fit(small, schema).sample(500)
    b = Synthesizer(1, 1e-6, iterations=2, progress=False).fit(small, schema).sample(500)
    assert not a.equals(b)


def test_rows_argument(table):
    syn = _fit(table, iterations=2)
    assert len(syn.sample(1234)) == 1234
    for bad in (0, -5, 2.5, "10", 2 ** 40):
        with pytest.raises(DataError, match="number of rows"):
            syn.sample(bad)
    syn.backend.free_memory = lambda: 2 ** 30  # pretend 1 GiB is free
    from gpu_dpsyn.generate import sample as sampling
    need = 10 ** 8 * (sum(sampling.code_dtype(d).itemsize for d in syn.model.domain)
                      + sampling.WORK_BYTES_PER_ROW
                      + sampling.OUTPUT_BYTES_PER_CELL * len(syn.model.domain)) / 2 ** 30
    with pytest.raises(DataError, match=rf"needs about {need:.1f} GiB of CPU memory, only 1.0 "
                                        "GiB"):
        syn.sample(10 ** 8)
    assert need > 1.0  # the check refuses it: not vacuous


def test_fit_errors_before_spending(table):
    df, schema = table
    syn = Synthesizer(1, 1e-6, progress=False, backend="cpu")
    with pytest.raises(DataError, match="missing from the data"):
        syn.fit(df.drop(columns=["sched_dep_time"]), schema)
    assert syn.ledger == []  # nothing was measured
    with pytest.raises(DPSynError, match="before sample"):
        syn.sample()
    syn.fit(df, schema)
    with pytest.raises(DPSynError, match="already fitted"):
        syn.fit(df, schema)


@pytest.mark.parametrize("kw,err,match", [
    ({"epsilon": 0}, PrivacyParameterError, "epsilon"),
    ({"delta": 1.5}, PrivacyParameterError, "delta"),
    ({"method": "magic"}, DPSynError, "method"),
    ({"backend": "tpu"}, BackendError, "backend"),
])
def test_constructor_errors(kw, err, match):
    args = {"epsilon": 1.0, "delta": 1e-9, **kw}
    with pytest.raises(err, match=match):
        Synthesizer(args.pop("epsilon"), args.pop("delta"), **args)


def test_gpu_backend_without_device_is_a_clear_error():
    from gpu_dpsyn.backends import gpu_available
    if gpu_available():
        pytest.skip("a GPU is present")
    with pytest.raises(BackendError, match="CUDA device"):
        Synthesizer(1.0, 1e-9, backend="gpu")


def _huge_pair(flights):
    df = flights[["flight", "dep_time", "origin"]]
    schema = {"columns": {"flight": {"type": "numeric", "integer": True, "min": 1, "max": 9999,
                                     "bins": 5000},
                          "dep_time": {"type": "numeric", "integer": True, "min": 0,
                                       "max": 2400, "nullable": True},
                          "origin": {"type": "categorical", "values": ["EWR", "JFK", "LGA"]}}}
    return df, schema


def test_huge_domain_is_refused_by_dpsyn(flights):
    # DPSyn measures every pair: one past max_cells is refused before anything is spent
    df, schema = _huge_pair(flights)
    syn = Synthesizer(1, 1e-9, progress=False, max_cells=100_000, method="dpsyn")
    with pytest.raises(DataError, match=r"flight \(5000 values\), dep_time \(33 values\) has 165,000 cells"):
        syn.fit(df, schema)
    assert syn.ledger == []
    schema["columns"]["flight"]["bins"] = 50  # nothing was spent: the same object may retry
    assert len(syn.fit(df, schema).ledger) > 0


def test_privsyn_leaves_a_huge_pair_out_and_says_so_before_spending(flights):
    # PrivSyn chooses among the pairs: one past max_cells cannot be chosen, so it is left
    # out of the candidates (the columns' joint distribution is not modelled), with a
    # warning from the schema alone, raised before the first charge; the table is not
    # refused (movielens' title x genres was)
    df, schema = _huge_pair(flights)
    syn = Synthesizer(1, 1e-9, progress=False, max_cells=100_000, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", LargeDomainWarning)
        with pytest.raises(LargeDomainWarning, match=r"'flight' \(5,000 values\) and "
                           r"'dep_time' \(33 values\).*165,000 cells.*max_cells=100,000"):
            syn.fit(df, schema)
    assert syn.ledger == []  # warned before anything was spent
    syn = Synthesizer(1, 1e-9, progress=False, max_cells=100_000, seed=0)
    with pytest.warns(LargeDomainWarning, match="leaves that pair out"):
        syn.fit(df, schema)
    assert ("flight", "dep_time") not in syn.model.selected
    out = syn.sample(2000)
    assert list(out.columns) == list(df.columns) and len(out) == 2000


def test_privsyn_refuses_a_workload_pair_past_max_cells_before_spending(flights):
    # a pair the user asked for is not left out quietly: refused, nothing spent
    df, schema = _huge_pair(flights)
    syn = Synthesizer(1, 1e-9, progress=False, max_cells=100_000,
                      workload={("flight", "dep_time"): 2.0})
    with pytest.raises(DataError, match="165,000 cells"):
        syn.fit(df, schema)
    assert syn.ledger == []


def test_small_mixed_table_round_trip():
    df, schema = small_table(3000)
    out = Synthesizer(5, 1e-6, seed=1, progress=False, iterations=20).fit(df, schema).sample()
    assert out["size"].between(0, 8).all() and out["score"].between(0, 10).all()
    # size is determined by color in the data (size // 3 == color index): mostly kept
    idx = out["color"].map({"red": 0, "green": 1, "blue": 2})
    assert (out["size"] // 3 == idx).mean() > 0.9


def test_report_says_how_marginals_were_chosen():
    from conftest import small_table
    df, schema = small_table(400)
    kw = dict(seed=1, backend="cpu", progress=False, iterations=2)
    rep = Synthesizer(1.0, 1e-6, **kw).fit(df, schema).privacy_report()
    assert rep["selection"].startswith("private") and "indif" in {e.label for e in
                                                                   Synthesizer(1.0, 1e-6, **kw)
                                                                   .fit(df, schema).ledger}
    one = {"columns": {"color": schema["columns"]["color"]}}
    syn = Synthesizer(1.0, 1e-6, **kw).fit(df[["color"]], one)
    assert "indif" not in {e.label for e in syn.ledger}
    assert syn.privacy_report()["selection"].startswith("none needed")  # not "charged"


def test_a_fit_that_fails_after_a_charge_stays_spent(table, monkeypatch):
    """The accountant is held before the first charge: a later failure must not let the
    same Synthesizer fit (and spend) again."""
    from gpu_dpsyn.errors import DPSynError
    from gpu_dpsyn.measure import fit as measuring
    df, schema = table

    def broken(*a, **k):
        raise RuntimeError("after the charges")
    monkeypatch.setattr(measuring, "total_standard_error", broken)
    syn = Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False)
    with pytest.raises(RuntimeError):
        syn.fit(df.head(500), schema)
    assert len(syn.ledger) > 2  # charged
    rep = syn.privacy_report()  # still reported: what was spent, and on what
    assert rep["unit_of_privacy"] and len(rep["measurements"]) == len(syn.ledger)
    assert "failed after spending" in repr(syn)
    monkeypatch.undo()
    with pytest.raises(DPSynError, match="already fitted"):
        syn.fit(df.head(500), schema)


def test_row_count_warnings_point_at_the_callers_line(table):
    """A RowCountWarning names the line of the user's fit() or sample() call."""
    import warnings
    df, schema = table
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        syn = Synthesizer(1e-4, 1e-9, seed=0, backend="cpu", progress=False,
                          adaptive_rounds=0).fit(df.head(300), {**schema, "max_rows": 400})
        syn.sample()
    rows = [w for w in got if w.category.__name__ == "RowCountWarning"]
    assert rows and all(w.filename == __file__ for w in rows), \
        [(w.filename, str(w.message)[:60]) for w in rows]


@pytest.mark.parametrize("kw,plain", [
    ({"workload": {("carrier", "origin"): np.int64(2)}},
     {"workload": {("carrier", "origin"): 2}}),
    ({"prior_tolerance": np.float32(0.5)}, {"prior_tolerance": 0.5}),
    ({"quantile_share": np.float32(0.25)}, {"quantile_share": 0.25}),
])
def test_numpy_scalar_settings_are_their_numbers(kw, plain):
    """A weight from np.arange, a tolerance in float32: the numbers they hold, as epsilon
    takes them (they were refused as "must be a positive number, got np.int64(2)")."""
    from gpu_dpsyn.config import Settings
    a, b = Settings(1.0, 1e-9, **kw), Settings(1.0, 1e-9, **plain)
    assert a == b and repr(a) == repr(b)


@pytest.mark.parametrize("kw", [{"workload": {("carrier", "origin"): 10**400}},
                                {"prior_tolerance": 10**400}])
def test_a_number_past_float64_is_refused_by_name(kw):
    """An int too large for a float: the setting's one line, not an OverflowError."""
    from gpu_dpsyn.config import Settings
    with pytest.raises(DPSynError, match="workload weight|prior_tolerance"):
        Settings(1.0, 1e-9, **kw)


def test_threads_sampling_one_synthesizer_get_distinct_streams():
    """sample() and sample_to() take fresh call words by _reserve_calls: two threads that
    read the counter before either wrote it drew the same stream (an API probe's reading;
    a slow read of the counter makes it happen every time)."""
    import threading
    import time

    class Slow(Synthesizer):
        @property
        def _calls(self):
            time.sleep(0.02)
            return self.__dict__["_slow_calls"]

        @_calls.setter
        def _calls(self, v):
            self.__dict__["_slow_calls"] = v

    syn = Slow(1.0, 1e-9, progress=False)
    got = []
    threads = [threading.Thread(target=lambda: got.append(syn._reserve_calls(1)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(got) == [0, 1, 2, 3], got
