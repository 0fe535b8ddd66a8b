"""The command behind gpu-dpsyn schema FILE --set/--drop/--reviewed/--ignore: a schema
edited in place or written to --out, with what the edit changed beyond its keys said."""
from __future__ import annotations

import json
import sys
import warnings

from gpu_dpsyn.cli.paths import check_outputs, check_schema_out
from gpu_dpsyn.data.files import JSON, claiming, write_text
from gpu_dpsyn.errors import DPSynError


def edit_schema(a) -> int:
    out = a.out or a.file
    if a.out:  # (the file edited in place is a schema already, and may be --out too)
        check_outputs({"--out": a.out}, [], {"--out": JSON})
    with claiming({"--out" if a.out else "FILE": out}):  # two edits at once: one was lost
        if a.out:
            check_schema_out(a.out)
        return _edit(a, out)


def _edit(a, out) -> int:
    from gpu_dpsyn.data.schema import read_document, schema_from_dict
    from gpu_dpsyn.data.schema_edit import edit, notes, parse_setting
    before = read_document(a.file)
    names = [*(before.get("columns") or {}), *(before.get("ignored_columns") or [])] \
        if isinstance(before.get("columns"), dict) else []  # (else edit says what it wants)
    sets = [parse_setting(*s[1:], from_file=True, columns=names) if isinstance(s, tuple)
            else parse_setting(s, columns=names) for s in a.set]
    doc = edit(before, sets, a.drop, a.reviewed, a.ignore)
    with warnings.catch_warnings():  # the drafted values left are listed below instead
        warnings.simplefilter("ignore")
        unit = schema_from_dict(doc).unit_id  # refused before anything is written
        try:  # (the file may be one the rules refuse: the edit is what mends it)
            was = schema_from_dict(before).unit_id
        except DPSynError:
            was = unit
    write_text(out, json.dumps(doc, indent=1) + "\n", "--out" if a.out else "FILE")
    if before.get("_drafted_from_data") and any(n == "csv" and n not in before.get(
            "columns", {}) for n, _, _ in sets):  # values read off a file in the old one
        print("the drafted values were read in the file's former dialect: draft again with "
              "infer-schema and its --encoding/--separator/--decimal/--thousands",
              file=sys.stderr)
    for note in notes(before, doc):  # (a shape, a zone): said
        print(note, file=sys.stderr)
    if unit != was:  # the unit of privacy moved: said, never silent
        now = f"named by {unit!r}" if unit else "each record"
        print(f"the individual (the unit of privacy) is now {now}"
              + (f", not {was!r}" if was else ""), file=sys.stderr)
    left = doc.get("_drafted_from_data") or []
    unvouched = edit(before, sets, a.drop, (), a.ignore).get("_drafted_from_data") or []
    vouched = [d for d in unvouched if d not in left]  # (not those set or dropped)
    if vouched:  # what the curator now vouches for, named (--reviewed all, say)
        print(f"now taken as public facts (no longer warned of): {_by_column(vouched)}",
              file=sys.stderr)
    print(f"wrote {out}" + (f"; still read off the data, to review: {_by_column(left)}"
                            if left else "; no drafted value left"), file=sys.stderr)
    return 0


def _by_column(drafted: list, shown_columns: int = 6) -> str:
    """Drafted "column.key" entries in a few words: the first columns with their keys,
    then how many more (a 47-column draft printed about fifty names at each edit)."""
    keys: dict = {}
    for d in drafted:
        col, _, key = d.rpartition(".")
        keys.setdefault(col, []).append(key)
    cols = list(keys)
    text = ", ".join(f"{c} ({', '.join(keys[c])})" for c in cols[:shown_columns])
    more = len(cols) - shown_columns
    return f"{len(cols)} columns: {text}" + (f" and {more} more" if more > 0 else "") \
        if len(cols) > 1 else text
