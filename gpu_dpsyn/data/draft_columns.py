"""What one column of a table is, guessed from its values, for a draft schema
(data.inference): NOT private, as every draft.  Each guess comes with its line: what was
guessed and why."""
from __future__ import annotations

import datetime
import math
import warnings

import numpy as np
import pandas as pd

from gpu_dpsyn.data.schema import Column, _numeric_edges, column_from_spec
from gpu_dpsyn.data.draft_bins import log_edges, own_bins
from gpu_dpsyn.data.text import shown
from gpu_dpsyn.data.types.datetime import ISO
from gpu_dpsyn.data.types.numeric import rounded_range
from gpu_dpsyn.data.types.support import default_edges, parse_support
from gpu_dpsyn.data.draft_dates import (date_layout, dates_hint, looks_dated,
                                      two_digit_years)
from gpu_dpsyn.data.draft_lists import (code_gaps, filled_gaps, keep_answers, many_decimals,
                                        natural, near_hint, said, spellings,
                                        many_values as many)
from gpu_dpsyn.data.draft_personal import left_out, repeated_id
from gpu_dpsyn.data.draft_text import text_hint
from gpu_dpsyn.data.draft_stamps import (MINUTE_TEXT, ZULU, ZULU_TEXT, datetime_column,
                                        row_limit)
from gpu_dpsyn.data.values import (ID_SHARE, LEADING_ZERO, all_text, as_datetime, as_numbers,
                                    decimal_comma, each_distinct, finest_unit, id_name,
                                    is_text, means_missing, mostly_numbers, near_codes,
                                    numbering, places, sentinels, span_in, written_numbers_hint)
from gpu_dpsyn.errors import SchemaError

FEW_IDS = 20  # an --id column with at most this many distinct values is warned of
_BOOL_TEXT = {"True": True, "true": True, "TRUE": True,
              "False": False, "false": False, "FALSE": False}


class IdColumnWarning(UserWarning):
    """A column was guessed to be an identifier: it will not be synthesized."""


