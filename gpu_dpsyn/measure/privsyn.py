"""PrivSyn, level by level (one level, group (), without group_by): the noisy 1-way
marginals (with the group), low-count merging, the pairs' scores (noisy InDif, or free
from a public table), the greedy choice, the selected marginals, then the adaptive 3-way
rounds (rounds.py).  The selection is scored once and chosen per level by its own budget
and cells."""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from gpu_dpsyn.core.grouping import candidate_pairs, group_code, group_size
from gpu_dpsyn.core.progress import bar
from gpu_dpsyn.core.types import Level, check_domains
from gpu_dpsyn.errors import LargeDomainWarning
from gpu_dpsyn.estimate.filtering import (low_count_recode, one_way_of, recoded, rows_of,
                                          theta_sigmas)
from gpu_dpsyn.estimate.targets import private_row_estimate
from gpu_dpsyn.measure import quantiles, rounds
from gpu_dpsyn.measure.indif import measure_indif, public_scores
from gpu_dpsyn.measure.marginals import measure
from gpu_dpsyn.privacy.accountant import gaussian_sigma
from gpu_dpsyn.selection import triples
from gpu_dpsyn.selection.greedy import (COMBINE_MAX_CELLS, c23_fractions, combine_cliques,
                                        connect_isolated, greedy_select)

SPLIT = (0.1, 0.1, 0.8)  # InDif selection, 1-way marginals, selected marginals


def fit(state, groups) -> list:
    """The levels' noisy marginals (measure.fit.FitState; groups: each level's group
    columns)."""
    m, acc, s, key = state.model, state.accountant, state.settings, state.key
    names, workload, counts = m.names, state.workload, state.counts
    domain = list(m.schema.domain)  # private quantile bins: K, an upper bound
    d = len(domain)
    # the candidate pairs, from the schema (public): filtering only shrinks domains
    pairs0 = candidate_pairs(groups[0], domain, s.max_cells)
    q_fractions, rest = quantiles.split(m.schema, s.quantile_share)
    split = SPLIT if pairs0 else (0.0, 1.0, 0.0)
    if pairs0 and m.public_selection:  # selection is free: measure with its share
        split = (0.0, split[1] / (1 - split[0]), split[2] / (1 - split[0]))
    f_sel, f_one, f_marg = (rest * f for f in split)
    f_one, f_marg = f_one / len(groups), f_marg / len(groups)  # levels: sequential
    # a share of the marginals' budget goes to adaptive 3-way rounds (rounds.py)
    f_round = f_marg * triples.ROUND_SHARE if rounds.planned(s, domain, groups) else 0.0
    f_marg -= f_round
    if groups == [()]:
        # the 1-ways and the sets the user named are measured: refuse huge domains
        # before spending anything (grouped: resolve_levels did); a pair past
        # max_cells cannot be chosen, so it is left out of the candidates, and said
        check_domains([(a,) for a in range(d)] + list(workload), domain, names,
                      s.max_cells)
        _warn_pairs_left_out(domain, names, pairs0, s.max_cells)
    acc.choose_mechanism([1.0], [1], "gaussian")
    state.choose_bins(q_fractions)
    domain = list(m.domain)
    grouped = {a for g in groups for a in g}  # never merged: groups are public
    levels, scores, selected = [], {}, []
    for lv, group in enumerate(groups):
        g = (d,) if group else ()  # the group code: column d of the counts source
        if group:
            counts.cols[d:] = [group_code(state.backend.xp, counts.cols, group, domain)]
        dom = domain + [group_size(group, domain)] if group else domain
        label = names + [" x ".join(names[a] for a in group)] if group else names
        free = [a for a in range(d) if a not in group]
        plan = _choose(state, scores, pairs0, group, domain, f_marg, lv) if lv else []
        # 1) noisy 1-way marginals, then merge values whose counts are lost in the noise
        one_plan = [(a,) + g for a in free]
        one = measure(state.backend, counts, dom, one_plan, c23_fractions(
            [dom[a] * (dom[d] if group else 1) for a in free],
            f_one if plan or not lv else f_one + f_marg,
            [workload.get((a,), 1.0) for a in free]), acc, key, label)
        measured = [x.cells for x in one]
        if lv == 0:
            _merge_low_counts(state, one, free, grouped, domain)
            m.domain = tuple(domain)
            dom = domain + [group_size(group, domain)] if group else domain
            if state.public_raw is not None:
                m.public = state.public_codes()
            if pairs0:
                scores = _scores(state, pairs0, one, f_sel)
                # chosen at the whole budget: what the rounds do not take comes back
                plan = _choose(state, scores, pairs0, group, domain, f_marg + f_round, lv,
                               private_row_estimate(one))
        # 2) the selected marginals, budget ~ w c^(2/3)
        ext = [tuple(sorted(x + g)) for x in plan]
        mcells = check_domains(ext, dom, label, s.max_cells)
        selected += [tuple(label[a] for a in x) for x in ext]
        with bar(s.progress, len(ext), "measure marginals") as pb:
            sel = measure(state.backend, counts, dom, ext, c23_fractions(
                mcells, f_marg, [workload.get(x, 1.0) for x in plan]), acc, key, label,
                pb) if ext else []
        level = Level(group, one + sel, measured + mcells)
        if f_round:
            rounds.run(state, level, ext, f_round, selected, label)
        levels.append(level)
    if pairs0:
        m.selected = selected
    return levels


