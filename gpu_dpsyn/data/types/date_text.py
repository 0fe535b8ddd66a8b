"""Date text checked at C speed for the usual column, every value a str of ASCII
characters (data/ascii.py): the answers of the checks made value by value in Python (NUL
and "now"/"today", which no reading takes for a date; a UTC offset, datetime._OFFSET),
which took nearly all of the time to repair or encode a datetime text column (4 s a
million rows).  tests/test_date_text.py compares both on random text."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.data.ascii import SPACE, ascii_text, mask  # noqa: F401 (ascii_text: callers')

_CLOCK = rf"^{SPACE}*(?i:now|today){SPACE}*$"
# datetime._OFFSET with \s and \d spelled out
_OFFSET = (r"(?:[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?|[Tt ][0-9]{2}(?:[0-9]{2}){0,2}"
           rf"(?:\.[0-9]+)?){SPACE}*(?:[Zz]|[+-][0-9]{{2}}(?::?[0-9]{{2}})?){SPACE}*$")


def odd(arr) -> np.ndarray:
    """Text holding a NUL, or "now"/"today" in any case between spaces (no_date_text)."""
    import pyarrow.compute as pc
    return mask(pc.or_(pc.match_substring(arr, "\x00"), pc.match_substring_regex(arr, _CLOCK)))


def offsets(arr) -> np.ndarray:
    """Text that ends in a UTC offset after a time (datetime._OFFSET)."""
    import pyarrow.compute as pc
    return mask(pc.match_substring_regex(arr, _OFFSET))
