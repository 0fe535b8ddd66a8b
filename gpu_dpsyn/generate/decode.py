"""Codes back to a table: each value drawn inside its code's bin with the
post-processing RNG, dtypes from the schema alone."""
from __future__ import annotations

import numpy as np
import pandas as pd

from gpu_dpsyn.core import rng
from gpu_dpsyn.core.philox import philox4x32, uniform
from gpu_dpsyn.data.dtypes import as_numbers, output_dtype
from gpu_dpsyn.data.encoding import categorical_lut
from gpu_dpsyn.data.schema import Column, Schema
from gpu_dpsyn.data.types import datetime, gap, support, time_of_day


def _decode_numeric(codes, col: Column, u, midpoint: bool, xp=np, count=None):
    """A value inside each code's bin.  Per-bin tables first (on the host), then one
    gather each: at 10^7 rows per-element edge arithmetic was most of decode's time.
    The table entry for the null code is a placeholder (the caller writes NaN there).
    xp: where codes, u and the values live (NumPy, or CuPy for on_device's columns).
    count(): the codes' histogram (bins, then the null code) on the host, for bin_shape,
    called only where the bins are shaped (default: NumPy's bincount)."""
    edges = np.asarray(col.edges, dtype=np.float64)
    if col.within is not None and not midpoint:  # private bins: their noisy inner shape
        x = col.within.draw(codes, u, col.integer)
        return x if col.integer else at_precision(x, codes, edges, decimals=col.decimals)
    if col.integer:
        lo, top = col.integer_bins()
        if col.support is not None:  # only the support's values, never between them
            return support.draw(col.support, _table(lo), _table(top), codes, u, midpoint, xp)
        width = np.maximum(top - lo, 1.0)  # top: exclusive upper bound
        if midpoint:
            return _table(lo + np.floor((width - 1) / 2), xp)[codes]
        # a bin of one integer is a value's own, as a decimal's repeated edge: no shape
        x = _shaped(u, codes, lo, np.where(top - lo <= 1, 0.0, width), count, xp)
        return _table(lo, xp)[codes] + xp.floor(x * _table(width, xp)[codes])
    lo, hi = edges[:-1], edges[1:]
    if midpoint:
        return _table((lo + hi) / 2, xp)[codes]
    x = _shaped(u, codes, lo, hi - lo, count, xp)
    return at_precision(_table(lo, xp)[codes] + x * _table(hi - lo, xp)[codes], codes, edges,
                        xp, col.decimals)


def _shaped(u, codes, lo, width, count, xp):
    """Each record's place in its bin (0..1): u through its bin's shape (bin_shape) from
    the codes' histogram (count(), else NumPy's)."""
    counts = count() if count is not None else np.bincount(
        np.asarray(codes, dtype=np.intp), minlength=len(lo) + 1)
    return inside(u, _table(bin_shape(lo, width, np.asarray(counts[:len(lo)], np.float64)),
                            xp)[codes], xp)


def bin_shape(lo, width, counts) -> np.ndarray:
    """Per bin, l in [0, 2]: its density at its low end over its mean (2 - l at its high
    end), for a linear density inside each bin whose slope follows the bins' densities
    counts / width: the monotonized central difference of the neighbours' (van Leer's
    limiter: 0 at a peak or a trough, at most twice either one-sided slope; a bin at an
    end of the range takes its one slope only where the density falls towards that end),
    so a falling tail decodes thinning towards each bin's top, not evenly.  A bin with no
    records or of width 0 (one value: the caller gives an integer's one-value bins width
    0), or with no neighbour of positive width, is flat (l = 1), as is one whose density
    overflows (a range of 1e-300), and a bin of width 0 gives no neighbour a slope.  From
    the released codes' histogram: the Wasserstein-1 distance of numeric columns to the
    real ones fell 0.071 -> 0.059 standard deviations at eps 1 (37 columns of 10 tables,
    lower in 26) and 0.095 -> 0.076 at eps 8 (bench/experiments/bin_shape).  Host float64
    from whole counts: both backends get the same table."""
    with np.errstate(all="ignore"):  # bins too narrow for their densities (0 .. 1e-300)
        lo, w, n = (np.asarray(x, dtype=np.float64) for x in (lo, width, counts))
        ok = w > 0
        d = np.where(ok, n / np.where(ok, w, 1.0), 0.0)
        c = lo + w / 2
        step = np.full(len(w), np.nan)  # the slope from bin k - 1 to bin k
        both = ok[1:] & ok[:-1]
        step[1:][both] = (d[1:] - d[:-1])[both] / (c[1:] - c[:-1])[both]
        left, right = step, np.append(step[1:], np.nan)
        # a bin with one neighbour (the range's ends): its slope only where the density
        # falls towards the end (a tail thinning out), else flat, as past the end is none
        outward = np.where(np.isnan(left), -right, np.where(np.isnan(right), left, np.nan))
        one = np.where(outward < 0, np.where(np.isnan(left), right, left), 0.0)
        left = np.where(np.isnan(left), one, left)
        right = np.where(np.isnan(right), one, right)
        mean = (left + right) / 2
        s = np.where(left * right > 0, np.sign(mean) * np.minimum(
            np.abs(mean), 2 * np.minimum(np.abs(left), np.abs(right))), 0.0)
        flat = ~ok | (d <= 0)
        l = np.clip((d - s * w / 2) / np.where(flat, 1.0, d), 0.0, 2.0)
    return np.where(flat | ~np.isfinite(l), 1.0, l)  # overflowed: drawn evenly


