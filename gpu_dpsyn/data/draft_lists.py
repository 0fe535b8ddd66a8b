"""What a drafted column of few numbers lists (data.draft_columns): the answer words
written among them ("refused"), kept as values.  Read off the private data, as every
draft is: NOT private."""
from __future__ import annotations

from gpu_dpsyn.data.schema import Column, column_from_spec


def keep_answers(col: Column, answers: dict, nullable: bool, limit: int):
    """(column, note) for the words among a column's numbers that are answers, not
    missing (values.means_missing): listed beside a categorical column's values while it
    stays within `limit` values, else read as missing, the note saying how to keep them.
    answers: word -> its count; nullable: whether the column has missing values once the
    answers are values."""
    said = ", ".join(map(repr, answers))
    n = sum(answers.values())
    if col.kind == "categorical" and len(col.values) + len(answers) <= limit:
        spec = {**col.to_dict(), "values": list(col.values) + sorted(answers, key=str)}
        spec.pop("nullable", None)
        new = column_from_spec(col.name, {**spec, **({"nullable": True} if nullable else {})})
        return new, (f"; {n:,} values {said} are no number but an answer: kept, listed "
                     "beside them")
    # a bin holds numbers only: the repair reads the word as missing, as it did unsaid
    return col, (f"; {n:,} values {said} are no number: read as missing, as this column "
                 "cannot list words beside its numbers (to keep them, write them in a "
                 "column of its own before drafting)")
