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
    values = [f"Value {i}" for i in range(250)] * 2  # each twice: no id rule
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
    assert "--ignore first_name" in line


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


_WORDS = ("please call me about my order the delivery was late again and the driver was "
          "rude but the staff on the phone helped a lot thanks").split()


def _comments(rng, k: int, n: int, empty: float = 0.6) -> list:
    """n free-text answers drawn from k distinct sentences (a name and a phone number in
    each), a share of them empty."""
    texts = [" ".join(rng.choice(_WORDS, rng.integers(4, 12))) + f" call Ann Lee on 0171 555 "
             f"{i:04d}" for i in range(k)]
    out = rng.choice(texts, n).astype(object)
    out[rng.random(n) < empty] = None
    return list(out)


def _survey(n: int = 5000, seed: int = 0, **extra) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    likert = ["Strongly agree", "Agree", "Neither agree nor disagree", "Disagree",
              "Strongly disagree"]
    return pd.DataFrame({"q1": rng.choice(likert, n), "age": rng.integers(18, 90, n),
                         **{k: f(rng, n) for k, f in extra.items()}})


@pytest.mark.parametrize("name", ["free_text_comment", "answer"])
def test_repeated_free_text_is_ignored_not_listed(name):
    """399 sentences among 5,000 answers were drafted as a category of 399 values, and the
    fit copied them (names, phone numbers) into the output: they hold phone numbers."""
    df = _survey(**{name: lambda rng, n: _comments(rng, 399, n)})
    s, lines = _draft(df)
    assert name not in s.names and s.ignored == [name]
    line = next(x for x in lines if x.strip().startswith(name))
    assert "phone numbers" in line and "ignored" in line
    assert s["q1"].kind == "categorical" and len(s["q1"].values) == 5  # multi-word, few


def test_free_text_with_a_value_for_each_row_is_ignored_not_an_id():
    """A comment column whose 2,798 answers were all distinct was drafted as an id: the
    output numbered it 1..n, rows with no comment included."""
    df = _survey(8000, comment=lambda rng, n: _comments(rng, n, n, empty=0.65))
    df["comment"] = df["comment"].where(~df["comment"].duplicated(), None)
    assert df["comment"].dropna().is_unique
    s, lines = _draft(df)
    assert "comment" not in s.names and s.ignored == ["comment"]
    assert s.individual_id is None
    line = next(x for x in lines if x.strip().startswith("comment"))
    assert "phone numbers" in line
    plain = _survey(8000, comment=lambda rng, n: [
        None if rng.random() < 0.65 else " ".join(rng.choice(_WORDS, 6)) + f" {i}"
        for i in range(n)])  # no numbers to call: free text all the same
    s, lines = _draft(plain)
    assert s.ignored == ["comment"]
    assert "free text" in next(x for x in lines if x.strip().startswith("comment"))


def test_personal_names_past_the_list_limit_are_ignored_not_refused():
    """13,614 distinct names in 30,000 rows: infer-schema stopped with "too many to list:
    bin it or mark it as an id column (--id)", and --id made the name the individual."""
    rng = np.random.default_rng(3)
    n = 30000
    first = [f"F{i}" for i in range(400)]
    last = [f"L{i}" for i in range(400)]
    names = [f"{a} {b}" for a, b in zip(rng.choice(first, n), rng.choice(last, n))]
    df = pd.DataFrame({"mrn": [f"M{i:06d}" for i in rng.integers(0, 20000, n)],
                       "patient_name": names, "ward": rng.choice(["A", "B", "C"], n)})
    assert df["patient_name"].nunique() > 100 * 100  # past the list limit
    s, lines = _draft(df, id_columns=("mrn",))
    assert "patient_name" in s.ignored and "patient_name" not in s.names
    assert s["ward"].kind == "categorical"


def test_a_column_named_free_text_with_few_values_is_kept_with_a_hint():
    df = _survey(notes=lambda rng, n: rng.choice(["none", "see file", "called back"], n))
    s, lines = _draft(df)
    assert s["notes"].kind == "categorical" and "notes" not in s.ignored
    line = next(x for x in lines if x.strip().startswith("notes"))
    assert "free text" in line and "--ignore notes" in line


