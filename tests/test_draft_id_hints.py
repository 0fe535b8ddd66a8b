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


def _schools(n=8000, seed=1):
    r = np.random.default_rng(seed)
    school = r.integers(1, 201, n)  # 200 schools numbered 1..200, 40 students each
    return pd.DataFrame({"school_id": school, "minutes": r.integers(1, 201, n),
                         "lunch": r.choice(["Y", "N"], n)})


def test_integer_codes_named_as_ids_are_listed_not_binned():
    """A student table's school_id (200 schools, numbered 1..200) was drafted in 32 bins
    of about 6 schools, decoded evenly among them: at eps 1 on 40,000 students the
    correlation of the schools' free-lunch shares, real against synthetic, was 0.40
    (seeds 1, 2); listed, 0.89 and 0.92.  A quantity of as many values is still binned."""
    s, lines = _lines(_schools())
    assert s["school_id"].kind == "categorical"
    assert s["school_id"].values == list(range(1, 201))
    assert s["minutes"].kind == "numeric"


def _persons(n=6000, seed=2):
    """A census person table: 2,500 households numbered 1..2,500, a few persons each."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({"person_id": np.arange(1, n + 1),
                         "household_id": np.sort(r.integers(1, 2501, n)),
                         "age": r.integers(0, 95, n), "sex": r.choice(["F", "M"], n)})


def test_a_binned_group_id_is_told_to_be_left_out():
    """A census table's household_id (9,000 households, 2-14 persons each) was drafted in
    32 equal bins, its line saying only 'draft again with --id household_id' if it names
    the person: followed as drafted, each synthetic person drew a household number evenly
    in its bin (8,220 distinct among 21,785 rows), numbers that link no one.  With --id
    naming the person, the line said nothing at all."""
    for ids in ((), ("person_id",)):
        s, lines = _lines(_persons(), id_columns=ids)
        line = _line(lines, "household_id")
        assert s["household_id"].kind == "numeric"
        assert "--ignore household_id" in line and "link no" in line
        assert ("--id household_id" in line) == (not ids)


def test_a_listed_id_is_not_told_to_be_left_out():
    _, lines = _lines(_schools())
    assert "--ignore" not in _line(lines, "school_id")


def _trips(n=4000, seed=3):
    """A taxi table: pickup and drop-off zones numbered 1..265, a vendor, a store."""
    r = np.random.default_rng(seed)
    return pd.DataFrame({"PULocationID": r.integers(1, 266, n),
                         "DOLocationID": r.integers(1, 266, n),
                         "store_id": r.choice([f"S{i}" for i in range(150)], n),
                         "fare": r.gamma(2.0, 8.0, n).round(1)})


def test_a_place_named_as_an_id_is_not_offered_as_the_individual():
    """A taxi table's PULocationID (265 zones) was told 'if it names the person each row
    is about, draft again with --id PULocationID', and the fit then warned that it is
    named like an identifier with no individual named: a zone, a station or a store is
    no person, so neither says so.  A person's id still is."""
    _, lines = _lines(_trips())
    for name in ("PULocationID", "DOLocationID", "store_id"):
        assert "--id" not in _line(lines, name), _line(lines, name)
    _, lines = _lines(_claims())
    assert "--id patient_id" in _line(lines, "patient_id")


def test_a_place_named_as_an_id_draws_no_individual_warning_at_fit():
    from gpu_dpsyn import Synthesizer
    from gpu_dpsyn.data.inference import infer_schema
    df = _trips(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        schema = infer_schema(df)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        Synthesizer(1.0, 1e-9, seed=0, backend="cpu", progress=False, adaptive_rounds=0,
                    iterations=2).fit(df, schema)
    assert not any("named like an identifier" in str(w.message) for w in seen), \
        [str(w.message) for w in seen]


def test_a_persons_id_named_under_a_place_is_still_a_persons():
    # any place word anywhere made the name a place's: 'hospital_patient_id' and
    # 'school_student_id' were no longer warned of at fit as a person's id
    from gpu_dpsyn.data.values import person_id_name, place_name
    for name in ("hospital_patient_id", "school_student_id", "StorePersonID",
                 "clinic_member_uid", "patient_id", "ward_patient_ids"):
        assert not place_name(name) and person_id_name(name), name
    for name in ("PULocationID", "store_id", "station id", "hospital_site_id",
                 "zone_id_number", "ward"):
        assert place_name(name), name
    assert not person_id_name("store_id") and not person_id_name("PULocationID")