def inside(u, l, xp=np):
    """The place x in [0, 1] with G(x) = u for the linear density l + (2 - 2l) x (G(x) =
    l x + (1 - l) x^2), written 2u / (l + sqrt(l^2 + 4 (1 - l) u)): stable at l = 0 and 2,
    exactly u where l = 1 (a flat bin draws as evenly did).  One correctly rounded
    operation a step (no fused multiply-add), so NumPy and CuPy give the same bits."""
    root = xp.sqrt(l * l + 4.0 * (1.0 - l) * u)
    return (2.0 * u) / (l + root)


def on_device(col: Column, midpoint: bool) -> bool:
    """Whether a GPU run decodes this column on the device (decode_numeric_on): numeric
    columns, but for private bins' inner shapes (drawn on the host)."""
    return col.kind == "numeric" and (col.within is None or midpoint)


def decode_numeric_on(backend, codes, col: Column, j: int, key, call: int,
                      midpoint: bool) -> np.ndarray:
    """Column j (schema order) decoded where its codes are, on the backend, with its
    nulls NaN, as a host float64 array: the same draws (uniform(philox(i, j, DECODE,
    call).w0)) and the same float64 steps as decode's, so the same values; a GPU copies
    the decoded values only (at 10^7 rows the host's gathers and arithmetic were half of
    decode's 9 s)."""
    xp = backend.xp
    u = None if midpoint else backend.uniforms(key, len(codes), j, rng.DECODE, call)
    x = _decode_numeric(codes, col, u, midpoint, xp, lambda: backend.to_numpy(
        backend.histograms([codes], [((0,), (col.bins + 1,))])))  # one read, if shaped
    if col.nullable:
        x = xp.where(codes == col.null_code, xp.nan, x)
    return backend.to_numpy(x)


SIGNIFICANT = 3  # digits of a bin's width that a decoded decimal keeps


def at_precision(x, codes, edges: np.ndarray, xp=np, decimals: int | None = None):
    """Decimals drawn inside their bins, written at a thousandth of the bin's width or
    finer (three significant digits of it: 0.21875 wide, four decimals) instead of the 17
    digits of a float64 draw, and kept inside the bin [lo, hi): at least 999 values a
    bin, each the nearest float64 to a short decimal.  With the column's "decimals", to
    that many places in every bin that holds a value of them (the data's own precision).
    A bin holding one value (a repeated edge) keeps it; the top bin reaches its max."""
    lo, hi = edges[:-1], edges[1:]
    width = hi - lo
    digits = np.where(width > 0, SIGNIFICANT - np.floor(np.log10(np.where(width > 0, width,
                                                                           1.0))), 0)
    if decimals is not None:  # where a value of that many places lies in the bin
        room = np.ceil(lo * 10.0 ** decimals) < hi * 10.0 ** decimals
        digits = np.where(room, decimals, digits)
    scale = _table(10.0 ** np.clip(digits, -300, 300), xp)[codes]  # 10^d: exact, d <= 22
    lo_c, hi_c = _table(lo, xp)[codes], _table(hi, xp)[codes]
    top = codes == len(edges) - 2  # the top bin is closed: the column's max is one of its
    r = xp.rint(x * scale) / scale  # values (a GPA of 4.00 never came out, 3.99 twice)
    r = xp.where(r < lo_c, xp.ceil(lo_c * scale) / scale, r)
    r = xp.where(top & (r > hi_c), xp.floor(hi_c * scale) / scale, r)
    r = xp.where(~top & (r >= hi_c), (xp.ceil(hi_c * scale) - 1) / scale, r)
    inside = (r >= lo_c) & ((r < hi_c) | (top & (r <= hi_c)))  # (a product rounded past
    return xp.where((_table(width, xp)[codes] > 0) & inside, r, x)  # an edge: the draw)


