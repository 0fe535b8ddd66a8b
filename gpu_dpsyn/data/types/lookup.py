"""A derived "lookup": a fixed public map from each value of a categorical column to
one value (units fixed by the test, a state's name by its code).

{"type": "derived", "from": "test_name", "op": "lookup", "map": {"T01": "mg/dL", ...}}.
The source must be categorical and the map must name each of its values, and no other
(matched as the data is, by value_key: 7, "7" and 7.0 are one).  The map's values are
text or numbers, not both (one column's type in Parquet), and no null: a nullable source
makes the column missing where the source is.  The column's output is what a categorical
column listing the map's distinct values gets (dtypes.output_dtype)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpu_dpsyn.data.dtypes import FLOAT_EXACT
from gpu_dpsyn.data.matching import factorized, plain, value_codes, value_key
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import SchemaError


def parse_map(name: str, given) -> dict:
    """{value key of a source value: output value} from the schema's "map"."""
    where = f"column {shown(name)}: op 'lookup'"
    if not isinstance(given, dict) or not given:
        raise SchemaError(f"{where} needs 'map', an object from each value of its source "
                          "to the value it stands for, got " + shown(given))
    out = {}
    for k, v in given.items():
        v = plain(v)
        if v is None or (isinstance(v, float) and math.isnan(v)):
            raise SchemaError(f"{where}: 'map' gives {shown(k)} null (or NaN); a missing "
                              "value comes only from a missing source")
        if isinstance(v, bool) or not isinstance(v, (str, int, float)) or \
                (isinstance(v, float) and math.isinf(v)):
            raise SchemaError(f"{where}: 'map' values must be text or numbers (finite), "
                              f"got {shown(v)} for {shown(k)}")
        if isinstance(v, int) and abs(v) > FLOAT_EXACT:
            raise SchemaError(f"{where}: 'map' value {shown(v)} is past +-2**53; write it "
                              "as text")
        key = value_key(plain(k))
        if key in out:
            raise SchemaError(f"{where}: 'map' names {shown(k)} twice")
        out[key] = v
    if len({isinstance(v, str) for v in out.values()}) > 1:
        raise SchemaError(f"{where}: 'map' mixes text and numbers, which one column cannot "
                          "hold in Parquet; write the numbers as text")
    return out


class Lookup:
    """The map resolved against its source's listed values: an output code per source
    code, and the distinct outputs (the column's `values`)."""

    def __init__(self, name: str, table: dict, given: dict, source):
        if source.kind != "categorical":
            raise SchemaError(f"column {shown(name)}: op 'lookup' needs a categorical "
                              f"column, and {source.name!r} is {source.kind}; list its "
                              "values as a categorical column to look them up")
        keys = [value_key(v) for v in source.values]
        table, json_keys = _json_booleans(name, table, source.values, keys)
        extra = next((k for k in given if value_key(plain(k)) not in set(keys) and
                      value_key(plain(k)) not in json_keys), None)
        if extra is not None:  # first: a key written otherwise ("7.0") is named as written
            raise SchemaError(f"column {shown(name)}: 'map' names {shown(extra)}, which is "
                              f"not a value of {source.name!r} as JSON writes its values; "
                              "drop it, or list it there")
        lacking = [v for v, k in zip(source.values, keys) if k not in table]
        if lacking:
            raise SchemaError(f"column {shown(name)}: 'map' has no entry for {shown(lacking[0])}"
                              f", a value of {source.name!r} ({len(lacking)} of its "
                              f"{len(keys)} values lack one); give every value its own")
        self.source = source
        outs = [table[k] for k in keys]
        first = {}
        for v in outs:  # the distinct outputs in their source order
            first.setdefault(value_key(v), v)
        self.values = list(first.values())
        at = {k: i for i, k in enumerate(first)}
        self.codes = np.array([at[value_key(v)] for v in outs], dtype=np.int64)

    def source_codes(self, s: pd.Series) -> np.ndarray:
        """Each row's source code (-1: missing or unlisted), read as encode reads it."""
        s = pd.Series(s).reset_index(drop=True)
        codes, uniq = factorized(s)
        listed = np.append(value_codes(list(uniq), self.source), -1)
        return listed[np.asarray(codes, dtype=np.intp)]  # (-1 picks the appended -1)

    def output_codes(self, source: pd.Series) -> np.ndarray:
        """Each row's output code from its source value (-1 where it is missing)."""
        c = self.source_codes(source)
        return np.where(c < 0, -1, np.append(self.codes, -1)[c])

    def apply(self, source: pd.Series) -> np.ndarray:
        """The output values (object; None where the source is missing)."""
        vals = np.array(self.values + [None], dtype=object)
        return vals[self.output_codes(source)]

    def data_codes(self, s: pd.Series, col) -> np.ndarray:
        """The data's copy as output codes: -1 missing, -2 a value the map never gives."""
        s = pd.Series(s).reset_index(drop=True)
        codes, uniq = factorized(s)
        listed = np.append(np.where((k := value_codes(list(uniq), col)) < 0, -2, k), -1)
        return listed[np.asarray(codes, dtype=np.intp)]


def _json_booleans(name: str, table: dict, values: list, keys: list) -> tuple:
    """(table, the JSON keys taken): a boolean source value's entry may be keyed as JSON
    writes it ("true"), as json.dumps saves a map with Python's True as a key, or as
    value_key does ("True"); not both."""
    out, taken = dict(table), set()
    for v, k in zip(values, keys):
        j = ("true" if v else "false") if isinstance(v, (bool, np.bool_)) else None
        if j is None or j not in out or j in keys:  # ("true" listed as text: itself)
            continue
        if k in out:
            raise SchemaError(f"column {shown(name)}: op 'lookup': 'map' names {shown(k)} "
                              f"twice (as {shown(j)} too)")
        out[k], _ = out.pop(j), taken.add(j)
    return out, taken


PRESENCE_KEYS = ("missing", "present")


class Presence(Lookup):
    """op "present": a flag fixed by whether its source has a value (graduated: whether
    there is a graduation date), {"missing": v0, "present": v1}; the lookup's interface
    with the source's missingness as its one input."""

    def __init__(self, name: str, given, source):
        where = f"column {shown(name)}: op 'present'"
        if not isinstance(given, dict) or sorted(given) != sorted(PRESENCE_KEYS):
            raise SchemaError(f"{where} needs 'map' {{\"missing\": ..., \"present\": ...}}: "
                              "its value where the source is missing and where it has one, "
                              f"got {shown(given)}")
        outs = [plain(given[k]) for k in PRESENCE_KEYS]
        if any(v is None or isinstance(v, float) and not math.isfinite(v) or
               not isinstance(v, (str, int, float)) for v in outs) or \
                len({type(v) is bool or isinstance(v, str) for v in outs}) > 1 or \
                value_key(outs[0]) == value_key(outs[1]):
            raise SchemaError(f"{where}: 'map' takes two different values of one kind (text, "
                              f"numbers or true/false), got {shown(given)}")
        if not source.nullable:
            raise SchemaError(f"column {shown(name)}: {source.name!r} is never missing, so "
                              "whether it is present is the same on every row; make it "
                              "nullable or drop the column")
        self.source = source
        self.values, self.codes = outs, np.array([0, 1], dtype=np.int64)

    def source_codes(self, s: pd.Series) -> np.ndarray:
        """0 where the source is missing, 1 where it has a value (the output codes too)."""
        return (~pd.Series(s).reset_index(drop=True).isna()).to_numpy().astype(np.int64)