class Guesser:
    def __init__(self, max_categories: int, bins: int, by_rows: bool = True):
        """by_rows: a datetime column's bins fall with its values (draft_stamps.row_limit;
        not for a schema to compare tables by, which measures nothing noisy)."""
        self.max_categories, self.bins, self.by_rows = max_categories, bins, by_rows
        self.counts: dict = {}  # datetime columns: name -> its number of values
        self.individuals = None  # --id's count of them: a datetime's bins by it, if fewer
        self.by_count: set = set()  # datetime columns whose bins their count decided
        self.codes: dict = {}  # integer columns listed as sparse codes: name -> values
        self.stamps: dict = {}  # datetime columns: name -> (lo, hi, finest unit, zone,
        # nullable, offsets): to draft them coarser
        self.missing: dict = {}  # name -> the codes for missing among its numbers
        self.layouts: dict = {}  # date text not in ISO 8601: name -> (its "format", the
        # other layouts that read every value too)

    def column(self, name: str, s: pd.Series, is_id: bool):
        self.note = ""  # placeholders read as missing, said after whatever was guessed
        self.answers, self.gone, self.near = {}, False, None  # words among numbers:
        # answers, missing ones; negative codes that may mean missing (near_hint)
        col, why = self._column(name, s, is_id)
        if col is None:  # left out, as `why` says
            return None, why
        if name in self.missing and col.kind in ("numeric", "categorical"):
            col.missing_values = self.missing.pop(name)
        if self.answers:
            col, said = keep_answers(col, self.answers, bool(
                s.isna().any()) or self.gone or bool(col.missing_values), self.max_categories)
            self.note += said
        if self.near:
            self.note += near_hint(col, *self.near)
        if col.kind == "categorical" and is_text(s) and decimal_comma(s.dropna()):
            why += "; they are numbers written with a comma: " + _COMMA
        elif col.kind in ("id", "categorical") and is_text(s):
            why += text_hint(s)
        if col.kind == "categorical" and is_text(s) and looks_dated(s):
            why += dates_hint(s.dropna())
        if not is_id and col.kind != "id" and id_name(name) and s.nunique() > FEW_IDS \
                and s.dropna().duplicated().any():
            why += repeated_id(col, self.individuals is None)
        return col, why + self.note

    def _column(self, name: str, s: pd.Series, is_id: bool):
        nullable = bool(s.isna().any())
        vals = s.dropna()
        if vals.empty and not is_id:
            raise SchemaError(f"column {shown(name)} has no values to infer a schema from: "
                              "leave it out of the table, or draft the others and write "
                              "its entry by hand")
        if pd.api.types.is_timedelta64_dtype(s) or (
                s.dtype == object and not all_text(vals) and vals.map(lambda v: isinstance(
                    v, (pd.Timedelta, np.timedelta64, datetime.timedelta))).any()):
            raise SchemaError(f"column {shown(name)} holds durations (timedelta), which no "
                              "column type reads: convert them to numbers (seconds, days) "
                              "first")
        text = is_text(s)
        stamps, offsets = as_datetime(s, vals, text)
        if stamps is not None and text and all_text(vals):
            self._iso_layout(name, vals)
        if is_id:
            if stamps is not None:
                raise SchemaError(f"--id {name}: column {shown(name)} holds dates; an id column "
                                  "comes out as 1..n, so they would be lost. Leave it out of "
                                  "--id to get a datetime column")
            k = vals.nunique()
            if 0 < k <= FEW_IDS and k < len(vals):  # repeated: a category, say
                warnings.warn(f"--id {name}: column {shown(name)} has {k} distinct values, "
                              "each taken for one individual: a fit keeps at most "
                              "max_records_per_individual records of each",
                              IdColumnWarning, stacklevel=4)
            return Column(name, "id"), "given by --id; the output numbers it 1..n"
        if stamps is None and text and two_digit_years(vals):  # no layout reads them
            return None, (f"dates with two-digit years (such as {_such(vals)}): rewrite the "
                          "data's years in four digits (1916 or 2016?) to synthesize them")
        if stamps is None and text and looks_dated(vals):  # one layout (with placeholders)
            read = date_layout(vals)
            if read is None:  # several: no one "format" reads them
                return None, _several_layouts(vals)
            fmt, also, words = read
            if words:  # read as missing by the repair, as a number column's words are
                gone = s.isin(words)
                self.note = (f"; {int(gone.sum()):,} values {', '.join(map(repr, words))} "
                             "are no date: read as missing")
                s, vals, nullable = s.where(~gone), vals[~vals.isin(words)], True
            if fmt is None:  # ISO 8601 but for the words
                stamps, offsets = as_datetime(s, vals, text)
            else:
                self.layouts[name] = (fmt, also)
                stamps = pd.Series(pd.to_datetime(s, format=fmt, errors="coerce"))
                stamps = stamps.reset_index(drop=True)
        if stamps is not None:
            return self._datetime(name, stamps, nullable, offsets)
        uniq = pd.unique(vals)  # checks of each value: once per distinct one
        # (bools with gaps: an object column, from a Parquet writer other than pandas)
        if pd.api.types.is_bool_dtype(s) or (text and set(uniq) <= set(_BOOL_TEXT)) or \
                pd.api.types.infer_dtype(uniq, skipna=False) == "boolean":
            values = sorted({_BOOL_TEXT.get(v, v) for v in uniq})
            return Column(name, "categorical", values=values, nullable=nullable), "booleans"
        numbers, words = as_numbers(vals, text), []
        if numbers is None and text:
            numbers, words = mostly_numbers(vals)
        inf = int(np.isinf(pd.to_numeric(vals, errors="coerce")).sum()) \
            if numbers is not None else 0
        if inf:  # left out of the numbers (as_numbers): said, not dropped unseen
            self.note += (f"; {inf:,} values are infinite (inf): a range clamps them to its "
                          "end, listed values leave their rows out")
        if words:  # a few words among the numbers: answers ("refused") listed with them
            # where they are listed (column()), else made missing by the repair
            self.answers = {w: int((vals == w).sum()) for w in words if not means_missing(w)}
            gone = [w for w in words if w not in self.answers]
            if gone:
                self.gone = True
                self.note += (f"; {int(vals.isin(gone).sum()):,} values "
                              f"{', '.join(map(repr, gone))} are no number: read as missing")
            vals, nullable = vals[~vals.isin(words)], True
        codes = sentinels(numbers) if numbers is not None else []
        if codes:  # codes for missing (999 among ages): out of the range, read as missing
            coded = np.isin(numbers, codes)
            self.missing[name] = codes
            self.note += (f"; {', '.join(f'{c:g}' for c in codes)} ({int(coded.sum()):,} "
                          "values) look like codes for missing, far from the others: read as "
                          "missing (\"missing_values\"; drop it if they are data)")
            numbers, nullable = numbers[~coded], True
            vals = vals[~pd.to_numeric(vals, errors="coerce").isin(codes).to_numpy()]
        near = near_codes(numbers) if numbers is not None and not codes else []
        if near:  # -9 on a 0-10 scale: more likely a code than an answer, but said only
            self.near = (near, float(numbers[numbers >= 0].min()))  # with an edit: column()
        n_distinct = vals.nunique()
        # whole numbers: integers within float64's exact range, or of an integer dtype (a
        # float 1e300 is whole too, but a decimal; text beyond 2**53 is a code, _as_numbers).
        # Nearly distinct integers beyond 2**53 (64-bit hashes) cannot be binned: ids
        integral = numbers is not None and bool(np.all(np.mod(numbers, 1) == 0))
        beyond = integral and float(np.abs(numbers).max()) > 2.0 ** 53
        huge = beyond and pd.api.types.is_integer_dtype(s)
        whole = integral and (huge or not beyond)
        distinct = n_distinct > self.max_categories and n_distinct >= ID_SHARE * len(vals)
        if numbers is None or whole:
            if distinct and (numbers is None or id_name(name) or huge or
                             numbering(numbers, n_distinct)):
                if numbers is None and decimal_comma(vals):  # not dates, nor an id
                    return None, f"numbers written with a comma (such as {_such(vals)}): " \
                        + _COMMA
                dates = dates_hint(vals) if numbers is None else ""
                if dates:  # several layouts beyond looks_dated's: dates, never an id
                    return None, _several_layouts(vals)
                free = left_out(name, vals, self.max_categories, named=False) \
                    if numbers is None else None
                if free:  # comments: not an id numbered 1..n (e-mails stay ids)
                    return None, free
                if numbers is None and written_numbers_hint(vals):  # amounts, not an id
                    return None, (f"numbers written with signs or separators (such as "
                                  f"{_such(vals)}): write them as plain numbers (1814.5) to "
                                  "synthesize them as a numeric column")
                warnings.warn(f"column {shown(name)} looks like an identifier ({n_distinct:,} "
                              f"distinct values in {len(vals):,} rows): inferred as an id "
                              "column, which is not synthesized (the output numbers it "
                              f"1..n). Declare it otherwise if it is data{dates}",
                              IdColumnWarning, stacklevel=4)
                return Column(name, "id"), (f"{n_distinct:,} distinct values in {len(vals):,} "
                                            f"rows: looks like an identifier; output 1..n{dates}")
        if numbers is None:
            return self._categorical(name, vals, nullable, text)
        if whole:
            exact = vals.to_numpy() if pd.api.types.is_integer_dtype(s) else None
            col, why = self._integers(name, numbers, n_distinct, nullable, distinct, exact)
            if distinct:
                why += ("; nearly all distinct, but scattered: data, not an id, never listed "
                        "(--id if it is one)")
            return col, why
        if n_distinct <= self.max_categories:  # tenths, halves, rounded shares: listed,
            # so every output value is one the column holds (bins decode between them)
            values = sorted(float(v) for v in np.unique(numbers))
            if str(s.dtype).lower() == "float32":  # 0.1, not 0.10000000149011612
                values = sorted({float(str(np.float32(v))) for v in values})
            return (Column(name, "categorical", values=values, nullable=nullable),
                    f"{len(values)} decimal values ({values[0]:g}..{values[-1]:g}), listed: few"
                    + many_decimals(name, values, self.bins, vals,
                                    self.missing.get(name)))
        lo, hi = rounded_range(float(numbers.min()), float(numbers.max()))
        spec = {"min": lo, "max": hi, "bins": self.bins}
        col, why = _binned(name, numbers, _numeric_edges(name, spec, False), False, nullable,
                           f"numbers {lo:g}..{hi:g}", spec)
        col.decimals = places(vals)  # the output written as the data is
        return col, why + (f", written to {col.decimals} decimal place"
                           f"{'' if col.decimals == 1 else 's'}" if col.decimals is not None
                           else "")

    def _categorical(self, name, vals, nullable, text):
        uniq = pd.unique(vals)
        many = len(uniq) > self.max_categories * 100  # no list: refused, unless left out
        free = left_out(name, vals, self.max_categories, many)
        if free:  # listed, its values would come out as they are
            return None, free
        if many:
            raise SchemaError(f"column {shown(name)} has {len(uniq)} distinct values; too many "
                              "to list: bin it or mark it as an id column (--id)")
        values = natural(v.item() if hasattr(v, "item") else v for v in uniq)  # K, 1, 2, 10
        odd = next((v for v in values if not isinstance(v, (str, bool, int, float))), None)
        if odd is not None:  # a time of day, say: no schema lists it
            raise SchemaError(f"column {shown(name)} holds {type(odd).__name__} values (such "
                              f"as {shown(str(odd))}), which a schema cannot list: convert "
                              "them to text or numbers first")
        zeros = text and any(LEADING_ZERO.match(str(v)) for v in values)
        empty = nullable and "" in values  # a CSV writes "" and missing alike: one of them
        values = [v for v in values if not (empty and v == "")]
        return (Column(name, "categorical", values=values, nullable=nullable),
                f"{len(values)} text values" + (", leading zeros kept" if zeros else "")
                + ("; \"\" read as missing (a CSV writes both as an empty cell)"
                   if empty else "") + spellings(values))

    def _iso_layout(self, name, vals) -> None:
        """The "format" that writes ISO text back as it was: to the minute as it was (with
        its T or space; else seconds were added), with a T (else a space), UTC's Z."""
        for sep, shape in MINUTE_TEXT.items():
            if each_distinct(vals, lambda u: u.str.fullmatch(shape)).all():
                self.layouts[name] = (f"%Y-%m-%d{sep}%H:%M", ())
                return
        if each_distinct(vals, lambda u: u.str.contains(r"\dT\d", regex=True)).all():
            zulu = each_distinct(vals, lambda u: u.str.fullmatch(ZULU_TEXT)).all()
            self.layouts[name] = (ZULU if zulu else ISO, ())  # written back with its T

    def _integers(self, name, numbers, n_distinct, nullable, distinct=False, exact=None):
        """exact: the values of an integer dtype (as floats, uint64's largest round)."""
        exact = numbers if exact is None else exact
        lo, hi = int(exact.min()), int(exact.max())
        # few values, codes scattered thinly over their range (occupations, regions) or
        # named as ids (school_id 1..200: binned, each decoded to a school of its bin's):
        # list them.  Not values nearly all distinct: listed, each would come out as is
        uniq, counts = np.unique(exact, return_counts=True)
        values = [int(v) for v in uniq]  # Python ints: exact beyond 2**63
        # beyond +-2**53 the range check below refuses the column with its own message
        step = math.gcd(*(v - lo for v in values)) if -2 ** 53 <= lo and hi <= 2 ** 53 else 1
        # thin on the places its step leaves (values on a step k fill at most 1/k of the
        # integers): salaries to 500, 462 values on 750 places, were listed as codes
        if not distinct and (n_distinct <= self.max_categories or (
                n_distinct <= 10 * self.max_categories and (id_name(name) or
                n_distinct < 0.5 * ((hi - lo) // max(step, 1) + 1)))):
            if self.bins < n_distinct > self.max_categories:
                self.codes[name] = values  # binned instead if its pairs are too large
            listed, unseen = filled_gaps(values, counts, self.max_categories)
            return (Column(name, "categorical", values=listed, nullable=nullable),
                    f"{len(listed)} integer values ({lo}..{hi}), listed: few or sparse codes"
                    + (said(unseen) if unseen else "")
                    + many(name, listed, lo, hi, self.bins, self.missing.get(name)))
        empty = (hi - lo) // step + 1 - len(values)  # places of the step no value holds
        if 0 < empty <= 2 * code_gaps(values, counts, step) and \
                len(values) <= 10 * self.max_categories:  # codes: the step would invent
            col = self._on_support(name, values, lo, hi, nullable)  # the places between
            return col, (f"{len(values)} integer values ({lo}..{hi}) in {col.bins} bins of "
                         f"the values seen: on their common step of {step}, {empty} places "
                         "are empty where chance would fill them (codes, not amounts)")
        if step > 1:  # amounts rounded to a step: bins of whole steps, output on the step
            support = {"step": step, "start": lo}
            col = self._on_support(name, support, lo, hi, nullable)
            logs = log_edges(numbers, list(col.edges), True, step)
            own = own_bins(numbers, logs or list(col.edges), True, step)
            if logs or own:  # a skewed or heaped one (incomes: a third zero) as _binned
                col = column_from_spec(name, {"type": "numeric", "integer": True,
                                              "edges": own[0] if own else logs,
                                              "support": support, "nullable": nullable})
            bins = len(col.edges) - 1
            return col, (f"integers {lo}..{hi} in steps of {step}, in {bins} "
                         + (_SKEWED if logs else "equal bins") + _own(own, str))
        spec = {"min": lo, "max": hi, "bins": self.bins}
        return _binned(name, numbers, _numeric_edges(name, spec, True), True, nullable,
                       f"integers {lo}..{hi}", spec)

    def binned_on_values(self, col: Column, other: Column, max_cells: int):
        """Column col (listed as sparse codes) re-drafted as integer bins whose support is
        the values seen; bins hold nearly equal numbers of them."""
        values = self.codes.pop(col.name)
        lo, hi = values[0], values[-1]
        new = self._on_support(col.name, values, lo, hi, col.nullable)
        return new, (f"{len(values)} integer values ({lo}..{hi}): listed, their pair with "
                     f"{other.name!r} would pass max_cells={max_cells:,}, so in {new.bins} "
                     "bins of the values seen")

    def _on_support(self, name: str, support, lo: int, hi: int, nullable: bool) -> Column:
        """An integer column on `support` in [lo, hi]: `bins` bins holding nearly equal
        numbers of its values, so every bin decodes to one of them."""
        edges = default_edges(parse_support(name, support, lo, hi), lo, hi, self.bins)
        return column_from_spec(name, {"type": "numeric", "integer": True, "edges": edges,
                                       "support": support, "nullable": nullable})

    def _datetime(self, name, t: pd.Series, nullable, offsets: bool):
        tz = None if t.dt.tz is None else str(t.dt.tz)
        v = t.dropna()
        wall = v.dt.tz_localize(None) if tz else v
        # what a coarser draft needs (_bin_listed_codes), not the column itself
        self.stamps[name] = (wall.min(), wall.max(), finest_unit(wall), tz, nullable, offsets)
        self.counts[name] = len(wall)
        return self._datetime_in(name, *self.stamps[name], 10 * self.max_categories)

    def _datetime_in(self, name, lo, hi, unit, tz, nullable, offsets: bool, limit: int):
        """draft_stamps.datetime_column with this draft's bins and the column's layout."""
        fit = row_limit(min(self.counts[name], self.individuals or math.inf), self.bins, limit)
        if self.by_rows and fit < limit and span_in(unit, lo, hi) > fit:
            self.by_count.add(name)  # its bins (or unit) read off the data: for review
        return datetime_column(name, lo, hi, unit, tz, nullable, offsets, limit, self.bins,
                               self.layouts.get(name, (None, ())),
                               self.counts[name] if self.by_rows else None, self.individuals)


_COMMA = ("a decimal comma? Draft again with --decimal , (a file separated by ';' or tabs), "
          "or write them with a dot (a comma-separated file), to synthesize them as numbers")


def _such(vals: pd.Series) -> str:
    """Two of the values, as a line shows them."""
    return ", ".join(map(shown, pd.unique(vals)[:2]))


def _several_layouts(vals: pd.Series) -> str:
    """Why dates in several layouts are left out of a draft."""
    return (f"dates in several layouts (such as {_such(vals)}): write them one way, ISO 8601 "
            "or one layout named by \"format\", to synthesize them")


_SKEWED = ("log-spaced bins: skewed, they decode it at under half the error of equal "
           "widths (\"bins\": {\"private_quantiles\": K} fits bins to the data)")


def _binned(name: str, numbers: np.ndarray, edges: list, integer: bool, nullable: bool,
            what: str, spec: dict):
    """(column, summary line) of a binned numeric column: the equal-width `edges` of
    `spec` (written as its min, max and bins), or log-spaced ones (draft_bins.log_edges),
    with a common min or max in a bin of its own (draft_bins.own_bins)."""
    logs = log_edges(numbers, edges, integer)
    own = own_bins(numbers, logs or edges, integer)
    col = Column(name, "numeric", edges=own[0] if own else logs or edges, integer=integer,
                 nullable=nullable,
                 draft_range=None if own or logs else {k: spec[k] for k in ("min", "max",
                                                                             "bins")})
    why = f"{what} in {len(logs or edges) - 1} " + (_SKEWED if logs else "equal bins")
    return col, why + _own(own, str if integer else (lambda v: f"{v:g}"))


def _own(own, say) -> str:
    """The end of a line naming the values given a bin of their own (own_bins), if any."""
    return f"; {' and '.join(map(say, own[1]))}: common, a bin of its own" if own else ""
