"""Private quantile bins: bin edges of skewed numeric columns bought with a share of the budget.

A column that asks for `"bins": {"private_quantiles": K}` (types/quantile_bins.py) is
encoded on its public fine grid of G cells.  Before any marginal is measured, fit() spends
a small share of the budget on each such column (`quantile_share`, 5% by default, split
equally, Synthesizer's parameter) and:

1. charges the share to the accountant (label "quantiles", G cells), then histograms the
   column's grid codes (missing values are not counted);
2. adds exact discrete Gaussian noise (or discrete Laplace, in a Laplace run) to every
   cell, drawn with `draw` under the run's noise key on stream rng.QUANTILE, call = the
   charge's ledger index;
3. from here on post-processing only: the noisy cumulative counts C_1..C_G (C_0 = 0) are
   replaced by their least-squares non-decreasing fit (isotonic regression, pool adjacent
   violators), clipped at 0, and edge k goes to the grid boundary whose fitted cumulative
   count is nearest k/K of the fitted total; repeated edges are merged, so every bin holds
   at least one grid cell (and up to K bins remain), min and max stay the outer edges.
   The noise in C_j is a random walk with no bias.  Making the cells non-negative
   first would add bias instead: clipping or projecting (norm_sub) keeps the positive
   noise of the empty cells and drags the upper quantiles into an empty tail.  Simulated
   on log-normal wages (1024 log-spaced cells, sigma 25, K = 32), the bins' mass missed
   1/K by 0.28 in total (L1) with norm_sub and 0.14 with the isotonic fit at 20,000 rows;
   0.10 against 0.05 at 28,000 rows and sigma 12.
   The fitted counts also shape decoding inside each bin (quantile_bins.Within), the
   outer bins' insides as thinning tails (shaped_tails): a top bin that reaches a far
   public max is not filled uniformly, nor by its empty cells' noise, up to it.
4. where the noise would place the edges (lost_in_noise: its sd at the middle edge passes
   a bin's noisy mass), the bins are laid out from the public grid instead (public_cuts),
   decoded as plain bins are (no noisy inner shape), with a warning.

Sensitivity: adding or removing one individual's D records changes the grid histogram by
D in L1 and at most D in L2 (all D in one cell), the same as any marginal: the
accountant's default per-record sensitivities, times D.

Why a histogram and not per-quantile mechanisms (exponential mechanism, JointExp):
one measurement answers all K quantiles at the cost of one, its noise comes from the exact
integer samplers every other measurement uses (an exponential mechanism over real
intervals needs floating-point sampling that the guarantee would have to trust), and it
composes in zCDP with the rest of the plan.  Its error at an edge is a cumulative noise of
about sigma * sqrt(cells before it), small next to the counts of any table worth binning.
(A tree of histograms, Hay et al. 2010, cut that error by a third at 2,000 rows in the same
simulation and by under a fifth from 20,000 rows: not worth its code here.)
"""
from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.types import code_dtype
from gpu_dpsyn.errors import ParameterError
from gpu_dpsyn.privacy.drawing import draw
from gpu_dpsyn.data.schema import Schema
from gpu_dpsyn.data.types.quantile_bins import Within

_SHARE_QUANTUM = 2.0 ** -30  # shares are multiples of this, so the rest is exact in floats


def private_columns(schema: Schema) -> list:
    """(index among the synthesized columns, column) of each column whose bins are pending."""
    return [(a, c) for a, c in enumerate(schema.synth_columns) if c.private is not None]


def grid_schema(schema: Schema) -> Schema | None:
    """The schema with every pending column on its fine grid (None: no such column): what
    the private table is encoded (and checked) with, before anything is charged."""
    cols = private_columns(schema)
    if not cols:
        return None
    return schema.with_edges({c.name: c.private.grid for _, c in cols})


def split(schema: Schema, share: float) -> tuple[list, float]:
    """(budget fraction of each pending column, fraction left for the marginals).  The
    columns' fractions are share / m rounded down to a multiple of 2^-30: then m of them
    and the rest are exact floats that sum to 1 exactly, and a schema without pending
    columns leaves the plan's fractions untouched (rest 1.0)."""
    m = len(private_columns(schema))
    if m == 0:
        return [], 1.0
    f = math.floor(share / m / _SHARE_QUANTUM) * _SHARE_QUANTUM
    if f <= 0:
        raise ParameterError(f"quantile_share={share} split over {m} private-quantile "
                             "columns leaves nothing for each; use a larger share")
    return [f] * m, 1.0 - m * f


def isotonic(y) -> np.ndarray:
    """The non-decreasing sequence nearest y in least squares (pool adjacent violators:
    a block that falls below its predecessor merges with it into their mean)."""
    means, sizes = [], []
    for v in np.asarray(y, dtype=np.float64).tolist():
        m, w = v, 1
        while means and means[-1] > m:
            m = (means[-1] * sizes[-1] + m * w) / (sizes[-1] + w)
            w += sizes.pop()
            means.pop()
        means.append(m)
        sizes.append(w)
    return np.repeat(np.asarray(means), sizes)


