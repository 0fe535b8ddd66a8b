"""The forms a `gpu-dpsyn schema --set` takes for a column's domain, said when a value is
given in another: a categorical column's values as a JSON list quoted for the shell
(--set 'colour.values=["red", "blue"]'), a numeric column's range as its min and max
(--set age.min=0 --set age.max=120).  The shell strips the quotes of an unquoted
["red","blue"] to [red,blue], and "red,blue", "18..95" or a numeric "values"/"range"
are what one types first; the rules' own message ("needs a non-empty 'values' list",
"did you mean 'missing_values'?") named what was wrong but not how to write it."""
from __future__ import annotations

import json
import re

from gpu_dpsyn.data.text import pasted, settings, shown
from gpu_dpsyn.errors import SchemaError

# 18..95, [18..95], 0-120 (not -5 alone), 1,200: two numbers that read as a range
_NUM = r"-?\d+(?:\.\d+)?"
_SPAN = re.compile(rf"\s*\[?\s*({_NUM})\s*(?:\.\.|,|\s-\s?|(?<=\d)-)\s*({_NUM})\s*\]?\s*")
RANGE_WORDS = ("range", "domain", "limits", "bounds")  # keys one reaches for first


def check(name: str, key: str, value, kind: str | None) -> None:
    """Refuses a domain given in a form the schema does not take, saying the form it does
    (kind: the column's type after the edit's own --set NAME.type)."""
    if value is None:  # (null takes a key out)
        return
    span = _SPAN.fullmatch(value) if isinstance(value, str) else None
    if isinstance(value, list) and len(value) == 2 and all(map(_number, value)):
        span = value
    else:
        span = span and [json.loads(span[1]), json.loads(span[2])]
    if kind == "numeric" and (key in RANGE_WORDS or key == "values"):
        ends = span or ["...", "..."]
        raise SchemaError(f"column {shown(name)}: a numeric column's range is its min and max "
                          f"({settings(name, [f'min={ends[0]}', f'max={ends[1]}'])}); to "
                          "list its values instead, make it categorical ("
                          + settings(name, ["type=categorical", "values=[...]"])
                          + f"); got {key}={shown(value)}")
    if key in RANGE_WORDS and kind in ("categorical", None):
        raise SchemaError(f"column {shown(name)}: there is no key {key!r}: a categorical "
                          f"column lists its values ({settings(name, ['values=[...]'])}), a "
                          "numeric one has a min and max ("
                          + settings(name, ["type=numeric", "min=...", "max=..."]) + ")")
    if kind == "numeric" and key in ("min", "max") and isinstance(value, str):
        if "=" in value:
            raise SchemaError(f"column {shown(name)}: one key per --set ("
                              f"{settings(name, ['min=...', 'max=...'])}), got "
                              f"{key}={shown(value)}")
        if span:
            raise SchemaError(f"column {shown(name)}: {key} is one number; the range is two "
                              f"keys ({settings(name, [f'min={span[0]}', f'max={span[1]}'])})"
                              f", got {key}={shown(value)}")
    if kind == "categorical" and key == "values" and isinstance(value, str):
        if span and re.search(r"\.\.|-", value):  # a range of codes: every one, or numeric
            binned = settings(name, ["type=numeric", f"min={span[0]}", f"max={span[1]}"])
            raise SchemaError(f"column {shown(name)}: 'values' lists each value as a JSON "
                              f"list ({settings(name, ['values=[18, 19, 20]'])}, or "
                              f"--set-file for a long one); for a range, make it numeric "
                              f"({binned}), got {shown(value)}")
        listed = pasted("--set", f"{name}.values={json.dumps(_listed(value))}")
        raise SchemaError(f"column {shown(name)}: 'values' is a JSON list, quoted for the "
                          f"shell ({listed}; {pasted('--set-file', name + '.values=FILE')} "
                          f"for a long one), got {shown(value)}")


def _listed(text: str) -> list:
    """"red,blue", "[red, blue]", "['a','b']" -> the values they meant: numbers as numbers
    (JSON's), the rest as text without its quotes."""
    inner = text.strip()
    if inner[:1] == "[" and inner[-1:] == "]":
        inner = inner[1:-1]
    items = [t.strip().strip("'\"") for t in inner.split(",")]
    return [_read(t) for t in items if t]


def _read(item: str):
    try:
        value = json.loads(item)
    except ValueError:
        return item
    return value if _number(value) else item


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)
