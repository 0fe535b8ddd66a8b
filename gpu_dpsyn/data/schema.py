"""Public schema: what values each column may take, and how numbers are binned.

The schema must come from public knowledge.  `inference.infer_schema` reads it off
the data, which is NOT private: it warns loudly, and the result should be reviewed
(and ideally widened) before use.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

import json
import warnings
import math
import os
from dataclasses import dataclass, field, replace

import numpy as np

from gpu_dpsyn.data import schema_rules as rules
from gpu_dpsyn.data.schema_rules import read_document  # noqa: F401 (its callers import it here)
from gpu_dpsyn.data.dialect import DEFAULT as DEFAULT_DIALECT, Dialect, dialect_from_spec
from gpu_dpsyn.data.dtypes import check_column
from gpu_dpsyn.data.files import write_text
from gpu_dpsyn.data.matching import plain, value_key
from gpu_dpsyn.errors import NonPrivateSchemaWarning, SchemaError
from gpu_dpsyn.data.types.datetime import DatetimeSpec
from gpu_dpsyn.data.types.derived import Derivation
from gpu_dpsyn.data.types import categorical, gap, missing, quantile_bins, time_of_day
from gpu_dpsyn.data.types.numeric import _min_max, _numeric_edges  # noqa: F401 (inference)
from gpu_dpsyn.data.types.support import check_bins, parse_support
from gpu_dpsyn.data.types.support import describe as support_describe
from gpu_dpsyn.data.types.support import outside as support_outside

MAX_COLUMN_DOMAIN = rules.MAX_BINS  # codes per column (1 << 16); a wider one must be binned
# the most rows a release has when its size is the noisy row count (public; the schema's
# "max_rows" may say otherwise): a tiny epsilon or a huge sensitivity can make the
# estimate 10^8 or more, which is clamped to this with a warning instead of sampled
DEFAULT_MAX_ROWS = 10_000_000


@dataclass
class Column:
    name: str
    kind: str  # "categorical" | "numeric" | "id"
    values: list | None = None  # categorical
    edges: list | None = None  # numeric: bin edges, len = bins + 1
    integer: bool = False  # numeric: decode to integers
    nullable: bool = False  # missing values get a code of their own
    dtype: str | None = None  # the output's pandas dtype (default: one per column type)
    support: object = None  # integer numeric: the values it can take (types.support)
    time: object = None  # datetime: range, unit or bins, time zone (types.datetime)
    derive: object = None  # derived: source column and operation (types.derived)
    private: object = None  # numeric: private quantile bins to choose in fit()
    # (types.quantile_bins); None once chosen (Schema.with_edges)
    # categorical or numeric: what an invalid or missing value becomes (data/repair.py)
    fallback: object = None
    missing_values: list | None = None  # codes read as missing (types.missing)
    decimals: int | None = None  # numeric: places a decoded decimal is written to
    # infer-schema's draft of equal bins as {"min", "max", "bins"}: written so, for review
    draft_range: dict | None = field(default=None, repr=False, compare=False)
    within: object = None  # chosen private bins: the noisy mass inside each, for decoding
    # (quantile_bins.Within; not saved by to_dict: a saved schema decodes as plain bins)
    time_of: str | None = None  # the hidden time of day of this column (types/time_of_day)

    def __post_init__(self):
        if self.kind != "derived":  # checked once its source is known (Schema)
            check_column(self)

    @property
    def value_range(self) -> tuple:
        """(lowest, highest) value of a numeric column; integer edges are half-open."""
        lo, hi = self.edges[0], self.edges[-1]
        if self.integer:
            lo, hi = math.ceil(lo), (hi - 1 if float(hi).is_integer() else math.floor(hi))
        return lo, hi

    def integer_bins(self) -> tuple:
        """Integer numeric columns: each bin's lowest value and exclusive top (float64)."""
        edges = np.asarray(self.edges, dtype=np.float64)
        top = np.append(np.ceil(edges[1:-1]), float(self.value_range[1]) + 1)
        return np.ceil(edges[:-1]), top

    @property
    def bins(self) -> int:
        if self.kind == "categorical":
            return len(self.values)
        if self.kind in ("numeric", "datetime"):
            return len(self.edges) - 1
        return 0

    @property
    def size(self) -> int:
        """Number of codes, the null code included."""
        return self.bins + (1 if self.nullable else 0)

    @property
    def null_code(self) -> int | None:
        return self.bins if self.nullable else None

    def to_dict(self) -> dict:
        d: dict = {"type": self.kind}
        if self.kind == "derived":
            d = self.derive.to_dict()
        elif self.kind == "datetime":
            d.update(self.time.to_dict())
        elif self.kind == "categorical":
            d["values"] = list(self.values)
        elif self.kind == "numeric":
            if self.private is not None:  # still to be chosen: the request as written
                d.update(min=self.private.lo, max=self.private.hi, bins=dict(self.private.spec))
            elif self.draft_range is not None:
                d.update(self.draft_range)
            else:
                d["edges"] = list(self.edges)
            d["integer"] = self.integer
            if self.support is not None:
                d["support"] = self.support.spec
        if self.nullable:
            d["nullable"] = True
        if self.fallback is not None:
            d["fallback"] = self.fallback
        if self.missing_values:
            d["missing_values"] = list(self.missing_values)
        if self.decimals is not None:
            d["decimals"] = self.decimals
        if self.dtype is not None:
            d["dtype"] = self.dtype
        return d


