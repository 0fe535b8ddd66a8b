"""Text that identifies people, in a draft (data.inference): NOT private, as every draft.

A categorical column is listed value by value, and the fit draws its output from that
list, so a list of names comes out as names.  Three kinds of text column are left out of
the draft instead (in "ignored_columns", their line saying why):
- a value for each individual: as many distinct values as the individual id has (a name,
  an e-mail beside a person's id), more than a category list holds;
- free text: more distinct values than a category list holds, most of them of several
  words (comments, notes: they name people and give their numbers);
- named as personal data (name, e-mail, phone, address) or as free text (comment,
  notes) with more values than a category list holds.  Named so with fewer, it stays,
  its line suggesting --ignore.
Left out, a column is neither an id (numbered 1..n) nor a refusal for its many values.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.data import draft_text
from gpu_dpsyn.data.text import leaving_out, pasted
# ID_SHARE: of the individuals, one value each
from gpu_dpsyn.data.values import ID_SHARE, all_text, name_words, place_name

_PERSONAL = {  # a word that says personal data, in the languages spreadsheets come in
    "name", "surname", "email", "mail", "phone", "telephone", "mobile", "address", "street",
    "tel", "addr", "firstname", "lastname", "fullname", "givenname", "familyname",
    "middlename", "maidenname", "cellphone", "phonenumber", "emailaddress", "homeaddress",
    "mailingaddress", "streetaddress",  # glued
    "telefon", "handy", "adresse", "strasse", "straße", "nachname", "vorname",  # de
    "nom", "prénom", "prenom", "téléphone", "courriel", "rue", "portable",  # fr
    "apellido", "apellidos", "nombre", "teléfono", "telefono", "correo", "dirección",
    "direccion", "celular",  # es
    "cognome", "nome", "indirizzo", "cellulare",  # it
    "naam", "achternaam", "voornaam", "telefoon", "adres",  # nl
    "sobrenome", "endereço", "endereco", "telefone"}  # pt
_STEMS = ("telefon", "handy", "email")  # compounds: Telefonnummer, Handynummer
_QUALIFIERS = {"first", "last", "full", "given", "family", "middle", "maiden", "e",
               "number", "no", "nr", "home", "work", "postal", "contact", "primary", "cell",
               "person", "patient", "customer", "client", "employee", "user", "member",
               "student", "owner", "respondent", "emergency", "applicant", "guardian",
               "parent", "spouse", "mother", "father", "sender", "recipient", "beneficiary",
               "mailing", "billing", "shipping", "residential", "business", "secondary",
               "alternate", "other", "nummer", "kunde", "kunden", "privat", "numero",
               "numéro", "número", "cliente", "de", "du", "la", "le", "del", "di"}  # words
# beside it that keep it personal: department_name, product_name, address_type say
# something else




def personal_name(name: str) -> bool:
    """A column name of personal-data words and qualifiers only: email, last name,
    patient_name, phone_number, FirstName; not product_name or address_type."""
    words = name_words(name)
    own = {w for w in words if w in _PERSONAL or w.startswith(_STEMS)}
    return bool(own) and set(words) <= own | _QUALIFIERS


_FREE_TEXT = {  # a word that says free text
    "comment", "comments", "remark", "remarks", "note", "notes", "feedback", "description",
    "freetext", "verbatim", "message", "explanation", "specify", "memo", "summary",
    "details", "obs",
    "kommentar", "kommentare", "bemerkung", "bemerkungen", "anmerkung", "anmerkungen",
    "notiz", "notizen", "beschreibung", "freitext",  # de
    "commentaire", "commentaires", "remarque", "remarques", "observation", "observations",
    # fr
    "comentario", "comentarios", "observacion", "observación", "observaciones",
    "descripcion", "descripción",  # es
    "commento", "commenti", "osservazioni", "descrizione",  # it
    "opmerking", "opmerkingen", "toelichting", "commentaar",  # nl
    "observações", "observacoes", "observação"}  # pt
FREE_TEXT_WORDS = 4  # the median distinct value has at least this many words: free text
# (Likert answers and job titles have fewer, or few distinct values)
ONCE = 0.5  # this share of the distinct values written once: text, not a category (a
# category repeats: 250 job titles on 20 rows each)


def free_text_name(name: str) -> bool:
    """A column name with a word that says free text: comment, free_text, CustomerNotes."""
    words = name_words(name)
    return bool(set(words) & _FREE_TEXT) or ("free" in words and "text" in words)


def left_out(name: str, vals: pd.Series, max_categories: int,
             named: bool = True) -> str | None:
    """Why a text column of the values `vals` is left out of the draft, or None: values
    holding e-mail addresses or phone numbers (5% of the distinct values read, 3 at
    least: whatever their number); with more distinct values
    than max_categories, free text (most values of several words, seldom repeated), or
    (`named`) named as personal data, or as free text and seldom repeated.  (A category
    list leaves the names to per_individual, whose reason, one value for each
    individual, says more.)"""
    if not len(vals) or not all_text(vals):
        return None
    counts = vals.value_counts(sort=False)
    seen = draft_text.sample(counts.index.to_series())
    k, contact = len(counts), draft_text.contact_data(seen)
    if contact:
        return (f"{k:,} distinct text values, {contact:,} of the {len(seen):,} read holding "
                "e-mail addresses, street addresses or phone numbers: contact data, which a "
                "category list would copy into the output")
    if k <= max_categories:
        return None
    once = _seldom_repeated(counts)
    if once and float(np.median([draft_text.words(v) for v in seen])) >= FREE_TEXT_WORDS:
        return (f"{k:,} distinct texts of several words each, seldom repeated: free text "
                "(comments, notes), whose names and numbers a category list would copy "
                "into the output")
    return _named(name, k, once) if named else None


def _seldom_repeated(counts: pd.Series) -> bool:
    """Whether ONCE of the distinct values (their counts) are written once."""
    return bool((counts.to_numpy() == 1).mean() >= ONCE)


def _naming(name: str, once: bool = True) -> str | None:
    """What a column's name says it holds: "personal data", or (seldom repeated) "free
    text", or None."""
    return "personal data" if personal_name(name) else \
        "free text" if once and free_text_name(name) else None


