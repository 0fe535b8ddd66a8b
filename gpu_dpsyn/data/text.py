"""User values in error messages, capped: a 200,000-character cell or file name must not
become a 200,000-character error line.  Every message that echoes a value goes through
short() (text) or shown() (a value's repr)."""
from __future__ import annotations

LIMIT = 200  # characters of one echoed value


def short(text, limit: int = LIMIT) -> str:
    """text (str() of anything else) cut to `limit` characters with an ellipsis, newlines
    shown as \\n so that the message stays one line."""
    text = str(text).replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown(value, limit: int = LIMIT) -> str:
    """A value's repr, capped (see short)."""
    return short(repr(value), limit)
