"""An end-to-end privacy audit: the whole default fit and sample, repeated on two
neighbouring tables, with a statistic of the synthetic table (how many of 6,000
sampled rows hold the value that only the added individual has) and a Clopper-Pearson lower bound on the
epsilon that separates the two.  It must stay below the claim, for an individual of one
record (D = 1) and of two (D = 2, enforced through an id column); and it must exceed the
claim for a weakened run that under-declares what an individual contributes, so the
audit has the power to see a broken guarantee.  Seeded runs: the test is deterministic."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from test_audit import clopper_pearson

EPSILON, DELTA = 1.0, 1e-6
RUNS = 500  # per table; each run a fit and a sample
BASE = 600  # rows of D
SAMPLE = 6000  # rows sampled: enough that the sampling adds little to the noise
CONFIDENCE = 1e-6
THRESHOLDS = (5, 10, 20, 40, 80, 160, 240)  # rows holding "z", of SAMPLE


def tables(records: int, declared: int, with_id: bool = True):
    """(D, D', schema): D' is D with one more individual of `records` records, all in
    the value "z" that no one in D has; the schema declares `declared` records each."""
    base = pd.DataFrame({"pid": np.arange(BASE), "a": ["x", "x", "y"] * (BASE // 3),
                         "b": ["p", "q"] * (BASE // 2)})
    extra = pd.DataFrame({"pid": [999] * records, "a": ["z"] * records,
                          "b": ["q"] * records})
    cols = {"a": {"type": "categorical", "values": ["x", "y", "z"]},
            "b": {"type": "categorical", "values": ["p", "q"]}}
    if with_id:
        cols = {"pid": {"type": "id"}, **cols}
    else:
        base, extra = base.drop(columns="pid"), extra.drop(columns="pid")
    schema = {"columns": cols, "max_records_per_individual": declared}
    return base, pd.concat([base, extra], ignore_index=True), schema


def statistic(df, schema, seed: int) -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        syn = Synthesizer(EPSILON, DELTA, seed=seed, backend="cpu", progress=False)
        out = syn.fit(df, schema).sample(SAMPLE)  # a public size
    return int((out["a"] == "z").sum())


def audit(records: int, declared: int, with_id: bool = True) -> float:
    """Largest Clopper-Pearson lower bound on epsilon over the events {stat >= j}, in
    either direction (D' more likely, or D)."""
    d0, d1, schema = tables(records, declared, with_id)
    y0 = np.array([statistic(d0, schema, s) for s in range(RUNS)])
    y1 = np.array([statistic(d1, schema, RUNS + s) for s in range(RUNS)])
    alpha = CONFIDENCE / (4 * len(THRESHOLDS))  # Bonferroni over bounds and events
    best = -math.inf
    for j in THRESHOLDS:
        for hit, other in (((y1 >= j), (y0 >= j)), ((y0 < j), (y1 < j))):
            lo = clopper_pearson(int(hit.sum()), RUNS, alpha)[0]
            hi = clopper_pearson(int(other.sum()), RUNS, alpha)[1]
            if lo - DELTA > 0:
                best = max(best, math.log((lo - DELTA) / hi))
    return best


@pytest.mark.slow
@pytest.mark.parametrize("records", [1, 2])
def test_the_whole_release_stays_within_its_claim(records):
    assert audit(records, declared=records) <= EPSILON


@pytest.mark.slow
def test_the_audit_catches_an_under_declared_individual():
    # 40 records of one individual, declared as one and not bounded (no id column): the
    # release is far less private than it claims
    assert audit(40, declared=1, with_id=False) > EPSILON


def audit_values():  # for a reader: the bounds themselves (python tests/test_audit_end_to_end.py)
    return {"D=1": audit(1, 1), "D=2": audit(2, 2), "control": audit(40, 1, with_id=False)}


if __name__ == "__main__":
    print(audit_values())