@pytest.mark.parametrize("name,personal", [
    ("FirstName", True), ("LastName", True), ("firstname", True), ("phone1", True),
    ("cellphone", True), ("tel", True), ("addr", True), ("mailing_address", True),
    ("respondent_name", True), ("emailAddress", True), ("product_name", False),
    ("username", False), ("address_type", False), ("NameOfCourse", False)])
def test_personal_names_written_camel_case_glued_or_numbered(name, personal):
    from gpu_dpsyn.data.draft_personal import personal_name
    assert personal_name(name) == personal


def test_values_holding_phone_numbers_or_e_mails_are_left_out_however_few():
    """'call Ahmed 204-1263' in a column called details, e-mails in one called contact,
    60 names with phone numbers: each was listed, and the release copied them."""
    rng = np.random.default_rng(8)
    n = 2000
    phones = [f"call P{i} {200 + i % 700}-{1000 + i:04d}" for i in range(400)]
    mails = [f"p{i}@mail{i % 7}.org" for i in range(300)]
    contact60 = [f"Ann Lee{i} +44 171 555 {i:04d}" for i in range(60)]
    df = pd.DataFrame({"details": rng.choice(phones, n), "contact": rng.choice(mails, n),
                       "emergency_contact": rng.choice(contact60, n),
                       "k": rng.choice(["a", "b"], n),
                       "when": rng.choice(["2024-03-01", "2024-03-02"], n),
                       "code": rng.choice([f"A{i:02d}.{j}" for i in range(30)
                                           for j in range(5)], n)})
    s, lines = _draft(df)
    assert {"details", "contact", "emergency_contact"} <= set(s.ignored), s.ignored
    assert "k" in s.names and "code" in s.names and "when" in s.names
    line = next(x for x in lines if x.strip().startswith("contact"))
    assert "e-mail" in line and "@" not in line  # said, not shown


def test_repeated_multi_word_categories_stay_and_unrepeated_text_goes():
    """250 job titles of 4 words, each on 20 rows, were left out as free text: a category
    repeats, a comment seldom does."""
    rng = np.random.default_rng(9)
    titles = [f"Senior Software Engineer {i}" for i in range(250)]
    n = 5000
    comments = [" ".join(rng.choice(_WORDS, 6)) + f" {i}" for i in range(n)]
    df = pd.DataFrame({"job_title": rng.choice(titles, n),
                       "product_description": rng.choice([f"Acme phone pro {i} GB" for i in
                                                          range(200)], n),
                       "answer": np.where(rng.random(n) < 0.6, None, comments)})
    s, _ = _draft(df)
    assert s["job_title"].kind == "categorical" and s["product_description"].kind == \
        "categorical"
    assert s.ignored == ["answer"]


def test_free_text_in_other_scripts_and_in_categorical_columns_goes():
    rng = np.random.default_rng(10)
    n = 3000
    cjk = [f"今天的服务非常好谢谢你们的帮助{i}号" for i in range(n)]
    free = [" ".join(rng.choice(_WORDS, 7)) + f" {i}" for i in range(n)]
    df = pd.DataFrame({"fb": cjk, "reply": pd.Categorical(free),
                       "k": rng.choice(["a", "b"], n)})
    s, _ = _draft(df)
    assert set(s.ignored) == {"fb", "reply"}


_CONTACT = [  # phone numbers and e-mails as people write them
    "call Ahmed 204-1263", "+44 171 555 0190", "(030) 1234567", "ann.lee@example.org",
    "+81-3-1234-5678", "0049-30-1234567", "555.123.4567", "+1.555.123.4567",
    "030/1234567", "+15551234567", "tel: 0612345678", "john at example dot com",
    "john[at]example.com", "06 12 34 56 78", "(555) 123-4567", "0171 555 0190"]
_NOT_CONTACT = [  # codes, ranges, dates, amounts, places
    "98115-4820", "2024-03-01", "01.03.2024 10:00", "1 234 567", "28081.04",
    "1.234.567,89", "ICD A01.2", "Acme Phone Pro 128 GB", "12345", "10000-19999",
    "1000 - 2000", "1990-1999", "10 000 - 19 999", "40.7128 -74.0060", "3.14159 2.71828",
    "ABC-123-4567", "PN 12-345-67", "ORD-2023-00123", "SKU 123-4567-89", "0-306-40615-2",
    "978-3-16-148410-0", "1.2.3.4.5.6.7", "2020 2021 2022", "192.168.100.200",
    "meet at home", "v1.2.3", "2024-03-01T10:00:00+01:00"]