@dataclass
class Schema:
    columns: list = field(default_factory=list)
    max_records_per_individual: int | None = None
    individual_id: str | None = None  # the id column naming each record's individual
    max_rows: int | None = None  # public bound on the noisy row count (None: the default)
    # infer-schema's draft: "column.key" of each value read off the data, not yet reviewed
    drafted: list = field(default_factory=list)
    budgets: list = field(default_factory=list)  # NIST runs' (epsilon, delta): a fit warns
    ignored: list = field(default_factory=list)  # table columns never used ("ignored_columns")
    csv: Dialect = DEFAULT_DIALECT  # how its CSV files are written ("csv": data/dialect.py)

    def __post_init__(self):
        names = [c.name for c in self.columns]
        time_of_day.check_names(self.synth_columns, names)
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise SchemaError(f"schema lists these columns twice: {dup}")
        both = next((n for n in self.ignored if n in names), None)
        if both is not None:
            raise SchemaError(f"column {shown(both)} is both in 'columns' and in "
                              "'ignored_columns'; keep it in one")
        for c in self.columns:
            if c.kind == "derived":
                c.derive.resolve(c, next((s for s in self.columns
                                          if s.name == c.derive.source), None))
                check_column(c)
            if c.kind == "datetime" and c.time.after is not None:
                gap.resolve(c, next((s for s in self.columns
                                     if s.name == c.time.after.column), None))
            if c.nullable:
                rules.check_nullable(c)
        gap.order(self.columns)  # no column after itself
        if not self.synth_columns:
            raise SchemaError("schema has no column to synthesize (only id or derived columns)")
        rules.check_individual([c.name for c in self.columns if c.kind == "id"],
                               self.individual_id, self.ignored)

    def __setstate__(self, state) -> None:  # a model saved before "ignored_columns"
        self.__dict__.update({"ignored": [], "csv": DEFAULT_DIALECT, **state})

    @property
    def unit_id(self) -> str | None:
        """The column whose value is a record's individual (None: a record is one)."""
        ids = [c.name for c in self.columns if c.kind == "id"]
        return self.individual_id or (ids[0] if ids else None)

    @property
    def row_cap(self) -> int:
        """The most rows a release sized by the noisy row count has: "max_rows", else
        DEFAULT_MAX_ROWS (public: the estimate is clamped to it)."""
        return self.max_rows or DEFAULT_MAX_ROWS

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def synth_indices(self) -> list[int]:
        """The positions in `columns` of synth_columns (a hidden time of day: past them,
        time_of_day.synth): each one's decode stream."""
        return [j for j, _ in time_of_day.synth(self.columns)]

    @property
    def synth_columns(self) -> list[Column]:
        """The measured and synthesized columns, the code columns: not ids or derived
        ones; a datetime column's hidden time of day right after it."""
        return [c for _, c in time_of_day.synth(self.columns)]

    @property
    def domain(self) -> tuple[int, ...]:
        return tuple(c.size for c in self.synth_columns)

    def with_edges(self, edges: dict, within: dict | None = None) -> "Schema":
        """A copy in which the named numeric columns have these edges instead (private
        quantile bins once chosen: nothing is left pending), and optionally the mass inside
        their bins (within: name -> quantile_bins.Within)."""
        within = within or {}
        cols = [replace(c, edges=list(edges[c.name]), private=None,
                        within=within.get(c.name)) if c.name in edges else c
                for c in self.columns]
        return Schema(cols, self.max_records_per_individual, self.individual_id, self.max_rows,
                      ignored=self.ignored, csv=self.csv)

    def __getitem__(self, name: str) -> Column:
        for c in self.columns + [c for c in self.synth_columns if c.time_of]:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict:
        d = {"columns": {c.name: c.to_dict() for c in self.columns}}
        if self.max_records_per_individual:
            d["max_records_per_individual"] = self.max_records_per_individual
        if self.individual_id is not None:
            d["individual_id"] = self.individual_id
        if self.max_rows is not None:
            d["max_rows"] = self.max_rows
        if self.ignored:
            d["ignored_columns"] = list(self.ignored)
        if self.csv.to_dict():
            d["csv"] = self.csv.to_dict()
        if self.drafted:
            d["_drafted_from_data"] = list(self.drafted)
        return d

    def save(self, path, flag: str | None = None) -> None:
        """Write the schema as JSON, whole or not at all (files.write_text); flag names
        the path in an error (--out)."""
        write_text(path, json.dumps(self.to_dict(), indent=2, default=_json_default) + "\n",
                   flag)


