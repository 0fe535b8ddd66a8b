"""infer-schema leaves out a column that holds the individual's ids (a manager's id
beside each employee's): the output numbers the id column 1..n, so the listed values would
publish real ids in the schema and the release, each pointing to no synthetic row."""
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn.data.inference import infer_schema_with_summary


def _draft(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, lines = infer_schema_with_summary(df, **kw)
    return s, {x.split()[0]: x for x in lines}


def _payroll(text: bool, n: int = 3000, seed: int = 0) -> pd.DataFrame:
    r = np.random.default_rng(seed)
    ids = r.permutation(np.arange(100001, 100001 + n))
    boss = r.choice(ids[:200], n)
    ids, boss = ([f"E{i}" for i in ids], [f"E{i}" for i in boss]) if text else (ids, boss)
    return pd.DataFrame({"employee_id": ids, "manager_id": boss,
                         "grade": r.integers(1, 6, n), "team": r.choice(list("abcd"), n)})


@pytest.mark.parametrize("text", [False, True])
def test_a_column_of_the_individuals_ids_is_left_out(text):
    # an HR table's manager_id (800 of 20,000 employee ids) was listed as 800 values:
    # at eps 1 the release held real employee ids, none of them a synthetic row's
    df = _payroll(text)
    s, lines = _draft(df)
    assert s["employee_id"].kind == "id"
    assert "manager_id" in s.ignored and "manager_id" not in s.names, lines["manager_id"]
    line = lines["manager_id"]
    assert "'employee_id'" in line and "1..n" in line and "ignored" in line, line


def test_columns_that_only_share_a_few_values_with_the_ids_stay():
    # ids numbered 1..n hold every small count: a grade 1..5 is no reference, nor are
    # codes beside them that are mostly no id
    r = np.random.default_rng(1)
    df = pd.DataFrame({"pid": np.arange(1, 3001), "grade": r.integers(1, 6, 3000),
                       "code": r.choice(np.arange(2000, 9000, 7), 3000)})
    s, lines = _draft(df)
    assert s["pid"].kind == "id" and not s.ignored
    assert s["grade"].kind == "categorical" and "code" in s.names


def test_integers_inside_a_run_of_numbered_ids_stay_unless_named_as_ids():
    # ids numbered 1..n hold every integer up to n: an income in hundreds (2,000-8,900)
    # or a code beside 10,000 of them is no reference, and was left out; a column named
    # as an id there still is one
    r = np.random.default_rng(1)
    n = 10000
    df = pd.DataFrame({"pid": np.arange(1, n + 1), "income": r.integers(20, 90, n) * 100,
                       "code": r.choice(np.arange(2000, 9000, 7), n),
                       "parent_id": r.choice(np.arange(1, n + 1, 37), n)})
    s, lines = _draft(df)
    assert s["pid"].kind == "id"
    assert "income" in s.names and "code" in s.names, (lines["income"], lines["code"])
    assert "parent_id" in s.ignored, lines["parent_id"]


def test_codes_named_as_ids_beside_numbered_ids_stay_unless_named_as_a_person():
    # a review's finding: beside employee ids numbered 1..5,000, a department code
    # (dept_id, 10..300) and a product id were left out as references to employees; a
    # column naming another person (reports_to, supervisorId) still is one
    r = np.random.default_rng(2)
    n = 5000
    df = pd.DataFrame({"employee_id": np.arange(1, n + 1),
                       "dept_id": r.choice(np.arange(10, 310, 10), n),
                       "product_id": r.choice(r.choice(np.arange(1, 4000), 60), n),
                       "reports_to": r.choice(np.arange(1, n + 1, 41), n),
                       "supervisorId": r.choice(np.arange(3, n + 1, 53), n)})
    s, lines = _draft(df)
    assert "dept_id" in s.names and "product_id" in s.names, (lines["dept_id"],
                                                                lines["product_id"])
    assert {"reports_to", "supervisorId"} <= set(s.ignored), lines
