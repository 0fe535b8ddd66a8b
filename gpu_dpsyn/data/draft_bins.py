"""The bins a drafted numeric column gets (data.inference): equal widths, or log-spaced
ones where they decode a skewed column clearly better, and a bin of its own for a value
that many records hold.  Read off the private data, as every draft is: NOT private."""
from __future__ import annotations

import numpy as np

from gpu_dpsyn.data.encoding import bin_codes
from gpu_dpsyn.data.types.numeric import significant

LOG_GAIN = 0.5  # log-spaced bins when they halve the decode error of equal widths
ATOM_SHARE = 0.05  # a numeric column's min or max this common gets a bin of its own
# ... and at the min or the max (a top code, zeros), a value this common that is END_SPIKE
# times as common as the other values of its bin: a 1.5% top code had shared the top bin
# with the 7,800 values below it, and no record came out at the top code
END_SHARE, END_SPIKE = 0.005, 10.0


def log_edges(numbers: np.ndarray, edges: list, integer: bool, step: int = 1):
    """Log-spaced edges between the equal-width edges' ends when they fit the values
    clearly better (amounts, counts: right-skewed, often with many zeros); else None.
    Bins are equal in log(x - min + shift), or, over a range holding 0, in
    asinh(x / shift) (signed_edges), the shift 1e-4 .. 1e-1 of the range (integers: at
    least 1); "better" is a decode error at most LOG_GAIN of the equal widths'
    (decode_error).  The draft reads the data anyway; integer columns' edges are rounded
    up to integers, repeats dropped (bins of one integer at the low end); amounts in
    steps of `step` from the first edge, up to that grid (each bin holds a step)."""
    lo, top = float(edges[0]), float(edges[-1])
    if integer and max(abs(lo), abs(top)) > 2.0 ** 52:  # float64 edges would lose the top
        return None
    x = np.sort(np.asarray(numbers, dtype=np.float64))
    best, out = LOG_GAIN * decode_error(x, edges), None
    for f in (1e-4, 1e-3, 1e-2, 1e-1):
        shift = max((top - lo) * f, 1.0) if integer else (top - lo) * f
        e = lo - shift + np.geomspace(shift, top - lo + shift, len(edges))
        for e in (e, signed_edges(lo, top, len(edges), shift)) if lo < 0 < top else (e,):
            e[0], e[-1] = lo, top
            e = (np.unique(np.ceil(e)) if step == 1 else on_grid(e, step)) if integer \
                else np.unique(significant(e, 3))
            err = decode_error(x, e) if len(e) > 2 else np.inf
            if err < best:
                best, out = err, [int(v) if integer else float(v) for v in e]
    return out


def signed_edges(lo: float, top: float, n: int, shift: float) -> np.ndarray:
    """n edges from lo < 0 to top > 0 equal in asinh(x / shift), the inner one nearest 0
    set to 0: log-spaced out from 0 on both sides, for signed amounts whose mass is near
    0 (debits and credits), where log(x - min + shift) is fine at the min only.  With 0
    an edge no bin holds both signs, so a value's sign follows its bin's."""
    e = shift * np.sinh(np.linspace(np.arcsinh(lo / shift), np.arcsinh(top / shift), n))
    e[1 + int(np.argmin(np.abs(e[1:-1])))] = 0.0
    return e


def on_grid(e: np.ndarray, step: int) -> np.ndarray:
    """Edges e with the inner ones rounded up to e[0] + j * step and kept below e[-1]."""
    lo, top = e[0], e[-1]
    inner = lo + step * np.ceil((e[1:-1] - lo) / step)
    return np.unique(np.concatenate([[lo], inner[inner < top], [top]]))


