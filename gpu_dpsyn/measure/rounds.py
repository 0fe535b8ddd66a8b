"""The adaptive 3-way rounds (selection/triples.py has the method): fit GUM's records S to
the level's marginals so far, measure the noisy errors of candidate triples against S,
measure the triples worth it; keep a round's triples only if S, refitted, realises them;
what is left measures the level's multi-way marginals again, pooled."""
from __future__ import annotations

import dataclasses
import math

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.grouping import candidate_pairs
from gpu_dpsyn.core.progress import bar
from gpu_dpsyn.core.summing import left_sum
from gpu_dpsyn.core.types import Level, check_domains
from gpu_dpsyn.estimate.targets import pool, scaled_targets, top
from gpu_dpsyn.generate.records import Effort, SampleRun, fit_level, init_records
from gpu_dpsyn.generate.sample import check_memory as _check_memory
from gpu_dpsyn.measure import errors
from gpu_dpsyn.measure.marginals import measure
from gpu_dpsyn.selection import triples
from gpu_dpsyn.selection.greedy import c23_fractions


# S's sweep and polish: at most 5 IPF passes and 8 polish passes a column (the release's:
# 20 and 64).  S only ranks the candidates' errors: at eps 1 the release was the same to
# the bit on 8 tables, at eps 8 its 3-way TVD moved within seed noise (-0.0022 to
# +0.0003), and the fits took half as long (bench/experiments/s_effort)
S_EFFORT = Effort(ipf_passes=5, polish_passes=8)


def planned(settings, domain, groups) -> bool:
    """Whether a privsyn fit runs the rounds, from public inputs alone: ungrouped (grouped
    targets stay within the kernels' 3 columns with the group), 3 columns or more, a
    candidate pair, rounds asked for."""
    return settings.method == "privsyn" and groups == [()] and \
        bool(settings.adaptive_rounds) and len(domain) >= 3 and \
        bool(candidate_pairs((), list(domain), settings.max_cells))


def check_memory(backend, domain) -> None:
    """Refuse when S (at most FIT_ROWS records) cannot fit: before the private table is
    read (measure.fit), so that neither the refusal nor the memory it names depends on
    the table's size."""
    _check_memory(backend, triples.FIT_ROWS, domain, False,
                  f"fitting the adaptive rounds' {triples.FIT_ROWS:,} records",
                  "adaptive_rounds=0 (--adaptive-rounds 0) needs none", decoded=False)


def run(state, level, plan, f_round, selected, label) -> None:
    """Up to adaptive_rounds rounds on the level (in place): fit S to its marginals so far
    (warm from the last round's), keep the last round's triples only if S realised their
    error (triples.realised; else drop them and stop), measure the noisy errors against S
    of the candidates that could be worth measuring, measure those that are; after a
    round that measures none (or the last), what is left measures the level's multi-way
    marginals again, pooled."""
    acc, m, n_rounds = state.accountant, state.model, state.settings.adaptive_rounds
    dom = m.domain
    cap = min(triples.TRIPLE_MAX_CELLS, state.settings.max_cells)
    measured, left, synth, n_syn = list(plan), f_round, None, None
    f_multi = left_sum(e.fraction for e in acc.ledger if e.label == "marginal" and
                       len(e.columns) > 1)  # what the chosen marginals had so far
    pending = None  # the last round's triples and S's histograms of them before it
    for r in range(n_rounds):
        f_r = left / (n_rounds - r)
        f_err, f_tri = f_r * triples.ERROR_SHARE, f_r * (1 - triples.ERROR_SHARE)
        trial, n_hat = _trial(state, level)
        fitted = pending is not None
        if fitted:  # S refitted with the last round's triples: does GUM realise them?
            synth = _records(state, Level((), trial, level.measured_cells), n_syn, synth,
                             f"adaptive round {r + 1}/{n_rounds}: records S")
            kept, pending = _keep_round(state, level, trial, synth, pending, selected,
                                        label), None
            if not kept:
                break
        tops = [x.cells for x in top(level.marginals) if len(x.attrs) > 1]
        forgone = triples.pooling_gain(tops, f_multi * acc.rho, f_tri * acc.rho,
                                       acc.sensitivity) if state.pooling_test else 0.0
        cands = triples.candidate_triples(dom, range(len(dom)), measured, cap)
        cells = [math.prod(dom[a] for a in t) for t in cands]
        keep = triples.could_gain(cells, n_hat, f_tri * acc.rho, acc.sensitivity, forgone)
        cands, cells = [t for t, k in zip(cands, keep) if k], \
            [c for c, k in zip(cells, keep) if k]
        if not cands:
            break
        # N is fixed by the first round (noisy n_hat, public cap), so later rounds
        # start from the last round's records
        n_syn = n_syn or min(n_hat, triples.FIT_ROWS)
        if not fitted:
            synth = _records(state, Level((), trial, level.measured_cells), n_syn, synth,
                             f"adaptive round {r + 1}/{n_rounds}: records S")
        noisy = errors.measure_errors(state.backend, state.counts, synth, dom, cands, n_hat,
                                      acc, f_err, state.key)
        left -= f_err
        chosen = [cands[i] for i in triples.choose(noisy, cands, cells, f_tri * acc.rho,
                                                   acc.sensitivity, forgone)]
        if not chosen:
            break
        pending = (chosen, _histograms(state, synth, chosen))
        _measure_more(state, level, chosen, f_tri, label,
                      desc=f"adaptive round {r + 1}/{n_rounds}: measure triples")
        left -= f_tri
        f_multi += f_tri
        measured += chosen
        selected += [tuple(label[a] for a in x) for x in chosen]
    if pending is not None:  # the last round's: one more fit of S to judge them
        trial, _ = _trial(state, level)
        synth = _records(state, Level((), trial, level.measured_cells), n_syn, synth,
                         "adaptive rounds: last check of S")
        _keep_round(state, level, trial, synth, pending, selected, label)
    again = [x.attrs for x in top(level.marginals) if len(x.attrs) > 1]
    if left > 1e-12 * f_round and again:  # measure again, pooled: none left unspent
        _measure_more(state, level, again, left, label, pool_them=True,
                      desc="adaptive rounds: measure the chosen marginals again")


