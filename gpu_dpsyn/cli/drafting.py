"""gpu-dpsyn infer-schema: a draft schema read off a table (NOT private), each guess on a
line for review; the file's CSV dialect found or given (data/draft_dialect.py)."""
from __future__ import annotations

import sys
import warnings

import pandas as pd

from gpu_dpsyn.cli.paths import (as_argument, check_inputs, check_not_reviewed, check_outputs,
                                 command)
from gpu_dpsyn.data.files import JSON, claiming
from gpu_dpsyn.data.ingest import read_table, table_format
from gpu_dpsyn.data.values import BLANK_HEADER
from gpu_dpsyn.errors import DPSynError


def infer(a) -> int:
    check_inputs(a.input)
    check_outputs({"--out": a.out}, [a.input], {"--out": JSON})
    with claiming({"--out": a.out}):  # till it is written
        return _infer(a)


def _infer(a) -> int:
    """infer-schema, its --out claimed: the check a run started since could fail (a draft
    reviewed, or written, meanwhile), the draft."""
    from gpu_dpsyn.data.draft_dialect import (as_numbers, file_dialect, given_dialect,
                                              number_dialect)
    from gpu_dpsyn.data.inference import infer_schema_with_summary
    from gpu_dpsyn.data.values import replaced_bytes
    check_not_reviewed(a.out)
    given = given_dialect(a)
    dialect, notes = file_dialect(a.input, given)  # a bad flag refused before reading
    # "02134" and "NA" as written; types guessed
    df = read_table(a.input, as_text=True, dialect=dialect)
    for flag, names in (("--id", a.id), ("--ignore", a.ignore)):
        for c in names or ():
            if c not in df.columns:
                raise DPSynError(f"{flag} {c!r} is not a column of {a.input}; columns are "
                                 f"{list(df.columns)}")
    both = sorted(set(a.id or ()) & set(a.ignore or ()))
    if both:
        raise DPSynError(f"--id and --ignore both name {both}: an id is kept (it names the "
                         "individual), an ignored column is left out")
    df = df.drop(columns=list(a.ignore or ()))  # unread: not even for the dialect
    dialect, more = number_dialect(df, dialect, given)
    df, notes = as_numbers(df, dialect), notes + more
    mangled = [str(c) for c in df.columns if pd.api.types.is_string_dtype(df[c].dtype) and
               replaced_bytes(df[c])]
    if mangled:  # the row-local rule read bytes that are no UTF-8 as U+FFFD
        warnings.warn(f"{a.input!r} has bytes that {dialect.encoding} cannot read in "
                      f"column(s) {', '.join(map(repr, mangled[:5]))}: they read as U+FFFD "
                      "and the draft lists them so; give the file's own --encoding",
                      UserWarning)
    schema, summary = infer_schema_with_summary(df, bins=a.bins, id_columns=a.id or (),
                                                ignored_columns=a.ignore or ())
    schema.csv = dialect  # every reader of the table takes it, and the output is so written
    if table_format(a.input) == "parquet":  # its declared types, for the release too
        from gpu_dpsyn.data.draft_types import file_dtypes
        kept = file_dtypes(a.input, schema, df)
        notes += [f"dtypes as the file declares them: {', '.join(kept)}"] if kept else []
    schema.save(a.out, "--out")
    print(f"wrote schema for {len(schema.columns)} columns to {a.out}. Guessed from the data "
          "(NOT private): review every line and replace what you can with public facts:",
          file=sys.stderr)
    if notes:
        print("  the file: " + "; ".join(notes), file=sys.stderr)
    print("\n".join(summary), file=sys.stderr)
    unit = schema.unit_id
    if unit is not None and unit in (a.id or ()):  # the fit keeps 1 record of each
        # the edit, and what N costs either way: at the data's own most records a person
        # (30, a bank's customers) a 34,000-row table's 0.3% fraud flag came out at 2.2%
        edit = command("gpu-dpsyn", "schema", as_argument(a.out), "--set",
                       "max_records_per_individual=N")
        print(f"{unit!r} names the individual: set a public bound N on one individual's "
              f"records ({edit}; without it, one record of each is kept): the noise grows "
              "with N, and records past N are dropped at random (gpu-dpsyn check counts "
              "them)", file=sys.stderr)
    elif unit is not None and BLANK_HEADER.fullmatch(unit):  # (fit says so too)
        print(f"{unit!r}, a saved row index, names records, not people: each record is "
              "taken for one individual; if a person may have several records, draft again "
              "with --id naming the column that names them", file=sys.stderr)
    elif unit is not None:
        print(f"{unit!r}, guessed an id, names the individual, one record of each kept: if "
              "a person may have several records, draft again with --id naming the column "
              "that names them", file=sys.stderr)
    return 0
