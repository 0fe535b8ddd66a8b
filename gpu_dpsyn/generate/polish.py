"""Polish: after GUM and the sweep, integer moves that bring the records' histograms
closer to the targets, column by column, and never further.

Why.  GUM moves records towards one target at a time, and every move disturbs the other
targets that share the records: on Fertility with all 56 of its 3-way marginals as
targets, even the real table's own (noiseless) marginals were fitted only to a mean TVD
of 0.0009 (the 960-cell triples to 0.005), against 0 for the real records, and more
iterations did not help (200 iterations: 0.0019).  At epsilon 8 with the default
selection the release stood 0.00068 from the measured triples' targets, which were
themselves 0.00080 from the real table: the fit was as large an error as the noise.

Where.  After GUM and the Gibbs sweep (gibbs.py), in place of the sweep's repair: the
repair's Duplicates copied donors' structure back over the sweep's draws, the polish
moves only the records it must (held-out tables: 3-way TVD down by up to a third at
epsilon 8, docs/method.md).

The moves.  Fix a column a and the other columns of the targets holding it (its
neighbours).  Records that agree on the neighbours (a context k) are interchangeable
for every target holding a, so the records are summarised by a table X[k, v]: how many
records of context k have a = v.  Moving one record of context k from value u to v
changes each target T holding a in two cells, (u, k_T) loses one and (v, k_T) gains one,
where k_T is k's cell of T's other columns; targets without a see nothing.  With
g = t - s (target minus current count), the L1 error of T changes by

    leave (u, k_T): |g| - |g + 1|        enter (v, k_T): |g| - |g - 1|      (gains)

and a move is made when its gains over the targets holding a sum above 0.  Many
contexts share a cell of T, so moves are taken together with an exact account: each
context proposes its best move (u, v) and a number of records q; in each cell of each
target the proposals leaving it and those entering it are ranked apart (by gain, ties
at random), and a block of q records, after s records ranked before it, gains
|g + s| - |g + s + q| (leaving) or |g - s| - |g - s - q| (entering).  A proposal is
accepted when its gains so counted sum above 0 over the targets.  Why every accepted
move gains at least what was counted: the counts are non-increasing in s, and the
accepted blocks are a subset, so each has at most s before it; and where L records
leave a cell and E enter it, |g + L| + |g - E| >= |g| + |g + L - E| (the absolute value
is convex and the two inner points lie between the outer two, with the same sum), so
the cell changes by at least the leavers' count plus the enterers'.  The total L1 error
falls strictly in each pass that moves anything; passes repeat until none does (at most
PASSES).

Then the records follow the table (reassign.py): in each (context, value) group the
records that leave are taken in a random order (counter RNG, stream POLISH) and given
the new values in cell order.  Each column's polish leaves every other column as it
was.  Memory per column: besides the contexts' inverse index, at most seven int64 arrays
a row at once (as the sweep's draws; sample.WORK_BYTES_PER_ROW allows for them); of the
table's size (contexts x values), on the host two int64 tables, the records' and the one
the passes move in place, and a block of float64 counts of about 8 MiB (table_counts;
4.3 tables at once before: tests), on a device up to about eight arrays, as its
move_records ranks every group (1 GiB at gibbs.MAX_CONTEXT_CELLS, which the memory check
does not count).

Post-processing of the records and the (noisy, consistent) targets: nothing private is
read.  The table's arithmetic runs in float64 on the backend's array module (CuPy on a
GPU: on the host it was most of a GPU run's time), from integer counts made by unique()
and bincount; its sums are of whole counts or over the targets in order, element by
element, and the random order comes from the counter RNG through stable sorts, so both
backends compute the same moves.
"""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.backends.numpy import host_kernels
from gpu_dpsyn.backends.numpy.ops import argsort_bounded
from gpu_dpsyn.core import rng
from gpu_dpsyn.generate.gibbs import column_contexts, each_column
from gpu_dpsyn.generate.ipf import cell_sums
from gpu_dpsyn.generate.moves import best_moves_of
from gpu_dpsyn.generate.reassign import move_records
from gpu_dpsyn.core.sorting import argsort_distinct, lexsort_distinct, runs

PASSES = 64  # at most, per column: a pass that moves nothing ends the column sooner
WORK = 1 << 27  # contexts x values x targets x passes per column: fewer passes (at least
# MIN_PASSES) on large tables keep the host time bounded; the first passes gain the most
# (Birthdays: 280,000 contexts x 20 values, half the gain in the first pass, 80% by
# the eighth, then tens of passes of a few records each)
MIN_PASSES = 4
GAIN_TOLERANCE = 1e-9  # a pass's moves must gain more than rounding