def _json_default(o):
    if isinstance(o, (np.integer, np.floating, np.bool_)):
        return o.item()  # its Python int, float or bool
    raise TypeError(f"cannot write {type(o).__name__} to JSON")


# -- reading -----------------------------------------------------------------------

_TYPE_ALIASES = {"categorical": "categorical", "category": "categorical", "cat": "categorical",
                 "numeric": "numeric", "numerical": "numeric", "continuous": "numeric",
                 "integer": "numeric", "int": "numeric", "float": "numeric",
                 "id": "id", "identifier": "id",
                 "datetime": "datetime", "date": "datetime", "timestamp": "datetime",
                 "derived": "derived"}


def column_from_spec(name: str, spec: dict) -> Column:
    if not isinstance(spec, dict):
        raise SchemaError(f"column {shown(name)}: spec must be an object, got {type(spec).__name__}")
    kind = spec.get("type") or spec.get("kind")
    dtype = spec.get("dtype")  # NIST files name one per column too
    if kind is None:  # NIST parameters.json: values -> categorical, min/max -> numeric
        kind = "categorical" if "values" in spec else \
            "numeric" if ("min" in spec or "edges" in spec) else None
    if not isinstance(kind, str) or kind not in _TYPE_ALIASES:
        raise SchemaError(f"column {shown(name)}: unknown type {shown(kind)}; use categorical, numeric, "
                          "datetime, derived or id")
    kind = _TYPE_ALIASES[kind]
    other = spec.get("kind") if "type" in spec else None  # both given: they must agree
    if other is not None and (not isinstance(other, str) or _TYPE_ALIASES.get(other) != kind):
        raise SchemaError(f"column {shown(name)}: 'type' {spec['type']} and 'kind' "
                          f"{shown(other)} say different things: give one")
    rules.check_column(name, kind, spec)  # its keys and their types, limits on bins
    if "name" in spec and spec["name"] != name:
        raise SchemaError(f"column {shown(name)}: 'name' {spec['name']!r} differs from its key")
    nullable = bool(spec.get("nullable", False))
    if kind == "id":
        return Column(name, "id", dtype=dtype)
    if kind == "derived":
        return Column(name, "derived", dtype=dtype, derive=Derivation(name, spec))
    if kind == "datetime":
        time = DatetimeSpec(name, spec, MAX_COLUMN_DOMAIN)
        time_of_day.parse(name, spec, time, lambda **k: Column(**k, nullable=nullable))
        return Column(name, "datetime", edges=time.edges, nullable=nullable, dtype=dtype,
                      time=time)
    if kind == "categorical":
        values, keys = categorical.parse_values(name, spec, MAX_COLUMN_DOMAIN)
        fallback = plain(spec.get("fallback"))
        if fallback is not None and value_key(fallback) not in keys:
            raise SchemaError(f"column {shown(name)}: 'fallback' {shown(fallback)} is not one of "
                              "its 'values'")
        col = Column(name, "categorical", values=values, nullable=nullable, dtype=dtype,
                     fallback=fallback)
        col.missing_values = missing.parse(name, spec, col)
        return col
    integer = rules.integer_flag(name, spec, dtype)
    support = spec.get("support")
    if support is not None and not integer:
        raise SchemaError(f"column {shown(name)}: 'support' lists the values of an integer "
                          "column; set \"integer\": true")
    private = None
    if quantile_bins.is_private(spec):  # edges chosen in fit(); a placeholder bound until then
        private = quantile_bins.parse(name, spec, *_min_max(
            name, spec, integer, "for private_quantiles bins"), integer)
        edges = private.placeholder()
    else:
        edges = _numeric_edges(name, spec, integer, support)
    if len(edges) - 1 > MAX_COLUMN_DOMAIN:
        raise SchemaError(f"column {shown(name)}: {len(edges) - 1} bins is too large a domain "
                          f"(max {MAX_COLUMN_DOMAIN})")
    col = Column(name, "numeric", edges=edges, integer=integer, nullable=nullable, dtype=dtype,
                 private=private)
    if support is not None:
        col.support = parse_support(name, support, *col.value_range)
        check_bins(name, col.support, *col.integer_bins())
    fallback = spec.get("fallback")
    if fallback is not None:
        lo, hi = col.value_range
        if isinstance(fallback, bool) or not lo <= fallback <= hi or \
                (integer and fallback != int(fallback)) or (col.support is not None and bool(
                    support_outside(col.support, np, np.array([int(fallback)]))[0])):
            raise SchemaError(f"column {shown(name)}: 'fallback' {shown(fallback)} is not a value "
                              f"the column can take (range [{lo:g}, {hi:g}]"
                              + (", integer" if integer else "")
                              + (f", support {support_describe(col.support)}"
                                 if col.support is not None else "") + ")")
        col.fallback = fallback
    col.missing_values = missing.parse(name, spec, col)
    if spec.get("decimals") is not None:  # (its type and range: schema_rules)
        if integer:
            raise SchemaError(f"column {shown(name)}: 'decimals' is for a decimal column; an "
                              "integer one has none")
        col.decimals = int(spec["decimals"])
    return col