def _named(name: str, k: int, once: bool) -> str | None:
    what = _naming(name, once)
    return None if what is None else (
        f"{k:,} distinct text values, named as {what} (if it is a category, list its public "
        "values)")


def per_individual(df: pd.DataFrame, col, unit: str | None,
                   max_categories: int) -> str | None:
    """Why the drafted column `col` is left out, or None: a categorical of text values
    with more of them than max_categories, a value for each individual of the column
    `unit` or named as personal data or as free text."""
    if col.kind != "categorical" or not all(isinstance(v, str) for v in col.values):
        return None
    k = len(col.values)
    if k <= max_categories:
        return None
    if unit is not None and unit != col.name:
        people = df.loc[df[col.name].notna(), unit].nunique()
        if people > 0 and k > people / ID_SHARE:  # several an individual: no name
            return (f"{k:,} distinct text values, more than one for each individual "
                    f"({unit!r} has {people:,}): an identifier of records (a session, an "
                    "order) or personal data, not a category (if it is one, list its "
                    "public values)")
        if people > 0 and k >= ID_SHARE * people:
            return (f"{k:,} distinct text values, one for each individual ({unit!r} has "
                    f"{people:,}): personal data (a name, an e-mail), not a category (if it is "
                    "one, list its public values)")
    return _named(col.name, k, _seldom_repeated(df[col.name].value_counts(sort=False)))


def hint(col) -> str:
    """The line's note for a categorical column kept though named as personal data or as
    free text."""
    what = _naming(col.name) if col.kind == "categorical" else None
    return "" if what is None else (
        f"; named as {what}: if it is, leave it out (gpu-dpsyn schema FILE "
        f"{leaving_out(col.name)})")


def repeated_id(col, no_id: bool) -> str:
    """The line's note for a column named like an identifier whose values repeat.  Without
    --id (no_id) it may name the person each row is about; binned as a quantity (too many
    values to list) it may name a group (a household), whose numbers, drawn evenly in their
    bins, would link no synthetic rows: a census table's 9,000 households came out as
    8,220 numbers among 21,785 persons."""
    said = [f"if it names the person each row is about (not a manager's, say), draft "
            f"again with {pasted('--id', col.name)} (that person is then the unit of "
            "privacy)"] if no_id and not place_name(col.name) else []
    if col.kind == "numeric":
        said.append(f"if it names a group of rows (a household, an account), leave it out "
                    f"(gpu-dpsyn schema FILE {leaving_out(col.name)}): binned, its "
                    "numbers link no synthetic rows")
    return "; named like an identifier, its values repeat: " + "; ".join(said) if said \
        else ""


PERSON_WORDS = {"subject", "subj", "patient", "participant", "person", "customer", "client",
                "member", "employee", "student", "user", "respondent", "applicant",
                "resident", "mrn", "household", "family", "account", "case", "individual"}
# another person of the table, as a column names one (a manager's id beside an employee's;
# not "lead" or "head": lead_time, head_count)
OTHER_PERSON = {"manager", "mgr", "supervisor", "boss", "reports", "parent", "mother",
                "father", "spouse", "partner", "sibling", "guardian", "caregiver",
                "referrer", "referred", "referral", "sponsor", "mentor", "friend", "owner",
                "approver", "reviewer", "agent", "advisor", "adviser", "doctor", "physician"}


def _names_a_person(name: str) -> bool:
    """Whether a column name names a person (supervisorId, reports_to, parent_id; not a
    code named as an id, dept_id or product_id)."""
    return bool(set(name_words(name)) & (PERSON_WORDS | OTHER_PERSON))


def reference(df: pd.DataFrame, col, unit: str | None) -> str | None:
    """Why the drafted column `col` is left out, or None: its values (20 or more, not a
    dense run of integers, which ids numbered 1..n hold all of) are all ids of the
    individual's id column `unit` (a manager's id beside each employee's); where the ids
    fill the column's range (numbered 1..n), only a column that names a person.  The output
    numbers `unit` 1..n: listed, they would publish real ids that name no synthetic row."""
    if unit is None or unit == col.name or col.kind not in ("categorical", "numeric"):
        return None
    uniq = pd.Series(pd.unique(df[col.name].dropna()))
    if len(uniq) < 20 or not uniq.isin(df[unit].dropna()).all():
        return None
    nums = pd.to_numeric(uniq, errors="coerce")
    if nums.notna().all():
        span = float(nums.max()) - float(nums.min()) + 1
        if len(uniq) >= 0.5 * span:
            return None  # counts 1..50 beside ids numbered 1..n
        ids = pd.to_numeric(pd.Series(pd.unique(df[unit].dropna())), errors="coerce")
        inside = int(ids.between(nums.min(), nums.max()).sum())
        if inside >= 0.5 * span and not _names_a_person(col.name):
            return None  # ids fill its range: any integers there are ids (an income)
    return (f"its {len(uniq):,} values are all ids of {unit!r} (another individual's, as "
            f"a manager's): the output numbers {unit!r} 1..n, so listed they would publish "
            "real ids, each naming no synthetic row (if it is data of its own, write its "
            "entry with its public values by hand)")
