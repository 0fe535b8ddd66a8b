"""The privacy report of a fit: the accountant's summary, what a neighbouring table is,
and which of the release's choices were paid for (all DP outputs or public inputs)."""
from __future__ import annotations

from gpu_dpsyn.core.grouping import PARALLEL_NOTE


def privacy_report(accountant, model) -> dict:
    s = model.settings
    rep = accountant.summary()
    rep["method"] = s.method
    d, unit = accountant.sensitivity, model.schema.unit_id
    rep["neighbouring"] = "add or remove all records of one individual"
    rep["unit_of_privacy"] = (
        f"an individual: the records sharing a value of {unit!r}; at most {d} of them "
        "(a uniformly random subset, chosen before anything was measured) were used"
        if unit is not None else
        "an individual: one record" if d == 1 else
        f"an individual, who contributes at most {d} records (declared in the schema or "
        "by sensitivity; not enforced: the schema has no individual id column)")
    rep["seeded"] = model.seeded  # a seeded release's noise is reproducible
    if model.bins is not None:  # DP outputs, like the noisy counts
        rep["private_bins"] = {k: list(v) for k, v in model.bins.edges.items()}
    if model.selected is not None:
        rep["selected_marginals"] = [list(m) for m in model.selected]
    if model.unused:  # charged (in the ledger), but GUM could not realise them
        rep["unused_marginals"] = [list(m) for m in model.unused]
    labels = {e.label for e in accountant.ledger}
    if s.method == "privsyn":
        rep["selection"] = (
            "public: chosen from the public table's pair dependences (no budget spent)"
            if model.public_selection else
            "private: noisy InDif scores of the private table (charged in the ledger)"
            if "indif" in labels else
            "none needed: no pair of columns to choose from")
        if "3-way errors" in labels:
            rep["selection"] += (
                "; then the column triples where records fitted to those measurements "
                "missed the private table most (noisy errors, charged in the ledger)")
    if model.schema.drafted:  # public input by declaration: this part of it was not
        rep["schema_drafted_from_data"] = (
            f"{', '.join(model.schema.drafted)}: read off the private data by infer-schema "
            "and not marked reviewed; the guarantee does not cover what they reveal")
    if model.public is not None:
        rep["prior"] = ("GUM started from the public table's records: public input, "
                        "not covered by the guarantee and costing none of it")
    if s.group_by:
        rep["group_by"] = [list(lv) for lv in s.group_by]
        rep["grouping"] = PARALLEL_NOTE
    return rep
