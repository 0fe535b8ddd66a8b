"""Drafting a schema from the data itself: NOT private, every guess listed for review.

infer_schema reads value lists, ranges and date spans off the private table, which leaks
them; it warns (NonPrivateSchemaWarning), and the CLI prints one line per column saying
what was guessed and why, so the user can replace it with public knowledge.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.core.checks import column_labels, integer
from gpu_dpsyn.core.types import DEFAULT_MAX_CELLS
from gpu_dpsyn.data import (draft_after, draft_cuts, draft_lookup, draft_personal,
                             draft_spans)
from gpu_dpsyn.data.draft_columns import Guesser, IdColumnWarning  # noqa: F401 (re-exported)
from gpu_dpsyn.data.encoding import check_cells, check_frame
from gpu_dpsyn.data.schema import MAX_COLUMN_DOMAIN, Column, Schema
from gpu_dpsyn.data.text import leaving_out, shown
from gpu_dpsyn.data.values import BLANK_HEADER, id_name, is_text
from gpu_dpsyn.errors import (DataError, LargeDomainWarning,  # noqa: F401 (re-exported)
                              NonPrivateSchemaWarning, SchemaError)



def infer_schema(df: pd.DataFrame, max_categories: int = 100, bins: int = 32,
                 id_columns=(), pairs: bool = True, by_rows: bool = True,
                 lookups: bool = True) -> Schema:
    """Read a schema off the data.  NOT differentially private: warns loudly.  pairs:
    draft a datetime column "after" another (data/draft_after.py); by_rows: no more bins
    of a datetime column than its values support (draft_stamps.row_limit); lookups: a
    column fixed by another as a lookup of it (data/draft_lookup.py)."""
    return infer_schema_with_summary(df, max_categories, bins, id_columns, pairs=pairs,
                                     by_rows=by_rows, lookups=lookups)[0]


def comparison_schema(real: pd.DataFrame, syn: pd.DataFrame) -> Schema:
    """A schema to compare two tables by (evaluate without one; not a release): both
    tables' domains (synthetic values the real one lacks), the real table's ids kept ids
    (beside the synthetic 1..n they repeat, and were scored as data), and so a synthetic
    1..n in a column named like an id, whose real values repeat.  No column "after"
    another: one synthetic record out of order would switch a column from its dates to
    its gaps.  No lookup: a column looked up is not scored, and a release that broke
    the function would hide it.  Dates in their own unit where it keeps to 1,000 bins,
    whatever the rows: a comparison adds no noise to coarsen against."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids = [c.name for c in infer_schema(real, pairs=False, lookups=False).columns
               if c.kind == "id"]
        ids += [c for c in map(str, syn.columns) if c not in ids and c in real.columns and
                id_name(c) and _numbered(syn[c])]  # a release's id: 1..n, whatever the real
        schema = infer_schema(pd.concat([real, syn], ignore_index=True), id_columns=ids,
                              pairs=False, by_rows=False, lookups=False)
    apart = [c for c in map(str, real.columns) if c in syn.columns and
             None != _numbers(real[c]) != _numbers(syn[c]) != None]  # noqa: E711
    if apart:  # their values cannot meet: scored TVD 1, and nothing said why
        warnings.warn(f"column(s) {', '.join(map(repr, apart[:5]))} hold numbers in one table "
                      "and text in the other: their values cannot match; evaluate with the "
                      "release's --schema to read both alike", UserWarning, stacklevel=3)
    return schema


def _numbers(s: pd.Series) -> bool | None:
    """Whether every present value of s reads as a number (None: no value, or dates and
    booleans, which either table may hold as text)."""
    v = s.dropna()
    if not len(v) or pd.api.types.is_datetime64_any_dtype(v) or \
            pd.api.types.is_bool_dtype(v):
        return None
    return bool(pd.to_numeric(v, errors="coerce").notna().all())


