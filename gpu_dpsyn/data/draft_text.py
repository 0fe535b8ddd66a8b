"""What a text column's values hold, for a draft (data/draft_personal.py): e-mail
addresses and phone numbers, and how many words (CJK text has no spaces between them).
Read on a sample of the distinct values; NOT private, as every draft."""
from __future__ import annotations

import re

import pandas as pd

SAMPLE = 2000  # distinct values read
CONTACT_SHARE = 0.05  # of them holding an e-mail or a phone number: contact data...
CONTACT_LEAST = 3  # ...and at least this many

_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
# digits in groups split by spaces, dots, dashes or brackets, 7 digits at least, and
# none of a date's shapes (2024-03-01, 01.03.2024)
_PHONE = re.compile(r"(?<![\w.,])[+(]?\d[\d ().-]{5,}\d(?![\w.,]*\d)")
_DATE = re.compile(r"\d{4}[-./]\d\d?[-./]\d\d?|\d\d?[-./]\d\d?[-./]\d{2,4}")
_ZIP4 = re.compile(r"\d{5}-\d{4}")  # a US ZIP+4 code, no phone
_NUMBER = re.compile(r"[+-]?(?:\d+|\d{1,3}(?:[., ]\d{3})+)(?:[.,]\d+)?")  # an amount
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def sample(uniq: pd.Series) -> list:
    """Up to SAMPLE distinct values, as Python text."""
    return [str(v) for v in uniq.iloc[:SAMPLE]]


def has_contact(v: str) -> bool:
    """An e-mail address, or a phone number (7 digits or more in groups)."""
    if "@" in v and _EMAIL.search(v):
        return True
    for m in _PHONE.finditer(v):
        text = m.group(0)
        digits = sum(c.isdigit() for c in text)
        if digits >= 7 and re.search(r"[ ().-]", text.strip()) and \
                not _DATE.search(text) and not _ZIP4.fullmatch(text.strip()) and \
                not _NUMBER.fullmatch(text.strip()):
            return True
    return False


def contact_data(values: list) -> int:
    """How many of the values hold contact data, if enough do (CONTACT_SHARE, at least
    CONTACT_LEAST), else 0."""
    k = sum(has_contact(v) for v in values)
    return k if k >= max(CONTACT_LEAST, CONTACT_SHARE * len(values)) else 0


def words(v: str) -> int:
    """Words in a value: those between spaces, and in CJK text one for every two
    characters."""
    return len(v.split()) + len(_CJK.findall(v)) // 2
