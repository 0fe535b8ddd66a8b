"""What a drafted column of few numbers lists (data.draft_columns): the answer words
written among them ("refused"), kept as values.  Read off the private data, as every
draft is: NOT private."""
from __future__ import annotations

import json
import re
import unicodedata

import numpy as np
import pandas as pd

from gpu_dpsyn.data.schema import Column, column_from_spec
from gpu_dpsyn.data.text import pasted, settings
from gpu_dpsyn.data.values import places


def keep_answers(col: Column, answers: dict, nullable: bool, limit: int):
    """(column, note) for the words among a column's numbers that are answers, not
    missing (values.means_missing): listed beside a categorical column's values while it
    stays within `limit` values, else read as missing, the note saying how to keep them.
    answers: word -> its count; nullable: whether the column has missing values once the
    answers are values."""
    said = ", ".join(map(repr, answers))
    n = sum(answers.values())
    if col.kind == "categorical" and len(col.values) + len(answers) <= limit:
        spec = {**col.to_dict(), "values": natural([*col.values, *answers])}
        spec.pop("nullable", None)
        if "dtype" not in spec:  # numbers and words: one column of text in Parquet too
            spec["dtype"] = "string"
        new = column_from_spec(col.name, {**spec, **({"nullable": True} if nullable else {})})
        return new, (f"; {n:,} values {said} are no number but an answer: kept, listed "
                     "beside them")
    # a bin holds numbers only: the repair reads the word as missing, as it did unsaid
    return col, (f"; {n:,} values {said} are no number: read as missing, as this column "
                 "cannot list words beside its numbers (to keep them, write them in a "
                 "column of its own before drafting)")


# a number as a code's text may write it ("7", "-1", "2.5"): ordered by its value
_NUMBER_TEXT = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)\s*", re.ASCII)


def natural(values) -> list:
    """Listed values in a reader's order: those that are no number first (by their text),
    then the numbers, and text that writes one, by value.  By text alone, school grades
    came out "1", "10", "11", "12", "2", ..., "K", "PK"; a rare K, an answer listed after
    the numbers, came after 12.  (Which of words and numbers comes first is a choice:
    the words, as a grade's K and PK are below its 1.)"""
    def key(v):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return 1, float(v), str(v)
        text = str(v)
        return (1, float(text), text) if _NUMBER_TEXT.fullmatch(text) else (0, 0.0, text)
    return sorted(values, key=key)


CHANCE_ROWS = 5  # a gap where its neighbours' rows make at most this many expected: chance


def filled_gaps(values: list, counts, limit: int) -> tuple[list, list]:
    """(values listed, those of them not seen) for integers `values` (sorted, each held
    by `counts` rows): a gap is filled in where it is chance, not a code's.  A gap of w
    integers between values holding a and b rows expects w (a + b) / 2 rows; at most
    CHANCE_ROWS (a Poisson count of 5 is 0 one time in 150), its values are listed (a
    quantity's 15 between a rare 14 and 16), where all the gaps hold at most a quarter as
    many integers as the values seen.  Codes keep their gaps: 8 "not asked" beside 1..3,
    or 7/8/9 beside a 1..5 scale, have a common value beside them, and codes in groups
    leave more of their range empty.  Within `limit` values in all."""
    if values[-1] - values[0] + 1 - len(values) > len(values) / 4:  # not near-contiguous:
        return values, []  # codes in groups (1..11, 15, 16, 20..25, ...)
    unseen = []
    for a, b, ca, cb in zip(values, values[1:], counts, counts[1:]):
        if b - a > 1 and (b - a - 1) * (int(ca) + int(cb)) <= 2 * CHANCE_ROWS:
            unseen += range(a + 1, b)
    if not unseen or len(values) + len(unseen) > limit:
        return values, []
    return sorted(values + unseen), unseen


def code_gaps(values: list, counts, step: int) -> int:
    """How many places of `step` between the integers `values` (sorted, each held by
    `counts` rows) lie in gaps that chance does not explain: each neighbour holds more than
    CHANCE_ROWS rows, so a smooth density would put rows there (an amount's tail, values
    of a row or two far apart, does not count): places no code is, as 30, 50, ... among
    codes 0, 20, 40, ... whose common step a rare 10 made 10."""
    if len(values) < 2 or not -2 ** 62 < values[0] <= values[-1] < 2 ** 62:
        return 0  # (the draft refuses such a range; int64 holds the rest exactly)
    w = np.diff(np.asarray(values, dtype=np.int64)) // step - 1  # at NumPy's speed: an
    c = np.asarray(counts)  # amount's distinct values grow with the rows
    return int(w[(w > 0) & (np.minimum(c[:-1], c[1:]) > CHANCE_ROWS)].sum())


def said(unseen: list) -> str:
    """A note naming the values listed though not seen."""
    shown = ", ".join(map(str, unseen[:3])) + (f" and {len(unseen) - 3} more"
                                               if len(unseen) > 3 else "")
    return (f"; {shown} not seen but listed: between rare neighbours such a gap is chance "
            "(drop them if they are no value)")


