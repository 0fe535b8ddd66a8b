"""What a schema document may hold, as JSON Schema (validated with the jsonschema library):
the keys of the document, of a NIST run and of each column type, the type of every value,
and the limits that bound what loading allocates.  Checked before any column is built, so
a misspelt key ("bin", "max_record_per_individual") or a boolean written as text
("nullable": "false") is refused instead of silently read another way.

What needs the column's other values (increasing edges, a range holding its support, a
parseable time zone) is checked where the column is built (schema.py, types/).  Messages
name the column and the key, and offer the closest known key for an unknown one.  Also:
reading a schema file (a key given twice refused), a NIST file's bounds (given once).
"""
from __future__ import annotations

from gpu_dpsyn.data.text import short, shown  # noqa: F401 (capped values in messages)

import difflib
import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpu_dpsyn.data.dtypes import MAX_ROWS
from gpu_dpsyn.data.files import read_small
from gpu_dpsyn.data.types import gap, time_of_day
from gpu_dpsyn.errors import SchemaError

MAX_BINS = 1 << 16  # codes per column (schema.MAX_COLUMN_DOMAIN is this)

_INT = {"type": "integer"}
_TEXT = {"type": "string"}
_BOOL = {"type": "boolean"}
_NUMBER = {"type": "number"}
_COMMON = {"type": _TEXT, "kind": _TEXT, "name": _TEXT,
           "dtype": {"type": "string", "x-message": "'dtype' is not a pandas dtype name "
                                                   "(e.g. 'int32', 'Int16', 'float32', "
                                                   "'string', 'category')"},
           "nullable": _BOOL}
_BINS_COUNT = {"type": "integer", "minimum": 1, "maximum": MAX_BINS,
               "x-message": f"'bins' must be a positive integer, at most {MAX_BINS} (more "
                            "is too large a domain)"}
_PRIVATE_BINS = {
    "type": "object", "required": ["private_quantiles"], "additionalProperties": False,
    "properties": {
        "private_quantiles": {"type": "integer", "minimum": 2,
                              "x-message": "private_quantiles must be an integer >= 2 (the "
                                           "number of bins)"},
        "grid": {"type": "integer", "minimum": 2, "maximum": MAX_BINS,
                 "x-message": f"'grid' must be an integer in [2, {MAX_BINS}]"},
        "spacing": {"enum": ["auto", "linear", "log"],
                    "x-message": "'spacing' must be one of auto, linear, log"}}}
_STEP = "support {\"step\": k, \"start\": s} needs integers k >= 1 and s"
_SUPPORT = {
    "anyOf": [_TEXT,
              {"type": "array", "minItems": 1,
               "items": {"type": "integer", "x-message": "'support' list must hold integers"},
               "x-message": "'support' must be a non-empty list of integers"},
              {"type": "object", "required": ["step"], "additionalProperties": False,
               "properties": {"step": {"type": "integer", "minimum": 1, "x-message": _STEP},
                              "start": {**_INT, "x-message": _STEP}},
               "x-message": _STEP}],
    "x-message": "'support' must be a format name (\"hhmm\"), a list of integers or "
                 "{\"step\": k[, \"start\": s]}"}
