"""Drafting a derived "lookup" (types/lookup.py): where a column's value is fixed by a
categorical column's in every record (units by the test, a state's name by its code),
the draft makes it a map of that column, never measured, so no synthetic record pairs a
test with another's unit.  NOT private, as every draft: that the function holds in every
record, and the map itself, are read off the data (the map is listed for review).

A pair is taken where, with missing values on the same records, each source value has
one value of the other, which has 2 or more values and no more than the source; and the
source's values repeat often enough that the function is no chance (a code of 2 values
beside near-unique names is one in every record).  No chain and no cycle: sources are
taken by their number of values, most first (ties in table order), and a column looked
up is no source (a one-to-one pair: the first measured, the other looked up)."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from gpu_dpsyn.data.dtypes import check_column
from gpu_dpsyn.data.matching import factorized, plain, value_codes, value_key
from gpu_dpsyn.data.schema import Column, column_from_spec
from gpu_dpsyn.data.text import settings
from gpu_dpsyn.data.types import missing
from gpu_dpsyn.data.draft_personal import PERSON_WORDS, name_words
from gpu_dpsyn.data.values import ID_WORDS
from gpu_dpsyn.errors import SchemaError

# a source's rows past one per value, at least this many times its values (and at least
# MIN_REPEATS): a binary column is one function of 100 values in 110 rows by chance, not
# of 30 in 3,000 (each value's records agreeing with the first: 1 in 2^2,970)
REPEATS_PER_VALUE = 3
MIN_REPEATS = 50
_SHORT = 120  # an undo command lists the values up to this many characters


SOURCE_RECORDS = 20  # a source's records per value, at least, on average


def _per_individual(name: str, codes, k: int) -> bool:
    """Whether a column may name individuals, so a map from it would list each one's value
    in the public schema (and copy it onto the synthetic rows): a trial's arm keyed by
    its 1,500 subjects.  Named as a person or a person's identifier (subject, patient,
    mrn, user_id, case_no; not species_id or state_code), or an identifier alone (id,
    uid), or few records a value (fewer than SOURCE_RECORDS on average: an individual's
    handful, where a species' or a code's records run to hundreds)."""
    words = set(name_words(name))
    return bool(words & PERSON_WORDS) or bool(words) and words <= ID_WORDS or \
        int((codes >= 0).sum()) < SOURCE_RECORDS * k


def lookups(data: dict, cols: list, whys: list) -> list:
    """Draft each column of cols fixed by a categorical one as a lookup of it (in place:
    cols and their lines whys); the names of those drafted.  data: each column's values
    by name."""
    codes = {}  # name -> (row codes, -1 missing; the listed value of each code)
    for kind in ("categorical", "numeric"):  # a numeric one with more values than every
        most = max((len(v) for _, v in codes.values()), default=0)  # source: none
        for c in cols:
            if c.kind == kind and not c.missing_values and (most or kind == "categorical"):
                got = _codes(data[c.name], c, most or None)
                if got is not None:
                    codes[c.name] = got
    at = {c.name: i for i, c in enumerate(cols)}
    order = sorted((n for n in codes if cols[at[n]].kind == "categorical" and
                    not _per_individual(n, codes[n][0], len(codes[n][1]))),
                   key=lambda n: (-len(codes[n][1]), at[n]))
    # a column another is derived from already (a present flag's) stays measured
    done, sources = set(), {c.derive.source for c in cols if c.kind == "derived"}
    for a in order:
        if a in done:
            continue
        ca, va = codes[a]
        k = len(va)
        if k < 2 or int((ca >= 0).sum()) - k < max(REPEATS_PER_VALUE * k, MIN_REPEATS):
            continue
        by = np.argsort(ca, kind="stable")
        sa = ca[by]
        same = sa[1:] == sa[:-1]
        first = np.flatnonzero(np.append(True, ~same))  # each group's first row (sorted)
        for b in (n for n in codes if n != a and n not in done and n not in sources):
            cb, vb = codes[b]
            if not 2 <= len(vb) <= k or not np.array_equal(ca < 0, cb < 0):
                continue
            sb = cb[by]
            if (same & (sb[1:] != sb[:-1])).any():
                continue
            col = _lookup(cols[at[b]], cols[at[a]], va, vb, sa[first], sb[first])
            if col is None:
                continue
            whys[at[b]] = (f"its {len(vb)} values fixed by {a!r} in every record: a lookup "
                           f"of it, not measured (no budget); to measure it instead: "
                           + _undo(cols[at[b]]))
            cols[at[b]] = col
            done.add(b)
            sources.add(a)
    return sorted(done)


def _codes(s: pd.Series, col: Column, most: int | None):
    """(each row's code, -1 where missing; the value of each code) as the drafted column
    reads the data, or None where it cannot (text in a numeric column, say) or it has
    more than `most` values."""
    s = missing.blank(s, col)[0].reset_index(drop=True)
    codes, uniq = factorized(s)
    codes = np.asarray(codes, dtype=np.int64)
    if col.kind == "categorical":
        listed = value_codes(list(uniq), col)
        if (listed < 0).any():
            return None
        return np.where(codes < 0, -1, np.append(listed, -1)[codes]), list(col.values)
    if len(uniq) > most:  # (before reading them one by one)
        return None
    x = pd.to_numeric(pd.Series(list(uniq), dtype=object), errors="coerce")
    if x.isna().any():
        return None
    n, inverse = np.unique(x.to_numpy(dtype=np.float64), return_inverse=True)
    vals = [int(v) if col.integer and float(v).is_integer() else float(v) for v in n]
    return np.where(codes < 0, -1, np.append(inverse, -1)[codes]), vals


def _lookup(b: Column, a: Column, va: list, vb: list, ka, kb) -> Column | None:
    """b as a lookup of a (source code ka[i] -> code kb[i]), or None where the map
    would be refused (text beside numbers)."""
    if len({isinstance(v, str) for v in vb}) > 1 or \
            any(isinstance(v, bool) for v in vb):
        return None
    seen = ka >= 0
    table = {value_key(va[i]): vb[j]
             for i, j in zip(ka[seen], kb[seen])}
    if len(table) != len(va):  # a listed value without records (not drafted so)
        return None
    return _derived(b, a, {"type": "derived", "from": a.name, "op": "lookup", "map": table})


def _derived(b: Column, a: Column, spec: dict) -> Column | None:
    """b drafted as the derived column `spec` of a, in b's dtype, or None where the
    schema would refuse it (its dtype does not fit the map's values, say)."""
    if b.dtype is not None:
        spec["dtype"] = b.dtype
    try:
        col = column_from_spec(b.name, spec)
        col.derive.resolve(col, a)
        check_column(col)
    except SchemaError:
        return None
    return col


def _undo(b: Column) -> str:
    """The edit that measures b again, as drafted before."""
    d = b.to_dict()
    text = json.dumps([plain(v) for v in d.get("values", [])], ensure_ascii=False)
    if b.kind == "categorical" and len(text) <= _SHORT:  # the values to write are the
        # public list: the data's, set as they are, would be marked reviewed (a review's)
        return f"gpu-dpsyn schema FILE {settings(b.name, ['type=categorical'])} " \
               f"{settings(b.name, ['values=[...]'])}, its public values (the data has {text})"
    return f"gpu-dpsyn schema FILE {settings(b.name, ['type=' + b.kind])} and its " + \
        ("values (--set-file)" if b.kind == "categorical" else "min, max, bins")


def presences(data: dict, cols: list, whys: list) -> list:
    """Draft each two-valued categorical column that is one value on every record where
    a nullable column is missing and the other wherever it has a value (graduated, and a
    graduation date) as op "present" of it (in place, as lookups); the names drafted.
    Both sides need MIN_REPEATS records: a flag of few rows agrees with a column's gaps by
    chance.  A column drafted derived, or a source of one, is neither."""
    at = {c.name: i for i, c in enumerate(cols)}
    derived = {c.name for c in cols if c.kind == "derived"}
    sources = {c.derive.source for c in cols if c.kind == "derived"}
    flags = {c.name: _codes(data[c.name], c, None) for c in cols
             if c.kind == "categorical" and len(c.values) == 2 and not c.nullable and
             not c.missing_values and c.name not in sources}
    done = []
    for a in (c for c in cols if c.nullable and c.kind not in ("derived", "id")):
        gone = missing.blank(data[a.name], a)[0].reset_index(drop=True).isna().to_numpy()
        if min(int(gone.sum()), int((~gone).sum())) < MIN_REPEATS:
            continue
        for b, got in flags.items():
            if got is None or b in derived or b in done:
                continue
            codes, vals = got
            off, on = codes[gone], codes[~gone]  # one value on each side, not the same
            if off.min() != off.max() or on.min() != on.max() or off[0] == on[0]:
                continue
            given = {"missing": plain(vals[off[0]]), "present": plain(vals[on[0]])}
            col = _derived(cols[at[b]], a, {"type": "derived", "from": a.name,
                                            "op": "present", "map": given})
            if col is None:
                continue
            said = {k: json.dumps(v, ensure_ascii=False) for k, v in given.items()}
            whys[at[b]] = (f"{said['present']} wherever {a.name!r} has a value, "
                           f"{said['missing']} where it is missing, in every record: "
                           "derived from it, not measured (no budget); to measure it "
                           "instead: " + _undo(cols[at[b]]))
            cols[at[b]] = col
            done.append(b)
            derived.add(b)
    return done
