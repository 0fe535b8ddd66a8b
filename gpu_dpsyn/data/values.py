"""What a column's values look like, for infer-schema: identifiers, plain numbers,
ISO 8601 datetimes and their finest unit."""
from __future__ import annotations

import datetime
import re
from decimal import Decimal

import numpy as np
import pandas as pd

from gpu_dpsyn.data.matching import boolean_of
from gpu_dpsyn.data.types.datetime import UNITS

ID_SHARE = 0.95  # nearly every value distinct: an identifier, not a category
ID_DENSITY = 0.5  # integers are ids when they number the rows: this share of their range
# (amounts are nearly all distinct too, but scattered: Ecdat BudgetFood's spending)


ID_WORDS = {"id", "ids", "uuid", "guid", "identifier", "pid", "uid", "rowid", "recid",
            "hhid", "ssn"}  # anywhere in the name


_ID_LAST = {"no", "nr", "num", "number", "key", "code", "serial"}  # as its last word only:
# account_number, case_no; not num_votes, price_no_tax


_CAMEL_ID = re.compile(r"[a-z0-9](?:Id|ID)$")  # personId, PatientID


_GLUED_ID = re.compile(r"(?:customer|object|row|user|person|patient|record|account|client|"
                       r"member|order|case|student|employee|household|family|firm|company|"
                       r"school|transaction|product|item|session|visit|event|device)"
                       r"_?(?:id|no|nr|num|number|key|code)$", re.I)  # CUSTOMERID


LEADING_ZERO = re.compile(r"^[+-]?0\d")


ISO_TEXT = re.compile(r"^\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:\.\d+)?)?)?\s*"
                  r"(?:Z|[+-]\d\d:?\d\d)?$")



def numbering(numbers: np.ndarray, n_distinct: int) -> bool:
    """Distinct integers that number the rows: dense in their range (ID_DENSITY).  Amounts
    are nearly all distinct too, but scattered (household spending 14,601 to 11,397,547);
    so are identifiers not named as such, which are then binned, never listed."""
    return n_distinct >= ID_DENSITY * (float(numbers.max()) - float(numbers.min()) + 1)


def id_name(name: str) -> bool:
    """A name that says identifier: a word of ID_WORDS (person_id, pid), a last word of
    _ID_LAST (case_no, account_number), camelCase ...Id / ...ID, or an entity glued to
    one (CUSTOMERID, objectid)."""
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    return bool(set(words) & ID_WORDS) or bool(words and words[-1] in _ID_LAST) or \
        bool(_CAMEL_ID.search(name)) or bool(_GLUED_ID.search(name))


BLANK_HEADER = re.compile(r"Unnamed: \d+")  # how pandas reads a blank header cell


def person_id_name(name: str) -> bool:
    """id_name's identifiers but for a code or number (country_code, phone_number) or a
    place's or a thing's (place_name): a word of ID_WORDS, camelCase ...Id, or an entity
    glued to "id" (CUSTOMERID)."""
    words = {w for w in re.split(r"[\W_]+", name.lower()) if w}
    return (bool(words & ID_WORDS) or bool(_CAMEL_ID.search(name)) or
            bool(_GLUED_ID.search(name)) and not name.lower().endswith("code")) and \
        not place_name(name)


PLACES = {"location", "loc", "zone", "station", "stop", "store", "shop", "branch", "site",
          "airport", "terminal", "route", "region", "district", "county", "country", "state",
          "city", "ward", "room", "bed", "hospital", "clinic", "facility", "school", "dept",
          "department", "product", "item", "sku", "category", "vendor", "sensor", "vehicle",
          "warehouse", "plant"}  # places and things a column's id may name: no person


def name_words(name: str) -> list:
    """A column name's words, lower case: split at spaces, underscores, camelCase and
    digits (FirstName, phone1, emailAddress, PULocationID)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", " ", name)
    return [w for w in re.split(r"[\W_\d]+", spaced.lower()) if w]


def place_name(name: str) -> bool:
    """An id named as a place's or a thing's (PULocationID, store_id): a taxi table's
    zones had been told to be the individual, and warned of at fit as a person's id.  The
    word the id word follows names whose it is: hospital_patient_id is a patient's."""
    words = name_words(name)
    while len(words) > 1 and words[-1] in ID_WORDS | _ID_TAILS:
        words.pop()
    return bool(words) and words[-1] in PLACES


_ID_TAILS = {"no", "nr", "num", "number", "key", "code"}  # (as _GLUED_ID's)


def is_text(s: pd.Series) -> bool:
    return pd.api.types.is_string_dtype(s.dtype) or s.dtype == object


