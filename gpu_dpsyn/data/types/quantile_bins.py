"""Private quantile bins: `"bins": {"private_quantiles": K}` on a numeric column.

What the schema holds is public: the range [min, max], the number of bins K and a fine
grid of cells between min and max.  The K bins themselves are unions of consecutive grid
cells chosen at fit time from a noisy histogram on the grid (quantiles.py, charged to the
budget).  Until then the column carries placeholder edges: K bins of (nearly) equal grid
count, an upper bound on the bins the fit can choose, so domain checks made before
anything is measured hold for the chosen bins too.

Grid (default 1024 cells, `"grid": G`): the min and the max each a cell of its own (an
integer's [max, max + 1), a decimal's [max, max]: ATOMS), so a top code or a pile of
zeros at a public end is measured as a value, not spread over a cell of hundreds of
values (a 9% top code came out at 0.005%); the other G - 2 cells equal width between
them, or log-spaced when min > 0 (`"spacing": "auto"`, the default; `"linear"` or `"log"`
to choose), so a right-skewed positive column (wages, prices) gets fine cells where its
mass is.  Integer
columns round the grid's edges up to integers and drop repeats (every cell holds an
integer); with a `"support"` the grid splits the support values into G groups of equal
count (every cell holds a support value).  Either way any union of grid cells is a valid
bin, so no choice of the mechanism can make a bin that decodes to nothing.
"""
from __future__ import annotations

from gpu_dpsyn.data.text import shown  # noqa: F401 (capped values in messages)

from dataclasses import dataclass

import numpy as np

from gpu_dpsyn.errors import SchemaError
from gpu_dpsyn.data.types.support import default_edges, parse_support

DEFAULT_GRID = 1024
MAX_GRID = 1 << 16  # codes per column (schema.MAX_COLUMN_DOMAIN)
SPACINGS = ("auto", "linear", "log")
_KEYS = {"private_quantiles", "grid", "spacing"}