def _numbered(s: pd.Series) -> bool:
    """Whether s is 1..n in order, as a release writes its id column."""
    v = pd.to_numeric(s, errors="coerce")
    return len(v) > 0 and bool((v.to_numpy() == np.arange(1, len(v) + 1)).all())


def infer_schema_with_summary(df: pd.DataFrame, max_categories: int = 100, bins: int = 32,
                              id_columns=(), ignored_columns=(), pairs: bool = True,
                              by_rows: bool = True,
                              lookups: bool = True) -> tuple[Schema, list[str]]:
    """(schema, one line per column naming the guess and why) for the user to review.
    ignored_columns: left out unread, in "ignored_columns" (the user's choice: not a
    drafted value)."""
    check_frame(df, "infer_schema's table")
    column_labels(df, "infer_schema's table")  # as fit() refuses them
    integer("max_categories", max_categories, 1, DataError)
    integer("bins", bins, 1, DataError)
    if bins > MAX_COLUMN_DOMAIN:  # edges are built for every bin
        raise DataError(f"bins must be at most {MAX_COLUMN_DOMAIN}, got {bins}")
    if isinstance(id_columns, str):
        id_columns = (id_columns,)
    for name in df.columns:  # a list column (Parquet's, say) has no domain to guess
        check_cells(df[name], str(name))
    warnings.warn(
        "infer_schema reads the domain (value lists, min/max) off the private data itself. "
        "This is NOT differentially private: rare values and extremes leak. Review the "
        "schema and replace it with public knowledge before releasing anything.",
        NonPrivateSchemaWarning, stacklevel=3)
    unknown = [c for c in id_columns if c not in [str(n) for n in df.columns]]
    if unknown:
        raise SchemaError(f"--id names no column of the table: {unknown}")
    guess = Guesser(max_categories, bins, by_rows)
    named = sorted((c for c in df.columns if str(c) in id_columns),
                   key=lambda c: bool(df[c].isna().any()))  # the individual's, as below
    if named:  # an individual's records share its bound (Guesser.individuals)
        guess.individuals = int(df[named[0]].nunique())
    cols, whys, gaps, indexes = [], [], {}, set()
    left = {}  # columns left out of the draft: name -> (why, what was read)
    given = [str(c) for c in ignored_columns]  # the table may hold them or not
    left.update((c, ("given by --ignore", None)) for c in given)
    for name in df.columns:
        if str(name) in given:
            continue
        if len(df) and str(name) not in id_columns and df[name].isna().all():
            left[str(name)] = ("entirely empty", "empty")  # nothing to draft from
            continue
        first = row_numbers(str(name), df[name]) if str(name) not in id_columns else None
        if first is not None:
            col, why = _row_index(str(name), first, len(df))
            indexes.add(col.name)
        else:
            col, why = guess.column(str(name), df[name], str(name) in id_columns)
        if col is None:
            left[str(name)] = (why, "values seen")
            continue
        gaps[col.name] = bool(df[name].isna().any())
        cols.append(col)
        whys.append(why)
    # several ids: one given by --id names the individual, else the first without gaps
    # (the fit refuses gaps), a saved row index last (it names records, not people)
    ids = sorted((c.name for c in cols if c.kind == "id"),
                 key=lambda c: (c not in id_columns, gaps[c], c in indexes))
    # the individual: an id, else a column named like one whose values repeat (its line
    # says to draft again with --id)
    unit = ids[0] if ids else next((c.name for c in cols if id_name(c.name)), None)
    personal = {c.name: why for c in cols if (why := draft_personal.reference(
        df, c, ids[0] if ids else None) or draft_personal.per_individual(
        df, c, unit, max_categories))}
    whys = [w + draft_personal.hint(c) for c, w in zip(cols, whys) if c.name not in personal]
    cols = [c for c in cols if c.name not in personal]
    left.update((c, (why, "values counted")) for c, why in personal.items())
    _bin_listed_codes(cols, whys, guess)
    if pairs:
        draft_after.ordered_pairs({str(n): df[n] for n in df.columns}, cols, whys,
                                  {n: s[2] for n, s in guess.stamps.items()}, guess.bins)
        draft_spans.spans({str(n): df[n] for n in df.columns}, cols, whys,  # a stay's
                          {n: s[2] for n, s in guess.stamps.items()})  # days
    if lookups:
        data = {str(n): df[n] for n in df.columns}
        draft_lookup.presences(data, cols, whys)  # first: a flag held twice (Y/N, 1/0)
        draft_lookup.lookups(data, cols, whys)  # made the first a lookup's source, measured
        draft_cuts.thresholds(data, cols, whys)  # a flag of a binned value's range
        draft_spans.sums(data, cols, whys)  # a total of two numbers
    read = {c.name: drafted_keys(c) + [k for k in ("unit", "bins") if c.name in guess.by_count
                                       and k in c.to_dict()][-1:] for c in cols}
    lines = [f"  {c.name:<20} {c.kind:<12} {why}" + (" (nullable)" if c.nullable else "")
             + (f" [read off the data: {', '.join(read[c.name])}]" if read[c.name] else "")
             for c, why in zip(cols, whys)]
    lines += [f"  {c:<20} {'ignored':<12} {why}: in \"ignored_columns\", not synthesized "
              f"nor in the output" + (f" [read off the data: {what}]" if what else "")
              for c, (why, what) in left.items()]
    if (left or cols) and all(c.kind in ("id", "derived") for c in cols):  # (else
        # Schema's words, which name no column)
        raise SchemaError("no column left to draft: " + "; ".join(
            [f"{shown(c)} ({why})" for c, (why, _) in left.items()] + (
                [f"{', '.join(map(shown, (c.name for c in cols)))} an id"] if cols else [])))
    ignored = [str(c) for c in df.columns if str(c) in left] + \
        [c for c in given if c not in [str(n) for n in df.columns]]
    schema = Schema(cols, individual_id=ids[0] if len(ids) > 1 else None,
                    drafted=[f"{c}.{k}" for c, keys in read.items() for k in keys]
                    + [f"{c}.ignored" for c in ignored if c not in given], ignored=ignored)
    lines += [f"  note: {c.name!r} is how pandas names a blank header cell (a saved row "
              f"index?): name it in the file, or leave it out (gpu-dpsyn schema FILE "
              f"{leaving_out(c.name)})" for c in cols
              if BLANK_HEADER.fullmatch(c.name) and c.name not in indexes]
    too_big = _largest_pair(schema)
    if too_big:  # the fit leaves that pair out: say so now, not after the review
        warnings.warn(too_big, LargeDomainWarning, stacklevel=3)
        lines.append("  note: " + too_big)
    return schema, lines