def near_hint(col: Column, codes: list, lowest: float) -> str:
    """The note on negative codes that may mean missing beside values >= 0 (values.
    near_codes), with an edit that the schema takes: the codes out of the listed values,
    or the range from 0, else they would be data too and the edit refused."""
    shown = ", ".join(f"{c:g}" for c in codes)
    keys, more = [f"missing_values=[{shown}]", "nullable=true"], ""
    if col.kind == "categorical":
        rest = [v for v in col.values if not (isinstance(v, (int, float)) and v in codes)]
        if len(rest) <= 20:
            keys.insert(0, f"values={json.dumps(rest)}")
        else:
            more = (f", and {shown} out of its values "
                    f"({pasted('--set-file', col.name + '.values=F')})")
    elif col.kind == "numeric":
        keys.insert(0, "min=0")
    return (f"; {shown} may be codes for missing (below the other values, {lowest:g} and "
            f"up): if so, gpu-dpsyn schema FILE {settings(col.name, keys)}{more}")


def many_values(name: str, listed: list, lo: int, hi: int, bins: int,
                missing: list | None = None) -> str:
    """The hint on listed integers that are a quantity of more values than a numeric
    column's bins (ages 18..90): a pair with it has many cells, each as noisy, so its
    relations with other columns come out weaker; binned they keep better and single
    values less (bench/experiments/age_bins).  Not for codes scattered over their range;
    codes that fill theirs (stores 1..39) read it too, so it says it is for a quantity.
    missing: the drafted codes for missing, set again (a new type starts afresh: 999
    would clamp to the top)."""
    if len(listed) <= bins or len(listed) < 0.5 * (hi - lo + 1):
        return ""
    coded = [f"missing_values={json.dumps([int(c) for c in missing])}"] if missing else []
    return _bin_it(name, [f"min={lo}", f"max={hi}", f"bins={min(16, bins)}", *coded])


def many_decimals(name: str, listed: list, bins: int, vals: pd.Series,
                  missing: list | None = None) -> str:
    """many_values for listed decimals, the values `vals` as written (a lab value in
    tenths, HbA1c 4.0..12.2): a quantity where they fill half the places of their last
    digit; the edit sets the places again (a new type starts afresh: binned, 4.45342)."""
    if len(listed) <= bins:
        return ""
    lo, hi = listed[0], listed[-1]
    decimals = places(pd.Series(pd.unique(vals.to_numpy())))  # not a walk of every row
    if decimals is None or len(listed) < 0.5 * (round((hi - lo) * 10 ** decimals) + 1):
        return ""
    coded = [f"missing_values={json.dumps(missing)}"] if missing else []
    return _bin_it(name, [f"min={json.dumps(lo)}", f"max={json.dumps(hi)}",
                          f"bins={min(16, bins)}", f"decimals={decimals}", *coded])


def _bin_it(name: str, keys: list) -> str:
    """The hint to bin a listed quantity, with its edit."""
    edit = settings(name, ["type=numeric", *keys])
    return ("; if it is a quantity, not codes, and its relations with other columns matter "
            f"more than single values, bin it (gpu-dpsyn schema FILE {edit})")


def spellings(values: list) -> str:
    """A note naming values that differ only in letter case or spaces ('Sales', 'sales',
    'SALES ') or in how an accent is encoded ('café' composed, or 'e' and a combining
    accent: Unicode NFC and NFD, which print alike): one category written several ways is
    several in the schema."""
    groups = {}
    for v in values:
        if isinstance(v, str):
            key = " ".join(unicodedata.normalize("NFC", v).split()).casefold()
            groups.setdefault(key, []).append(v)
    twins = [g for g in groups.values() if len(g) > 1]
    answers = [k for k in groups if k in _YES or k in _NO]  # yes/Y/TRUE/1, no/..., others
    if len(answers) > 2:
        ways = len({_YES.get(k, _NO.get(k)) for k in answers})
        if ways > 1:
            return (f"; yes/no answers written {ways} ways ({', '.join(map(repr, values[:6]))})"
                    ": one answer written several ways is several values in the schema; "
                    "write them one way in the data first (true/false reads as booleans)")
    if not twins:
        return ""
    def nfc(v):
        return unicodedata.normalize("NFC", v)
    # groups with two encodings of one text first, those two first in their group
    encoded = [sorted(g, key=lambda v: ([*map(nfc, g)].count(nfc(v)) == 1, nfc(v)))
               for g in twins if len(set(map(nfc, g))) < len(g)]
    twins = encoded + [g for g in twins if len(set(map(nfc, g))) == len(g)]
    show = ascii if encoded else repr  # (two encodings of 'café' print alike)
    such = "; ".join(", ".join(map(show, g[:3])) for g in twins[:2])
    how = "letter case or spaces" + (", or in how an accent is encoded (Unicode NFC or NFD)"
                                     if encoded else "")
    return (f"; {sum(map(len, twins))} values differ only in {how} ({such}): if each group "
            "is one category, write it one way in the data first")


# yes/no words, each with its way of writing the answer
_YES = {"yes": "yes", "y": "y", "true": "true", "t": "t", "1": "1"}
_NO = {"no": "yes", "n": "y", "false": "true", "f": "t", "0": "1"}