@pytest.mark.parametrize("v,contact", [(v, True) for v in _CONTACT] +
                         [(v, False) for v in _NOT_CONTACT])
def test_what_reads_as_contact_data(v, contact):
    from gpu_dpsyn.data.draft_text import has_contact
    assert has_contact(v) == contact


@pytest.mark.parametrize("v", ["12 Main Street", "4417 Oak Ave, Springfield", "221B Baker St",
                               "Hauptstraße 12", "Lindenstr. 3a, 10115 Berlin",
                               "12 rue de la Paix", "Via Roma 5", "Calle Mayor 10"])
def test_street_addresses_read_as_contact_data(v):
    """Addresses in a column named ship_to were listed (5,099 of them) and the release
    copied them, 1,370 of those that occur once."""
    from gpu_dpsyn.data.draft_text import has_contact
    assert has_contact(v)


@pytest.mark.parametrize("v", ["Main Street Bakery", "Oak Ave", "Street food", "12 Monkeys",
                               "Route 66", "Platform 9", "Level 3", "2 Way Radio",
                               "1.5 Ct Diamond Ring", "3 Place Settings", "Highway 1",
                               "Spring 2024", "Brigade 2", "Instr. 5", "sent via UPS 3",
                               "Top 10 Hits on the Way", "Offering 3", "Diamond ring 2",
                               "Stellplatz 1", "Parkplatz 12", "Wanderweg 3",
                               "SanDisk 64 GB USB 3.0 Flash Drive", "WD 500 GB Hard Drive",
                               "2 Bed Terrace", "4 Wheel Drive", "2 TB Hard Drive",
                               "Logitech 2.4 GHz Way", "5 Star Place", "24 Hour Fitness Place",
                               "Plaza Tower 1", "Plaza Level 2"])
def test_places_without_a_house_number_are_no_address(v):
    from gpu_dpsyn.data.draft_text import has_contact
    assert not has_contact(v)


def test_fixed_width_digit_codes_are_no_phone_numbers():
    """A census extract's household ids, state and county FIPS codes and a serial (11
    digits: 48029000000, 06037000001): those of states 01 to 09 read as national phone
    numbers (0\\d{9,10}), 919 of the 2,000 read, so the column was left out as 'contact
    data ... phone numbers'.  Bare digits of one length that mostly do not start with 0
    are codes (a national number always does); a column of such numbers still goes."""
    rng = np.random.default_rng(11)
    n = 4000
    state = rng.choice(["01", "06", "36", "48"], n, p=[0.1, 0.35, 0.25, 0.3])
    hh = [f"{s}{rng.integers(1, 500):03d}{i // 3:06d}" for i, s in enumerate(state)]
    mobiles = [f"06{rng.integers(10**7, 10**8)}" for _ in range(n)]  # 0612345678
    df = pd.DataFrame({"household_id": hh, "mobile_no": mobiles,
                       "k": rng.choice(["a", "b"], n)})
    s, lines = _draft(df)
    line = next(x for x in lines if x.strip().startswith("household_id"))
    assert "phone" not in line, line
    assert "mobile_no" in s.ignored
    from gpu_dpsyn.data.draft_text import contact_data
    assert contact_data(hh[:2000]) == 0 and contact_data(mobiles[:2000]) > 0


def test_more_values_than_individuals_are_not_called_one_for_each():
    """A clickstream's session ids (7,518 beside 3,000 users, drafted with --id user_id)
    were left out as '7,518 distinct text values, one for each individual ('user_id' has
    3,000): personal data (a name, an e-mail)': a session is neither."""
    rng = np.random.default_rng(12)
    users = np.repeat(np.arange(600), 5)
    df = pd.DataFrame({"user_id": users, "session_id": [f"S{i // 2:06d}" for i in
                                                          range(len(users))],
                       "device": rng.choice(["mobile", "desktop"], len(users))})
    s, lines = _draft(df, id_columns=("user_id",))
    assert s.ignored == ["session_id"]
    line = next(x for x in lines if x.strip().startswith("session_id"))
    assert "values, one for each" not in line and "more than one" in line, line
    assert "a session" in line