_MIN_MAX = "'min' and 'max' must be numbers"
COLUMN_RULES = {
    "categorical": {"values": {"type": "array", "minItems": 1, "maxItems": MAX_BINS,
                               "x-message": "categorical column needs a non-empty 'values' "
                                            f"list of at most {MAX_BINS} values (more is "
                                            "too large a domain: group them first)"},
                    # what an unlisted or missing value becomes (data/repair.py)
                    "fallback": {"type": ["string", "number", "boolean"],
                                 "x-message": "'fallback' must be one of the listed values"}},
    "numeric": {"min": {**_NUMBER, "x-message": _MIN_MAX},
                "max": {**_NUMBER, "x-message": _MIN_MAX},
                "edges": {"type": "array", "minItems": 2, "maxItems": MAX_BINS + 1,
                          "items": _NUMBER,
                          "x-message": "'edges' must be a list of >= 2 numbers, at most "
                                       f"{MAX_BINS + 1} (more bins are too large a domain)"},
                "bins": {"anyOf": [_BINS_COUNT, _PRIVATE_BINS],
                         "x-message": f"'bins' must be an integer in [1, {MAX_BINS}] or an "
                                      "object {\"private_quantiles\": K[, \"grid\": G, "
                                      "\"spacing\": \"auto\"|\"linear\"|\"log\"]}"},
                "integer": _BOOL, "support": _SUPPORT,
                "decimals": {"type": "integer", "minimum": 0, "maximum": 15,
                             "x-message": "'decimals' must be an integer in [0, 15]"},
                "fallback": {**_NUMBER, "x-message": "'fallback' must be a number in the "
                                                     "column's range"}},
    "datetime": {"min": {**_TEXT, "x-message": "'min' must be an ISO 8601 date or time text"},
                 "max": {**_TEXT, "x-message": "'max' must be an ISO 8601 date or time text"},
                 "unit": {"enum": ["year", "month", "day", "hour", "minute", "second"],
                          "x-message": "'unit' must be one of year, month, day, hour, "
                                       "minute, second (or give 'bins')"},
                 "bins": _BINS_COUNT,
                 "timezone": {**_TEXT, "x-message": "'timezone' must be a name such as "
                                                    "\"UTC\" or \"America/New_York\""},
                 "format": {**_TEXT, "x-message": "'format' must be a layout such as "
                                                  "\"%d.%m.%Y\" (strftime's codes)"},
                 "after": {"type": "object", "x-message": gap.SHAPE},  # types/gap.py
                 "time_of_day": time_of_day.RULES},  # types/time_of_day.py
    "derived": {"from": {**_TEXT, "x-message": "'from' must name a column"},
                "op": _TEXT,
                "by": {"type": "integer", "minimum": 1,
                       "x-message": "'by' must be a positive integer"},
                "map": {}},  # op "lookup": checked in types/lookup.py
    "id": {},
}
for _kind, _props in COLUMN_RULES.items():
    _props.update({"missing_values": {}} if _kind in ("categorical", "numeric") else {})
    COLUMN_RULES[_kind] = {"type": "object", "additionalProperties": False,  # (missing
                           "properties": {**_COMMON, **_props}}  # codes: types/missing.py)
del COLUMN_RULES["id"]["properties"]["nullable"]  # an id is never missing
_POSITIVE = {"type": "integer", "minimum": 1}
DOCUMENT_RULES = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "columns": {"type": ["object", "array"],
                    "x-message": "'columns' must be an object (name -> column) or a list of "
                                 "columns with a 'name'"},
        "max_records_per_individual": {
            **_POSITIVE, "maximum": MAX_ROWS,
            "x-message": f"max_records_per_individual must be an integer in [1, {MAX_ROWS}]"},
        "individual_id": {**_TEXT, "x-message": "individual_id must be a column name"},
        "max_rows": {"type": "integer", "minimum": 1, "maximum": MAX_ROWS,
                     "x-message": f"max_rows must be an integer in [1, {MAX_ROWS}]"},
        # table columns declared unused: never measured, not in the output
        "ignored_columns": {"type": "array", "items": {**_TEXT, "minLength": 1},
                            "uniqueItems": True,
                            "x-message": "ignored_columns must be a list of distinct "
                                         "column names"},
        # how the CSV file is written (data/dialect.py)
        "csv": {"type": "object", "additionalProperties": False,
                "properties": {k: {"type": ["string"] + (["null"] if k == "thousands" else []),
                                   "x-message": f"csv '{k}' must be text"}
                               for k in ("separator", "decimal", "thousands", "encoding")},
                "x-message": "csv must be an object (separator, decimal, thousands, encoding)"},
        # infer-schema's draft: the values read off the data, until they are reviewed
        "_drafted_from_data": {"type": "array", "items": _TEXT,
                               "x-message": "_drafted_from_data must be a list of "
                                            "'column.key' names"},
        # NIST parameters.json: the columns under "schema", the bounds under "runs"
        "schema": {"type": "object", "x-message": "NIST 'schema' must be an object"},
        "runs": {"type": "array",
                 "items": {"type": "object", "additionalProperties": False,
                           "properties": {"epsilon": _NUMBER, "delta": _NUMBER,
                                          "max_records": _POSITIVE,
                                          "max_records_per_individual": {
                                              **_POSITIVE, "maximum": MAX_ROWS}}}}}}


