"""Which records belong to one individual: the id column's values matched as one person
would be written several ways (contribution bounding and `check` both count so)."""
from __future__ import annotations

import decimal

import numpy as np
import pandas as pd

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN = r"-?(?:0|[1-9]\d*)"  # an integer written as Decimal.normalize() writes it


def individual_codes(ids) -> np.ndarray:
    """Each record's individual as an integer code.  Ids match as text without the spaces
    around it, and text that is a number as that number (" 1", "1", "1.0", "01", 1 and
    1.0 are one individual), so one person written several ways is bounded once: two ids
    merged drop more records, never fewer.  Each distinct id is read once."""
    codes, uniques = pd.factorize(ids)
    if np.asarray(uniques).dtype.kind in "iuf":  # numbers of one type: equal ones are one
        return codes
    text = pd.Series(np.asarray(uniques, dtype=object)).astype(str).str.strip()
    number = text.str.fullmatch(_NUMBER).to_numpy(dtype=bool)
    odd = number & ~text.str.fullmatch(_PLAIN).to_numpy(dtype=bool)
    if odd.any():
        text[odd] = [str(decimal.Decimal(t).normalize()) for t in text[odd]]
    text[number] = "\0" + text[number]  # a number's, apart from any text
    return np.where(codes < 0, -1, pd.factorize(text)[0][codes])  # (missing: -1)