def cumulative(noisy) -> np.ndarray:
    """cum[i], the fitted count left of grid boundary i (cum[0] = 0): non-decreasing,
    non-negative, from a noisy histogram (post-processing only)."""
    fit = np.maximum(isotonic(np.cumsum(np.asarray(noisy, dtype=np.float64))), 0.0)
    return np.concatenate([[0.0], fit])


def quantile_cuts(noisy, k: int) -> list[int]:
    """Grid indices 0 = i_0 < i_1 < ... < i_m = G (m <= k) of the bin edges read off a
    noisy histogram over G cells (post-processing only)."""
    return _cuts(cumulative(noisy), k)


def _cuts(cum: np.ndarray, k: int) -> list[int]:
    g = len(cum) - 1
    if cum[-1] <= 0:  # the noise hid everything: equal grid counts, data independent
        inner = [-((-j * g) // k) for j in range(1, k)]
    else:  # cum[j - 1] < q <= cum[j], 1 <= j <= g: the nearest boundary
        inner = _nearest(cum, cum[-1] * np.arange(1, k) / k)
    return _with_ends(inner, g)


def _nearest(sorted_x: np.ndarray, want: np.ndarray) -> np.ndarray:
    """The index of each wanted value's nearest entry of sorted_x (ties: the lower)."""
    at = np.clip(np.searchsorted(sorted_x, want), 1, len(sorted_x) - 1)
    return np.where(want - sorted_x[at - 1] <= sorted_x[at] - want, at - 1, at)


def _with_ends(inner, g: int) -> list[int]:
    """Cut indices 0, the inner ones once each in order, g."""
    return [0] + sorted({int(i) for i in inner} - {0, g}) + [g]


def lost_in_noise(total: float, sigma: float, g: int, k: int) -> bool:
    """Whether the noise of the cumulative count at the middle edge (sigma * sqrt(g / 2):
    the sum of the noise of the cells before it) passes one bin's mass (total / k): the
    edges then fall where the noise puts them (a small table, a large bound on records a
    person, a fine grid), not at the quantiles.  From noisy values: post-processing."""
    return sigma * math.sqrt(g / 2) > max(total, 0.0) / k


LOG_SHIFT = 0.01  # of the range: public_cuts' log spacing, as draft_bins' finest


def public_cuts(grid, k: int, atoms: bool = False) -> list[int]:
    """Grid indices of k bins laid out from the public grid alone, as its "auto" spacing
    is: log-spaced from a min above 0, from 0 in log(x + shift) (the shift a hundredth
    of the range: an amount, a duration), else equal widths; each edge the nearest grid
    edge, repeats merged.  atoms: the grid's end cells hold just its min and max
    (quantile_bins), each kept a bin (a top code), k - 2 bins between them."""
    grid = np.asarray(grid, dtype=np.float64)
    if atoms and k >= 3 and len(grid) > 3:
        inner = public_cuts(grid, k - 2)[1:-1]
        g = len(grid) - 1
        return _with_ends([1, g - 1] + [min(max(i, 1), g - 1) for i in inner], g)
    lo, hi = grid[0], grid[-1]
    if lo > 0:  # as the grid's "auto": log from min (birth years: nearly even)
        want = np.geomspace(lo, hi, k + 1)
    elif lo == 0:  # an amount or a duration from 0
        shift = (hi - lo) * LOG_SHIFT
        want = lo - shift + np.geomspace(shift, hi - lo + shift, k + 1)
    else:
        want = np.linspace(lo, hi, k + 1)
    return _with_ends(_nearest(grid, want), len(grid) - 1)


# a cell this many noise sigmas high is a value of its own (a top code, a round number)
SPIKE_SIGMAS = 4.0
# a block of an outer bin's monotone fit holds mass only this many of its noise sigmas up
BLOCK_SIGMAS = 2.0


def shaped_tails(cum, noisy, cuts, sigma: float) -> np.ndarray:
    """The fitted cumulative counts with the outer bins' insides reshaped (for decoding
    only: the edges and every bin's total stay).  The top bin of a skewed column runs
    from a high quantile to a far public max over hundreds of grid cells, almost all
    empty: there the cumulative fit follows the random walk of their noise, about the
    bin's own mass at a small budget, and decoding put a large share of its records in
    the empty tail (1-2% of all wages past three times the 99th percentile, on CPS1988 at
    eps 1).  So the top bin's cells get a non-increasing density and the bottom bin's a
    non-decreasing one (tails thin out away from the body), each fitted by pool adjacent
    violators, a block kept only where its mean stands BLOCK_SIGMAS of its own noise
    (sigma / sqrt(cells)) above 0, and a cell SPIKE_SIGMAS above the noise kept as it is
    (a top-coded value).  A bin left with nothing keeps its fitted shape."""
    out = np.diff(cum)
    outer = [(cuts[-2], cuts[-1], True)] + ([(cuts[0], cuts[1], False)] if len(cuts) > 2
                                              else [])
    for lo, hi, falling in outer:
        y = np.asarray(noisy[lo:hi], dtype=np.float64)
        spike = y > SPIKE_SIGMAS * sigma
        fit = np.where(spike, y, 0.0)
        body = y[~spike]
        if len(body):
            fit[~spike] = _significant(body[::-1] if falling else body, sigma)[
                ::-1 if falling else 1]
        total = cum[hi] - cum[lo]
        if fit.sum() > 0 and total > 0:
            out[lo:hi] = fit * (total / fit.sum())
    return np.concatenate([[0.0], np.cumsum(out)])


def _significant(y, sigma: float) -> np.ndarray:
    """isotonic(y), each block set to 0 unless its mean m over w cells has
    m > BLOCK_SIGMAS * sigma / sqrt(w); then clipped at 0."""
    fit = isotonic(y)
    starts = np.flatnonzero(np.r_[True, fit[1:] != fit[:-1]])
    sizes = np.diff(np.r_[starts, len(fit)])
    keep = fit[starts] * np.sqrt(sizes) > BLOCK_SIGMAS * sigma
    return np.maximum(np.repeat(np.where(keep, fit[starts], 0.0), sizes), 0.0)


@dataclass
class Binning:
    """The chosen bins: the schema that carries them, and grid code -> bin code tables."""
    schema: Schema
    edges: dict  # column name -> chosen edges (DP outputs, fine to publish)
    luts: dict  # synthesized column index -> int64 table indexed by grid code

    def recodes(self) -> dict:
        """Per column, grid code -> bin code as a recode a counts source applies (on every
        partition of a distributed one); exact: every chosen edge is a grid edge."""
        return {a: GridRecode(lut, code_dtype(self.schema.synth_columns[a].size))
                for a, lut in self.luts.items()}

    def remap(self, xp, codes: list) -> list:
        """Grid codes to bin codes, for code arrays held here (the public table)."""
        out = list(codes)
        for a, r in self.recodes().items():
            out[a] = r.apply(xp, codes[a])
        return out


@dataclass
class GridRecode:
    lut: np.ndarray
    dtype: np.dtype

    def apply(self, xp, codes):
        return xp.ascontiguousarray(xp.asarray(self.lut)[codes].astype(self.dtype))


def choose_bins(backend, counts, schema: Schema, fractions: list, accountant,
                key) -> Binning:
    """Charge, measure and choose every pending column's bins.  counts: a counts source
    (marginals.LocalCounts, or a distributed one) of the table encoded with
    grid_schema(schema) (bounded to D records per individual); key: the noise key."""
    edges, luts, within = {}, {}, {}
    for (a, col), f in zip(private_columns(schema), fractions):
        pq = col.private
        g = pq.cells
        entry = accountant.charge(f, "quantiles", [col.name], g)  # before the data is read
        exact = next(iter(counts.histograms([((a,), (g + col.nullable,))])))[:g]
        noise = draw(backend, entry.noise, g, key, rng.QUANTILE, len(accountant.ledger) - 1)
        noisy = exact.astype(np.float64) + noise
        cum = cumulative(noisy)
        lost = lost_in_noise(cum[-1], entry.sigma, g, pq.k)
        cuts = public_cuts(pq.grid, pq.k, pq.atoms) if lost else _cuts(cum, pq.k)
        edges[col.name] = [pq.grid[i] for i in cuts]
        if lost:  # decoded as plain bins: the noisy shape inside is noise too
            warnings.warn(
                f"column {col.name!r}: its private quantile bins would be placed by the "
                f"noise (noise about {entry.sigma * math.sqrt(g / 2):,.0f} records at the "
                f"middle edge, against about {max(cum[-1], 0) / pq.k:,.0f} a bin), so its "
                f"{len(cuts) - 1} bins are spaced from the public range instead "
                f"({'log-spaced' if pq.grid[0] >= 0 else 'equal widths'}); a coarser "
                "\"grid\", fewer bins or a larger quantile_share would let the data place "
                "them", UserWarning, stacklevel=2)
        elif col.support is None:  # support columns decode among their values, uniformly
            within[col.name] = Within(np.asarray(pq.grid, dtype=np.float64),
                                      shaped_tails(cum, noisy, cuts, entry.sigma),
                                      np.asarray(cuts, dtype=np.int64))
        bins = len(cuts) - 1
        lut = np.searchsorted(np.asarray(cuts[1:-1]), np.arange(g), side="right")
        luts[a] = np.append(lut, bins).astype(np.int64) if col.nullable else lut.astype(np.int64)
    return Binning(schema.with_edges(edges, within), edges, luts)
