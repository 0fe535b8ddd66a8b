"""Date text checked at C speed (Arrow's kernels) for the usual column, every value a str
of ASCII characters: the answers of the checks made value by value in Python (NUL and
"now"/"today", which no reading takes for a date; a UTC offset, datetime._OFFSET), which
took nearly all of the time to repair or encode a datetime text column (4 s a million
rows).  Other columns, and text with other characters, take those checks as before.

Why the answers are the same: in ASCII, Python's str.strip() and re's \\s take exactly
the characters of _SPACE, re's \\d exactly 0-9, and str.lower() only A-Z; RE2 reads the
patterns below so, and searches as re.search does.  tests/test_date_text.py compares
both on random text of the characters that matter."""
from __future__ import annotations

import numpy as np
import pandas as pd

_SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f ]"  # whitespace to str.strip() and re's \s, in ASCII
_CLOCK = rf"^{_SPACE}*(?i:now|today){_SPACE}*$"
# datetime._OFFSET with \s and \d spelled out
_OFFSET = (r"(?:[0-9]{2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?|[Tt ][0-9]{2}(?:[0-9]{2}){0,2}"
           rf"(?:\.[0-9]+)?){_SPACE}*(?:[Zz]|[+-][0-9]{{2}}(?::?[0-9]{{2}})?){_SPACE}*$")


def ascii_text(values: pd.Series):
    """values as one Arrow string array when each is a str of ASCII characters or
    missing, else None (the checks value by value then serve)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        return None
    try:
        arr = pa.array(np.asarray(values, dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowException, UnicodeEncodeError):  # a lone surrogate, say
        return None
    return arr if pc.all(pc.string_is_ascii(arr)).as_py() is not False else None


def odd(arr) -> np.ndarray:
    """Text holding a NUL, or "now"/"today" in any case between spaces (no_date_text)."""
    import pyarrow.compute as pc
    hit = pc.or_(pc.match_substring(arr, "\x00"), pc.match_substring_regex(arr, _CLOCK))
    return _mask(hit)


def offsets(arr) -> np.ndarray:
    """Text that ends in a UTC offset after a time (datetime._OFFSET)."""
    import pyarrow.compute as pc
    return _mask(pc.match_substring_regex(arr, _OFFSET))


def _mask(hit) -> np.ndarray:
    return np.asarray(hit.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
