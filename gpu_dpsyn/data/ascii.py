"""Text of ASCII characters checked at C speed (Arrow's kernels), with the answers that
Python's checks value by value give: in ASCII, str.strip() and re's \\s take exactly the
characters of SPACE, re's \\d exactly 0-9, str.lower() only A-Z, and RE2 reads patterns so
spelled as re does.  The usual column of a CSV file is such text; other columns take the
checks value by value (the callers keep them: tests compare both on random text)."""
from __future__ import annotations

import numpy as np
import pandas as pd

SPACE = r"[\t\n\x0b\x0c\r\x1c-\x1f ]"  # whitespace to str.strip() and re's \s, in ASCII


def ascii_text(values: pd.Series):
    """values as one Arrow string array when each is a str of ASCII characters or
    missing, else None."""
    import pyarrow as pa
    import pyarrow.compute as pc
    if pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty"):
        return None
    try:
        arr = pa.array(np.asarray(values, dtype=object), type=pa.string(), from_pandas=True)
    except (pa.ArrowException, UnicodeEncodeError):  # a lone surrogate, say
        return None
    if isinstance(arr, pa.ChunkedArray):  # past 2 GiB of text: the checks value by value
        return None
    return arr if pc.all(pc.string_is_ascii(arr)).as_py() is not False else None


def mask(hit) -> np.ndarray:
    """An Arrow boolean array as a NumPy mask, missing as False."""
    return np.asarray(hit.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
