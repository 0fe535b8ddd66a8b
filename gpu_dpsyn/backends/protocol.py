"""The Backend protocol: the data-parallel operations every backend implements, with the
NumPy body (numpy/ops.py) and the CuPy body (cuda/ops.py) side by side, one method each.

Both follow one counter-RNG layout and one set of formulas, so for one seed they give the
same noise, records and table.  Cell-level code that is not an operation here is written
against `xp` (the array module) and shared (arrays.py).
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Backend(Protocol):
    name: str  # "cpu" or "gpu"
    xp: Any  # numpy or cupy

    # -- transfer
    def asarray(self, x, dtype=None): ...
    def to_numpy(self, x): ...
    def synchronize(self) -> None: ...
    def free_memory(self) -> int | None: ...
    def prepare(self) -> None:
        """Build what the operations need (kernels, host samplers): before any charge."""

    # -- marginals
    def cell_index(self, cols, attrs, shape):
        """Flat C-order cell of each record over the column set attrs."""
    def cell_histogram(self, cols, attrs, shape):
        """(cell of each record, int64 counts per cell) in one pass."""
    def histogram(self, cols, attrs, shape):
        """int64 counts per cell of the column set (flat, C order)."""
    def histograms(self, cols, specs):
        """The histograms of several (attrs, shape), end to end in one int64 array: one
        pass over the records (a GPU: one launch) instead of one each."""

    # -- randomness
    def uniforms(self, key, n: int, c1: int, c2: int, c3: int):
        """u_i = uniform(philox(key, i, c1, c2, c3).w0) in (0, 1), i < n."""
    def noise_draws(self, draws, key, stream: int, max_words: int):
        """(values, status) of exact discrete noise for the (spec, n, call) draws end to
        end, each of elements 0 .. n-1 of its call: one call for them all
        (privacy.drawing.draw_many finishes and checks them)."""

    # -- draws
    def cdf_rows(self, cond):
        """(the CDFs of cond's rows, capped at 1 and row r's shifted by r, laid end to end;
        each row's last value of positive probability): generate.gum.draw_rows."""

    # -- the polish
    def best_moves(self, X, tabs, offs, ctx):
        """(u, v, gain): each context's best single move (generate.moves.best_moves_of),
        or None where the backend has no body of its own (the array code serves)."""
    def ipf_table(self, p, w, ctx, tables, totals, grid: float, gap_grids):
        """An object whose run() makes one pass of generate.gibbs.fit_conditional's IPF
        on p (in place) and returns the pass's worst TVD as a backend array of one: a
        device's pass in a few launches a target; None where the array code serves."""
    def polish_table(self, X, s, tables, ctx, rank, block_cells: int, tolerance: float):
        """An object whose run() makes one pass of generate.polish.one_pass_masked's moves
        on the table X (in place) and returns the gain as a backend scalar: a device's
        pass in a few launches; None where the array code serves."""

    # -- GUM
    def plan_update(self, s, t, alpha: float):
        """(add, rem) per cell for one GUM update (arrays.plan_update's formulas)."""
    def init_records(self, counts: list, key, call: int) -> list:
        """Column j holds value v counts[j][v] times, in an independent random order."""
    def gum_apply(self, cols, attrs, shape, cell, s, add, rem, dup_frac: float,
                  key, update_id: int, call: int, copy_cols=None) -> None:
        """Remove rem[c] random records of each over cell and refill add[c] slots of each
        under cell (Duplicate or Replace); edits cols in place."""