def all_text(vals: pd.Series) -> bool:
    """Whether every value (none missing) is a str, in pandas' own loop: a Python loop
    over a drafted table's millions of values was most of infer-schema's time."""
    if isinstance(vals.dtype, pd.CategoricalDtype):
        vals = vals.astype(object)
    return pd.api.types.infer_dtype(vals, skipna=False) in ("string", "empty")


def each_distinct(vals: pd.Series, test) -> np.ndarray:
    """test(Series of the distinct values) -> their booleans, read back for every value
    (missing: False): checks written per value (a regex pandas runs in Python, say) run
    once per distinct value."""
    codes, uniq = pd.factorize(vals)
    hit = np.asarray(test(pd.Series(uniq, dtype=vals.dtype if len(uniq) else object)),
                     dtype=bool)
    return np.append(hit, False)[codes]  # code -1 (missing): the appended False


def as_numbers(vals: pd.Series, text: bool):
    """float64 values when every value is a finite number written plainly (no leading
    zeros: "02134" is a code), else None; a numeric column's infinities are left out (a
    range clamps them: one inf made the column an id)."""
    if pd.api.types.is_bool_dtype(vals):
        return None
    if not text:
        if pd.api.types.is_numeric_dtype(vals):
            x = vals.to_numpy(dtype=np.float64)
            x = x[np.isfinite(x)]
            return x if x.size else None
        return None
    if not all_text(vals):
        x = pd.to_numeric(vals, errors="coerce")
        return None if x.isna().any() else x.to_numpy(dtype=np.float64)
    if each_distinct(vals, lambda u: u.str.match(LEADING_ZERO)).any():
        return None
    x = pd.to_numeric(vals, errors="coerce")
    if x.isna().any():
        return None
    x = x.to_numpy(dtype=np.float64)
    # digits beyond 2**53 are a code: as floats, 1500000000000000001 and ...002 are one
    # value (not "1e16" or "2.5e300": numbers, written so)
    big = np.abs(x) > 2.0 ** 53
    if big.any() and each_distinct(vals[big & np.isfinite(x)],
                                   lambda u: u.str.fullmatch(r"\s*[+-]?\d+\s*")).any():
        return None
    x = x[np.isfinite(x)]  # as a numeric column's: the range clamps infinities
    return x if x.size else None


PLACEHOLDERS = 5  # distinct words among a text column's numbers read as missing...
PLACEHOLDER_SHARE = 0.1  # ...covering at most this share of its values


def mostly_numbers(vals: pd.Series):
    """(as_numbers of the others, the placeholders) for text whose values are numbers
    but for a few words standing for none ("N/A", "-", "?": at most PLACEHOLDERS distinct,
    at most PLACEHOLDER_SHARE of the values), which the row-local repair makes missing;
    else (None, [])."""
    x = pd.to_numeric(vals, errors="coerce")
    # (true/false read as 1/0 by the repair: not placeholders, and no number to draft)
    flag = each_distinct(vals, lambda u: u.map(
        lambda v: isinstance(v, str) and boolean_of(v) is not None))
    words = vals[x.isna().to_numpy() & ~flag]
    if words.empty or words.nunique() > PLACEHOLDERS or \
            len(words) > PLACEHOLDER_SHARE * len(vals):
        return None, []
    numbers = as_numbers(vals[x.notna()], True)
    return (None, []) if numbers is None else (numbers, sorted(words.unique(), key=repr))


# words that stand for no value (any letter case): pandas' own missing markers, a
# spreadsheet's errors and the punctuation people leave in an empty cell.  Not words that
# can be an answer ("refused", "unknown", "none" children, "not applicable"): among few
# listed values those stay values, as reading one as missing would lose it unseen
_MISSING_WORDS = {"", "na", "n/a", "n.a.", "n.a", "#n/a", "#n/a n/a", "#na", "<na>", "nan",
                  "-nan", "null", "(null)", "nil", "missing", "(blank)", "blank", "-", "--",
                  "---", ".", "..", "?", "??", "*", "#value!", "#div/0!", "#ref!", "#num!",
                  "#name?", "#null!", "-1.#ind", "1.#ind", "-1.#qnan", "1.#qnan"}


def means_missing(word) -> bool:
    """Whether a word among numbers stands for no value (_MISSING_WORDS)."""
    return str(word).strip().lower() in _MISSING_WORDS


MAX_PLACES = 6  # decimals written to more places than this: no fixed precision


