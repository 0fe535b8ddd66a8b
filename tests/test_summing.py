"""Seeded outputs do not hang on the Python version's sum(): CPython 3.12 compensates
sums of floats (Neumaier), 3.11 does not, and an H100 on 3.12 wrote another flights
table than a 3.11 machine from the same noise (consistency's weighted targets)."""
import builtins
import math

import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.core.summing import left_sum

_plain_sum = builtins.sum


def compensated_sum(iterable, /, start=0):
    """sum() as Python 3.12 adds floats (correctly rounded here: differs from a left
    fold in the same last bits), anything else as usual."""
    items = list(iterable)
    if items and all(type(x) is float for x in items) and type(start) in (int, float):
        return math.fsum([float(start), *items])
    return _plain_sum(items, start)


def test_left_sum_is_a_plain_left_fold():
    values = [1e16, 1.0, -1e16, 0.1, 0.2]
    want = 0.0
    for v in values:
        want += v
    assert left_sum(values) == want == 0.30000000000000004
    assert compensated_sum(values) == math.fsum(values) != want  # the versions differ


@pytest.mark.parametrize("cols", [["month", "carrier", "origin", "distance", "sched_dep_time",
                                   "dep_delay"]])
def test_seeded_output_is_the_same_with_either_pythons_sum(flights, flights_schema,
                                                           monkeypatch, cols):
    df = flights[cols].iloc[:6000]
    schema = {"columns": {c: flights_schema[c].to_dict() for c in cols}}
    kw = dict(seed=3, iterations=4, progress=False)

    def run():
        syn = Synthesizer(1.0, 1e-9, backend="cpu", **kw).fit(df, schema)
        return syn.sample(), [e.sigma for e in syn.ledger], \
            [m.values.tobytes() for m in syn.model.marginals]

    a = run()
    monkeypatch.setattr(builtins, "sum", compensated_sum)
    b = run()
    pd.testing.assert_frame_equal(a[0], b[0])
    assert a[1] == b[1] and a[2] == b[2]
