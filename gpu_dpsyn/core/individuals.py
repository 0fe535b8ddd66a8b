"""Which records belong to one individual: the id column's values matched as one person
would be written several ways (contribution bounding and `check` both count so)."""
from __future__ import annotations

import decimal

import numpy as np
import pandas as pd

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"  # (any script's digits)
_PLAIN = r"-?(?:[1-9][0-9]*[1-9]|[1-9])"  # its own number_key: ASCII, no 0 at either end


def individual_codes(ids) -> np.ndarray:
    """Each record's individual as an integer code.  Ids match as text without the spaces
    around it, and text that is a number as that number (" 1", "1", "1.0", "01", "1e0", 1
    and 1.0 are one individual; so are "10", "10.0" and "1e1"), so one person written
    several ways is bounded once: two ids merged drop more records, never fewer.  Each
    distinct id is read once."""
    codes, uniques = pd.factorize(ids)
    if np.asarray(uniques).dtype.kind in "iuf":  # numbers of one type: equal ones are one
        return codes
    text = pd.Series(np.asarray(uniques, dtype=object)).astype(str).str.strip()
    number = text.str.fullmatch(_NUMBER).to_numpy(dtype=bool)
    odd = number & ~text.str.fullmatch(_PLAIN).to_numpy(dtype=bool)
    if odd.any():
        text[odd] = [number_key(t) for t in text[odd]]
    text[number] = "\0" + text[number]  # a number's, apart from any text
    return np.where(codes < 0, -1, pd.factorize(text)[0][codes])  # (missing: -1)


def number_key(text: str) -> str:
    """One text for every way of writing a number, exactly (its digits without leading or
    trailing zeros, and the exponent: no rounding, no overflow): "10.0" and "1e1" are
    "1e1", "-0" is "0"."""
    sign, digits, exp = decimal.Decimal(text).as_tuple()
    s = "".join(map(str, digits)).lstrip("0")
    if not s:
        return "0"
    zeros = len(s) - len(s.rstrip("0"))
    s, exp = s.rstrip("0"), exp + zeros
    key = ("-" if sign else "") + s
    return key if exp == 0 else f"{key}e{exp}"
