"""What a text column's values hold, for a draft (data/draft_personal.py): e-mail
addresses and phone numbers, and how many words (CJK text has no spaces between them);
and the hints on text values (text_hint: lists of codes among them).  Read on a sample
of the distinct values; NOT private, as every draft."""
from __future__ import annotations

import re

import pandas as pd

from gpu_dpsyn.data.values import censored_hint, written_numbers_hint

SAMPLE = 2000  # distinct values read
CONTACT_SHARE = 0.05  # of them holding an e-mail or a phone number: contact data...
CONTACT_LEAST = 3  # ...and at least this many

_EMAIL = re.compile(r"[\w.%+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}|"  # and written out
                    r"\b[\w.+-]+\s*(?:\[at\]|\(at\)|\sat\s)\s*[\w-]+\s*"
                    r"(?:\.|\[dot\]|\(dot\)|\sdot\s)\s*[A-Za-z]{2,}\b", re.I)
_SEP = r"[ ./-]"
_PHONES = [re.compile(p) for p in (
    r"\+\s?\d(?:[ ./-]?\(?\d+\)?){2,}",  # international: +44 171 555 0190, +15551234567
    rf"(?<![\d.,])00\d{{1,3}}{_SEP}\d+(?:{_SEP}\d+)+",  # 0049-30-1234567
    # national, a leading 0: (030) 1234567, 030/1234567, 0171 555 0190, 06 12 34 56 78
    rf"(?<![\d.,])\(?0\d{{1,4}}\)?(?:{_SEP}|/|\s?\)\s?)\d{{2,}}(?:{_SEP}\d{{2,}})*"
    r"(?![\d.,]*\d)",
    r"(?<![\d.,])0\d{9,10}(?!\d)",  # 0612345678
    r"(?<![\w.,-])\(?[2-9]\d\d\)?[ .-]\d{3}[ .-]\d{4}(?![\w.-]*\d)",  # 555.123.4567
    r"(?i)\b(?:call|tel|phone|ph|mobile|cell|fax|whatsapp|ring)\b\W{0,3}"
    r"\w*\s*\+?\d[\d ./-]{5,}\d")]  # a number said to be one: call Ahmed 204-1263
_STREET = ("Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Boulevard|Blvd|Way|Court|Ct|"
           "Place|Pl|Terrace|Close|Crescent|Highway|Hwy")
_NOT_NAME = ("Bed|Beds|Bedroom|Bedrooms|Wheel|Hour|Hours|Star|Hard|Flash|Disk|Speed|Door|"
             "Seater|Piece|Level|Tower")  # words of products and rooms, not of street names
_ADDRESSES = [  # a house number beside a street, as each language writes them
    re.compile(rf"(?<![\d.,])\b\d{{1,5}}[A-Z]?,?\s+(?:(?!(?:{_NOT_NAME})\b)[A-Z][a-z]"
               rf"[\w'.-]*\s+){{1,3}}(?:{_STREET})\b"),  # 12 Main Street (not 500 GB Drive)
    re.compile(r"(?<![\d.,])\b\d{1,5},?\s+(?:rue|boulevard|chemin|allée|impasse)\s", re.I),
    re.compile(r"\b(?:Via|Viale|Calle|Avenida|Rua)\s+[A-Z][\w' .-]{1,40}?,?\s+\d{1,5}\b"),
    re.compile(r"\b[A-ZÄÖÜ][a-zäöüß]{3,}(?:straße|strasse|str\.|gasse|allee|straat|gatan|"
               r"vägen)\s*\d{1,5}[a-z]?\b")]
_DATE = re.compile(r"(?:19|20)\d\d[-./](?:0?[1-9]|1[0-2])[-./]\d\d?|"
                   r"\d\d?[-./](?:0?[1-9]|1[0-2])[-./](?:19|20)\d\d")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def sample(uniq: pd.Series) -> list:
    """Up to SAMPLE distinct values, as Python text."""
    return [str(v) for v in uniq.iloc[:SAMPLE]]


def has_contact(v: str) -> bool:
    """An e-mail address, a street address (a house number beside a street), or a phone
    number in one of the shapes people write them (international, national with a
    leading 0, North American, or after 'call', 'tel', ...); not codes, ranges, dates or
    amounts."""
    if _EMAIL.search(v) or any(a.search(v) for a in _ADDRESSES):
        return True
    for shape in _PHONES:
        for m in shape.finditer(v):
            digits = sum(c.isdigit() for c in m.group(0))
            if 7 <= digits <= 15 and not _DATE.search(m.group(0)):
                return True
    return False


def contact_data(values: list) -> int:
    """How many of the values hold contact data, if enough do (CONTACT_SHARE, at least
    CONTACT_LEAST), else 0.  Bare digits of a length that most of them write without a
    leading 0 are codes (census ids: 06037000001 beside 48029000000), not phone numbers:
    a national number always starts with its 0."""
    codes = _digit_codes(values)
    k = sum(has_contact(v) for v in values
            if not (len(v) in codes and v.isascii() and v.isdigit()))
    return k if k >= max(CONTACT_LEAST, CONTACT_SHARE * len(values)) else 0


def _digit_codes(values: list) -> set:
    """The lengths of bare digit values (ASCII) of which at most half start with 0."""
    zeros, alls = {}, {}
    for v in values:
        if v.isascii() and v.isdigit():
            alls[len(v)] = alls.get(len(v), 0) + 1
            zeros[len(v)] = zeros.get(len(v), 0) + (v[0] == "0")
    return {n for n, k in alls.items() if zeros[n] <= k / 2}


def words(v: str) -> int:
    """Words in a value: those between spaces, and in CJK text one for every two
    characters."""
    return len(v.split()) + len(_CJK.findall(v)) // 2


LIST_SEPARATORS = (";", "|", ",")


def text_hint(vals: pd.Series) -> str:
    """The hint on a text column's values, if any: numbers written with signs, numbers
    past a limit, or lists of codes."""
    return written_numbers_hint(vals) or censored_hint(vals) or code_lists_hint(vals)


def code_lists_hint(vals: pd.Series) -> str:
    """A hint when a text column's cells are lists of codes ("E11;I10"): a separator in a
    tenth of the distinct values, whose parts are over twice fewer than the values (20
    diagnosis codes in 1,909 combinations).  Each combination is a category of its own,
    most of them under the noise: at eps 1 the 20 codes' shares came out off by 72-76%
    of their own, by 10% as a 0/1 column a code (tests/test_draft_code_lists.py)."""
    distinct = pd.Series(pd.unique(vals.dropna().astype(str))[:100_000])
    for sep in LIST_SEPARATORS:
        held = distinct.str.contains(sep, regex=False)
        if held.mean() < 0.1:
            continue
        parts = distinct.str.split(sep, regex=False).explode().str.strip()
        codes = parts[parts != ""].unique()
        if 2 <= len(codes) and 2 * len(codes) < len(distinct):
            return (f"; its values are lists of {len(codes):,} codes separated by {sep!r} "
                    f"({len(distinct):,} combinations, such as {distinct[held].iloc[0]!r}): "
                    "each combination is a category of its own, the rows split among them "
                    "(the rarer under the noise); to keep each code's share, write one 0/1 "
                    "column a code in the data first")
    return ""