# -- validation ------------------------------------------------------------------------------
def _validator(rules):
    from jsonschema import Draft202012Validator, validators
    checker = Draft202012Validator.TYPE_CHECKER.redefine_many({
        # JSON's types as Python (and NumPy) values: no bool among the numbers, no 1.0
        # among the integers, no 0 or "false" among the booleans
        "integer": lambda _, v: isinstance(v, (int, np.integer)) and
        not isinstance(v, (bool, np.bool_)),
        "number": lambda _, v: isinstance(v, (int, float, np.integer, np.floating)) and
        not isinstance(v, (bool, np.bool_)),
        "boolean": lambda _, v: isinstance(v, (bool, np.bool_)),
        "array": lambda _, v: isinstance(v, list),
    })
    cls = validators.extend(Draft202012Validator, type_checker=checker)
    return cls(rules)


_TYPE_WORDS = {"boolean": "true or false (a JSON boolean)", "integer": "an integer",
               "number": "a number", "string": "a text", "array": "a list",
               "object": "an object"}
# an unknown key before a missing one: its hint names what was meant
_ORDER = {"additionalProperties": 0, "required": 2}


def _message(err, prefix: str, owner: str, validator) -> str:
    """One line naming the column (prefix), the key and what is wrong with its value."""
    if err.validator in ("anyOf", "oneOf"):  # the branch of the value's type, if one
        fits = [i for i, b in enumerate(err.validator_value)
                if "type" in b and validator.is_type(err.instance, b["type"])]
        if len(fits) == 1:
            inner = sorted((e for e in err.context if e.relative_schema_path[0] == fits[0]),
                           key=lambda e: (_ORDER.get(e.validator, 1), list(e.path)))
            if inner:
                return _message(inner[0], prefix, owner, validator)
    path = [p for p in err.absolute_path]
    named = [p for p in path if isinstance(p, str)]
    head = f"{prefix}: " if prefix else ""
    if err.validator == "additionalProperties":
        known = sorted(err.schema.get("properties", {}))
        extra = sorted(str(k) for k in err.instance if k not in known)[0]
        close = difflib.get_close_matches(extra, known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        kinds = [k for k, r in COLUMN_RULES.items() if extra in r["properties"]]
        if kinds and not close and any(set(known) == set(r["properties"])
                                       for r in COLUMN_RULES.values()):  # a column's
            hint = (f"; {extra!r} is a key of a {' or '.join(kinds)} column: change its "
                    "\"type\" first")
        inside = f" in {named[-1]!r}" if named else ""
        who = f"{named[-1]!r}" if named else owner
        return (f"{head}unknown key {extra!r}{inside}{hint} ({who} takes "
                f"{', '.join(known)})")
    custom = err.schema.get("x-message")
    if custom:
        return f"{head}{custom}, got {_short(err.instance)}"
    key = f"{named[-1]!r} " if named else ""
    if err.validator == "type":
        want = err.validator_value
        want = [want] if isinstance(want, str) else want
        return (f"{head}{key}must be {' or '.join(_TYPE_WORDS.get(w, w) for w in want)}, "
                f"got {_short(err.instance)}")
    return f"{head}{key}{err.message}"


def _short(v) -> str:
    text = repr(v) if isinstance(v, str) else json.dumps(
        v, default=lambda o: o.item() if isinstance(o, np.generic) else str(o))
    return text if len(text) <= 60 else text[:57] + "..."


_CACHE: dict = {}


def _check(name: str, rules, instance, prefix: str, owner: str) -> None:
    validator = _CACHE.get(name)
    if validator is None:
        validator = _CACHE[name] = _validator(rules)
    errors = sorted(validator.iter_errors(instance),
                    key=lambda e: (len(e.absolute_path), _ORDER.get(e.validator, 1)))
    if errors:
        raise SchemaError(_message(errors[0], prefix, owner, validator))


def check_document(d: dict) -> None:
    """The document's own keys and values (the columns are checked one by one), and no
    text that is no UTF-8: JSON's "\\ud800" escape is a lone surrogate, which no table
    file can hold (its writer failed after the budget was spent)."""
    bad = _unencodable(d)
    if bad is not None:
        raise SchemaError(f"the schema holds text that is no UTF-8 (a lone surrogate): "
                          f"{shown(bad)}; no table file can hold it")
    _check("document", DOCUMENT_RULES, d, "", "the schema")
    if "columns" in d and "schema" in d:
        raise SchemaError("give 'columns' or NIST's 'schema', not both")


def _unencodable(x):
    """The first text (a key or a value, at any depth) that UTF-8 cannot encode, or None."""
    if isinstance(x, str):
        try:
            x.encode("utf-8")
        except UnicodeEncodeError:
            return x
        return None
    items = x.items() if isinstance(x, dict) else enumerate(x) \
        if isinstance(x, (list, tuple)) else ()
    for k, v in items:
        bad = _unencodable(k) if isinstance(k, str) else None
        bad = bad if bad is not None else _unencodable(v)
        if bad is not None:
            return bad
    return None


def check_individual(ids: list, individual_id, ignored: list) -> None:
    """The id column that names the individual: individual_id, or the only id column."""
    if individual_id is None and len(ids) > 1:
        raise SchemaError(f"schema has several id columns {ids}; name the one that "
                          "identifies an individual with \"individual_id\"")
    if individual_id is not None and individual_id in ignored:
        raise SchemaError(f"individual_id {individual_id!r} is in ignored_columns: the "
                          "column that names the individual must be read")
    if individual_id is not None and individual_id not in ids:
        raise SchemaError(f"individual_id {individual_id!r} must name an id column; "
                          f"id columns are {ids}")


def check_nullable(c) -> None:
    """What a nullable column cannot also have: a fallback (an invalid value is made
    missing) or a listed "" (a CSV writes it and a missing value alike, an empty cell)."""
    if c.fallback is not None:
        raise SchemaError(f"column {shown(c.name)}: 'fallback' is never used in a nullable "
                          "column (a value it does not allow is made missing); remove one "
                          "of them")
    if c.values is not None and "" in c.values:  # (a lookup lists values too)
        raise SchemaError(f"column {shown(c.name)} lists \"\" and is nullable: a CSV writes "
                          "both as an empty cell; keep one of them")


def check_column(name: str, kind: str, spec: dict) -> None:
    """The keys and values one column of this kind may have."""
    article = "an" if kind == "id" else "a"
    _check(kind, COLUMN_RULES[kind], spec, f"column {shown(name)}", f"{article} {kind} column")


_INTEGER_TYPES, _FLOAT_TYPES = ("integer", "int"), ("float",)


def integer_flag(name: str, spec: dict, dtype) -> bool:
    """Whether a numeric column is integer: its "integer" key, else what its type (or its
    kind: the two are one key) or its dtype says; a type and a flag that disagree are
    refused."""
    said = {spec.get(k) for k in ("type", "kind") if isinstance(spec.get(k), str)}
    whole, real = bool(said & set(_INTEGER_TYPES)), bool(said & set(_FLOAT_TYPES))
    flag = spec.get("integer")
    if flag is not None and (whole and not flag or real and flag):
        said_as = "integer" if whole else "float"
        raise SchemaError(f"column {shown(name)}: its type says {said_as} but \"integer\" "
                          f"is {str(flag).lower()}: give one")
    int_dtype = _integer_dtype(dtype)
    if real and int_dtype:
        raise SchemaError(f"column {shown(name)}: its type says float but its dtype "
                          f"{shown(dtype)} is an integer one: give one")
    if flag is not None:
        return bool(flag)
    return whole or int_dtype


def _integer_dtype(dtype) -> bool:
    """An integer dtype by any name ("int16", "i2", "<i2", "Int16"); no dtype: False."""
    try:
        return isinstance(dtype, str) and pd.api.types.is_integer_dtype(
            pd.api.types.pandas_dtype(dtype))
    except (TypeError, ValueError, ImportError, NotImplementedError):
        return False


# -- a key given twice -----------------------------------------------------------------------
class _Pairs(dict):
    """A JSON object that had a key more than once (json keeps the last silently)."""
    duplicates: list


def object_pairs(pairs):
    """json.loads' object_pairs_hook: a dict, marked when a key is given twice, so that
    the error can name where (check_document)."""
    out = _Pairs(pairs)
    if len(out) == len(pairs):
        return dict(out)
    seen, dup = set(), []
    for k, _ in pairs:
        if k in seen and k not in dup:
            dup.append(k)
        seen.add(k)
    out.duplicates = dup
    return out


def first_duplicate(obj, path=()) -> str | None:
    """A message naming the first object that had a key twice, or None."""
    if isinstance(obj, _Pairs):
        return f"{_place(path)}the key {obj.duplicates[0]!r} is given twice (JSON would " \
               "keep only the last); remove one"
    items = obj.items() if isinstance(obj, dict) else \
        enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        if isinstance(v, (dict, list)):
            if isinstance(v, dict) and path in ((), ("columns",), ("schema",)) and \
                    isinstance(k, int) and isinstance(v.get("name"), str):
                k = v["name"]  # a column of a list: by its name
            found = first_duplicate(v, (*path, k))
            if found is not None:
                return found
    return None


def _place(path) -> str:
    if len(path) >= 2 and path[0] in ("columns", "schema"):
        rest = [f"'{p}'" for p in path[2:]]
        return f"column {path[1]!r}: " + (f"{' in '.join(reversed(rest))}: " if rest else "")
    return f"{' in '.join(repr(p) for p in reversed(path))}: " if path else ""


def one_bound(key: str, top, runs: list):
    """A NIST file's bound (the unit of privacy, the rows of a release) where the document
    and its runs give it: one value, or a refusal naming two (taking either would drop the
    other silently, and a smaller records-per-individual weakens the guarantee)."""
    seen = ([top] if top is not None else []) + [r[key] for r in runs if key in r]
    if len(set(seen)) > 1:
        a, b = seen[0], next(x for x in seen if x != seen[0])
        raise SchemaError(f"the schema gives {key} {a} and {b} (its top level and 'runs', "
                          "or two runs): give one value")
    return seen[0] if seen else None


def read_document(source) -> dict:
    """A schema file's JSON, a key given twice refused (json.loads keeps the last)."""
    path = Path(source)
    text = read_small(path, "schema file", SchemaError)  # a regular file, not too large
    try:
        d = json.loads(text, object_pairs_hook=object_pairs)
    except ValueError as e:  # JSONDecodeError, or a number of more digits than int() takes
        raise SchemaError(f"schema file {str(path)!r} is not valid JSON: {short(e)}") from None
    except RecursionError:
        raise SchemaError(f"schema file {str(path)!r} is nested deeper than Python's JSON "
                          "reader goes; no schema is") from None
    twice = first_duplicate(d)
    if twice is not None:
        raise SchemaError(f"schema file {str(path)!r}: {twice}")
    return d
