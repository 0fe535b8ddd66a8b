"""gpu-dpsyn check: the curator's preflight of a table (a file, or a directory or glob of
parts as synthesize --workers reads them)."""
from __future__ import annotations

import glob
import os

from gpu_dpsyn.cli.paths import check_inputs
from gpu_dpsyn.data.ingest import read_table
from gpu_dpsyn.errors import DataError


def check(a) -> int:
    """The curator's preflight: what the row-local rule would change, counted exactly.
    Exit 0 when nothing (or only codes the schema lists as missing), 1 when something
    (the counts are private: not for release)."""
    import pandas as pd
    from gpu_dpsyn.data.encoding import check_columns
    from gpu_dpsyn.distributed.reading import same_columns
    from gpu_dpsyn.data.preflight import bounded, coded, findings, refused
    from gpu_dpsyn.data.schema import load_schema
    files = table_files(a.input)  # a file, or a directory's or glob's parts
    schema = load_schema(a.schema)
    damaged, frames = None, []
    for path in files:
        try:
            frames.append(read_table(path, schema=schema, lenient=False))
        except DataError as e:  # bytes that are no UTF-8: synthesize reads them by the rule
            damaged = damaged or str(e)
            frames.append(read_table(path, schema=schema))
    same_columns(files, [list(f.columns) for f in frames])
    df = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    del frames
    check_columns(df, schema, allow_empty=True)
    found = findings(df, schema)
    # on the output itself: a file it is redirected to carries the warning too
    print("NOT private: exact counts from the data, for you only; do not publish them.")
    if damaged:
        print(f"{a.input}: a strict read refuses it ({damaged}); synthesize reads bytes "
              f"that are no {schema.csv.encoding} text as U+FFFD (invalid where a value "
              "must be listed), --on-invalid error refuses the file")
    faults = [f for f in found if not coded(f[1])]  # codes for missing: as declared
    if not faults and not damaged:
        print(f"{a.input}: every value of its {len(df):,} rows is allowed by the schema"
              + (" (the codes below read as missing, as it says)" if found else ""))
    for name, what, n, seen in found:  # (the individual id's findings count rows)
        noun = "row" if name == schema.unit_id else "value"
        print(f"{name}: {n:,} {noun}{'' if n == 1 else 's'} {what}"
              + (f" (such as {', '.join(seen)})" if seen else ""))
    if any(refused(what) for _, what, _, _ in found):
        print("synthesize repairs these by the rule above (--on-invalid repair, the default) "
              "or refuses the table (--on-invalid error)")
    if any(bounded(what) for _, what, _, _ in found):
        print("synthesize drops the records past the bound as said above, whatever "
              "--on-invalid says")
    return 1 if faults or damaged else 0


def table_files(path) -> list:
    """[path] for a file (checked as every command's input is); a directory's or a glob's
    table files as the Dask reader lists them (one format)."""
    if os.path.isdir(path) or (not os.path.exists(path) and glob.has_magic(str(path))):
        from gpu_dpsyn.distributed.reading import table_files as parts
        return parts(path)
    check_inputs(path)
    return [path]