def _merge_low_counts(state, one, free, grouped, domain) -> None:
    """Filtering (first level): values of a column whose noisy count (summed over the
    groups) is below the threshold (filtering.theta_sigmas) are merged; group columns are
    kept whole."""
    if not state.settings.filter_low_counts:
        return
    ways = [m if len(m.attrs) == 1 else one_way_of(m, a) for m, a in zip(one, free)]
    rows = rows_of(ways)  # what a merged tail may hold: the rows the kept values miss
    for i, a in enumerate(free):
        if a in grouped:
            continue
        m = one[i]
        col = state.model.schema[state.model.names[a]]
        r = low_count_recode(ways[i], ordered=col.bins if col.kind == "numeric" else 0)
        if r is not None:
            state.model.recodes[a] = r
            one[i] = recoded(m, r, rows)
            state.counts.recode(a, r)  # on every partition, for a distributed source
            domain[a] = r.size


def _scores(state, pairs, one, f_sel) -> dict:
    """Each candidate pair's InDif: from the public table (free), or noisy (charged)."""
    m = state.model
    if m.public_selection:
        s = public_scores(state.backend, m.public, m.domain, pairs,
                          private_row_estimate(one))
    else:
        pairs, s = measure_indif(state.backend, state.counts, m.domain, m.names,
                                 state.accountant, f_sel, state.key, pairs)
    return dict(zip(pairs, s))


def _choose(state, scores, pairs0, group, domain, f_marg, lv, rows=None) -> list:
    """A level's marginals: PrivSyn's greedy choice over the pairs without a group
    column, at this level's budget and cells (the group multiplies them); the first
    level also connects isolated attributes (later ones start from its records) and,
    ungrouped, combines triangles (grouped targets stay within the kernels' 3
    columns)."""
    s, acc = state.settings, state.accountant
    size = group_size(group, domain)
    # a finer level's group may make a pair too large: leave it out (not refuse it
    # after the levels above were charged)
    fits = set(candidate_pairs(group, domain, s.max_cells))
    pairs = [p for p in pairs0 if p in fits]
    if not pairs:
        return []
    sc = np.array([scores[p] for p in pairs])
    cells = [domain[a] * domain[b] * size for a, b in pairs]
    forced = [pairs.index(w) for w in state.workload if w in pairs]
    chosen = greedy_select(sc, cells, f_marg * acc.rho, acc.sensitivity, forced)
    if lv == 0:
        chosen = connect_isolated(chosen, pairs, sc, len(domain))
    plan = [pairs[i] for i in chosen]
    if group:
        return plan
    def floor(c, share):  # theta sigmas of a c-cell triple's noise at its share
        return theta_sigmas(c) * gaussian_sigma(share * f_marg * acc.rho, acc.sensitivity)
    plan = combine_cliques(plan, domain, min(COMBINE_MAX_CELLS, s.max_cells), rows,
                           None if rows is None else floor)
    return plan + [w for w in state.workload if len(w) == 3 and w not in plan]


def _warn_pairs_left_out(domain, names, pairs, max_cells: int) -> None:
    """One LargeDomainWarning naming the largest pair past max_cells (from the schema:
    public), and how many more: PrivSyn leaves them out of its choice."""
    fit = set(pairs)
    over = sorted(((domain[a] * domain[b], a, b) for a, b in
                   itertools.combinations(range(len(domain)), 2) if (a, b) not in fit),
                  key=lambda x: (-x[0], x[1], x[2]))
    if not over:
        return
    c, a, b = over[0]
    more = f" (and {len(over) - 1} more pair{'s' if len(over) > 2 else ''})" \
        if len(over) > 1 else ""
    warnings.warn(f"columns {names[a]!r} ({domain[a]:,} values) and {names[b]!r} "
                  f"({domain[b]:,} values) make a pair marginal of {c:,} cells, more than "
                  f"max_cells={max_cells:,}{more}: PrivSyn leaves that pair out, so their "
                  "joint distribution is not modelled; bin or group their values in the "
                  "schema to keep it", LargeDomainWarning, stacklevel=5)
