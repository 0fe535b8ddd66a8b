"""Gibbs sweep: after GUM, each column is redrawn from the maximum-entropy model's
conditional given the columns it shares a target with, one column after another; one
GUM iteration then pulls the records back onto the targets.

Why.  GUM's records fit the targets, but every column set that no target holds keeps
whatever structure GUM's moves happened to leave.  For a triple (a, b, c) whose pairs
were measured in different marginals, GUM leaves a 3-way interaction that no
measurement asked for: on gss_wages at epsilon 1, the 3-way TVD of such triples was
0.077 for GUM's records and 0.061 for the maximum-entropy table with the same three
pairs (fitted by IPF to the records' own pair margins), and private-pgm's estimator,
given the same noisy marginals, reached 0.060.  The neighbour shuffle (shuffle.py)
cannot remove it: a column's neighbours hold the whole triple fixed.

The model.  The maximum-entropy distribution with the targets' marginals is
log-linear, p(x) ~ prod_T phi_T(x_T).  Given its neighbours, column a's conditional is

    p(a | rest) ~ prod_{T holding a} phi_T(a, x_{T - a}),

a function of the contexts k_T = x_{T - a} only.  It is fitted, per column, by iterative
proportional fitting over the records' distinct contexts u (w_u records each): from the
uniform conditional (zero where a target is 0), each target's table t_T(a, k) is matched
in turn,

    p(a | u) *= t_T(a, k_T(u)) / E_T(a, k_T(u)),   E_T(a, k) = sum_{u: k_T(u) = k} w_u p(a | u),

and each row renormalised: IPF for the model "a given the contexts" with the contexts'
joint held at the records' (a conditional maximum-entropy fit, of the form above), whose
expected (a, k_T) margins come as close to the targets' as the records' contexts allow
(GUM fitted them, so nearly).  Rescaling each target to the records' context counts,
t_T(a | k) W_k, measured no better (gss_wages at epsilon 1: 0.0793 against 0.0792).  It stops when every target's fitted margin
is within TVD IPF_TOLERANCE of the target, which is seldom met; when a pass improves the
worst TVD by less than IPF_STALL of it, or makes it worse (most fits settle within 6-10
passes); or after IPF_ITERATIONS passes, fewer on large fits (IPF_WORK; diamonds at
epsilon 8: 3-way TVD 0.0222, 0.0217, 0.0210 after at most 5, 10 and 20).  Each record
then draws a from p(a | u).  One sweep measured as good as two or three (gss_wages at epsilon 1: 3-way TVD 0.0807,
0.0802, 0.0805).

The draws move each target by sampling noise (2-way TVD on gss_wages 0.0279 -> 0.0305),
so a repair follows, then the neighbour shuffle again.  By default the repair is the
polish (polish.py), which moves only the records it must; with polish=False it is
REPAIR: one GUM iteration of Duplicates at rate 0.2.  Measured at seed 0 (2-/3-way TVD; without the sweep: gss_wages at
epsilon 1 0.0279 / 0.0891, diamonds at 8 0.0067 / 0.0245, MplsStops at 1
0.0183 / 0.0515, flights at 1 0.0255 / 0.1099), the rows but the first with independent
draws (before systematic_positions):

    repair                      gss_wages       diamonds        MplsStops       flights
    as released (systematic)    0.0280 / 0.0792 0.0053 / 0.0185 0.0178 / 0.0456 0.0265 / 0.0949
    1 Duplicate iteration       0.0282 / 0.0800 0.0058 / 0.0198 0.0179 / 0.0460 0.0254 / 0.0934
    3 Duplicate iterations      0.0280 / 0.0817 0.0055 / 0.0205 0.0182 / 0.0478 0.0260 / 0.0983
    3 half-Duplicate iterations 0.0268 / 0.0775 0.0064 / 0.0210 0.0176 / 0.0476 0.0303 / 0.1043
    5 Replace-only, rate 0.3    0.0278 / 0.0775 0.0296 / 0.0745 0.0311 / 0.0738
    until GUM's own fit         0.0280 / 0.0833 0.0082 / 0.0214

More repair undoes more of the sweep; Replaces diverge where the targets conflict (as
Replace-only GUM does on diamonds), and the mean TVD to the targets is no guide (on
diamonds the sweep left it at GUM's own, with 2-way TVD 0.0082).  The polish repairs
with far fewer moves, and in REPAIR's stead it lowered held-out 3-way TVD by up to a
third (docs/method.md).

Post-processing of the records and the (noisy, consistent) targets: nothing private is
read.  Both backends compute the same numbers: the contexts and their counts come from
integer sorts (unique); the fit runs in float64 on the backend's array module (CuPy on a
GPU), each of its sums exact in any order (on_grid) or taken in a fixed pairwise tree, so
NumPy's and CuPy's ways of adding agree; and the draws are the
counter RNG (stream GIBBS: sort keys at counters (row, column and column + 2^31, call),
one offset per context at (context, column + 2^30, call)) through one sorted lookup in
the rows' CDFs, which the backend sums in NumPy's order (a GPU in one launch).
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.numpy import host_kernels
from gpu_dpsyn.backends.numpy.ops import argsort_bounded
from gpu_dpsyn.core import rng
from gpu_dpsyn.core.sorting import argsort_distinct, unique_ids
from gpu_dpsyn.generate.gum import GUMConfig, draw_rows, neighbours
from gpu_dpsyn.generate.ipf import HostIPF, cell_sums, grid_scale, on_grid, rows_normalised
from gpu_dpsyn.generate.shuffle import random_keys, strata

IPF_ITERATIONS = 20  # at most, passes over a column's targets
IPF_WORK = 1 << 28  # contexts x values x targets x passes per column: fewer passes (at
# least MIN_PASSES) on large fits keep a sweep's host time bounded
MIN_PASSES = 3
MAX_CONTEXT_CELLS = 1 << 24  # contexts x values in one column's fit (128 MiB a float64
# array, a few at a time): a column above it keeps GUM's values (with a warning), so the
# host memory stays bounded at any size
REPAIR = GUMConfig(iterations=1, alpha=0.2, mix="duplicate")  # see the module
BELOW_ONE = 1.0 - 2.0 ** -53  # the largest float64 below 1
IPF_TOLERANCE = 1e-3  # TVD of the fitted margins to the targets': far below the draws'
IPF_STALL = 0.01  # a pass that improves the worst TVD by less than this share of it ends
# the fit: most fits settle at 0.005-0.035 within 6-10 passes, then move in the 5th digit


def fit_conditional(ctx, w, tables, size: int, iterations: int = IPF_ITERATIONS,
                    tolerance: float = IPF_TOLERANCE, xp=np, stall: float | None = None,
                    backend=None):
    """p(a | u) (U x size, rows summing to 1) for the U distinct contexts: ctx[u, i] is
    context u's cell of target i's other columns, w[u] its records, tables[i] target
    i's counts as (size, cells of its other columns).  IPF (see the module), multiplying
    p by each target's ratio t / E and renormalising the rows, until every target's
    fitted margin is within TVD `tolerance` of it, once a pass improves the worst TVD by
    less than `stall` of it (default IPF_STALL; a pass that makes it worse ends the fit
    too, keeping that pass: its change is as small), or after `iterations` passes; values
    that a target forbids stay at 0 (allowed).  The records' contexts need not be
    counted as the targets count them, so the tolerance is met only where they agree
    (on a copula table the TVD settled at 0.001-0.002): the stall rule and the passes
    bound the work.
    xp: NumPy or CuPy, which runs the fit (the arguments are host arrays); every sum is
    of values on an exact grid (on_grid), so both give the same p to the bit.  backend:
    the one whose passes serve on a device (backends/cuda/passes.py: the same p)."""
    totals = [float(np.sum(t)) for t in tables]  # on the host: the same sums everywhere
    ctx, tables = xp.asarray(ctx), [xp.asarray(t, dtype=xp.float64) for t in tables]
    w = xp.asarray(w, dtype=xp.float64)
    n = float(w.sum())  # whole counts: exact
    lib = host_kernels.library() if xp is np else None
    if lib is not None:  # host_ipf.cpp: the start written in the host fit's layout
        host, p = HostIPF(None, w, n, ctx, host_kernels.allowed_transposed(
            lib, ctx, tables, size)), None
    else:
        p = allowed(ctx, tables, size, xp)
        host = HostIPF(p, w, n, ctx) if xp is np else None
        if host is not None:
            p = None  # the host holds its own copy: one fewer U x size array alive
    stall = IPF_STALL if stall is None else stall
    # a device's passes in its own few launches a target: the same numbers
    fused = None if backend is None or xp is np else backend.ipf_table(
        p, w, ctx, tables, totals, grid_scale(n), [grid_scale(n + x) for x in totals])
    before = None  # the last pass's worst TVD
    for it in range(iterations):
        if fused is not None:
            now = float(fused.run()[0])  # one read a pass
        else:
            worst = []  # each target's TVD, read once a pass (a GPU: once, not per target)
            for i, t in enumerate(tables):
                E = host.margin(i, t.shape[1]) if host is not None else \
                    cell_sums(xp, on_grid(xp, p * w[:, None], n), ctx[:, i], t.shape[1]).T
                gap = on_grid(xp, xp.abs(E - t), n + totals[i])
                worst.append(0.5 * gap.sum() / max(totals[i], 1e-300))
                ok = (E > 0) & (t > 0)
                ratio = xp.where(ok, t / xp.where(ok, E, 1.0), 1.0)
                if host is not None:  # the next target's margin with it, but after the last
                    last = it == iterations - 1 and i == len(tables) - 1
                    host.scale(ratio, i, None if last else (i + 1) % len(tables),
                               None if last else tables[(i + 1) % len(tables)].shape[1])
                else:
                    p *= ratio.T[ctx[:, i]]
                    p = rows_normalised(xp, p)
            now = float(xp.stack(worst).max()) if worst else 0.0  # one read a pass
        if now < tolerance or (before is not None and before - now < stall * now):
            break
        before = now
    return host.result() if host is not None else p


def allowed(ctx, tables, size, xp=np):
    """The starting p(a | u): uniform over the values that every target allows in its
    context (t > 0) -- a target allowing none there is left out, so a value whose
    target is 0 is never drawn where another value is possible; where the targets allow
    no common value, uniform over those any of them allows (they conflict).  Masks,
    not products of floats: a target's rule is decided on its small table (a cell
    allowing no value allows all), then gathered once per context."""
    every = xp.ones((len(ctx), size), dtype=bool)
    some = xp.zeros((len(ctx), size), dtype=bool)
    for i, t in enumerate(tables):
        positive = t > 0
        every &= (positive | ~positive.any(axis=0, keepdims=True)).T[ctx[:, i]]
        some |= positive.T[ctx[:, i]]
    count = every.sum(axis=1, keepdims=True)
    p = xp.where(count > 0, every, some)
    s = xp.where(count > 0, count, some.sum(axis=1, keepdims=True))
    return xp.where(s > 0, p / xp.where(s > 0, s, 1), 1.0 / size)  # 1 / whole counts


def column_contexts(backend, cols, a: int, near, targets, sizes):
    """Column a's contexts (the records' distinct values on its neighbours `near`), as
    both the sweep and the polish (polish.py) use them: (w, each context's record count
    on the device; inv, each record's context, int64; ctx, U x targets, each context's
    cell of each target's other columns; tables, each target's counts as (values, cells
    of its other columns)), or None when contexts x values would pass MAX_CONTEXT_CELLS."""
    xp = backend.xp
    size = int(sizes[a])
    stratum = strata(xp, cols, near, sizes)
    first, inv, w = unique_ids(xp, stratum)
    del stratum
    if len(w) * size > MAX_CONTEXT_CELLS:
        return None
    ctx, tables = [], []
    for attrs, shape, t in targets:
        k = attrs.index(a)
        rest = [x for x in attrs if x != a]
        rshape = [int(sizes[x]) for x in rest]
        # on the backend: a GPU keeps the contexts on the device
        ctx.append(backend.cell_index(cols, rest, rshape)[first].astype(xp.int64)
                   if rest else xp.zeros(len(w), dtype=xp.int64))
        tables.append(np.moveaxis(np.asarray(t, dtype=np.float64).reshape(shape), k, 0)
                      .reshape(size, -1))
    return w, inv.reshape(-1).astype(xp.int64), xp.stack(ctx, axis=1), tables


def resample_column(backend, cols, a: int, near, targets, sizes, key, call: int,
                    iterations: int = IPF_ITERATIONS) -> bool:
    """Redraw column a from the model's conditional given its neighbours `near` (see the
    module), in place.  targets: (attrs, shape, counts) of those holding a; iterations:
    the IPF's passes at most.  False (and nothing changed) when the fit would exceed
    MAX_CONTEXT_CELLS."""
    size = int(sizes[a])
    found = column_contexts(backend, cols, a, near, targets, sizes)
    if found is None:
        return False
    w, inv, ctx, tables = found
    passes = max(MIN_PASSES, min(iterations, IPF_WORK // (len(w) * size * len(tables))))
    # the fit and the draws on the backend: p stays on the device
    p = fit_conditional(ctx, w.astype(backend.xp.float64), tables, size, passes,
                        xp=backend.xp, backend=backend)
    x = systematic_positions(backend, inv, w, a, key, call)
    cols[a][...] = draw_rows(backend, p, inv, x).astype(cols[a].dtype)
    return True


def systematic_positions(backend, inv, w, column: int, key, call: int):
    """For each record, where it draws in its context's CDF: the w records of a context,
    in a random order, take (rank + v) / w with one uniform v per context.  Each record's
    position is uniform on (0, 1), so it draws from p(a | u) exactly; together a
    context's records take each value within one of w p(a | u) times (systematic
    sampling), where independent draws would add multinomial noise to every target
    (Fertility at epsilon 8: 2-way TVD 0.0002 before the sweep, 0.0004 after it with
    independent draws)."""
    xp = backend.xp
    n = len(inv)
    # freed as they go: besides inv, up to seven int64 arrays a row at once
    # (sample.WORK_BYTES_PER_ROW allows for them)
    by_key = argsort_distinct(xp, random_keys(backend, n, column, key, call, rng.GIBBS))
    within = argsort_bounded(xp, inv[by_key], len(w))
    ordered = by_key[within]  # by context, in a random order within each
    del by_key, within
    w = w.astype(xp.int64)
    start = xp.cumsum(w) - w
    rank = xp.empty(n, dtype=xp.int64)
    rank[ordered] = xp.arange(n, dtype=xp.int64) - start[inv[ordered]]
    del ordered
    v = backend.uniforms(key, len(w), column + (1 << 30), rng.GIBBS, call)
    x = (rank.astype(xp.float64) + v[inv]) / w[inv].astype(xp.float64)
    return xp.minimum(x, BELOW_ONE)  # (w - 1 + v) / w rounds to 1 once w passes ~2^21


def gibbs_sweep(backend, cols, targets, sizes, key, call: int, progress=None,
                iterations: int = IPF_ITERATIONS) -> list:
    """One sweep over the columns in order: each column held by a multi-way target is
    redrawn given its neighbours (IPF passes: at most `iterations`).  targets: (attrs,
    shape, counts).  Returns the columns left as they were (MAX_CONTEXT_CELLS)."""
    multi = [t for t in targets if len(t[0]) > 1]
    return each_column(cols, multi, multi, progress, lambda a, near, mine: resample_column(
        backend, cols, a, near, mine, sizes, key, call, iterations))


def each_column(cols, targets, graph, progress, step) -> list:
    """step(a, a's neighbours in the targets `graph`, the targets holding a) for each
    column held by one of `targets`, in order; returns those where step returned False."""
    near = neighbours([t[0] for t in graph], len(cols))
    skipped = []
    for a in range(len(cols)):
        mine = [t for t in targets if a in t[0]]
        if mine and not step(a, near[a], mine):
            skipped.append(a)
        if progress is not None:
            progress.update(1)
    return skipped