def schema_from_dict(d: dict) -> Schema:
    if not isinstance(d, dict):
        raise SchemaError("schema must be a JSON object")
    rules.check_document(d)  # its keys and their types (schema_rules.DOCUMENT_RULES)
    sens, max_rows = d.get("max_records_per_individual"), d.get("max_rows")
    cols = d.get("columns")
    if cols is None and isinstance(d.get("schema"), dict):  # NIST parameters.json
        cols = d["schema"]
    runs = d.get("runs") or []  # NIST's bounds (its entries were checked with the document)
    sens = rules.one_bound("max_records_per_individual", sens, runs)
    max_rows = rules.one_bound("max_records", max_rows, runs)  # NIST's rows of a release
    if cols is None:
        raise SchemaError("schema needs a 'columns' object (or NIST-style 'schema')")
    if isinstance(cols, list):  # [{"name": ..., ...}, ...]
        try:
            names = [c["name"] for c in cols]
            named = dict(zip(names, cols))
        except (TypeError, KeyError):
            raise SchemaError("schema 'columns' list entries need a 'name'") from None
        if len(named) < len(cols):  # the object form cannot: duplicate keys are refused
            twice = next(x for x in names if names.count(x) > 1)
            raise SchemaError(f"schema 'columns' lists column {shown(twice)} twice")
        cols = named
    if not isinstance(cols, dict) or not cols:
        raise SchemaError("schema 'columns' must be a non-empty object")
    # the types and ranges of these were checked with the document (schema_rules)
    sens = None if sens is None else int(sens)
    max_rows = None if max_rows is None else int(max_rows)
    if max_rows is not None and max_rows > rules.MAX_ROWS:  # a NIST run's max_records
        raise SchemaError(f"max_rows (NIST runs' max_records) must be at most "
                          f"{rules.MAX_ROWS}, got {max_rows}")
    drafted = list(d.get("_drafted_from_data") or [])
    warn_drafted(drafted, 4)
    return Schema([column_from_spec(str(k), v) for k, v in cols.items()], sens,
                  d.get("individual_id"), max_rows, drafted,
                  [(r.get("epsilon"), r.get("delta")) for r in runs if "epsilon" in r],
                  list(d.get("ignored_columns") or []), dialect_from_spec(d.get("csv")))


def warn_drafted(drafted: list, stacklevel: int = 3) -> None:
    """The loud warning a schema with values infer-schema read off the data gets, until
    each is reviewed and the list is emptied."""
    if drafted:
        warnings.warn(
            f"the schema holds {len(drafted)} value(s) read off the private data by "
            f"infer-schema ({', '.join(drafted[:6])}{', ...' if len(drafted) > 6 else ''}): "
            "NOT private. Replace them with public facts, then mark them reviewed "
            "(gpu-dpsyn schema FILE --reviewed COLUMN, or remove them from "
            "\"_drafted_from_data\")", NonPrivateSchemaWarning, stacklevel=stacklevel)


def load_schema(source) -> Schema:
    """A Schema, a dict, or a path to a JSON file (ours or NIST parameters.json)."""
    if isinstance(source, Schema):
        return source
    if isinstance(source, dict):
        return schema_from_dict(source)
    if not isinstance(source, (str, os.PathLike)):
        raise SchemaError("schema must be a dict, a Schema or the path of a JSON file, got "
                          f"{type(source).__name__}")
    return schema_from_dict(read_document(source))