def _table(per_bin: np.ndarray, xp=np):
    """The per-bin table with one more entry for the null code (codes go up to bins), on
    xp."""
    return xp.asarray(np.append(per_bin, per_bin[-1]))


def _draws(uniforms, key, j: int, n: int, call: int) -> np.ndarray:
    """Column j's n decode draws: from the backend, or the same numbers in NumPy."""
    if uniforms is not None:
        return uniforms(j, n)
    return uniform(philox4x32(key, np.arange(n, dtype=np.uint64), j, rng.DECODE, call)[0])


def decode(codes: list, schema: Schema, seed: int = 0, call: int = 0,
           numeric_decode: str = "uniform", uniforms=None, decoded=None) -> pd.DataFrame:
    """Codes back to a DataFrame in the schema's column order, dtypes from the schema only
    (dtypes.output_dtype).  uniforms(j, n): the n draws for column j,
    uniform(philox(i, j, DECODE, call).w0); a backend computes the same numbers faster
    (default: NumPy).  decoded: {schema index j: column j's values, nulls NaN}, decoded
    already (decode_numeric_on); its entry of codes is not read."""
    decoded = decoded or {}
    key = rng.split_key(seed)
    n = len(next(iter(decoded.values()))) if decoded else len(codes[0]) if codes else 0
    out, times = {}, {}  # times: datetime columns as datetimes (derived date parts read
    # them; a column with a "format" is output as text)
    epochs, after = {}, []  # datetime columns' (epochs, missing); columns after another
    it = iter(codes)
    hidden = {c.time_of: j for j, c in time_of_day.synth(schema.columns) if c.time_of}
    for j, col in enumerate(schema.columns):
        want = output_dtype(col)
        if col.kind == "derived":
            continue  # from its decoded source, below
        if col.kind == "id":
            out[col.name] = pd.Series(np.arange(1, n + 1, dtype=np.int64), name=col.name,
                                      dtype=want)
            continue
        c = next(it)
        h = next(it) if col.name in hidden else None  # (its hidden time of day: taken here,
        if j in decoded:  # whatever decodes the column, so later ones keep their codes)
            out[col.name] = pd.Series(as_numbers(decoded[j], col, want), name=col.name,
                                      dtype=want)
            continue
        c = np.asarray(c)
        if col.kind == "categorical":
            x = categorical_lut(col, want).array.take(c.astype(np.intp))
        elif col.kind == "datetime":
            mid = numeric_decode == "midpoint"
            if col.name in hidden:  # a day in the bin, a time in its time of day's bin
                h, jh = np.asarray(h), hidden[col.name]
                x = time_of_day.draw(col, c, h, *(None, None) if mid else (
                    _draws(uniforms, key, j, n, call), _draws(uniforms, key, jh, n, call)))
            else:
                u = None if col.time.calendar else _draws(uniforms, key, j, n, call)
                x = datetime.draw(col, c, u, mid)
            null = c == col.null_code if col.nullable else np.zeros(n, bool)
            if col.time.after is not None:  # a gap: added to its start, below
                after.append((col, x, null, want))
                continue
            epochs[col.name] = (x, null)
            times[col.name] = datetime.from_epoch(x, null, col)
            x = datetime.as_output(times[col.name], col, want).array
        else:
            u = _draws(uniforms, key, j, n, call)
            x = _decode_numeric(c, col, u, numeric_decode == "midpoint")
            if col.nullable:
                x[c == col.null_code] = np.nan
            x = as_numbers(x, col, want)
        # the dtype given up front: inferring one from 10^7 objects first costs seconds
        out[col.name] = pd.Series(x, name=col.name, dtype=want)
    drawn = {col.name: rest for col, *rest in after}
    for col in gap.order(schema.columns):  # a chain's start before its end
        g, null, want = drawn[col.name]
        x, null = gap.decode(*epochs[col.time.after.column], g, null, col, *col.time.bounds)
        epochs[col.name] = (x, null)
        times[col.name] = datetime.from_epoch(x, null, col)
        out[col.name] = pd.Series(datetime.as_output(times[col.name], col, want).array,
                                  name=col.name, dtype=want)
    for col in schema.columns:
        if col.kind == "derived":
            x = col.derive.apply(times.get(col.derive.source, out[col.derive.source]))
            out[col.name] = pd.Series(x, name=col.name, dtype=x.dtype).astype(
                output_dtype(col))  # (a lookup's: object values)
    # side by side, not consolidated into 2-D blocks (a copy of the whole table)
    return pd.concat([out[c] for c in schema.names], axis=1) if out else pd.DataFrame()

