"""Records fitted to one level's targets: the initial draws, then GUM, the neighbour
shuffle, the Gibbs sweep and the polish.  Used by sample() for the release and by the
adaptive rounds for their records S; post-processing of the noisy marginals."""
from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field

import numpy as np

from gpu_dpsyn.backends.arrays import apportion
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.grouping import group_code, group_size, split_group
from gpu_dpsyn.core.progress import bar, labelled
from gpu_dpsyn.estimate.filtering import one_way_of
from gpu_dpsyn.generate import gibbs
from gpu_dpsyn.generate.gibbs import REPAIR, gibbs_sweep
from gpu_dpsyn.generate.gum import (append_attribute, plan_structure, project, run_gum,
                                    target_errors)
from gpu_dpsyn.generate.polish import PASSES, polish
from gpu_dpsyn.generate.shuffle import neighbour_shuffle


@dataclass
class SampleRun:
    """What one generation leaves behind, for benchmarks and tests (not for release: the
    times grow with the row count): GUM's curve (mean TVD to the targets per iteration)
    and its wall times, seconds per step, and the last level's target structure."""
    history: list = field(default_factory=list)
    gum_seconds: list = field(default_factory=list)
    timings: dict = field(default_factory=lambda: dict.fromkeys(
        ("shuffle", "sweep", "polish"), 0.0))
    structure: object = None
    label: str | None = None  # where in the run its bars are ("adaptive round 2/3: S")

    def timed(self, backend, step: str, t0: float) -> None:
        """Add the time since t0 to the step (after the device finished it)."""
        backend.synchronize()
        self.timings[step] += time.perf_counter() - t0


def init_records(backend, model, n: int, key, call: int, level=None) -> list:
    """n records to start GUM from: a public prior's records resampled to n, or
    independent columns from the first level's 1-way marginals (a grouped level draws
    its group code, a column after the table's, and splits it)."""
    xp, be = backend.xp, backend
    if model.public is not None:
        n_pub = len(model.public[0])
        u = be.uniforms(key, n, 0, rng.PRIOR, call)
        idx = xp.minimum(xp.floor(u * n_pub).astype(xp.int64), n_pub - 1)
        return [xp.ascontiguousarray(be.asarray(c)[idx]) for c in model.public]
    lv, sizes = level or model.levels[0], list(model.domain)
    if lv.group:
        sizes.append(group_size(lv.group, model.domain))
        one = {a: one_way_of(m, a).values for m in lv.marginals for a in m.attrs
               if a not in lv.group}
        one.update({a: np.eye(sizes[a])[0] for a in lv.group})  # written from the code
    else:
        one = {m.attrs[0]: m.values for m in lv.marginals if len(m.attrs) == 1}
    counts = []
    for a, size in enumerate(sizes):
        v = one[a] if a in one else np.ones(size)
        v = v if v.sum() > 0 else np.ones(size)
        counts.append(apportion(np, v.astype(np.float64), float(n)).astype(np.int64))
    cols = be.init_records(counts, key, call)
    if lv.group:
        split_group(xp, cols[-1], lv.group, model.domain, cols)
    return cols[:len(model.domain)]


@dataclass(frozen=True)
class Effort:
    """How far the sweep and the polish go: the IPF's passes per column and the polish's
    passes per column, at most (each also bounded by its work cap)."""
    ipf_passes: int = gibbs.IPF_ITERATIONS
    polish_passes: int = PASSES


RELEASE = Effort()