def cell_counts(X, ctx_i, n_cells: int, xp=np) -> "np.ndarray":
    """s_T as (values, cells of T's other columns): the table X summed over the contexts
    of each cell (whole counts: exact in any order).  ctx_i: each context's cell."""
    return cell_sums(xp, X if X.dtype == xp.float64 else X.astype(xp.float64), ctx_i,
                     n_cells).T


def l1_error(X, ctx, tables) -> float:
    """sum over the targets of || s_T - t_T ||_1 for the table X (NumPy)."""
    return float(sum(np.abs(t - cell_counts(X, ctx[:, i], t.shape[1])).sum()
                     for i, t in enumerate(tables)))


def block_gains(cells, q, g, priority, leaving: bool, xp=np):
    """What each proposal's q records gain in one target, after those ranked before it in
    its cell (see the module).  cells: each proposal's flat cell; g: t - s, flat;
    priority: a permutation of 0..len - 1 (0 first).  Sums of whole counts only: exact
    on both backends."""
    return all_block_gains([(cells, g, leaving)], q, priority, xp)[0]


def all_block_gains(blocks, q, priority, xp=np):
    """block_gains for several (cells, g, leaving) blocks at once, as one row each: their
    cells offset apart, so one sort orders every block's runs (a GPU launches a few
    operations a pass, not a few per target).  The same numbers as block_gains: the
    counts before a block are whole, and each gain is the same two additions."""
    m = len(q)
    by_priority = xp.empty_like(priority)
    by_priority[priority] = xp.arange(m)
    out = []
    step = max(1, BLOCK_CELLS // max(m, 1))  # blocks a chunk: bounded memory
    for lo in range(0, len(blocks), step):
        chunk = blocks[lo:lo + step]
        k = len(chunk)
        offs = np.cumsum([0] + [len(g) for _, g, _ in chunk[:-1]])
        cells = xp.concatenate([c + int(o) for (c, _, _), o in zip(chunk, offs)])
        g = xp.concatenate([gi for _, gi, _ in chunk])
        sign = xp.repeat(xp.asarray([1.0 if leaving else -1.0 for _, _, leaving in chunk]), m)
        perm = (by_priority[None, :] + (xp.arange(k) * m)[:, None]).reshape(-1)
        order = perm[argsort_bounded(xp, cells[perm])]  # by block and cell, then priority
        c, qq, sg = cells[order], xp.tile(q.astype(xp.float64), k)[order], sign[order]
        csum = xp.cumsum(qq)
        if xp is np:
            run, starts = runs(c)
            head = starts[run]
        else:  # each run's start by a search in the sorted cells: no array sized by
            head = xp.searchsorted(c, c, side="left")  # the data, so no read
        before = csum - qq - (csum - qq)[head]
        x = g[c] + sg * before  # g + before leaving, g - before entering
        res = xp.empty(k * m)
        res[order] = xp.abs(x) - xp.abs(x + sg * qq)
        out.extend(res.reshape(k, m))
    return out


BLOCK_CELLS = 1 << 24  # proposals x blocks sorted at once (all_block_gains)
BATCH_CANDIDATES = 2048  # NumPy takes every block in one sort up to this many proposals


def one_pass(X, s, ctx, tables, rank, xp=np, backend=None, columns=None):
    """One pass of moves on the table X whose target cells count s (per target, values x
    cells; see the module): (the new table, its counts, the gain counted for the accepted
    moves, a lower bound on the fall of the L1 error).  NumPy takes the contexts with a
    gaining move apart (fewer to sort); a device keeps every context and masks
    (one_pass_masked): the same moves, and the host reads nothing.  backend: its fused
    best moves (moves.best_moves_of), if given.  columns: ctx's columns, each contiguous
    (NumPy gathers from them 3-8 times as fast as from ctx's)."""
    if xp is not np:
        return one_pass_masked(X, s, ctx, tables, rank, xp, backend)
    g = [t - si for t, si in zip(tables, s)]
    u, v, gain = best_moves_of(X, g, ctx, xp, backend)
    columns = columns or [np.ascontiguousarray(ctx[:, i]) for i in range(len(tables))]
    cand = xp.flatnonzero(gain > GAIN_TOLERANCE)
    if not len(cand):
        return X, s, 0.0
    u, v, gain = u[cand], v[cand], gain[cand]
    c = [ci[cand] for ci in columns]
    by_priority = lexsort_distinct(xp, -gain, rank[cand], len(rank))  # by gain, ties at random
    lib = host_kernels.library()
    if lib is not None:  # host_tables.cpp: the sizes and the gains from each proposal's
        # values and cells, the blocks' cells never stored (the same numbers)
        q, moves = host_kernels.move_blocks(lib, X, cand, u, v, c, g,
                                            [t.shape[1] for t in tables])
        gains = host_kernels.move_gains(lib, by_priority, moves, q)
    else:
        blocks = target_blocks(tables, g, u, v, c)
        q = block_sizes(X, blocks, cand, u, xp)
        prio = xp.empty(len(cand), dtype=xp.int64)  # 0 first
        prio[by_priority] = xp.arange(len(cand))
        # every block in one sort for few proposals, where the calls cost more than the
        # work (Fertility at epsilon 8: the polish's gains 0.42 s against 1.16 s); block
        # by block past BATCH_CANDIDATES, which is faster on a CPU (fit_table on 60,000
        # contexts x 12 values x 6 targets: 0.7 s against 1.0 s); the same numbers either
        # way (tests)
        gains = all_block_gains(blocks, q, prio, xp) if len(cand) <= BATCH_CANDIDATES else \
            (block_gains(cells, q, g, prio, leaving) for cells, g, leaving in blocks)
    total = xp.zeros(len(cand))
    for gained in gains:  # in order: the same sums
        total += gained
    ok = xp.flatnonzero(total > GAIN_TOLERANCE)
    if not len(ok):
        return X, s, 0.0
    X, s = moved(X, s, cand[ok], u[ok], v[ok], [ci[ok] for ci in c], q[ok], xp)
    return X, s, float(total[ok].sum())


def one_pass_masked(X, s, ctx, tables, rank, xp, backend=None):
    """one_pass with every context proposing: one without a gaining move proposes q = 0
    records, and what is accepted is a mask.  The same moves as one_pass: the proposals
    that gain rank first by (gain, rank) -- above every other, whose gains are lower --
    in the same order among themselves; a block of 0 records adds nothing to the counts
    before the blocks ranked after it, and gains 0.  Every sum is of whole counts,
    exact in any order.  Returns the gain as a device scalar: fit_table reads it, the
    pass's one read.  (A GPU takes every block in one sort: few launches.)"""
    g = [t - si for t, si in zip(tables, s)]
    u, v, gain = best_moves_of(X, g, ctx, xp, backend)
    cand = gain > GAIN_TOLERANCE
    rows = xp.arange(len(gain))
    c = [ctx[:, i] for i in range(len(tables))]
    blocks = target_blocks(tables, g, u, v, c)
    q = xp.where(cand, block_sizes(X, blocks, rows, u, xp), 0)
    prio = xp.empty(len(gain), dtype=xp.int64)
    prio[lexsort_distinct(xp, -gain, rank, len(rank))] = rows
    total = xp.zeros(len(gain))
    for gained in all_block_gains(blocks, q, prio, xp):
        total += gained  # in order: the same sums
    ok = cand & (total > GAIN_TOLERANCE)
    X, s = moved(X, s, rows, u, v, c, xp.where(ok, q, 0), xp)
    return X, s, xp.where(ok, total, 0.0).sum()


def block_sizes(X, blocks, rows, u, xp):
    """Each proposal's block: as many records as every target gains on (-g leaving its
    cell, g entering; target_blocks' flat cells), one at least, and no more than the
    context has of value u."""
    room = None
    for cells, g, leaving in blocks:
        gained = -g[cells] if leaving else g[cells]
        room = gained if room is None else xp.minimum(room, gained)
    return xp.minimum(xp.maximum(xp.floor(room), 1), X[rows, u]).astype(xp.int64)


def target_blocks(tables, g, u, v, c) -> list:
    """(cells, g flat, leaving) per target, leavers and enterers apart (all_block_gains)."""
    flat = [gi.reshape(-1) for gi in g]
    return [(w * t.shape[1] + ci, flat[i], leaving)
            for i, (t, ci) in enumerate(zip(tables, c)) for w, leaving in ((u, True),
                                                                            (v, False))]


def moved(X, s, rows, u, v, c, q, xp):
    """The table (in place: fit_table owns its copy) and its target counts after q
    records of each row move from u to v (a row's (context, value) pairs are distinct:
    plain assignments; q 0 moves nothing)."""
    X[rows, u] -= q
    X[rows, v] += q
    q = q.astype(xp.float64)
    return X, [si + cell_counts_of(xp, u, v, ci, q, si.shape) for si, ci in zip(s, c)]


def cell_counts_of(xp, u, v, cells, q, shape):
    """The change of s_T (values x cells) when q records of each move leave (u, cell) and
    enter (v, cell): whole counts, exact in any order (a device adds them by scatter: its
    bincount reads the ids' range on the host)."""
    n = shape[0] * shape[1]
    if xp is np:
        return (np.bincount(v * shape[1] + cells, weights=q, minlength=n)
                - np.bincount(u * shape[1] + cells, weights=q, minlength=n)).reshape(shape)
    out = xp.zeros(n)
    xp.add.at(out, v * shape[1] + cells, q)
    xp.add.at(out, u * shape[1] + cells, -q)
    return out.reshape(shape)


def fit_table(X, ctx, tables, tiebreak, passes: int = PASSES, xp=np, backend=None):
    """The table X (contexts x values, integer counts) moved by passes of accepted moves
    (see the module) towards the targets `tables` (values x cells of the other columns);
    ctx[:, i]: each context's cell of target i.  tiebreak: a random number per context.
    Returns the new table (its row sums are X's).  xp: NumPy or CuPy, with all of these
    its arrays: every sum is of whole counts or in a fixed order, so both give the same
    table.  backend: the one whose fused best moves serve (moves.best_moves_of), if any."""
    X = X.astype(xp.int64)  # the passes move this copy in place
    columns = [xp.ascontiguousarray(ctx[:, i]) for i in range(len(tables))]
    s = table_counts(X, columns, tables, xp)
    rank = xp.empty(len(tiebreak), dtype=xp.int64)
    rank[argsort_distinct(xp, tiebreak)] = xp.arange(len(tiebreak))
    # a device's passes in its own few launches (backends/cuda/passes.py): the same moves
    fused = None if backend is None or xp is np else backend.polish_table(
        X, s, tables, ctx, rank, BLOCK_CELLS, GAIN_TOLERANCE)
    for _ in range(passes):
        if fused is not None:
            gained = fused.run()
        else:
            X, s, gained = one_pass(X, s, ctx, tables, rank, xp, backend, columns)
        if float(gained) <= 0:  # a device: the pass's one read
            break
    return X


def table_counts(X, columns, tables, xp=np) -> list:
    """cell_counts of the table X for each target: on the host from float64 copies of
    COUNT_CELLS cells of X at a time, not one of all of it (whole counts: the same sums
    in blocks); a device takes one copy (few launches, and its memory is not the
    host's)."""
    step = max(1, COUNT_CELLS // max(X.shape[1], 1)) if xp is np else max(len(X), 1)
    s = None
    for lo in range(0, max(len(X), 1), step):
        Xf = X[lo:lo + step].astype(xp.float64)
        part = [cell_counts(Xf, ci[lo:lo + step], t.shape[1], xp)
                for ci, t in zip(columns, tables)]
        if s is None:
            s = part
        else:
            for si, pi in zip(s, part):
                si += pi
    return s


COUNT_CELLS = 1 << 20  # table_counts' block: 8 MiB of float64


def polish_column(backend, cols, a: int, near, targets, sizes, key, call: int,
                  passes: int = PASSES) -> bool:
    """Polish column a against the targets holding it (see the module), in place.  False
    (nothing changed) when its table would pass gibbs.MAX_CONTEXT_CELLS."""
    xp = backend.xp
    size = int(sizes[a])
    if size < 2:  # one value: nothing to move
        return True
    found = column_contexts(backend, cols, a, near, targets, sizes)
    if found is None:
        return False
    w, inv, ctx, tables = found
    U = int(len(w))
    cell = inv * size + cols[a].astype(xp.int64)
    if xp is np:
        X0 = np.bincount(cell, minlength=U * size).reshape(U, size).astype(np.int64,
                                                                           copy=False)
    else:  # a float64 scatter-add (exact counts; CuPy's atomics take it): CuPy's
        # bincount reads the ids' range on the host
        X0 = xp.zeros(U * size)
        xp.add.at(X0, cell, 1.0)
        X0 = X0.reshape(U, size).astype(xp.int64)
    del cell
    tiebreak = backend.uniforms(key, U, a + (1 << 30), rng.POLISH, call)
    passes = max(MIN_PASSES, min(passes, WORK // (U * size * len(tables))))
    # on the backend: a GPU runs the table's passes too (the same moves as NumPy's)
    X1 = fit_table(X0, xp.asarray(ctx), [xp.asarray(t, dtype=xp.float64) for t in tables],
                   tiebreak, passes, xp, backend)
    move_records(backend, cols, a, inv, X0, X1, key, call)
    return True


def polish(backend, cols, targets, sizes, key, call: int, progress=None,
           passes: int = PASSES) -> list:
    """One pass over the columns in order, each polished against the targets holding it
    (targets: (attrs, shape, counts summing to the records); 1-way ones too), with at
    most `passes` passes of moves each.  Returns the columns left as they were (too many
    contexts)."""
    multi = [t for t in targets if len(t[0]) > 1]
    return each_column(cols, targets, multi, progress, lambda a, near, mine: polish_column(
        backend, cols, a, near, mine, sizes, key, call, passes))
