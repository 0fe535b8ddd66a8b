"""DPSyn (2018): every 1-way and every 2-way marginal (and the workload's sets), measured
with equal shares of the budget (a workload set: its weight in shares)."""
from __future__ import annotations

from gpu_dpsyn.core.progress import bar
from gpu_dpsyn.core.summing import left_sum
from gpu_dpsyn.core.types import check_domains
from gpu_dpsyn.measure import quantiles
from gpu_dpsyn.measure.marginals import measure
from gpu_dpsyn.selection.greedy import dpsyn_plan


def fit(state) -> list:
    """The noisy marginals of DPSyn's plan (measure.fit.FitState)."""
    m, acc, s = state.model, state.accountant, state.settings
    # until the private quantile bins are chosen their count K bounds the domain
    domain = m.schema.domain
    plan = dpsyn_plan(len(domain))
    weights = [1.0] * len(plan)
    for attrs, w in state.workload.items():
        if attrs in plan:
            weights[plan.index(attrs)] = w
        else:
            plan.append(attrs)
            weights.append(w)
    cells = check_domains(plan, domain, m.names, s.max_cells)
    q_fractions, rest = quantiles.split(m.schema, s.quantile_share)
    total_weight = left_sum(weights)
    fractions = [rest * w / total_weight for w in weights]
    q_cells = [c.private.cells for _, c in quantiles.private_columns(m.schema)]
    acc.choose_mechanism(q_fractions + fractions, q_cells + cells, s.mechanism)
    state.choose_bins(q_fractions)
    with bar(s.progress, len(plan), "measure marginals") as pb:
        return measure(state.backend, state.counts, m.domain, plan, fractions, acc,
                       state.key, m.names, pb)