def fit_level(backend, model, cols, lv, targets, key, call: int, prior: bool,
              run: SampleRun, cfg=None, plan=plan_structure, effort: Effort = RELEASE) -> list:
    """One level's GUM (and attribute appending) on the records cols; a grouped level
    fits its group code as one more column, then writes the group columns from it.
    cfg: GUM's settings (default the model's; the adaptive rounds pass theirs).  The
    rounds' records S get the Gibbs sweep and the polish too: S ranks the triples'
    errors, and without them it shows errors the release will not have.  Neither runs
    without GUM iterations: they fit the targets, and iterations=0 asks for the
    independent draws.  plan: how the targets are used (gum.plan_structure; experiments
    pass variants).  effort: the sweep's and the polish's passes (the rounds' records S
    take fewer: rounds.S_EFFORT)."""
    be, st_, d = backend, model.settings, len(model.domain)
    if lv.group:
        cols = cols + [group_code(be.xp, cols, lv.group, model.domain)]
    append = not prior if st_.append_attributes == "auto" else st_.append_attributes
    st = plan([t[0] for t in targets], len(cols), append, st_.duplicate_scope)
    cfg = cfg or st_.gum
    gum_targets = [project(*targets[i], st.attrs[i]) for i in st.gum_targets]
    groups, slack = [st.groups[i] for i in st.gum_targets], _slack(st_, lv, targets, st)
    with bar(st_.progress, cfg.limit, labelled(run.label, "GUM iterations")) as pb:
        res = run_gum(be, gum_targets, cols, key, call, cfg, pb, groups, slack)
    for x, i in st.appended:
        append_attribute(be, res.cols, x, *targets[i], key, call)
    # a public prior's structure is kept; grouped levels fit a group code
    free = not lv.group and model.public is None
    tops = [t[0] for t in targets]
    if st_.neighbour_shuffle and free:
        # GUM's Duplicates leave copies of a few donors (shuffle.py)
        t0 = time.perf_counter()
        neighbour_shuffle(be, res.cols, tops, model.domain, key, call)
        run.timed(be, "shuffle", t0)
    swept = st_.gibbs_sweep and free and cfg.limit > 0
    polished = st_.polish and free and cfg.limit > 0
    if swept:
        # GUM's 3-way structure where no target holds it (gibbs.py): redraw
        t0 = time.perf_counter()
        with bar(st_.progress, len(res.cols), labelled(run.label, "Gibbs sweep")) as pb:
            skipped = gibbs_sweep(be, res.cols, targets, model.domain, key, call, pb,
                                  effort.ipf_passes)
        run.timed(be, "sweep", t0)
        _warn_left(model, "the Gibbs sweep", skipped, "as GUM made them")
        if not polished:  # the repair: one GUM iteration of Duplicates (gibbs.py)
            # a Duplicate that copies all of an appended column's anchors copies it
            # too (the sweep drew it from its target given them)
            carried = [sorted(set(g).union(x for x, i in st.appended
                                           if set(st.attrs[i]) <= set(g))) for g in groups]
            rep = run_gum(be, gum_targets, res.cols, key, call, REPAIR, None, carried,
                          slack, step0=cfg.limit)
            res.history += rep.history[1:]
            res.seconds += [res.seconds[-1] + t for t in rep.seconds[1:]]
    if polished:
        # GUM stops where its moves for one target undo another's (polish.py); after
        # the sweep it is the repair, and moves only the records it must (a column
        # too large for its table is one the sweep left as it was: the same bound)
        t0 = time.perf_counter()
        with bar(st_.progress, len(res.cols), labelled(run.label, "polish")) as pb:
            skipped = polish(be, res.cols, targets, model.domain, key, call, pb,
                             effort.polish_passes)
        _warn_left(model, "the polish", skipped, "as they were")
        run.timed(be, "polish", t0)
        err = target_errors(be, res.cols, gum_targets)
        res.history.append(float(err.mean()) if err.size else 0.0)
        res.seconds.append(res.seconds[-1] + time.perf_counter() - t0)
    if st_.neighbour_shuffle and (swept or polished):  # the draws' and moves' copies
        t0 = time.perf_counter()
        neighbour_shuffle(be, res.cols, tops, model.domain, key, call, sweep=1)
        run.timed(be, "shuffle", t0)
    start = run.gum_seconds[-1] if run.gum_seconds else 0.0
    run.history += res.history
    run.gum_seconds += [start + t for t in res.seconds]
    run.structure = st
    if lv.group:
        split_group(be.xp, res.cols[d], lv.group, model.domain, res.cols)
    return res.cols[:d]


def _warn_left(model, step: str, skipped, how: str) -> None:
    """Name the columns a step left out, in the user's terms: their values, why, and what
    would bring them in (the bound is on the records' contexts times the values)."""
    if not skipped:
        return
    which = ", ".join(f"{model.names[a]!r} ({model.domain[a]:,} values)" for a in skipped)
    warnings.warn(f"{step} left columns {which} {how}: with their neighbouring columns (those "
                  f"they share a marginal with) their tables would pass "
                  f"{gibbs.MAX_CONTEXT_CELLS:,} cells (contexts x values), so their joint "
                  "structure is as GUM fitted it. Give them or those columns fewer values in "
                  "the schema (fewer bins, or merged categories) to include them",
                  stacklevel=5)


def _slack(settings, lv, targets, st):
    """Per GUM target: prior_tolerance noise standard deviations, in counts at this
    sample's size (a projected target sums cells: its noise adds up)."""
    k = settings.prior_tolerance
    if k == 0:
        return None
    share = {m.attrs: m.sigma / m.values.sum() if m.values.sum() > 0 else 0.0
             for m in lv.marginals}
    out = []
    for i in st.gum_targets:
        attrs, shape, t = targets[i]
        summed = math.prod(n for a, n in zip(attrs, shape) if a not in st.attrs[i])
        out.append(k * share[attrs] * float(np.sum(t)) * math.sqrt(summed))
    return out