@dataclass(frozen=True)
class PrivateQuantiles:
    k: int  # bins asked for (the fit may choose fewer: repeated edges are merged)
    grid: tuple  # the grid's edges in value units (integer columns: half-open, last hi + 1)
    lo: float  # the schema's min and max as written
    hi: float
    spec: dict  # the "bins" object as written, for Schema.to_dict
    atoms: bool = False  # grid cells 0 and -1 hold just the min and the max (ATOMS)

    @property
    def cells(self) -> int:
        return len(self.grid) - 1

    def placeholder(self) -> list:
        """K bins of (nearly) equal grid count: the domain bound used before the fit."""
        idx = [-((-j * self.cells) // self.k) for j in range(self.k + 1)]
        return [self.grid[i] for i in idx]


def is_private(spec: dict) -> bool:
    return isinstance(spec.get("bins"), dict)


def parse(name: str, spec: dict, lo, hi, integer: bool) -> PrivateQuantiles:
    """The column's private-quantile spec; lo, hi: its checked range (integers: rounded
    inwards).  Every refusal is a SchemaError, raised when the schema loads."""
    bins = spec["bins"]
    if "edges" in spec:
        raise SchemaError(f"column {shown(name)}: give either 'edges' or \"bins\": "
                          "{\"private_quantiles\": K}, not both")
    unknown = sorted(set(bins) - _KEYS)
    if unknown or "private_quantiles" not in bins:
        raise SchemaError(f"column {shown(name)}: 'bins' must be a number or an object "
                          f"{{\"private_quantiles\": K[, \"grid\": G, \"spacing\": "
                          f"\"auto\"|\"linear\"|\"log\"]}}, got {bins!r}")
    k, g = bins["private_quantiles"], bins.get("grid", DEFAULT_GRID)
    spacing = bins.get("spacing", "auto")
    if not _is_int(k) or k < 2:
        raise SchemaError(f"column {shown(name)}: private_quantiles must be an integer >= 2 "
                          f"(the number of bins), got {k!r}")
    if not _is_int(g) or not 2 <= g <= MAX_GRID:
        raise SchemaError(f"column {shown(name)}: 'grid' must be an integer in [2, {MAX_GRID}], "
                          f"got {g!r}")
    if spacing not in SPACINGS:
        raise SchemaError(f"column {shown(name)}: 'spacing' must be one of {SPACINGS}, got "
                          f"{spacing!r}")
    if spacing == "log" and not lo > 0:
        raise SchemaError(f"column {shown(name)}: a log-spaced grid needs 'min' > 0, got {lo}")
    support = spec.get("support")
    if support is not None and spacing != "auto":
        raise SchemaError(f"column {shown(name)}: with a 'support' the grid groups its values; "
                          "drop 'spacing'")
    log = spacing == "log" or (spacing == "auto" and lo > 0)
    if support is not None:
        grid = default_edges(parse_support(name, support, lo, hi), lo, hi, g)
    elif integer:
        grid = _integer_grid(lo, hi, g, log)
    else:
        grid = _float_grid(lo, hi, g, log)
    if k > len(grid) - 1:
        raise SchemaError(f"column {shown(name)}: private_quantiles={k} bins need at least {k} "
                          f"grid cells, the grid has {len(grid) - 1}; ask for fewer bins")
    atoms = support is None and g >= 4 and (hi - lo >= 3 if integer else lo < hi)
    return PrivateQuantiles(int(k), tuple(grid), spec.get("min"), spec.get("max"), dict(bins),
                            atoms)


def check_chosen(columns, chosen: dict, source: str) -> None:
    """Refuse `chosen` (a ledger's private_bins: name -> edges) where a fit of these schema
    columns could not have chosen it (a SchemaError naming `source`): bins from another
    run or schema would score on another range."""
    why = _mismatch(columns, chosen)
    if why is not None:
        raise SchemaError(f"{source}: its private bins are not ones a fit of this schema "
                          f"chose ({why}): give the ledger of the run that wrote the "
                          "synthetic table, and its schema")


def _mismatch(columns, chosen: dict) -> str | None:
    """Why `chosen` is not what a fit could have chosen, or None.  The fit picks, for each
    column asking for private bins, at most K bins whose edges are edges of its grid, the
    grid's ends its outer ones."""
    asked = {c.name: c.private for c in columns if c.private is not None}
    numeric = {c.name for c in columns if c.kind == "numeric"}
    stray = next((n for n in chosen if n not in numeric), None)
    if stray is not None:
        return f"they name {shown(stray)}, no numeric column of the schema"
    for name, pq in asked.items():
        edges = chosen.get(name)
        why = "there are none" if edges is None else \
            f"they run {edges[0]:g} to {edges[-1]:g}, its grid {pq.grid[0]:g} to " \
            f"{pq.grid[-1]:g}" if (edges[0], edges[-1]) != (pq.grid[0], pq.grid[-1]) else \
            f"{len(edges) - 1} bins, where {pq.k} are asked for" if len(edges) - 1 > pq.k \
            else next((f"{e:g} is no edge of its grid" for e in edges
                       if e not in set(pq.grid)), None)
        if why is not None:
            return f"{shown(name)}: {why}"
    return None


def _integer_grid(lo: int, hi: int, g: int, log: bool) -> list:
    if g >= 4 and hi - lo >= 3:  # min and max cells of their own (ATOMS), the rest between
        # (as parse's `atoms` says)
        return [lo] + _integer_cells(lo + 1, hi, g - 2, log) + [hi + 1]
    return _integer_cells(lo, hi + 1, g, log)


def _integer_cells(lo: int, top: int, g: int, log: bool) -> list:
    """g cells (repeats dropped) of integers from lo up to top (excluded)."""
    if log:  # (in floats: a range past int64 is refused after, by the range's own check)
        e = np.ceil(np.geomspace(float(lo), float(top), g + 1))
    else:  # the integer rule of schema._numeric_edges: cells of floor/ceil(span / g)
        span = top - lo
        e = np.array([lo + -((-j * span) // g) for j in range(g + 1)], dtype=np.float64)
    e[0], e[-1] = lo, top  # geomspace may round its ends
    return [int(x) for x in np.unique(e)]


def _float_grid(lo: float, hi: float, g: int, log: bool) -> list:
    e = np.geomspace(lo, hi, g - 1) if log else np.linspace(lo, hi, g - 1)
    if g < 4 or not lo < hi:
        e = np.geomspace(lo, hi, g + 1) if log else np.linspace(lo, hi, g + 1)
    e[0], e[-1] = lo, hi
    e = [float(x) for x in np.unique(e)]  # a range near float64's resolution repeats
    return [lo] + e + [hi] if g >= 4 and lo < hi else e  # [lo, lo], [hi, hi]: ATOMS


def _is_int(v) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


@dataclass(frozen=True, eq=False)
class Within:
    """Where the mass lies inside each chosen bin: the fitted noisy cumulative count at
    every grid edge (a DP output).  Decoding draws from it, the inverse of the piecewise-
    linear CDF through those points, instead of uniformly over the bin: a top bin that
    runs from the 97th percentile to a public max far out would otherwise spread its
    records over an empty tail."""
    grid: np.ndarray  # float64 grid edges
    cum: np.ndarray  # float64, non-decreasing, cum[0] = 0
    cuts: np.ndarray  # int64 grid index of each chosen edge

    def draw(self, codes, u, integer: bool) -> np.ndarray:
        """A value inside each code's bin for uniforms u in [0, 1); the null code (one past
        the last bin) gets a placeholder."""
        b = np.minimum(codes.astype(np.int64), len(self.cuts) - 2)
        lo, hi = self.cuts[b], self.cuts[b + 1]
        c_lo, c_hi = self.cum[lo], self.cum[hi]
        t = c_lo + u * (c_hi - c_lo)  # the target cumulative count
        j = np.clip(np.searchsorted(self.cum, t, side="right") - 1, lo, hi - 1)
        mass = self.cum[j + 1] - self.cum[j]
        frac = np.where(mass > 0, (t - self.cum[j]) / np.where(mass > 0, mass, 1.0), u)
        x = self.grid[j] + frac * (self.grid[j + 1] - self.grid[j])
        # a bin the fit left empty: uniform over it, as without this
        x = np.where(c_hi > c_lo, x, self.grid[lo] + u * (self.grid[hi] - self.grid[lo]))
        if integer:  # integer grid edges, the last one past the maximum
            x = np.minimum(np.floor(x), self.grid[hi] - 1)
        return x
