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

import re

import pandas as pd

from gpu_dpsyn.data.values import ID_SHARE, all_text, is_text  # ID_SHARE: of the
# individuals, one value each

_PERSONAL = {  # a word that says personal data, in the languages spreadsheets come in
    "name", "surname", "email", "mail", "phone", "telephone", "mobile", "address", "street",
    "telefon", "handy", "adresse", "strasse", "straße", "nachname", "vorname",  # de
    "nom", "prénom", "prenom", "téléphone", "courriel", "rue", "portable",  # fr
    "apellido", "apellidos", "nombre", "teléfono", "telefono", "correo", "dirección",
    "direccion", "celular",  # es
    "cognome", "nome", "indirizzo", "cellulare"}  # it
_STEMS = ("telefon", "handy", "email")  # compounds: Telefonnummer, Handynummer
_QUALIFIERS = {"first", "last", "full", "given", "family", "middle", "maiden", "e",
               "number", "no", "nr", "home", "work", "postal", "contact", "primary", "cell",
               "person", "patient", "customer", "client", "employee", "user", "member",
               "student", "owner", "nummer", "kunde", "kunden", "privat", "numero",
               "numéro", "número", "cliente", "de", "du", "la", "le", "del", "di"}  # words
# beside it that keep it personal: department_name, product_name, address_type say
# something else


def personal_name(name: str) -> bool:
    """A column name of personal-data words and qualifiers only: email, last name,
    patient_name, phone_number; not product_name or address_type."""
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    own = {w for w in words if w in _PERSONAL or w.startswith(_STEMS)}
    return bool(own) and set(words) <= own | _QUALIFIERS


_FREE_TEXT = {  # a word that says free text
    "comment", "comments", "remark", "remarks", "note", "notes", "feedback", "description",
    "freetext", "verbatim", "message", "explanation", "specify",
    "kommentar", "kommentare", "bemerkung", "bemerkungen", "anmerkung", "anmerkungen",
    "notiz", "notizen", "beschreibung", "freitext",  # de
    "commentaire", "commentaires", "remarque", "remarques", "observation", "observations",
    # fr
    "comentario", "comentarios", "observacion", "observación", "observaciones",
    "descripcion", "descripción",  # es
    "commento", "commenti", "osservazioni", "descrizione"}  # it
FREE_TEXT_WORDS = 4  # the median distinct value has at least this many words: free text
# (Likert answers and job titles have fewer, or few distinct values)
SAMPLE = 2000  # distinct values whose words are counted


def free_text_name(name: str) -> bool:
    """A column name with a word that says free text: comment, free_text, notes."""
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    return bool(set(words) & _FREE_TEXT) or ("free" in words and "text" in words)


def free_text(uniq: pd.Series) -> bool:
    """Distinct text values most of which have several words (FREE_TEXT_WORDS)."""
    words = uniq.iloc[:SAMPLE].str.split().str.len()
    return bool(len(words)) and float(words.median()) >= FREE_TEXT_WORDS


def left_out(name: str, vals: pd.Series, max_categories: int,
             named: bool = True) -> str | None:
    """Why a text column of the values `vals` is left out of the draft, or None: free text,
    or (`named`) named as personal data or as free text; each with more distinct values
    than max_categories.  (A category list leaves the names to per_individual, whose
    reason, one value for each individual, says more.)"""
    if not is_text(vals) or not all_text(vals):
        return None
    uniq = pd.Series(pd.unique(vals), dtype=vals.dtype)
    k = len(uniq)
    if k <= max_categories:
        return None
    if free_text(uniq):
        return (f"{k:,} distinct texts of several words each: free text (comments, notes), "
                "whose names and numbers a category list would copy into the output")
    return _named(name, k) if named else None


def _named(name: str, k: int) -> str | None:
    what = "personal data" if personal_name(name) else \
        "free text" if free_text_name(name) else None
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
        if people > 0 and k >= ID_SHARE * people:
            return (f"{k:,} distinct text values, one for each individual ({unit!r} has "
                    f"{people:,}): personal data (a name, an e-mail), not a category (if it is "
                    "one, list its public values)")
    return _named(col.name, k)


def hint(col) -> str:
    """The line's note for a categorical column kept though named as personal data or as
    free text."""
    if col.kind != "categorical":
        return ""
    what = "personal data" if personal_name(col.name) else \
        "free text" if free_text_name(col.name) else None
    return "" if what is None else (
        f"; named as {what}: if it is, leave it out (gpu-dpsyn schema FILE --drop "
        f"{col.name!r} --ignore {col.name!r})")