def places(vals: pd.Series) -> int | None:
    """The most decimal places the values are written with ("1.4": 1, "2.50": 2; floats
    by their shortest text; a Parquet decimal's by its digits, not its scale: 98.33 at
    scale 18 is written 98.330000000000000000), or None past MAX_PLACES or in exponent
    notation."""
    vals = vals.dropna()
    text = (vals.map(lambda v: format(v.normalize(), "f") if isinstance(v, Decimal) else v)
            if vals.dtype == object else vals).astype(str).str.strip()
    if not len(text) or text.str.contains("[eE]").any():
        return None
    most = int(text.str.extract(r"\.(\d*)$")[0].fillna("").str.len().max())
    return most if most <= MAX_PLACES else None


SENTINELS = (-1, -9, -99, -999, -9999, -99999, 9, 99, 999, 9999, 99999, 999999)
SENTINEL_SHARE = 0.1  # a code for missing holds at most this share of the values


def sentinels(numbers: np.ndarray) -> list:
    """The codes for missing among a column's numbers (SPSS-style: -1, 99, 999, ...),
    each isolated from the other values (a negative code beside values >= 0 that reach ten
    times its size, or below their lowest by ten times their spread; a positive one above
    twice their maximum) and rare (SENTINEL_SHARE): 999 among ages, -999 among
    temperatures; not 999 in a count that reaches 998, nor 99 among ages up to 90, nor
    -1 beside 0 and 1."""
    x = np.asarray(numbers, dtype=np.float64)
    present = [c for c in SENTINELS if (x == c).any()]
    rest = x[~np.isin(x, present)] if present else x
    if not present or len(rest) == 0:
        return []
    lo, hi = float(rest.min()), float(rest.max())
    return [c for c in present if (x == c).mean() <= SENTINEL_SHARE and
            ((c < 0 <= lo and hi >= 10 * -c) or
             (c < 0 and hi > lo and lo - c >= 10 * (hi - lo)) or
             (c > 0 and c > 2 * max(hi, 0)))]


def comma_decimals(text: pd.Series) -> bool:
    """A value with a comma before 1-2 or 4+ digits, or after a lone 0: 12,5, 2 399,80,
    0,412; not 1,234, which may group thousands."""
    return bool(text.str.contains(r"\d,(?:\d{1,2}|\d{4,})(?:[eE][+-]?\d+)?\s*$|"
                                  r"(?:^|[^\d])0,\d").any())


def decimal_comma(vals: pd.Series) -> bool:
    """Text that is numbers, some written with one comma between digits that cannot
    group thousands (comma_decimals): a decimal comma the file's dialect did not read (a
    quoted field, or a column beside others written with dots)."""
    if not len(vals) or not all_text(vals):
        return False
    shape = each_distinct(vals, lambda u: u.str.fullmatch(r"\s*[+-]?\d+(?:,\d+)?\s*"))
    return bool(shape.all()) and comma_decimals(pd.Series(pd.unique(vals)))


SURVEY_CODES = (-7, -8, -9, -97, -98, -99, -997, -998, -999)  # refused, don't know, not
# asked: the codes surveys give, negative beside answers of 0 or more


def near_codes(numbers: np.ndarray) -> list:
    """Negative codes for missing (SURVEY_CODES; not -1) beside values >= 0 that do not
    reach ten times their size (sentinels leaves these as data): -9 on a 0-10 scale,
    -7/-8/-9 beside 1-5, together rare (SENTINEL_SHARE).  Hinted, not drafted: a scale
    may run below 0."""
    x = np.asarray(numbers, dtype=np.float64)
    present = [c for c in SURVEY_CODES if (x == c).any()]
    rest = x[~np.isin(x, present)]
    if not present or not len(rest) or rest.min() < 0 or \
            np.isin(x, present).mean() > SENTINEL_SHARE:
        return []
    return sorted(present)


def as_datetime(s: pd.Series, vals: pd.Series, text: bool):
    """(datetimes, read from text with UTC offsets) when the column holds datetimes or
    ISO 8601 date text, else (None, False).  Offsets become UTC: they do not name a zone."""
    if pd.api.types.is_datetime64_any_dtype(s.dtype):
        return s.reset_index(drop=True), False
    if s.dtype == object and len(vals) and not all_text(vals) and \
            vals.map(lambda v: isinstance(v, datetime.date)).all():  # Parquet's date32, ...
        zoned = vals.map(lambda v: getattr(v, "tzinfo", None) is not None)
        if not zoned.any() or zoned.all():
            t = pd.to_datetime(s, errors="coerce", utc=bool(zoned.any()))
            if not t[s.notna()].isna().any():
                return pd.Series(t).reset_index(drop=True), bool(zoned.any())
    if not text or not all_text(vals) or \
            not each_distinct(vals, lambda u: u.str.match(ISO_TEXT)).all():
        return None, False
    aware = pd.Series(each_distinct(vals, lambda u: u.str.contains(
        r"(?:Z|[+-]\d\d:?\d\d)$", regex=True)), index=vals.index)
    if aware.any() and not aware.all():
        return None, False  # mixed: left as text for the user to sort out
    t = pd.to_datetime(s, format="ISO8601", errors="coerce", utc=bool(aware.any()))
    if t[s.notna()].isna().any():
        return None, False
    return pd.Series(t).reset_index(drop=True), bool(aware.any())