def row_numbers(name: str, s: pd.Series) -> int | None:
    """The first number where a column under a blank header numbers the rows in their
    order from 0 or 1, as pandas' to_csv saves its row index; else None."""
    if not BLANK_HEADER.fullmatch(name) or not len(s) or s.isna().any():
        return None
    if is_text(s):  # (the CLI reads text; integers written plainly, as pandas writes them)
        if not s.astype(str).str.fullmatch(r"[0-9]+").all():
            return None
    elif not pd.api.types.is_integer_dtype(s):  # (booleans would read as 0, 1)
        return None
    numbers = pd.to_numeric(s).to_numpy()
    first = int(numbers[0])
    return first if first in (0, 1) and \
        np.array_equal(numbers, np.arange(first, first + len(s))) else None


def _row_index(name: str, first: int, n: int) -> tuple:
    """A saved row index drafted as an id (output 1..n): measured, it would spend budget
    on a uniform column (listed up to 100 rows, else an id \"looking like\" one)."""
    said = f"rows numbered {first}..{first + n - 1} under a blank header: a saved row index"
    warnings.warn(f"column {shown(name)}: {said} (pandas' to_csv), drafted as an id column, "
                  "which is not synthesized (the output numbers it 1..n). Declare it "
                  "otherwise if it is data", IdColumnWarning, stacklevel=4)
    return Column(name, "id"), f"{said} (pandas' to_csv), not data; output 1..n"


