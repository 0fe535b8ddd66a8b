"""The report's per-group section for a group_by run: each level's largest groups with
their row counts and mean 2-way TVD inside the group (fidelity.group_tvd)."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.evaluation.fidelity import group_tvd
from gpu_dpsyn.evaluation.report.html import esc, table

TOP_GROUPS = 10


def levels_of(run: dict | None) -> list:
    """The ledger's group_by levels as lists of column names ([] when there are none)."""
    levels = (run or {}).get("group_by") or []
    ok = isinstance(levels, list) and all(
        isinstance(lv, list) and all(isinstance(c, str) for c in lv) for lv in levels)
    return levels if ok else []


def _label(schema, names, group, codes) -> str:
    parts = []
    for a, code in zip(group, codes):
        col = schema[names[a]]
        value = "missing" if code == col.null_code else col.values[code]
        parts.append(f"{names[a]}={value}")
    return ", ".join(parts)


def section(ev, schema, levels, top: int = TOP_GROUPS) -> list:
    """Per level (its groups are the columns of every level down to it): the mean over all
    groups and a table of the `top` largest."""
    if not levels:
        return []
    parts = ["<h2>Per group</h2><p>The run was grouped: every group got its own noisy count "
             "and marginals. For each level, the mean 2-way TVD of the other columns inside "
             "each group (a group the synthetic table lacks scores 1), over all groups and for "
             f"the {top} largest real ones.</p>"]
    cum = []
    for lv in levels:
        cum += [c for c in lv if c in ev.names]
        group = [ev.names.index(c) for c in cum]
        if not group or len(group) == len(ev.names):
            continue
        per = group_tvd(ev.real, ev.syn, ev.domain, group)
        mean = float(np.mean([g["tvd_2way"] for g in per]))
        rows = [(_label(schema, ev.names, group, g["group"]), f"{g['real_rows']:,}",
                 f"{g['synthetic_rows']:,}", f"{g['tvd_2way']:.4f}") for g in per[:top]]
        parts += [f"<h3>Groups of {esc(' x '.join(cum))}: {len(per):,} in the real table, "
                  f"mean 2-way TVD {mean:.4f}</h3>",
                  table(rows, ["group", "real rows", "synthetic rows", "mean 2-way TVD"])]
    return parts
