"""--workload COLS[:WEIGHT] and --group-by COLS: column names joined by ',', read against
the schema's names, so that a name may hold ',' or ':' (as --set takes one holding '=')."""
from __future__ import annotations

import argparse
import functools
import json

from gpu_dpsyn.cli.parser import _NUMBER, _number
from gpu_dpsyn.data.text import pasted
from gpu_dpsyn.errors import DPSynError


def parse_group_by(items, names=None):
    """["state", "puma,year"] -> [["state"], ["puma", "year"]]: a level per flag; names
    (the schema's) read a name holding ',' as one (see _reading)."""
    levels = []
    for item in items or []:
        cols, _ = _reading("--group-by", item, names, weighted=False)
        if not cols:
            raise DPSynError(f"--group-by {item!r} names no column")
        levels.append(list(cols))
    return levels or None


def parse_workload(items, names=None):
    """["a,b:3", "c"] -> [(("a", "b"), 3.0), (("c",), 1.0)]; names: see _reading."""
    out = []
    for item in items or []:
        cols, w = _reading("--workload", item, names, weighted=True)
        try:  # (as a number is written: float() reads "1_0" as 10)
            weight = _number(w) if w is not None else 1.0
        except argparse.ArgumentTypeError:
            raise DPSynError(f"--workload {item!r}: the weight after ':' must be a "
                             "number") from None
        out.append((cols, weight))
    return out


def _reading(flag: str, item: str, names, weighted: bool) -> tuple:
    """(columns, weight text or None) of COLS[:WEIGHT].  A name may hold ',' or ':' (as
    --set takes one holding '='): the readings into the schema's names count, and the JSON
    form ["a,b", "c"][:WEIGHT] takes any name; a text read two ways is refused.  Read
    no way (a name not in the schema: check_plan names it), cut at each ',' and the
    first ':'."""
    found, bad_json = {}, None
    if item.lstrip().startswith("["):
        try:
            cols, end = json.JSONDecoder().raw_decode(item.lstrip())
            rest = item.lstrip()[end:].strip()
        except ValueError as e:
            cols, rest, bad_json = None, "", e
        if isinstance(cols, list) and cols and all(isinstance(c, str) for c in cols) and (
                not rest or weighted and rest.startswith(":") and _is_number(rest[1:])):
            found[(tuple(cols), rest[1:] or None)] = 1
        else:
            bad_json = bad_json or "not a list of names"
    cuts = [len(item)] + ([i for i, c in enumerate(item) if c == ":"] if weighted else [])
    for i in cuts if names else ():
        w = item[i + 1:] if i < len(item) else None
        if w is None or _is_number(w):
            for cols in _names_in(item[:i], tuple(names)):
                found[(cols, w)] = 1
    if len(found) > 1:
        two = list(found)[:2]
        ways = [list(c) if w is None else f"{list(c)} weight {w}" for c, w in two]
        forms = [pasted(flag, json.dumps(list(c)) + (f":{w}" if w else "")) for c, w in two]
        raise DPSynError(f"{flag} {item!r} reads two ways, as columns {ways[0]} or {ways[1]}: "
                         f"give the columns in JSON, {forms[0]} or {forms[1]}")
    if found:
        return next(iter(found))
    if bad_json is not None and not (names and _names_in(item, tuple(names))):
        raise DPSynError(f"{flag} {item!r}: not a JSON list of column names ({bad_json}); "
                         "write it as [\"a,b\", \"c\"]" + ("[:WEIGHT]" if weighted else ""))
    cols, colon, w = item.partition(":") if weighted else (item, "", "")
    if colon and not w.strip():
        raise DPSynError(f"{flag} {item!r}: no weight after ':' (leave the ':' out for "
                         "weight 1)")
    return tuple(c.strip() for c in cols.split(",") if c.strip()), (w if colon else None)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.fullmatch(text))


def _names_in(text: str, names: tuple) -> tuple:
    """Up to two readings of text as names joined by ',' (spaces around each allowed)."""
    @functools.lru_cache(maxsize=None)
    def at(i):  # the readings of text[i:]
        out = []
        while i < len(text) and text[i].isspace():
            i += 1
        for n in names:
            if n and text.startswith(n, i):
                j = i + len(n)
                while j < len(text) and text[j].isspace():
                    j += 1
                if j == len(text):
                    out.append((n,))
                elif text[j] == ",":
                    out += [(n, *r) for r in at(j + 1)]
            if len(out) > 1:
                break
        return tuple(dict.fromkeys(out))[:2]
    return at(0)
