"""infer-schema leaves out text that identifies people: a column with a value for each
individual (names, e-mails), or one named as personal data with more values than a
category list holds, goes to "ignored_columns" instead of being listed value by value
(listed, a fit copies the names out)."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from gpu_dpsyn import Synthesizer
from gpu_dpsyn.cli import main
from gpu_dpsyn.data.inference import infer_schema_with_summary


def _draft(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return infer_schema_with_summary(df, **kw)


def _staff(people: int = 300, seed: int = 0) -> pd.DataFrame:
    """Several rows a person: an id, a name each, a department of five."""
    rng = np.random.default_rng(seed)
    k = rng.integers(1, 5, people)
    who = np.repeat(np.arange(people), k)
    return pd.DataFrame({"employee_id": [f"E{10000 + p}" for p in who],
                         "name": [f"Person {p}" for p in who],
                         "department": rng.choice(["Sales", "HR", "Finance", "Ops", "IT"],
                                                  len(who)),
                         "age": rng.integers(20, 66, len(who))})


def test_a_text_column_with_a_value_for_each_individual_is_ignored():
    df = _staff()
    s, lines = _draft(df, id_columns=("employee_id",))
    assert "name" not in s.names and s.ignored == ["name"]
    assert "name.ignored" in s.drafted
    line = next(x for x in lines if x.strip().startswith("name "))
    assert "ignored" in line and "300 distinct" in line and "'employee_id'" in line
    assert "department" in s.names and s["department"].kind == "categorical"
    # the same table drafted with the individual unknown: the name repeats with its rows,
    # and nothing else says it is personal, so it stays (named otherwise than personal)
    plain = df.rename(columns={"name": "label"}).drop(columns="employee_id")
    s2, _ = _draft(plain)
    assert "label" in s2.names and s2["label"].kind == "categorical"


def test_fewer_values_than_individuals_stay_a_category():
    rng = np.random.default_rng(1)
    df = _staff(600)
    df["code"] = [f"C{x}" for x in rng.integers(0, 150, len(df))]  # 150 codes, 600 people
    s, _ = _draft(df, id_columns=("employee_id",))
    assert s["code"].kind == "categorical" and "code" not in s.ignored


@pytest.mark.parametrize("name,personal", [
    ("email", True), ("E-mail", True), ("customer_email", True), ("last name", True),
    ("phone_number", True), ("street address", True), ("patient_name", True),
    ("product_name", False), ("department_name", False), ("address_type", False)])
def test_columns_named_as_personal_data_with_many_values_are_ignored(name, personal):
    values = [f"v{i}@x.org" for i in range(250)] * 2  # each twice: no id rule
    df = pd.DataFrame({name: values, "n": np.arange(500) % 7})
    s, lines = _draft(df)
    assert (name in s.ignored) == personal
    assert (name in s.names) == (not personal)
    if personal:
        line = next(x for x in lines if x.strip().startswith(name))
        assert "personal" in line


def test_a_personal_name_with_few_values_is_kept_with_a_hint():
    df = pd.DataFrame({"first_name": ["Ann", "Bob", "Cy"] * 50, "n": np.arange(150) % 3})
    s, lines = _draft(df)
    assert s["first_name"].kind == "categorical"
    line = next(x for x in lines if x.strip().startswith("first_name"))
    assert "--ignore 'first_name'" in line


def test_the_names_never_reach_the_output(tmp_path):
    df = _staff(200, seed=3)
    data, schema = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["infer-schema", str(data), "--out", str(schema), "--id",
                     "employee_id"]) == 0
        doc = json.loads(schema.read_text())
        assert doc["ignored_columns"] == ["name"]
        out = Synthesizer(4.0, 1e-9, seed=0, progress=False).fit(df, doc).sample()
    assert "name" not in out.columns


@pytest.mark.parametrize("name", ["Telefon", "Telefonnummer", "Nachname", "Vorname", "Straße",
                                  "strasse", "Adresse", "téléphone", "prénom", "nom",
                                  "courriel", "apellido", "teléfono", "cognome",
                                  "indirizzo", "Handynummer", "E-Mail-Adresse"])
def test_personal_data_named_in_other_languages_is_ignored(name):
    # Telefon (1,156 numbers) was listed, and every synthetic value was a customer's
    values = [f"v{i}" for i in range(250)] * 2
    s, _ = _draft(pd.DataFrame({name: values, "n": np.arange(500) % 7}))
    assert name in s.ignored


@pytest.mark.parametrize("name", ["Produktname", "nombre_enfants", "Dateiname_typ",
                                  "Straßenbahn_linie"])
def test_words_that_only_hold_a_personal_stem_are_kept(name):
    values = [f"v{i}" for i in range(250)] * 2
    s, _ = _draft(pd.DataFrame({name: values, "n": np.arange(500) % 7}))
    assert name in s.names


def test_a_repeated_id_named_column_serves_as_the_individual_for_the_rule():
    # without --id, "Kunden-ID" repeats (it is drafted as data, its line says so), and a
    # text column with a value for each of its values is personal all the same
    df = _staff(300).rename(columns={"employee_id": "Kunden-ID", "name": "Kontakt"})
    s, _ = _draft(df)
    assert "Kontakt" in s.ignored and "department" in s.names
