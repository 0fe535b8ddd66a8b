"""infer-schema's hints about columns named like identifiers, on tables of several kinds
(claims, schools): what a curator reads beside each column."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.data.inference import infer_schema_with_summary


def _lines(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema_with_summary(df, **kw)


def _line(lines, name):
    return next(x for x in lines if x.strip().startswith(name + " "))


def _claims(n=3000, seed=0):
    r = np.random.default_rng(seed)
    return pd.DataFrame({"patient_id": r.integers(10**6, 10**6 + 600, n),
                         "procedure_code": r.choice(r.integers(10000, 99999, 300), n),
                         "sex": r.choice(["F", "M"], n)})


def test_no_other_id_is_suggested_once_id_names_the_individual():
    """A claims table drafted with --id patient_id: procedure_code (300 codes, named
    like an identifier by its last word) was told 'draft again with --id
    procedure_code': followed, a procedure would have replaced the patient as the unit
    of privacy."""
    _, lines = _lines(_claims(), id_columns=("patient_id",))
    assert "--id" not in _line(lines, "procedure_code")


def test_without_id_the_repeated_identifier_is_still_hinted():
    _, lines = _lines(_claims())
    assert "--id patient_id" in _line(lines, "patient_id")