def _trial(state, level):
    """A consistent copy of the level's marginals, and its total (the noisy count)."""
    trial = [dataclasses.replace(x, values=x.values.copy()) for x in level.marginals]
    return trial, max(1, int(round(state.estimate(trial, level.measured_cells))))


def _histograms(state, synth, sets) -> list:
    """S's histograms of the column sets, on the host (triples.realised reads them)."""
    be = state.backend
    return [be.to_numpy(h) for h in errors.histograms(be, synth, state.model.domain, sets)]


def _keep_round(state, level, trial, synth, pending, selected, label) -> bool:
    """Keep a round's triples if S, refitted with them, realised at least
    triples.REALISED of their error; else take them out of the level's targets (their
    charge stays in the ledger; the model's `unused` names them)."""
    chosen, before = pending
    at = {x.attrs: x for x in trial}
    targets = [at[t] for t in chosen]
    if triples.realised(before, _histograms(state, synth, chosen), targets) >= \
            triples.REALISED:
        return True
    drop = set(chosen)
    keep = [i for i, x in enumerate(level.marginals) if x.attrs not in drop]
    level.marginals = [level.marginals[i] for i in keep]
    level.measured_cells = [level.measured_cells[i] for i in keep]
    names = [tuple(label[a] for a in t) for t in chosen]
    selected[:] = [x for x in selected if x not in names]
    state.model.unused += names
    return False


def _measure_more(state, level, sets, fraction, label, pool_them=False,
                  desc: str = "measure marginals") -> None:
    """Measure the column sets (budget ~ w c^(2/3)) into the level: as new marginals, or
    pooled with the level's measurements of the same sets."""
    m, s = state.model, state.settings
    mcells = check_domains(sets, m.domain, label, s.max_cells)
    with bar(s.progress, len(sets), desc) as pb:
        new = measure(state.backend, state.counts, m.domain, sets, c23_fractions(
            mcells, fraction, [state.workload.get(x, 1.0) for x in sets]),
            state.accountant, state.key, label, pb)
    if not pool_them:
        level.marginals += new
        level.measured_cells += mcells
        return
    at = {x.attrs: i for i, x in enumerate(level.marginals)}
    for x in new:
        level.marginals[at[x.attrs]] = pool(level.marginals[at[x.attrs]], x)


def _records(state, level, n: int, start=None, label: str | None = None) -> list:
    """n records fitted by GUM to the level's (consistent) marginals, as codes on the
    device, from `start` (records of an earlier fit) or independent draws: S.  Its
    post-processing stream is a call of its own, so no release shares it."""
    m = state.model
    key, call = rng.split_key(m.seed), state.reserve_calls(1)
    cols = init_records(state.backend, m, n, key, call, level) if start is None or \
        len(start[0]) != n else start
    cfg = dataclasses.replace(state.settings.gum, iterations="auto",
                              max_iterations=triples.FIT_ITERATIONS)
    return fit_level(state.backend, m, cols, level, scaled_targets(level, n), key, call,
                     m.public is not None or cols is start, SampleRun(label=label), cfg,
                     effort=S_EFFORT)