def drafted_keys(col: Column) -> list:
    """The keys of a drafted column whose values were read off the data: what a review
    must replace with public facts."""
    return _read_keys(col) + (["missing_values"] if col.missing_values else []) + \
        (["decimals"] if col.kind == "numeric" and col.decimals is not None else []) + \
        (["nullable"] if col.nullable and col.kind != "derived" else [])  # a record had
    # a gap (a derived column's follows its source's)


def _read_keys(col: Column) -> list:
    if col.kind == "categorical":
        return ["values"]
    if col.kind == "numeric":
        return (["min", "max"] if col.draft_range is not None else ["edges"]) + \
            (["support"] if col.support is not None else [])
    if col.kind == "datetime":  # (a time of day: drafted where the values have one)
        return ["min", "max"] + (["after"] if col.time.after is not None else []) + \
            (["time_of_day"] if getattr(col.time, "time_of_day", None) is not None else [])
    if col.kind == "derived" and col.values is not None:  # a lookup's map
        return ["map"]
    return []


def _bin_listed_codes(cols: list, whys: list, guess: "Guesser",
                      max_cells: int = DEFAULT_MAX_CELLS) -> None:
    """While the two largest domains make a pair the fit would leave out, bin the larger of
    them that is an integer column listed as sparse codes, on a support of its values:
    its output stays on values seen (codes stay real codes, amounts rounded to 100 stay
    so) and its domain drops to `bins` (scorecard: 813 earnings beside 7,231 names); or
    draft the larger that is a datetime column in a coarser unit, to fit beside the other
    (nycflights13: time_hour by day beside 4,044 tail numbers).  Each column once."""
    while True:
        big = _two_largest(cols, max_cells)
        listed = [c for c in big if c.name in guess.codes or c.name in guess.stamps]
        if not listed:
            return
        col = listed[0]  # the larger of the two
        i = next(j for j, c in enumerate(cols) if c is col)
        other = big[1] if col is big[0] else big[0]
        if col.name in guess.codes:
            cols[i], whys[i] = guess.binned_on_values(cols[i], other, max_cells)
            continue
        drawn = guess.stamps.pop(col.name)
        fit = max(max_cells // other.size - (1 if drawn[4] else 0), 1)  # [4]: nullable
        cols[i], why = guess._datetime_in(col.name, *drawn, fit)
        fits = cols[i].size * other.size <= max_cells
        whys[i] = why + f"; coarser, for its pair with {other.name!r}" + (
            f" to fit max_cells={max_cells:,}" if fits else "")


def _two_largest(cols: list, max_cells: int) -> list:
    """The two synthesized columns of largest domain when their pair passes max_cells
    (PrivSyn cannot measure it: the fit leaves it out), else []."""
    big = sorted((c for c in cols if c.kind not in ("id", "derived")),
                 key=lambda c: -c.size)[:2]
    return big if len(big) == 2 and big[0].size * big[1].size > max_cells else []


def _largest_pair(schema: Schema, max_cells: int = DEFAULT_MAX_CELLS) -> str | None:
    """A message naming the two largest domains when their pair passes max_cells, else
    None."""
    big = _two_largest(schema.columns, max_cells)
    if not big:
        return None
    (k1, a), (k2, b) = ((c.size, c.name) for c in big)
    return (f"columns {a!r} ({k1:,} values) and {b!r} ({k2:,} values) make a pair marginal "
            f"of {k1 * k2:,} cells, more than the default max_cells={max_cells:,}: "
            "synthesize leaves that pair out, so their joint distribution is not modelled; "
            "bin or group their values in the schema to keep it, or mark an identifier "
            "with --id")

