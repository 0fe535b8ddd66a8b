"""Grouped synthesis (prior-aware estimation, Tao et al. 2021, Alg. 2): every group gets
its own noisy count and marginals, level by level, each level's records the prior of the
next.

group_by=["state"] is one level; [["state"], ["puma", "year"]] two.  Level l groups by the
columns of levels 1..l together (G_l, cumulative: a level refines the one above, and its
marginals hold every coarser group column, so the records' coarser groups always agree
with the finer ones).  At level l every marginal M is measured as G_l x M: one histogram
over the group code g (the mixed-radix code of G_l, one more column of the table) and M.

Privacy: the levels compose sequentially (each has its share of the budget).  Within a
level the groups compose in parallel: G_l x M is one histogram, and one individual's at
most D records change it by at most D in L2, in whichever groups they lie, so it costs what
M costs.  D must bound an individual's records in all groups together; when each
individual's records lie in one group (a person lives in one state) that is the per-group
bound.  Group columns are public: categorical, their values listed in the schema.

On a GPU a level is one GUM run over all its groups: g is just one more column of every
target (so M has at most 2 columns there: the kernels take 3).
"""
from __future__ import annotations

import itertools
import math

from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.errors import DPSynError, SchemaError
from gpu_dpsyn.core.types import check_domains

PARALLEL_NOTE = (
    "group_by: each level measures every marginal jointly with its group columns (one "
    "histogram over group x columns), so every group gets its own noisy count and "
    "marginals. Levels compose sequentially (each has an equal share of the budget); the "
    "groups of a level compose in parallel, because that histogram changes by at most D "
    "(records per individual) in L2 whichever groups the records lie in. This assumes D "
    "bounds an individual's records in all groups together: it holds when each "
    "individual's records lie in one group (one person, one state); an individual with "
    "records in several groups must be counted with all of them in D.")


def parse_group_by(group_by) -> list:
    """group_by as levels of column names: None -> [], "a" or ["a", "b"] -> one level,
    [["a"], ["b", "c"]] -> two.  Form only; the schema is checked by resolve_levels."""
    if group_by is None:
        return []
    if isinstance(group_by, str):
        group_by = [group_by]
    if not isinstance(group_by, (list, tuple)) or not group_by:
        raise DPSynError(f"group_by must be a column name, a list of them or a list of "
                         f"levels (lists of names), got {group_by!r}")
    if all(isinstance(c, str) for c in group_by):
        group_by = [group_by]
    levels = []
    for lv in group_by:
        lv = [lv] if isinstance(lv, str) else lv
        if not isinstance(lv, (list, tuple)) or not lv or \
                not all(isinstance(c, str) for c in lv):
            raise DPSynError(f"each group_by level is a non-empty list of column names, "
                             f"got {lv!r}")
        levels.append(tuple(lv))
    names = [c for lv in levels for c in lv]
    twice = sorted({c for c in names if names.count(c) > 1})
    if twice:
        raise DPSynError(f"group_by names these columns twice: {twice}")
    return levels


def resolve_levels(levels, schema, workload, max_cells: int) -> list:
    """The cumulative group columns of each level as attribute indices, after every check
    that can fail (columns, their type, what is left to synthesize, cells of G_l x every
    other column and workload set): all before the first charge."""
    names = [c.name for c in schema.synth_columns]
    domain = schema.domain
    for c in (c for lv in levels for c in lv):
        if c not in names:
            raise SchemaError(f"group_by column {c!r} is not a synthesized column of the "
                              f"schema; columns are {names}")
        if schema[c].time_of is not None:  # computed, never read: no public groups
            raise SchemaError(f"group_by column {c!r} is the hidden time of day of "
                              f"{schema[c].time_of!r}; group by a column of the table")
        if schema[c].kind != "categorical":
            raise SchemaError(f"group_by column {c!r} must be categorical with its values "
                              "listed in the schema: groups are public")
    out, seen = [], []
    for lv in levels:
        seen += [names.index(c) for c in lv]
        out.append(tuple(sorted(seen)))
    free = [a for a in range(len(names)) if a not in out[-1]]
    if not free:
        raise DPSynError("group_by uses every column; leave at least one to synthesize")
    big = [w for w in workload if len(w) > 2]
    if big:
        raise DPSynError("in a grouped run workload column sets have at most 2 columns (the "
                         f"group makes a third), got {[tuple(names[a] for a in w) for w in big]}")
    for group in out:  # pairs that would not fit are left out of the selection instead;
        # every other column and every workload set is measured with the group
        sets = [(a,) for a in range(len(names)) if a not in group] + list(workload)
        check_domains(sorted({tuple(sorted(set(group) | set(s))) for s in sets}), domain,
                      names, max_cells)
    return out


def candidate_pairs(group, domain, max_cells: int) -> list:
    """Pairs of non-group columns whose marginal with the group fits max_cells."""
    size = group_size(group, domain)
    rest = [a for a in range(len(domain)) if a not in group]
    return [(a, b) for a, b in itertools.combinations(rest, 2)
            if size * domain[a] * domain[b] <= max_cells]


def group_size(group, domain) -> int:
    return math.prod(int(domain[a]) for a in group)


def group_code(xp, cols, group, domain):
    """Each record's group: the mixed-radix code of its group columns (C order)."""
    g = xp.zeros(len(cols[group[0]]), dtype=xp.int64)
    for a in group:
        g = g * int(domain[a]) + cols[a].astype(xp.int64)
    return g.astype(code_dtype(group_size(group, domain)))


def split_group(xp, g, group, domain, cols) -> None:
    """Write the group columns back from the group code g (in place)."""
    rest = g.astype(xp.int64)
    for a in reversed(group):
        cols[a][...] = (rest % int(domain[a])).astype(cols[a].dtype)
        rest = rest // int(domain[a])