def own_bins(numbers: np.ndarray, edges: list, integer: bool, step: int = 1):
    """(edges, values) giving each value that holds at least ATOM_SHARE of the values (or
    the min or max, END_SHARE and a spike: _end_spike) a
    bin of its own (no hours worked, no income, a top code; a ratio of exactly 1, a
    price of 9.99, a salary of 50,000), so the output holds it exactly and not spread
    over its bin; else None.  Integers: a bin [v, v + step) (amounts in steps: edges on
    their grid, so it holds v alone); decimals: the edge repeated, a bin holding just v
    (schema)."""
    values, counts = np.unique(numbers, return_counts=True)
    atoms = values[counts >= ATOM_SHARE * len(numbers)]
    ends = [i for i in {0, len(values) - 1} if counts[i] < ATOM_SHARE * len(numbers) and
            _end_spike(values, counts, i, edges, len(numbers))]
    atoms = np.unique(np.concatenate([atoms, values[ends]]))
    e, own = list(edges), []
    for v in atoms.tolist():
        v = int(v) if integer else float(v)
        if integer:
            new = [x for x in (v, min(v + step, e[-1])) if x not in e]
            if not new:  # [v, v + step) already
                continue
            e = sorted(e + new)
        else:
            e.insert(int(np.searchsorted(e, v, side="right")), v)
            if e.count(v) < 2:  # not an edge yet: v, v is the bin holding just v
                e.insert(e.index(v), v)
        own.append(v)
    return (e, own) if own else None


def _end_spike(values, counts, i: int, edges, n: int) -> bool:
    """Whether values[i] (the min or the max) holds END_SHARE of the n values and is
    END_SPIKE times as common as the mean of the other values in its bin, per distinct
    value seen: a top code, not the end of a smooth density."""
    if counts[i] < END_SHARE * n:
        return False
    b = bin_codes(np, np.asarray(edges, dtype=np.float64), values.astype(np.float64))
    others = (b == b[i]) & (np.arange(len(values)) != i)
    return not others.any() or counts[i] >= END_SPIKE * counts[others].mean()


def decode_error(x: np.ndarray, edges) -> float:
    """Mean |x - decoded x| when the sorted values x are binned on `edges` and each bin's
    values are replaced by evenly spread points across it, in order: the optimal coupling
    (Wasserstein-1) of each bin's values with the uniform decoding of fit()."""
    e = np.asarray(edges, dtype=np.float64)
    k = bin_codes(np, e, x)  # as encode() bins them
    counts = np.bincount(k, minlength=len(e) - 1)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    i = np.arange(len(x)) - first[k]
    spread = e[k] + (i + 0.5) / counts[k] * (e[k + 1] - e[k])
    return float(np.abs(x - spread).mean())


def shaped(edges) -> bool:
    """Whether drafted edges are not of equal widths (log-spaced, a common value's bin of
    its own): widths past 2.5 times the median, under 1/2.5 of it, or a repeated edge.
    Integers' equal bins differ by one at most, a step's equal-count ones little more."""
    e = [float(x) for x in edges]
    w = sorted(b - a for a, b in zip(e, e[1:]))
    if len(w) < 2:
        return False
    mid = w[len(w) // 2]
    return not (w[0] > 0 and w[-1] <= 2.5 * mid and w[0] >= mid / 2.5)


def kept_shape(edges: list, lo, top, integer: bool, step: int = 1, public=()) -> list:
    """Drafted edges over the public range [lo, top] (top: the top edge; an integer
    column's max + 1): the drafted edges strictly inside it kept (a common value's bin of
    its own, the log spacing), the new ends added, a repeated end (a decimal's bin
    holding just it) kept repeated; integers on their step's grid from lo.  A range past
    the drafted one gets one bin more there (the drafted end stays an edge): the log
    spacing continued was no clear gain (docs/schema.md), with more bins of noise.
    public: ends set before, no drafted edges: not kept once the range moves past them."""
    e = [float(x) for x in edges]
    was = {float(v) for v in public if e.count(float(v)) == 1}
    inner = [x for x in e if lo < x < top and x not in was]
    head = [lo] * (2 if not integer and e.count(lo) > 1 else 1)
    tail = [top] * (2 if not integer and e.count(top) > 1 else 1)
    out = np.asarray(head + inner + tail, dtype=np.float64)
    if integer:
        out = on_grid(out, step) if step > 1 else np.unique(np.ceil(out))
    return [int(v) if integer else float(v) for v in out]
