"""Text that identifies people, in a draft (data.inference): NOT private, as every draft.

A categorical column is listed value by value, and the fit draws its output from that
list, so a list of names comes out as names.  Two kinds of text column are left out of
the draft instead (in "ignored_columns", their line saying why):
- a value for each individual: as many distinct values as the individual id has (a name,
  an e-mail beside a person's id), more than a category list holds;
- named as personal data (name, e-mail, phone, address) with more values than a category
  list holds.  Named so with fewer, it stays, its line suggesting --ignore.
"""
from __future__ import annotations

import re

import pandas as pd

from gpu_dpsyn.data.draft_columns import ID_SHARE  # of the individuals: one value each

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


def per_individual(df: pd.DataFrame, col, unit: str | None,
                   max_categories: int) -> str | None:
    """Why the drafted column `col` is left out, or None: a categorical of text values
    with more of them than max_categories, a value for each individual of the column
    `unit` or named as personal data."""
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
    if personal_name(col.name):
        return (f"{k:,} distinct text values, named as personal data (if it is a category, "
            "list its public values)")
    return None


def hint(col) -> str:
    """The line's note for a categorical column kept though named as personal data."""
    if col.kind != "categorical" or not personal_name(col.name):
        return ""
    return (f"; named as personal data: if it is, leave it out (gpu-dpsyn schema FILE "
            f"--drop {col.name!r} --ignore {col.name!r})")