def finest_unit(wall: pd.Series) -> str:
    # ticks in the column's own unit: dates past 1677-2262 hold no nanoseconds
    per_second = {"s": 1, "ms": 10 ** 3, "us": 10 ** 6, "ns": 10 ** 9}[wall.dt.unit]
    ticks = wall.astype("int64").to_numpy()
    for unit, size in (("second", 60), ("minute", 3600), ("hour", 86400)):
        if (ticks % (size * per_second)).any():
            return unit
    return "day"


def span_in(unit: str, lo: pd.Timestamp, hi: pd.Timestamp) -> float:
    if unit == "year":
        return hi.year - lo.year + 1
    if unit == "month":
        return (hi.year - lo.year) * 12 + hi.month - lo.month + 1
    size = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}[unit]
    return (hi - lo).total_seconds() / size + 1


def unit_start(t: pd.Timestamp, unit: str) -> pd.Timestamp:
    if unit == "year":
        return pd.Timestamp(t.year, 1, 1)
    if unit == "month":
        return pd.Timestamp(t.year, t.month, 1)
    return t.floor(UNITS[unit])


# a number written with a currency sign, thousands separators or a percent sign, either
# decimal mark: $1,814.50, -$801.27, 45%, 1.234,56 EUR
_WRITTEN = re.compile(r"^\s*[-+(]?\s*(?:[$\u20ac\u00a3\u00a5]|USD|EUR)?\s*[-+]?\s*"
                      r"\d{1,3}(?:([,.' \u00a0])\d{3}(?:\1\d{3})*)?(?:[.,]\d+)?\s*"
                      r"(?:[$\u20ac\u00a3\u00a5%]|USD|EUR)?\s*\)?\s*$")
_SIGNS = re.compile(r"[$\u20ac\u00a3\u00a5%,]|USD|EUR")


def written_numbers_hint(vals: pd.Series) -> str:
    """A hint when text reads as numbers written with signs or separators (a spreadsheet's
    money or percent format), which infer-schema drafts as text: say how to keep them."""
    sample = vals.dropna().iloc[:200].astype(str)
    if not len(sample):
        return ""
    fits = sample.str.fullmatch(_WRITTEN)
    if fits.mean() < 0.9 or not sample[fits].str.contains(_SIGNS).any():
        return ""
    return (f"; its values look like numbers written with signs or separators "
            f"({sample.iloc[0]!r}): write them as plain numbers (1814.5) for a numeric "
            "column")


_LIMIT = re.compile(r"^\s*(?:[<>]=?|\u2264|\u2265)\s*[-+]?(?:\d+(?:[.,]\d*)?|[.,]\d+)\s*$")
# (<0.5, >= 1000, <.5, <-5, < 0,5)


def censored_hint(vals: pd.Series) -> str:
    """A hint when text is numbers but for values written past a limit ('<0.5' below a
    lab's detection limit, '>1000' above a top code), which make the column text: listed,
    the numbers lose their order (a trial's CRP, 14% '<0.5': synthetic median 4.0 mg/L,
    real 1.2)."""
    # each distinct value once (limits sorted after the numbers stay in view)
    sample = pd.Series(pd.unique(vals.dropna().astype(str))[:100_000])
    limits = sample.str.fullmatch(_LIMIT)
    plain = pd.to_numeric(sample[~limits], errors="coerce").notna()
    if not limits.any() or limits.all() or plain.mean() < 0.9:
        return ""
    such = ", ".join(repr(v) for v in pd.unique(sample[limits])[:2])
    return (f"; numbers but for values past a limit ({such}: a detection limit, a top "
            "code), listed as text without their order: to bin it as numbers, write "
            "those as a number (the limit) with a flag column of their own")


def replaced_bytes(s: pd.Series) -> bool:
    """Whether a column holds U+FFFD, what the row-local rule reads bytes that are no UTF-8
    as: by the string methods, value by value only where the column holds objects they
    refuse (a Parquet column of dates)."""
    try:
        return bool(s.str.contains("\ufffd", regex=False, na=False).any())
    except AttributeError:
        return bool(s.map(lambda v: isinstance(v, str) and "\ufffd" in v).any())
