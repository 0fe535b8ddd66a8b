"""User values in error messages, capped: a 200,000-character cell or file name must not
become a 200,000-character error line.  Every message that echoes a value goes through
short() (text) or shown() (a value's repr); an edit to paste into a shell through
pasted() or settings()."""
from __future__ import annotations

import shlex

LIMIT = 200  # characters of one echoed value


def short(text, limit: int = LIMIT) -> str:
    """text (str() of anything else) cut to `limit` characters with an ellipsis, newlines
    shown as \\n so that the message stays one line."""
    text = _written(str, text).replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shown(value, limit: int = LIMIT) -> str:
    """A value's repr, capped (see short)."""
    return short(_written(repr, value), limit)


def _written(how, value) -> str:
    """str() or repr() of value; an int (or what holds one) of more digits than Python
    converts is named instead of raising ValueError."""
    try:
        return how(value)
    except ValueError:
        return f"<a {type(value).__name__} holding an integer too long to write>"


def pasted(option: str, arg: str) -> str:
    """option and arg as a shell takes them: arg quoted (a name may hold a space or a
    quote), and joined by "=" where it starts with "-" (argparse reads --set -neg.min=0 as
    two options: --set=-neg.min=0)."""
    return f"{option}{'=' if arg.startswith('-') else ' '}{shlex.quote(arg)}"


def leaving_out(name: str) -> str:
    """--drop NAME --ignore NAME, ready to paste (pasted): the edit that leaves a column
    out of the schema and of the table's reading."""
    return f"{pasted('--drop', name)} {pasted('--ignore', name)}"


def settings(name: str, keys) -> str:
    """--set NAME.KEY=VALUE for each of keys ("min=0"), ready to paste (pasted)."""
    return " ".join(pasted("--set", f"{name}.{k}") for k in keys)
